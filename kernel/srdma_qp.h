/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pair state: the rings, the IBTA state, and the three transport
 * engines of a reliable connected QP (IBTA 9.7):
 *
 *   requester  srdma_req.c   turns SQ WQEs into request packets, owns the
 *                            send PSNs, retransmits (go-back-N); which
 *                            packets ask for an ACK: srdma_req_ack.c
 *   completer  srdma_comp.c  consumes ACKs, NAKs, read and atomic
 *                            responses; completes SQ WQEs; retry and RNR
 *   responder  srdma_resp.c  executes requests: places SEND/WRITE data,
 *                            answers READ and atomics, generates ACK/NAK,
 *                            handles duplicates (9.7.5.1.4); the answers
 *                            are built in srdma_resp_tx.c
 *
 * The requester and the completer run under qp->lock, the responder under
 * qp->resp_lock: a process posting to a QP does not wait for a request
 * that another CPU delivers to the same QP, nor an ACK for the responder.
 * Received packets are processed in the softirq that delivers them;
 * packets are built under the lock of their side and sent after it is
 * released.
 */
#ifndef SRDMA_QP_H
#define SRDMA_QP_H

#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <rdma/ib_mad.h>

#include "srdma_hdr.h"
#include "srdma_net.h"

/* Does a received packet's opcode have the SRDMA_OPF_* @flag? */
static inline bool srdma_pkt_is(const struct srdma_pkt *pkt, u32 flag)
{
	return pkt->info->flags & flag;
}

/* The operation of a request: SRDMA_OPF_SEND, _WRITE, _READ or _ATOMIC. */
static inline u32 srdma_pkt_op(const struct srdma_pkt *pkt)
{
	return pkt->info->flags & (SRDMA_OPF_SEND | SRDMA_OPF_WRITE |
				   SRDMA_OPF_READ | SRDMA_OPF_ATOMIC);
}

/* An ACK's credit count is filled in when its packet is built. */
#define SRDMA_ACK_SYN		srdma_syn(SRDMA_SYN_ACK, 0)
#define SRDMA_RNR_SYN(timer)	srdma_syn(SRDMA_SYN_RNR, (timer))
#define SRDMA_NAK_SYN(code)	srdma_syn(SRDMA_SYN_NAK, (code))

/* Message in progress at the responder (srdma_resp.resp.cur_op). */
enum srdma_resp_op {
	SRDMA_RESP_NONE,
	SRDMA_RESP_SEND,
	SRDMA_RESP_WRITE,
};

/**
 * srdma_resp_seq_ok() - May a request with these opcode flags come now?
 * @cur_op: the message in progress (enum srdma_resp_op)
 * @flags: srdma_opcode_info.flags of the request
 *
 * IBTA 9.7.5.1.3, Table 45: a SEND or WRITE in progress continues with
 * MIDDLE or LAST packets of the same operation; otherwise a new message
 * starts (FIRST or ONLY), or a READ or atomic request comes.
 *
 * Return: true when the sequence is valid.
 */
static inline bool srdma_resp_seq_ok(enum srdma_resp_op cur_op, u32 flags)
{
	bool first = flags & SRDMA_OPF_FIRST;
	u32 op = flags & (SRDMA_OPF_SEND | SRDMA_OPF_WRITE |
			  SRDMA_OPF_READ | SRDMA_OPF_ATOMIC);

	switch (cur_op) {
	case SRDMA_RESP_SEND:
		return op == SRDMA_OPF_SEND && !first;
	case SRDMA_RESP_WRITE:
		return op == SRDMA_OPF_WRITE && !first;
	default:
		return first || op == SRDMA_OPF_READ || op == SRDMA_OPF_ATOMIC;
	}
}

/**
 * srdma_req_len_ok() - Check a request's payload against the path MTU
 * @flags: the opcode's SRDMA_OPF_* flags
 * @paylen: the payload length, pad excluded
 * @pmtu: the path MTU in bytes
 *
 * IBTA C9-92 (RC), C9-195 to C9-197 (UC): a FIRST or MIDDLE packet
 * carries exactly one PMTU, a LAST or ONLY packet at most one. (That
 * FIRST, MIDDLE and LAST packets are not empty is the parser's check.)
 *
 * Return: true when the length is valid.
 */
