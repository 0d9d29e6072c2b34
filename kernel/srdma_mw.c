// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (IBTA 10.6.7) and the resolution of every R_Key.
 *
 * A window is a key in the MR table (struct srdma_mr with @mw_type set)
 * that names a range of another MR, the one it is bound to, with remote
 * access rights of its own:
 *
 *   type 1   bound by ibv_bind_mw(); any QP of the window's PD may use it;
 *            a bind of length 0 unbinds it; never invalidated
 *   type 2   bound by an IBV_WR_BIND_MW work request, to the QP that posted
 *            it (only requests arriving on that QP may use it); invalidated
 *            by LOCAL_INV or SEND with invalidate on that QP, and bound
 *            again only once invalid (type 2B)
 *
 * A bind is a local operation executed in order on the SQ (srdma_req.c),
 * like LOCAL_INV. A window names its MR by key, not by pointer: an access
 * through a window whose MR was deregistered since finds no MR and fails.
 *
 * srdma_rkey_get() resolves the R_Key of a request, MR or window, to the
 * MR whose bytes the request touches; it reads a window's binding under
 * the window's state_lock, as one.
 */

#include "srdma.h"

#define SRDMA_MW_ACCESS	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED)
/*
 * Local write is no right of a window (local access goes through the MR's
 * L_Key), but programs pass it along with remote write, and rdma_rxe and
 * hardware providers accept it: it is ignored.
 */
#define SRDMA_MW_ACCESS_IGNORED	IB_ACCESS_LOCAL_WRITE

/**
 * srdma_alloc_mw() - Allocate a memory window, unbound
 * @ibmw: the core's MW (type and PD set)
 * @udata: unused
 *
 * Context: process context.
 * Return: 0, -ENOMEM.
 */
int srdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct srdma_mw *mw = to_smw(ibmw);
	struct srdma_mr *km;
	int err;

	km = kzalloc(sizeof(*km), GFP_KERNEL);
	if (!km)
		return -ENOMEM;
	km->mw_type = ibmw->type;
	km->ibmr.pd = ibmw->pd;
	err = srdma_mr_alloc_key(to_sdev(ibmw->device), km);
	if (err) {
		kfree(km);
		return err;
	}
	mw->km = km;
	ibmw->rkey = km->ibmr.rkey;
	return 0;
}

/**
 * srdma_dealloc_mw() - Free a memory window
 * @ibmw: the core's MW
 *
 * Waits until no request uses the window.
 *
 * Context: process context.
 * Return: 0.
 */
int srdma_dealloc_mw(struct ib_mw *ibmw)
{
	struct srdma_mw *mw = to_smw(ibmw);

	srdma_mr_retire(to_sdev(ibmw->device), mw->km);
	kfree_rcu(mw->km, rcu);
	return 0;
}

/**
 * srdma_mw_bind() - Execute a bind work request
 * @qp: the QP that posted it
 * @w: the WQE (its wr.bind arguments), the kernel's copy
 *
 * IBTA 10.6.7.2: the window and the MR are of the QP's PD, the MR grants
 * IB_ACCESS_MW_BIND and covers the range, remote write or atomic rights
 * need local write on the MR, and a type 2 window must be free. The
 * window takes the new key (its key byte from the work request).
 *
 * Context: qp->lock held; takes the window's state_lock.
 * Return: IB_WC_SUCCESS or IB_WC_MW_BIND_ERR.
 */
enum ib_wc_status srdma_mw_bind(struct srdma_qp *qp,
				const struct srdma_send_wqe *w)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	const struct ib_pd *pd = qp->ibqp.pd;
	u32 access = w->wr.bind.access & ~SRDMA_MW_ACCESS_IGNORED;
	struct srdma_mr *km, *mr = NULL;
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;

	/* The window by the index part of its new key, whatever its byte. */
	km = srdma_mr_get_index(sdev, w->wr.bind.mw_rkey);
	if (!km)
		return status;
	if (!km->mw_type || km->ibmr.pd != pd || (access & ~SRDMA_MW_ACCESS))
		goto out;
	if (w->wr.bind.length) {
		mr = srdma_mr_get(sdev, w->wr.bind.mr_lkey);
		if (!mr || mr->mw_type || !(mr->access & IB_ACCESS_MW_BIND) ||
		    !srdma_mr_check(mr, pd, w->wr.bind.addr, w->wr.bind.length,
				    0))
			goto out;
		if ((access & (IB_ACCESS_REMOTE_WRITE |
			       IB_ACCESS_REMOTE_ATOMIC)) &&
		    !(mr->access & IB_ACCESS_LOCAL_WRITE))
			goto out;
	}

	/*
	 * From the test of the window's state to its new binding, no
	 * invalidation comes between (a SEND with invalidate arrives under
	 * another lock of the QP than this bind's).
	 */
	spin_lock(&km->state_lock);
	if (km->mw_type == IB_MW_TYPE_2 &&
	    (READ_ONCE(km->valid) || !w->wr.bind.length)) {
		spin_unlock(&km->state_lock);
		goto out;
	}
	/* Invalid while it changes: requests see the old binding or none. */
	WRITE_ONCE(km->valid, false);
	km->access = access;
	km->mw_base = w->wr.bind.addr;
	km->mw_parent = mr ? mr->key : 0;
	km->mw_qpn = km->mw_type == IB_MW_TYPE_2 ? qp->ibqp.qp_num : 0;
	km->ibmr.iova = access & IB_ZERO_BASED ? 0 : w->wr.bind.addr;
	km->ibmr.length = w->wr.bind.length;
	WRITE_ONCE(km->key, w->wr.bind.mw_rkey);
	status = IB_WC_SUCCESS;
	/* A type 1 window bound with length 0 is unbound: it stays invalid. */
	if (w->wr.bind.length) {
		/*
		 * Binding before validity, for lockless readers of the flag;
		 * srdma_rkey_get() reads the binding under state_lock.
		 */
		smp_store_release(&km->valid, true);
	}
	spin_unlock(&km->state_lock);
