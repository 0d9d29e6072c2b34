// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, the IBTA state machine (10.3.1) driven by
 * modify_qp, and flushing of outstanding work requests in the error state.
 *
 * Lock order: qp->state_lock, then a work queue's lock, then a CQ's lock.
 */

#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

#define SRDMA_PSN_MASK		0xffffff
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

#define srdma_qp_dbg(qp, fmt, ...) do {					\
	const struct srdma_qp *_qp = (qp);					\
										\
	ibdev_dbg_ratelimited(_qp->ibqp.device, "qp#%u %s: " fmt,		\
			      _qp->ibqp.qp_num, __func__, ##__VA_ARGS__);	\
} while (0)

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
	if (init->create_flags || init->srq)
		return -EOPNOTSUPP;
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
	int err;

	err = srdma_qp_check_init(sdev, init);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->qp_cnt) > sdev->attr.max_qp) {
		err = -ENOMEM;
		goto err_dec;
	}

	spin_lock_init(&qp->state_lock);
	qp->state = IB_QPS_RESET;
	qp->is_user = !!udata;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;

	err = srdma_wq_init(&qp->sq, udata, &cap->max_send_wr,
			    &cap->max_send_sge, &cap->max_inline_data, true);
	if (err)
		goto err_dec;
	err = srdma_wq_init(&qp->rq, udata, &cap->max_recv_wr,
			    &cap->max_recv_sge, NULL, false);
	if (err)
		goto err_destroy_sq;

	err = srdma_qp_alloc_qpn(sdev, qp, init->qp_type);
	if (err)
		goto err_destroy_rq;

	if (udata) {
		err = srdma_qp_copy_resp(qp, udata);
		if (err)
			goto err_free_qpn;
	}
	srdma_qp_dbg(qp, "created, sq %u x %u B, rq %u x %u B\n",
		     qp->sq.ring.num, qp->sq.ring.stride,
		     qp->rq.ring.num, qp->rq.ring.stride);
	return 0;

err_free_qpn:
	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
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

	xa_erase_irq(&sdev->qp_xa, ibqp->qp_num);
	srdma_ring_destroy(&qp->rq.ring);
	srdma_ring_destroy(&qp->sq.ring);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	atomic_dec(&sdev->qp_cnt);
	return 0;
}

/*
 * Complete every WQE between the consumer and the producer of @wq with
 * IB_WC_WR_FLUSH_ERR, in order (IBTA 10.3.1: in the error state every
 * outstanding and newly posted work request completes in error).
 */
static void srdma_wq_flush(struct srdma_qp *qp, struct srdma_wq *wq,
			   struct ib_cq *ibcq, bool send)
{
	struct srdma_ring *ring = &wq->ring;
	struct srdma_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
	};
	unsigned long flags;
	u32 prod;

	spin_lock_irqsave(&wq->lock, flags);
	prod = smp_load_acquire(&ring->ctrl->prod);	/* WQEs below prod */
	if (!srdma_ring_index_ok(ring->own, prod, ring->num, false)) {
		/* A process wrote a corrupt index: flush what is certain. */
		srdma_qp_dbg(qp, "corrupt producer index %u (own %u)\n",
			     prod, ring->own);
		prod = ring->own;
	}
	while (ring->own != prod) {
		const void *slot = ring->buf +
			srdma_ring_slot(ring->own, ring->num) * ring->stride;

		/* Entries may be written concurrently: read each field once. */
		if (send) {
			const struct srdma_send_wqe *wqe = slot;

			cqe.wr_id = READ_ONCE(wqe->wr_id);
			cqe.opcode = IB_WC_SEND;
		} else {
			const struct srdma_recv_wqe *wqe = slot;

			cqe.wr_id = READ_ONCE(wqe->wr_id);
			cqe.opcode = IB_WC_RECV;
		}
		if (!srdma_cq_post(to_scq(ibcq), &cqe, false))
			break;
		ring->own++;
		/* Slot read before it is handed back to the producer. */
		smp_store_release(&ring->ctrl->cons, ring->own);
	}
	spin_unlock_irqrestore(&wq->lock, flags);
}

static void srdma_qp_flush(struct srdma_qp *qp)
{
	srdma_wq_flush(qp, &qp->rq, qp->ibqp.recv_cq, false);
	srdma_wq_flush(qp, &qp->sq, qp->ibqp.send_cq, true);
}

/* RESET discards every WQE (IBTA 10.3.1) and restarts the rings. */
static void srdma_wq_reset(struct srdma_wq *wq)
{
	struct srdma_ring *ring = &wq->ring;
	unsigned long flags;

	spin_lock_irqsave(&wq->lock, flags);
	ring->own = 0;
	WRITE_ONCE(ring->ctrl->cons, 0);
	WRITE_ONCE(ring->ctrl->kstate, 0);
	/* A process resets its own producer index; ours we reset here. */
	if (!ring->mmap)
		WRITE_ONCE(ring->ctrl->prod, 0);
	spin_unlock_irqrestore(&wq->lock, flags);
}

