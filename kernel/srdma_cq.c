// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues.
 *
 * The kernel is the only producer of a CQ ring. A process consumes its CQ
 * directly from the mapped ring and arms it through the ring's notify word
 * (see include/uapi/rdma/softrdma-abi.h); an in-kernel consumer goes through
 * srdma_poll_cq() and srdma_req_notify_cq().
 */

#include "srdma.h"

/*
 * The completion handler runs from an irq_work, as a hardware device's
 * would from its interrupt: never under a lock of this driver, so that a
 * handler may poll, re-arm or post right away.
 */
static void srdma_cq_notify_work(struct irq_work *work)
{
	struct srdma_cq *cq = container_of(work, struct srdma_cq, notify_work);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/*
 * The flags of a process's CREATE_CQ command (struct srdma_create_cq_req),
 * which it may send shorter or not at all.
 */
static int srdma_cq_cmd_flags(struct ib_udata *udata, u32 *flags)
{
	struct srdma_create_cq_req cmd = {};
	int err;

	*flags = 0;
	err = srdma_udata_cmd(udata, &cmd, sizeof(cmd));
	if (err)
		return err;
	if (cmd.comp_mask ||
	    cmd.flags & ~(SRDMA_CREATE_CQ_TS_RAW | SRDMA_CREATE_CQ_TS_REAL))
		return -EOPNOTSUPP;
	*flags = cmd.flags;
	return 0;
}

/**
 * srdma_create_cq() - Create a completion queue
 * @ibcq: the core's CQ
 * @attr: requested depth and flags
 * @arg: the process's udata (6.1) or attribute bundle (6.11+), NULL for an
 *	in-kernel CQ
 *
 * Context: process context; may sleep.
 * Return: 0, -EINVAL for an unsupported request (-EOPNOTSUPP for unknown
 * flags), -ENOMEM.
 */
int srdma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SRDMA_CREATE_CQ_ARG *arg)
{
	struct ib_udata *udata = srdma_cq_udata(arg);
	struct srdma_dev *sdev = to_sdev(ibcq->device);
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_create_cq_resp resp = {};
	u32 num;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > sdev->attr.max_cqe)
		return -EINVAL;
	num = srdma_ring_entries(attr->cqe);
	if (!num)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = srdma_cq_cmd_flags(udata, &cq->ts_flags);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->cq_cnt) > sdev->attr.max_cq) {
		err = -ENOMEM;
		goto err_dec;
	}

	spin_lock_init(&cq->lock);
	init_irq_work(&cq->notify_work, srdma_cq_notify_work);
	err = srdma_ring_init(&cq->ring, udata, num, sizeof(struct srdma_cqe));
	if (err)
		goto err_dec;
	ibcq->cqe = num;

	if (udata) {
		resp.comp_mask = SRDMA_CREATE_CQ_RESP_FLAGS;
		srdma_ring_info(&cq->ring, &resp.ring);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_destroy_ring;
	}
	return 0;

err_destroy_ring:
	srdma_ring_destroy(&cq->ring);
err_dec:
	atomic_dec(&sdev->cq_cnt);
	return err;
}

/* Context: cq->lock held. */
static void srdma_cq_set_error(struct srdma_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->error = true;
	WRITE_ONCE(cq->ring.ctrl->kstate,
		   READ_ONCE(cq->ring.ctrl->kstate) | SRDMA_RING_KSTATE_ERROR);
}

