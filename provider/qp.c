// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsoftrdma posting fast path: work requests go into the mapped rings.
 *
 * A post writes its WQEs, store-releases the producer index and, for the
 * SQ, makes the doorbell system call only when the kernel is not already
 * running the QP (SRDMA_RING_KSTATE_POLLING; see softrdma-abi.h for the
 * barrier pairing). Receives never need a system call: the kernel takes
 * them from the ring when a message arrives. A queue the kernel has put in
 * the error state is flushed by a zero-WR post command.
 *
 * The send WQE builder (srdma_wqe_init(), srdma_wqe_set_sge(),
 * srdma_wqe_add_inline()) and the publication (srdma_sq_publish()) serve
 * ibv_post_send() here and the ibv_wr_* API in wr.c alike.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "softrdma.h"

/**
 * srdma_doorbell() - Ring a queue's doorbell
 * @ibqp: the QP
 * @send: the SQ (else the RQ)
 *
 * "Look at the ring": the kernel runs a transmit pass of the QP or, in the
 * error state, flushes the queue. The SQ's doorbell is an ioctl() with the
 * QP number on the context's doorbell file, or the QP number written to
 * its doorbell eventfd, when the kernel took one; else (and for the RQ,
 * and when the ioctl() fails) a POST_SEND or POST_RECV command without
 * work requests.
 *
 * Return: 0 or an errno value.
 */
int srdma_doorbell(struct ibv_qp *ibqp, bool send)
{
	struct srdma_context *ctx = to_sctx(ibqp->context);
	struct ibv_post_send scmd = {};
	struct ibv_post_recv rcmd = {};
	struct ib_uverbs_post_send_resp resp;
	uint64_t qpn = ibqp->qp_num;
	void *cmd;
	size_t len;

	/*
	 * A failed write (the process closed the fd) falls back; a process
	 * that closed it and reused the number breaks its own doorbells.
	 */
	if (send && ctx->db_fd >= 0) {
		if (ctx->db_ioctl) {
			if (!ioctl(ctx->db_fd, SRDMA_DOORBELL_RING,
				   (unsigned long)qpn))
				return 0;
		} else if (write(ctx->db_fd, &qpn, sizeof(qpn)) ==
			   sizeof(qpn)) {
			return 0;
		}
	}
	if (send) {
		scmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
		scmd.hdr.in_words = sizeof(scmd) / 4;
		scmd.hdr.out_words = sizeof(resp) / 4;
		scmd.response = (uintptr_t)&resp;
		scmd.qp_handle = ibqp->handle;
		scmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
		cmd = &scmd;
		len = sizeof(scmd);
	} else {
		rcmd.hdr.command = IB_USER_VERBS_CMD_POST_RECV;
		rcmd.hdr.in_words = sizeof(rcmd) / 4;
		rcmd.hdr.out_words = sizeof(resp) / 4;
		rcmd.response = (uintptr_t)&resp;
		rcmd.qp_handle = ibqp->handle;
		rcmd.wqe_size = sizeof(struct ib_uverbs_recv_wr);
		cmd = &rcmd;
		len = sizeof(rcmd);
	}
	if (write(ibqp->context->cmd_fd, cmd, len) != (ssize_t)len)
		return errno;
	return 0;
}

static bool srdma_opcode_ok(enum ibv_qp_type type, enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return true;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

/* Operations whose data may be inline: those that send it. */
static bool srdma_opcode_inline_ok(uint8_t op)
{
	return op != IBV_WR_RDMA_READ && op != IBV_WR_ATOMIC_CMP_AND_SWP &&
	       op != IBV_WR_ATOMIC_FETCH_AND_ADD && op != IBV_WR_LOCAL_INV &&
	       op != IBV_WR_BIND_MW;
}

/*
 * A bind names its window, of the QP's PD, and a new key of that window
 * (only the key byte changes: the kernel finds the window by the rest);
 * a range needs its MR, of the same PD. The kernel checks again what it
 * can see: the MR's rights and range, a type 2 window being free.
 */
static bool srdma_bind_args_ok(const struct srdma_qp *qp,
			       const struct ibv_send_wr *wr)
{
	const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;
	const struct ibv_mw *mw = wr->bind_mw.mw;

	if (!mw || !srdma_same_pd(mw->pd, qp->vqp.qp.pd) ||
	    (wr->bind_mw.rkey ^ mw->rkey) & ~SRDMA_KEY_BYTE_MASK)
		return false;
	return !b->length ||
	       (b->mr && srdma_same_pd(b->mr->pd, qp->vqp.qp.pd));
}

/**
 * srdma_wqe_init() - Write the header of a send WQE
 * @qp: the QP
 * @w: the ring slot
 * @wr: opcode, wr_id, send_flags and the opcode's fields; sg_list and
 *	num_sge are not looked at
 *
 * The WQE then has no data: srdma_wqe_set_sge() or srdma_wqe_add_inline()
 * add it. IBV_SEND_INLINE in @wr is not taken over; the inline setter
 * marks the WQE.
 *
 * Return: 0, or EINVAL for an opcode the QP's type cannot carry.
 */
int srdma_wqe_init(struct srdma_qp *qp, struct srdma_send_wqe *w,
		   const struct ibv_send_wr *wr)
{
	if (!srdma_opcode_ok(qp->vqp.qp.qp_type, wr->opcode))
		return EINVAL;

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->send_flags & (SRDMA_WQE_FENCE | SRDMA_WQE_SIGNALED |
				     SRDMA_WQE_SOLICITED);
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w->ex.imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		w->ex.invalidate_rkey = wr->invalidate_rkey;
		break;
	default:
		break;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		/* No AH yet (ibv_wr_*): handle 0 names none. */
		w->wr.ud.ah = wr->wr.ud.ah ? to_sah(wr->wr.ud.ah)->handle : 0;
		w->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		w->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		return 0;
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->wr.atomic.rkey = wr->wr.atomic.rkey;
		w->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		w->wr.atomic.swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_BIND_MW: {
		const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

		if (!srdma_bind_args_ok(qp, wr))
			return EINVAL;
		w->wr.bind.addr = b->addr;
		w->wr.bind.length = b->length;
		w->wr.bind.mr_lkey = b->mr ? b->mr->lkey : 0;
		w->wr.bind.mw_rkey = wr->bind_mw.rkey;
		w->wr.bind.access = b->mw_access_flags;
		break;
	}
	default:
		break;
	}
	return 0;
}

