/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libsoftrdma: the rdma-core provider of softrdma devices.
 */
#ifndef SRDMA_PROVIDER_H
#define SRDMA_PROVIDER_H

#include <pthread.h>
#include <stddef.h>

#include <infiniband/driver.h>
#include <kernel-abi/softrdma-abi.h>
#include <rdma/softrdma-abi.h>

#include "ring.h"

struct srdma_device {
	struct verbs_device vdev;
};

/*
 * db_fd: the doorbell the kernel took (softrdma-abi.h, struct
 * srdma_alloc_ucontext_req): a doorbell file when db_ioctl, else an
 * eventfd; or -1: the POST_SEND command is the doorbell then.
 */
struct srdma_context {
	struct verbs_context vctx;
	uint32_t max_inline_data;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	int db_fd;
	bool db_ioctl;
};

/*
 * A protection domain, or a parent domain (ibv_alloc_parent_domain()) over
 * one: the same kernel PD, whose handle a parent domain's ibv_pd carries,
 * so that every command that names a PD takes either. The allocators of a
 * parent domain have nothing to allocate: the queues live in kernel memory
 * mapped into the process. users counts what may not outlive the domain:
 * a protection domain's parent domains (its kernel objects the kernel
 * counts), a parent domain's QPs, CQs, SRQs, MRs, windows and AHs
 * (srdma_pd_hold()).
 */
struct srdma_pd {
	struct ibv_pd ibv_pd;
	struct srdma_pd *protection;	/* NULL: a protection domain */
	unsigned int users;		/* atomic */
};

static inline struct srdma_pd *to_spd(struct ibv_pd *pd)
{
	return container_of(pd, struct srdma_pd, ibv_pd);
}

/* An object made on @pd (NULL: none): a parent domain counts it. */
static inline void srdma_pd_hold(struct ibv_pd *pd)
{
	if (pd && to_spd(pd)->protection)
		__atomic_add_fetch(&to_spd(pd)->users, 1, __ATOMIC_RELAXED);
}

/* An object made on @pd is gone. */
static inline void srdma_pd_release(struct ibv_pd *pd)
{
	if (pd && to_spd(pd)->protection)
		__atomic_sub_fetch(&to_spd(pd)->users, 1, __ATOMIC_RELAXED);
}

/* The protection domain @pd is, or stands for (a parent domain). */
static inline struct srdma_pd *srdma_pd_protection(struct ibv_pd *pd)
{
	return to_spd(pd)->protection ?: to_spd(pd);
}

/* Whether two PDs, either of them a parent domain, are one kernel PD. */
static inline bool srdma_same_pd(struct ibv_pd *a, struct ibv_pd *b)
{
	return srdma_pd_protection(a) == srdma_pd_protection(b);
}

/* A ring mapped from the kernel. */
struct srdma_map {
	struct srdma_uring ring;
	void *addr;
	size_t length;
};

/*
 * lock:     the consumer side of the ring (polling, and the batch between
 *           ibv_start_poll() and ibv_end_poll()), and the mapping itself
 *           against ibv_resize_cq()
 * arm_lock: arming (a write to the notify word of the mapping) against
 *           ibv_resize_cq(), which replaces the mapping. Order: lock, then
 *           arm_lock; arming takes arm_lock only, so a process may arm a
 *           CQ inside its own polling batch
 * cur:      extended polling: the CQE the batch stands on, or NULL
 * no_lock:  IBV_CREATE_CQ_ATTR_SINGLE_THREADED: the application serializes
 *           every use of the CQ, so neither lock is taken
 * lost:     a resize replaced the ring in the kernel but the new one could
 *           not be mapped: once the old mapping is drained, polling reports
 *           an error, as for a CQ in the error state
 */
struct srdma_cq {
	struct verbs_cq vcq;
	struct ibv_pd *parent_domain;
	pthread_spinlock_t lock;
	pthread_spinlock_t arm_lock;
	struct srdma_map map;
	const struct srdma_cqe *cur;
	bool no_lock;
	bool lost;
};

struct srdma_wq {
	pthread_spinlock_t lock;	/* producers of the ring */
	struct srdma_map map;
	uint32_t max_sge;
};

/*
 * The batch of the ibv_wr_* API between ibv_wr_start() and
 * ibv_wr_complete()/ibv_wr_abort(), under the SQ lock:
 * n:     WQEs written after the SQ's producer index, not yet published
 * space: free slots of the SQ when the batch started
 * cur:   the WQE the last builder started (the setters complete it), or
 *        NULL
 * err:   the first error of the batch; ibv_wr_complete() returns it and
 *        publishes nothing
 */
struct srdma_wr_batch {
	uint32_t n;
	uint32_t space;
	struct srdma_send_wqe *cur;
	int err;
};

struct srdma_qp {
	struct verbs_qp vqp;
	struct ibv_pd *pd;		/* the PD it was made on */
	struct srdma_wq sq;
	struct srdma_wq rq;
	uint32_t max_inline;
	struct srdma_wr_batch wr;
};

/* A shared receive queue: its ring, posted to like an RQ. */
struct srdma_srq {
	struct verbs_srq vsrq;
	struct ibv_pd *pd;		/* the PD it was made on */
	struct srdma_wq rq;
};

static inline struct srdma_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct srdma_srq, vsrq.srq);
}

