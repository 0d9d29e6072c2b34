// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues (IBTA 10.2.9): one ring of receive WQEs that any
 * number of QPs (RC, UC, UD) take from. The ring has the layout and the
 * rules of a QP's RQ (softrdma-abi.h); the consumer side is shared, so a QP
 * takes a WQE under srq->lock, copies it into its own responder state and
 * hands the slot back at once: from then on the WQE belongs to that QP,
 * which completes it into its own receive CQ (or flushes it, should the QP
 * enter the error state before the message is complete).
 *
 * The limit (ibv_modify_srq(3) with IBV_SRQ_LIMIT) arms a one-shot
 * IB_EVENT_SRQ_LIMIT_REACHED for when fewer WQEs than the limit remain.
 * A corrupt producer index written by a process puts the SRQ in the error
 * state (IB_EVENT_SRQ_ERR); the QPs that then find it empty see it so.
 */

#include "srdma.h"

static void srdma_srq_event(struct srdma_srq *srq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = type,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * srdma_create_srq() - Create a shared receive queue
 * @ibsrq: the core's SRQ
 * @init: type and capacities; the granted capacities are written back
 * @udata: a process's udata, or NULL
 *
 * Context: process context.
 * Return: 0, -EOPNOTSUPP for an XRC or tag-matching SRQ, -EINVAL for
 * capacities over the device limits, -ENOMEM.
 */
int srdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibsrq->device);
	struct srdma_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *a = &init->attr;
	struct srdma_create_srq_resp resp = {};
	struct srdma_wq_geom g;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (a->max_wr > sdev->attr.max_srq_wr ||
	    a->max_sge > sdev->attr.max_srq_sge ||
	    a->srq_limit > a->max_wr)
		return -EINVAL;
	if (atomic_inc_return(&sdev->srq_cnt) > sdev->attr.max_srq) {
		err = -ENOMEM;
		goto err_dec;
	}
	if (!srdma_wq_geometry(max_t(u32, a->max_wr, 1), a->max_sge, 0, false,
			       SRDMA_MAX_RECV_SGE, 0, &g)) {
		err = -EINVAL;
		goto err_dec;
	}
	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->rq.lock);
	err = srdma_ring_init(&srq->rq.ring, udata, g.num, g.stride);
	if (err)
		goto err_dec;
	srq->rq.max_sge = g.max_sge;
	srq->limit = a->srq_limit;
	a->max_wr = g.num;
	a->max_sge = g.max_sge;

	if (udata) {
		srdma_ring_info(&srq->rq.ring, &resp.ring);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	return 0;

err_ring:
	srdma_ring_destroy(&srq->rq.ring);
err_dec:
	atomic_dec(&sdev->srq_cnt);
	return err;
}

/**
 * srdma_modify_srq() - Arm the limit event
 * @ibsrq: the core's SRQ
 * @attr: srq_limit (IB_SRQ_LIMIT)
 * @mask: IB_SRQ_LIMIT; IB_SRQ_MAX_WR (resizing) is not supported
 * @udata: must carry no driver data
 *
 * Context: process context.
 * Return: 0, -EINVAL for a limit over the SRQ's size, -EOPNOTSUPP for a
 * resize.
 */
int srdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	if (mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (attr->srq_limit > srq->rq.ring.num)
		return -EINVAL;
	spin_lock_bh(&srq->lock);
	srq->limit = attr->srq_limit;
	spin_unlock_bh(&srq->lock);
	return 0;
}

/**
 * srdma_query_srq() - Report an SRQ's attributes
 * @ibsrq: the core's SRQ
 * @attr: filled in; srq_limit is 0 once the limit event fired
 *
 * Return: 0.
 */
int srdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.ring.num;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/**
 * srdma_destroy_srq() - Destroy a shared receive queue
 * @ibsrq: the core's SRQ; no QP uses it any more (the core sees to it)
 * @udata: unused
 *
 * Return: 0.
 */
int srdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);

	srdma_ring_destroy(&srq->rq.ring);
	atomic_dec(&to_sdev(ibsrq->device)->srq_cnt);
	return 0;
}

/**
 * srdma_post_srq_recv() - Post receive WQEs to an in-kernel SRQ
 * @ibsrq: the core's SRQ
 * @wr: the work requests
 * @bad_wr: set to the first one not posted
 *
 * Context: any.
 * Return: 0, -EINVAL for a malformed request or a process's SRQ, -ENOMEM
 * when the SRQ is full.
 */
int srdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->rq.ring.mmap) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->rq.lock, flags);
	for (; wr; wr = wr->next) {
		err = srdma_recv_wqe_put(&srq->rq, wr);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}

/**
 * srdma_srq_take() - Take the next receive WQE of an SRQ
 * @srq: the SRQ
 * @w: where the WQE (header and SGEs) is copied; room for one ring entry
 *
 * Context: softirq or bottom halves disabled (under the taking QP's
 * qp->resp_lock).
 * Return: 1 taken, 0 the SRQ is empty, -EPROTO when the SRQ is in the
 * error state, -EINVAL for a malformed WQE (which is consumed).
 */
int srdma_srq_take(struct srdma_srq *srq, struct srdma_recv_wqe *w)
{
	struct srdma_ring *r = &srq->rq.ring;
	bool limit = false, error = false;
	u32 prod;
	int ret = 1;

	spin_lock(&srq->lock);
	if (srq->error) {
		ret = -EPROTO;
		goto out;
	}
	prod = smp_load_acquire(&r->ctrl->prod);	/* WQEs below prod */
	if (!srdma_ring_index_ok(r->own, prod, r->num, false)) {
		srq->error = true;
		WRITE_ONCE(r->ctrl->kstate, SRDMA_RING_KSTATE_ERROR);
		error = true;
		ret = -EPROTO;
		goto out;
	}
	if (prod == r->own) {
		ret = 0;
		goto out;
	}
	/* The one read of the entry: the process may rewrite it any time. */
	memcpy(w, r->buf + srdma_ring_slot(r->own, r->num) * r->stride,
	       r->stride);
	r->own++;
	/* Slot copied before the producer may reuse it. */
	smp_store_release(&r->ctrl->cons, r->own);
	if (srq->limit && prod - r->own < srq->limit) {
		srq->limit = 0;
		limit = true;
	}
	if (w->num_sge > srq->rq.max_sge)
		ret = -EINVAL;
out:
	spin_unlock(&srq->lock);
	if (limit)
		srdma_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	if (error)
		srdma_srq_event(srq, IB_EVENT_SRQ_ERR);
	return ret;
}