static inline bool srdma_req_len_ok(u32 flags, u32 paylen, u32 pmtu)
{
	if (flags & SRDMA_OPF_LAST)
		return paylen <= pmtu;
	return paylen == pmtu;
}

/* Packets a message of @len bytes takes at @pmtu (at least one). */
static inline u32 srdma_npkts(u32 len, u32 pmtu)
{
	return len ? DIV_ROUND_UP(len, pmtu) : 1;
}

/**
 * srdma_read_fit() - How many PSNs a READ's request may take
 * @out: PSNs outstanding before it (its PSN less the oldest unacknowledged)
 * @need: PSNs of the responses it would ask for
 *
 * C9-61: a send queue has at most 2^23 PSNs outstanding, so that the
 * responder tells a duplicate from a request ahead of its window. The
 * requester keeps one fewer, so that its oldest unacknowledged PSN and its
 * next one are never half the PSN space apart, where srdma_psn_diff()
 * orders neither. A READ that does not fit behind the PSNs outstanding
 * waits for their answers; one that does not fit alone (2 GiB at a path
 * MTU of 256) asks for a first piece of what fits.
 *
 * Return: @need when it fits, the PSNs of a first piece when nothing is
 * outstanding, else 0: the READ waits.
 */
static inline u32 srdma_read_fit(u32 out, u32 need)
{
	u32 room;

	if (out >= SRDMA_PSN_WINDOW - 1)
		return 0;
	room = SRDMA_PSN_WINDOW - 1 - out;
	if (need <= room)
		return need;
	return out ? 0 : room;
}

/**
 * srdma_read_resp_pos_ok() - May a READ response opcode come at this PSN?
 * @flags: the response opcode's SRDMA_OPF_* flags
 * @idx: the response's PSN less the READ's first PSN
 * @npkts: the number of responses the READ takes
 *
 * IBTA 9.7.5.1.9: the first PSN of a READ is answered by a FIRST response
 * (ONLY when one packet carries it all) and its last by a LAST (or ONLY).
 * Between them MIDDLE responses come, or a FIRST where a retried READ that
 * asked only for what had not arrived starts (9.7.5.1.4, C9-107), and the
 * responses of such a READ may end in an ONLY. When the requester asked
 * again in pieces (@split, srdma_req_read_piece()), a LAST or ONLY also
 * ends each piece. Any other opcode is an unexpected one, a bad response
 * (9.9.2.3, Table 59).
 *
 * Return: true when the opcode fits the position.
 */
static inline bool srdma_read_resp_pos_ok(u32 flags, u32 idx, u32 npkts,
					  bool split)
{
	bool first = flags & SRDMA_OPF_FIRST;
	bool last = flags & SRDMA_OPF_LAST;

	if (idx >= npkts)
		return false;
	if (idx == npkts - 1)
		return last && (first || idx);
	return (!last || (split && idx)) && (first || idx);
}

/**
 * srdma_range_within() - Is [@va, @va + @len) part of [@base, @base + @blen)?
 * @va: start of the inner range
 * @len: its length in bytes
 * @base: start of the outer range
 * @blen: its length in bytes
 *
 * Without overflow for any value of the four. IBTA 9.7.5.1.4: a duplicate
 * READ is valid when it asks for a part of the original's data.
 *
 * Return: true when the inner range lies within the outer one.
 */
static inline bool srdma_range_within(u64 va, u32 len, u64 base, u32 blen)
{
	return va >= base && len <= blen && va - base <= blen - len;
}

/* Where a request's PSN falls for the responder (IBTA 9.7.5.1.1). */
enum srdma_psn_class {
	SRDMA_PSN_EXPECTED,	/* the expected PSN: execute */
	SRDMA_PSN_DUPLICATE,	/* behind it, in the valid region: duplicate */
	SRDMA_PSN_AHEAD,	/* ahead of it: PSN sequence error */
};

/**
 * srdma_psn_classify() - Classify a request's PSN against the expected one
 * @psn: the request's PSN
 * @epsn: the responder's expected PSN
 *
 * Return: enum srdma_psn_class.
 */
static inline enum srdma_psn_class srdma_psn_classify(u32 psn, u32 epsn)
{
	s32 diff = srdma_psn_diff(psn, epsn);

	if (!diff)
		return SRDMA_PSN_EXPECTED;
	return diff < 0 ? SRDMA_PSN_DUPLICATE : SRDMA_PSN_AHEAD;
}

