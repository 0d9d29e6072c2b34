// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive path: every RoCEv2 packet for a softrdma device enters here, in
 * the softirq that delivered its UDP datagram, and is checked in a fixed
 * order before any of its fields is trusted (IBTA 9.6):
 *
 *   1. length and headers   srdma_pkt_parse(): the BTH and the extended
 *                           headers of its opcode are present, the opcode
 *                           is known, TVer is 0, pad and length agree; an
 *                           RC request whose opcode is unknown, or whose
 *                           pad or length disagree, goes on, marked
 *                           invalid, for the responder's NAK
 *   2. P_Key and QP         the P_Key is the port's; the destination QP
 *                           exists, is of the opcode's transport and may
 *                           receive now
 *   3. ICRC                 over the invariant fields (srdma_icrc.c),
 *                           unless the packet never left this host's
 *                           memory (srdma_net_loopback())
 *
 * Only then is the packet handed to the QP (srdma_qp_rcv()), which, under
 * its lock, takes a connected QP's packet only from the QP's peer
 *
 *   4. addresses            RC and UC: the IP source and destination are
 *                           the QP's peer's and its own (C9-47.1.1); for
 *                           a packet handed over without IP header, the
 *                           addresses of its sender's AV
 *                           (srdma_net_direct())
 *
 * and gives it to the responder (requests) or the completer (responses).
 * Each drop is counted.
 */

#include "srdma.h"
#include "srdma_hdr.h"

static bool srdma_rcv_qp_ok(struct srdma_qp *qp, const struct srdma_pkt *pkt)
{
	enum srdma_transport t = srdma_opcode_transport(pkt->opcode);

	/* The opcode's transport must be the QP's (IBTA 9.6.1.2). */
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		if (t != SRDMA_TRANSPORT_RC)
			return false;
		break;
	case IB_QPT_UC:
		if (t != SRDMA_TRANSPORT_UC)
			return false;
		break;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		if (t != SRDMA_TRANSPORT_UD)
			return false;
		break;
	default:
		return false;
	}
	return true;
}

/* Step 3: the ICRC, for a packet that was on a wire; a bad one is counted. */
static bool srdma_rcv_icrc_ok(struct srdma_dev *sdev, struct sk_buff *skb,
			      const struct srdma_loop *loop)
{
	if (loop || !srdma_icrc_verify(skb))
		return true;
	srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_BAD_ICRC);
	return false;
}

/**
 * srdma_rcv() - Process one received RoCEv2 packet
 * @sdev: the device it arrived on
 * @skb: the packet, skb->data at the BTH, skb->len up to and including
 *	the ICRC, network header valid unless @loop says there is none (an
 *	RC or UC packet, srdma_net_direct()); consumed
 * @loop: NULL for a packet from the network; else the sender's batch of
 *	a packet built by this host's transmit path and handed over in
 *	memory: its ICRC was never computed, and is not checked
 *
 * Context: softirq or bottom halves disabled, rcu_read_lock held (by the
 * UDP receive path, srdma_net_loopback() or srdma_net_direct()).
 */
void srdma_rcv(struct srdma_dev *sdev, struct sk_buff *skb,
	       struct srdma_loop *loop)
{
	struct srdma_pkt pkt;
	struct srdma_qp *qp;
	enum srdma_drop why;

	why = srdma_pkt_parse(skb, &pkt);
	/* An invalid RC request goes on, for the responder to NAK. */
	if (why != SRDMA_DROP_NONE && why != SRDMA_DROP_INVALID_REQ) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_MALFORMED);
		goto drop;
	}
	/*
	 * 9.6.1.3: the P_Key must match the QP's. Every QP, QP1 and
	 * multicast groups included, has the port's only P_Key, the
	 * default, so the check needs no QP yet. The membership bit (15)
	 * is not compared: the port's key is a full member's, which talks
	 * to full and limited members alike.
	 */
	if ((pkt.pkey & 0x7fff) != (IB_DEFAULT_PKEY_FULL & 0x7fff)) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_PKEY);
		goto drop;
	}

	/* IBTA 10.5.2: a multicast datagram goes to every attached QP. */
	if (pkt.qpn == SRDMA_MCAST_QPN &&
	    srdma_opcode_transport(pkt.opcode) == SRDMA_TRANSPORT_UD) {
		if (!srdma_rcv_icrc_ok(sdev, skb, loop))
			goto drop;
		if (!srdma_mcast_rcv(sdev, &pkt, skb))
			srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_NO_QP);
		goto drop;
	}
	qp = xa_load(&sdev->qp_xa, pkt.qpn);
	if (!qp) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_NO_QP);
		goto drop;
	}
	if (!srdma_rcv_qp_ok(qp, &pkt)) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_QP_STATE);
		goto drop;
	}

	if (!srdma_rcv_icrc_ok(sdev, skb, loop))
		goto drop;

	srdma_qp_rcv(qp, &pkt, skb, loop);
	srdma_skbpool_consume(skb);
	return;
drop:
	kfree_skb(skb);
}
