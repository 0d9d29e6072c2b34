/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The doorbell device's module (softrdma_doorbell, srdma_dbfile.c) as
 * softrdma sees it: softrdma finds it with symbol_get(srdma_dbfile_ops),
 * so that either module loads without the other.
 */
#ifndef SRDMA_DBFILE_H
#define SRDMA_DBFILE_H

struct file;

/*
 * Ring the SQ doorbell of QP @qpn of context @ctx; 0, or -EINVAL when
 * @qpn names no QP of @ctx. Process context, no lock held.
 */
typedef long srdma_dbfile_ring_fn(void *ctx, unsigned long qpn);

/*
 * The layout of struct srdma_dbfile_ops and the ring function's contract:
 * bumped with any change to either. The two modules may come from
 * different builds (the doorbell module stays loaded while files are
 * open, and softrdma may be replaced meanwhile), and symbol_get() checks
 * no symbol version: softrdma uses only a module of its own version.
 */
#define SRDMA_DBFILE_VERSION	1

/**
 * struct srdma_dbfile_ops - what softrdma calls in softrdma_doorbell
 * @version: SRDMA_DBFILE_VERSION of the doorbell module's build
 * @bind: bind a doorbell file to @ctx, for @ring to ring @ctx's QPs:
 *	0; -ENOTTY when @file is not a doorbell file, -EBUSY when it was
 *	bound before. The caller keeps a reference to @file until it
 *	unbinds it.
 * @unbind: cut @file's binding, and wait for the calls of @ring that
 *	use it to return. Process context; sleeps.
 */
struct srdma_dbfile_ops {
	unsigned int version;
	int (*bind)(struct file *file, void *ctx, srdma_dbfile_ring_fn *ring);
	void (*unbind)(struct file *file);
};

extern const struct srdma_dbfile_ops srdma_dbfile_ops;

#endif /* SRDMA_DBFILE_H */
