// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, the IBTA state machine (10.3.1) driven by
 * modify_qp, the error state and its flush, destruction.
 *
 * Lock order: qp->lock, then qp->resp_lock, then a CQ's or an SRQ's lock.
 * A work queue's lock (producer side of an in-kernel QP's ring) is never
 * held with another.
 */

#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

#define SRDMA_QPN_MAX		0xffffff
#define SRDMA_GSI_QPN		1

static const char * const srdma_qp_state_names[] = {
	[IB_QPS_RESET] = "RESET",
	[IB_QPS_INIT] = "INIT",
	[IB_QPS_RTR] = "RTR",
	[IB_QPS_RTS] = "RTS",
	[IB_QPS_SQD] = "SQD",
	[IB_QPS_SQE] = "SQE",
	[IB_QPS_ERR] = "ERR",
};

static const char *srdma_qp_state_name(enum ib_qp_state state)
{
	if (state >= ARRAY_SIZE(srdma_qp_state_names))
		return "?";
	return srdma_qp_state_names[state];
}

static int srdma_qp_check_init(struct srdma_dev *sdev,
			       const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
	case IB_QPT_GSI:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	/* An SRQ serves RC, UC and UD QPs, not QP1 (IBTA 10.2.9.1). */
	if (init->srq && init->qp_type == IB_QPT_GSI)
		return -EINVAL;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > sdev->attr.max_qp_wr ||
	    cap->max_recv_wr > sdev->attr.max_qp_wr ||
	    cap->max_send_sge > SRDMA_MAX_SEND_SGE ||
	    cap->max_recv_sge > SRDMA_MAX_RECV_SGE ||
	    cap->max_inline_data > SRDMA_MAX_INLINE)
		return -EINVAL;
	return 0;
}

/*
 * Size and allocate one work queue. The granted capacities, which may
 * exceed the requested ones, are written back to @wr, @sge and @inl.
 */
static int srdma_wq_init(struct srdma_wq *wq, struct ib_udata *udata,
			 u32 *wr, u32 *sge, u32 *inl, bool send)
{
	struct srdma_wq_geom g;
	int err;

	spin_lock_init(&wq->lock);
	if (!srdma_wq_geometry(*wr, *sge, inl ? *inl : 0, send,
			       send ? SRDMA_MAX_SEND_SGE : SRDMA_MAX_RECV_SGE,
			       SRDMA_MAX_INLINE, &g))
		return -EINVAL;
	err = srdma_ring_init(&wq->ring, udata, g.num, g.stride);
	if (err)
		return err;
	wq->max_sge = g.max_sge;
	wq->max_inline = g.max_inline;
	*wr = g.num;
	*sge = g.max_sge;
	if (inl)
		*inl = g.max_inline;
	return 0;
}

static int srdma_qp_alloc_qpn(struct srdma_dev *sdev, struct srdma_qp *qp,
			      enum ib_qp_type type)
{
	u32 qpn;
	int err;

