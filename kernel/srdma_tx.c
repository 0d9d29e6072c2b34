// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Driving a QP: the entry points that make its transport run.
 *
 *   srdma_qp_rcv()    a packet for the QP arrived (softirq): the
 *                     responder (requests, datagrams) or the completer
 *                     (responses), then one pass of that side
 *   srdma_qp_kick()   something to send: a post, a doorbell, a timer, an
 *                     RTS transition; runs a requester's pass now when
 *                     the context allows it, else schedules the tasklet
 *   srdma_qp_run()    one requester's pass: at most SRDMA_TX_BUDGET
 *                     packets; more work goes to the tasklet so that one
 *                     QP cannot hold a CPU
 *   srdma_qp_tasklet() a responder's pass (ACKs, READ responses, atomic
 *                     ACKs), then a requester's
 *
 * The two sides have a lock each (struct srdma_qp): the requester and the
 * completer qp->lock, the responder qp->resp_lock. Each builds its packets
 * under its lock onto its stream, requests or responses, and hands them to
 * the IP stack after the lock is released, by one CPU at a time per
 * stream so that they leave in PSN order (srdma_qp_xmit_stream()).
 * Posting from a process (the provider) writes the mapped ring; an
 * in-kernel post writes the same ring through srdma_post_send().
 */

#include "srdma.h"
#include "srdma_hdr.h"

/* The lock of the side that builds a stream's packets. */
static spinlock_t *srdma_txs_lock(struct srdma_qp *qp,
				  enum srdma_tx_stream stream)
{
	return stream == SRDMA_TX_RESP ? &qp->resp_lock : &qp->lock;
}

/*
 * Send what the passes built on one stream, in order. Passes run on any
 * CPU and append to the stream under their side's lock; one caller at a time
 * (txs->running) drains it, without the lock, so that its packets leave in
 * the order they were built. When the local stack drops a packet, the rest
 * would arrive out of order: they are not sent. The requester then goes
 * back to the oldest unacknowledged PSN with a smaller window; a lost
 * response is asked for again by the peer's requester. A process's packets
 * to a local QP are delivered in memory, and that QP's pass runs once
 * after each batch (struct srdma_loop).
 *
 * That pass, or the pass of this QP that the peer's reply runs, may append
 * to the stream being drained: a local ping-pong of requests and ACKs
 * that feeds itself as long as the process posts. A call takes no further
 * batch once it has sent SRDMA_TX_STREAM_MAX packets and leaves the rest
 * queued to a later pass, so that a poller serves its other QPs and a
 * softirq ends.
 * Return: true when work is left: a packet was dropped, or the stream
 * stopped with packets queued.
 */
