// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: registration, key lookup for the transport, access
 * checks and data movement in and out of registered memory.
 *
 * Keys: bits 31..8 of an L_Key/R_Key index the device's MR table, bits 7..0
 * are the key byte that a consumer may change with ib_inc_rkey() (fast
 * registration). A key names an MR only if both parts match.
 *
 * Lifetime: the MR table holds one reference; the transport takes one per
 * use (srdma_mr_get()/srdma_mr_put()) under RCU. Deregistration removes the
 * key from the table, drops the table's reference and waits until the
 * transport has dropped its own, so that no byte is moved after
 * ibv_dereg_mr() returns; the structure itself is freed after a grace
 * period because a lookup may still be looking at it.
 */

#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/sched/clock.h>
#include <linux/skbuff.h>
#include <rdma/ib_umem.h>

#include "srdma.h"

/* The longest an invalidation waits for accesses in flight (nanoseconds). */
#define SRDMA_MR_QUIESCE_NS	(10 * NSEC_PER_MSEC)

#define SRDMA_KEY_INDEX_SHIFT	8
#define SRDMA_KEY_INDEX_MAX	((1U << 24) - 1)

/**
 * srdma_mr_alloc_key() - Give an MR or a window its key and publish it
 * @sdev: the device
 * @mr: the MR, or a window's key object (srdma_mw.c)
 *
 * A fast-registration MR and a window start invalid.
 *
 * Context: process context.
 * Return: 0, -ENOMEM at the device's MR limit or without memory.
 */
int srdma_mr_alloc_key(struct srdma_dev *sdev, struct srdma_mr *mr)
{
	u32 index;
	int err;

	if (atomic_inc_return(&sdev->mr_cnt) > sdev->attr.max_mr) {
		err = -ENOMEM;
		goto err_dec;
	}
	refcount_set(&mr->ref, 1);
	atomic_set(&mr->inv_waiting, 0);
	init_completion(&mr->done);
	spin_lock_init(&mr->state_lock);
	/* Published with its key set: lookups compare the whole key. */
	mr->ibmr.lkey = get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->valid = !mr->fast && !mr->mw_type;
	err = xa_alloc_cyclic_irq(&sdev->mr_xa, &index, NULL,
				  XA_LIMIT(1, SRDMA_KEY_INDEX_MAX),
				  &sdev->mr_next, GFP_KERNEL);
	if (err < 0)
		goto err_dec;
	mr->ibmr.lkey |= index << SRDMA_KEY_INDEX_SHIFT;
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	xa_store_irq(&sdev->mr_xa, index, mr, GFP_KERNEL);
	return 0;

err_dec:
	atomic_dec(&sdev->mr_cnt);
	return err;
}

/**
 * srdma_mr_retire() - Unpublish a key and wait until it is no longer used
 * @sdev: the device
 * @mr: the MR or window
 *
 * Context: process context; sleeps.
 */
void srdma_mr_retire(struct srdma_dev *sdev, struct srdma_mr *mr)
{
	xa_erase_irq(&sdev->mr_xa, mr->ibmr.lkey >> SRDMA_KEY_INDEX_SHIFT);
	srdma_mr_put(mr);
	wait_for_completion(&mr->done);
	atomic_dec(&sdev->mr_cnt);
}

/**
 * srdma_mr_get() - Find the MR a key names and take a reference on it
 * @sdev: the device
 * @key: an L_Key or R_Key
 *
 * Context: any.
 * Return: the MR, or NULL when no MR has this key.
 */
