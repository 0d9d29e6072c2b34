// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC completer (IBTA 9.7.5.2, requester side of the reliable service):
 * consumes ACKs, NAKs, READ responses and atomic ACKs, completes SQ WQEs
 * in order, and decides when the requester goes back to the oldest
 * unacknowledged PSN: a PSN sequence error NAK, an RNR NAK once its timer
 * expired, an implied NAK (9.7.5.2.3: an ACK past an unanswered READ or
 * atomic), or the local ACK timeout (9.7.6.1.1).
 *
 * Timers (one each per QP; both are event hooks of this file):
 *   retrans  armed while request packets are unacknowledged; re-armed on
 *            progress; expires first for early retransmissions (go-back-N
 *            without a retry counted), then for the local ACK timeout,
 *            which retries or ends with RETRY_EXC_ERR; left pending when
 *            the last packet is acknowledged, so that its expiry then
 *            finds nothing outstanding and does nothing
 *   rnr      armed by an RNR NAK for the time it carries, and for a tick
 *            by the requester when a packet could not be allocated
 *            (srdma_req_tx()); on expiry the requester resumes
 *
 * Every function here runs with qp->lock held unless it says otherwise.
 */

#include "srdma.h"
#include "srdma_hdr.h"

static u8 srdma_wr_to_wc(u8 wr_op)
{
	switch (wr_op) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case SRDMA_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/**
 * srdma_comp_complete() - Complete the oldest SQ WQE
 * @qp: the QP
 * @status: its completion status
 *
 * Generates a CQE if the WQE is signaled, the QP signals all, or the
 * status is an error (IBTA 10.7.2.1), and hands the ring slot back.
 *
 * Context: qp->lock held.
 */
void srdma_comp_complete(struct srdma_qp *qp, enum ib_wc_status status)
{
	struct srdma_ring *r = &qp->sq.ring;
	struct srdma_swqe *sw = srdma_swqe_at(qp, r->own);
	bool signaled = status != IB_WC_SUCCESS || qp->sq_sig_all ||
			(sw->wqe.flags & SRDMA_WQE_SIGNALED);
	struct srdma_cqe cqe = {
		.wr_id = sw->wqe.wr_id,
		.status = status,
		.opcode = srdma_wr_to_wc(sw->wqe.opcode),
		.qp_num = qp->ibqp.qp_num,
		.byte_len = sw->length,
	};

	lockdep_assert_held(&qp->lock);
	/* A resend of it failed, but its first sending was answered. */
	if (qp->req.err_wait && qp->req.err_idx == r->own)
		qp->req.err_wait = false;
	if (sw->started && (sw->wqe.opcode == IB_UVERBS_WR_RDMA_READ ||
			    sw->wqe.opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
			    sw->wqe.opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD) &&
	    qp->req.rd_atomic)
		qp->req.rd_atomic--;
	r->own++;
	/*
	 * Hand the slot back before the completion is visible: a process
	 * that sees the CQE may post into the slot at once (release: the
	 * slot is no longer read; the CQE is built from the kernel's copy).
	 */
	smp_store_release(&r->ctrl->cons, r->own);
	/* The QP ends in the requester's next pass (srdma_req_fail_due()). */
	if (signaled && !srdma_cq_post(to_scq(qp->ibqp.send_cq), &cqe, false))
		qp->req.cq_full = true;
}

static bool srdma_swqe_read_atomic(const struct srdma_swqe *sw)
{
	return sw->wqe.opcode == IB_UVERBS_WR_RDMA_READ ||
	       sw->wqe.opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       sw->wqe.opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/**
 * srdma_comp_local() - Complete local operations at the head of the SQ
 * @qp: the QP
 *
 * A LOCAL_INV, REG_MR or bind takes no PSN: it completes as soon as every
 * WQE before it has (completions stay in order, IBTA 10.8.3), once it ran.
 * After a go-back-N one that ran may lie beyond req.cur, where the
 * requester resends what comes before it: it completes all the same.
 *
 * Context: qp->lock held.
 */
void srdma_comp_local(struct srdma_qp *qp)
{
	struct srdma_swqe *sw;

	while (qp->sq.ring.own != qp->req.fetch) {
		sw = srdma_swqe_at(qp, qp->sq.ring.own);
		if (!sw->started || sw->npkts)
			break;
		srdma_comp_complete(qp, IB_WC_SUCCESS);
	}
}

/*
 * Go back to una: a PSN sequence error NAK, an implied NAK or a local ACK
 * timeout (@timeout). Each takes one retry from the error retry budget,
 * which only an acknowledgment reloads (9.9.2.1.1); with none left, the
 * QP ends with RETRY_EXC_ERR. Return: false when it did.
 */
static bool srdma_comp_go_back(struct srdma_qp *qp, bool timeout)
{
	struct srdma_req *req = &qp->req;

	if (!req->retry) {
		srdma_qp_fatal(qp, qp->sq.ring.own, IB_WC_RETRY_EXC_ERR);
		return false;
	}
	req->retry--;
	req->need_retry = true;
	srdma_req_congestion(qp, timeout);
	/* The resent packets get a whole timeout to be answered. */
	srdma_comp_arm_timer(qp);
	return true;
}

/*
 * A response arrived past a missing one: ask again from una, once. The
 * responses already in flight behind the gap would each ask again and
 * restart the READ over and over; they are ignored until una moves (or the
 * timer decides the new request was lost too).
 */
static void srdma_comp_gap(struct srdma_qp *qp)
{
	struct srdma_req *req = &qp->req;

	if (req->gap_pending && req->gap_una == req->una)
		return;
	req->gap_pending = true;
	req->gap_una = req->una;
	srdma_comp_go_back(qp, false);
}

/**
 * srdma_rtt_update() - Take a round-trip sample into the estimate
 * @srtt_us: the smoothed round-trip time, 0 before the first sample
 * @rttvar_us: its mean deviation
 * @m_us: the sample (0 counts as 1)
 *
 * RFC 6298 2.2 and 2.3, with alpha 1/8 and beta 1/4.
 */
void srdma_rtt_update(u32 *srtt_us, u32 *rttvar_us, u32 m_us)
{
	u32 srtt = *srtt_us, dev;

	m_us = max(m_us, 1U);
	if (!srtt) {
		*srtt_us = m_us;
		*rttvar_us = m_us / 2;
		return;
	}
	dev = srtt > m_us ? srtt - m_us : m_us - srtt;
	*rttvar_us = *rttvar_us - *rttvar_us / 4 + dev / 4;
	*srtt_us = srtt - srtt / 8 + m_us / 8;
}

/**
 * srdma_rtt_bound_us() - The longest round trip the estimate expects
 * @srtt_us: the smoothed round-trip time
 * @rttvar_us: its mean deviation
 *
 * RFC 6298 2.3's SRTT + 4 * RTTVAR, without its one-second floor.
 *
 * Return: microseconds, saturated at U32_MAX.
 */
u32 srdma_rtt_bound_us(u32 srtt_us, u32 rttvar_us)
{
	u64 b = (u64)srtt_us + 4ULL * rttvar_us;

	return min_t(u64, b, U32_MAX);
}

static u32 srdma_comp_rtt_us(u64 since_ns)
{
	return min_t(u64, div_u64(ktime_get_ns() - since_ns, NSEC_PER_USEC),
		     U32_MAX);
}

/**
 * srdma_rtt_answer() - Is a response the answer to the packet timed?
 * @req: the requester, measuring a round trip or not
 * @pkt: a response packet, parsed
 *
 * Its own answer: an ACK, the first READ response or the atomic ACK of
 * the PSN timed (srdma_req_time_rtt()). Taken before the packet moves una.
 * A NAK or a response naming a later PSN may move una past the packet
 * just as well, when the packet's own answer was lost, and would make the
 * round trip look as long as the loss made it.
 *
 * Return: true when @pkt is that answer.
 */
bool srdma_rtt_answer(const struct srdma_req *req, const struct srdma_pkt *pkt)
{
	if (!req->rtt_timing ||
	    pkt->psn != srdma_psn_add(req->rtt_end, -1))
		return false;
	if (pkt->opcode == SRDMA_OP_RC_ACK)
		return srdma_syn_type(pkt->aeth.syndrome) == SRDMA_SYN_ACK;
	return pkt->opcode == SRDMA_OP_RC_ATOMIC_ACK ||
	       pkt->opcode == SRDMA_OP_RC_READ_RESP_FIRST ||
	       pkt->opcode == SRDMA_OP_RC_READ_RESP_ONLY;
}

/*
 * One round trip at a time is measured, of a new packet that asks for an
 * ACK (srdma_req_time_rtt()), and only from the packet's own answer
 * (req.rtt_answer, srdma_rtt_answer()) moving una past it: an
 * answer that acknowledges more may come late because the packet's own
 * ACK was lost, and would make the round trip look longer than it is
 * (under 10% loss that pushed the early retransmission out to where a
 * lost resend cost a timeout). Any other way una gets past the packet
 * ends the measurement without a sample.
 *
 * A go-back-N since leaves it open which sending the ACK answers. Karn's
 * rule (no sample) would leave a round trip longer than the early
 * retransmission's delay unmeasured for ever, each go-back-N being early.
 * The sample is taken from the last go-back-N or sending of the packet,
 * which is never too long. If the responder then acknowledges the PSN
 * once more, it got a duplicate: the go-back-N was not needed, and the
 * ACK taken may have answered the first sending: the round trip from the
 * first go-back-N is taken too (srdma_comp_rtt_dup()). Not from the first
 * sending: when the packet's own ACK was lost, the duplicates the
 * go-back-N sent are what the ACKs answer, and counting from the first
 * sending would add the wait for the go-back-N.
 */
static void srdma_comp_rtt(struct srdma_qp *qp)
{
	struct srdma_req *req = &qp->req;

	if (!req->rtt_timing || srdma_psn_diff(req->una, req->rtt_end) < 0)
		return;
	req->rtt_timing = false;
	/* The duplicate of the measurement before would have come by now. */
	req->rtt_dup_wait = false;
	if (!req->rtt_answer)
		return;
	if (req->rtt_resent) {
		req->rtt_dup_wait = true;
		req->rtt_dup_psn = srdma_psn_add(req->rtt_end, -1);
		req->rtt_dup_us = srdma_comp_rtt_us(req->rtt_resend1_ns);
		srdma_rtt_update(&req->srtt_us, &req->rttvar_us,
				 srdma_comp_rtt_us(req->rtt_last_ns));
		return;
	}
	srdma_rtt_update(&req->srtt_us, &req->rttvar_us,
			 srdma_comp_rtt_us(req->rtt_first_ns));
}

/*
 * A READ response before una: a READ asked for again by a go-back-N that
 * was not needed is streamed once more, and the answer to the packet
 * timed waits behind it. No sample from this measurement.
 */
static void srdma_comp_rtt_stale(struct srdma_req *req,
				 const struct srdma_pkt *pkt)
{
	if (req->rtt_timing && srdma_pkt_is(pkt, SRDMA_OPF_READ_RESP) &&
	    srdma_psn_before(pkt->psn, req->una))
		req->rtt_timing = false;
}

/* An ACK of @psn: see srdma_comp_rtt(). */
static void srdma_comp_rtt_dup(struct srdma_qp *qp, u32 psn)
{
	struct srdma_req *req = &qp->req;

	if (!req->rtt_dup_wait || psn != req->rtt_dup_psn ||
	    !srdma_psn_before(psn, req->una))
		return;
	req->rtt_dup_wait = false;
	srdma_rtt_update(&req->srtt_us, &req->rttvar_us, req->rtt_dup_us);
}

/* The early retransmission's delay for the QP's timeout and round trip. */
static unsigned long srdma_comp_early_delay(struct srdma_qp *qp,
					    unsigned long rto)
{
	return srdma_early_rtx_delay(rto,
				     srdma_rtt_bound_us(qp->req.srtt_us,
							qp->req.rttvar_us));
}

/*
 * Progress (una moved on): restart the retry budgets and the timer
 * (9.7.6.1.1). Both counters limit the retries of one request (C9-132,
 * C9-142) and are reloaded when a packet is acknowledged (9.9.2.1.1), and
 * only then: RNR NAKs met by earlier messages do not count against a later
 * one, and a peer that answers without ever acknowledging cannot keep the
 * requester retrying forever.
 */
static void srdma_comp_progress(struct srdma_qp *qp)
{
	srdma_comp_rtt(qp);
	qp->req.retry = qp->attr.retry_cnt;
	qp->req.rnr_retry = qp->attr.rnr_retry;
	qp->req.rto_backoff = 0;
	if (qp->req.gap_una != qp->req.una)
		qp->req.gap_pending = false;
	/*
	 * A response to a packet sent before a go-back-N: what it covers
	 * need not be sent again; restart from the new una.
	 */
	if (srdma_psn_diff(qp->req.una, qp->req.psn) > 0)
		qp->req.need_retry = true;
	if (qp->req.una == qp->req.max_psn) {
		/*
		 * Nothing is outstanding. The timer is left to expire, which
		 * then finds nothing to do (srdma_comp_timeout()): the next
		 * message re-arms it with mod_timer(), which for a pending
		 * timer and an unchanged expiry (the next message within the
		 * same jiffy) costs nothing, where a delete and a new arming
		 * per message each took the timer base's lock.
		 */
		qp->req.rto_armed = false;
		qp->req.rto_early = false;
	} else {
		srdma_comp_arm_timer(qp);
	}
}

/**
 * srdma_comp_arm_timer() - (Re)start the local ACK timeout
 * @qp: the QP
 *
 * IBTA 9.7.6.1.1: 4.096 us * 2^timeout, backed off after timeouts with
 * no progress (srdma_rto_jiffies()); 0 means no timeout. The timer runs
 * first to an early retransmission, if the timeout leaves room for one
 * (srdma_early_rtx_delay(), of the timeout as backed off: a responder
 * that let one expire is sent less often), then on to the timeout.
 *
 * Context: qp->lock held.
 */
void srdma_comp_arm_timer(struct srdma_qp *qp)
{
	unsigned long rto, early;

	if (!qp->attr.timeout || !srdma_qp_sends(qp->state) || qp->dead)
		return;
	rto = srdma_rto_jiffies(qp->attr.timeout, qp->req.rto_backoff);
	early = srdma_comp_early_delay(qp, rto);
	qp->req.rto_expires = jiffies + rto;
	qp->req.rto_early = early != 0;
	mod_timer(&qp->retrans_timer, jiffies + (early ? early : rto));
	qp->req.rto_armed = true;
}

/*
 * Everything up to and including @psn is acknowledged (9.7.5.1.2: ACKs are
 * cumulative). Complete the SEND and WRITE WQEs it covers; an ACK past an
 * unanswered READ or atomic is an implied NAK (9.7.5.2.3).
 */
static void srdma_comp_ack_upto(struct srdma_qp *qp, u32 psn)
{
	struct srdma_req *req = &qp->req;
	bool implied = false;
	struct srdma_swqe *sw;
	u32 last;

	/* Stale (older than una) or acknowledging what was never sent. */
	if (srdma_psn_diff(psn, req->una) < 0 ||
	    srdma_psn_diff(psn, req->max_psn) >= 0)
		return;

	while (qp->sq.ring.own != req->fetch) {
		sw = srdma_swqe_at(qp, qp->sq.ring.own);
		if (!sw->started)
			break;
		if (!sw->npkts) {
			/* A local operation: everything before it is done. */
			srdma_comp_complete(qp, IB_WC_SUCCESS);
			continue;
		}
		last = srdma_psn_add(sw->first_psn, sw->npkts - 1);
		if (srdma_swqe_read_atomic(sw)) {
			if (srdma_psn_diff(psn, sw->first_psn) >= 0) {
				implied = true;
				psn = srdma_psn_add(sw->first_psn, -1);
			}
			break;
		}
		if (srdma_psn_diff(last, psn) > 0)
			break;
		srdma_comp_complete(qp, IB_WC_SUCCESS);
	}
	if (srdma_psn_diff(srdma_psn_add(psn, 1), req->una) > 0) {
		srdma_req_acked(qp, srdma_psn_diff(srdma_psn_add(psn, 1),
						   req->una));
		req->una = srdma_psn_add(psn, 1);
		srdma_comp_progress(qp);
	}
	/*
	 * After the reload: the retry is the READ's or atomic's own. Once
	 * per una: the duplicates that going back makes the responder
	 * acknowledge (C9-105) are implied NAKs of the same loss.
	 */
	if (implied)
		srdma_comp_gap(qp);
}

/*
 * Whether a READ response or atomic ACK is the one the requester waits for
 * (PSN una). IBTA 9.7.5.1.2: the first packet of a READ response, and an
 * atomic ACK, also acknowledge every request before their PSN, so one
 * further on completes the SENDs and WRITEs before it (a responder need
 * not ACK an unsignaled SEND before answering the READ behind it). When
 * una still differs, a response was lost, or a READ or atomic before it is
 * unanswered (an implied NAK, 9.7.5.2.3): go back, once. A response to
 * nothing sent is a ghost, dropped (C9-136).
 */
static bool srdma_comp_resp_at_una(struct srdma_qp *qp,
				   const struct srdma_pkt *pkt, bool first)
{
	struct srdma_req *req = &qp->req;

	/*
	 * Before anything else: with nothing outstanding, una is the PSN
	 * the next request will take, which a WQE held back may already
	 * have; an answer there is a ghost too.
	 */
	if (srdma_psn_diff(pkt->psn, req->una) < 0 ||
	    srdma_psn_diff(pkt->psn, req->max_psn) >= 0)
		return false;
	if (pkt->psn == req->una)
		return true;
	if (first) {
		srdma_comp_ack_upto(qp, srdma_psn_add(pkt->psn, -1));
		if (pkt->psn == req->una)
			return true;
	}
	/* Once per una, if srdma_comp_ack_upto() did not go back already. */
	srdma_comp_gap(qp);
	return false;
}

/* Place @len bytes of a response at offset @off of @sw's local SGEs. */
static bool srdma_comp_place(struct srdma_qp *qp, struct srdma_swqe *sw,
			     u32 off, u32 len, void *buf,
			     const struct sk_buff *skb, int skb_off)
{
	if (off > sw->length || len > sw->length - off)
		return false;
	return srdma_sgl_copy(to_sdev(qp->ibqp.device), qp->ibqp.pd,
			      (struct srdma_sge *)sw->body,
			      sw->wqe.num_sge, off, len,
			      skb ? SRDMA_SCATTER_SKB : SRDMA_SCATTER, buf,
			      skb, skb_off);
}

static void srdma_comp_read_resp(struct srdma_qp *qp,
				 const struct srdma_pkt *pkt,
				 const struct sk_buff *skb)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	struct srdma_req *req = &qp->req;
	struct srdma_swqe *sw;
	u32 off, idx;
	bool last;

	/* Responses are in PSN order: anything else is lost or stale. */
	if (!srdma_comp_resp_at_una(qp, pkt,
				    srdma_pkt_is(pkt, SRDMA_OPF_FIRST)) ||
	    qp->sq.ring.own == req->fetch)
		return;
	sw = srdma_swqe_at(qp, qp->sq.ring.own);
	if (!sw->started || !sw->npkts)
		return;
	/*
	 * The response is at una, sent and unanswered: a WQE that is not
	 * a READ, or an opcode out of place in the READ's responses, is
	 * an unexpected opcode (9.9.2.3, Table 59: a bad response).
	 */
	idx = srdma_psn_diff(pkt->psn, sw->first_psn);
	if (sw->wqe.opcode != IB_UVERBS_WR_RDMA_READ ||
	    !srdma_read_resp_pos_ok(pkt->info->flags, idx, sw->npkts,
				    sw->split)) {
		srdma_qp_fatal(qp, qp->sq.ring.own, IB_WC_BAD_RESP_ERR);
		return;
	}

	off = idx * pmtu;
	last = idx == sw->npkts - 1;
	/*
	 * IBTA 9.7.5.1.9: every response but the last carries a full PMTU.
	 * Too much or too little payload is a local length error (9.9.2,
	 * Table 59); one the local buffers cannot take, a protection error.
	 */
	if ((!last && pkt->paylen != pmtu) ||
	    (last && off + pkt->paylen != sw->length)) {
		srdma_qp_fatal(qp, qp->sq.ring.own, IB_WC_LOC_LEN_ERR);
		return;
	}
	if (!srdma_comp_place(qp, sw, off, pkt->paylen, NULL, skb,
			      pkt->hdr_len)) {
		srdma_qp_fatal(qp, qp->sq.ring.own, IB_WC_LOC_PROT_ERR);
		return;
	}
	req->una = srdma_psn_add(pkt->psn, 1);
	srdma_req_acked(qp, 1);
	if (last) {
		srdma_comp_complete(qp, IB_WC_SUCCESS);
		srdma_comp_local(qp);
	}
	srdma_comp_progress(qp);
}

static void srdma_comp_atomic_ack(struct srdma_qp *qp,
				  const struct srdma_pkt *pkt)
{
	struct srdma_req *req = &qp->req;
	struct srdma_swqe *sw;
	u64 orig = pkt->atmack_orig;

	if (!srdma_comp_resp_at_una(qp, pkt, true) ||
	    qp->sq.ring.own == req->fetch)
		return;
	sw = srdma_swqe_at(qp, qp->sq.ring.own);
	if (!sw->started || !sw->npkts)
		return;
	/* At una, answering no atomic: an unexpected opcode (Table 59). */
	if (sw->first_psn != pkt->psn ||
	    (sw->wqe.opcode != IB_UVERBS_WR_ATOMIC_CMP_AND_SWP &&
	     sw->wqe.opcode != IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD)) {
		srdma_qp_fatal(qp, qp->sq.ring.own, IB_WC_BAD_RESP_ERR);
		return;
	}
	/* The original value lands in host order, as rdma_rxe writes it. */
	if (!srdma_comp_place(qp, sw, 0, sizeof(orig), &orig, NULL, 0)) {
		srdma_qp_fatal(qp, qp->sq.ring.own, IB_WC_LOC_PROT_ERR);
		return;
	}
	req->una = srdma_psn_add(pkt->psn, 1);
	srdma_comp_complete(qp, IB_WC_SUCCESS);
	srdma_comp_local(qp);
	srdma_comp_progress(qp);
}

/*
 * Whether a NAK or RNR NAK names a PSN sent and not yet acknowledged. One
 * of a PSN never sent, una included when nothing is outstanding, is a
 * ghost, dropped whole (C9-136): it acknowledges nothing either, and a
 * peer's stray NAK must not end an idle QP.
 */
static bool srdma_comp_nak_outstanding(const struct srdma_req *req, u32 psn)
{
	return srdma_psn_diff(psn, req->una) >= 0 &&
	       srdma_psn_diff(psn, req->max_psn) < 0;
}

static void srdma_comp_aeth(struct srdma_qp *qp, const struct srdma_pkt *pkt)
{
	struct srdma_req *req = &qp->req;
	u8 syn = pkt->aeth.syndrome;
	u64 rnr_ns;

	switch (srdma_syn_type(syn)) {
	case SRDMA_SYN_ACK:
		srdma_comp_rtt_dup(qp, pkt->psn);
		srdma_comp_ack_upto(qp, pkt->psn);
		break;
	case SRDMA_SYN_RNR:
		/* 9.7.5.2.8: the NAKed PSN and later are retried later. */
		srdma_counter_inc(to_sdev(qp->ibqp.device), SRDMA_CNT_RX_RNR_NAKS);
		if (!srdma_comp_nak_outstanding(req, pkt->psn))
			break;
		srdma_comp_ack_upto(qp, srdma_psn_add(pkt->psn, -1));
		if (qp->state == IB_QPS_ERR)
			break;
		/*
		 * una falls short of the NAKed PSN when a READ or atomic
		 * before it is unanswered: the implied NAK went back to
		 * it. Its request goes again with the NAKed one, and no
		 * sooner than the NAK allows (C9-130). The WQE at una is
		 * not the NAKed one, so it cannot end in RNR retry
		 * exceeded: the NAK that the retry draws, if any, will
		 * name it.
		 */
		if (!req->rnr_retry) {
			if (pkt->psn == req->una) {
				srdma_qp_fatal(qp, qp->sq.ring.own,
					       IB_WC_RNR_RETRY_EXC_ERR);
				break;
			}
		} else if (req->rnr_retry != 7) {
			req->rnr_retry--;
		}
		/* Answered: no local ACK timeout while the responder waits. */
		srdma_comp_arm_timer(qp);
		req->rnr_wait = true;
		req->need_retry = true;
		rnr_ns = (u64)srdma_rnr_timer_usecs(srdma_syn_value(syn)) *
			 NSEC_PER_USEC;
		mod_timer(&qp->rnr_timer, jiffies + srdma_timer_jiffies(rnr_ns));
		break;
	case SRDMA_SYN_NAK:
		if (!srdma_comp_nak_outstanding(req, pkt->psn))
			break;
		srdma_comp_ack_upto(qp, srdma_psn_add(pkt->psn, -1));
		if (pkt->psn != req->una)
			break;
		if (srdma_syn_value(syn) == SRDMA_NAK_PSN_SEQ) {
			/* 9.7.5.2.1: resend from the NAKed PSN. */
			srdma_counter_inc(to_sdev(qp->ibqp.device),
					  SRDMA_CNT_RX_SEQ_NAKS);
			/*
			 * Unless an RNR NAK of that PSN waits for its timer:
			 * the responder asks for the packet the RNR retry
			 * resends (rdma_rxe NAKs the packets that followed
			 * the one it RNR NAKed). Going back now would spend
			 * a retry on every RNR NAK, and end the QP in
			 * IB_WC_RETRY_EXC_ERR long before rnr_retry runs out.
			 * Once per una, as for a gap: a responder NAKs a
			 * sequence error once until the PSN it expects
			 * arrives (C9-114), so a second NAK of una is a
			 * duplicate and costs no second retry (C9-137).
			 */
			if (!req->rnr_wait)
				srdma_comp_gap(qp);
			break;
		}
		/* Remote access, invalid request, remote operational. */
		srdma_qp_fatal(qp, qp->sq.ring.own,
			       srdma_nak_wc_status(srdma_syn_value(syn)));
		break;
	default:
		break;
	}
}

/**
 * srdma_comp_rcv() - Handle a response packet
 * @qp: the QP
 * @pkt: the parsed packet
 * @skb: the packet (skb->data at the BTH)
 *
 * Context: softirq, qp->lock held.
 */
void srdma_comp_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		    const struct sk_buff *skb)
{
	lockdep_assert_held(&qp->lock);
	if (!srdma_qp_sends(qp->state))
		return;
	/* Before una moves: srdma_comp_progress() takes the sample. */
	qp->req.rtt_answer = srdma_rtt_answer(&qp->req, pkt);
	srdma_comp_rtt_stale(&qp->req, pkt);

	/*
	 * Credits first: duplicates and unsolicited ACKs carry them too
	 * (C9-144, 9.7.7.2.2), the initial one at the PSN before the first
	 * sent. A ghost, a response to a PSN never sent, is dropped whole
	 * (C9-136).
	 */
	if (srdma_opcode_has(pkt->info, SRDMA_HDR_AETH) &&
	    srdma_syn_type(pkt->aeth.syndrome) == SRDMA_SYN_ACK &&
	    srdma_psn_before(pkt->psn, qp->req.max_psn))
		srdma_req_credits(qp, pkt);

	switch (pkt->opcode) {
	case SRDMA_OP_RC_ACK:
		srdma_comp_aeth(qp, pkt);
		break;
	case SRDMA_OP_RC_ATOMIC_ACK:
		srdma_comp_atomic_ack(qp, pkt);
		break;
	case SRDMA_OP_RC_READ_RESP_FIRST:
	case SRDMA_OP_RC_READ_RESP_MIDDLE:
	case SRDMA_OP_RC_READ_RESP_LAST:
	case SRDMA_OP_RC_READ_RESP_ONLY:
		srdma_comp_read_resp(qp, pkt, skb);
		break;
	default:
		break;
	}
	qp->req.rtt_answer = false;
}

