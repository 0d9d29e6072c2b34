// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC requester (IBTA 9.7.1, 9.7.4): takes WQEs from the SQ ring, copies
 * each once into the kernel's shadow of the ring and validates it there,
 * assigns PSNs and turns it into request packets of at most the path MTU.
 * Retransmission is go-back-N from the oldest unacknowledged PSN
 * (srdma_req.una); the completer decides when (srdma_comp.c).
 *
 * AckReq goes only where an ACK is waited for: which packets carry it,
 * the round trips timed and the tail probe are srdma_req_ack.c's.
 * End-to-end credits (9.7.7.2) limit the messages that consume a receive
 * WQE: one sent without credit waits for its ACK (srdma_req_limited()).
 *
 * Every function here runs with qp->lock held.
 */

#include "srdma.h"
#include "srdma_hdr.h"

/**
 * srdma_wr_is_read_atomic() - Is a work request a READ or an atomic?
 * @op: the WQE's opcode (IB_UVERBS_WR_*)
 *
 * Context: any.
 * Return: true for an RDMA READ, a compare and swap or a fetch and add.
 */
bool srdma_wr_is_read_atomic(u8 op)
{
	return op == IB_UVERBS_WR_RDMA_READ ||
	       op == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/**
 * srdma_swqe_at() - The shadow of SQ entry @idx
 * @qp: the QP
 * @idx: free-running SQ index
 *
 * Return: the kernel's copy of the WQE.
 */
struct srdma_swqe *srdma_swqe_at(struct srdma_qp *qp, u32 idx)
{
	return qp->sq_shadow +
	       (size_t)srdma_ring_slot(idx, qp->sq.ring.num) * qp->sq_shadow_stride;
}

/* SGEs of a shadow WQE (valid when it is not inline). */
static struct srdma_sge *srdma_swqe_sge(struct srdma_swqe *sw)
{
	return (struct srdma_sge *)sw->body;
}

/*
 * Check a WQE copied from the ring (IBTA 10.8.3: a malformed WQE completes
 * in error and moves the QP to the error state). Computes its length.
 */
static bool srdma_req_validate(struct srdma_qp *qp, struct srdma_swqe *sw)
{
	struct srdma_send_wqe *w = &sw->wqe;
	struct srdma_sge *sge = srdma_swqe_sge(sw);
	u64 len = 0;
	int i;

	/* A datagram QP has SEND and SEND with immediate only. */
	if (srdma_qp_is_ud(qp) &&
	    w->opcode != IB_UVERBS_WR_SEND &&
	    w->opcode != IB_UVERBS_WR_SEND_WITH_IMM)
		return false;
	/* UC has no READ, atomics or SEND with invalidate (IBTA 9.8.2). */
	if (qp->ibqp.qp_type == IB_QPT_UC &&
	    (srdma_wr_is_read_atomic(w->opcode) ||
	     w->opcode == IB_UVERBS_WR_SEND_WITH_INV))
		return false;
	switch (w->opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
	case IB_UVERBS_WR_RDMA_READ:
		break;
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_BIND_MW:
		sw->length = 0;
		sw->started = false;
		return !(w->flags & SRDMA_WQE_INLINE) && !w->num_sge;
	case SRDMA_WR_REG_MR:
		/* Carries a kernel pointer: only from an in-kernel user. */
		sw->length = 0;
		sw->started = false;
		return !qp->is_user && !w->num_sge;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		/*
		 * IBTA 9.4.5: 8 bytes, naturally aligned on the responder.
		 * The SGE is in the copy only if the QP has room for one.
		 */
		if (w->flags & SRDMA_WQE_INLINE || w->num_sge != 1 ||
		    qp->sq.max_sge < 1 || sge[0].length != sizeof(u64) ||
		    w->wr.atomic.remote_addr & (sizeof(u64) - 1))
			return false;
		break;
	default:
		return false;
	}
	if (w->flags & SRDMA_WQE_INLINE) {
		if (srdma_wr_is_read_atomic(w->opcode) ||
		    w->inline_len > qp->sq.max_inline)
			return false;
		len = w->inline_len;
	} else {
		if (w->num_sge > qp->sq.max_sge)
			return false;
		for (i = 0; i < w->num_sge; i++)
			len += sge[i].length;
	}
	if (len > SRDMA_MAX_MSG_SIZE)
		return false;
	sw->length = len;
	sw->started = false;
	sw->split = false;
	return true;
}

/**
 * srdma_req_fetch() - Copy the next WQE from the ring into the shadow
 * @qp: the QP
 *
 * Context: qp->lock held.
 * Return: 1 when a WQE was fetched, 0 when none is posted, -EPROTO when
 * the ring's producer index is corrupt, -EINVAL for a malformed WQE.
 */
int srdma_req_fetch(struct srdma_qp *qp)
{
	struct srdma_ring *r = &qp->sq.ring;
	struct srdma_swqe *sw;
	const u8 *slot;
	u32 prod;

	prod = smp_load_acquire(&r->ctrl->prod);	/* WQEs below prod */
	if (!srdma_ring_index_ok(r->own, prod, r->num, false) ||
	    !srdma_ring_index_ok(qp->req.fetch, prod, r->num, false))
		return -EPROTO;
	if (prod == qp->req.fetch)
		return 0;
	sw = srdma_swqe_at(qp, qp->req.fetch);
	slot = r->buf + srdma_ring_slot(qp->req.fetch, r->num) * r->stride;
	/* The one read of the entry: the process may rewrite it any time. */
	memcpy(&sw->wqe, slot, sizeof(sw->wqe));
	memcpy(sw->body, slot + sizeof(sw->wqe), r->stride - sizeof(sw->wqe));
	if (!srdma_req_validate(qp, sw))
		return -EINVAL;
	qp->req.fetch++;
	return 1;
}

/* Copy @len bytes at offset @off of the message of @sw into @dst. */
static bool srdma_req_gather(struct srdma_qp *qp, struct srdma_swqe *sw,
			     u32 off, void *dst, u32 len)
{
	if (sw->wqe.flags & SRDMA_WQE_INLINE) {
		memcpy(dst, sw->body + off, len);
		return true;
	}
	return srdma_sgl_copy(to_sdev(qp->ibqp.device), qp->ibqp.pd,
			      srdma_swqe_sge(sw), sw->wqe.num_sge, off, len,
			      SRDMA_GATHER, dst, NULL, 0);
}

/*
 * Payloads below this are copied even where they could go by reference:
 * a page reference, a fragment and a separate ICRC fragment cost more
 * than copying a few cache lines.
 */
#define SRDMA_ZC_MIN	256

/*
 * Allocate and fill a request packet whose headers @pkt describes. The
 * payload of a process's WQE goes in by reference to its pinned pages
 * when the netdev does scatter-gather (and no pad is needed); otherwise,
 * when it is short, or when that fails for want of fragment slots, it is
 * copied once.
 */
static struct sk_buff *srdma_req_alloc(struct srdma_qp *qp,
				       struct srdma_swqe *sw,
				       const struct srdma_pkt *pkt, u32 off,
				       bool *bad)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	unsigned int hlen = srdma_pkt_hdr_len(pkt->opcode);
	u32 paylen = pkt->paylen;
	/*
	 * Zero copy only where the WQE completes on its ACK: a UC WQE
	 * completes once its packets are queued, which may still be
	 * before they leave.
	 */
	bool zc = qp->is_user && paylen >= SRDMA_ZC_MIN && !pkt->pad &&
		  qp->ibqp.qp_type == IB_QPT_RC &&
		  !(sw->wqe.flags & SRDMA_WQE_INLINE) && srdma_net_can_frag(sdev);
	struct sk_buff *skb;
	u8 *payload;
	int err;

	if (zc) {
		skb = srdma_net_alloc_skb(sdev, &qp->av, hlen, GFP_ATOMIC);
		if (!skb)
			return NULL;
		srdma_pkt_build_hdrs(skb_put(skb, hlen), pkt);
		err = srdma_sgl_attach(sdev, qp->ibqp.pd, srdma_swqe_sge(sw),
				       sw->wqe.num_sge, off, paylen, skb);
		if (!err)
			return skb;
		kfree_skb(skb);
		if (err == -EACCES) {
			*bad = true;
			return NULL;
		}
	}

	skb = srdma_net_alloc_skb(sdev, &qp->av, hlen + paylen + pkt->pad,
				  GFP_ATOMIC);
	if (!skb)
		return NULL;
	srdma_pkt_build_hdrs(skb_put(skb, hlen), pkt);
	payload = skb_put(skb, paylen + pkt->pad);
	if (paylen && !srdma_req_gather(qp, sw, off, payload, paylen)) {
		kfree_skb(skb);
		*bad = true;
		return NULL;
	}
	memset(payload + paylen, 0, pkt->pad);
	return skb;
}

