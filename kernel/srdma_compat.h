/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel API differences between the kernels softrdma supports (6.1 to
 * 6.12), in one place. The rest of the driver is written against one API
 * and never tests LINUX_VERSION_CODE itself.
 */
#ifndef SRDMA_COMPAT_H
#define SRDMA_COMPAT_H

#include <linux/gfp.h>
#include <linux/mm.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * 6.11 passes the whole uverbs_attr_bundle to create_cq instead of the
 * driver's udata. SRDMA_CREATE_CQ_ARG is the type of that last argument and
 * srdma_cq_udata() gets the udata back from it (NULL for an in-kernel CQ).
 * Kbuild detects the feature in the target kernel's headers, so kernels
 * with backports are handled too.
 */
#ifdef SRDMA_HAVE_CREATE_CQ_ATTRS
#define SRDMA_CREATE_CQ_ARG struct uverbs_attr_bundle
static inline struct ib_udata *srdma_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SRDMA_CREATE_CQ_ARG struct ib_udata
static inline struct ib_udata *srdma_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

#endif /* SRDMA_COMPAT_H */
