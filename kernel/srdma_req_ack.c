// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RC requester, acknowledgment requests: which request packets carry the
 * AckReq bit (srdma_req_want_ack()), the timing of a round trip from such
 * a packet to its ACK (srdma_comp_rtt() takes the sample), and the tail
 * probe, which asks for the ACK that no packet of an unacknowledged tail
 * asked for. srdma_req.c builds the packets.
 *
 * One timer per QP is an event hook of this file:
 *   probe    armed by a pass that leaves unacknowledged packets of which
 *            none asked for an ACK; on expiry the last one is sent again
 *            with AckReq (srdma_req_probe())
 *
 * Every function here runs with qp->lock held, but for the probe timer's
 * handler (srdma_req_probe_timeout()), which takes it.
 */

#include "srdma.h"
#include "srdma_hdr.h"

/*
 * May the requester leave the AckReq bit off the last packet of an
 * unsignaled message? Only when a missing ACK is found out by the tail
 * probe (srdma_req_probe()) well before the local ACK timeout would go
 * back N: otherwise every message asks for its ACK.
 */
static bool srdma_req_lazy_ack(const struct srdma_qp *qp)
{
	u64 timeout = srdma_ack_timeout_ns(qp->attr.timeout);

	return !timeout ||
	       timeout >= 4 * jiffies_to_nsecs(SRDMA_PROBE_JIFFIES);
}

/**
 * srdma_req_want_ack() - Should a request packet carry the AckReq bit?
 * @qp: the QP
 * @sw: the WQE the packet belongs to
 * @psn: the packet's PSN
 * @last: it is the last packet of the message
 *
 * IBTA C9-60 leaves it to the requester to make sure the responses it needs
 * come, and 9.7.5.1.6 lets a responder hold back its ACK until a packet
 * asks for one. A WQE nobody sees complete needs its ACK only to free its
 * slot, so the bit goes on:
 *
 * - a READ or atomic request (answered anyway; the bit is customary);
 * - the last packet of a signaled message, or of any message when the QP
 *   signals all WQEs or its ACK timeout is too short for lazy ACKs;
 * - the last packet of a message sent again (after a go-back-N);
 * - every SRDMA_ACK_REQ_EVERY packets, half the window or half the SQ,
 *   whichever comes first, so that neither fills with packets nobody will
 *   acknowledge; and on the packet that fills the window;
 * - a request sent without credit, whose ACK the next one waits for, and
 *   that packet sent again (C9-163; srdma_req_tx() forces the bit the
 *   first time).
 *
 * An unsignaled tail is acknowledged by the tail probe.
 *
 * Context: qp->lock held.
 * Return: true when the bit is set.
 */
bool srdma_req_want_ack(const struct srdma_qp *qp,
			const struct srdma_swqe *sw, u32 psn, bool last)
{
	const struct srdma_req *req = &qp->req;
	u32 every = min_t(u32, SRDMA_ACK_REQ_EVERY,
			  min(req->cwnd / 2, qp->sq.ring.num / 2));

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return false;
	if ((req->limited_wait && psn == req->limited_psn) ||
	    req->pkts_since_ack_req + 1 >= max_t(u32, every, 1) ||
	    srdma_psn_diff(psn, req->una) + 1 >= req->cwnd)
		return true;
	if (!last)
		return false;
	return srdma_wr_is_read_atomic(sw->wqe.opcode) ||
	       (sw->wqe.flags & SRDMA_WQE_SIGNALED) || qp->sq_sig_all ||
	       srdma_psn_diff(psn, req->max_psn) < 0 ||
	       !srdma_req_lazy_ack(qp);
}

/**
 * srdma_req_time_rtt() - A packet asks for an ACK: time its round trip
 * @qp: the QP
 * @psn: the packet's PSN
 *
 * Time the round trip of a new packet that asks for an ACK, unless one is
 * timed already or one began within this tick; note when the packet timed
 * goes again (srdma_comp_rtt()). The estimate only matters once round
 * trips near the early retransmission's delay (ticks): one sample a tick
 * spares a short round trip the two clock reads per message. Not while a
 * READ or atomic is outstanding: the responder answers in order, so the
 * packet's answer would wait behind the responses streamed for it. RC
 * only; a UC WQE is done once sent.
 *
 * Context: qp->lock held.
 */
void srdma_req_time_rtt(struct srdma_qp *qp, u32 psn)
{
	struct srdma_req *req = &qp->req;
	unsigned long now = jiffies;

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return;
	if (req->rtt_timing) {
		if (srdma_psn_add(psn, 1) == req->rtt_end)
			req->rtt_last_ns = ktime_get_ns();
		return;
	}
	if (srdma_psn_before(psn, req->max_psn) || req->rd_atomic ||
	    now == req->rtt_tick)
		return;
	req->rtt_tick = now;
	req->rtt_timing = true;
	req->rtt_resent = false;
	req->rtt_end = srdma_psn_add(psn, 1);
	req->rtt_first_ns = ktime_get_ns();
}