/* Opcode of the packet at position @first/@last of a SEND or WRITE. */
static u8 srdma_req_opcode(u8 wr_op, bool first, bool last)
{
	static const u8 send[2][2] = {
		{ SRDMA_OP_RC_SEND_MIDDLE, SRDMA_OP_RC_SEND_LAST },
		{ SRDMA_OP_RC_SEND_FIRST, SRDMA_OP_RC_SEND_ONLY },
	};
	static const u8 write[2][2] = {
		{ SRDMA_OP_RC_WRITE_MIDDLE, SRDMA_OP_RC_WRITE_LAST },
		{ SRDMA_OP_RC_WRITE_FIRST, SRDMA_OP_RC_WRITE_ONLY },
	};

	switch (wr_op) {
	case IB_UVERBS_WR_SEND:
		return send[first][last];
	case IB_UVERBS_WR_SEND_WITH_IMM:
		if (!last)
			return send[first][last];
		return first ? SRDMA_OP_RC_SEND_ONLY_IMM :
			       SRDMA_OP_RC_SEND_LAST_IMM;
	case IB_UVERBS_WR_SEND_WITH_INV:
		if (!last)
			return send[first][last];
		return first ? SRDMA_OP_RC_SEND_ONLY_INV :
			       SRDMA_OP_RC_SEND_LAST_INV;
	case IB_UVERBS_WR_RDMA_WRITE:
		return write[first][last];
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		if (!last)
			return write[first][last];
		return first ? SRDMA_OP_RC_WRITE_ONLY_IMM :
			       SRDMA_OP_RC_WRITE_LAST_IMM;
	case IB_UVERBS_WR_RDMA_READ:
		return SRDMA_OP_RC_READ_REQ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return SRDMA_OP_RC_CMP_SWAP;
	default:
		return SRDMA_OP_RC_FETCH_ADD;
	}
}

