// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test-only access to the rings libsoftrdma mapped for a QP or CQ, so that
 * tests/guest/hostile_test.cc can write into them what a buggy or hostile
 * process could. Compiled with the provider's headers; the objects passed
 * in must come from libsoftrdma.
 */
#include <errno.h>
#include <unistd.h>

#include "softrdma.h"
#include "hostile_rings.h"

static struct srdma_ring_ctrl *ring_ctrl(struct srdma_map *map)
{
	return map->ring.ctrl;
}

struct srdma_ring_ctrl *hostile_sq_ctrl(struct ibv_qp *qp)
{
	return ring_ctrl(&to_sqp(qp)->sq.map);
}

struct srdma_ring_ctrl *hostile_rq_ctrl(struct ibv_qp *qp)
{
	return ring_ctrl(&to_sqp(qp)->rq.map);
}

struct srdma_ring_ctrl *hostile_cq_ctrl(struct ibv_cq *cq)
{
	return ring_ctrl(&to_scq(cq)->map);
}

void *hostile_sq_slot(struct ibv_qp *qp, uint32_t idx, uint32_t *stride)
{
	struct srdma_uring *r = &to_sqp(qp)->sq.map.ring;

	*stride = r->stride;
	return srdma_uring_entry(r, idx);
}

void *hostile_rq_slot(struct ibv_qp *qp, uint32_t idx, uint32_t *stride)
{
	struct srdma_uring *r = &to_sqp(qp)->rq.map.ring;

	*stride = r->stride;
	return srdma_uring_entry(r, idx);
}

/* Publish @n entries the caller wrote at the producer position. */
void hostile_sq_publish(struct ibv_qp *qp, uint32_t n)
{
	struct srdma_qp *sqp = to_sqp(qp);

	pthread_spin_lock(&sqp->sq.lock);
	srdma_uring_publish(&sqp->sq.map.ring, n);
	pthread_spin_unlock(&sqp->sq.lock);
}

void hostile_rq_publish(struct ibv_qp *qp, uint32_t n)
{
	struct srdma_qp *sqp = to_sqp(qp);

	pthread_spin_lock(&sqp->rq.lock);
	srdma_uring_publish(&sqp->rq.map.ring, n);
	pthread_spin_unlock(&sqp->rq.lock);
}

uint32_t hostile_sq_prod(struct ibv_qp *qp)
{
	return to_sqp(qp)->sq.map.ring.own;
}

uint32_t hostile_rq_prod(struct ibv_qp *qp)
{
	return to_sqp(qp)->rq.map.ring.own;
}

/* The provider's SQ doorbell: a zero-WR POST_SEND command. */
int hostile_sq_doorbell(struct ibv_qp *qp)
{
	struct ibv_post_send cmd = {};
	struct ib_uverbs_post_send_resp resp;

	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = qp->handle;
	cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return write(qp->context->cmd_fd, &cmd, sizeof(cmd)) == sizeof(cmd) ?
	       0 : errno;
}

int hostile_db_fd(struct ibv_context *ctx)
{
	return to_sctx(ctx)->db_fd;
}

bool hostile_db_is_file(struct ibv_context *ctx)
{
	return to_sctx(ctx)->db_ioctl;
}
