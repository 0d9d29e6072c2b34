// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC responder (IBTA 9.7.5.1, responder side of the reliable service).
 *
 * A request packet is processed in the softirq that delivered it:
 *
 *   PSN check (9.7.5.1.1)      ahead of ePSN: one PSN sequence error NAK
 *                              behind ePSN: duplicate (9.7.5.1.4)
 *   opcode sequence (9.7.5.1.3) a message continues as it began
 *   execute                    SEND: take an RQ WQE (none: RNR NAK),
 *                              place the payload; WRITE: check the R_Key,
 *                              place; READ: check, queue the responses;
 *                              atomic: check, execute once, remember
 *   acknowledge (9.7.5.1.2)    when the requester asked (AckReq), or with
 *                              the READ responses and atomic ACK
 *
 * The answers wait in the responder's state (resp.ack_*, the responder
 * resources) until srdma_resp_tx.c builds and sends them.
 *
 * Errors are those of 9.9.2 (responder classes): invalid request, remote
 * access and remote operational errors are NAKed and move the QP to the
 * error state; a missing receive WQE is an RNR NAK and nothing else.
 *
 * The UC responder (9.8.2, srdma_uc_rcv()) places SEND and WRITE messages
 * with the same code, without ACKs: a PSN gap, a bad R_Key, a malformed
 * message or a missing receive WQE drops the rest of the message in
 * progress silently, and the next message starts cleanly, reusing the
 * receive WQE of the dropped one. Only an error of the receive WQE itself
 * (too short, a bad local key) completes it in error and ends the QP.
 *
 * Every function here runs with qp->resp_lock held.
 */

#include "srdma.h"
#include "srdma_hdr.h"

/*
 * Queue an ACK or NAK; srdma_resp_tx() sends it. One answer waits at a
 * time; a newer one replaces it when it says all the pending one said
 * (srdma_ack_supersedes()). Kept, a PSN sequence error or RNR NAK whose
 * packet has arrived since would send the requester back over a packet
 * that was executed, or hide the error-class NAK that packet drew. A
 * duplicate's ACK names an older PSN and leaves such a NAK in place.
 * Nothing follows the answer that ends the QP (resp->fatal), and that
 * answer replaces any (srdma_resp_nak_fatal()); nor an error that ends it
 * without an answer (resp->ending).
 */
static void srdma_resp_ack(struct srdma_qp *qp, u8 syndrome, u32 psn)
{
	struct srdma_resp *resp = &qp->resp;

	if (qp->ibqp.qp_type == IB_QPT_UC || resp->fatal || resp->ending)
		return;
	if (resp->ack_pending &&
	    !srdma_ack_supersedes(resp->ack_syndrome, resp->ack_psn, psn))
		return;
	resp->ack_pending = true;
	resp->ack_syndrome = syndrome;
	resp->ack_psn = psn;
}

/*
 * RNR NAK (9.7.5.2.8). The packets that follow the NAKed one are out of
 * sequence; they are dropped without a PSN sequence error NAK until the
 * retry arrives.
 */
static void srdma_uc_drop(struct srdma_qp *qp);

static void srdma_resp_rnr(struct srdma_qp *qp, u32 psn)
{
	if (qp->ibqp.qp_type == IB_QPT_UC) {
		srdma_counter_inc(to_sdev(qp->ibqp.device),
				  SRDMA_CNT_RX_DROP_NO_RWQE);
		srdma_uc_drop(qp);
		return;
	}
	srdma_resp_ack(qp, SRDMA_RNR_SYN(qp->attr.min_rnr_timer), psn);
	qp->resp.nak_psn_sent = true;
	srdma_counter_inc(to_sdev(qp->ibqp.device), SRDMA_CNT_TX_RNR_NAKS);
}

/**
 * srdma_resp_nak_fatal() - Queue the NAK that ends the QP
 * @qp: the QP
 * @nak: the NAK code (SRDMA_NAK_*)
 * @psn: the PSN of the request that failed
 *
 * A UC QP, which has no NAK, drops the message in progress instead.
 *
 * Context: qp->resp_lock held.
 */
void srdma_resp_nak_fatal(struct srdma_qp *qp, u8 nak, u32 psn)
{
	struct srdma_resp *resp = &qp->resp;

	if (qp->ibqp.qp_type == IB_QPT_UC) {
		/* The receive WQE's own errors ended the QP already. */
		srdma_uc_drop(qp);
		return;
	}
	/*
	 * The QP's last answer replaces any that waits, even one of a later
	 * PSN (a sequence or RNR NAK behind the READ responses that just
	 * failed): it acknowledges what came before @psn, and nothing after
	 * it will execute. Its syndrome also names the QP's event. Of two
	 * errors, the one of the earlier PSN is the answer: READ responses
	 * that fail after a later request failed come before its NAK.
	 */
	if (resp->fatal && !srdma_psn_before(psn, resp->fatal_psn))
		return;
	/* Replaced: the error of a receive WQE is not the QP's any more. */
	if (resp->fatal)
		resp->wqe_err = false;
	resp->ack_pending = true;
	resp->ack_syndrome = SRDMA_NAK_SYN(nak);
	resp->ack_psn = psn;
	resp->fatal = true;
	resp->fatal_psn = psn;
}