	if (type == IB_QPT_GSI) {
		err = xa_insert_irq(&sdev->qp_xa, SRDMA_GSI_QPN, qp, GFP_KERNEL);
		qpn = SRDMA_GSI_QPN;
	} else {
		err = xa_alloc_cyclic_irq(&sdev->qp_xa, &qpn, qp,
					  XA_LIMIT(SRDMA_GSI_QPN + 1,
						   SRDMA_QPN_MAX),
					  &sdev->qpn_next, GFP_KERNEL);
	}
	if (err < 0)
		return err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

static void srdma_qp_free_transport(struct srdma_qp *qp)
{
	srdma_txg_release(qp->txg);
	kvfree(qp->sq_shadow);
	kvfree(qp->sq_kreg);
	kfree(qp->resp.rwqe);
	kfree(qp->resp.res);
}

/*
 * Kernel-side copies of the SQ's WQEs and of one receive WQE; for a
 * connected QP, the gauge of its packets in flight.
 */
static int srdma_qp_alloc_transport(struct srdma_qp *qp,
				    enum ib_qp_type type)
{
	if (type == IB_QPT_RC || type == IB_QPT_UC) {
		qp->txg = srdma_txg_alloc(qp);
		if (!qp->txg)
			return -ENOMEM;
	}
	qp->sq_shadow_stride = ALIGN(offsetof(struct srdma_swqe, wqe) +
				     qp->sq.ring.stride, 8);
	qp->sq_shadow = kvcalloc(qp->sq.ring.num, qp->sq_shadow_stride,
				 GFP_KERNEL);
	qp->resp.rwqe = kzalloc(qp->ibqp.srq ?
				to_ssrq(qp->ibqp.srq)->rq.ring.stride :
				qp->rq.ring.stride, GFP_KERNEL);
	if (!qp->is_user)
		qp->sq_kreg = kvcalloc(qp->sq.ring.num, sizeof(*qp->sq_kreg),
				       GFP_KERNEL);
	if (!qp->sq_shadow || !qp->resp.rwqe ||
	    (!qp->is_user && !qp->sq_kreg)) {
		srdma_qp_free_transport(qp);
		return -ENOMEM;
	}
	return 0;
}

static int srdma_qp_copy_resp(struct srdma_qp *qp, struct ib_udata *udata)
{
	struct srdma_create_qp_resp resp = {};

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	resp.max_inline_data = qp->sq.max_inline;
	srdma_ring_info(&qp->sq.ring, &resp.sq);
	srdma_ring_info(&qp->rq.ring, &resp.rq);
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/**
 * srdma_create_qp() - Create a queue pair in the RESET state
 * @ibqp: the core's QP
 * @init: requested type, queues and capacities; the granted capacities
 *	are written back to init->cap
 * @udata: the process's udata, or NULL for an in-kernel QP
 *
 * Context: process context; may sleep.
 * Return: 0, -EOPNOTSUPP for an unsupported type or flag, -EINVAL for
 * capacities over the device limits, -ENOMEM.
 */
int srdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibqp->device);
	struct srdma_qp *qp = to_sqp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	int err, i;

	err = srdma_qp_check_init(sdev, init);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->qp_cnt) > sdev->attr.max_qp) {
		err = -ENOMEM;
		goto err_dec;
	}

	spin_lock_init(&qp->lock);
	spin_lock_init(&qp->resp_lock);
	qp->state = IB_QPS_RESET;
	qp->is_user = !!udata;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->event = -1;
	qp->err_status = IB_WC_WR_FLUSH_ERR;
	timer_setup(&qp->retrans_timer, srdma_comp_timeout, 0);
	timer_setup(&qp->rnr_timer, srdma_comp_rnr_timeout, 0);
	timer_setup(&qp->probe_timer, srdma_req_probe_timeout, 0);
	tasklet_setup(&qp->tx_tasklet, srdma_qp_tasklet);
	INIT_LIST_HEAD(&qp->sqpoll.entry);
	qp->sqpoll.sample_cpu = -1;
	for (i = 0; i < SRDMA_TX_STREAMS; i++)
		skb_queue_head_init(&qp->tx[i].q);

	err = srdma_wq_init(&qp->sq, udata, &cap->max_send_wr,
			    &cap->max_send_sge, &cap->max_inline_data, true);
	if (err)
		goto err_dec;
	if (init->srq) {
		/* Receives come from the SRQ: the QP has no RQ ring. */
		spin_lock_init(&qp->rq.lock);
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	} else {
		err = srdma_wq_init(&qp->rq, udata, &cap->max_recv_wr,
				    &cap->max_recv_sge, NULL, false);
		if (err)
			goto err_destroy_sq;
	}

	err = srdma_qp_alloc_transport(qp, init->qp_type);
	if (err)
		goto err_destroy_rq;
	err = srdma_udb_qp_init(qp, udata);
	if (err)
		goto err_free_transport;

	if (udata) {
		err = srdma_qp_copy_resp(qp, udata);
		if (err)
			goto err_release_udb;
	}

	/*
	 * Last, since nothing may fail after it: from here on, packets and
	 * doorbells find the QP, and only destroy may take it away.
	 */
	err = srdma_qp_alloc_qpn(sdev, qp, init->qp_type);
	if (err)
		goto err_release_udb;
	srdma_qp_dbg(qp, "created, sq %u x %u B, rq %u x %u B\n",
		     qp->sq.ring.num, qp->sq.ring.stride,
		     qp->rq.ring.num, qp->rq.ring.stride);
	return 0;