struct srdma_mr *srdma_mr_get(struct srdma_dev *sdev, u32 key)
{
	struct srdma_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, key >> SRDMA_KEY_INDEX_SHIFT);
	if (mr && (READ_ONCE(mr->key) != key ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	if (mr) {
		/*
		 * The reference before the reads of the MR's state (its
		 * validity) that follow: an invalidation clears that state
		 * before it counts the references (srdma_mr_quiesce()).
		 */
		smp_mb__after_atomic();
	}
	return mr;
}

/**
 * srdma_mr_get_index() - Find the MR or window of a key's index part
 * @sdev: the device
 * @key: a key whose key byte may differ from the current one (a bind
 *	gives a window its next key)
 *
 * Context: any.
 * Return: the MR or window, referenced, or NULL.
 */
struct srdma_mr *srdma_mr_get_index(struct srdma_dev *sdev, u32 key)
{
	struct srdma_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, key >> SRDMA_KEY_INDEX_SHIFT);
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * srdma_mr_put() - Drop a reference taken by srdma_mr_get()
 * @mr: the MR
 *
 * Context: any.
 */
void srdma_mr_put(struct srdma_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/**
 * srdma_mr_check() - May this access of an MR proceed?
 * @mr: the MR
 * @pd: the PD of the QP that makes the access
 * @iova: first byte
 * @len: bytes
 * @access: IB_ACCESS_* flags the access needs (0 for a local read)
 *
 * IBTA 10.6.3 / C9-88: the PD matches, the range lies within the region
 * and the region grants the access.
 *
 * Context: any.
 * Return: true if allowed.
 */
bool srdma_mr_check(const struct srdma_mr *mr, const struct ib_pd *pd,
		    u64 iova, u64 len, int access)
{
	u64 start = mr->ibmr.iova;

	/* A window's key names no local memory (srdma_rkey_get()). */
	/* Acquire: a fast registration's fields were written before valid. */
	if (mr->mw_type || mr->ibmr.pd != pd || !smp_load_acquire(&mr->valid))
		return false;
	if ((mr->access & access) != access)
		return false;
	if (iova < start || len > mr->ibmr.length ||
	    iova - start > mr->ibmr.length - len)
		return false;
	return true;
}

/*
 * Kernel address of the byte at @iova of a user MR and the bytes left in
 * its page. Only called after srdma_mr_check() passed for the range.
 */
static struct page *srdma_mr_page(const struct srdma_mr *mr, u64 iova,
				  unsigned int *poff, unsigned int *plen)
{
	u64 off = iova - mr->ibmr.iova + mr->page_offset;

	*poff = offset_in_page(off);
	*plen = PAGE_SIZE - *poff;
	return mr->pages[off >> PAGE_SHIFT];
}

/*
 * Kernel address of the byte at @iova of a fast-registration MR and the
 * bytes left in its block. map_mr_sg stored the blocks' addresses; with
 * the core's virtual DMA they are kernel virtual addresses.
 */
static void *srdma_mr_fr_addr(const struct srdma_mr *mr, u64 iova,
			      unsigned int *plen)
{
	u64 psz = mr->ibmr.page_size;
	u64 off = iova - ALIGN_DOWN(mr->ibmr.iova, psz);

	*plen = psz - off % psz;
	return (void *)(uintptr_t)(mr->fr_pages[off / psz] + off % psz);
}

/**
 * srdma_mr_copy() - Move bytes between registered memory and a buffer
 * @mr: the MR
 * @iova: first byte in the MR (range already checked)
 * @buf: kernel buffer
 * @len: bytes
 * @to_mr: true to write the MR, false to read it
 *
 * Context: any.
 */
void srdma_mr_copy(const struct srdma_mr *mr, u64 iova, void *buf, u32 len,
		   bool to_mr)
{
	unsigned int poff, plen;
	struct page *page;
	void *va;

	if (mr->fast) {
		while (len) {
			va = srdma_mr_fr_addr(mr, iova, &plen);
			plen = min(plen, len);
			if (to_mr)
				memcpy(va, buf, plen);
			else
				memcpy(buf, va, plen);
			iova += plen;
			buf += plen;
			len -= plen;
		}
		return;
	}
	if (!mr->umem) {
		/* DMA MR: the core's virtual DMA gives kernel addresses. */
		va = (void *)(uintptr_t)iova;
		if (to_mr)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return;
	}
	while (len) {
		page = srdma_mr_page(mr, iova, &poff, &plen);
		plen = min(plen, len);
		va = kmap_local_page(page);
		if (to_mr)
			memcpy(va + poff, buf, plen);
		else
			memcpy(buf, va + poff, plen);
		kunmap_local(va);
		iova += plen;
		buf += plen;
		len -= plen;
	}
}

/**
 * srdma_mr_copy_from_skb() - Place received payload into registered memory
 * @mr: the MR
 * @iova: first byte in the MR (range already checked)
 * @skb: the packet
 * @off: offset of the payload in @skb (from skb->data)
 * @len: bytes
 *
 * Copies straight from the skb's fragments; the skb is never linearized.
 *
 * Context: any.
 * Return: 0, or -EFAULT when the skb is shorter than @off + @len.
 */
int srdma_mr_copy_from_skb(const struct srdma_mr *mr, u64 iova,
			   const struct sk_buff *skb, int off, u32 len)
{
	unsigned int poff, plen;
	struct page *page;
	void *va;
	int err;

	if (mr->fast) {
		while (len) {
			va = srdma_mr_fr_addr(mr, iova, &plen);
			plen = min(plen, len);
			err = skb_copy_bits(skb, off, va, plen);
			if (err)
				return err;
			iova += plen;
			off += plen;
			len -= plen;
		}
		return 0;
	}
	if (!mr->umem)
		return skb_copy_bits(skb, off, (void *)(uintptr_t)iova, len);
	while (len) {
		page = srdma_mr_page(mr, iova, &poff, &plen);
		plen = min(plen, len);
		va = kmap_local_page(page);
		err = skb_copy_bits(skb, off, va + poff, plen);
		kunmap_local(va);
		if (err)
			return err;
		iova += plen;
		off += plen;
		len -= plen;
	}
	return 0;
}

/**
 * srdma_mr_atomic() - Execute an atomic operation on registered memory
 * @mr: the MR
 * @iova: 8-byte aligned address in the MR (range already checked)
 * @cmp_swap: true for compare-and-swap, false for fetch-and-add
 * @compare: the compare operand
 * @swap_add: the swap or add operand
 *
 * The 8 bytes never cross a page since they are aligned. Atomic with
 * respect to every other atomic of this device on the same address
 * (IBTA 9.4.5: atomicity among the operations of this HCA).
 *
 * Context: any.
 * Return: the original value.
 */
u64 srdma_mr_atomic(const struct srdma_mr *mr, u64 iova, bool cmp_swap,
		    u64 compare, u64 swap_add)
{
	unsigned int poff, plen;
	atomic64_t *p;
	void *va = NULL;
	u64 orig;

	if (mr->fast) {
		p = srdma_mr_fr_addr(mr, iova, &plen);
	} else if (mr->umem) {
		va = kmap_local_page(srdma_mr_page(mr, iova, &poff, &plen));
		p = va + poff;
	} else {
		p = (atomic64_t *)(uintptr_t)iova;
	}
	if (cmp_swap)
		orig = atomic64_cmpxchg(p, compare, swap_add);
	else
		orig = atomic64_fetch_add(swap_add, p);
	if (va)
		kunmap_local(va);
	return orig;
}

static int srdma_mr_pin_pages(struct srdma_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	struct sg_page_iter it;
	size_t n = ib_umem_num_pages(umem), i = 0;

	mr->pages = kvcalloc(n, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&umem->sgt_append.sgt, &it, 0) {
		if (i == n)
			break;
		mr->pages[i++] = sg_page_iter_page(&it);
	}
	mr->npages = i;
	mr->page_offset = ib_umem_offset(umem);
	return i == n ? 0 : -EFAULT;
}

/**
 * srdma_get_dma_mr() - MR covering all kernel memory, for in-kernel users
 * @ibpd: the PD
 * @access: IB_ACCESS_* flags
 *
 * Context: process context; may sleep.
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *srdma_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct srdma_dev *sdev = to_sdev(ibpd->device);
	struct srdma_mr *mr;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->access = access;
	mr->ibmr.pd = ibpd;
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
	err = srdma_mr_alloc_key(sdev, mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * srdma_reg_user_mr() - Register (and pin) a process's memory
 * @ibpd: the PD
 * @start: start virtual address of the memory
 * @length: bytes
 * @iova: address by which the MR is accessed (ibv_reg_mr's addr, or the
 *	zero-based offset)
 * @access: IB_ACCESS_* flags, already checked by the core
 * @udata: the command's udata
 *
 * Context: process context; may sleep.
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *srdma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibpd->device);
	struct srdma_mr *mr;
	int err;

	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	if (!length || length > sdev->attr.max_mr_size)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	mr->umem = ib_umem_get(&sdev->ibdev, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		goto err_free;
	}
	err = srdma_mr_pin_pages(mr);
	if (err)
		goto err_release;
	mr->access = access;
	mr->ibmr.pd = ibpd;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	err = srdma_mr_alloc_key(sdev, mr);
	if (err)
		goto err_release;
	return &mr->ibmr;

err_release:
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * srdma_rereg_user_mr() - Change a process's MR in place (ibv_rereg_mr(3))
 * @ibmr: the MR
 * @flags: IB_MR_REREG_TRANS (new memory), _PD, _ACCESS
 * @start: new start address (TRANS)
 * @length: new length (TRANS)
 * @iova: new I/O virtual address (TRANS)
 * @access: new access flags (ACCESS)
 * @pd: new PD (PD)
 * @udata: unused
 *
 * The MR keeps its keys. The new memory is pinned first, so a failure
 * leaves the MR as it was; then the key is withdrawn (lookups find
 * nothing), the transport's uses of the MR drain, the MR changes and its
 * key comes back. Requests that arrive meanwhile fail their R_Key check,
 * as they may (IBTA 11.2.8.3: the MR is not usable during a reregister).
 *
 * Context: process context; sleeps.
 * Return: NULL (changed in place) or an ERR_PTR.
 */
struct ib_mr *srdma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibmr->device);
	struct srdma_mr *mr = to_smr(ibmr);
	unsigned long index = mr->ibmr.lkey >> SRDMA_KEY_INDEX_SHIFT;
	struct srdma_mr fresh = {};
	int err;

	if (!mr->umem || (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD |
				    IB_MR_REREG_ACCESS)))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (access & IB_ACCESS_ON_DEMAND)
		return ERR_PTR(-EOPNOTSUPP);
	if (flags & IB_MR_REREG_TRANS) {
		if (!length || length > sdev->attr.max_mr_size)
			return ERR_PTR(-EINVAL);
		fresh.umem = ib_umem_get(&sdev->ibdev, start, length, access);
		if (IS_ERR(fresh.umem))
			return ERR_CAST(fresh.umem);
		err = srdma_mr_pin_pages(&fresh);
		if (err) {
			kvfree(fresh.pages);
			ib_umem_release(fresh.umem);
			return ERR_PTR(err);
		}
	}

	/* The slot stays allocated (reserved): republishing cannot fail. */
	xa_cmpxchg_irq(&sdev->mr_xa, index, mr, XA_ZERO_ENTRY, GFP_KERNEL);
	synchronize_rcu();
	srdma_mr_put(mr);
	wait_for_completion(&mr->done);

	if (flags & IB_MR_REREG_TRANS) {
		swap(mr->umem, fresh.umem);
		swap(mr->pages, fresh.pages);
		mr->npages = fresh.npages;
		mr->page_offset = fresh.page_offset;
		mr->ibmr.iova = iova;
		mr->ibmr.length = length;
	}
	if (flags & IB_MR_REREG_PD)
		mr->ibmr.pd = pd;
	mr->access = access;

	refcount_set(&mr->ref, 1);
	reinit_completion(&mr->done);
	xa_store_irq(&sdev->mr_xa, index, mr, GFP_KERNEL);
	if (fresh.umem) {
		kvfree(fresh.pages);
		ib_umem_release(fresh.umem);
	}
	return NULL;
}