/**
 * srdma_qp_sends() - Whether a QP's requester sends and retries
 * @state: the QP's state
 *
 * In SQD no new message starts, but those started go on to the end, are
 * retried and timed as in RTS (C9-139): the drain ends once they are
 * acknowledged (the SQD state of IBTA chapter 10).
 *
 * Return: true in RTS and SQD.
 */
static inline bool srdma_qp_sends(enum ib_qp_state state)
{
	return state == IB_QPS_RTS || state == IB_QPS_SQD;
}

/**
 * srdma_ack_supersedes() - Whether a new ACK or NAK replaces a pending one
 * @pend_syn: AETH syndrome of the answer waiting to be sent
 * @pend_psn: its PSN
 * @psn: PSN of the new answer
 *
 * The responder keeps one answer waiting. ACKs are cumulative (9.7.5.2.1)
 * and a NAK acknowledges every PSN before its own, so a newer answer says
 * all that a pending ACK said, and all that a pending PSN sequence error
 * or RNR NAK said once it names the NAKed PSN or a later one: the NAKed
 * packet has arrived since. A NAK of an error class is the QP's last
 * answer.
 *
 * Return: true when the new answer is sent instead of the pending one.
 */
static inline bool srdma_ack_supersedes(u8 pend_syn, u32 pend_psn, u32 psn)
{
	switch (srdma_syn_type(pend_syn)) {
	case SRDMA_SYN_ACK:
		return true;
	case SRDMA_SYN_RNR:
		break;
	default:
		if (pend_syn != SRDMA_NAK_SYN(SRDMA_NAK_PSN_SEQ))
			return false;
	}
	return !srdma_psn_before(psn, pend_psn);
}

/**
 * srdma_nak_wc_status() - Completion status of a NAK (IBTA 9.9.2)
 * @code: enum srdma_nak_code of an error-class NAK
 *
 * Return: what the requester completes the NAKed WQE with.
 */
static inline enum ib_wc_status srdma_nak_wc_status(u8 code)
{
	switch (code) {
	case SRDMA_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SRDMA_NAK_REMOTE_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case SRDMA_NAK_INVALID_RD_REQ:
		/* An RD code (9.7.5.2.7): the peer is not an RC responder. */
		return IB_WC_REM_INV_RD_REQ_ERR;
	default:
		return IB_WC_REM_OP_ERR;
	}
}

/* Packets one pass of the transmit engine sends before it yields. */
#define SRDMA_TX_BUDGET		64
/* Packets one drain of a stream hands over before it yields. */
#define SRDMA_TX_STREAM_MAX	(2 * SRDMA_TX_BUDGET)
/*
 * A connected QP's packets in the local stack (srdma_txg.c): at HIGH its
 * passes stop; at LOW the stack's destructor of a packet resumes them.
 */
#define SRDMA_TX_INFLIGHT_HIGH	64
#define SRDMA_TX_INFLIGHT_LOW	32
/*
 * Congestion window of the requester, in packets (sent, not acknowledged):
 * additive increase by one packet per window acknowledged, halved on a
 * loss signal (PSN sequence NAK, implied NAK, a packet the local stack
 * dropped), back to the minimum on a timeout.
 */
#define SRDMA_CWND_INIT		32
#define SRDMA_CWND_MIN		4
#define SRDMA_MAX_INFLIGHT	512
/* The requester asks for an ACK at least every this many packets. */
#define SRDMA_ACK_REQ_EVERY	32
/*
 * Quiet time after which an unacknowledged tail without AckReq is probed
 * (srdma_req_probe()): at least one full tick.
 */
#define SRDMA_PROBE_JIFFIES	2
/*
 * Quiet time of a window with packets outstanding after which the
 * requester goes back to una without waiting for the local ACK timeout
 * (srdma_comp_timeout()).
 */
#define SRDMA_EARLY_RTX_MS	10

/**
 * srdma_timer_jiffies() - A timer interval that no expiry undercuts
 * @ns: the least time that must pass, in nanoseconds
 *
 * A timer armed n jiffies ahead fires after as little as n - 1 ticks of
 * real time, when it is armed late in a tick. The local ACK timeout may
 * be detected no sooner than its interval (C9-141), and an RNR retry
 * waits at least the time its NAK carries (C9-130): rounded up to whole
 * ticks, plus the one the current tick may take away.
 *
 * Return: jiffies to arm a timer with, at least 2.
 */
