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
DECLARE_DRV_CMD(srdma_create_cq_ex_cmd, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		srdma_create_cq_req, srdma_create_cq_resp);
DECLARE_DRV_CMD(srdma_resize_cq_cmd, IB_USER_VERBS_CMD_RESIZE_CQ,
		empty, srdma_create_cq_resp);
DECLARE_DRV_CMD(srdma_create_qp_cmd, IB_USER_VERBS_CMD_CREATE_QP,
		empty, srdma_create_qp_resp);
DECLARE_DRV_CMD(srdma_create_srq_cmd, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, srdma_create_srq_resp);
DECLARE_DRV_CMD(srdma_create_ah_cmd, IB_USER_VERBS_CMD_CREATE_AH,
		empty, srdma_create_ah_resp);

/* The fields a CQE holds (struct srdma_cqe), as ibv_create_cq_ex() asks. */
#define SRDMA_CQ_WC_FLAGS	(IBV_WC_STANDARD_FLAGS | SRDMA_CQ_WC_TS)
/* The timestamps, which the kernel writes only when asked. */
#define SRDMA_CQ_WC_TS		(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
/* Creation flags honoured by the provider alone. */
#define SRDMA_CQ_CREATE_FLAGS	IBV_CREATE_CQ_ATTR_SINGLE_THREADED

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

/*
 * The device's free-running clock, which stamps completions
 * (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP): CLOCK_MONOTONIC_RAW in ns, the
 * clock the kernel reads for them. Given as a count of ticks in tv_nsec,
 * tv_sec 0, as hardware providers give their cycle counter.
 */
int srdma_query_rt_values(struct ibv_context *ctx,
			  struct ibv_values_ex *values)
{
	struct timespec ts;

	if (!check_comp_mask(values->comp_mask, IBV_VALUES_MASK_RAW_CLOCK))
		return EINVAL;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(CLOCK_MONOTONIC_RAW, &ts))
			return errno;
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = ts.tv_sec * 1000000000L + ts.tv_nsec;
	}
	return 0;
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
	struct srdma_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(ctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			     sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return &pd->ibv_pd;
}

/*
 * No thread domain is offered (ibv_alloc_td()), so none can be named. The
 * PD must be one of this context's; over a parent domain, the new one is
 * over its protection domain, as wherever a parent domain names a PD.
 */
struct ibv_pd *srdma_alloc_parent_domain(struct ibv_context *ctx,
					 struct ibv_parent_domain_init_attr *attr)
{
	struct srdma_pd *protection, *pd;

	if (!check_comp_mask(attr->comp_mask,
			     IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != ctx || attr->td) {
		errno = EINVAL;
		return NULL;
	}
	protection = srdma_pd_protection(attr->pd);
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibv_pd.context = ctx;
	pd->ibv_pd.handle = protection->ibv_pd.handle;
	pd->protection = protection;
	__atomic_add_fetch(&protection->users, 1, __ATOMIC_RELAXED);
	return &pd->ibv_pd;
}

/* EBUSY while objects made on a parent domain, or parent domains, last. */
int srdma_dealloc_pd(struct ibv_pd *ibpd)
{
	struct srdma_pd *pd = to_spd(ibpd);
	int ret;

	if (__atomic_load_n(&pd->users, __ATOMIC_RELAXED))
		return EBUSY;
	if (pd->protection) {
		__atomic_sub_fetch(&pd->protection->users, 1,
				   __ATOMIC_RELAXED);
		free(pd);
		return 0;
	}
	ret = ibv_cmd_dealloc_pd(ibpd);
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
	srdma_pd_hold(pd);
	return &vmr->ibv_mr;
}

int srdma_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_pd *old = vmr->ibv_mr.pd;
	struct ibv_rereg_mr cmd;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (!ret && (flags & IBV_REREG_MR_CHANGE_PD)) {
		srdma_pd_hold(pd);
		srdma_pd_release(old);
	}
	return ret;
}

int srdma_dereg_mr(struct verbs_mr *vmr)
{
	struct ibv_pd *pd = vmr->ibv_mr.pd;
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	srdma_pd_release(pd);
	free(vmr);
	return 0;
}