/*
 * The window has not moved for srdma_early_rtx_delay(): the responder may
 * be waiting, silent, for the packet at una (its NAK was lost, or the
 * first packet sent after it), a READ's restart or its first response may
 * be lost, or every ACK since. Go back to una now, with a smaller window,
 * without counting a retry: that is for the timeout. Again after the same
 * delay while that leaves half of it before the timeout.
 */
static bool srdma_comp_early_rtx(struct srdma_qp *qp)
{
	unsigned long rto = srdma_rto_jiffies(qp->attr.timeout,
					      qp->req.rto_backoff);
	unsigned long delay = srdma_comp_early_delay(qp, rto);
	unsigned long next = jiffies + delay;
	struct srdma_req *req = &qp->req;
	bool run = req->una != req->max_psn && !req->rnr_wait &&
		   !req->need_retry;

	if (!delay || time_after(next + delay / 2, req->rto_expires)) {
		req->rto_early = false;
		next = req->rto_expires;
	}
	mod_timer(&qp->retrans_timer, next);
	if (run) {
		srdma_counter_inc(to_sdev(qp->ibqp.device), SRDMA_CNT_EARLY_RTX);
		req->need_retry = true;
		srdma_req_congestion(qp, false);
	}
	return run;
}

/**
 * srdma_comp_timeout() - Early retransmission, or local ACK timeout: retry
 *	or give up (9.7.6.1.1)
 * @t: the QP's retransmit timer
 *
 * Context: timer (softirq).
 */