static inline unsigned long srdma_timer_jiffies(u64 ns)
{
	return nsecs_to_jiffies(ns + TICK_NSEC - 1) + 1;
}

/* The local ACK timeout backs off to (1 + SRDMA_RTO_BACKOFF_MAX) T_tr. */
#define SRDMA_RTO_BACKOFF_MAX	2

/**
 * srdma_rto_jiffies() - The local ACK timeout to arm, backed off
 * @timeout: the 5-bit attribute (see srdma_ack_timeout_ns())
 * @backoff: local ACK timeouts since the last progress (req.rto_backoff)
 *
 * C9-141 has a timeout detected no sooner than T_tr and no later than
 * 4 T_tr after the request. Each timeout with no progress since lengthens
 * the next, to 2 T_tr and then 3 T_tr, as TCP backs off its
 * retransmission timer (RFC 6298 5.5). Not to 4 T_tr: a timer may fire
 * late, by up to an eighth of its interval once that is more than 64
 * ticks (the timer wheel's coarser levels), and 4 T_tr would then be
 * overshot. A responder that is alive but stalls (a software one short of
 * CPU, whose queue holds the requests) is given 21 T_tr over the 8
 * timeouts retry_cnt 7 allows instead of 8 T_tr; a peer that is gone
 * fails after as many retries, and that much later.
 *
 * Return: jiffies to arm the timer with, or 0 for no timeout.
 */
static inline unsigned long srdma_rto_jiffies(u8 timeout, u8 backoff)
{
	u64 ns = srdma_ack_timeout_ns(timeout);

	backoff = min_t(u8, backoff, SRDMA_RTO_BACKOFF_MAX);
	return ns ? srdma_timer_jiffies(ns * (1 + backoff)) : 0;
}

/**
 * srdma_ack_timeout_jiffies() - Local ACK timeout of an RC QP, in jiffies
 * @timeout: the 5-bit attribute (see srdma_ack_timeout_ns())
 *
 * Return: T_tr, not backed off: jiffies to arm a timer with, or 0 for no
 * timeout.
 */
static inline unsigned long srdma_ack_timeout_jiffies(u8 timeout)
{
	return srdma_rto_jiffies(timeout, 0);
}

/**
 * srdma_early_rtx_delay() - When a stalled window is sent again early
 * @rto: the local ACK timeout in jiffies
 * @rtt_us: the round trip the path may take, from the QP's estimate
 *	(srdma_rtt_bound_us()); 0 before the first sample
 *
 * A lost NAK, or a lost first packet of a go-back-N, leaves the responder
 * silent until the local ACK timeout: it NAKs a gap once and then drops
 * every new request but the one with the PSN it expects (C9-114, C9-122).
 * Nothing keeps the requester from sending again earlier; only the
 * timeout and NAKs count against retry_cnt (9.9.2.1.1). The early
 * retransmission waits an eighth of the timeout (a responder that takes
 * long to answer a READ has been given long), at least SRDMA_EARLY_RTX_MS
 * and a tick more than the tail probe (srdma_req_probe()), which asks for
 * a missing ACK more cheaply, and a tick more than @rtt_us: on a long or
 * queued path an ACK in flight is not a loss, and sending the window
 * again would only add to the queue that delays it. It is left out when
 * that is not well inside the timeout.
 *
 * Return: the delay in jiffies from the arming of the timeout, or 0 for
 * none.
 */
static inline unsigned long srdma_early_rtx_delay(unsigned long rto,
						  u32 rtt_us)
{
	unsigned long d = max3(rto / 8, msecs_to_jiffies(SRDMA_EARLY_RTX_MS),
			       (unsigned long)SRDMA_PROBE_JIFFIES + 1);

	d = max(d, usecs_to_jiffies(rtt_us) + 1);
	return d <= rto / 2 ? d : 0;
}