err_release_udb:
	srdma_udb_qp_release(qp);
err_free_transport:
	srdma_qp_free_transport(qp);
err_destroy_rq:
	srdma_ring_destroy(&qp->rq.ring);
err_destroy_sq:
	srdma_ring_destroy(&qp->sq.ring);
err_dec:
	atomic_dec(&sdev->qp_cnt);
	return err;
}

/**
 * srdma_destroy_qp() - Destroy a queue pair
 * @ibqp: the core's QP
 * @udata: unused
 *
 * Outstanding work requests are discarded without completions, as for the
 * RESET state.
 *
 * Context: process context.
 * Return: 0.
 */
int srdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibqp->device);
	struct srdma_qp *qp = to_sqp(ibqp);
	int i;

	spin_lock_bh(&qp->lock);
	spin_lock(&qp->resp_lock);
	qp->dead = true;
	spin_unlock(&qp->resp_lock);
	spin_unlock_bh(&qp->lock);
	/* Packets still in flight stop kicking the QP (srdma_txg.c). */
	srdma_txg_detach(qp->txg);
	/* No new packet finds the QP; wait for those being processed. */
	srdma_mcast_detach_qp(qp);
	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
	synchronize_rcu();
	/* Nor a doorbell by eventfd; wait for the passes of those before. */
	srdma_udb_qp_release(qp);
	del_timer_sync(&qp->retrans_timer);
	del_timer_sync(&qp->rnr_timer);
	del_timer_sync(&qp->probe_timer);
	srdma_sqpoll_stop(qp);
	tasklet_kill(&qp->tx_tasklet);
	for (i = 0; i < SRDMA_TX_STREAMS; i++) {
		skb_queue_purge(&qp->tx[i].q);
		srdma_dst_cache_release(&qp->tx[i].dst);
	}

	srdma_qp_free_transport(qp);
	srdma_ring_destroy(&qp->rq.ring);
	srdma_ring_destroy(&qp->sq.ring);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	atomic_dec(&sdev->qp_cnt);
	return 0;
}

/*
 * Complete every WQE between the consumer and the producer of a ring in
 * error, in order (IBTA 10.3.1: in the error state every outstanding and
 * newly posted work request completes in error). The WQE that caused the
 * error, if it is in this queue, gets its own status, the others
 * IB_WC_WR_FLUSH_ERR.
 */