/* An address handle: the kernel's handle is what a UD WQE names. */
struct srdma_ah {
	struct ibv_ah ibah;
	uint32_t handle;
};

static inline struct srdma_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct srdma_ah, ibah);
}

#define to_srdma(type, ptr, member) container_of(ptr, struct srdma_##type, member)

static inline struct srdma_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct srdma_context, vctx.context);
}

static inline struct srdma_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct srdma_cq, vcq.cq);
}

static inline struct srdma_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct srdma_qp, vqp.qp);
}

static inline struct srdma_cq *to_scq_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct srdma_cq, vcq.cq_ex);
}

static inline struct srdma_qp *to_sqp_ex(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct srdma_qp, vqp.qp_ex);
}

/*
 * IBTA 10.3.1: a QP takes send work requests from RTS on (in SQD, SQE and
 * ERR they are queued or flushed), receive work requests from INIT on;
 * before that a post fails at once. The state is the one libibverbs keeps
 * from ibv_modify_qp(). The kernel may have moved the QP to ERR since
 * (a responder error, even in RTR): then it flushes what is posted.
 */
static inline bool srdma_qp_sq_open(const struct ibv_qp *qp,
				    const struct srdma_uring *sq)
{
	return (qp->state != IBV_QPS_RESET && qp->state != IBV_QPS_INIT &&
		qp->state != IBV_QPS_RTR) || srdma_uring_error(sq);
}

static inline bool srdma_qp_rq_open(const struct ibv_qp *qp)
{
	return qp->state != IBV_QPS_RESET;
}

/* The key byte of an L_Key or R_Key: the consumer's (ibv_inc_rkey()). */
#define SRDMA_KEY_BYTE_MASK	0xffu

/* CQ lock, unless the application promised a single thread. */
static inline void srdma_cq_lock(struct srdma_cq *cq)
{
	if (!cq->no_lock)
		pthread_spin_lock(&cq->lock);
}

static inline void srdma_cq_unlock(struct srdma_cq *cq)
{
	if (!cq->no_lock)
		pthread_spin_unlock(&cq->lock);
}

/* verbs.c: control path */
int srdma_query_device_ex(struct ibv_context *ctx,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int srdma_query_rt_values(struct ibv_context *ctx,
			  struct ibv_values_ex *values);
int srdma_query_port(struct ibv_context *ctx, uint8_t port,
		     struct ibv_port_attr *attr);
struct ibv_pd *srdma_alloc_parent_domain(struct ibv_context *ctx,
					 struct ibv_parent_domain_init_attr *attr);
struct ibv_pd *srdma_alloc_pd(struct ibv_context *ctx);
int srdma_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *srdma_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int srdma_dereg_mr(struct verbs_mr *vmr);
int srdma_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access);
struct ibv_cq *srdma_create_cq(struct ibv_context *ctx, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *srdma_create_cq_ex(struct ibv_context *ctx,
				     struct ibv_cq_init_attr_ex *attr);
int srdma_resize_cq(struct ibv_cq *cq, int cqe);
int srdma_destroy_cq(struct ibv_cq *cq);
struct ibv_qp *srdma_create_qp(struct ibv_pd *pd,
			       struct ibv_qp_init_attr *attr);
struct ibv_qp *srdma_create_qp_ex(struct ibv_context *ctx,
				  struct ibv_qp_init_attr_ex *attr);
int srdma_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		    int attr_mask);
int srdma_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);
int srdma_destroy_qp(struct ibv_qp *qp);
struct ibv_srq *srdma_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int srdma_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
		     int attr_mask);
int srdma_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int srdma_destroy_srq(struct ibv_srq *srq);
int srdma_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);
struct ibv_mw *srdma_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int srdma_dealloc_mw(struct ibv_mw *mw);
int srdma_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		  struct ibv_mw_bind *mw_bind);
struct ibv_ah *srdma_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int srdma_destroy_ah(struct ibv_ah *ah);

/* Map and unmap a ring described by a create response. */
int srdma_map_ring(struct ibv_context *ctx, struct srdma_map *map,
		   const struct srdma_ring_info *info);
void srdma_unmap_ring(struct srdma_map *map);

/* qp.c: posting fast path, and the WQE builder both posting APIs share */
int srdma_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int srdma_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
int srdma_wqe_init(struct srdma_qp *qp, struct srdma_send_wqe *w,
		   const struct ibv_send_wr *wr);
int srdma_wqe_set_sge(struct srdma_qp *qp, struct srdma_send_wqe *w,
		      const struct ibv_sge *sg, size_t num);
int srdma_wqe_add_inline(struct srdma_qp *qp, struct srdma_send_wqe *w,
			 const void *addr, size_t len);
bool srdma_sq_publish(struct srdma_wq *sq, uint32_t n);
int srdma_doorbell(struct ibv_qp *qp, bool send);

/* wr.c: the ibv_wr_* posting API */
int srdma_wr_check(enum ibv_qp_type type, uint64_t send_ops_flags);
void srdma_qp_init_wr(struct srdma_qp *qp);

/* cq.c: completion fast path */
int srdma_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
void srdma_cq_clean(struct ibv_cq *ibcq, uint32_t qpn, bool keep_recv);
int srdma_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void srdma_cq_init_ex(struct srdma_cq *cq);

#endif /* SRDMA_PROVIDER_H */