/*
 * IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN (a full CQ is an error here, IBTA
 * 11.4.2.1), VLANs, flow tags and tag matching are not implemented. A
 * parent domain (IBV_CQ_INIT_ATTR_MASK_PD) is taken and has nothing to
 * do: its allocators have no buffer to allocate.
 */
static int srdma_cq_check(struct ibv_context *ctx,
			  const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->cqe <= 0)
		return EINVAL;
	if (!check_comp_mask(attr->comp_mask, IBV_CQ_INIT_ATTR_MASK_FLAGS |
					      IBV_CQ_INIT_ATTR_MASK_PD) ||
	    attr->wc_flags & ~(uint64_t)SRDMA_CQ_WC_FLAGS)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
	    attr->flags & ~SRDMA_CQ_CREATE_FLAGS)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD &&
	    (!attr->parent_domain || attr->parent_domain->context != ctx ||
	     !to_spd(attr->parent_domain)->protection))
		return EINVAL;
	return 0;
}

/* Map the CQ ring a create or resize response describes. */
static int srdma_cq_map(struct ibv_context *ctx, struct srdma_map *map,
			const struct srdma_ring_info *info)
{
	if (!info->num_entries || info->stride < sizeof(struct srdma_cqe))
		return EPROTO;
	return srdma_map_ring(ctx, map, info) ? errno : 0;
}

/* The kernel's CREATE_CQ (@ex: its extended form); @ring gets the ring. */
static int srdma_cq_cmd(struct ibv_context *ctx, struct srdma_cq *cq,
			struct ibv_cq_init_attr_ex *attr, bool ex,
			struct srdma_ring_info *ring)
{
	struct srdma_create_cq_cmd cmd = {};
	struct srdma_create_cq_cmd_resp resp = {};
	struct srdma_create_cq_ex_cmd cmd_ex = {};
	struct srdma_create_cq_ex_cmd_resp resp_ex = {};
	int err;

	if (ex) {
		/* The kernel knows nothing of parent domains. */
		struct ibv_cq_init_attr_ex kattr = *attr;

		kattr.comp_mask &= ~IBV_CQ_INIT_ATTR_MASK_PD;
		/* The timestamps are the kernel's to write, not the core's. */
		kattr.wc_flags &= ~(uint64_t)SRDMA_CQ_WC_TS;
		if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
			cmd_ex.flags |= SRDMA_CREATE_CQ_TS_RAW;
		if (attr->wc_flags &
		    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
			cmd_ex.flags |= SRDMA_CREATE_CQ_TS_REAL;
		err = ibv_cmd_create_cq_ex(ctx, &kattr, &cq->vcq,
					   &cmd_ex.ibv_cmd, sizeof(cmd_ex),
					   &resp_ex.ibv_resp, sizeof(resp_ex),
					   0);
		*ring = resp_ex.ring;
		/* A kernel that ignored the flags would write no time. */
		if (!err && cmd_ex.flags &&
		    !(resp_ex.comp_mask & SRDMA_CREATE_CQ_RESP_FLAGS)) {
			ibv_cmd_destroy_cq(&cq->vcq.cq);
			err = EOPNOTSUPP;
		}
	} else {
		err = ibv_cmd_create_cq(ctx, attr->cqe, attr->channel,
					attr->comp_vector, &cq->vcq.cq,
					&cmd.ibv_cmd, sizeof(cmd),
					&resp.ibv_resp, sizeof(resp));
		*ring = resp.ring;
	}
	return err;
}

/*
 * The one way a CQ is created: ibv_create_cq() through the plain command,
 * ibv_create_cq_ex() through the extended one. Every CQ can be polled both
 * ways.
 */
static struct srdma_cq *srdma_cq_create(struct ibv_context *ctx,
					struct ibv_cq_init_attr_ex *attr,
					bool ex)
{
	struct srdma_ring_info ring;
	struct srdma_cq *cq;
	int err;

	err = srdma_cq_check(ctx, attr);
	if (err)
		goto err_out;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;
	err = pthread_spin_init(&cq->arm_lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_lock;
	cq->no_lock = attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS &&
		      attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	err = srdma_cq_cmd(ctx, cq, attr, ex, &ring);
	if (err)
		goto err_arm_lock;
	err = srdma_cq_map(ctx, &cq->map, &ring);
	if (err)
		goto err_destroy;
	srdma_cq_init_ex(cq);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		cq->parent_domain = attr->parent_domain;
		srdma_pd_hold(cq->parent_domain);
	}
	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_arm_lock:
	pthread_spin_destroy(&cq->arm_lock);
err_lock:
	pthread_spin_destroy(&cq->lock);
err_free:
	free(cq);
err_out:
	if (err)
		errno = err;
	return NULL;
}

struct ibv_cq *srdma_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = cqe,
		.channel = channel,
		.comp_vector = comp_vector,
	};
	struct srdma_cq *cq = srdma_cq_create(ctx, &attr, false);

	return cq ? &cq->vcq.cq : NULL;
}

