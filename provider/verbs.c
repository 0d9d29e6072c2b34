// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsoftrdma control path: every verb here is one command to the kernel,
 * plus mapping the rings the kernel describes in its response.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "softrdma.h"

DECLARE_DRV_CMD(srdma_create_cq_cmd, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, srdma_create_cq_resp);
DECLARE_DRV_CMD(srdma_create_qp_cmd, IB_USER_VERBS_CMD_CREATE_QP,
		empty, srdma_create_qp_resp);

int srdma_map_ring(struct ibv_context *ctx, struct srdma_map *map,
		   const struct srdma_ring_info *info)
{
	void *addr;

	memset(map, 0, sizeof(*map));
	if (!info->num_entries)
		return 0;
	/* The kernel sizes rings; refuse a description that cannot be. */
	if (info->num_entries & (info->num_entries - 1) ||
	    info->stride < SRDMA_RING_MIN_STRIDE ||
	    info->stride & (info->stride - 1) ||
	    info->mmap_length < SRDMA_RING_CTRL_SIZE +
				(uint64_t)info->num_entries * info->stride) {
		errno = EPROTO;
		return -1;
	}
	addr = mmap(NULL, info->mmap_length, PROT_READ | PROT_WRITE,
		    MAP_SHARED, ctx->cmd_fd, info->mmap_offset);
	if (addr == MAP_FAILED)
		return -1;
	map->addr = addr;
	map->length = info->mmap_length;
	srdma_uring_setup(&map->ring, addr, info->num_entries, info->stride);
	return 0;
}

void srdma_unmap_ring(struct srdma_map *map)
{
	if (map->addr)
		munmap(map->addr, map->length);
	memset(map, 0, sizeof(*map));
}

int srdma_query_device_ex(struct ibv_context *ctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);

	return ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
					&resp_size);
}

int srdma_query_port(struct ibv_context *ctx, uint8_t port,
		     struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

struct ibv_pd *srdma_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

int srdma_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

struct ibv_mr *srdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access)
{
	struct ibv_reg_mr cmd;
	struct ib_uverbs_reg_mr_resp resp;
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			   sizeof(cmd), &resp, sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

int srdma_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

struct ibv_cq *srdma_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct srdma_create_cq_cmd cmd = {};
	struct srdma_create_cq_cmd_resp resp = {};
	struct srdma_cq *cq;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	if (pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE))
		goto err_free;
	if (ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
			      &cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
			      sizeof(resp)))
		goto err_lock;
	if (resp.ring.stride < sizeof(struct srdma_cqe) ||
	    srdma_map_ring(ctx, &cq->map, &resp.ring) || !cq->map.addr) {
		if (!errno)
			errno = EPROTO;
		goto err_destroy;
	}
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
	return NULL;
}

int srdma_destroy_cq(struct ibv_cq *ibcq)
{
	struct srdma_cq *cq = to_scq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	srdma_unmap_ring(&cq->map);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static int srdma_wq_setup(struct ibv_context *ctx, struct srdma_wq *wq,
			  const struct srdma_ring_info *info)
{
	if (pthread_spin_init(&wq->lock, PTHREAD_PROCESS_PRIVATE))
		return -1;
	if (srdma_map_ring(ctx, &wq->map, info)) {
		pthread_spin_destroy(&wq->lock);
		return -1;
	}
	return 0;
}

static void srdma_wq_teardown(struct srdma_wq *wq)
{
	srdma_unmap_ring(&wq->map);
	pthread_spin_destroy(&wq->lock);
}

struct ibv_qp *srdma_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct srdma_create_qp_cmd cmd = {};
	struct srdma_create_qp_cmd_resp resp = {};
	struct srdma_qp *qp;

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	if (ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd, sizeof(cmd),
			      &resp.ibv_resp, sizeof(resp)))
		goto err_free;
	if (srdma_wq_setup(pd->context, &qp->sq, &resp.sq))
		goto err_destroy;
	if (srdma_wq_setup(pd->context, &qp->rq, &resp.rq))
		goto err_teardown_sq;
	qp->max_inline = resp.max_inline_data;
	qp->sq.max_sge = attr->cap.max_send_sge;
	qp->rq.max_sge = attr->cap.max_recv_sge;
	attr->cap.max_inline_data = resp.max_inline_data;
	return &qp->vqp.qp;

err_teardown_sq:
	srdma_wq_teardown(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	return NULL;
}

static void srdma_wq_reset(struct srdma_wq *wq)
{
	if (!wq->map.addr)
		return;
	pthread_spin_lock(&wq->lock);
	wq->map.ring.own = 0;
	srdma_store_release(&wq->map.ring.ctrl->prod, 0);
	pthread_spin_unlock(&wq->lock);
}

int srdma_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		    int attr_mask)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	/* RESET discards every WQE: both sides restart their indices. */
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		srdma_wq_reset(&qp->sq);
		srdma_wq_reset(&qp->rq);
	}
	return 0;
}

int srdma_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int srdma_destroy_qp(struct ibv_qp *ibqp)
{
	struct srdma_qp *qp = to_sqp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	if (ret)
		return ret;
	srdma_wq_teardown(&qp->rq);
	srdma_wq_teardown(&qp->sq);
	free(qp);
	return 0;
}