/**
 * srdma_dereg_mr() - Deregister an MR and unpin its memory
 * @ibmr: the MR
 * @udata: unused
 *
 * Waits until no packet is being placed into or read from the MR.
 *
 * Context: process context; may sleep.
 * Return: 0.
 */
int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srdma_mr *mr = to_smr(ibmr);

	srdma_mr_retire(to_sdev(ibmr->device), mr);
	kvfree(mr->pages);
	kvfree(mr->fr_pages);
	ib_umem_release(mr->umem);
	kfree_rcu(mr, rcu);
	return 0;
}

/**
 * srdma_sgl_copy() - Move message bytes between an SGE list and a buffer
 * @sdev: the device
 * @pd: the PD of the QP that owns the SGEs
 * @sge: the list
 * @num_sge: entries in @sge
 * @off: offset in the message the list describes
 * @len: bytes
 * @dir: SRDMA_GATHER (list to @buf), SRDMA_SCATTER (@buf to list) or
 *	SRDMA_SCATTER_SKB (@skb from @skb_off to list)
 * @buf: kernel buffer for SRDMA_GATHER and SRDMA_SCATTER
 * @skb: source packet for SRDMA_SCATTER_SKB
 * @skb_off: offset of the bytes in @skb
 *
 * Every L_Key is looked up and checked against @pd, the range and, for a
 * scatter, IB_ACCESS_LOCAL_WRITE (IBTA 10.6.3.1).
 *
 * Context: any.
 * Return: true, or false on a protection error or a list too short.
 */