/**
 * srdma_resp_take_rwqe() - Take the next receive WQE
 * @qp: the QP
 *
 * Copies the WQE from the RQ ring into the responder's copy (once: until
 * it completes, the copy stays).
 *
 * Context: qp->resp_lock held.
 * Return: 1 taken, 0 none posted (RNR), -EINVAL for a malformed WQE (taken
 * all the same: it is the QP's to complete in error), -EPROTO when the
 * ring is corrupt.
 */
int srdma_resp_take_rwqe(struct srdma_qp *qp)
{
	struct srdma_ring *r = &qp->rq.ring;
	struct srdma_recv_wqe *w = qp->resp.rwqe;
	u32 prod;
	int ret;

	if (qp->resp.rwqe_valid)
		return 1;
	if (qp->ibqp.srq) {
		ret = srdma_srq_take(to_ssrq(qp->ibqp.srq), w);
		if (ret == 0 || ret == -EPROTO)
			return ret;
	} else {
		prod = smp_load_acquire(&r->ctrl->prod); /* WQEs below prod */
		if (!srdma_ring_index_ok(r->own, prod, r->num, false))
			return -EPROTO;
		if (prod == r->own)
			return 0;
		memcpy(w, r->buf + srdma_ring_slot(r->own, r->num) * r->stride,
		       r->stride);
		ret = w->num_sge > qp->rq.max_sge ? -EINVAL : 1;
	}
	/* A malformed WQE is completed, never scattered into. */
	if (ret < 0)
		w->num_sge = 0;
	qp->resp.rwqe_valid = true;
	qp->resp.recv_off = 0;
	return ret;
}

/**
 * srdma_rwqe_room() - The bytes a receive WQE's scatter list can take
 * @w: the responder's copy of the WQE (num_sge checked when taken)
 *
 * Context: any.
 * Return: the sum of its SGE lengths.
 */
u64 srdma_rwqe_room(const struct srdma_recv_wqe *w)
{
	const struct srdma_sge *sge = (const struct srdma_sge *)(w + 1);
	u64 room = 0;
	u32 i;

	for (i = 0; i < w->num_sge; i++)
		room += sge[i].length;
	return room;
}

/**
 * srdma_resp_rwqe_done() - The receive WQE in use is complete
 * @qp: the QP
 *
 * Hands its RQ slot back (one taken from an SRQ was handed back when it
 * was taken). Call before the CQE is posted: a process that sees the CQE
 * may post into the slot at once.
 *
 * Context: qp->resp_lock held.
 */
void srdma_resp_rwqe_done(struct srdma_qp *qp)
{
	struct srdma_ring *r = &qp->rq.ring;

	qp->resp.rwqe_valid = false;
	if (qp->ibqp.srq)
		return;
	r->own++;
	/* Slot read (copied) before the producer may reuse it. */
	smp_store_release(&r->ctrl->cons, r->own);
}

/*
 * C9-225 (class G): the CQ could not take the completion of the message
 * @pkt ends, which executed. The QP ends with an asynchronous error
 * (IB_EVENT_QP_FATAL), and the message is not acknowledged: its requester
 * must not take it for done. An RC responder first acknowledges what came
 * before it, READ responses included, as for a NAK that ends the QP: the
 * unsignaled messages before it may have no ACK of their own.
 */
static void srdma_resp_cq_full(struct srdma_qp *qp, const struct srdma_pkt *pkt)
{
	struct srdma_resp *resp = &qp->resp;

	resp->ending_fatal = true;
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		srdma_resp_end(qp, true);
		return;
	}
	/* An answer that ends the QP already waits: it stands. */
	if (resp->fatal)
		return;
	resp->ack_pending = true;
	resp->ack_syndrome = SRDMA_ACK_SYN;
	resp->ack_psn = srdma_psn_add(pkt->psn, -1);
	resp->fatal = true;
	resp->fatal_psn = pkt->psn;
}