struct ibv_cq_ex *srdma_create_cq_ex(struct ibv_context *ctx,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct srdma_cq *cq = srdma_cq_create(ctx, attr, true);

	return cq ? &cq->vcq.cq_ex : NULL;
}

/*
 * The kernel allocates a new ring, moves the CQEs not yet consumed into it
 * at the same free-running indices (so the consumer index carries over as
 * it is), takes over the notify word, and removes the old ring's mapping
 * offset. Both locks keep pollers and arming off the mapping meanwhile.
 * Should the new ring fail to map, the CQ can complete nothing more: once
 * the old mapping is drained, polling reports an error.
 */
int srdma_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_resize_cq_cmd cmd = {};
	struct srdma_resize_cq_cmd_resp resp = {};
	struct srdma_map map;
	int err;

	if (cqe <= 0)
		return EINVAL;
	srdma_cq_lock(cq);
	if (!cq->no_lock)
		pthread_spin_lock(&cq->arm_lock);
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err)
		goto out_unlock;
	err = srdma_cq_map(ibcq->context, &map, &resp.ring);
	if (err) {
		cq->lost = true;
		goto out_unlock;
	}
	map.ring.own = cq->map.ring.own;
	srdma_unmap_ring(&cq->map);
	cq->map = map;

out_unlock:
	if (!cq->no_lock)
		pthread_spin_unlock(&cq->arm_lock);
	srdma_cq_unlock(cq);
	return err;
}