static void srdma_wq_set_error(struct srdma_wq *wq)
{
	WRITE_ONCE(wq->ring.ctrl->kstate, SRDMA_RING_KSTATE_ERROR);
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

/* Context: qp->state_lock held. */
static void srdma_qp_apply_attr(struct srdma_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->state_lock);
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
 * srdma_modify_qp() - Change QP attributes and state
 * @ibqp: the core's QP
 * @attr: new attributes
 * @mask: IB_QP_* bits naming the valid fields of @attr
 * @udata: must carry no driver data
 *
 * The transition and the attribute mask are checked against the IBTA
 * table (ib_modify_qp_is_ok()), the values against the device limits.
 * Entering RESET discards all WQEs; entering ERR flushes them.
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad transition or value, -EOPNOTSUPP for an
 * attribute the device does not implement.
 */
int srdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	unsigned long flags;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	err = srdma_qp_check_attr(qp, attr, mask);
	if (err)
		return err;

	spin_lock_irqsave(&qp->state_lock, flags);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		spin_unlock_irqrestore(&qp->state_lock, flags);
		srdma_qp_dbg(qp, "refused %s -> %s, mask %#x\n",
			     srdma_qp_state_name(cur),
			     srdma_qp_state_name(next), mask);
		return -EINVAL;
	}
	srdma_qp_apply_attr(qp, attr, mask);
	WRITE_ONCE(qp->state, next);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (cur != next)
		srdma_qp_dbg(qp, "%s -> %s\n", srdma_qp_state_name(cur),
			     srdma_qp_state_name(next));
	switch (next) {
	case IB_QPS_RESET:
		srdma_wq_reset(&qp->sq);
		srdma_wq_reset(&qp->rq);
		break;
	case IB_QPS_ERR:
		srdma_wq_set_error(&qp->sq);
		srdma_wq_set_error(&qp->rq);
		srdma_qp_flush(qp);
		break;
	case IB_QPS_SQD:
		/* Nothing is in flight on the wire: the SQ is drained at once. */
		if (cur != next && qp->attr.en_sqd_async_notify)
			srdma_qp_event(qp, IB_EVENT_SQ_DRAINED);
		break;
	default:
		break;
	}
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
	unsigned long flags;

	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->state_lock, flags);
	*attr = qp->attr;
	/* The copy does not own the GID reference of qp->attr.ah_attr. */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cap.max_send_wr = qp->sq.ring.num;
	attr->cap.max_recv_wr = qp->rq.ring.num;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->sq.max_inline;
	attr->sq_draining = 0;

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

static int srdma_recv_wqe_put(struct srdma_wq *wq, const struct ib_recv_wr *wr)
{
	struct srdma_ring *ring = &wq->ring;
	u32 prod = ring->ctrl->prod;
	struct srdma_recv_wqe *wqe;
	struct srdma_sge *sge;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > wq->max_sge)
		return -EINVAL;
	if (srdma_ring_count(prod, ring->own) >= ring->num)
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
 * Context: any context; takes the RQ lock (irqsave).
 * Return: 0, -EINVAL in the RESET state or for a malformed request,
 * -ENOMEM when the RQ is full.
 */
int srdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
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
		if (state == IB_QPS_ERR)
			srdma_wq_flush(qp, &qp->rq, ibqp->recv_cq, false);
		return 0;
	}
	if (state == IB_QPS_RESET) {
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

	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		srdma_wq_flush(qp, &qp->rq, ibqp->recv_cq, false);
	return err;
}

static enum ib_wc_opcode srdma_wr_to_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}

/**
 * srdma_post_send() - Post send work requests
 * @ibqp: the core's QP
 * @wr: list of work requests; NULL from a process (its doorbell: the
 *	WQEs are in its mapped SQ ring)
 * @bad_wr: set to the first request not posted
 *
 * In the error state every request completes with IB_WC_WR_FLUSH_ERR.
 * The transport that executes requests in RTS is not part of this
 * version of the driver: such requests are refused with -EOPNOTSUPP.
 *
 * Context: any context.
 * Return: 0, -EINVAL before RTS, -EOPNOTSUPP in RTS or SQD.
 */
int srdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	struct srdma_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = ibqp->qp_num,
	};

	if (qp->is_user) {
		if (wr) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (state == IB_QPS_ERR)
			srdma_wq_flush(qp, &qp->sq, ibqp->send_cq, true);
		return 0;
	}

	switch (state) {
	case IB_QPS_ERR:
		for (; wr; wr = wr->next) {
			cqe.wr_id = wr->wr_id;
			cqe.opcode = srdma_wr_to_wc_opcode(wr->opcode);
			if (!srdma_cq_post(to_scq(ibqp->send_cq), &cqe, false)) {
				*bad_wr = wr;
				return -ENOMEM;
			}
		}
		return 0;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		*bad_wr = wr;
		return -EOPNOTSUPP;
	default:
		*bad_wr = wr;
		return -EINVAL;
	}
}