/* Complete the receive WQE in use and hand its slot back. */
static void srdma_resp_complete(struct srdma_qp *qp, enum ib_wc_status status,
				u8 opcode, const struct srdma_pkt *pkt)
{
	struct srdma_cqe cqe = {
		.wr_id = qp->resp.rwqe->wr_id,
		.status = status,
		.opcode = opcode,
		.qp_num = qp->ibqp.qp_num,
		.byte_len = qp->resp.recv_off,
		.src_qp = qp->attr.dest_qp_num,
	};

	if (pkt && srdma_pkt_is(pkt, SRDMA_OPF_IMM)) {
		cqe.wc_flags |= SRDMA_CQE_WITH_IMM;
		cqe.ex.imm_data = pkt->imm;
	} else if (pkt && srdma_pkt_is(pkt, SRDMA_OPF_INV)) {
		cqe.wc_flags |= SRDMA_CQE_WITH_INV;
		cqe.ex.invalidated_rkey = pkt->ieth_rkey;
	}
	srdma_resp_rwqe_done(qp);
	if (srdma_cq_post(to_scq(qp->ibqp.recv_cq), &cqe, pkt && pkt->se)) {
		if (status != IB_WC_SUCCESS)
			qp->resp.wqe_err = true;
	} else if (status == IB_WC_SUCCESS) {
		srdma_resp_cq_full(qp, pkt);
	} else {
		/*
		 * A receive that completes in error ends the QP anyway, with
		 * the answer that error draws; lost, only the event tells.
		 */
		qp->resp.ending_fatal = true;
	}
	/* UC: no NAK carries the error; the QP ends now (IBTA 10.8.3). */
	if (status != IB_WC_SUCCESS && qp->ibqp.qp_type == IB_QPT_UC)
		srdma_resp_end(qp, false);
}

/*
 * An error of class C (9.9.3.1.3) on a request: an RC QP sends the NAK
 * @nak, the last answer, and enters the error state. C9-222.1.1: the
 * receive WQE of the message it ends (a SEND in progress, a WRITE with
 * immediate) completes with the error; only an error tied to no WQE is
 * the consumer's to learn from an asynchronous event (srdma_qp_fatal()).
 * A UC QP drops the message (class D1, srdma_resp_nak_fatal()).
 */
static void srdma_resp_fail(struct srdma_qp *qp, u8 nak, u32 psn)
{
	enum ib_wc_status status;

	if (qp->ibqp.qp_type == IB_QPT_RC && qp->resp.rwqe_valid) {
		switch (nak) {
		case SRDMA_NAK_INVALID_REQ:
			status = IB_WC_REM_INV_REQ_ERR;
			break;
		case SRDMA_NAK_REMOTE_ACCESS:
			status = IB_WC_REM_ACCESS_ERR;
			break;
		default:
			/* The responder's own (class A): its callers complete. */
			status = IB_WC_LOC_QP_OP_ERR;
			break;
		}
		srdma_resp_complete(qp, status, IB_WC_RECV, NULL);
	}
	srdma_resp_nak_fatal(qp, nak, psn);
}

/*
 * The receive queue failed the responder (srdma_resp_take_rwqe() < 0). A
 * malformed WQE completes with IB_WC_LOC_QP_OP_ERR; a corrupt ring index
 * leaves none to complete. The QP ends with IB_EVENT_QP_FATAL, a local
 * work queue error (IBTA 11.6.3): an RC QP once its NAK, a remote
 * operational error, is sent; a UC QP, which has no NAK, at once.
 */
static void srdma_resp_rq_failed(struct srdma_qp *qp, int err, u32 psn)
{
	if (err == -EINVAL)
		srdma_resp_complete(qp, IB_WC_LOC_QP_OP_ERR, IB_WC_RECV, NULL);
	qp->resp.ending_fatal = true;
	if (qp->ibqp.qp_type == IB_QPT_UC)
		srdma_resp_end(qp, true);
	else
		srdma_resp_fail(qp, SRDMA_NAK_REMOTE_OP, psn);
}

/*
 * Take the receive WQE that a SEND or a WRITE with immediate consumes.
 * Return: true when taken; false when the receive queue failed the
 * responder or holds none (9.7.5.2.8: an RNR NAK, the requester retries
 * later), the request then answered.
 */
static bool srdma_resp_get_rwqe(struct srdma_qp *qp, u32 psn)
{
	int ret = srdma_resp_take_rwqe(qp);

	if (ret < 0)
		srdma_resp_rq_failed(qp, ret, psn);
	else if (!ret)
		srdma_resp_rnr(qp, psn);
	return ret > 0;
}

/*
 * Checks of a request that need its QP but no memory (IBTA 9.7.4.1.5,
 * 9.7.4.1.6; for UC 9.8.2.2.3): the QP must take the operation (C9-83,
 * C9-190), the payload must fit the opcode and the path MTU (C9-92,
 * C9-195..C9-197), a READ may ask for at most 2^31 bytes (C9-94).
 * Return: true when the request is valid; else RC NAKs it (invalid
 * request), UC drops it (C9-191).
 */