int srdma_destroy_cq(struct ibv_cq *ibcq)
{
	struct srdma_cq *cq = to_scq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	if (ret)
		return ret;
	srdma_unmap_ring(&cq->map);
	pthread_spin_destroy(&cq->arm_lock);
	pthread_spin_destroy(&cq->lock);
	srdma_pd_release(cq->parent_domain);
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

/*
 * The one way a QP is created, for ibv_create_qp() and ibv_create_qp_ex()
 * alike; IBV_QP_INIT_ATTR_SEND_OPS_FLAGS adds the ibv_wr_* API (wr.c).
 * The granted capacities go back to attr->cap.
 */
static struct srdma_qp *srdma_qp_create(struct ibv_context *ctx,
					struct ibv_qp_init_attr_ex *attr)
{
	struct srdma_create_qp_cmd cmd = {};
	struct srdma_create_qp_cmd_resp resp = {};
	uint32_t comp_mask = attr->comp_mask;
	struct ibv_qp_init_attr_ex kattr;
	struct srdma_qp *qp;
	int err = 0;

	/* No creation flag is implemented; an empty set asks for nothing. */
	if (!check_comp_mask(comp_mask, IBV_QP_INIT_ATTR_PD |
					IBV_QP_INIT_ATTR_CREATE_FLAGS |
					IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
	    ((comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags))
		err = EOPNOTSUPP;
	else if (comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		err = srdma_wr_check(attr->qp_type, attr->send_ops_flags);
	if (err) {
		errno = err;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	/* A copy without the empty creation flags: attr may be shared. */
	kattr = *attr;
	kattr.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	err = ibv_cmd_create_qp_ex(ctx, &qp->vqp, &kattr, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	attr->cap = kattr.cap;
	if (err) {
		errno = err;
		goto err_free;
	}
	if (srdma_wq_setup(ctx, &qp->sq, &resp.sq))
		goto err_destroy;
	if (srdma_wq_setup(ctx, &qp->rq, &resp.rq))
		goto err_teardown_sq;
	qp->max_inline = resp.max_inline_data;
	qp->sq.max_sge = attr->cap.max_send_sge;
	qp->rq.max_sge = attr->cap.max_recv_sge;
	attr->cap.max_inline_data = resp.max_inline_data;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		srdma_qp_init_wr(qp);
	qp->pd = attr->comp_mask & IBV_QP_INIT_ATTR_PD ? attr->pd : NULL;
	srdma_pd_hold(qp->pd);
	return qp;

err_teardown_sq:
	srdma_wq_teardown(&qp->sq);
err_destroy:
	err = errno;
	ibv_cmd_destroy_qp(&qp->vqp.qp);
	errno = err;
err_free:
	free(qp);
	return NULL;
}

struct ibv_qp *srdma_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq,
		.recv_cq = attr->recv_cq,
		.srq = attr->srq,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct srdma_qp *qp = srdma_qp_create(pd->context, &ex);

	if (!qp)
		return NULL;
	attr->cap = ex.cap;
	return &qp->vqp.qp;
}

struct ibv_qp *srdma_create_qp_ex(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *attr)
{
	struct srdma_qp *qp = srdma_qp_create(ctx, attr);

	return qp ? &qp->vqp.qp : NULL;
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

/*
 * The completions of a QP reset or destroyed leave its CQs, as with the
 * hardware providers: none is taken for one of new work, or names a QP
 * that is gone. Receive completions of a QP with an SRQ stay: they hand
 * the SRQ's buffers back.
 */
static void srdma_qp_cq_clean(struct ibv_qp *ibqp)
{
	if (ibqp->recv_cq)
		srdma_cq_clean(ibqp->recv_cq, ibqp->qp_num, !!ibqp->srq);
	if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
		srdma_cq_clean(ibqp->send_cq, ibqp->qp_num, false);
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
		srdma_qp_cq_clean(ibqp);
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
	srdma_qp_cq_clean(ibqp);
	srdma_wq_teardown(&qp->rq);
	srdma_wq_teardown(&qp->sq);
	srdma_pd_release(qp->pd);
	free(qp);
	return 0;
}

/**
 * srdma_create_ah() - Create an address handle
 * @pd: its protection domain
 * @attr: the address; RoCE needs a GRH (is_global)
 *
 * The kernel resolves the destination and answers with the handle that
 * UD WQEs name the AH by.
 *
 * Return: the AH, or NULL with errno set.
 */
struct ibv_ah *srdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct srdma_create_ah_cmd_resp resp = {};
	struct srdma_ah *ah;
	int err;

	if (!attr->is_global) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	err = ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->handle = resp.ah;
	srdma_pd_hold(pd);
	return &ah->ibah;
}

int srdma_destroy_ah(struct ibv_ah *ibah)
{
	struct ibv_pd *pd = ibah->pd;
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	srdma_pd_release(pd);
	free(to_sah(ibah));
	return 0;
}

/**
 * srdma_create_srq() - Create a shared receive queue
 * @pd: its protection domain
 * @attr: capacities; the granted ones are written back
 *
 * Return: the SRQ with its ring mapped, or NULL with errno set.
 */
struct ibv_srq *srdma_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct srdma_create_srq_cmd cmd = {};
	struct srdma_create_srq_cmd_resp resp = {};
	struct srdma_srq *srq;
	int err;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		errno = err;
		goto err_free;
	}
	if (!resp.ring.num_entries) {
		errno = EPROTO;
		goto err_destroy;
	}
	if (srdma_wq_setup(pd->context, &srq->rq, &resp.ring))
		goto err_destroy;
	srq->rq.max_sge = attr->attr.max_sge;
	srq->pd = pd;
	srdma_pd_hold(pd);
	return &srq->vsrq.srq;

err_destroy:
	err = errno;
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
	errno = err;
err_free:
	free(srq);
	return NULL;
}

int srdma_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct ibv_modify_srq cmd;

	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

int srdma_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

int srdma_destroy_srq(struct ibv_srq *ibsrq)
{
	struct srdma_srq *srq = to_ssrq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	srdma_wq_teardown(&srq->rq);
	srdma_pd_release(srq->pd);
	free(srq);
	return 0;
}

struct ibv_mw *srdma_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	srdma_pd_hold(pd);
	return mw;
}

int srdma_dealloc_mw(struct ibv_mw *mw)
{
	struct ibv_pd *pd = mw->pd;
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	srdma_pd_release(pd);
	free(mw);
	return 0;
}
