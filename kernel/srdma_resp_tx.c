// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC responder, transmit side (IBTA 9.7.5.1.2, 9.7.5.1.5): builds the
 * answers srdma_resp.c queues as it executes requests. READ responses and
 * atomic ACKs come from the responder resources, oldest first; the one
 * ACK or NAK that waits (resp.ack_pending) follows the responses before
 * it, so that the requester never takes it for an implied NAK. Each ACK,
 * READ response and atomic ACK carries the QP's end-to-end credits
 * (9.7.7.2).
 *
 * Every function here runs with qp->resp_lock held.
 */

#include "srdma.h"
#include "srdma_hdr.h"

/*
 * The syndrome of an ACK, READ response or atomic ACK, with the QP's
 * end-to-end credits (9.7.7.2): the receive WQEs posted and not yet
 * consumed by a completed message, counted from the MSN it carries
 * (C9-150.2.1, C9-157.2.1, C9-158.2.1, C9-161). A QP with an SRQ gives
 * none: "invalid" (o9-95.2.2). The producer index is the process's; one
 * out of range gives no credit (the next WQE taken ends the QP).
 */
static u8 srdma_resp_credit_syn(struct srdma_qp *qp)
{
	struct srdma_ring *r = &qp->rq.ring;
	u32 prod;

	if (qp->ibqp.srq)
		return srdma_syn(SRDMA_SYN_ACK, SRDMA_CREDITS_INVALID);
	prod = READ_ONCE(r->ctrl->prod);
	if (!srdma_ring_index_ok(r->own, prod, r->num, false))
		return SRDMA_ACK_SYN;
	return srdma_syn(SRDMA_SYN_ACK,
			 srdma_aeth_credit_code(srdma_ring_count(prod, r->own)));
}

/*
 * Allocate a response and put its headers; @linear reserves room for the
 * payload and pad to be copied in.
 */
static struct sk_buff *srdma_resp_packet(struct srdma_qp *qp,
					 struct srdma_pkt *pkt, u32 paylen,
					 bool linear)
{
	struct sk_buff *skb;
	unsigned int hlen = srdma_pkt_hdr_len(pkt->opcode);

	pkt->qpn = qp->attr.dest_qp_num;
	pkt->pkey = IB_DEFAULT_PKEY_FULL;
	pkt->paylen = paylen;
	pkt->pad = (4 - (paylen & 3)) & 3;
	pkt->aeth.msn = qp->resp.msn;
	if (srdma_syn_type(pkt->aeth.syndrome) == SRDMA_SYN_ACK &&
	    pkt->opcode != SRDMA_OP_RC_READ_RESP_MIDDLE)	/* no AETH */
		pkt->aeth.syndrome = srdma_resp_credit_syn(qp);
	skb = srdma_net_alloc_skb(to_sdev(qp->ibqp.device), &qp->av,
				  hlen + (linear ? paylen + pkt->pad : 0),
				  GFP_ATOMIC);
	if (!skb)
		return NULL;
	srdma_pkt_build_hdrs(skb_put(skb, hlen), pkt);
	return skb;
}

/*
 * A READ response carrying @len bytes at @va of @mr: by reference to the
 * pinned pages of a process's MR when the netdev does scatter-gather and
 * no pad is needed, else copied once.
 */
static struct sk_buff *srdma_resp_read_fill(struct srdma_qp *qp,
					    struct srdma_pkt *pkt,
					    struct srdma_mr *mr, u64 va, u32 len)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	struct sk_buff *skb;
	u8 *payload;

	if (len && !(len & 3) && mr->umem && srdma_net_can_frag(sdev)) {
		skb = srdma_resp_packet(qp, pkt, len, false);
		if (!skb)
			return NULL;
		if (!srdma_mr_attach(mr, va, len, skb))
			return skb;
		kfree_skb(skb);
	}
	skb = srdma_resp_packet(qp, pkt, len, true);
	if (!skb)
		return NULL;
	payload = skb_put(skb, len + pkt->pad);
	if (len)
		srdma_mr_copy(mr, va, payload, len, false);
	memset(payload + len, 0, pkt->pad);
	return skb;
}