static bool srdma_resp_req_valid(struct srdma_qp *qp,
				 const struct srdma_pkt *pkt)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	int access = 0;

	if (!srdma_req_len_ok(pkt->info->flags, pkt->paylen, pmtu)) {
		srdma_qp_dbg(qp, "psn %#x: %u bytes of payload, path MTU %u\n",
			     pkt->psn, pkt->paylen, pmtu);
		return false;
	}
	switch (srdma_pkt_op(pkt)) {
	case SRDMA_OPF_WRITE:
		/* The DMA length of its RETH, as a READ's, is at most 2^31. */
		if (srdma_pkt_is(pkt, SRDMA_OPF_FIRST) &&
		    pkt->reth.len > SRDMA_MAX_MSG_SIZE)
			return false;
		access = IB_ACCESS_REMOTE_WRITE;
		break;
	case SRDMA_OPF_READ:
		if (pkt->reth.len > SRDMA_MAX_MSG_SIZE)
			return false;
		access = IB_ACCESS_REMOTE_READ;
		break;
	case SRDMA_OPF_ATOMIC:
		access = IB_ACCESS_REMOTE_ATOMIC;
		break;
	}
	if ((qp->attr.qp_access_flags & access) != access) {
		srdma_qp_dbg(qp, "access %#x not granted (QP's %#x)\n",
			     access, qp->attr.qp_access_flags);
		return false;
	}
	return true;
}

/*
 * Check the R_Key of a request over the whole range its extended header
 * names. Return: the MR, referenced, with *@mva the MR's address of @va;
 * NULL when @len is 0; ERR_PTR(-EACCES) when the access is refused.
 */
static struct srdma_mr *srdma_resp_rkey_get(struct srdma_qp *qp, u32 rkey,
					    u64 va, u32 len, int access,
					    u64 *mva)
{
	struct srdma_mr *mr;

	/*
	 * C9-88: the R_Key of a zero-length RDMA READ or WRITE is not
	 * validated, immediate data or not: no memory is touched, and
	 * requesters (rsockets, for one) send such WRITEs with key 0.
	 */
	if (!len)
		return NULL;
	mr = srdma_rkey_get(qp, rkey, va, len, access, mva);
	if (!mr) {
		srdma_qp_dbg(qp, "rkey %#x refused: %u bytes at %#llx, access %#x\n",
			     rkey, len, va, access);
		return ERR_PTR(-EACCES);
	}
	return mr;
}

static bool srdma_resp_rkey_ok(struct srdma_qp *qp, u32 rkey, u64 va, u32 len,
			       int access)
{
	struct srdma_mr *mr;
	u64 mva;

	mr = srdma_resp_rkey_get(qp, rkey, va, len, access, &mva);
	if (IS_ERR(mr))
		return false;
	if (mr)
		srdma_mr_put(mr);
	return true;
}

static void srdma_resp_send(struct srdma_qp *qp, const struct srdma_pkt *pkt,
			    const struct sk_buff *skb)
{
	struct srdma_resp *resp = &qp->resp;
	struct srdma_recv_wqe *w = resp->rwqe;
	bool last = srdma_pkt_is(pkt, SRDMA_OPF_LAST);
	u64 end;

	if (!srdma_resp_get_rwqe(qp, pkt->psn))
		return;
	/* No message is longer than the device's largest (max_msg_sz). */
	end = resp->recv_off + (u64)pkt->paylen;
	if (end > SRDMA_MAX_MSG_SIZE ||
	    !srdma_sgl_copy(to_sdev(qp->ibqp.device), qp->ibqp.pd,
			    (struct srdma_sge *)(w + 1), w->num_sge,
			    resp->recv_off, pkt->paylen, SRDMA_SCATTER_SKB,
			    NULL, skb, pkt->hdr_len)) {
		if (end > min_t(u64, srdma_rwqe_room(w), SRDMA_MAX_MSG_SIZE)) {
			/* 9.9.2: the message does not fit: invalid request. */
			srdma_resp_complete(qp, IB_WC_LOC_LEN_ERR, IB_WC_RECV,
					    NULL);
			srdma_resp_fail(qp, SRDMA_NAK_INVALID_REQ, pkt->psn);
		} else {
			srdma_resp_complete(qp, IB_WC_LOC_PROT_ERR, IB_WC_RECV,
					    NULL);
			srdma_resp_fail(qp, SRDMA_NAK_REMOTE_OP, pkt->psn);
		}
		return;
	}
	resp->recv_off += pkt->paylen;
	resp->cur_op = last ? SRDMA_RESP_NONE : SRDMA_RESP_SEND;
	if (last && srdma_pkt_is(pkt, SRDMA_OPF_INV) &&
	    srdma_mr_invalidate(qp,
				pkt->ieth_rkey) != IB_WC_SUCCESS) {
		/*
		 * Class J (9.9.3.1.10, o9-162.2.1): an R_Key it may not
		 * invalidate. The SEND executed and is acknowledged; its
		 * receive WQE completes in error and the QP enters the
		 * error state once the ACK is out. No NAK.
		 */
		srdma_resp_complete(qp, IB_WC_REM_INV_REQ_ERR, IB_WC_RECV,
				    NULL);
		resp->msn = srdma_psn_add(resp->msn, 1);
		resp->epsn = srdma_psn_add(resp->epsn, 1);
		srdma_resp_ack(qp, SRDMA_ACK_SYN,
			       pkt->psn);
		resp->fatal = true;
		resp->fatal_psn = pkt->psn;
		return;
	}
	if (last) {
		srdma_resp_complete(qp, IB_WC_SUCCESS, IB_WC_RECV, pkt);
		/* C9-148: not a message whose completion was lost. */
		if (!resp->fatal)
			resp->msn = srdma_psn_add(resp->msn, 1);
	}
	resp->epsn = srdma_psn_add(resp->epsn, 1);
	if (pkt->ackreq)
		srdma_resp_ack(qp, SRDMA_ACK_SYN, pkt->psn);
}