void srdma_comp_timeout(struct timer_list *t)
{
	struct srdma_qp *qp = from_timer(qp, t, retrans_timer);
	bool run = false;

	spin_lock_bh(&qp->lock);
	/*
	 * A timer pending again was re-armed (progress, a go-back, an RNR
	 * NAK) while this expiry waited for the lock: no timeout. Until
	 * then, rto_armed kept srdma_qp_pass() from arming it anew.
	 */
	if (timer_pending(&qp->retrans_timer)) {
		spin_unlock_bh(&qp->lock);
		return;
	}
	if (qp->req.rto_early && !qp->dead && srdma_qp_sends(qp->state)) {
		run = srdma_comp_early_rtx(qp);
		spin_unlock_bh(&qp->lock);
		if (run)
			srdma_qp_kick(qp);
		return;
	}
	qp->req.rto_early = false;
	qp->req.rto_armed = false;
	/*
	 * Destroy has begun: the QP stays as it is until it is gone. With
	 * nothing outstanding, this is the expiry of a timer that the last
	 * acknowledgment left running (srdma_comp_progress()).
	 */
	if (!qp->dead && srdma_qp_sends(qp->state) &&
	    qp->req.una != qp->req.max_psn && !qp->req.rnr_wait) {
		srdma_counter_inc(to_sdev(qp->ibqp.device),
				  SRDMA_CNT_ACK_TIMEOUTS);
		if (qp->req.rto_backoff < SRDMA_RTO_BACKOFF_MAX)
			qp->req.rto_backoff++;
		qp->req.gap_pending = false;
		run = srdma_comp_go_back(qp, true);
	}
	spin_unlock_bh(&qp->lock);
	srdma_qp_raise_event(qp);
	if (run)
		srdma_qp_kick(qp);
}

/**
 * srdma_comp_rnr_timeout() - RNR wait over: the requester resumes
 * @t: the QP's RNR timer
 *
 * Context: timer (softirq).
 */
void srdma_comp_rnr_timeout(struct timer_list *t)
{
	struct srdma_qp *qp = from_timer(qp, t, rnr_timer);
	bool waited;

	spin_lock_bh(&qp->lock);
	/*
	 * Pending again: an RNR NAK re-armed the timer while this expiry
	 * (of an earlier wait, or of a tick after a failed allocation)
	 * waited for the lock. The new wait is not over.
	 */
	if (timer_pending(&qp->rnr_timer)) {
		spin_unlock_bh(&qp->lock);
		return;
	}
	waited = qp->req.rnr_wait;
	qp->req.rnr_wait = false;
	/*
	 * The packet sent again gets the whole timeout, and its early
	 * retransmission counts from now: else one sent soon after could
	 * meet the responder still without a receive WQE, and a single RNR
	 * wait cost two RNR NAKs of rnr_retry.
	 */
	if (waited && qp->req.una != qp->req.max_psn)
		srdma_comp_arm_timer(qp);
	spin_unlock_bh(&qp->lock);
	srdma_qp_kick(qp);
}