static void srdma_wq_flush(struct srdma_qp *qp, bool send)
{
	struct srdma_ring *r = send ? &qp->sq.ring : &qp->rq.ring;
	struct ib_cq *ibcq = send ? qp->ibqp.send_cq : qp->ibqp.recv_cq;
	struct srdma_cqe cqe = { .qp_num = qp->ibqp.qp_num };
	u32 prod;

	lockdep_assert_held(send ? &qp->lock : &qp->resp_lock);
	if (!send && qp->ibqp.srq) {
		/* Only the WQE the QP took from its SRQ is the QP's. */
		if (qp->resp.rwqe_valid) {
			cqe.wr_id = qp->resp.rwqe->wr_id;
			cqe.status = IB_WC_WR_FLUSH_ERR;
			cqe.opcode = IB_WC_RECV;
			if (srdma_cq_post(to_scq(ibcq), &cqe, false))
				qp->resp.rwqe_valid = false;
		}
		return;
	}
	prod = smp_load_acquire(&r->ctrl->prod);	/* WQEs below prod */
	if (!srdma_ring_index_ok(r->own, prod, r->num, false)) {
		/*
		 * A process wrote a corrupt index: flush what is certain,
		 * the send WQEs the kernel copied already.
		 */
		srdma_qp_dbg(qp, "corrupt producer index %u (own %u)\n",
			     prod, r->own);
		prod = send ? qp->req.fetch : r->own;
	}
	while (r->own != prod) {
		const void *slot = r->buf + srdma_ring_slot(r->own, r->num) *
				   r->stride;

		cqe.status = IB_WC_WR_FLUSH_ERR;
		if (send) {
			/* Fetched WQEs are read from the kernel's copy. */
			if ((s32)(qp->req.fetch - r->own) > 0)
				slot = &srdma_swqe_at(qp, r->own)->wqe;
			if (r->own == qp->err_idx)
				cqe.status = qp->err_status;
			cqe.wr_id = READ_ONCE(((const struct srdma_send_wqe *)slot)->wr_id);
			cqe.opcode = IB_WC_SEND;
		} else {
			cqe.wr_id = READ_ONCE(((const struct srdma_recv_wqe *)slot)->wr_id);
			cqe.opcode = IB_WC_RECV;
		}
		r->own++;
		/*
		 * Slot read (the CQE is built) before it is handed back, and
		 * handed back before the completion is visible, as for any
		 * completion: a process that sees it may post at once.
		 */
		smp_store_release(&r->ctrl->cons, r->own);
		if (!srdma_cq_post(to_scq(ibcq), &cqe, false))
			break;	/* the CQ overflowed: it is in error now */
	}
	if (send) {
		qp->req.fetch = r->own;
		qp->req.cur = r->own;
	} else {
		qp->resp.rwqe_valid = false;
	}
}

/**
 * srdma_qp_flush() - Flush both queues of a QP in the error state
 * @qp: the QP
 *
 * Context: qp->lock and qp->resp_lock held.
 */
void srdma_qp_flush(struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->resp_lock);
	if (qp->state != IB_QPS_ERR)
		return;
	/*
	 * The SQ first: the WQE that failed completes with its error before
	 * the flushed receives, also where both queues share one CQ.
	 */
	srdma_wq_flush(qp, true);
	srdma_wq_flush(qp, false);
}

/*
 * Entering ERR from another state. A QP with an SRQ takes no more WQEs from
 * it once in ERR, and the one it held is flushed here: the affiliated
 * asynchronous event Last WQE Reached says so to the consumer, which may
 * then reap the QP's last completions and destroy it (ib_drain_qp() of
 * 6.11 and later waits for the event on such a QP).
 */
static void srdma_qp_enter_error(struct srdma_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	lockdep_assert_held(&qp->resp_lock);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	/* Whatever the responder asked for is done (srdma_resp_end()). */
	WRITE_ONCE(qp->resp.ending, false);
	WRITE_ONCE(qp->sq.ring.ctrl->kstate, SRDMA_RING_KSTATE_ERROR);
	if (qp->rq.ring.ctrl)
		WRITE_ONCE(qp->rq.ring.ctrl->kstate, SRDMA_RING_KSTATE_ERROR);
	del_timer(&qp->retrans_timer);
	del_timer(&qp->rnr_timer);
	del_timer(&qp->probe_timer);
	srdma_qp_flush(qp);
	if (qp->ibqp.srq) {
		int ev = READ_ONCE(qp->event), set;

		/*
		 * After the flush: the event tells that the QP's last receive
		 * completion is in the CQ. A cmpxchg(), as a raise on another
		 * CPU may take the pending event meanwhile (its xchg() and
		 * this one order the completion before the flag).
		 */
		do {
			set = (ev < 0 ? SRDMA_QP_EV_NONE : ev) |
			      SRDMA_QP_EV_LAST_WQE;
		} while (!try_cmpxchg(&qp->event, &ev, set));
	}
}