static void srdma_resp_write(struct srdma_qp *qp, const struct srdma_pkt *pkt,
			     const struct sk_buff *skb)
{
	struct srdma_resp *resp = &qp->resp;
	bool last = srdma_pkt_is(pkt, SRDMA_OPF_LAST);
	struct srdma_mr *mr = NULL;
	u64 mva;
	int ret;

	/*
	 * WRITE with immediate consumes a receive WQE: taken first, so that
	 * an error of its last packet completes it (C9-222.1.1).
	 */
	if (last && srdma_pkt_is(pkt, SRDMA_OPF_IMM) &&
	    !srdma_resp_get_rwqe(qp, pkt->psn))
		return;
	if (srdma_opcode_has(pkt->info, SRDMA_HDR_RETH)) {
		/* Kept for this packet's bytes, which start at the RETH's VA. */
		mr = srdma_resp_rkey_get(qp, pkt->reth.rkey, pkt->reth.va,
					 pkt->reth.len, IB_ACCESS_REMOTE_WRITE,
					 &mva);
		if (IS_ERR(mr)) {
			srdma_resp_fail(qp, SRDMA_NAK_REMOTE_ACCESS, pkt->psn);
			return;
		}
		resp->write_va = pkt->reth.va;
		resp->write_rkey = pkt->reth.rkey;
		resp->write_resid = pkt->reth.len;
		resp->write_len = pkt->reth.len;
	}
	/* 9.7.5.1.3: a WRITE carries exactly what its RETH announced. */
	if (pkt->paylen > resp->write_resid ||
	    (last && pkt->paylen != resp->write_resid)) {
		srdma_resp_fail(qp, SRDMA_NAK_INVALID_REQ, pkt->psn);
		goto out;
	}
	if (pkt->paylen) {
		if (!mr)
			mr = srdma_rkey_get(qp, resp->write_rkey,
					    resp->write_va, pkt->paylen,
					    IB_ACCESS_REMOTE_WRITE, &mva);
		ret = mr ? srdma_mr_copy_from_skb(mr, mva, skb, pkt->hdr_len,
						  pkt->paylen) : -EACCES;
		if (ret) {
			srdma_resp_fail(qp, SRDMA_NAK_REMOTE_ACCESS, pkt->psn);
			goto out;
		}
	}
	resp->write_va += pkt->paylen;
	resp->write_resid -= pkt->paylen;
	resp->cur_op = last ? SRDMA_RESP_NONE : SRDMA_RESP_WRITE;
	if (last) {
		if (srdma_pkt_is(pkt, SRDMA_OPF_IMM)) {
			/* byte_len is the length of the WRITE (IBTA 11.4.2.1). */
			resp->recv_off = resp->write_len;
			srdma_resp_complete(qp, IB_WC_SUCCESS,
					    IB_WC_RECV_RDMA_WITH_IMM, pkt);
		}
		/* C9-148: not a message whose completion was lost. */
		if (!resp->fatal)
			resp->msn = srdma_psn_add(resp->msn, 1);
	}
	resp->epsn = srdma_psn_add(resp->epsn, 1);
	if (pkt->ackreq)
		srdma_resp_ack(qp, SRDMA_ACK_SYN, pkt->psn);
out:
	if (mr)
		srdma_mr_put(mr);
}

/**
 * srdma_res_age() - Age of a responder resource
 * @resp: the responder
 * @slot: the resource's index in @resp->res
 *
 * Context: qp->resp_lock held.
 * Return: the age of the resource: 0 for the oldest (the next to be
 * reused).
 */
u32 srdma_res_age(const struct srdma_resp *resp, u32 slot)
{
	return (slot + resp->nres - resp->res_next) % resp->nres;
}

/* Resource @slot has responses to send: the scan must reach it. */
static void srdma_resp_res_busy(struct srdma_resp *resp, u32 slot)
{
	if (!resp->res_busy ||
	    srdma_res_age(resp, slot) < srdma_res_age(resp, resp->res_first))
		resp->res_first = slot;
	resp->res_busy = true;
}

/**
 * srdma_res_pending() - Has a responder resource work pending?
 * @res: the resource
 *
 * Pending work of a resource: READ responses or an atomic ACK to send.
 *
 * Context: any; qp->resp_lock held for a live QP's resource.
 * Return: true when it has.
 */
