/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * container_of() for standalone provider builds.
 *
 * Inside an rdma-core tree this header comes from rdma-core's ccan/ copy;
 * outside it, this is the only part of ccan the provider may rely on.  The
 * type check keeps the behaviour of the ccan version: passing a pointer of
 * the wrong type is a compile error, not a silent miscast.
 */
#ifndef SOFTRDMA_COMPAT_CCAN_CONTAINER_OF_H
#define SOFTRDMA_COMPAT_CCAN_CONTAINER_OF_H

#include <stddef.h>

#define container_of(member_ptr, containing_type, member)                     \
	((containing_type *)((char *)(member_ptr) -                           \
			     offsetof(containing_type, member)) +             \
	 0 * sizeof((member_ptr) == &((containing_type *)0)->member))

#endif /* SOFTRDMA_COMPAT_CCAN_CONTAINER_OF_H */
