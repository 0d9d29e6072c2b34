// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The unreliable datagram service (IBTA 9.8.4), for UD QPs and for QP1,
 * the general services interface (GSI) through which the MAD layer and
 * the connection manager talk: address handles, sending, receiving.
 *
 * Address handles: every AH gets a small handle, the name a WQE gives it
 * (a process's WQE cannot hold a kernel pointer). The handle maps to an
 * entry holding the AH's address vector and PD; the send path looks it up
 * under RCU and copies the vector into the packet, so an AH destroyed
 * while WQEs naming it are queued only makes those WQEs fail.
 *
 * Sending: one packet per WQE, SEND_ONLY with a DETH (the Q_Key and the
 * source QP). The payload is copied into the packet, so the WQE completes
 * as soon as its packet is built: no page of the process stays referenced.
 * Each packet carries its own address vector in skb->cb until
 * srdma_qp_xmit_stream() hands it to the network.
 *
 * Receiving: a packet whose Q_Key differs from the QP's is dropped, as is
 * one that finds no receive WQE (counted). The first 40 bytes of the
 * receive buffer get the GRH, which over RoCEv2 is the IP header: an IPv6
 * header, or 20 bytes of zeroes followed by the IPv4 header.
 *
 * Sending runs with qp->lock held, receiving with qp->resp_lock.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_mad.h>

#include "srdma.h"
#include "srdma_hdr.h"

/* Bytes of the GRH at the start of a UD receive buffer. */
#define SRDMA_GRH_BYTES		40

static_assert(sizeof(struct srdma_av) <= sizeof_field(struct sk_buff, cb));

/**
 * srdma_create_ah() - Create an address handle
 * @ibah: the core's AH
 * @init: the address (a RoCE address with a resolved source GID)
 * @udata: a process's udata, or NULL
 *
 * Context: process context; any context unless init->flags has
 * RDMA_CREATE_AH_SLEEPABLE.
 * Return: 0, -EINVAL for an address the device cannot reach, -ENOMEM when
 * the device's AH limit is reached or memory is short.
 */
int srdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibah->device);
	struct srdma_ah *ah = to_sah(ibah);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							     GFP_ATOMIC;
	struct srdma_ah_entry *ent;
	unsigned long flags;
	int err;

	if (udata && udata->outlen < sizeof(struct srdma_create_ah_resp))
		return -EINVAL;
	if (atomic_inc_return(&sdev->ah_cnt) > sdev->attr.max_ah) {
		err = -ENOMEM;
		goto err_dec;
	}
	ent = kzalloc(sizeof(*ent), gfp);
	if (!ent) {
		err = -ENOMEM;
		goto err_dec;
	}
	err = srdma_av_from_ah_attr(sdev, &ent->av, init->ah_attr, 0, 0);
	if (err)
		goto err_free;
	ent->pd = ibah->pd;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah->handle, ent,
				XA_LIMIT(1, U32_MAX), &sdev->ah_next, gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0)
		goto err_free;
	ah->ent = ent;

	if (udata) {
		struct srdma_create_ah_resp resp = { .ah = ah->handle };

		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			srdma_destroy_ah(ibah, 0);
			return err;
		}
	}
	return 0;

err_free:
	kfree(ent);
err_dec:
	atomic_dec(&sdev->ah_cnt);
	return err;
}

/**
 * srdma_destroy_ah() - Destroy an address handle
 * @ibah: the core's AH
 * @flags: RDMA_DESTROY_AH_* (the entry is freed after a grace period
 *	either way)
 *
 * Context: any.
 * Return: 0.
 */
int srdma_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct srdma_dev *sdev = to_sdev(ibah->device);
	struct srdma_ah *ah = to_sah(ibah);
	unsigned long irqflags;

	xa_lock_irqsave(&sdev->ah_xa, irqflags);
	__xa_erase(&sdev->ah_xa, ah->handle);
	xa_unlock_irqrestore(&sdev->ah_xa, irqflags);
	kfree_rcu(ah->ent, rcu);
	ah->ent = NULL;
	atomic_dec(&sdev->ah_cnt);
	return 0;
}

/**
 * srdma_query_ah() - Report an address handle's attributes
 * @ibah: the core's AH
 * @attr: filled in
 *
 * The core keeps the attributes it created the AH with; only the type
 * and the port are the driver's to give.
 *
 * Return: 0.
 */
int srdma_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	attr->port_num = 1;
	return 0;
}

/*
 * Copy the address vector of AH @handle, which must belong to @pd.
 * Return: false when there is no such AH in the PD.
 */
static bool srdma_ah_av(struct srdma_dev *sdev, u32 handle,
			const struct ib_pd *pd, struct srdma_av *av)
{
	const struct srdma_ah_entry *ent;
	bool ok = false;

	rcu_read_lock();
	ent = xa_load(&sdev->ah_xa, handle);
	if (ent && ent->pd == pd) {
		*av = ent->av;
		ok = true;
	}
	rcu_read_unlock();
	return ok;
}