/* Tell the consumer that the CQ entered the error state. Context: no lock. */
static void srdma_cq_raise_error(struct srdma_cq *cq)
{
	struct ib_event ev;

	if (!cq->ibcq.event_handler)
		return;
	ev.device = cq->ibcq.device;
	ev.element.cq = &cq->ibcq;
	ev.event = IB_EVENT_CQ_ERR;
	cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/*
 * Move the CQEs not yet consumed from the CQ's ring into @to, at the same
 * free-running indices, with the consumer index and a process's notify
 * request. The consumer index may have been written by a process: a
 * corrupt one puts the CQ in the error state (*@corrupt).
 *
 * Context: cq->lock held.
 * Return: 0; -EIO when the CQ is in the error state; -EINVAL when @to
 * cannot hold the CQEs outstanding.
 */
static int srdma_cq_move(struct srdma_cq *cq, struct srdma_ring *to,
			 bool *corrupt)
{
	struct srdma_ring *from = &cq->ring;
	u32 cons, i;

	lockdep_assert_held(&cq->lock);
	if (cq->error)
		return -EIO;
	cons = smp_load_acquire(&from->ctrl->cons);	/* entries read below */
	if (!srdma_ring_index_ok(from->own, cons, from->num, true)) {
		srdma_cq_set_error(cq);
		*corrupt = true;
		return -EIO;
	}
	if (srdma_ring_count(from->own, cons) > to->num)
		return -EINVAL;
	for (i = cons; i != from->own; i++)
		memcpy(to->buf + srdma_ring_slot(i, to->num) * to->stride,
		       from->buf + srdma_ring_slot(i, from->num) * from->stride,
		       sizeof(struct srdma_cqe));
	to->own = from->own;
	to->ctrl->cons = cons;
	to->ctrl->notify = READ_ONCE(from->ctrl->notify);
	smp_store_release(&to->ctrl->prod, to->own);	/* CQEs before prod */
	return 0;
}

/**
 * srdma_resize_cq() - Give a CQ a ring of another size
 * @ibcq: the core's CQ
 * @cqe: requested depth
 * @udata: the process's udata, whose response (struct srdma_create_cq_resp)
 *	describes the new ring; NULL for an in-kernel CQ
 *
 * The CQEs not yet consumed move to a new ring at the same free-running
 * indices, so neither index changes: the process keeps its consumer index
 * and maps the new ring in place of the old one. The notify word moves
 * along, so an armed CQ stays armed. The old ring's mmap offset is
 * removed; pages the process still maps stay valid until it unmaps them,
 * and the kernel no longer writes them.
 *
 * The copy runs under cq->lock with interrupts off: at most
 * SRDMA_MAX_CQE entries of 64 bytes, once per resize.
 *
 * Context: process context; may sleep. The core holds the CQ for read:
 * no destroy runs concurrently.
 * Return: 0; -EINVAL for a depth out of range, or smaller than the number
 * of CQEs outstanding; -EIO when the CQ is in the error state (including
 * a corrupt consumer index found now); -ENOMEM; -EFAULT.
 */
int srdma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibcq->device);
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_create_cq_resp resp = {};
	struct srdma_ring ring = {};
	unsigned long flags;
	bool corrupt = false;
	u32 num;
	int err;

	if (cqe < 1 || cqe > sdev->attr.max_cqe)
		return -EINVAL;
	num = srdma_ring_entries(cqe);
	if (!num)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = srdma_ring_init(&ring, udata, num, sizeof(struct srdma_cqe));
	if (err)
		return err;
	/* Answer first: once the CQ has swapped rings there is no way back. */
	if (udata) {
		srdma_ring_info(&ring, &resp.ring);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_destroy;
	}

	spin_lock_irqsave(&cq->lock, flags);
	err = srdma_cq_move(cq, &ring, &corrupt);
	if (!err) {
		swap(cq->ring, ring);
		ibcq->cqe = num;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (corrupt)
		srdma_cq_raise_error(cq);
	/* The old ring on success, the new one otherwise. */
err_destroy:
	srdma_ring_destroy(&ring);
	return err;
}

/**
 * srdma_destroy_cq() - Destroy a completion queue
 * @ibcq: the core's CQ; no QP uses it any more
 * @udata: unused
 *
 * Context: process context.
 * Return: 0.
 */
int srdma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct srdma_cq *cq = to_scq(ibcq);

	irq_work_sync(&cq->notify_work);
	srdma_ring_destroy(&cq->ring);
	atomic_dec(&to_sdev(ibcq->device)->cq_cnt);
	return 0;
}

/* Returns true when this CQE satisfies the armed request (and disarms). */
static bool srdma_cq_take_notify(struct srdma_cq *cq,
				 const struct srdma_cqe *cqe, bool solicited)
{
	u32 *word = cq->ring.mmap ? &cq->ring.ctrl->notify : &cq->kernel_notify;
	u32 n = READ_ONCE(*word);

	if (!srdma_cq_notify_wanted(n, solicited,
				    cqe->status != IB_WC_SUCCESS))
		return false;
	/* A process may rewrite the word concurrently: claim it once. */
	return cmpxchg(word, n, SRDMA_CQ_NOTIFY_NONE) == n;
}

/*
 * The completion timestamps the process asked for, written into the ring's
 * copy of the CQE (the caller's has them zero). The clocks are those of
 * the device's attributes: its free-running clock (hca_core_clock) ticks
 * in ns.
 */
static void srdma_cqe_stamp(struct srdma_cqe *slot, u32 flags)
{
	if (flags & SRDMA_CREATE_CQ_TS_RAW)
		slot->ts_raw = ktime_get_raw_ns();
	if (flags & SRDMA_CREATE_CQ_TS_REAL)
		slot->ts_real = ktime_get_real_ns();
}

/**
 * srdma_cq_post() - Add a completion to a CQ
 * @cq: the CQ
 * @cqe: the completion
 * @solicited: the completion is for a solicited message (IBTA 11.4.2.2)
 *
 * Schedules the consumer's completion handler when the CQ was armed for
 * this completion. A full CQ, or a consumer index that a process corrupted,
 * moves the CQ to the error state and raises IB_EVENT_CQ_ERR.
 *
 * Context: any context, including softirq; takes cq->lock (irqsave).
 * Return: true if the completion was queued.
 */