/**
 * srdma_wqe_set_sge() - Give a send WQE its scatter/gather list
 * @qp: the QP
 * @w: a WQE started by srdma_wqe_init()
 * @sg: the SGEs
 * @num: how many
 *
 * Replaces any data the WQE had.
 *
 * Return: 0, or EINVAL when @num exceeds what the QP was granted.
 */
int srdma_wqe_set_sge(struct srdma_qp *qp, struct srdma_send_wqe *w,
		      const struct ibv_sge *sg, size_t num)
{
	uint32_t room = qp->sq.map.ring.stride - sizeof(*w);
	struct srdma_sge *sge = (struct srdma_sge *)(w + 1);
	size_t i;

	if (num > qp->sq.max_sge || num * sizeof(*sge) > room)
		return EINVAL;
	w->flags &= ~SRDMA_WQE_INLINE;
	w->inline_len = 0;
	w->num_sge = num;
	for (i = 0; i < num; i++) {
		sge[i].addr = sg[i].addr;
		sge[i].length = sg[i].length;
		sge[i].lkey = sg[i].lkey;
	}
	return 0;
}

/**
 * srdma_wqe_add_inline() - Append inline data to a send WQE
 * @qp: the QP
 * @w: a WQE started by srdma_wqe_init(); the first call drops any SGEs
 * @addr: the bytes, copied now (the caller may reuse them at once)
 * @len: how many
 *
 * Return: 0, or EINVAL for an operation that sends no data of its own
 * (READ, atomics) or when the WQE would exceed the QP's inline limit.
 */
int srdma_wqe_add_inline(struct srdma_qp *qp, struct srdma_send_wqe *w,
			 const void *addr, size_t len)
{
	if (!srdma_opcode_inline_ok(w->opcode))
		return EINVAL;
	if (!(w->flags & SRDMA_WQE_INLINE)) {
		w->flags |= SRDMA_WQE_INLINE;
		w->num_sge = 0;
		w->inline_len = 0;
	}
	if (len > qp->max_inline - w->inline_len)
		return EINVAL;
	if (len)
		memcpy((uint8_t *)(w + 1) + w->inline_len, addr, len);
	w->inline_len += len;
	return 0;
}

static int srdma_build_send(struct srdma_qp *qp, const struct ibv_send_wr *wr,
			    struct srdma_send_wqe *w, bool type1_bind)
{
	int err, i;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	/* A type 1 window is bound by ibv_bind_mw() alone (ibv_post_send(3)). */
	if (wr->opcode == IBV_WR_BIND_MW && wr->bind_mw.mw &&
	    wr->bind_mw.mw->type != (type1_bind ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2))
		return EINVAL;
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	err = srdma_wqe_init(qp, w, wr);
	if (err)
		return err;
	/* Local operations have no data: their SGE list is not looked at. */
	if (wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_BIND_MW)
		return 0;
	/* IBV_SEND_INLINE is ignored where there is nothing to send. */
	if (!(wr->send_flags & IBV_SEND_INLINE) ||
	    !srdma_opcode_inline_ok(wr->opcode))
		return srdma_wqe_set_sge(qp, w, wr->sg_list, wr->num_sge);
	/* Mark the WQE inline even when it has no data. */
	err = srdma_wqe_add_inline(qp, w, NULL, 0);
	for (i = 0; !err && i < wr->num_sge; i++)
		err = srdma_wqe_add_inline(qp, w,
					   (void *)(uintptr_t)wr->sg_list[i].addr,
					   wr->sg_list[i].length);
	return err;
}