static void __srdma_qp_fatal(struct srdma_qp *qp, u32 idx,
			     enum ib_wc_status status, bool qp_fatal)
{
	struct srdma_resp *resp = &qp->resp;

	lockdep_assert_held(&qp->lock);
	if (qp->state == IB_QPS_ERR)
		return;
	srdma_qp_dbg(qp, "error: %s on WQE %u\n", ib_wc_status_msg(status),
		     idx);
	qp->err_idx = idx;
	qp->err_status = status;
	spin_lock(&qp->resp_lock);
	/*
	 * A responder error names the QP's event, unless a receive WQE
	 * completed with it (C9-222.1.1: the completion reports it) or the
	 * error is one no completion reports (IB_EVENT_QP_FATAL).
	 */
	if (qp_fatal || resp->ending_fatal)
		WRITE_ONCE(qp->event, IB_EVENT_QP_FATAL);
	else if (resp->fatal && !resp->wqe_err)
		WRITE_ONCE(qp->event, resp->ack_syndrome ==
			   SRDMA_NAK_SYN(SRDMA_NAK_REMOTE_ACCESS) ?
			   IB_EVENT_QP_ACCESS_ERR : IB_EVENT_QP_REQ_ERR);
	srdma_qp_enter_error(qp);
	spin_unlock(&qp->resp_lock);
}

/**
 * srdma_qp_fatal() - The transport found an error: the QP enters ERR
 * @qp: the QP
 * @idx: SQ index of the WQE to complete with @status (the others flush)
 * @status: completion status of that WQE
 *
 * IBTA 10.3.1, 10.8.3: the WQE that failed completes with its error, every
 * other outstanding WQE with IB_WC_WR_FLUSH_ERR. A responder error (one
 * the QP detected on a request) that no receive completion reports also
 * raises its asynchronous event.
 *
 * The responder, under qp->resp_lock alone, cannot call this: it marks
 * the QP (resp.ending) and srdma_qp_resp_ended() calls this once the lock
 * is dropped. Between the two the responder takes no packet, and the
 * requester may send what it had built, as it could have a moment before
 * the error.
 *
 * Context: qp->lock held, qp->resp_lock not held (taken here).
 */
void srdma_qp_fatal(struct srdma_qp *qp, u32 idx, enum ib_wc_status status)
{
	__srdma_qp_fatal(qp, idx, status, false);
}

/**
 * srdma_qp_fatal_event() - An error no completion reports: the QP enters ERR
 * @qp: the QP
 * @idx: SQ index of the WQE to complete with @status (the others flush)
 * @status: completion status of that WQE
 *
 * As srdma_qp_fatal(), and the QP raises IB_EVENT_QP_FATAL (a corrupt
 * ring index, a completion its CQ could not take): the QP's owner learns
 * of the error from the event.
 *
 * Context: qp->lock held, qp->resp_lock not held (taken here).
 */
void srdma_qp_fatal_event(struct srdma_qp *qp, u32 idx,
			  enum ib_wc_status status)
{
	__srdma_qp_fatal(qp, idx, status, true);
}

/**
 * srdma_resp_end() - The responder found an error that ends the QP
 * @qp: the QP
 * @fatal: the QP's event is IB_EVENT_QP_FATAL (a corrupt RQ ring); else
 *	that of the NAK sent (resp.fatal), or none
 *
 * The QP enters ERR once qp->resp_lock is dropped
 * (srdma_qp_resp_ended()); meanwhile the responder takes no packet.
 *
 * Context: qp->resp_lock held.
 */