out:
	if (mr)
		srdma_mr_put(mr);
	srdma_mr_put(km);
	return status;
}

/**
 * srdma_mw_invalidate() - Invalidate a type 2 window
 * @km: the window's key object (referenced)
 * @qp: the QP that asks (LOCAL_INV, or SEND with invalidate arriving)
 *
 * Context: the lock of @qp's side that asks held, and the window's
 * state_lock (see srdma_mr_invalidate()).
 * Return: IB_WC_SUCCESS or IB_WC_LOC_PROT_ERR (a type 1 window, one of
 * another PD, or a valid one bound to another QP; o9-5.2.2). A window in
 * the Free state stays free.
 */
enum ib_wc_status srdma_mw_invalidate(struct srdma_mr *km,
				      const struct srdma_qp *qp)
{
	if (km->mw_type != IB_MW_TYPE_2 || km->ibmr.pd != qp->ibqp.pd ||
	    (READ_ONCE(km->valid) && km->mw_qpn != qp->ibqp.qp_num))
		return IB_WC_LOC_PROT_ERR;
	WRITE_ONCE(km->valid, false);
	return IB_WC_SUCCESS;
}

/**
 * srdma_rkey_get() - Resolve the R_Key of a remote access
 * @qp: the QP the request arrived on
 * @rkey: the R_Key of the request
 * @va: its first byte, as the request gives it
 * @len: bytes
 * @access: the IB_ACCESS_REMOTE_* right it needs
 * @mva: set to the address of the first byte in the returned MR
 *
 * IBTA 10.6.3, C9-88: the key names a valid MR or window of the QP's PD
 * (a type 2 window: bound to this QP), the range lies within it, and it
 * grants the access. A window's bytes are those of its MR.
 *
 * Context: process or softirq context, not with interrupts disabled;
 * under qp->resp_lock in the transport. Takes the window's state_lock.
 * Return: the MR, referenced (srdma_mr_put()), or NULL if not allowed.
 */
struct srdma_mr *srdma_rkey_get(const struct srdma_qp *qp, u32 rkey, u64 va,
				u64 len, int access, u64 *mva)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	const struct ib_pd *pd = qp->ibqp.pd;
	struct srdma_mr *km, *mr;
	u64 start, base;
	u32 parent;
	bool ok;

	km = srdma_mr_get(sdev, rkey);
	if (!km)
		return NULL;
	if (!km->mw_type) {
		/*
		 * A fast registration may have given the MR another key
		 * since the lookup: the fields checked are the new key's.
		 */
		if (!srdma_mr_check(km, pd, va, len, access) ||
		    READ_ONCE(km->key) != rkey) {
			srdma_mr_put(km);
			return NULL;
		}
		*mva = va;
		return km;
	}

	/*
	 * The binding is read as one, under the lock a bind or an
	 * invalidation changes it under, and for this key only: a request
	 * with the old key must not pass on the new binding, nor mix the
	 * two.
	 */
	spin_lock_bh(&km->state_lock);
	start = km->ibmr.iova;
	ok = READ_ONCE(km->key) == rkey && km->valid && km->ibmr.pd == pd &&
	     (km->mw_type != IB_MW_TYPE_2 || km->mw_qpn == qp->ibqp.qp_num) &&
	     (km->access & access) == access && va >= start &&
	     len <= km->ibmr.length && va - start <= km->ibmr.length - len;
	base = km->mw_base;
	parent = km->mw_parent;
	spin_unlock_bh(&km->state_lock);
	srdma_mr_put(km);
	if (!ok)
		return NULL;
	*mva = base + (va - start);
	mr = srdma_mr_get(sdev, parent);
	if (mr && !srdma_mr_check(mr, pd, *mva, len, 0)) {
		srdma_mr_put(mr);
		mr = NULL;
	}
	return mr;
}