/**
 * struct srdma_swqe - a send WQE as the kernel holds it
 * @wqe: the WQE header, copied once from the ring and validated
 * @first_psn: PSN of its first packet (assigned when first sent)
 * @npkts: PSNs it consumes: request packets, or response packets of a READ
 * @length: message length in bytes
 * @ssn: its send sequence number (RC; assigned with @first_psn)
 * @cons_seq: srdma_req.cons_total once it started: the messages that
 *	consume a receive WQE, up to and including this one
 * @started: @first_psn is assigned
 * @split: a READ asked for again in pieces: its responses may end where
 *	a piece does (srdma_req_read_piece(), srdma_read_resp_pos_ok())
 * @body: what follows the header in the ring slot: struct srdma_sge[]
 *	or inline data
 */
struct srdma_swqe {
	u32 first_psn;
	u32 npkts;
	u32 length;
	u32 ssn;
	u32 cons_seq;
	bool started;
	bool split;
	struct srdma_send_wqe wqe;
	u8 body[];
};

/**
 * struct srdma_kreg - REG_MR arguments of an in-kernel SQ slot; they hold
 *	a kernel pointer, so they never go through a ring
 * @mr: the fast-registration MR
 * @key: its new key
 * @access: IB_ACCESS_* flags to grant
 */
struct srdma_kreg {
	struct srdma_mr *mr;
	u32 key;
	int access;
};

/**
 * struct srdma_rd_res - a responder resource (IBTA 9.7.5.1.4, C9-150)
 * @type: 0 (free), SRDMA_RES_READ or SRDMA_RES_ATOMIC
 * @replay: answering a duplicate of its request (9.7.5.1.4)
 * @first_psn: PSN of the request
 * @last_psn: PSN of its last response
 * @va: READ: next address to send; ATOMIC: target address
 * @rkey: R_Key of the request
 * @resid: READ: bytes still to send; ATOMIC: 1 while its ACK is to send
 * @start_psn: READ: PSN of the first response of this (re)execution
 * @next_psn: READ: PSN of the next response packet to send; ATOMIC: its PSN
 * @orig: ATOMIC: the original value returned (replayed for duplicates)
 * @req_va: READ: the original request's address
 * @req_len: READ: the original request's length (0 for an atomic: its
 *	one response is at @first_psn)
 */
struct srdma_rd_res {
	u8 type;
	bool replay;
	u32 first_psn;
	u32 last_psn;
	u32 req_len;
	u64 req_va;
	u64 va;
	u32 rkey;
	u32 resid;
	u32 start_psn;
	u32 next_psn;
	u64 orig;
};

#define SRDMA_RES_READ		1
#define SRDMA_RES_ATOMIC	2

