/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The process's side of the shared rings. The layout, the ownership of
 * each index and the acquire/release pairs are those of the top comment of
 * include/uapi/rdma/softrdma-abi.h; this file follows it exactly.
 *
 * Header-only, free of libibverbs types and written with the compiler's
 * __atomic builtins (valid in C and C++) so that the userspace unit tests
 * exercise the very code the provider runs.
 */
#ifndef SRDMA_PROVIDER_RING_H
#define SRDMA_PROVIDER_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/softrdma-abi.h>

/*
 * ctrl:   control area (shared with the kernel)
 * buf:    first entry
 * num:    entries, a power of two
 * stride: bytes per entry, a power of two
 * own:    the index this process owns (prod of a work queue, cons of a
 *         CQ); the shared copy is only ever published from it
 */
struct srdma_uring {
	struct srdma_ring_ctrl *ctrl;
	uint8_t *buf;
	uint32_t num;
	uint32_t stride;
	uint32_t own;
};

#define srdma_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define srdma_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

static inline void srdma_uring_setup(struct srdma_uring *r, void *mem,
				     uint32_t num, uint32_t stride)
{
	r->ctrl = (struct srdma_ring_ctrl *)mem;
	r->buf = (uint8_t *)mem + SRDMA_RING_CTRL_SIZE;
	r->num = num;
	r->stride = stride;
	r->own = 0;
}

static inline void *srdma_uring_entry(const struct srdma_uring *r,
				      uint32_t idx)
{
	return r->buf + (size_t)(idx & (r->num - 1)) * r->stride;
}

/* --- Producer side (SQ, RQ, SRQ) --- */

/* Entries the producer may still write before the ring is full. */
static inline uint32_t srdma_uring_space(const struct srdma_uring *r)
{
	uint32_t cons = srdma_load_acquire(&r->ctrl->cons);
	uint32_t used = r->own - cons;

	return used >= r->num ? 0 : r->num - used;
}

/* The slot the next entry goes to; valid while space() > 0. */
static inline void *srdma_uring_prod_entry(const struct srdma_uring *r)
{
	return srdma_uring_entry(r, r->own);
}

/* Publish every entry written so far (release: entries before prod). */
static inline void srdma_uring_publish(struct srdma_uring *r, uint32_t count)
{
	r->own += count;
	srdma_store_release(&r->ctrl->prod, r->own);
}

/* --- Consumer side (CQ) --- */

/* Next entry to consume, or NULL when the ring is empty (acquire). */
static inline const void *srdma_uring_cons_peek(const struct srdma_uring *r)
{
	uint32_t prod = srdma_load_acquire(&r->ctrl->prod);

	return prod == r->own ? NULL : srdma_uring_entry(r, r->own);
}

/* Hand consumed entries back to the producer (release). */
static inline void srdma_uring_consume(struct srdma_uring *r, uint32_t count)
{
	r->own += count;
	srdma_store_release(&r->ctrl->cons, r->own);
}

/* The kernel put the queue or CQ in the error state. */
static inline bool srdma_uring_error(const struct srdma_uring *r)
{
	return __atomic_load_n(&r->ctrl->kstate, __ATOMIC_RELAXED) &
	       SRDMA_RING_KSTATE_ERROR;
}

/*
 * Arm a CQ. The full fence orders the request before the caller's next
 * poll; the kernel orders its CQE before its read of the request. A NEXT
 * request is never weakened to SOLICITED.
 */
static inline void srdma_uring_arm(struct srdma_uring *r, bool solicited)
{
	uint32_t *n = &r->ctrl->notify;
	uint32_t want = solicited ? SRDMA_CQ_NOTIFY_SOLICITED :
				    SRDMA_CQ_NOTIFY_NEXT;
	uint32_t cur = __atomic_load_n(n, __ATOMIC_RELAXED);

	while (cur != SRDMA_CQ_NOTIFY_NEXT &&
	       !__atomic_compare_exchange_n(n, &cur, want, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

#endif /* SRDMA_PROVIDER_RING_H */