bool srdma_sgl_copy(struct srdma_dev *sdev, const struct ib_pd *pd,
		    const struct srdma_sge *sge, u32 num_sge, u32 off, u32 len,
		    enum srdma_copy_dir dir, void *buf,
		    const struct sk_buff *skb, int skb_off)
{
	int access = dir == SRDMA_GATHER ? 0 : IB_ACCESS_LOCAL_WRITE;
	struct srdma_mr *mr;
	u32 i, n;
	bool ok;

	for (i = 0; i < num_sge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - off);
		mr = srdma_mr_get(sdev, sge[i].lkey);
		if (!mr)
			return false;
		ok = srdma_mr_check(mr, pd, sge[i].addr + off, n, access);
		if (ok) {
			if (dir == SRDMA_SCATTER_SKB)
				ok = !srdma_mr_copy_from_skb(mr, sge[i].addr + off,
							     skb, skb_off, n);
			else
				srdma_mr_copy(mr, sge[i].addr + off, buf, n,
					      dir == SRDMA_SCATTER);
		}
		srdma_mr_put(mr);
		if (!ok)
			return false;
		buf += n;
		skb_off += n;
		len -= n;
		off = 0;
	}
	return !len;
}

/**
 * srdma_alloc_mr() - MR for fast registration by an in-kernel user
 * @ibpd: the PD
 * @type: only IB_MR_TYPE_MEM_REG
 * @max_num_sg: blocks the MR can map
 *
 * The MR is invalid until a REG_MR work request registers it.
 *
 * Context: process context; may sleep.
 * Return: the MR or an ERR_PTR.
 */
