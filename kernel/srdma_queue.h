/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Ring index arithmetic shared by every queue of softrdma.
 *
 * The layout and the ownership of each index are described once, in the
 * top comment of include/uapi/rdma/softrdma-abi.h. This file holds the pure
 * arithmetic on free-running 32-bit indices; it does no memory access of
 * its own, so that it can be tested on its own (srdma_kunit.c) and used on
 * both user-mapped and kernel-only rings.
 */
#ifndef SRDMA_QUEUE_H
#define SRDMA_QUEUE_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/log2.h>
#include <rdma/softrdma-abi.h>

/* Largest ring the driver creates, in entries. */
#define SRDMA_RING_MAX_ENTRIES	BIT(16)

/**
 * srdma_ring_count() - Number of entries between two free-running indices
 * @prod: producer index
 * @cons: consumer index
 *
 * Return: prod - cons, correct across wraparound of the 32-bit counters.
 */
static inline u32 srdma_ring_count(u32 prod, u32 cons)
{
	return prod - cons;
}

/**
 * srdma_ring_index_ok() - Check an index read from the other side
 * @own: the index this side owns and trusts
 * @other: the index the other side published (untrusted)
 * @num: ring size in entries, a power of two
 * @own_is_prod: true when this side is the producer
 *
 * A consistent pair never has more than @num entries between producer and
 * consumer. Anything else is a corrupt or hostile index.
 *
 * Return: true when @other is consistent with @own.
 */
static inline bool srdma_ring_index_ok(u32 own, u32 other, u32 num,
				       bool own_is_prod)
{
	u32 used = own_is_prod ? srdma_ring_count(own, other) :
				 srdma_ring_count(other, own);

	return used <= num;
}

/**
 * srdma_ring_slot() - Slot of a free-running index
 * @idx: free-running index
 * @num: ring size in entries, a power of two
 *
 * Return: slot number in [0, num).
 */
static inline u32 srdma_ring_slot(u32 idx, u32 num)
{
	return idx & (num - 1);
}

/**
 * srdma_ring_entries() - Ring size for a requested depth
 * @depth: number of entries the user asked for (at least 1)
 *
 * Return: the smallest power of two >= @depth, or 0 when @depth is 0 or
 * larger than SRDMA_RING_MAX_ENTRIES.
 */
static inline u32 srdma_ring_entries(u32 depth)
{
	if (!depth || depth > SRDMA_RING_MAX_ENTRIES)
		return 0;
	/* Not the macro: it would fold the rejected constants too. */
	return __roundup_pow_of_two(depth);
}

/**
 * srdma_ring_stride() - Entry stride for a given entry size
 * @size: bytes an entry needs
 *
 * Return: the smallest power of two >= max(@size, SRDMA_RING_MIN_STRIDE).
 */
static inline u32 srdma_ring_stride(u32 size)
{
	if (size < SRDMA_RING_MIN_STRIDE)
		size = SRDMA_RING_MIN_STRIDE;
	return __roundup_pow_of_two(size);
}

/**
 * srdma_ring_bytes() - Bytes of memory a ring occupies
 * @num: entries, a power of two
 * @stride: bytes per entry, a power of two
 *
 * Return: control area plus entries, not rounded to pages.
 */
static inline size_t srdma_ring_bytes(u32 num, u32 stride)
{
	return SRDMA_RING_CTRL_SIZE + (size_t)num * stride;
}

/**
 * srdma_cq_notify_wanted() - Does a CQE satisfy an armed CQ?
 * @notify: the armed request, enum srdma_cq_notify
 * @solicited: the CQE completes a solicited message
 * @error: the CQE has an error status
 *
 * IBTA 11.4.2.2: a CQ armed for solicited completions is also triggered by
 * a completion in error.
 *
 * Return: true when the completion event must be generated.
 */
static inline bool srdma_cq_notify_wanted(u32 notify, bool solicited,
					  bool error)
{
	return notify == SRDMA_CQ_NOTIFY_NEXT ||
	       (notify == SRDMA_CQ_NOTIFY_SOLICITED && (solicited || error));
}

/**
 * struct srdma_wq_geom - size of a work queue ring and what it grants
 * @num: entries (power of two), at least the requested depth
 * @stride: bytes per entry (power of two)
 * @max_sge: SGEs that fit in an entry, capped at the device limit
 * @max_inline: inline bytes that fit in an entry (send queues), capped
 */
struct srdma_wq_geom {
	u32 num;
	u32 stride;
	u32 max_sge;
	u32 max_inline;
};

/**
 * srdma_wq_geometry() - Lay out a work queue ring
 * @depth: requested work requests (0 is treated as 1)
 * @sge: requested SGEs per request
 * @inl: requested inline bytes per request (send queues)
 * @send: a send queue (struct srdma_send_wqe) or a receive queue
 * @sge_cap: device limit on SGEs
 * @inl_cap: device limit on inline bytes
 * @g: filled with the layout
 *
 * Return: true, or false when @depth exceeds SRDMA_RING_MAX_ENTRIES.
 */
static inline bool srdma_wq_geometry(u32 depth, u32 sge, u32 inl, bool send,
				     u32 sge_cap, u32 inl_cap,
				     struct srdma_wq_geom *g)
{
	u32 hdr = send ? sizeof(struct srdma_send_wqe) :
			 sizeof(struct srdma_recv_wqe);
	u32 body = sge * sizeof(struct srdma_sge);
	u32 room;

	if (send && inl > body)
		body = inl;
	g->num = srdma_ring_entries(depth ? depth : 1);
	if (!g->num)
		return false;
	g->stride = srdma_ring_stride(hdr + body);
	room = g->stride - hdr;
	g->max_sge = room / sizeof(struct srdma_sge);
	if (g->max_sge > sge_cap)
		g->max_sge = sge_cap;
	g->max_inline = send ? room : 0;
	if (g->max_inline > inl_cap)
		g->max_inline = inl_cap;
	return true;
}

#endif /* SRDMA_QUEUE_H */