static bool srdma_qp_xmit_stream(struct srdma_qp *qp,
				 enum srdma_tx_stream stream)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	struct srdma_txs *txs = &qp->tx[stream];
	spinlock_t *lock = srdma_txs_lock(qp, stream);
	struct srdma_loop batch = {}, *loop = qp->is_user ? &batch : NULL;
	bool ud = srdma_qp_is_ud(qp);
	struct sk_buff_head q;
	struct sk_buff *skb;
	struct srdma_av av;
	bool dropped = false, left;
	int sent = 0;

	/* Whoever appends to the stream calls this afterwards. */
	if (skb_queue_empty_lockless(&txs->q))
		return false;
	__skb_queue_head_init(&q);
	spin_lock_bh(lock);
	if (txs->running) {
		spin_unlock_bh(lock);
		return false;
	}
	txs->running = true;
	if (!txs->xps_cpu)
		txs->xps_cpu = smp_processor_id() + 1;
	if (txs->dst.av_gen != qp->av_gen) {
		/* The AV changed (under the lock, held here): a new route. */
		srdma_dst_cache_release(&txs->dst);
		txs->dst.av_gen = qp->av_gen;
	}
	while (!skb_queue_empty(&txs->q) && sent < SRDMA_TX_STREAM_MAX) {
		/*
		 * Counted from here on (srdma_txg.c): until now the queue's
		 * length counted them (srdma_qp_budget()).
		 */
		if (!ud)
			skb_queue_walk(&txs->q, skb)
				srdma_txg_skb(qp->txg, skb);
		skb_queue_splice_init(&txs->q, &q);
		/*
		 * Bottom halves stay off until the batch is handed over and
		 * its put-off pass has run. Enabled between two packets,
		 * they would run the softirqs pending on this CPU there,
		 * other QPs' tasklets among them, and a drain in process
		 * context would hand over one packet per round of them,
		 * while the pass it put off holds back the peer's ACK and
		 * the packets it holds count as in flight.
		 */
		spin_unlock(lock);
		/* Keeps the QP of a put-off pass (struct srdma_loop). */
		rcu_read_lock();
		while ((skb = __skb_dequeue(&q))) {
			sent++;
			batch.last = skb_queue_empty(&q);
			srdma_net_set_xps_cpu(skb, txs->xps_cpu);
			/* Datagrams: each has its own AV, and may be lost. */
			if (ud) {
				srdma_ud_av_of(skb, &av);
				srdma_net_xmit(sdev, &av, skb, loop, NULL);
				continue;
			}
			if (srdma_net_xmit(sdev, &qp->av, skb, loop,
					   &txs->dst)) {
				__skb_queue_purge(&q);
				dropped = true;
			}
		}
		/* May append to this stream: the loop sends that too. */
		srdma_net_loop_end(&batch);
		rcu_read_unlock();
		local_bh_enable();
		spin_lock_bh(lock);
		if (dropped) {
			__skb_queue_purge(&txs->q);
			if (stream == SRDMA_TX_REQ)
				qp->req.tx_dropped = true;
		}
	}
	/* Stopped at the bound: the rest waits for a later pass. */
	left = dropped || !skb_queue_empty(&txs->q);
	txs->running = false;
	spin_unlock_bh(lock);
	return left;
}

/**
 * srdma_qp_set_polling() - Tell the process that posts need no doorbell
 * @qp: a user QP in RTS
 *
 * Context: qp->lock held, which orders the read-modify-write of kstate
 * against the pass that clears the bit.
 */
void srdma_qp_set_polling(struct srdma_qp *qp)
{
	struct srdma_ring *r = &qp->sq.ring;

	lockdep_assert_held(&qp->lock);
	WRITE_ONCE(r->ctrl->kstate,
		   READ_ONCE(r->ctrl->kstate) | SRDMA_RING_KSTATE_POLLING);
}

/*
 * For a process's SQ: say whether the kernel will look at the ring again
 * by itself (SRDMA_RING_KSTATE_POLLING, see softrdma-abi.h). Returns true
 * when WQEs were posted while the bit was being cleared.
 */
static bool srdma_qp_update_polling(struct srdma_qp *qp, bool busy)
{
	struct srdma_ring *r = &qp->sq.ring;

	if (!qp->is_user || qp->state != IB_QPS_RTS)
		return false;
	/* A poller waiting for WQEs (srdma_sqpoll.c) is as good as busy. */
	if (busy || READ_ONCE(qp->sqpoll.linger)) {
		srdma_qp_set_polling(qp);
		return false;
	}
	WRITE_ONCE(r->ctrl->kstate,
		   READ_ONCE(r->ctrl->kstate) & ~SRDMA_RING_KSTATE_POLLING);
	/* Pairs with the process's barrier between prod and the bit. */
	smp_mb();
	return READ_ONCE(r->ctrl->prod) != qp->req.fetch;
}

/*
 * The budget of a connected QP's pass: SRDMA_TX_BUDGET, or what room its
 * packets in the local stack and those built for it leave (srdma_txg.c).
 * Sets *@gauged when the room is the limit. The other side's queue is
 * read without its lock: the room is an estimate either way.
 */
static int srdma_qp_budget(struct srdma_qp *qp, bool *gauged)
{
	int room = srdma_txg_room(qp->txg) -
		   skb_queue_len_lockless(&qp->tx[SRDMA_TX_RESP].q) -
		   skb_queue_len_lockless(&qp->tx[SRDMA_TX_REQ].q);

	*gauged = room < SRDMA_TX_BUDGET;
	return clamp(room, 0, SRDMA_TX_BUDGET);
}