void srdma_resp_end(struct srdma_qp *qp, bool fatal)
{
	lockdep_assert_held(&qp->resp_lock);
	WRITE_ONCE(qp->resp.ending, true);
	if (fatal)
		qp->resp.ending_fatal = true;
}

/**
 * srdma_qp_resp_ended() - Move the QP to ERR if its responder asked
 * @qp: the QP
 *
 * Called by whoever dropped qp->resp_lock after a responder's work.
 * Every outstanding WQE is flushed (IB_WC_WR_FLUSH_ERR).
 *
 * Context: process or softirq context; no lock of the QP held.
 */
void srdma_qp_resp_ended(struct srdma_qp *qp)
{
	if (likely(!READ_ONCE(qp->resp.ending)))
		return;
	spin_lock_bh(&qp->lock);
	/*
	 * Again under the lock: every clearing of the flag (the move to ERR,
	 * RESET) holds it, so the flag still set means that no other error
	 * or modify came first. A QP being destroyed stays as it is.
	 */
	if (READ_ONCE(qp->resp.ending) && !qp->dead)
		srdma_qp_fatal(qp, qp->sq.ring.own, IB_WC_WR_FLUSH_ERR);
	spin_unlock_bh(&qp->lock);
}

/*
 * RESET discards every WQE (IBTA 10.3.1) and restarts the transport. The
 * WQE a QP took from its SRQ for a message in progress is not the QP's to
 * discard: it completes flushed, as in ERR, so that its buffer goes back to
 * the consumer (the provider keeps an SRQ QP's receive completions when it
 * cleans the CQ of the QP's entries).
 */
static void srdma_qp_reset(struct srdma_qp *qp)
{
	struct srdma_ring *rings[] = { &qp->sq.ring, &qp->rq.ring };
	int i;

	lockdep_assert_held(&qp->lock);
	lockdep_assert_held(&qp->resp_lock);
	if (qp->ibqp.srq)
		srdma_wq_flush(qp, false);
	for (i = 0; i < ARRAY_SIZE(rings); i++) {
		if (!rings[i]->ctrl)
			continue;	/* the RQ of a QP with an SRQ */
		rings[i]->own = 0;
		WRITE_ONCE(rings[i]->ctrl->cons, 0);
		WRITE_ONCE(rings[i]->ctrl->kstate, 0);
		/* A process resets its own producer index; ours we reset. */
		if (!rings[i]->mmap)
			WRITE_ONCE(rings[i]->ctrl->prod, 0);
	}
	del_timer(&qp->retrans_timer);
	del_timer(&qp->rnr_timer);
	del_timer(&qp->probe_timer);
	memset(&qp->req, 0, sizeof(qp->req));
	qp->resp.cur_op = 0;
	qp->resp.rwqe_valid = false;
	qp->resp.ack_pending = false;
	qp->resp.fatal = false;
	WRITE_ONCE(qp->resp.ending, false);
	qp->resp.ending_fatal = false;
	qp->resp.wqe_err = false;
	qp->resp.nak_psn_sent = false;
	if (qp->resp.res)
		memset(qp->resp.res, 0, qp->resp.nres * sizeof(*qp->resp.res));
	qp->resp.res_busy = false;
	qp->err_status = IB_WC_WR_FLUSH_ERR;
}

/* Values that ib_modify_qp_is_ok() does not check (IBTA 11.2.5.2). */
static int srdma_qp_check_attr(struct srdma_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);

	if (mask & (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | IB_QP_RATE_LIMIT))
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SRDMA_MAX_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 ||
	     attr->path_mtu > READ_ONCE(sdev->mtu)))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > sdev->attr.max_qp_init_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > sdev->attr.max_qp_rd_atom)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SRDMA_QPN_MAX)
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		return -EINVAL;
	return 0;
}

/* Context: qp->lock and qp->resp_lock held. */
static void srdma_qp_apply_attr(struct srdma_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->lock);
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & SRDMA_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & SRDMA_PSN_MASK;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
}