/* Build the packet of one UD send WQE onto @q. */
static enum ib_wc_status srdma_ud_packet(struct srdma_qp *qp,
					 struct srdma_swqe *sw,
					 struct sk_buff_head *q)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	const struct srdma_send_wqe *w = &sw->wqe;
	struct srdma_pkt pkt = {};
	struct srdma_av av;
	struct sk_buff *skb;
	unsigned int hlen;
	u8 *payload;

	if (sw->length > ib_mtu_enum_to_int(READ_ONCE(sdev->mtu)))
		return IB_WC_LOC_LEN_ERR;
	if (!srdma_ah_av(sdev, w->wr.ud.ah, qp->ibqp.pd, &av))
		return IB_WC_LOC_QP_OP_ERR;
	av.sport = cpu_to_be16(rdma_get_udp_sport(av.flow_label,
						  qp->ibqp.qp_num,
						  w->wr.ud.remote_qpn));

	pkt.opcode = w->opcode == IB_UVERBS_WR_SEND_WITH_IMM ?
		     SRDMA_OP_UD_SEND_ONLY_IMM : SRDMA_OP_UD_SEND_ONLY;
	pkt.psn = qp->req.psn;
	pkt.qpn = w->wr.ud.remote_qpn & SRDMA_QPN_MASK;
	pkt.pkey = IB_DEFAULT_PKEY_FULL;
	pkt.se = !!(w->flags & SRDMA_WQE_SOLICITED);
	pkt.paylen = sw->length;
	pkt.pad = (4 - (sw->length & 3)) & 3;
	pkt.imm = w->ex.imm_data;
	/* IBTA 10.2.5: a Q_Key with the high bit set means the QP's own. */
	pkt.deth.qkey = w->wr.ud.remote_qkey & IB_QP_SET_QKEY ?
			qp->attr.qkey : w->wr.ud.remote_qkey;
	pkt.deth.src_qp = qp->ibqp.qp_num;

	hlen = srdma_pkt_hdr_len(pkt.opcode);
	skb = srdma_net_alloc_skb(sdev, &av, hlen + pkt.paylen + pkt.pad,
				  GFP_ATOMIC);
	if (!skb) {
		/* Unreliable: a packet the host cannot build is lost. */
		srdma_counter_inc(sdev, SRDMA_CNT_TX_DROP_NOMEM);
		return IB_WC_SUCCESS;
	}
	srdma_pkt_build_hdrs(skb_put(skb, hlen), &pkt);
	payload = skb_put(skb, pkt.paylen + pkt.pad);
	if (w->flags & SRDMA_WQE_INLINE) {
		memcpy(payload, sw->body, pkt.paylen);
	} else if (pkt.paylen &&
		   !srdma_sgl_copy(sdev, qp->ibqp.pd,
				   (const struct srdma_sge *)sw->body,
				   w->num_sge, 0, pkt.paylen, SRDMA_GATHER,
				   payload, NULL, 0)) {
		kfree_skb(skb);
		return IB_WC_LOC_PROT_ERR;
	}
	memset(payload + pkt.paylen, 0, pkt.pad);
	memcpy(skb->cb, &av, sizeof(av));
	__skb_queue_tail(q, skb);
	qp->req.psn = srdma_psn_add(qp->req.psn, 1);
	return IB_WC_SUCCESS;
}

/**
 * srdma_ud_tx() - Send the UD WQEs posted
 * @qp: a UD or GSI QP
 * @q: packets to send once qp->lock is released
 * @budget: packets this pass may still send; decremented
 *
 * Each WQE completes once its packet is built (or lost). A WQE that
 * cannot be sent (a bad AH, a message over the MTU, a bad local key)
 * completes in error and moves the QP to the error state (IBTA 10.8.3).
 *
 * Context: qp->lock held.
 * Return: true when the budget ran out with WQEs left.
 */
bool srdma_ud_tx(struct srdma_qp *qp, struct sk_buff_head *q, int *budget)
{
	enum ib_wc_status status;
	struct srdma_swqe *sw;
	int err;

	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RTS)
		return false;
	while (*budget > 0) {
		err = srdma_req_fetch(qp);
		if (err < 0) {
			if (err == -EPROTO)
				srdma_qp_fatal_event(qp, qp->req.fetch,
						     IB_WC_LOC_QP_OP_ERR);
			else
				srdma_qp_fatal(qp, qp->req.fetch,
					       IB_WC_LOC_QP_OP_ERR);
			return false;
		}
		if (!err)
			return false;
		sw = srdma_swqe_at(qp, qp->req.cur);
		status = srdma_ud_packet(qp, sw, q);
		if (status != IB_WC_SUCCESS) {
			srdma_qp_fatal(qp, qp->req.cur, status);
			return false;
		}
		sw->started = true;
		qp->req.cur++;
		srdma_comp_complete(qp, IB_WC_SUCCESS);
		(*budget)--;
		if (srdma_req_fail_due(qp))
			return false;
	}
	return true;
}

