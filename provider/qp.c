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
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "softrdma.h"

/* A zero-WR POST_SEND or POST_RECV command: "look at the ring". */
static int srdma_doorbell(struct ibv_qp *ibqp, bool send)
{
	struct ibv_post_send scmd = {};
	struct ibv_post_recv rcmd = {};
	struct ib_uverbs_post_send_resp resp;
	void *cmd;
	size_t len;

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
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_SEND_WITH_INV:
		return type == IBV_QPT_RC;
	default:
		return false;
	}
}

static int srdma_build_send(struct srdma_qp *qp, const struct ibv_send_wr *wr,
			    struct srdma_send_wqe *w)
{
	uint32_t room = qp->sq.map.ring.stride - sizeof(*w);
	struct srdma_sge *sge = (struct srdma_sge *)(w + 1);
	int i;

	if (!srdma_opcode_ok(qp->vqp.qp.qp_type, wr->opcode))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;

	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->flags = wr->send_flags & (SRDMA_WQE_FENCE | SRDMA_WQE_SIGNALED |
				     SRDMA_WQE_SOLICITED | SRDMA_WQE_INLINE);
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
	default:
		break;
	}

	if (wr->send_flags & IBV_SEND_INLINE &&
	    wr->opcode != IBV_WR_RDMA_READ &&
	    wr->opcode != IBV_WR_ATOMIC_CMP_AND_SWP &&
	    wr->opcode != IBV_WR_ATOMIC_FETCH_AND_ADD) {
		uint8_t *dst = (uint8_t *)(w + 1);
		uint32_t len = 0;

		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->max_inline - len)
				return EINVAL;
			memcpy(dst + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->inline_len = len;
		return 0;
	}
	w->flags &= ~SRDMA_WQE_INLINE;
	if ((uint32_t)wr->num_sge * sizeof(*sge) > room)
		return EINVAL;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

int srdma_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_uring *r = &qp->sq.map.ring;
	uint32_t space, n = 0;
	bool ring_db;
	int err = 0;

	pthread_spin_lock(&qp->sq.lock);
	space = srdma_uring_space(r);
	for (; wr; wr = wr->next, n++) {
		if (n == space) {
			err = ENOMEM;
			break;
		}
		err = srdma_build_send(qp, wr, srdma_uring_entry(r, r->own + n));
		if (err)
			break;
	}
	if (err)
		*bad_wr = wr;
	if (!n)
		goto out_unlock;
	srdma_uring_publish(r, n);
	/* Pairs with the kernel's barrier before it leaves POLLING. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* In the error state the doorbell has the kernel flush the WQEs. */
	ring_db = (__atomic_load_n(&r->ctrl->kstate, __ATOMIC_RELAXED) &
		   (SRDMA_RING_KSTATE_POLLING | SRDMA_RING_KSTATE_ERROR)) !=
		  SRDMA_RING_KSTATE_POLLING;
	pthread_spin_unlock(&qp->sq.lock);
	if (ring_db) {
		int db = srdma_doorbell(ibqp, true);

		if (!err)
			err = db;
	}
	return err;

out_unlock:
	pthread_spin_unlock(&qp->sq.lock);
	return err;
}

int srdma_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_uring *r = &qp->rq.map.ring;
	uint32_t space, n = 0;
	bool error;
	int err = 0, i;

	pthread_spin_lock(&qp->rq.lock);
	space = srdma_uring_space(r);
	for (; wr; wr = wr->next, n++) {
		struct srdma_recv_wqe *w;
		struct srdma_sge *sge;

		if (n == space) {
			err = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->rq.max_sge) {
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
	error = srdma_uring_error(r);
	pthread_spin_unlock(&qp->rq.lock);
	/* In the error state every receive completes flushed (IBTA 10.3.1). */
	if (n && error)
		srdma_doorbell(ibqp, false);
	return err;
}