/**
 * srdma_req_packet() - Build a request packet
 * @qp: the QP
 * @sw: the WQE the packet belongs to
 * @psn: the packet's PSN
 * @off: where the packet's payload starts in the message
 * @probe: force the AckReq bit
 * @bad: set on a local protection error
 *
 * Build the request packet of @sw with PSN @psn, @off bytes into the
 * message; @probe forces the AckReq bit.
 *
 * Context: qp->lock held.
 * Return: the skb, or NULL (no memory, or a local protection error, which
 * *@bad reports).
 */
struct sk_buff *srdma_req_packet(struct srdma_qp *qp, struct srdma_swqe *sw,
				 u32 psn, u32 off, bool probe, bool *bad)
{
	struct srdma_send_wqe *w = &sw->wqe;
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	struct srdma_req *req = &qp->req;
	struct srdma_pkt pkt = {};
	u32 paylen = 0, last_psn;
	struct sk_buff *skb;
	bool first, last;

	first = off == 0;
	if (srdma_wr_is_read_atomic(w->opcode)) {
		last = true;
	} else {
		paylen = min(pmtu, sw->length - off);
		last = off + paylen == sw->length;
	}
	pkt.opcode = srdma_req_opcode(w->opcode, first, last);
	/* UC opcodes: the RC ones with the UC transport bits (IBTA 9.2). */
	if (qp->ibqp.qp_type == IB_QPT_UC)
		pkt.opcode |= SRDMA_TRANSPORT_UC;
	pkt.psn = psn;
	pkt.qpn = qp->attr.dest_qp_num;
	pkt.pkey = IB_DEFAULT_PKEY_FULL;
	/* IBTA 9.2.3: SE only ends a SEND or a WRITE with immediate. */
	pkt.se = last && (w->flags & SRDMA_WQE_SOLICITED) &&
		 (w->opcode == IB_UVERBS_WR_SEND ||
		  w->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
		  w->opcode == IB_UVERBS_WR_SEND_WITH_INV ||
		  w->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
	pkt.ackreq = (probe && qp->ibqp.qp_type == IB_QPT_RC) ||
		     srdma_req_want_ack(qp, sw, psn, last);
	pkt.paylen = paylen;
	pkt.pad = (4 - (paylen & 3)) & 3;

	switch (w->opcode) {
	case IB_UVERBS_WR_RDMA_READ:
		/*
		 * A retried READ asks only for what has not arrived, or a
		 * piece of it (srdma_req_read_piece()).
		 */
		pkt.reth.va = w->wr.rdma.remote_addr + off;
		pkt.reth.rkey = w->wr.rdma.rkey;
		pkt.reth.len = req->read_len ?: sw->length - off;
		break;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		pkt.atmeth.va = w->wr.atomic.remote_addr;
		pkt.atmeth.rkey = w->wr.atomic.rkey;
		pkt.atmeth.swap_add = w->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ?
				      w->wr.atomic.swap : w->wr.atomic.compare_add;
		pkt.atmeth.compare = w->wr.atomic.compare_add;
		break;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		pkt.reth.va = w->wr.rdma.remote_addr;
		pkt.reth.rkey = w->wr.rdma.rkey;
		pkt.reth.len = sw->length;
		break;
	default:
		break;
	}
	pkt.imm = w->ex.imm_data;
	pkt.ieth_rkey = w->ex.invalidate_rkey;

	skb = srdma_req_alloc(qp, sw, &pkt, off, bad);
	if (!skb)
		return NULL;
	if (!pkt.ackreq) {
		req->pkts_since_ack_req++;
		return skb;
	}
	req->pkts_since_ack_req = 0;
	srdma_req_time_rtt(qp, psn);
	/*
	 * The last PSN whose answer is due: the last response a READ asks
	 * for, that of its piece when it asks for one. Within the PSNs
	 * outstanding, so never half the PSN space past the last one.
	 */
	if (w->opcode != IB_UVERBS_WR_RDMA_READ)
		last_psn = psn;
	else if (req->read_len)
		last_psn = srdma_psn_add(psn, req->read_len / pmtu - 1);
	else
		last_psn = srdma_psn_add(sw->first_psn, sw->npkts - 1);
	if (srdma_psn_diff(last_psn, req->ack_psn) > 0)
		req->ack_psn = last_psn;
	return skb;
}

/* Start (or restart, after go-back-N) transmission at PSN una. */
static void srdma_req_rewind(struct srdma_qp *qp)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	u32 idx = qp->sq.ring.own;
	struct srdma_swqe *sw;

	qp->req.need_retry = false;
	srdma_req_rtt_rewind(&qp->req);
	srdma_counter_inc(to_sdev(qp->ibqp.device), SRDMA_CNT_RETRANSMITS);
	qp->req.psn = qp->req.una;
	qp->req.rd_atomic = 0;
	qp->req.read_piece = false;
	for (; idx != qp->req.fetch; idx++) {
		sw = srdma_swqe_at(qp, idx);
		if (!sw->started)
			break;
		if (srdma_psn_diff(qp->req.una,
				   srdma_psn_add(sw->first_psn, sw->npkts)) < 0)
			break;
	}
	qp->req.cur = idx;
	qp->req.cur_off = 0;
	if (idx == qp->req.fetch)
		return;
	sw = srdma_swqe_at(qp, idx);
	if (sw->started && srdma_psn_diff(qp->req.una, sw->first_psn) > 0)
		qp->req.cur_off = srdma_psn_diff(qp->req.una, sw->first_psn) *
				  pmtu;
}