struct ib_mr *srdma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct srdma_dev *sdev = to_sdev(ibpd->device);
	struct srdma_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SRDMA_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->fr_pages = kvcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->fr_pages) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->fr_max = max_num_sg;
	mr->fast = true;
	mr->ibmr.pd = ibpd;
	err = srdma_mr_alloc_key(sdev, mr);
	if (err)
		goto err_free_pages;
	return &mr->ibmr;

err_free_pages:
	kvfree(mr->fr_pages);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

static int srdma_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct srdma_mr *mr = to_smr(ibmr);

	if (mr->fr_npages == mr->fr_max)
		return -ENOMEM;
	mr->fr_pages[mr->fr_npages++] = addr;
	return 0;
}

/**
 * srdma_map_mr_sg() - Give a fast-registration MR its pages
 * @ibmr: the MR
 * @sg: scatterlist (virtual DMA: addresses are kernel addresses)
 * @sg_nents: entries in @sg
 * @sg_offset: offset into the first entry
 *
 * Context: any; the MR must not be valid (not in use by the transport).
 * Return: the number of entries mapped.
 */
int srdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	to_smr(ibmr)->fr_npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, srdma_set_page);
}

/**
 * srdma_mr_fast_reg() - Execute a REG_MR work request
 * @sdev: the device
 * @pd: the PD of the QP that posted it
 * @mr: the MR (map_mr_sg gave its pages, iova and length)
 * @key: the key the MR takes (key byte updated by the consumer)
 * @access: IB_ACCESS_* flags granted
 *
 * IBTA 10.6.3.1: only a fast-registration MR of the same PD, in the
 * invalid state, can be registered.
 *
 * Context: qp->lock held (any context); takes the MR's state_lock.
 * Return: IB_WC_SUCCESS or the completion error.
 */
