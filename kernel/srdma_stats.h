/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Device counters, exposed as the port's hw counters ("rdma statistic",
 * /sys/class/infiniband/DEV/ports/1/hw_counters/). Per-CPU, so that any
 * context can count without a lock.
 *
 * To add a counter: an enum entry here and its name in srdma_stats.c.
 */
#ifndef SRDMA_STATS_H
#define SRDMA_STATS_H

#include <linux/percpu.h>
#include <linux/types.h>

enum srdma_counter {
	/* Transmit and receive totals. */
	SRDMA_CNT_TX_PKTS,
	SRDMA_CNT_RX_PKTS,
	/*
	 * Received packets dropped, by reason (see srdma_net.c). All but
	 * the first are part of rx_packets. NO_DEV: no device for the
	 * packet; counted on the oldest device of the network namespace,
	 * whose devices share port 4791.
	 */
	SRDMA_CNT_RX_DROP_NO_DEV,
	SRDMA_CNT_RX_DROP_MALFORMED,	/* headers fail validation */
	SRDMA_CNT_RX_DROP_BAD_ICRC,
	SRDMA_CNT_RX_DROP_NO_QP,	/* destination QP does not exist */
	SRDMA_CNT_RX_DROP_QP_STATE,	/* QP cannot receive in its state */
	SRDMA_CNT_RX_DROP_OUT_OF_WINDOW, /* PSN outside any valid window */
	SRDMA_CNT_RX_DROP_PKEY,		/* P_Key differs from the port's */
	SRDMA_CNT_RX_DROP_ADDR,		/* RC, UC: not from the QP's peer */
	SRDMA_CNT_RX_DROP_QKEY,		/* UD: Q_Key differs from the QP's */
	SRDMA_CNT_RX_DROP_NO_RWQE,	/* UD, UC: no receive WQE posted */
	SRDMA_CNT_RX_DROP_TOO_LONG,	/* UD: longer than the receive WQE */
	/*
	 * RC, UC: a request the QP does not take (access rights, length
	 * against the path MTU, opcode sequence); RC NAKs it (invalid
	 * request), UC drops it.
	 */
	SRDMA_CNT_RX_INVALID_REQ,
	/* Transmit failures. */
	SRDMA_CNT_TX_DROP_NO_ROUTE,
	SRDMA_CNT_TX_DROP_NOMEM,
	SRDMA_CNT_TX_DROP_XMIT,		/* the IP stack refused the packet */
	/* Reliability events (IBTA 9.7). */
	SRDMA_CNT_RETRANSMITS,		/* go-back-N restarts of the requester */
	SRDMA_CNT_ACK_TIMEOUTS,		/* local ACK timeouts */
	SRDMA_CNT_RX_SEQ_NAKS,		/* PSN sequence error NAKs received */
	SRDMA_CNT_RX_RNR_NAKS,		/* RNR NAKs received */
	SRDMA_CNT_TX_SEQ_NAKS,		/* PSN sequence error NAKs sent */
	SRDMA_CNT_TX_RNR_NAKS,		/* RNR NAKs sent */
	SRDMA_CNT_RX_DUPLICATES,	/* duplicate requests */
	SRDMA_CNT_TAIL_PROBES,		/* unacknowledged tails probed */
	SRDMA_CNT_EARLY_RTX,		/* go-back-N before the ACK timeout */
	SRDMA_CNT_TX_LIMITED,		/* request packets sent without credit */
	SRDMA_CNT_TX_THROTTLED,		/* passes stopped for packets in flight */
	SRDMA_CNT_SQ_POLL_HANDOFFS,	/* doorbells handed to a polling CPU */
	SRDMA_CNT_SQ_POLL_YIELDS,	/* QPs a poller gave back: CPU wanted */
	SRDMA_CNT_MAX
};

struct srdma_dev;

/**
 * srdma_counter_add() - Count an event
 * @sdev: the device
 * @cnt: which counter
 * @n: how many
 *
 * Context: any.
 */
void srdma_counter_add(struct srdma_dev *sdev, enum srdma_counter cnt, u64 n);

static inline void srdma_counter_inc(struct srdma_dev *sdev,
				     enum srdma_counter cnt)
{
	srdma_counter_add(sdev, cnt, 1);
}

u64 srdma_counter_read(struct srdma_dev *sdev, enum srdma_counter cnt);
struct rdma_hw_stats *srdma_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int srdma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

#endif /* SRDMA_STATS_H */