/*
 * The WQE at @idx failed before any packet of it left: malformed, an L_Key
 * check, a local operation (IBTA 9.9.2.1, class C and D). C9-209: the
 * requester sends nothing more, the WQEs before it that are outstanding
 * complete as their answers come, and then it completes with @status and
 * the QP enters ERR (srdma_req_fail_due()). Flushed, those WQEs would say
 * that messages the responder may have executed never were. A go-back-N
 * reaches only up to it; one of the WQEs before it that fails when sent
 * again takes its place. A WQE whose resend failed may yet complete, its
 * first sending answered: the error is then void (srdma_comp_complete()).
 */
static void srdma_req_fail(struct srdma_qp *qp, u32 idx,
			   enum ib_wc_status status)
{
	struct srdma_req *req = &qp->req;

	if (!req->err_wait || (s32)(idx - req->err_idx) < 0) {
		srdma_qp_dbg(qp, "WQE %u: %s, after the %u before it\n", idx,
			     ib_wc_status_msg(status), idx - qp->sq.ring.own);
		req->err_wait = true;
		req->err_idx = idx;
		req->err_status = status;
	}
	/*
	 * The WQEs before it complete only once answered: an unsignaled
	 * tail that asked for no ACK is asked now (the tail probe).
	 */
	if (qp->sq.ring.own != idx && !srdma_req_expects(qp))
		req->probe = true;
}

/**
 * srdma_req_fail_due() - End the QP for a requester error, once it is due
 * @qp: the QP
 *
 * The WQEs before the one that failed (srdma_req_fail()) have completed:
 * it ends the QP. So does a completion that the send CQ could not take
 * (C9-218, class F; srdma_comp_complete()), at once: the QP's owner learns
 * of it from the asynchronous event, as the CQ holds no more.
 *
 * Context: qp->lock held.
 * Return: true when the QP entered ERR.
 */
bool srdma_req_fail_due(struct srdma_qp *qp)
{
	struct srdma_req *req = &qp->req;

	if (req->cq_full) {
		req->cq_full = false;
		srdma_qp_fatal_event(qp, qp->sq.ring.own, IB_WC_WR_FLUSH_ERR);
		return true;
	}
	if (!req->err_wait || qp->sq.ring.own != req->err_idx)
		return false;
	req->err_wait = false;
	srdma_qp_fatal(qp, req->err_idx, req->err_status);
	return true;
}

static bool srdma_wr_is_local(u8 op)
{
	return op == IB_UVERBS_WR_LOCAL_INV || op == IB_UVERBS_WR_BIND_MW ||
	       op == SRDMA_WR_REG_MR;
}

/*
 * Execute a local operation when it reaches the head of transmission: it
 * takes no PSN, and it completes in order once everything before it has
 * (srdma_comp_local()). IBTA 10.8.3: operations after it see its effect.
 */