enum ib_wc_status srdma_mr_fast_reg(struct srdma_dev *sdev,
				    const struct ib_pd *pd,
				    struct srdma_mr *mr, u32 key, int access)
{
	enum ib_wc_status status = IB_WC_LOC_PROT_ERR;

	spin_lock(&mr->state_lock);
	if (!mr->fast || mr->ibmr.pd != pd || READ_ONCE(mr->valid) ||
	    (key >> SRDMA_KEY_INDEX_SHIFT) !=
	    (mr->key >> SRDMA_KEY_INDEX_SHIFT))
		goto out;
	mr->access = access;
	WRITE_ONCE(mr->key, key);
	/* Key and access before validity, for lookups that test it. */
	smp_store_release(&mr->valid, true);
	status = IB_WC_SUCCESS;
out:
	spin_unlock(&mr->state_lock);
	return status;
}

/*
 * An access that found the MR valid just before its invalidation may still
 * be moving bytes on another CPU: a responder placing or reading one
 * packet, holding a reference with preemption off. Wait for it, so that
 * no byte moves once the invalidation completes and the ULP may remap or
 * free the pages. Beyond the registration's reference and those of the
 * invalidations waiting here (two QPs may invalidate one key at once: the
 * second finds it free), every reference is such an access; the wait is
 * bounded all the same.
 */
static void srdma_mr_quiesce(struct srdma_mr *mr)
{
	u64 end = local_clock() + SRDMA_MR_QUIESCE_NS;

	/* This waiter's reference is counted before the waiter is. */
	smp_mb__before_atomic();
	atomic_inc(&mr->inv_waiting);
	/*
	 * The MR's state (invalid now) before the references are read;
	 * pairs with the barrier of srdma_mr_get().
	 */
	smp_mb__after_atomic();
	for (;;) {
		int waiting = atomic_read(&mr->inv_waiting);

		/* A waiter counted here has its reference counted below. */
		smp_rmb();
		if (refcount_read(&mr->ref) <= 1 + waiting)
			break;
		if (local_clock() > end) {
			pr_warn_ratelimited("softrdma: MR key %#x still in use after its invalidation\n",
					    READ_ONCE(mr->key));
			break;
		}
		cpu_relax();
	}
	atomic_dec(&mr->inv_waiting);
}

/**
 * srdma_mr_invalidate() - Invalidate a fast-registration MR or a window
 * @qp: the QP that asks (LOCAL_INV, or SEND with invalidate)
 * @key: the key to invalidate
 *
 * IBTA 10.6.6, o9-5.2.2: only a fast-registration key or a type 2 window
 * of the QP's PD can be invalidated, a valid window only by the QP it is
 * bound to. A key in the Free state stays as it is, and the invalidation
 * succeeds (the note under o9-5.2.2).
 *
 * The test and the change of the key's state are one step under its
 * state_lock: LOCAL_INV, REG_MR and binds (requesters, under qp->lock) and
 * SENDs with invalidate (responders, under qp->resp_lock) of any QP may
 * race for one key, and only one of them may find it valid. A
 * fast-registration MR's invalidation returns once the accesses that
 * found it valid are done (srdma_mr_quiesce()).
 *
 * Context: the lock of @qp's side that asks held (qp->lock for a
 * LOCAL_INV, qp->resp_lock for a SEND with invalidate); takes the key's
 * state_lock; may spin while another CPU finishes a packet.
 * Return: IB_WC_SUCCESS or the completion error.
 */