/*
 * A pass that stopped with work left: out of room, not of budget, the
 * packet in flight that makes room schedules the tasklet. Return: true
 * when the caller must see to another pass itself.
 */
static bool srdma_qp_gauge(struct srdma_qp *qp, bool more, bool gauged,
			   int budget)
{
	if (more && gauged && !budget && srdma_txg_throttle(qp->txg)) {
		srdma_counter_inc(to_sdev(qp->ibqp.device),
				  SRDMA_CNT_TX_THROTTLED);
		return false;
	}
	return more;
}

/*
 * The responder's pass, qp->resp_lock held: ACKs, NAKs, READ responses
 * and atomic ACKs. Returns true when more work is left.
 */
static bool srdma_qp_resp_pass(struct srdma_qp *qp)
{
	int budget;
	bool more, gauged;

	lockdep_assert_held(&qp->resp_lock);
	if (qp->dead || qp->state == IB_QPS_ERR || srdma_qp_is_ud(qp))
		return false;
	budget = srdma_qp_budget(qp, &gauged);
	more = srdma_resp_tx(qp, &qp->tx[SRDMA_TX_RESP].q, &budget);
	return srdma_qp_gauge(qp, more, gauged, budget);
}

/*
 * What follows a pass of one side once its lock is dropped: the move to
 * ERR the responder asked for (before its packets, as if it came under
 * the lock), the sending of the side's stream, the QP's events. Returns
 * true when the stream dropped a packet or left packets queued.
 */
static bool srdma_qp_pass_done(struct srdma_qp *qp, bool resp)
{
	bool left;

	if (resp)
		srdma_qp_resp_ended(qp);
	left = srdma_qp_xmit_stream(qp, resp ? SRDMA_TX_RESP : SRDMA_TX_REQ);
	srdma_qp_raise_event(qp);
	return left;
}

/* The responder's pass; returns true when more work is left. */
static bool srdma_qp_resp_step(struct srdma_qp *qp)
{
	bool more;

	spin_lock_bh(&qp->resp_lock);
	more = srdma_qp_resp_pass(qp);
	spin_unlock_bh(&qp->resp_lock);
	return srdma_qp_pass_done(qp, true) || more;
}

/*
 * A connected QP's requester pass, qp->lock held: request packets, the
 * QP's timers and its doorbell state. Returns true when more work is left.
 */
static bool srdma_qp_req_pass(struct srdma_qp *qp)
{
	struct sk_buff_head *q = &qp->tx[SRDMA_TX_REQ].q;
	bool more, gauged, busy;
	int budget;

	budget = srdma_qp_budget(qp, &gauged);
	more = srdma_req_tx(qp, q, &budget);
	/*
	 * Stopped by the gauge, the transport will look at the QP again by
	 * itself, so a process's posts need no doorbell meanwhile.
	 */
	busy = more;
	more = srdma_qp_gauge(qp, more, gauged, budget);
	srdma_req_drained(qp);
	if (qp->req.probe)
		srdma_req_probe(qp, q);
	if (qp->req.una != qp->req.max_psn && !qp->req.rto_armed)
		srdma_comp_arm_timer(qp);
	srdma_req_arm_probe(qp);
	/* A WQE that failed waits for answers to those before it. */
	if (srdma_qp_update_polling(qp, busy || srdma_req_expects(qp) ||
				    qp->req.err_wait))
		more = true;
	return more;
}

/*
 * The requester's pass, qp->lock held: request packets (or datagrams),
 * the QP's timers and its doorbell state; in ERR, the flush of both
 * queues. Returns true when more work is left for the caller to see to:
 * work a poller takes (srdma_sqpoll_kick()) is not.
 */