static void srdma_req_local(struct srdma_qp *qp, struct srdma_swqe *sw)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	const struct srdma_kreg *kreg;
	enum ib_wc_status status;

	if (sw->wqe.opcode == SRDMA_WR_REG_MR) {
		kreg = &qp->sq_kreg[srdma_ring_slot(qp->req.cur,
						    qp->sq.ring.num)];
		status = srdma_mr_fast_reg(sdev, qp->ibqp.pd, kreg->mr,
					   kreg->key, kreg->access);
	} else if (sw->wqe.opcode == IB_UVERBS_WR_BIND_MW) {
		status = srdma_mw_bind(qp, &sw->wqe);
	} else {
		status = srdma_mr_invalidate(qp, sw->wqe.ex.invalidate_rkey);
		/*
		 * A type 2 window is used only by requests arriving on this
		 * QP (IBTA 10.6.7.2), each resolving its key and placing or
		 * copying in one section under resp_lock: once this side
		 * has held that lock, no such access that found the window
		 * valid is still under way, and the LOCAL_INV may complete.
		 * READ responses already built by page reference leave with
		 * the pages' contents (Documentation/design.rst, MR). A
		 * fast-registration MR, which any QP may use, is waited for
		 * by srdma_mr_invalidate() itself.
		 */
		if (status == IB_WC_SUCCESS) {
			spin_lock(&qp->resp_lock);
			spin_unlock(&qp->resp_lock);
		}
	}
	if (status != IB_WC_SUCCESS) {
		/* Not started: nothing completes it before the error does. */
		srdma_req_fail(qp, qp->req.cur, status);
		return;
	}
	sw->first_psn = qp->req.psn;
	sw->npkts = 0;
	sw->started = true;
	qp->req.cur++;
	srdma_comp_local(qp);
	/* It completes only behind an unsignaled tail: ask for its ACK. */
	if (qp->sq.ring.own != qp->req.cur && !srdma_req_expects(qp))
		qp->req.probe = true;
}

/**
 * srdma_req_congestion() - A loss signal: shrink the congestion window
 * @qp: the QP
 * @timeout: the signal is a timeout (the window restarts at its minimum)
 *
 * Context: qp->lock held.
 */
void srdma_req_congestion(struct srdma_qp *qp, bool timeout)
{
	struct srdma_req *req = &qp->req;

	req->cwnd = timeout ? SRDMA_CWND_MIN :
			      max_t(u32, req->cwnd / 2, SRDMA_CWND_MIN);
	req->cwnd_acked = 0;
}

/**
 * srdma_req_acked() - Packets were acknowledged: grow the window
 * @qp: the QP
 * @n: packets newly acknowledged
 *
 * Context: qp->lock held.
 */
void srdma_req_acked(struct srdma_qp *qp, u32 n)
{
	struct srdma_req *req = &qp->req;

	req->cwnd_acked += n;
	while (req->cwnd_acked >= req->cwnd && req->cwnd < SRDMA_MAX_INFLIGHT) {
		req->cwnd_acked -= req->cwnd;
		req->cwnd++;
	}
}

