// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrdma_doorbell: the doorbell device, /dev/softrdma_doorbell.
 *
 * A process opens the device, gives the file to its softrdma context
 * (doorbell_fd of ALLOC_UCONTEXT, softrdma-abi.h) and rings the SQ
 * doorbell of one of the context's QPs with
 * ioctl(fd, SRDMA_DOORBELL_RING, qpn): softrdma runs the QP's transmit
 * pass inside the call (srdma_udb.c), the cheapest doorbell there is.
 *
 * Why a module of its own: an open file holds the module that owns its
 * file_operations. Were they softrdma's, a process that keeps its
 * doorbell file open would keep softrdma from unloading, where its uverbs
 * file does not (the core cuts a process's contexts loose from a device
 * that goes away). This module holds the files and runs no transport:
 * softrdma binds a file to a context (srdma_dbfile_ops.bind) and cuts the
 * binding when the context goes (.unbind), which the core does for every
 * context before softrdma can unload. A file that outlives its context
 * answers ENODEV, one never bound EINVAL; either may be closed any time.
 *
 * Lifetimes: a call holds the binding (@users) while it runs softrdma's
 * ring function, and unbind waits for the calls it holds; so softrdma's
 * code and the context outlive every call into them. softrdma holds this
 * module while it holds a binding (symbol_get()).
 */

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait_bit.h>
#include <rdma/softrdma-abi.h>

#include "srdma_dbfile.h"

/**
 * struct srdma_dbfile - a doorbell file (file->private_data)
 * @lock: guards the fields below
 * @ctx: the context the file rings for; NULL before it is bound and once
 *	the context is gone
 * @ring: softrdma's ring function, while @ctx is set
 * @bound: the file was given to a context, which it serves alone
 * @users: calls running @ring; unbind waits for 0
 */
struct srdma_dbfile {
	spinlock_t lock; /* see above */
	void *ctx;
	srdma_dbfile_ring_fn *ring;
	bool bound;
	unsigned int users;
};

static long srdma_dbfile_ioctl(struct file *file, unsigned int cmd,
			       unsigned long arg)
{
	struct srdma_dbfile *f = file->private_data;
	srdma_dbfile_ring_fn *ring;
	bool bound;
	void *ctx;
	long ret;

	if (cmd != SRDMA_DOORBELL_RING)
		return -ENOTTY;
	spin_lock(&f->lock);
	ctx = f->ctx;
	ring = f->ring;
	bound = f->bound;
	if (ctx)
		f->users++;
	spin_unlock(&f->lock);
	if (!ctx)
		return bound ? -ENODEV : -EINVAL;
	ret = ring(ctx, arg);
	spin_lock(&f->lock);
	f->users--;
	spin_unlock(&f->lock);
	wake_up_var(&f->users);
	return ret;
}

static int srdma_dbfile_open(struct inode *inode, struct file *file)
{
	struct srdma_dbfile *f;

	f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);
	if (!f)
		return -ENOMEM;
	spin_lock_init(&f->lock);
	file->private_data = f;
	return stream_open(inode, file);
}

static int srdma_dbfile_release(struct inode *inode, struct file *file)
{
	/* A binding holds the file: none is left. */
	kfree(file->private_data);
	return 0;
}

static const struct file_operations srdma_dbfile_fops = {
	.owner = THIS_MODULE,
	.open = srdma_dbfile_open,
	.release = srdma_dbfile_release,
	.unlocked_ioctl = srdma_dbfile_ioctl,
	/* The argument is a number, the same in 32-bit processes. */
	.compat_ioctl = srdma_dbfile_ioctl,
};

/* Any process may open it: a file rings only the context it is bound to. */
static struct miscdevice srdma_dbfile_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = SRDMA_DOORBELL_DEV,
	.fops = &srdma_dbfile_fops,
	.mode = 0666,
};

static int srdma_dbfile_bind(struct file *file, void *ctx,
			     srdma_dbfile_ring_fn *ring)
{
	struct srdma_dbfile *f;
	int err = 0;

	if (file->f_op != &srdma_dbfile_fops)
		return -ENOTTY;
	f = file->private_data;
	spin_lock(&f->lock);
	if (f->bound) {
		err = -EBUSY;
	} else {
		f->bound = true;
		f->ctx = ctx;
		f->ring = ring;
	}
	spin_unlock(&f->lock);
	return err;
}

static bool srdma_dbfile_idle(struct srdma_dbfile *f)
{
	bool idle;

	spin_lock(&f->lock);
	idle = !f->users;
	spin_unlock(&f->lock);
	return idle;
}

static void srdma_dbfile_unbind(struct file *file)
{
	struct srdma_dbfile *f = file->private_data;

	spin_lock(&f->lock);
	f->ctx = NULL;
	f->ring = NULL;
	spin_unlock(&f->lock);
	wait_var_event(&f->users, srdma_dbfile_idle(f));
}

const struct srdma_dbfile_ops srdma_dbfile_ops = {
	.version = SRDMA_DBFILE_VERSION,
	.bind = srdma_dbfile_bind,
	.unbind = srdma_dbfile_unbind,
};
EXPORT_SYMBOL_GPL(srdma_dbfile_ops);

module_misc_device(srdma_dbfile_misc);

MODULE_AUTHOR("The softrdma authors");
MODULE_DESCRIPTION("softrdma: the doorbell device, /dev/" SRDMA_DOORBELL_DEV);
MODULE_LICENSE("Dual BSD/GPL");