enum ib_wc_status srdma_mr_invalidate(const struct srdma_qp *qp, u32 key)
{
	struct srdma_mr *mr = srdma_mr_get(to_sdev(qp->ibqp.device), key);
	const struct ib_pd *pd = qp->ibqp.pd;
	enum ib_wc_status status = IB_WC_LOC_PROT_ERR;

	if (!mr)
		return status;
	spin_lock(&mr->state_lock);
	/* Registered or bound again under another key meanwhile: not @key. */
	if (READ_ONCE(mr->key) != key)
		goto out;
	if (mr->mw_type) {
		status = srdma_mw_invalidate(mr, qp);
	} else if (mr->fast && mr->ibmr.pd == pd) {
		WRITE_ONCE(mr->valid, false);
		status = IB_WC_SUCCESS;
	}
out:
	spin_unlock(&mr->state_lock);
	/*
	 * Free already, the key may be in the hands of another invalidation
	 * that waits here still: neither returns before the accesses that
	 * found it valid are done.
	 */
	if (status == IB_WC_SUCCESS && !mr->mw_type)
		srdma_mr_quiesce(mr);
	srdma_mr_put(mr);
	return status;
}

/**
 * srdma_mr_attach() - Append MR bytes to a packet by page reference
 * @mr: a user MR (pinned pages)
 * @iova: first byte (range already checked)
 * @len: bytes
 * @skb: the packet; the pages are added as fragments
 *
 * Context: any.
 * Return: 0; -EOPNOTSUPP for an MR without pinned pages; -EMSGSIZE when
 * the packet ran out of fragment slots (some bytes may be attached).
 */
int srdma_mr_attach(const struct srdma_mr *mr, u64 iova, u32 len,
		    struct sk_buff *skb)
{
	unsigned int poff, plen;
	struct page *page;
	int err;

	if (!mr->umem)
		return -EOPNOTSUPP;
	while (len) {
		page = srdma_mr_page(mr, iova, &poff, &plen);
		plen = min(plen, len);
		err = srdma_net_add_page(skb, page, poff, plen);
		if (err)
			return err;
		iova += plen;
		len -= plen;
	}
	return 0;
}

/**
 * srdma_sgl_attach() - Append message bytes of an SGE list by reference
 * @sdev: the device
 * @pd: the PD of the QP that owns the SGEs
 * @sge: the list
 * @num_sge: entries in @sge
 * @off: offset in the message
 * @len: bytes
 * @skb: the packet
 *
 * The zero-copy twin of srdma_sgl_copy(SRDMA_GATHER): the same checks,
 * but the bytes go into @skb as page fragments of the pinned memory.
 *
 * Context: any.
 * Return: 0; -EACCES on a protection error or a list too short;
 * -EOPNOTSUPP or -EMSGSIZE when the bytes cannot be attached, and the
 * caller must build the packet again by copying.
 */
int srdma_sgl_attach(struct srdma_dev *sdev, const struct ib_pd *pd,
		     const struct srdma_sge *sge, u32 num_sge, u32 off,
		     u32 len, struct sk_buff *skb)
{
	struct srdma_mr *mr;
	u32 i, n;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		n = min(len, sge[i].length - off);
		mr = srdma_mr_get(sdev, sge[i].lkey);
		if (!mr)
			return -EACCES;
		err = srdma_mr_check(mr, pd, sge[i].addr + off, n, 0) ?
		      srdma_mr_attach(mr, sge[i].addr + off, n, skb) : -EACCES;
		srdma_mr_put(mr);
		if (err)
			return err;
		len -= n;
		off = 0;
	}
	return len ? -EACCES : 0;
}