/**
 * struct srdma_req - requester state
 * @fetch: next ring index to copy into the shadow
 * @cur: index of the WQE being transmitted
 * @cur_off: bytes of @cur already transmitted in this pass
 * @psn: PSN of the next request packet
 * @max_psn: the PSN after the highest ever sent: after a go-back-N, ACKs
 *	of packets sent before the rewind still count
 * @una: oldest unacknowledged PSN
 * @rd_atomic: READ/atomic requests outstanding
 * @retry: retransmissions left before IB_WC_RETRY_EXC_ERR (retry_cnt)
 * @rnr_retry: RNR retries left (7: infinite)
 * @rnr_wait: an RNR NAK paused the requester until @rnr_timer fires
 * @need_retry: go back to @una on the next pass
 * @pkts_since_ack_req: packets sent since the last AckReq bit
 * @ack_psn: the last PSN sent whose answer is due: of the last packet with
 *	AckReq, or the last response of a READ
 * @probe: a tail probe is due (srdma_req_probe())
 * @cwnd: congestion window, packets in flight allowed
 * @cwnd_acked: packets acknowledged towards the next window increase
 * @tx_dropped: the local stack dropped a packet of the last pass
 * @gap_pending: a go-back-N for a gap in the responses was asked for at
 *	@gap_una and una has not moved since
 * @gap_una: una when it was asked for
 * @rto_armed: the local ACK timer was armed for the packets outstanding
 *	and its expiry, if any, is not handled yet (srdma_comp_timeout()
 *	tells a re-arm from a stale expiry); the timer may be pending
 *	without it, left to expire once nothing is outstanding
 * @rto_early: the timer runs to an early retransmission, not yet to the
 *	timeout (srdma_early_rtx_delay())
 * @rto_expires: when the local ACK timeout expires (jiffies)
 * @rto_backoff: local ACK timeouts since una last moved or the QP last
 *	entered RTS, up to SRDMA_RTO_BACKOFF_MAX; they lengthen the next one
 *	(srdma_rto_jiffies())
 * @rtt_timing: a round trip is being measured: of the packet before
 *	@rtt_end, sent new with AckReq at @rtt_first_ns (ktime_get_ns())
 * @rtt_resent: a go-back-N came since, the first at @rtt_resend1_ns, the
 *	last (or the last sending of that packet) at @rtt_last_ns
 * @rtt_end: the una that ends the measurement
 * @rtt_tick: jiffies when the last measurement began
 * @rtt_first_ns: see @rtt_timing
 * @rtt_resend1_ns: see @rtt_resent
 * @rtt_last_ns: see @rtt_resent
 * @rtt_answer: the packet being handled (srdma_comp_rcv()) is the answer
 *	to the packet timed itself (srdma_rtt_answer())
 * @rtt_dup_wait: a duplicate ACK of @rtt_dup_psn would show that the
 *	last measurement's go-back-N was not needed
 * @rtt_dup_psn: see @rtt_dup_wait
 * @rtt_dup_us: the round trip from the first go-back-N
 * @srtt_us: smoothed round-trip time (RFC 6298), 0 before the first
 *	sample; it includes the responder's time to answer
 * @rttvar_us: its mean deviation
 * @ssn: send sequence number of the last message started (9.7.7.2.4; 24
 *	bits, as the MSN it is compared with)
 * @cons_total: messages started that consume a receive WQE, ever
 * @e2e: what the responder said of end-to-end credits (enum srdma_e2e)
 * @msn: the newest MSN of an ACK with credits
 * @cons_limit: the last message consuming a receive WQE (its cons_seq) the
 *	credits of that ACK allow: the LSN (9.7.7.2.4) in such messages
 * @credit_idx: SQ index from which to look for the first message after
 *	@msn (srdma_req_consumed())
 * @limited_wait: a request was sent without credit at @limited_psn; the
 *	next one waits until una passes it (C9-162, C9-163)
 * @limited_psn: see @limited_wait
 * @draining: the QP entered SQD with messages started and not yet
 *	acknowledged; srdma_req_drained() reports the end of the drain
 * @read_len: bytes the READ request being built asks for (0: the rest of
 *	the message)
 * @read_piece: the READ at @cur is asked for again piece by piece, and
 *	counts in @rd_atomic already (srdma_req_read_piece())
 * @err_wait: the WQE at @err_idx failed before its first packet left, with
 *	@err_status: nothing from it on is sent, and it completes in error,
 *	the QP entering ERR, once the WQEs before it have completed
 *	(srdma_req_fail())
 * @err_idx: see @err_wait
 * @err_status: see @err_wait (enum ib_wc_status)
 * @cq_full: the send CQ could not take a completion: the QP enters ERR
 *	(srdma_req_fail_due())
 */
struct srdma_req {
	u32 fetch;
	u32 cur;
	u32 cur_off;
	u32 psn;
	u32 max_psn;
	u32 una;
	u32 rd_atomic;
	u8 retry;
	u8 rnr_retry;
	bool rnr_wait;
	bool need_retry;
	u32 pkts_since_ack_req;
	u32 ack_psn;
	bool probe;
	u32 cwnd;
	u32 cwnd_acked;
	bool tx_dropped;
	bool gap_pending;
	u32 gap_una;
	bool rto_armed;
	bool rto_early;
	unsigned long rto_expires;
	u8 rto_backoff;
	bool rtt_timing;
	bool rtt_resent;
	u32 rtt_end;
	unsigned long rtt_tick;
	u64 rtt_first_ns;
	u64 rtt_resend1_ns;
	u64 rtt_last_ns;
	bool rtt_answer;
	bool rtt_dup_wait;
	u32 rtt_dup_psn;
	u32 rtt_dup_us;
	u32 srtt_us;
	u32 rttvar_us;
	u32 ssn;
	u32 cons_total;
	u8 e2e;
	u32 msn;
	u32 cons_limit;
	u32 credit_idx;
	bool limited_wait;
	u32 limited_psn;
	bool draining;
	u32 read_len;
	bool read_piece;
	bool err_wait;
	u32 err_idx;
	u8 err_status;
	bool cq_full;
};