/**
 * srdma_sq_publish() - Publish WQEs and decide on the doorbell
 * @sq: the SQ, its lock held
 * @n: WQEs written after the producer index
 *
 * The doorbell is needed unless the transport is running the QP and will
 * read the producer index again by itself (SRDMA_RING_KSTATE_POLLING); in
 * the error state it has the kernel flush the new WQEs.
 *
 * Return: true when the caller must ring the doorbell (after unlocking).
 */
bool srdma_sq_publish(struct srdma_wq *sq, uint32_t n)
{
	struct srdma_uring *r = &sq->map.ring;

	srdma_uring_publish(r, n);
	/* Pairs with the kernel's barrier before it leaves POLLING. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return (__atomic_load_n(&r->ctrl->kstate, __ATOMIC_RELAXED) &
		(SRDMA_RING_KSTATE_POLLING | SRDMA_RING_KSTATE_ERROR)) !=
	       SRDMA_RING_KSTATE_POLLING;
}

static int srdma_post_send_list(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
				struct ibv_send_wr **bad_wr, bool type1_bind)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_uring *r = &qp->sq.map.ring;
	uint32_t space, n = 0;
	bool ring_db = false;
	int err = 0;

	if (!srdma_qp_sq_open(ibqp, r)) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq.lock);
	space = srdma_uring_space(r);
	for (; wr; wr = wr->next, n++) {
		if (n == space) {
			err = ENOMEM;
			break;
		}
		err = srdma_build_send(qp, wr, srdma_uring_entry(r, r->own + n),
				       type1_bind);
		if (err)
			break;
	}
	if (err)
		*bad_wr = wr;
	if (n)
		ring_db = srdma_sq_publish(&qp->sq, n);
	pthread_spin_unlock(&qp->sq.lock);
	if (ring_db) {
		int db = srdma_doorbell(ibqp, true);

		if (!err)
			err = db;
	}
	return err;
}

int srdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	return srdma_post_send_list(ibqp, wr, bad_wr, false);
}

/*
 * Write receive WQEs into @wq's ring and publish them; @wq->lock held.
 * Return: 0 or an errno value, *@bad_wr set to the first WR not posted.
 */
static int srdma_recv_ring_post(struct srdma_wq *wq, struct ibv_recv_wr *wr,
				struct ibv_recv_wr **bad_wr)
{
	struct srdma_uring *r = &wq->map.ring;
	uint32_t space, n = 0;
	int err = 0, i;

	space = srdma_uring_space(r);
	for (; wr; wr = wr->next, n++) {
		struct srdma_recv_wqe *w;
		struct srdma_sge *sge;

		if (n == space) {
			err = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			err = EINVAL;
			break;
		}
		w = srdma_uring_entry(r, r->own + n);
		w->wr_id = wr->wr_id;
		w->num_sge = wr->num_sge;
		w->reserved = 0;
		sge = (struct srdma_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	if (err)
		*bad_wr = wr;
	if (n)
		srdma_uring_publish(r, n);
	return err;
}

int srdma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_uring *r = &qp->rq.map.ring;
	bool error, posted;
	uint32_t prod;
	int err;

	/* A QP with an SRQ has no RQ (ibv_post_recv(3)). */
	if (!qp->rq.map.addr || !srdma_qp_rq_open(ibqp)) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq.lock);
	prod = r->own;
	err = srdma_recv_ring_post(&qp->rq, wr, bad_wr);
	posted = r->own != prod;
	error = srdma_uring_error(r);
	pthread_spin_unlock(&qp->rq.lock);
	/* In the error state every receive completes flushed (IBTA 10.3.1). */
	if (posted && error)
		srdma_doorbell(ibqp, false);
	return err;
}

/*
 * ibv_post_srq_recv(): into the SRQ's ring, no system call; any QP of the
 * SRQ takes the WQEs as messages arrive.
 */
int srdma_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	int err;

	pthread_spin_lock(&srq->rq.lock);
	err = srdma_recv_ring_post(&srq->rq, wr, bad_wr);
	pthread_spin_unlock(&srq->rq.lock);
	return err;
}

/**
 * srdma_bind_mw() - Bind a type 1 memory window (ibv_bind_mw(3))
 * @ibqp: the QP whose SQ executes the bind, in order
 * @mw: the window
 * @mw_bind: the range, the MR and the rights; wr_id and send_flags of the
 *	work request
 *
 * The window takes its next key at once (the key a remote peer must
 * use once the bind completes).
 *
 * Return: 0 or an errno value.
 */
int srdma_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {}, *bad;
	int err;

	if (mw->type != IBV_MW_TYPE_1 || !srdma_same_pd(mw->pd, ibqp->pd))
		return EINVAL;
	if (mw_bind->bind_info.length && !mw_bind->bind_info.mr)
		return EINVAL;
	wr.wr_id = mw_bind->wr_id;
	wr.send_flags = mw_bind->send_flags;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	err = srdma_post_send_list(ibqp, &wr, &bad, true);
	if (!err)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}