static bool srdma_qp_pass(struct srdma_qp *qp)
{
	int budget = SRDMA_TX_BUDGET;
	bool more;

	lockdep_assert_held(&qp->lock);
	if (qp->dead)
		return false;
	if (qp->state == IB_QPS_ERR) {
		spin_lock(&qp->resp_lock);
		srdma_qp_flush(qp);
		spin_unlock(&qp->resp_lock);
		return false;
	}
	if (srdma_qp_is_ud(qp)) {
		/* Datagrams complete once built: busy while WQEs wait. */
		more = srdma_ud_tx(qp, &qp->tx[SRDMA_TX_REQ].q, &budget);
		more = srdma_qp_update_polling(qp, more) || more;
	} else {
		more = srdma_qp_req_pass(qp);
	}
	return more && !srdma_sqpoll_kick(qp);
}

/*
 * Requester work is left after qp->lock was dropped (the request stream
 * stopped with packets queued): the poller's, when one has the QP and
 * this is its CPU, else the QP's tasklet's.
 */
static void srdma_qp_more(struct srdma_qp *qp)
{
	bool kicked = false;

	if (READ_ONCE(qp->sqpoll.linger)) {
		spin_lock_bh(&qp->lock);
		kicked = srdma_sqpoll_kick(qp);
		spin_unlock_bh(&qp->lock);
	}
	if (!kicked)
		tasklet_schedule(&qp->tx_tasklet);
}

/**
 * srdma_qp_step() - One requester's pass, leaving the rest to the caller
 * @qp: the QP
 *
 * Context: process or softirq context, not hard interrupt; takes qp->lock
 * (and qp->resp_lock in ERR, for the flush).
 * Return: true when work is left for another pass, but for what the pass
 * left to a poller (srdma_sqpoll_kick()).
 */
bool srdma_qp_step(struct srdma_qp *qp)
{
	bool more;

	spin_lock_bh(&qp->lock);
	more = srdma_qp_pass(qp);
	spin_unlock_bh(&qp->lock);
	return srdma_qp_pass_done(qp, false) || more;
}

/**
 * srdma_qp_run() - One requester's pass; the QP's tasklet, or the poller
 *	that has the QP, does the rest
 * @qp: the QP
 *
 * Context: process or softirq context, not hard interrupt; as
 * srdma_qp_step().
 */
void srdma_qp_run(struct srdma_qp *qp)
{
	if (srdma_qp_step(qp))
		srdma_qp_more(qp);
}

/**
 * srdma_qp_run_resp() - One responder's pass; the QP's tasklet does the
 *	rest
 * @qp: the QP
 *
 * Context: process or softirq context, not hard interrupt; takes
 * qp->resp_lock.
 */
void srdma_qp_run_resp(struct srdma_qp *qp)
{
	if (srdma_qp_resp_step(qp))
		tasklet_schedule(&qp->tx_tasklet);
}

/**
 * srdma_qp_tasklet() - Continue a QP's transmission, both sides
 * @t: the QP's tasklet
 *
 * Context: softirq.
 */
void srdma_qp_tasklet(struct tasklet_struct *t)
{
	struct srdma_qp *qp = from_tasklet(qp, t, tx_tasklet);
	bool resp_more = srdma_qp_resp_step(qp);
	bool req_more = srdma_qp_step(qp);

	if (resp_more)
		tasklet_schedule(&qp->tx_tasklet);
	else if (req_more)
		srdma_qp_more(qp);
}

/**
 * srdma_qp_kick() - Make the transport look at the QP
 * @qp: the QP
 *
 * Context: any.
 */
void srdma_qp_kick(struct srdma_qp *qp)
{
	if (in_hardirq() || irqs_disabled())
		tasklet_schedule(&qp->tx_tasklet);
	else
		srdma_qp_run(qp);
}

/**
 * srdma_qp_rcv() - Hand a validated packet to the QP's transport
 * @qp: the destination QP
 * @pkt: the parsed packet
 * @skb: the packet (skb->data at the BTH); not consumed
 * @loop: NULL, or the batch of the local sender that handed @skb over in
 *	memory: unless another pass waits there already or @skb is the
 *	batch's last packet, this side's pass of @qp waits too, for the end
 *	of the batch
 *
 * Requests and datagrams go to the responder, under qp->resp_lock;
 * responses to the completer, under qp->lock. Each is followed by a pass
 * of its side only.
 *
 * Context: softirq, under rcu_read_lock (which keeps @qp alive).
 */
