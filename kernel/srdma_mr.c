// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions.
 *
 * Keys: bits 31..8 of an L_Key/R_Key index the device's MR table, bits 7..0
 * are the key byte that a consumer may change with ib_inc_rkey() (fast
 * registration). A key names an MR only if both parts match.
 */

#include <linux/random.h>
#include <rdma/ib_umem.h>

#include "srdma.h"

#define SRDMA_KEY_INDEX_SHIFT	8
#define SRDMA_KEY_INDEX_MAX	((1U << 24) - 1)

static int srdma_mr_alloc_key(struct srdma_dev *sdev, struct srdma_mr *mr)
{
	u32 index;
	int err;

	if (atomic_inc_return(&sdev->mr_cnt) > sdev->attr.max_mr) {
		err = -ENOMEM;
		goto err_dec;
	}
	err = xa_alloc_cyclic(&sdev->mr_xa, &index, mr,
			      XA_LIMIT(1, SRDMA_KEY_INDEX_MAX),
			      &sdev->mr_next, GFP_KERNEL);
	if (err < 0)
		goto err_dec;
	mr->ibmr.lkey = index << SRDMA_KEY_INDEX_SHIFT | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	return 0;

err_dec:
	atomic_dec(&sdev->mr_cnt);
	return err;
}

static void srdma_mr_free_key(struct srdma_dev *sdev, struct srdma_mr *mr)
{
	xa_erase(&sdev->mr_xa, mr->ibmr.lkey >> SRDMA_KEY_INDEX_SHIFT);
	atomic_dec(&sdev->mr_cnt);
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
	err = srdma_mr_alloc_key(sdev, mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;
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
	mr->access = access;
	err = srdma_mr_alloc_key(sdev, mr);
	if (err)
		goto err_release;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	return &mr->ibmr;

err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * srdma_dereg_mr() - Deregister an MR and unpin its memory
 * @ibmr: the MR
 * @udata: unused
 *
 * Context: process context; may sleep.
 * Return: 0.
 */
int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct srdma_mr *mr = to_smr(ibmr);

	srdma_mr_free_key(to_sdev(ibmr->device), mr);
	ib_umem_release(mr->umem);
	kfree(mr);
	return 0;
}