bool srdma_cq_post(struct srdma_cq *cq, const struct srdma_cqe *cqe,
		   bool solicited)
{
	struct srdma_ring *ring = &cq->ring;
	unsigned long flags;
	bool notify = false, overflow = false, queued = false;
	struct srdma_cqe *slot;
	u32 cons;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->error)
		goto out_unlock;
	/* The consumer index may be written by a process: check it. */
	cons = smp_load_acquire(&ring->ctrl->cons);	/* slots free to reuse */
	if (!srdma_ring_index_ok(ring->own, cons, ring->num, true) ||
	    srdma_ring_count(ring->own, cons) == ring->num) {
		srdma_cq_set_error(cq);
		overflow = true;
		goto out_unlock;
	}
	slot = ring->buf + srdma_ring_slot(ring->own, ring->num) * ring->stride;
	memcpy(slot, cqe, sizeof(*cqe));
	if (cq->ts_flags)
		srdma_cqe_stamp(slot, cq->ts_flags);
	ring->own++;
	smp_store_release(&ring->ctrl->prod, ring->own);	/* CQE before prod */
	queued = true;
	/*
	 * Order the CQE's publication before the read of the notify word;
	 * pairs with the consumer's full barrier between arming and its
	 * final poll (see the ring comment in softrdma-abi.h).
	 */
	smp_mb();
	notify = srdma_cq_take_notify(cq, cqe, solicited);
out_unlock:
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify)
		irq_work_queue(&cq->notify_work);
	if (overflow)
		srdma_cq_raise_error(cq);
	return queued;
}

static void srdma_cqe_to_wc(struct srdma_dev *sdev, const struct srdma_cqe *cqe,
			    struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->ex.imm_data = cqe->ex.imm_data;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
	wc->port_num = 1;
	wc->network_hdr_type = cqe->network_hdr_type;
	/* A datagram's GRH is its IP header, of the type the CQE says. */
	if (cqe->wc_flags & SRDMA_CQE_WITH_GRH)
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	if (cqe->wc_flags & SRDMA_CQE_WITH_IMM)
		wc->wc_flags |= IB_WC_WITH_IMM;
	if (cqe->wc_flags & SRDMA_CQE_WITH_INV)
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	/*
	 * In-kernel consumers destroy a QP only after its completions are
	 * drained, so the QP is still in the table here.
	 */
	wc->qp = xa_load(&sdev->qp_xa, cqe->qp_num);
}

/**
 * srdma_poll_cq() - Poll an in-kernel CQ
 * @ibcq: the core's CQ
 * @num_entries: room in @wc
 * @wc: filled with up to @num_entries completions
 *
 * A process polls its mapped ring itself; the poll command is refused for
 * its CQs so that the kernel never consumes from a ring the process owns.
 *
 * Context: any context; takes cq->lock (irqsave).
 * Return: number of completions, or -EOPNOTSUPP for a process's CQ.
 */
int srdma_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_dev *sdev = to_sdev(ibcq->device);
	struct srdma_ring *ring = &cq->ring;
	unsigned long flags;
	u32 cons;
	int n = 0;

	if (ring->mmap)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	cons = ring->ctrl->cons;
	while (n < num_entries && cons != ring->own) {
		srdma_cqe_to_wc(sdev, ring->buf + srdma_ring_slot(cons, ring->num) *
				ring->stride, &wc[n]);
		cons++;
		n++;
	}
	ring->ctrl->cons = cons;
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * srdma_req_notify_cq() - Arm a CQ for the next (solicited) completion
 * @ibcq: the core's CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Processes arm without a system call through the ring's notify word; this
 * path serves in-kernel consumers and the uverbs command.
 *
 * Context: any context; takes cq->lock (irqsave).
 * Return: 1 when IB_CQ_REPORT_MISSED_EVENTS is set and the CQ is not
 * empty, else 0.
 */
int srdma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_ring *ring = &cq->ring;
	u32 n = (flags & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		SRDMA_CQ_NOTIFY_SOLICITED : SRDMA_CQ_NOTIFY_NEXT;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (ring->mmap) {
		/* Never weaken a NEXT request into a SOLICITED one. */
		if (READ_ONCE(ring->ctrl->notify) != SRDMA_CQ_NOTIFY_NEXT)
			WRITE_ONCE(ring->ctrl->notify, n);
	} else if (cq->kernel_notify != SRDMA_CQ_NOTIFY_NEXT) {
		WRITE_ONCE(cq->kernel_notify, n);
	}
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && !ring->mmap &&
	    ring->ctrl->cons != ring->own)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