void srdma_qp_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		  const struct sk_buff *skb, struct srdma_loop *loop)
{
	bool resp = srdma_qp_is_ud(qp) || qp->ibqp.qp_type == IB_QPT_UC ||
		    pkt->invalid_req || srdma_pkt_is(pkt, SRDMA_OPF_REQ);
	spinlock_t *lock = resp ? &qp->resp_lock : &qp->lock;
	bool more;

	spin_lock(lock);
	if (qp->dead) {
		spin_unlock(lock);
		return;
	}
	/* C9-47.1.1: only the peer of a connected QP may reach it. */
	if (!srdma_qp_is_ud(qp) && !srdma_net_av_match(&qp->av, skb, loop)) {
		spin_unlock(lock);
		srdma_counter_inc(to_sdev(qp->ibqp.device),
				  SRDMA_CNT_RX_DROP_ADDR);
		return;
	}
	if (srdma_qp_is_ud(qp))
		srdma_ud_rcv(qp, pkt, skb);
	else if (qp->ibqp.qp_type == IB_QPT_UC)
		srdma_uc_rcv(qp, pkt, skb);
	else if (resp)
		srdma_resp_rcv(qp, pkt, skb);
	else
		srdma_comp_rcv(qp, pkt, skb);
	if (loop) {
		bool mine = loop->qp == qp && loop->resp == resp;

		if (!loop->last && (!loop->qp || mine)) {
			loop->qp = qp;
			loop->resp = resp;
			spin_unlock(lock);
			if (resp)
				srdma_qp_resp_ended(qp);
			return;
		}
		/* This pass is the one that waited. */
		if (mine)
			loop->qp = NULL;
	}
	more = resp ? srdma_qp_resp_pass(qp) : srdma_qp_pass(qp);
	spin_unlock(lock);
	if (!srdma_qp_pass_done(qp, resp) && !more)
		return;
	if (resp)
		tasklet_schedule(&qp->tx_tasklet);
	else
		srdma_qp_more(qp);
}

/* --- Posting from in-kernel users -------------------------------------- */

static int srdma_send_wqe_put(struct srdma_qp *qp, const struct ib_send_wr *wr)
{
	struct srdma_ring *r = &qp->sq.ring;
	u32 prod = r->ctrl->prod;
	struct srdma_send_wqe *w;
	struct srdma_sge *sge;
	u32 len = 0;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	/* Slots below cons are free once the transport has read them. */
	if (srdma_ring_count(prod, smp_load_acquire(&r->ctrl->cons)) >= r->num)
		return -ENOMEM;
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		break;
	default:
		return -EOPNOTSUPP;
	}

	w = r->buf + srdma_ring_slot(prod, r->num) * r->stride;
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	/* The kernel's numbering equals the uverbs one but for REG_MR. */
	w->opcode = wr->opcode;
	if (wr->opcode == IB_WR_REG_MR) {
		struct srdma_kreg *kreg =
			&qp->sq_kreg[srdma_ring_slot(prod, r->num)];

		w->opcode = SRDMA_WR_REG_MR;
		kreg->mr = to_smr(reg_wr(wr)->mr);
		kreg->key = reg_wr(wr)->key;
		kreg->access = reg_wr(wr)->access;
	}
	w->flags = wr->send_flags & (SRDMA_WQE_FENCE | SRDMA_WQE_SIGNALED |
				     SRDMA_WQE_SOLICITED);
	if (wr->opcode == IB_WR_SEND_WITH_INV ||
	    wr->opcode == IB_WR_LOCAL_INV)
		w->ex.invalidate_rkey = wr->ex.invalidate_rkey;
	else
		w->ex.imm_data = wr->ex.imm_data;
	if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
	} else if (srdma_qp_is_ud(qp)) {
		w->wr.ud.ah = to_sah(ud_wr(wr)->ah)->handle;
		w->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	} else if (wr->opcode == IB_WR_RDMA_WRITE ||
		   wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		   wr->opcode == IB_WR_RDMA_READ) {
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
	}

	sge = (struct srdma_sge *)(w + 1);
	if (wr->send_flags & IB_SEND_INLINE) {
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->sq.max_inline - len)
				return -EINVAL;
			memcpy((u8 *)sge + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->flags |= SRDMA_WQE_INLINE;
		w->inline_len = len;
	} else {
		w->num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	/* WQE written before the transport can see it. */
	smp_store_release(&r->ctrl->prod, prod + 1);
	return 0;
}