/* SEND and WRITE with immediate consume a receive WQE (9.7.7.2.4). */
static bool srdma_wr_consumes(u8 op)
{
	return op == IB_UVERBS_WR_SEND || op == IB_UVERBS_WR_SEND_WITH_IMM ||
	       op == IB_UVERBS_WR_SEND_WITH_INV ||
	       op == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

/*
 * The messages consuming a receive WQE whose SSN is at most req.msn: the
 * requester's side of C9-161 (credits count from the MSN). Called as the
 * MSN is taken, before the acknowledgment that carries it completes any
 * WQE: every WQE before the oldest (own) has an SSN the MSN covers, those
 * after it are still there. The first message after the MSN is looked for
 * from req.credit_idx, which moves on as the MSN does (to own at least).
 */
static u32 srdma_req_consumed(struct srdma_qp *qp)
{
	struct srdma_req *req = &qp->req;
	struct srdma_swqe *sw;

	if ((s32)(req->credit_idx - qp->sq.ring.own) < 0)
		req->credit_idx = qp->sq.ring.own;
	for (; req->credit_idx != req->fetch; req->credit_idx++) {
		sw = srdma_swqe_at(qp, req->credit_idx);
		if (!sw->started)
			break;
		if (!sw->npkts)		/* a local operation: no SSN */
			continue;
		if (srdma_psn_diff(sw->ssn, req->msn) > 0)
			return sw->cons_seq -
			       srdma_wr_consumes(sw->wqe.opcode);
	}
	return req->cons_total;
}

/*
 * Is a new request packet of @sw limited (C9-159)? Only a message that
 * consumes a receive WQE is, on an RC connection whose responder gives
 * credits or has not answered yet (C9-156), when it is beyond the limit
 * the last credits set: the requester's LSN, counted in such messages. A
 * packet sent again is never limited (9.7.7.2.5).
 */
static bool srdma_req_limited(struct srdma_qp *qp, struct srdma_swqe *sw)
{
	struct srdma_req *req = &qp->req;

	if (qp->ibqp.qp_type != IB_QPT_RC || req->e2e == SRDMA_E2E_OFF ||
	    !srdma_wr_consumes(sw->wqe.opcode) ||
	    srdma_psn_diff(req->psn, req->max_psn) < 0)
		return false;
	return (s32)(sw->cons_seq - req->cons_limit) > 0;
}

/*
 * Where a limited request stops to wait for an acknowledgment, with the
 * AckReq bit: after one packet of a SEND (C9-163), after the last packet
 * of a WRITE with immediate, which consumes the WQE only with its last
 * packet (o9-99).
 */
static bool srdma_req_limit_ends(const struct srdma_swqe *sw, u32 off,
				 u32 pmtu)
{
	return sw->wqe.opcode != IB_UVERBS_WR_RDMA_WRITE_WITH_IMM ||
	       off + pmtu >= sw->length;
}

/**
 * srdma_req_credits() - Take the credits of an acknowledgment
 * @qp: the QP
 * @pkt: an ACK, atomic ACK or READ response with an AETH whose syndrome
 *	is an ACK's, not a ghost
 *
 * IBTA 9.7.7.2: the requester takes MSN and credits from every such
 * packet, duplicates and the unsolicited ACKs that carry credits included
 * (C9-144, C9-155, C9-164), unless its MSN is older than one already
 * taken, or newer than any message sent. The "invalid" code turns the
 * connection's credits off. Call before the packet completes any WQE.
 *
 * Context: qp->lock held.
 */
void srdma_req_credits(struct srdma_qp *qp, const struct srdma_pkt *pkt)
{
	struct srdma_req *req = &qp->req;
	u8 code = srdma_syn_value(pkt->aeth.syndrome);

	lockdep_assert_held(&qp->lock);
	if (req->e2e == SRDMA_E2E_OFF)
		return;
	if (code == SRDMA_CREDITS_INVALID) {
		req->e2e = SRDMA_E2E_OFF;
		return;
	}
	if ((req->e2e == SRDMA_E2E_ON &&
	     srdma_psn_diff(pkt->aeth.msn, req->msn) < 0) ||
	    srdma_psn_diff(pkt->aeth.msn, req->ssn) > 0)
		return;
	req->e2e = SRDMA_E2E_ON;
	req->msn = pkt->aeth.msn;
	req->cons_limit = srdma_req_consumed(qp) + srdma_aeth_credits(code);
}

/*
 * A READ asked for again from the middle (a go-back-N to a PSN past its
 * first: the responder has its resource) asks for at most a window of
 * responses, then for the next piece once they have all come. A
 * responder is paced by its own stack's queue (srdma_txg.c), never by the
 * path: it sends a READ's responses back to back, and asked again for
 * the whole rest at every gap, it floods a slow or lossy path
 * with responses that the next gap makes useless, the path drops more,
 * and the READ stops moving until its retries run out. A duplicate READ
 * may ask for a part of the original's data (9.7.5.1.4); its responses
 * end with a LAST where the piece does. Sets req.read_len (0: the rest).
 *
 * Context: qp->lock held.
 * Return: false when the piece waits for the answers to the last one.
 */
static bool srdma_req_read_piece(struct srdma_qp *qp,
				 const struct srdma_swqe *sw, u32 pmtu)
{
	struct srdma_req *req = &qp->req;
	u64 win = (u64)max_t(u32, req->cwnd, SRDMA_CWND_MIN) * pmtu;

	req->read_len = 0;
	/*
	 * Whatever cut the last piece (this or srdma_req_read_room()): the
	 * responder frees its resource only once it has answered it whole.
	 */
	if (req->read_piece && req->psn != req->una)
		return false;
	/* Without a timeout nothing would notice a piece's lost end. */
	if (!req->cur_off || !srdma_psn_before(req->psn, req->max_psn) ||
	    !qp->attr.timeout)
		return true;
	if (sw->length - req->cur_off > win)
		req->read_len = win;
	return true;
}

/*
 * A READ takes the PSNs of all its responses with its request: at most
 * what C9-61 leaves (srdma_read_fit()). Every other request takes one PSN
 * and goes behind fewer than req.cwnd outstanding, far below the limit.
 * Sets req.read_len when only a first piece fits.
 *
 * Context: qp->lock held.
 * Return: false when the READ waits for the answers to those before it.
 */
static bool srdma_req_read_room(struct srdma_qp *qp,
				const struct srdma_swqe *sw, u32 pmtu)
{
	struct srdma_req *req = &qp->req;
	u32 need, fit;

	need = req->read_len ? req->read_len / pmtu :
	       (sw->first_psn + sw->npkts - req->psn) & SRDMA_PSN_MASK;
	fit = srdma_read_fit(srdma_psn_diff(req->psn, req->una), need);
	if (!fit)
		return false;
	if (fit < need)
		req->read_len = fit * pmtu;
	return true;
}

/* A READ request has gone: the whole rest, or a piece of it. */
static void srdma_req_read_sent(struct srdma_qp *qp, struct srdma_swqe *sw,
				u32 pmtu)
{
	struct srdma_req *req = &qp->req;

	if (!req->read_piece)
		req->rd_atomic++;
	if (req->read_len) {
		/* The WQE stays at cur; the next piece waits for this one. */
		req->read_piece = true;
		sw->split = true;
		req->psn = srdma_psn_add(req->psn, req->read_len / pmtu);
		req->cur_off += req->read_len;
		req->read_len = 0;
		return;
	}
	req->read_piece = false;
	req->psn = srdma_psn_add(sw->first_psn, sw->npkts);
	req->cur++;
	req->cur_off = 0;
}

/**
 * srdma_req_tx() - Send request packets
 * @qp: the QP
 * @q: packets to send once qp->lock is released
 * @budget: packets this pass may still send; decremented
 *
 * Context: qp->lock held.
 * Return: true when the requester stopped for the budget alone (another
 * pass is needed), false when it has nothing more to send now.
 */
bool srdma_req_tx(struct srdma_qp *qp, struct sk_buff_head *q, int *budget)
{
	struct srdma_req *req = &qp->req;
	struct srdma_swqe *sw;
	struct sk_buff *skb;
	bool bad = false, limited, stop;
	u32 pmtu;
	int err;

	lockdep_assert_held(&qp->lock);
	if (srdma_req_fail_due(qp) || !srdma_qp_sends(qp->state) ||
	    req->rnr_wait)
		return false;
	if (req->tx_dropped) {
		/* What follows a dropped packet would only be out of order. */
		req->tx_dropped = false;
		srdma_req_congestion(qp, false);
		req->need_retry = true;
	}
	if (req->need_retry)
		srdma_req_rewind(qp);
	pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);

	while (*budget > 0) {
		if (srdma_req_fail_due(qp) ||
		    (req->err_wait && req->cur == req->err_idx))
			return false;
		if (req->cur == req->fetch) {
			err = srdma_req_fetch(qp);
			if (err == -EPROTO) {
				/*
				 * A corrupt index names no WQE to complete
				 * in error: the QP's owner learns of it from
				 * the asynchronous event, at once.
				 */
				srdma_qp_fatal_event(qp, req->fetch,
						     IB_WC_LOC_QP_OP_ERR);
				return false;
			}
			if (err < 0) {
				srdma_req_fail(qp, req->fetch,
					       IB_WC_LOC_QP_OP_ERR);
				srdma_req_fail_due(qp);
				return false;
			}
			if (!err)
				return false;
		}
		if (srdma_psn_diff(req->psn, req->una) >= req->cwnd)
			return false;
		sw = srdma_swqe_at(qp, req->cur);
		if (srdma_wr_is_local(sw->wqe.opcode)) {
			/*
			 * A go-back-N resends the requests around it; the
			 * operation itself ran, and must not run again (a
			 * second REG_MR or bind would fail, an invalidation
			 * undo a bind made since).
			 */
			if (sw->started) {
				req->cur++;
				continue;
			}
			if (qp->state == IB_QPS_SQD)
				return false;
			if (sw->wqe.flags & SRDMA_WQE_FENCE && req->rd_atomic)
				return false;
			srdma_req_local(qp, sw);
			/* Failed, it stays at cur, not started. */
			if (!sw->started || qp->state != IB_QPS_RTS) {
				srdma_req_fail_due(qp);
				return false;
			}
			continue;
		}
		if (!sw->started) {
			/* Draining: no new message starts. */
			if (qp->state == IB_QPS_SQD)
				return false;
			/* IBTA 10.8.3.3: a fenced WQE waits for READ/atomics. */
			if ((sw->wqe.flags & SRDMA_WQE_FENCE) && req->rd_atomic)
				return false;
			sw->first_psn = req->psn;
			sw->npkts = srdma_wr_is_read_atomic(sw->wqe.opcode) &&
				    sw->wqe.opcode != IB_UVERBS_WR_RDMA_READ ?
				    1 : srdma_npkts(sw->length, pmtu);
			req->ssn = srdma_psn_add(req->ssn, 1);
			sw->ssn = req->ssn;
			req->cons_total += srdma_wr_consumes(sw->wqe.opcode);
			sw->cons_seq = req->cons_total;
			sw->started = true;
		}
		/*
		 * Started, but held back before its first packet (the READ
		 * and atomic limit, credits, memory): not begun, so it waits
		 * too (srdma_swqe_begun()).
		 */
		if (qp->state == IB_QPS_SQD && !srdma_swqe_begun(req, sw))
			return false;
		if (srdma_wr_is_read_atomic(sw->wqe.opcode) &&
		    !req->read_piece &&
		    req->rd_atomic >= max_t(u32, qp->attr.max_rd_atomic, 1))
			return false;
		if (sw->wqe.opcode == IB_UVERBS_WR_RDMA_READ &&
		    (!srdma_req_read_piece(qp, sw, pmtu) ||
		     !srdma_req_read_room(qp, sw, pmtu)))
			return false;

		/*
		 * C9-162: a limited request waits for credit, or goes alone
		 * once the one sent before it is acknowledged.
		 */
		if (req->limited_wait &&
		    srdma_psn_diff(req->una, req->limited_psn) > 0)
			req->limited_wait = false;
		limited = srdma_req_limited(qp, sw);
		if (limited && req->limited_wait)
			return false;
		stop = limited && srdma_req_limit_ends(sw, req->cur_off, pmtu);
		skb = srdma_req_packet(qp, sw, req->psn, req->cur_off, stop,
				       &bad);
		if (!skb) {
			if (bad) {
				srdma_req_fail(qp, req->cur, IB_WC_LOC_PROT_ERR);
				srdma_req_fail_due(qp);
			} else {
				/*
				 * No memory. An ACK may never come (nothing
				 * in flight, or a resend after a NAK that is
				 * not repeated), and a local ACK timeout
				 * would cost a retry: the resume timer runs
				 * the requester again a tick later (never
				 * during an RNR wait, which returned above).
				 */
				mod_timer(&qp->rnr_timer, jiffies + 1);
			}
			return false;
		}
		__skb_queue_tail(q, skb);
		(*budget)--;
		if (limited) {
			srdma_counter_inc(to_sdev(qp->ibqp.device),
					  SRDMA_CNT_TX_LIMITED);
			req->limited_wait = stop;
			req->limited_psn = req->psn;
		}

		if (sw->wqe.opcode == IB_UVERBS_WR_RDMA_READ) {
			/* Its responses take the PSNs. */
			srdma_req_read_sent(qp, sw, pmtu);
		} else if (srdma_wr_is_read_atomic(sw->wqe.opcode)) {
			req->rd_atomic++;
			req->psn = srdma_psn_add(sw->first_psn, sw->npkts);
			req->cur++;
			req->cur_off = 0;
		} else {
			req->psn = srdma_psn_add(req->psn, 1);
			req->cur_off += min(pmtu, sw->length - req->cur_off);
			if (req->cur_off >= sw->length) {
				req->cur++;
				req->cur_off = 0;
			}
		}
		if (srdma_psn_diff(req->psn, req->max_psn) > 0)
			req->max_psn = req->psn;
		if (qp->ibqp.qp_type == IB_QPT_UC) {
			/* Unacknowledged: a WQE is done once it is sent. */
			req->una = req->psn;
			while (qp->sq.ring.own != req->cur)
				srdma_comp_complete(qp, IB_WC_SUCCESS);
		}
	}
	return true;
}

