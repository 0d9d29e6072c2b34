// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring memory: allocation, mapping into a process, and the accessors that
 * every queue uses. The layout and the ownership of each index are those of
 * the top comment of include/uapi/rdma/softrdma-abi.h.
 *
 * A ring of a process lives in vmalloc_user() memory owned by a
 * struct srdma_mmap_entry. Destroying the queue removes the entry; the core
 * calls srdma_mmap_free() when the last reference to the entry is gone, and
 * pages still mapped by the process stay valid until it unmaps them
 * (remap_vmalloc_range() took a reference on each page).
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"

/* The ABI's sizes: a change here is an ABI change (softrdma-abi.h). */
static_assert(sizeof(struct srdma_ring_ctrl) == SRDMA_RING_CTRL_SIZE);
static_assert(offsetof(struct srdma_ring_ctrl, cons) == 64);
static_assert(offsetof(struct srdma_ring_ctrl, notify) == 128);
static_assert(offsetof(struct srdma_ring_ctrl, kstate) == 192);
static_assert(sizeof(struct srdma_sge) == 16);
static_assert(sizeof(struct srdma_send_wqe) == 64);
static_assert(sizeof(struct srdma_recv_wqe) == 16);
static_assert(sizeof(struct srdma_cqe) == 64);
static_assert(sizeof(struct srdma_ring_info) == 24);
static_assert(sizeof(struct srdma_alloc_ucontext_req) == 8);
static_assert(sizeof(struct srdma_alloc_ucontext_resp) % 8 == 0);
static_assert(sizeof(struct srdma_create_cq_resp) % 8 == 0);
static_assert(sizeof(struct srdma_create_qp_resp) % 8 == 0);

/**
 * srdma_ring_init() - Allocate a ring and, for a process, its mmap entry
 * @ring: the ring to set up (zeroed by the caller)
 * @udata: the create command's udata, or NULL for an in-kernel queue
 * @num: entries, a power of two
 * @stride: bytes per entry, a power of two
 *
 * Context: process context; may sleep.
 * Return: 0, -ENOMEM, or the error of the mmap entry insertion.
 */
int srdma_ring_init(struct srdma_ring *ring, struct ib_udata *udata,
		    u32 num, u32 stride)
{
	size_t bytes = PAGE_ALIGN(srdma_ring_bytes(num, stride));
	struct srdma_ucontext *uc;
	struct srdma_mmap_entry *entry;
	void *buf;
	int err;

	buf = udata ? vmalloc_user(bytes) : vzalloc(bytes);
	if (!buf)
		return -ENOMEM;

	ring->ctrl = buf;
	ring->buf = buf + SRDMA_RING_CTRL_SIZE;
	ring->num = num;
	ring->stride = stride;
	ring->own = 0;
	ring->mmap = NULL;
	if (!udata)
		return 0;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry) {
		err = -ENOMEM;
		goto err_free_buf;
	}
	entry->buf = buf;
	uc = rdma_udata_to_drv_context(udata, struct srdma_ucontext, ibuc);
	err = rdma_user_mmap_entry_insert(&uc->ibuc, &entry->rdma, bytes);
	if (err)
		goto err_free_entry;
	ring->mmap = entry;
	return 0;

err_free_entry:
	kfree(entry);
err_free_buf:
	vfree(buf);
	ring->ctrl = NULL;
	return err;
}

/**
 * srdma_ring_destroy() - Release a ring
 * @ring: a ring set up by srdma_ring_init(), or a zeroed one
 *
 * A process's ring is freed by srdma_mmap_free() once unmapped.
 *
 * Context: process context.
 */
void srdma_ring_destroy(struct srdma_ring *ring)
{
	if (ring->mmap)
		rdma_user_mmap_entry_remove(&ring->mmap->rdma);
	else
		vfree(ring->ctrl);
	memset(ring, 0, sizeof(*ring));
}

/**
 * srdma_ring_info() - Describe a process's ring for a create response
 * @ring: a ring with an mmap entry
 * @info: filled in
 */
void srdma_ring_info(const struct srdma_ring *ring,
		     struct srdma_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!ring->mmap)
		return;
	info->mmap_offset = rdma_user_mmap_get_offset(&ring->mmap->rdma);
	info->mmap_length = (u64)ring->mmap->rdma.npages << PAGE_SHIFT;
	info->num_entries = ring->num;
	info->stride = ring->stride;
}

/**
 * srdma_mmap() - Map a ring into the calling process
 * @ibuc: the process's context
 * @vma: the mapping; its offset names the ring and its size must match
 *
 * Context: process context, mmap lock held.
 * Return: 0, or -EINVAL for an unknown offset or a wrong size.
 */
int srdma_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct srdma_mmap_entry *entry;
	int err;

	/* Checks that the size of the mapping equals the entry's. */
	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct srdma_mmap_entry, rdma);
	err = remap_vmalloc_range(vma, entry->buf, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/**
 * srdma_mmap_free() - Free a ring once its last mmap reference is gone
 * @rdma_entry: the entry
 *
 * Context: any process context.
 */
void srdma_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct srdma_mmap_entry *entry =
		container_of(rdma_entry, struct srdma_mmap_entry, rdma);

	vfree(entry->buf);
	kfree(entry);
}