bool srdma_res_pending(const struct srdma_rd_res *res)
{
	if (res->type == SRDMA_RES_READ)
		return srdma_psn_diff(res->next_psn, res->last_psn) <= 0;
	return res->type == SRDMA_RES_ATOMIC && res->resid;
}

/**
 * srdma_res_reusable() - May the oldest responder resource take a new
 *	READ or atomic?
 * @res: the resource
 *
 * One that has answered is kept only for duplicates of its request: a
 * requester within max_rd_atomic that sends a new one has had every
 * response of the oldest, so a duplicate being answered again (@replay)
 * was sent before those arrived and is given up. One still answering
 * the first time means more READ/atomics in flight than
 * max_dest_rd_atomic: a NAK invalid request (C9-86).
 *
 * Context: any; qp->resp_lock held for a live QP's resource.
 * Return: true when the resource may be overwritten.
 */
bool srdma_res_reusable(const struct srdma_rd_res *res)
{
	return !srdma_res_pending(res) || res->replay;
}

/*
 * C9-86: room for a new READ or atomic, checked before anything else of
 * the request (its R_Key, its alignment): the oldest resource may be
 * reused.
 */
static bool srdma_resp_res_room(struct srdma_qp *qp)
{
	struct srdma_resp *resp = &qp->resp;

	if (resp->nres && srdma_res_reusable(&resp->res[resp->res_next]))
		return true;
	srdma_qp_dbg(qp, "more than %u READ/atomics in flight\n", resp->nres);
	return false;
}

/* The oldest responder resource, for a new READ or atomic: there is room. */
static struct srdma_rd_res *srdma_resp_new_res(struct srdma_qp *qp)
{
	struct srdma_resp *resp = &qp->resp;
	struct srdma_rd_res *res = &resp->res[resp->res_next];
	u32 slot = resp->res_next;

	resp->res_next = (slot + 1) % resp->nres;
	/* The oldest is reused: the scan starts at the new oldest. */
	if (resp->res_busy && resp->res_first == slot)
		resp->res_first = resp->res_next;
	memset(res, 0, sizeof(*res));
	srdma_resp_res_busy(resp, slot);
	return res;
}

static void srdma_resp_read(struct srdma_qp *qp, const struct srdma_pkt *pkt)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	struct srdma_rd_res *res;
	u32 npkts;

	if (!srdma_resp_res_room(qp)) {
		srdma_resp_fail(qp, SRDMA_NAK_INVALID_REQ, pkt->psn);
		return;
	}
	if (!srdma_resp_rkey_ok(qp, pkt->reth.rkey, pkt->reth.va,
				pkt->reth.len, IB_ACCESS_REMOTE_READ)) {
		srdma_resp_fail(qp, SRDMA_NAK_REMOTE_ACCESS, pkt->psn);
		return;
	}
	res = srdma_resp_new_res(qp);
	npkts = srdma_npkts(pkt->reth.len, pmtu);
	res->type = SRDMA_RES_READ;
	res->first_psn = pkt->psn;
	res->next_psn = pkt->psn;
	res->last_psn = srdma_psn_add(pkt->psn, npkts - 1);
	res->va = pkt->reth.va;
	res->req_va = pkt->reth.va;
	res->rkey = pkt->reth.rkey;
	res->resid = pkt->reth.len;
	res->req_len = pkt->reth.len;
	res->start_psn = pkt->psn;
	qp->resp.msn = srdma_psn_add(qp->resp.msn, 1);
	qp->resp.epsn = srdma_psn_add(pkt->psn, npkts);
}

static void srdma_resp_atomic(struct srdma_qp *qp, const struct srdma_pkt *pkt)
{
	struct srdma_rd_res *res;
	struct srdma_mr *mr;
	u64 mva;

	/* 9.9.2, C9-86: misaligned, or beyond the resources: invalid. */
	if ((pkt->atmeth.va & (sizeof(u64) - 1)) || !srdma_resp_res_room(qp)) {
		srdma_resp_fail(qp, SRDMA_NAK_INVALID_REQ, pkt->psn);
		return;
	}
	mr = srdma_resp_rkey_get(qp, pkt->atmeth.rkey, pkt->atmeth.va,
				 sizeof(u64), IB_ACCESS_REMOTE_ATOMIC, &mva);
	if (IS_ERR(mr)) {
		srdma_resp_fail(qp, SRDMA_NAK_REMOTE_ACCESS, pkt->psn);
		return;
	}
	/*
	 * A zero-based window may map an aligned address to a misaligned
	 * one of its MR, which is misaligned in memory as well (an MR keeps
	 * the offset in the page of the memory it maps): as misaligned.
	 */
	if (!IS_ALIGNED(mva, sizeof(u64))) {
		srdma_mr_put(mr);
		srdma_resp_fail(qp, SRDMA_NAK_INVALID_REQ, pkt->psn);
		return;
	}
	res = srdma_resp_new_res(qp);
	res->type = SRDMA_RES_ATOMIC;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->va = pkt->atmeth.va;
	res->rkey = pkt->atmeth.rkey;
	res->orig = srdma_mr_atomic(mr, mva,
				    pkt->opcode == SRDMA_OP_RC_CMP_SWAP,
				    pkt->atmeth.compare, pkt->atmeth.swap_add);
	srdma_mr_put(mr);
	res->next_psn = pkt->psn;	/* its ACK is still to be sent */
	res->resid = 1;
	qp->resp.msn = srdma_psn_add(qp->resp.msn, 1);
	qp->resp.epsn = srdma_psn_add(pkt->psn, 1);
}