/**
 * srdma_req_drained() - End an SQ drain once nothing started is left
 * @qp: the QP
 *
 * In SQD the messages begun before it go on until they complete
 * (srdma_qp_sends()); the drain is over when the oldest WQE left, if
 * any, has not begun (srdma_swqe_begun()). Then the SQ Drained event goes out if it was asked
 * for (IB_QP_EN_SQD_ASYNC_NOTIFY), once.
 *
 * Context: qp->lock held.
 */
void srdma_req_drained(struct srdma_qp *qp)
{
	u32 own = qp->sq.ring.own;

	lockdep_assert_held(&qp->lock);
	if (!qp->req.draining || qp->state != IB_QPS_SQD)
		return;
	if (own != qp->req.fetch &&
	    srdma_swqe_begun(&qp->req, srdma_swqe_at(qp, own)))
		return;
	qp->req.draining = false;
	if (qp->attr.en_sqd_async_notify)
		WRITE_ONCE(qp->event, IB_EVENT_SQ_DRAINED);
}

/**
 * srdma_req_idle() - Has the requester nothing to send or wait for?
 * @qp: the QP
 *
 * Context: qp->lock held.
 * Return: true when every fetched WQE is complete.
 */
bool srdma_req_idle(struct srdma_qp *qp)
{
	return qp->sq.ring.own == qp->req.fetch;
}