/**
 * srdma_ud_av_of() - The address vector a UD packet carries
 * @skb: a packet srdma_ud_tx() built
 * @av: filled in
 */
void srdma_ud_av_of(const struct sk_buff *skb, struct srdma_av *av)
{
	memcpy(av, skb->cb, sizeof(*av));
}

/* The GRH of a received packet, as the receive buffer gets it. */
static void srdma_ud_grh(const struct sk_buff *skb, u8 *grh, u8 *net_type)
{
	memset(grh, 0, SRDMA_GRH_BYTES);
	if (ip_hdr(skb)->version == 4) {
		memcpy(grh + SRDMA_GRH_BYTES - sizeof(struct iphdr),
		       skb_network_header(skb), sizeof(struct iphdr));
		*net_type = RDMA_NETWORK_IPV4;
	} else {
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
		*net_type = RDMA_NETWORK_IPV6;
	}
}

/**
 * srdma_ud_rcv() - Receive a UD packet
 * @qp: a UD or GSI QP
 * @pkt: the packet, parsed and validated
 * @skb: the packet (skb->data at the BTH); not consumed
 *
 * Context: softirq, qp->resp_lock held.
 */
void srdma_ud_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		  const struct sk_buff *skb)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	struct srdma_recv_wqe *w = qp->resp.rwqe;
	struct srdma_cqe cqe = {};
	enum ib_wc_status status = IB_WC_SUCCESS;
	u8 grh[SRDMA_GRH_BYTES];
	u8 net_type;
	int ret;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->state < IB_QPS_RTR || qp->state == IB_QPS_ERR ||
	    qp->resp.ending) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_QP_STATE);
		return;
	}
	/* IBTA 10.2.5, C10-15: a Q_Key mismatch drops the packet silently. */
	if (pkt->deth.qkey != qp->attr.qkey) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_QKEY);
		return;
	}
	ret = srdma_resp_take_rwqe(qp);
	if (ret < 0) {
		srdma_resp_end(qp, true);
		return;
	}
	if (!ret) {
		/* No receive WQE: the datagram is dropped (IBTA 9.8.4). */
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_NO_RWQE);
		return;
	}

	/*
	 * IBTA 9.8.3.2.2, C9-205: a datagram longer than the receive
	 * buffer is an invalid request, dropped silently; the WQE is not
	 * used (9.8.3.2.5) and waits for the next one. A completion in
	 * error would end the QP (10.8.3), and any host could end QP1 so.
	 */
	if (srdma_rwqe_room(w) < SRDMA_GRH_BYTES + (u64)pkt->paylen) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_TOO_LONG);
		return;
	}
	srdma_ud_grh(skb, grh, &net_type);
	/* It fits: a failure is the buffer's, a local protection error. */
	if (!srdma_sgl_copy(sdev, qp->ibqp.pd, (struct srdma_sge *)(w + 1),
			    w->num_sge, 0, SRDMA_GRH_BYTES, SRDMA_SCATTER, grh,
			    NULL, 0) ||
	    (pkt->paylen &&
	     !srdma_sgl_copy(sdev, qp->ibqp.pd, (struct srdma_sge *)(w + 1),
			     w->num_sge, SRDMA_GRH_BYTES, pkt->paylen,
			     SRDMA_SCATTER_SKB, NULL, skb, pkt->hdr_len)))
		status = IB_WC_LOC_PROT_ERR;

	cqe.wr_id = w->wr_id;
	cqe.status = status;
	cqe.opcode = IB_WC_RECV;
	cqe.qp_num = qp->ibqp.qp_num;
	cqe.byte_len = SRDMA_GRH_BYTES + pkt->paylen;
	cqe.src_qp = pkt->deth.src_qp;
	cqe.wc_flags = SRDMA_CQE_WITH_GRH;
	cqe.network_hdr_type = net_type;
	if (srdma_pkt_is(pkt, SRDMA_OPF_IMM)) {
		cqe.wc_flags |= SRDMA_CQE_WITH_IMM;
		cqe.ex.imm_data = pkt->imm;
	}
	srdma_resp_rwqe_done(qp);
	/* A completion the CQ cannot take ends the QP too (C9-225). */
	if (!srdma_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, pkt->se))
		srdma_resp_end(qp, true);
	/* IBTA 10.8.3: a receive that completes in error ends the QP. */
	if (status != IB_WC_SUCCESS)
		srdma_resp_end(qp, false);
}