/**
 * srdma_qp_doorbell() - A process rang its QP's SQ doorbell
 * @qp: the QP, a process's
 *
 * New WQEs are in the mapped SQ ring: the SQ poller takes them, or a pass
 * runs here. The same for the command (srdma_post_send() without work
 * requests) and for the eventfd (srdma_udb.c).
 *
 * Context: process context, no lock held.
 */
void srdma_qp_doorbell(struct srdma_qp *qp)
{
	if (!srdma_sqpoll_doorbell(qp))
		srdma_qp_kick(qp);
}

/**
 * srdma_post_send() - Post send work requests
 * @ibqp: the core's QP
 * @wr: list of work requests; NULL from a process (its doorbell: the WQEs
 *	are in its mapped SQ ring)
 * @bad_wr: set to the first request not posted
 *
 * Context: any context.
 * Return: 0, -EINVAL before RTS or for a malformed request, -ENOMEM when
 * the SQ is full, -EOPNOTSUPP for an operation or QP type not implemented.
 */
int srdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	unsigned long flags;
	int err = 0;

	if (qp->is_user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		srdma_qp_doorbell(qp);
		return 0;
	}
	if (state < IB_QPS_RTS) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->sq.lock, flags);
	for (; wr; wr = wr->next) {
		err = srdma_send_wqe_put(qp, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->sq.lock, flags);
	srdma_qp_kick(qp);
	return err;
}

/**
 * srdma_recv_wqe_put() - Write one receive WQE into an in-kernel ring
 * @wq: the RQ or SRQ, its lock held
 * @wr: the work request
 *
 * Return: 0, -EINVAL for too many SGEs, -ENOMEM when the ring is full.
 */
int srdma_recv_wqe_put(struct srdma_wq *wq, const struct ib_recv_wr *wr)
{
	struct srdma_ring *ring = &wq->ring;
	u32 prod = ring->ctrl->prod;
	struct srdma_recv_wqe *wqe;
	struct srdma_sge *sge;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > wq->max_sge)
		return -EINVAL;
	/* Slots below cons are free once the transport has read them. */
	if (srdma_ring_count(prod, smp_load_acquire(&ring->ctrl->cons)) >=
	    ring->num)
		return -ENOMEM;

	wqe = ring->buf + srdma_ring_slot(prod, ring->num) * ring->stride;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	sge = (struct srdma_sge *)(wqe + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	/* WQE written before the consumer can see it. */
	smp_store_release(&ring->ctrl->prod, prod + 1);
	return 0;
}

/**
 * srdma_post_recv() - Post receive work requests
 * @ibqp: the core's QP
 * @wr: list of work requests; NULL from a process whose RQ is in the
 *	error state asks the kernel to flush what it posted to its ring
 * @bad_wr: set to the first request not posted
 *
 * Context: any context.
 * Return: 0, -EINVAL in the RESET state or for a malformed request,
 * -ENOMEM when the RQ is full.
 */
int srdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->is_user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
	} else {
		/* IBTA 11.4.1.2: a QP with an SRQ takes no receive WQEs. */
		if (READ_ONCE(qp->state) == IB_QPS_RESET || ibqp->srq) {
			*bad_wr = wr;
			return -EINVAL;
		}
		spin_lock_irqsave(&qp->rq.lock, flags);
		for (; wr; wr = wr->next) {
			err = srdma_recv_wqe_put(&qp->rq, wr);
			if (err) {
				*bad_wr = wr;
				break;
			}
		}
		spin_unlock_irqrestore(&qp->rq.lock, flags);
	}
	/* Receives wait in the ring; only the error state needs a flush. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		srdma_qp_kick(qp);
	return err;
}