/* The next READ response packet of @res (9.7.5.1.5), or NULL. */
static struct sk_buff *srdma_resp_read_packet(struct srdma_qp *qp,
					      struct srdma_rd_res *res)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	bool first = res->next_psn == res->start_psn;
	bool last = res->next_psn == res->last_psn;
	u32 len = min(pmtu, res->resid);
	struct srdma_pkt pkt = {};
	struct srdma_mr *mr = NULL;
	struct sk_buff *skb;
	u64 mva = 0;

	if (first && last)
		pkt.opcode = SRDMA_OP_RC_READ_RESP_ONLY;
	else if (first)
		pkt.opcode = SRDMA_OP_RC_READ_RESP_FIRST;
	else if (last)
		pkt.opcode = SRDMA_OP_RC_READ_RESP_LAST;
	else
		pkt.opcode = SRDMA_OP_RC_READ_RESP_MIDDLE;
	pkt.psn = res->next_psn;
	pkt.aeth.syndrome = SRDMA_ACK_SYN;

	if (len) {
		/* The region may have gone since the request was checked. */
		mr = srdma_rkey_get(qp, res->rkey, res->va, len,
				    IB_ACCESS_REMOTE_READ, &mva);
		if (!mr) {
			res->type = 0;
			/*
			 * Answering a duplicate again, the READ ends without a
			 * word (C9-108, C9-109, C9-115: no NAK for an error
			 * met while processing a duplicate); the requester's
			 * timeout asks again.
			 */
			if (!res->replay)
				srdma_resp_nak_fatal(qp, SRDMA_NAK_REMOTE_ACCESS,
						     res->next_psn);
			return NULL;
		}
	}
	skb = srdma_resp_read_fill(qp, &pkt, mr, mva, len);
	if (skb) {
		res->va += len;
		res->resid -= len;
		res->next_psn = srdma_psn_add(res->next_psn, 1);
	}
	if (mr)
		srdma_mr_put(mr);
	return skb;
}

static struct sk_buff *srdma_resp_atomic_packet(struct srdma_qp *qp,
						struct srdma_rd_res *res)
{
	struct srdma_pkt pkt = {
		.opcode = SRDMA_OP_RC_ATOMIC_ACK,
		.psn = res->first_psn,
		.aeth.syndrome = SRDMA_ACK_SYN,
		.atmack_orig = res->orig,
	};
	struct sk_buff *skb = srdma_resp_packet(qp, &pkt, 0, true);

	if (skb)
		res->resid = 0;
	return skb;
}

/*
 * Once the responder has failed, the responses of the READs and atomics
 * before the failed request still go, ahead of its NAK (or, class J, its
 * ACK): requests before an error are executed and completed (C9-87,
 * C9-90). Nothing after it is.
 */
static bool srdma_resp_res_may_send(const struct srdma_resp *resp,
				    const struct srdma_rd_res *res)
{
	return srdma_res_pending(res) &&
	       (!resp->fatal ||
		srdma_psn_diff(res->next_psn, resp->fatal_psn) < 0);
}

/*
 * Send the responses of the responder resources, oldest first, from the
 * oldest that may have any (resp.res_first) to the newest. Return: true
 * when one is left for another pass; resp.res_busy is cleared once none
 * is pending.
 */
static bool srdma_resp_tx_res(struct srdma_qp *qp, struct sk_buff_head *q,
			      int *budget)
{
	struct srdma_resp *resp = &qp->resp;
	u32 slot = resp->res_first;
	struct srdma_rd_res *res;
	struct sk_buff *skb;
	u32 i;

	for (i = srdma_res_age(resp, slot); i < resp->nres; i++, slot++) {
		if (slot == resp->nres)
			slot = 0;
		res = &resp->res[slot];
		while (srdma_resp_res_may_send(resp, res) && *budget > 0) {
			skb = res->type == SRDMA_RES_READ ?
			      srdma_resp_read_packet(qp, res) :
			      srdma_resp_atomic_packet(qp, res);
			if (!skb)
				break;
			__skb_queue_tail(q, skb);
			(*budget)--;
		}
		if (srdma_resp_res_may_send(resp, res)) {
			resp->res_first = slot;
			return true;
		}
	}
	resp->res_busy = false;
	return false;
}

/**
 * srdma_resp_tx() - Send responses: READ data, atomic ACKs, ACK/NAK
 * @qp: the QP
 * @q: packets to send once qp->resp_lock is released
 * @budget: packets this pass may still send; decremented
 *
 * Responses go out in PSN order: an ACK or NAK waits for the READ
 * responses before it, or the requester would take it for an implied NAK.
 *
 * Context: qp->resp_lock held.
 * Return: true when work is left for another pass.
 */
bool srdma_resp_tx(struct srdma_qp *qp, struct sk_buff_head *q, int *budget)
{
	struct srdma_resp *resp = &qp->resp;
	struct srdma_pkt pkt = {};
	struct sk_buff *skb;

	lockdep_assert_held(&qp->resp_lock);
	if (resp->res_busy && srdma_resp_tx_res(qp, q, budget))
		return true;
	if (!resp->ack_pending || *budget <= 0)
		return resp->ack_pending;

	pkt.opcode = SRDMA_OP_RC_ACK;
	pkt.psn = resp->ack_psn;
	pkt.aeth.syndrome = resp->ack_syndrome;
	skb = srdma_resp_packet(qp, &pkt, 0, true);
	if (!skb)
		return true;
	__skb_queue_tail(q, skb);
	(*budget)--;
	resp->ack_pending = false;
	if (resp->fatal)
		srdma_resp_end(qp, false);
	return false;
}