/*
 * The PSN of the last response to a resource's original request: its
 * last_psn until a duplicate asked for less.
 */
static u32 srdma_res_req_last(const struct srdma_qp *qp,
			      const struct srdma_rd_res *res)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);

	return srdma_psn_add(res->first_psn,
			     srdma_npkts(res->req_len, pmtu) - 1);
}

/* Find the resource a duplicate READ or atomic names (9.7.5.1.4). */
static struct srdma_rd_res *srdma_resp_find_res(struct srdma_qp *qp, u32 psn)
{
	struct srdma_rd_res *res;
	u32 i;

	for (i = 0; i < qp->resp.nres; i++) {
		res = &qp->resp.res[i];
		if (res->type &&
		    srdma_psn_diff(psn, res->first_psn) >= 0 &&
		    srdma_psn_diff(psn, srdma_res_req_last(qp, res)) <= 0)
			return res;
	}
	return NULL;
}

static void srdma_resp_duplicate(struct srdma_qp *qp,
				 const struct srdma_pkt *pkt)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	struct srdma_rd_res *res;
	u32 last;

	switch (srdma_pkt_op(pkt)) {
	case SRDMA_OPF_READ:
		/*
		 * Re-executed from the PSN it names, with its own RETH. It
		 * is valid (9.7.5.1.4) when its responses end where the
		 * original's did at the latest (the PSNs after those belong
		 * to the requests that followed) and it asks for a part of
		 * the original's data; else it is dropped.
		 */
		res = srdma_resp_find_res(qp, pkt->psn);
		last = srdma_psn_add(pkt->psn,
				     srdma_npkts(pkt->reth.len, pmtu) - 1);
		if (!res || res->type != SRDMA_RES_READ ||
		    !srdma_resp_req_valid(qp, pkt) ||
		    srdma_psn_after(last, srdma_res_req_last(qp, res)) ||
		    !srdma_range_within(pkt->reth.va, pkt->reth.len,
					res->req_va, res->req_len) ||
		    !srdma_resp_rkey_ok(qp, pkt->reth.rkey, pkt->reth.va,
					pkt->reth.len, IB_ACCESS_REMOTE_READ))
			return;
		res->replay = true;
		res->va = pkt->reth.va;
		res->rkey = pkt->reth.rkey;
		res->resid = pkt->reth.len;
		res->next_psn = pkt->psn;
		res->start_psn = pkt->psn;
		res->last_psn = last;
		srdma_resp_res_busy(&qp->resp, res - qp->resp.res);
		break;
	case SRDMA_OPF_ATOMIC:
		/* Answered from the saved result, never executed twice. */
		res = srdma_resp_find_res(qp, pkt->psn);
		if (res && res->type == SRDMA_RES_ATOMIC) {
			res->replay = true;
			res->resid = 1;
			srdma_resp_res_busy(&qp->resp, res - qp->resp.res);
		}
		break;
	default:
		/*
		 * SEND/WRITE: not executed again; every duplicate packet is
		 * answered (C9-102, C9-105) by an ACK of everything received
		 * so far, which pending ACKs coalesce into one.
		 */
		srdma_resp_ack(qp, SRDMA_ACK_SYN,
			       srdma_psn_add(qp->resp.epsn, -1));
		break;
	}
}

/**
 * srdma_resp_rcv() - Handle a request packet
 * @qp: the QP
 * @pkt: the parsed packet
 * @skb: the packet (skb->data at the BTH)
 *
 * Context: softirq, qp->resp_lock held.
 */