static void srdma_qp_event(struct srdma_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * srdma_qp_raise_event() - Raise an event the transport left pending
 * @qp: the QP
 *
 * Context: any; neither lock of the QP held.
 */
void srdma_qp_raise_event(struct srdma_qp *qp)
{
	int ev;

	if (READ_ONCE(qp->event) < 0)
		return;
	ev = xchg(&qp->event, -1);
	if (ev < 0)
		return;
	if ((ev & SRDMA_QP_EV_TYPE) != SRDMA_QP_EV_NONE)
		srdma_qp_event(qp, ev & SRDMA_QP_EV_TYPE);
	/* After the error's own event, as hardware reports them. */
	if (ev & SRDMA_QP_EV_LAST_WQE)
		srdma_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/*
 * Resources that modify_qp may need, allocated before qp->lock is taken:
 * the responder's READ/atomic resources and the address vector.
 */
struct srdma_modify_prep {
	struct srdma_rd_res *res;
	u32 nres;
	struct srdma_av av;
	bool have_av;
};

static int srdma_modify_prepare(struct srdma_qp *qp, struct ib_qp_attr *attr,
				int mask, struct srdma_modify_prep *prep)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	u32 dqpn = mask & IB_QP_DEST_QPN ? attr->dest_qp_num :
					   qp->attr.dest_qp_num;
	int err;

	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		/*
		 * None: every READ and atomic is an invalid request (C9-86).
		 * kcalloc() of none is ZERO_SIZE_PTR, not NULL.
		 */
		prep->nres = attr->max_dest_rd_atomic;
		prep->res = kcalloc(prep->nres, sizeof(*prep->res),
				    GFP_KERNEL);
		if (!prep->res)
			return -ENOMEM;
	}
	if (mask & IB_QP_AV) {
		err = srdma_av_from_ah_attr(sdev, &prep->av, &attr->ah_attr,
					    qp->ibqp.qp_num, dqpn);
		if (err) {
			kfree(prep->res);
			return err;
		}
		prep->have_av = true;
	}
	return 0;
}

static void srdma_modify_commit(struct srdma_qp *qp, enum ib_qp_state cur,
				enum ib_qp_state next,
				struct srdma_modify_prep *prep)
{
	lockdep_assert_held(&qp->lock);
	lockdep_assert_held(&qp->resp_lock);
	if (prep->res) {
		/* The old resources go, with any responses they had left. */
		swap(qp->resp.res, prep->res);
		qp->resp.nres = prep->nres;
		qp->resp.res_next = 0;
		qp->resp.res_first = 0;
		qp->resp.res_busy = false;
	}
	if (prep->have_av) {
		qp->av = prep->av;
		WRITE_ONCE(qp->av_gen, qp->av_gen + 1);
	}
	if (cur == next && next != IB_QPS_ERR)
		return;

	switch (next) {
	case IB_QPS_RESET:
		srdma_qp_reset(qp);
		break;
	case IB_QPS_RTR:
		qp->resp.epsn = qp->attr.rq_psn;
		qp->resp.msn = 0;
		break;
	case IB_QPS_RTS:
		if (cur == IB_QPS_RTR) {
			qp->req.psn = qp->attr.sq_psn;
			qp->req.max_psn = qp->attr.sq_psn;
			qp->req.una = qp->attr.sq_psn;
			qp->req.ack_psn = srdma_psn_add(qp->attr.sq_psn, -1);
			qp->req.fetch = qp->sq.ring.own;
			qp->req.cur = qp->sq.ring.own;
		}
		qp->req.retry = qp->attr.retry_cnt;
		qp->req.rnr_retry = qp->attr.rnr_retry;
		qp->req.rto_backoff = 0;
		qp->req.draining = false;
		/* A new sq_psn would end a measurement at random. */
		qp->req.rtt_timing = false;
		qp->req.rtt_dup_wait = false;
		qp->req.rtt_tick = jiffies - 1;
		if (!qp->req.cwnd)
			qp->req.cwnd = SRDMA_CWND_INIT;
		break;
	case IB_QPS_SQD:
		/* Over at once when no message is in progress. */
		qp->req.draining = true;
		srdma_req_drained(qp);
		break;
	case IB_QPS_ERR:
		/* Asked for: no WQE failed, every one is flushed. */
		if (cur != IB_QPS_ERR) {
			qp->err_status = IB_WC_WR_FLUSH_ERR;
			srdma_qp_enter_error(qp);
		} else {
			srdma_qp_flush(qp);
		}
		break;
	default:
		break;
	}
}