/**
 * srdma_req_rtt_rewind() - A go-back-N: note it in the round trip timed
 * @req: the QP's requester
 *
 * A go-back-N: the packet timed may go again, with or without AckReq, or
 * be passed over when its first sending is acknowledged meanwhile. Either
 * way its ACK no longer tells from when to count (srdma_comp_rtt()).
 *
 * Context: qp->lock held.
 */
void srdma_req_rtt_rewind(struct srdma_req *req)
{
	u64 now;

	if (!req->rtt_timing)
		return;
	now = ktime_get_ns();
	if (!req->rtt_resent)
		req->rtt_resend1_ns = now;
	req->rtt_resent = true;
	req->rtt_last_ns = now;
}

/**
 * srdma_req_probe() - Send the tail probe, which is due (req.probe)
 * @qp: the QP
 * @q: packets to send once qp->lock is released
 *
 * The tail probe (IBTA C9-60, the third of its mechanisms): the last
 * packet sent carried no AckReq and nothing has followed it, so nothing
 * makes the responder acknowledge the packets since the last one that
 * did. Send that packet again with the bit set: a duplicate, which the
 * responder acknowledges without executing it again (C9-105). Not a
 * retry: retry_cnt and the window stay as they are. Due when the probe
 * timer fired, or when a signaled local operation waits for that tail.
 *
 * Context: qp->lock held.
 */
void srdma_req_probe(struct srdma_qp *qp, struct sk_buff_head *q)
{
	u32 pmtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	struct srdma_req *req = &qp->req;
	u32 psn = srdma_psn_add(req->psn, -1);
	u32 idx = req->cur + (req->cur_off ? 1 : 0);
	struct srdma_swqe *sw = NULL;
	struct sk_buff *skb;
	bool bad = false;
	int d;

	lockdep_assert_held(&qp->lock);
	req->probe = false;
	if (!srdma_qp_sends(qp->state) ||
	    req->rnr_wait || req->need_retry || !req->pkts_since_ack_req ||
	    req->psn != req->max_psn || req->una == req->max_psn)
		return;
	/* The WQE of the last packet sent; local operations have none. */
	while (idx != qp->sq.ring.own) {
		sw = srdma_swqe_at(qp, --idx);
		if (sw->started && sw->npkts)
			break;
		sw = NULL;
	}
	if (!sw || srdma_wr_is_read_atomic(sw->wqe.opcode))
		return;
	d = srdma_psn_diff(psn, sw->first_psn);
	if (d < 0 || d >= sw->npkts)
		return;
	/* A failure leaves the tail to the local ACK timeout. */
	skb = srdma_req_packet(qp, sw, psn, d * pmtu, true, &bad);
	if (!skb)
		return;
	__skb_queue_tail(q, skb);
	srdma_counter_inc(to_sdev(qp->ibqp.device), SRDMA_CNT_TAIL_PROBES);
}

/**
 * srdma_req_probe_timeout() - Nothing followed an unacknowledged tail
 * @t: the QP's probe timer
 *
 * Context: timer (softirq).
 */
void srdma_req_probe_timeout(struct timer_list *t)
{
	struct srdma_qp *qp = from_timer(qp, t, probe_timer);
	bool run;

	spin_lock_bh(&qp->lock);
	run = !qp->dead && qp->req.pkts_since_ack_req &&
	      qp->req.una != qp->req.max_psn;
	if (run)
		qp->req.probe = true;
	spin_unlock_bh(&qp->lock);
	if (run)
		srdma_qp_kick(qp);
}

/**
 * srdma_req_expects() - Is an answer due that will run the requester?
 * @qp: the QP
 *
 * While an ACK or response is due for a packet sent, or an RNR NAK's timer
 * runs, the transport will look at the SQ again by itself; new WQEs need
 * no doorbell (SRDMA_RING_KSTATE_POLLING).
 *
 * Context: qp->lock held.
 * Return: true when such an answer or timer is due.
 */
bool srdma_req_expects(struct srdma_qp *qp)
{
	struct srdma_req *req = &qp->req;

	if (srdma_req_idle(qp))
		return false;
	return req->rnr_wait || srdma_psn_diff(req->ack_psn, req->una) >= 0;
}

/**
 * srdma_req_arm_probe() - Arm the tail probe if nothing asks for an ACK
 * @qp: the QP
 *
 * Packets are unacknowledged and none of them asked for an ACK since the
 * last one was answered: unless more is sent within SRDMA_PROBE_JIFFIES,
 * the tail probe asks. Re-armed by every pass that leaves it so.
 *
 * Context: qp->lock held.
 */
void srdma_req_arm_probe(struct srdma_qp *qp)
{
	if (qp->dead || !qp->req.pkts_since_ack_req ||
	    qp->req.una == qp->req.max_psn || srdma_req_expects(qp))
		return;
	mod_timer(&qp->probe_timer, jiffies + SRDMA_PROBE_JIFFIES);
}