/**
 * srdma_swqe_begun() - Whether a WQE has put a packet on the wire
 * @req: the QP's requester
 * @sw: a WQE of its SQ
 *
 * A WQE is marked started when the requester gives it its PSNs, which may
 * be before its first packet can go (the READ and atomic limit, credits,
 * memory). It has begun once a packet of it was sent: its first PSN is
 * before the highest ever sent (@req->max_psn outlives a go-back-N). A
 * local operation has begun once it ran. In SQD only begun messages go
 * on.
 *
 * Return: true when @sw has begun.
 */
static inline bool srdma_swqe_begun(const struct srdma_req *req,
				    const struct srdma_swqe *sw)
{
	if (!sw->started)
		return false;
	return !sw->npkts || srdma_psn_before(sw->first_psn, req->max_psn);
}

/**
 * enum srdma_e2e - End-to-end flow control of a connection's requester
 * @SRDMA_E2E_UNKNOWN: no ACK yet: no credit (C9-156)
 * @SRDMA_E2E_ON: the responder sends credits, which limit requests that
 *	consume a receive WQE
 * @SRDMA_E2E_OFF: the responder sent the "invalid" credit code; requests
 *	are not limited for the rest of the connection (9.7.7.2.4)
 */
enum srdma_e2e {
	SRDMA_E2E_UNKNOWN,
	SRDMA_E2E_ON,
	SRDMA_E2E_OFF,
};

/**
 * struct srdma_resp - responder state
 * @epsn: expected PSN of the next request
 * @msn: message sequence number (IBTA 9.7.5.1.2), of the last message done
 * @nak_psn_sent: a PSN sequence error NAK was sent for @epsn
 * @cur_op: SEND or WRITE message in progress (opcode of its first packet
 *	class), 0 when the next packet must start a message
 * @rwqe_valid: @rwqe holds the receive WQE of the SEND in progress
 * @recv_off: bytes of the SEND in progress already placed
 * @write_va: next address of the WRITE in progress
 * @write_rkey: its R_Key
 * @write_resid: bytes the WRITE may still place (from its RETH)
 * @write_len: length of the WRITE in progress (from its RETH)
 * @res: responder resources, max_dest_rd_atomic of them (at least one)
 * @nres: entries in @res
 * @res_next: next entry of @res to use, the oldest (round robin; reused
 *	only once it has answered: srdma_res_reusable())
 * @res_first: while @res_busy, the oldest entry of @res that may have
 *	responses to send (those before it, in age, have none)
 * @res_busy: an entry of @res may have responses to send
 * @ack_pending: an ACK for @ack_psn must be sent
 * @ack_psn: PSN the pending ACK acknowledges
 * @ack_syndrome: syndrome of the pending ACK or NAK
 * @fatal: a NAK of an error class is pending; the QP enters the error
 *	state once it is built (@ending). Also the ACK that a class J error
 *	or a full CQ makes the QP's last answer
 * @fatal_psn: with @fatal, the PSN of the request that ends the QP: the
 *	responses of those before it still go (srdma_resp_res_may_send())
 * @ending: the responder found an error that ends the QP; whoever drops
 *	qp->resp_lock moves it to ERR (srdma_qp_resp_ended()), which takes
 *	qp->lock. Until then the responder takes no more packets
 * @ending_fatal: the QP's event is IB_EVENT_QP_FATAL (a corrupt RQ)
 * @wqe_err: a receive WQE completed in error: the error that ends the QP
 *	is the consumer's to learn from that completion, not from an
 *	asynchronous event (C9-222.1.1)
 * @rwqe: copy of the receive WQE in use (header and SGEs)
 */
struct srdma_resp {
	u32 epsn;
	u32 msn;
	bool nak_psn_sent;
	u8 cur_op;
	bool rwqe_valid;
	u32 recv_off;
	u64 write_va;
	u32 write_rkey;
	u32 write_resid;
	u32 write_len;
	struct srdma_rd_res *res;
	u32 nres;
	u32 res_next;
	u32 res_first;
	bool res_busy;
	bool ack_pending;
	u32 ack_psn;
	u8 ack_syndrome;
	bool fatal;
	u32 fatal_psn;
	bool ending;
	bool ending_fatal;
	bool wqe_err;
	struct srdma_recv_wqe *rwqe;
};

#endif /* SRDMA_QP_H */