/**
 * srdma_modify_qp() - Change QP attributes and state
 * @ibqp: the core's QP
 * @attr: new attributes
 * @mask: IB_QP_* bits naming the valid fields of @attr
 * @udata: must carry no driver data
 *
 * The transition and the attribute mask are checked against the IBTA
 * table (ib_modify_qp_is_ok()), the values against the device limits.
 * Entering RESET discards all WQEs; entering ERR flushes them; RTR and RTS
 * start the responder and the requester at the PSNs given.
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad transition or value, -EOPNOTSUPP for an
 * attribute the device does not implement, -ENOMEM.
 */
int srdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_modify_prep prep = {};
	enum ib_qp_state cur, next;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	err = srdma_qp_check_attr(qp, attr, mask);
	if (err)
		return err;
	/*
	 * IBTA 10.2.5: Q_Keys with the high bit set are controlled; only a
	 * privileged consumer may give one to its QP.
	 */
	if (udata && (mask & IB_QP_QKEY) && (attr->qkey & IB_QP_SET_QKEY) &&
	    !capable(CAP_NET_RAW))
		return -EPERM;
	err = srdma_modify_prepare(qp, attr, mask, &prep);
	if (err)
		return err;

	spin_lock_bh(&qp->lock);
	spin_lock(&qp->resp_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		spin_unlock(&qp->resp_lock);
		spin_unlock_bh(&qp->lock);
		kfree(prep.res);
		srdma_qp_dbg(qp, "refused %s -> %s, mask %#x\n",
			     srdma_qp_state_name(cur),
			     srdma_qp_state_name(next), mask);
		return -EINVAL;
	}
	srdma_qp_apply_attr(qp, attr, mask);
	WRITE_ONCE(qp->state, next);
	srdma_modify_commit(qp, cur, next, &prep);
	spin_unlock(&qp->resp_lock);
	spin_unlock_bh(&qp->lock);

	kfree(prep.res);	/* the replaced resources, if any */
	srdma_qp_raise_event(qp);
	if (cur != next)
		srdma_qp_dbg(qp, "%s -> %s\n", srdma_qp_state_name(cur),
			     srdma_qp_state_name(next));
	/* WQEs posted before RTS may go now. */
	if (next == IB_QPS_RTS)
		srdma_qp_kick(qp);
	return 0;
}

/**
 * srdma_query_qp() - Report QP attributes
 * @ibqp: the core's QP
 * @attr: filled with the current attributes
 * @mask: attributes asked for (all are filled)
 * @init: filled with the creation attributes
 *
 * Context: process context.
 * Return: 0.
 */
int srdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct srdma_qp *qp = to_sqp(ibqp);

	memset(init, 0, sizeof(*init));
	spin_lock_bh(&qp->lock);
	*attr = qp->attr;
	/* The copy does not own the GID reference of qp->attr.ah_attr. */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = qp->state == IB_QPS_SQD && qp->req.draining;
	spin_unlock_bh(&qp->lock);

	attr->cap.max_send_wr = qp->sq.ring.num;
	attr->cap.max_recv_wr = qp->rq.ring.num;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;

	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = 1;
	return 0;
}

