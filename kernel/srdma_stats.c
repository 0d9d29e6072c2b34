// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device counters: per-CPU u64s summed when the core asks for them.
 */

#include "srdma.h"

static const struct rdma_stat_desc srdma_counter_descs[] = {
	[SRDMA_CNT_TX_PKTS].name = "tx_packets",
	[SRDMA_CNT_RX_PKTS].name = "rx_packets",
	[SRDMA_CNT_RX_DROP_NO_DEV].name = "rx_drop_no_device",
	[SRDMA_CNT_RX_DROP_MALFORMED].name = "rx_drop_malformed",
	[SRDMA_CNT_RX_DROP_BAD_ICRC].name = "rx_drop_bad_icrc",
	[SRDMA_CNT_RX_DROP_NO_QP].name = "rx_drop_no_qp",
	[SRDMA_CNT_RX_DROP_QP_STATE].name = "rx_drop_qp_state",
	[SRDMA_CNT_RX_DROP_OUT_OF_WINDOW].name = "rx_drop_out_of_window",
	[SRDMA_CNT_RX_DROP_PKEY].name = "rx_drop_pkey",
	[SRDMA_CNT_RX_DROP_ADDR].name = "rx_drop_address",
	[SRDMA_CNT_RX_DROP_QKEY].name = "rx_drop_qkey",
	[SRDMA_CNT_RX_DROP_NO_RWQE].name = "rx_drop_no_recv_wqe",
	[SRDMA_CNT_RX_DROP_TOO_LONG].name = "rx_drop_too_long",
	[SRDMA_CNT_RX_INVALID_REQ].name = "rx_invalid_requests",
	[SRDMA_CNT_TX_DROP_NO_ROUTE].name = "tx_drop_no_route",
	[SRDMA_CNT_TX_DROP_NOMEM].name = "tx_drop_nomem",
	[SRDMA_CNT_TX_DROP_XMIT].name = "tx_drop_xmit",
	[SRDMA_CNT_RETRANSMITS].name = "retransmits",
	[SRDMA_CNT_ACK_TIMEOUTS].name = "ack_timeouts",
	[SRDMA_CNT_RX_SEQ_NAKS].name = "rx_seq_naks",
	[SRDMA_CNT_RX_RNR_NAKS].name = "rx_rnr_naks",
	[SRDMA_CNT_TX_SEQ_NAKS].name = "tx_seq_naks",
	[SRDMA_CNT_TX_RNR_NAKS].name = "tx_rnr_naks",
	[SRDMA_CNT_RX_DUPLICATES].name = "rx_duplicates",
	[SRDMA_CNT_TAIL_PROBES].name = "tail_probes",
	[SRDMA_CNT_EARLY_RTX].name = "early_retransmits",
	[SRDMA_CNT_TX_LIMITED].name = "tx_limited_packets",
	[SRDMA_CNT_TX_THROTTLED].name = "tx_throttled",
	[SRDMA_CNT_SQ_POLL_HANDOFFS].name = "sq_poll_handoffs",
	[SRDMA_CNT_SQ_POLL_YIELDS].name = "sq_poll_yields",
};

static_assert(ARRAY_SIZE(srdma_counter_descs) == SRDMA_CNT_MAX);

/**
 * srdma_counter_add() - Count an event
 * @sdev: the device
 * @cnt: which counter
 * @n: how many
 *
 * Context: any.
 */
void srdma_counter_add(struct srdma_dev *sdev, enum srdma_counter cnt, u64 n)
{
	this_cpu_add(sdev->counters->val[cnt], n);
}

/**
 * srdma_counter_read() - Sum a counter over the CPUs
 * @sdev: the device
 * @cnt: which counter
 *
 * Context: any.
 * Return: its value.
 */
u64 srdma_counter_read(struct srdma_dev *sdev, enum srdma_counter cnt)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(sdev->counters, cpu)->val[cnt];
	return sum;
}

/**
 * srdma_alloc_hw_port_stats() - Describe the port's counters to the core
 * @ibdev: the device
 * @port: port number
 *
 * Context: process context.
 * Return: the stats structure, or NULL.
 */
struct rdma_hw_stats *srdma_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(srdma_counter_descs, SRDMA_CNT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/**
 * srdma_get_hw_stats() - Sum the per-CPU counters
 * @ibdev: the device
 * @stats: filled in
 * @port: port number
 * @index: counter asked for (all are filled)
 *
 * Context: process context.
 * Return: the number of counters.
 */
int srdma_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct srdma_dev *sdev = to_sdev(ibdev);
	int i;

	for (i = 0; i < SRDMA_CNT_MAX; i++)
		stats->value[i] = srdma_counter_read(sdev, i);
	return SRDMA_CNT_MAX;
}