void srdma_resp_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		    const struct sk_buff *skb)
{
	struct srdma_resp *resp = &qp->resp;
	enum srdma_psn_class class;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->state < IB_QPS_RTR || qp->state > IB_QPS_SQE ||
	    resp->fatal || resp->ending)
		return;

	class = srdma_psn_classify(pkt->psn, resp->epsn);
	if (class == SRDMA_PSN_AHEAD) {
		/* 9.7.5.1.1: a gap; NAK once until the sequence resumes. */
		if (!resp->nak_psn_sent) {
			srdma_counter_inc(to_sdev(qp->ibqp.device),
					  SRDMA_CNT_TX_SEQ_NAKS);
			srdma_resp_ack(qp,
				       SRDMA_NAK_SYN(SRDMA_NAK_PSN_SEQ),
				       resp->epsn);
			resp->nak_psn_sent = true;
		}
		return;
	}
	if (class == SRDMA_PSN_DUPLICATE) {
		srdma_counter_inc(to_sdev(qp->ibqp.device),
				  SRDMA_CNT_RX_DUPLICATES);
		/* Not a request this QP could have executed: dropped. */
		if (!pkt->invalid_req)
			srdma_resp_duplicate(qp, pkt);
		return;
	}
	resp->nak_psn_sent = false;

	/* C9-84, C9-85, C9-92 (pkt->invalid_req), C9-83, C9-92, C9-94 */
	if (pkt->invalid_req ||
	    !srdma_resp_seq_ok(qp->resp.cur_op, pkt->info->flags) ||
	    !srdma_resp_req_valid(qp, pkt)) {
		srdma_counter_inc(to_sdev(qp->ibqp.device),
				  SRDMA_CNT_RX_INVALID_REQ);
		srdma_resp_fail(qp, SRDMA_NAK_INVALID_REQ, pkt->psn);
		return;
	}
	switch (srdma_pkt_op(pkt)) {
	case SRDMA_OPF_SEND:
		srdma_resp_send(qp, pkt, skb);
		break;
	case SRDMA_OPF_WRITE:
		srdma_resp_write(qp, pkt, skb);
		break;
	case SRDMA_OPF_READ:
		srdma_resp_read(qp, pkt);
		break;
	case SRDMA_OPF_ATOMIC:
		srdma_resp_atomic(qp, pkt);
		break;
	default:
		srdma_resp_fail(qp, SRDMA_NAK_INVALID_REQ, pkt->psn);
		break;
	}
	/*
	 * A sequence or RNR NAK still waiting (behind READ responses) whose
	 * packet has now executed, a SEND or WRITE without AckReq: it would
	 * send the requester back over it. An ACK of it says more. (Past a
	 * READ or atomic, their responses move the requester past the NAK,
	 * which it then drops.)
	 */
	if ((srdma_pkt_op(pkt) == SRDMA_OPF_SEND ||
	     srdma_pkt_op(pkt) == SRDMA_OPF_WRITE) &&
	    resp->ack_pending && !resp->fatal &&
	    srdma_syn_type(resp->ack_syndrome) != SRDMA_SYN_ACK &&
	    srdma_psn_after(resp->epsn, resp->ack_psn))
		srdma_resp_ack(qp, SRDMA_ACK_SYN, srdma_psn_add(resp->epsn, -1));
}

/*
 * UC: forget the message in progress. A receive WQE it had taken stays
 * with the QP for the next message, from its first byte.
 */
static void srdma_uc_drop(struct srdma_qp *qp)
{
	qp->resp.cur_op = SRDMA_RESP_NONE;
	qp->resp.recv_off = 0;
}

/**
 * srdma_uc_rcv() - Process a UC request packet (IBTA 9.8.2)
 * @qp: the UC QP
 * @pkt: the packet, parsed and validated
 * @skb: the packet (skb->data at the BTH); not consumed
 *
 * Every PSN is acceptable: a packet other than the expected one means
 * packets were lost, and the message in progress is dropped. A packet
 * that cannot continue or start a message is dropped as well.
 *
 * Context: softirq, qp->resp_lock held.
 */
void srdma_uc_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		  const struct sk_buff *skb)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	struct srdma_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->state < IB_QPS_RTR || qp->state > IB_QPS_SQE ||
	    resp->ending) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_QP_STATE);
		return;
	}
	if (pkt->psn != resp->epsn && resp->cur_op != SRDMA_RESP_NONE) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_OUT_OF_WINDOW);
		srdma_uc_drop(qp);
	}
	/* The placement code moves epsn on by one where it succeeds. */
	resp->epsn = pkt->psn;
	if (!srdma_resp_seq_ok(resp->cur_op, pkt->info->flags)) {
		/*
		 * C9-188, C9-189: the message in progress is dropped; a
		 * FIRST or ONLY packet starts a new one, others are dropped.
		 * Mostly the rest of a message a loss cut: counted with it.
		 */
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_OUT_OF_WINDOW);
		srdma_uc_drop(qp);
		if (!(pkt->info->flags & SRDMA_OPF_FIRST))
			goto out;
	}
	if (!srdma_resp_req_valid(qp, pkt)) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_INVALID_REQ);
		srdma_uc_drop(qp);
	} else if (srdma_pkt_op(pkt) == SRDMA_OPF_SEND) {
		srdma_resp_send(qp, pkt, skb);
	} else if (srdma_pkt_op(pkt) == SRDMA_OPF_WRITE) {
		srdma_resp_write(qp, pkt, skb);
	}
out:
	resp->epsn = srdma_psn_add(pkt->psn, 1);
}
