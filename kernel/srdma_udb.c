// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The doorbell by eventfd: a process rings its QP's SQ doorbell by writing
 * the QP's number to an eventfd it gave its context, instead of sending a
 * POST_SEND command without work requests through uverbs.
 *
 * Why: the doorbell is the one system call on the posting fast path, and
 * most of its cost is uverbs' command handling (the header, the method
 * table, the copy of the command, the object lookup, the response), not
 * the system call itself. An eventfd write() is the cheapest write() the
 * kernel has; the wake-up it makes runs srdma_udb_wake() in the writer's
 * own context.
 *
 * How, step by step:
 *
 *   process                        kernel
 *   write(efd, &qpn, 8)      -->   eventfd_write(), the eventfd's wait
 *                                  queue lock held, interrupts off:
 *                                    srdma_udb_wake(): takes the value
 *                                    back, finds the context's QP and
 *                                    queues its work on the writing task
 *                                    (task_work_add(), TWA_RESUME)
 *                                  on the way back to user mode, no lock
 *                                  held, interrupts on:
 *                                    srdma_udb_work(): srdma_qp_doorbell()
 *   write() returns          <--
 *
 * The pass cannot run inside the wake-up (interrupts are off there, and
 * sending needs bottom halves enabled), and a softirq raised there would
 * run in ksoftirqd, a context switch away: the task's own return to user
 * mode is the earliest place with the doorbell command's context, and the
 * write() that queued the work does not return before the pass has run,
 * as with the command. One work per QP is queued at a time: a second
 * writer that finds it queued on another task schedules the QP's tasklet
 * instead, rather than wait for that task, and its write() may return
 * before that pass.
 *
 * Lifetimes, and who waits for whom:
 *
 *   - The wait queue entry is removed (srdma_udb_detach()) under the wait
 *     queue's lock, so no srdma_udb_wake() runs once it is gone.
 *   - srdma_udb_wake() finds the QP under RCU: destroy removes the QP
 *     from the device's table and waits for a grace period first.
 *   - Nothing makes a task return to user mode: it may block in the same
 *     system call after the write (a writev() whose next buffer faults
 *     on a FUSE file; an io_uring submission that also closes the uverbs
 *     file, whose release is task work queued behind ours and destroys
 *     the QP). So destroy never waits for a queued work: the work lives
 *     in struct srdma_udb_qp, apart from the QP, with a reference of its
 *     own, and destroy only takes the QP away from it and waits for a
 *     pass the work may be running (srdma_udb_qp_release()).
 *   - The module: each queued work holds a module reference (a task that
 *     never returns makes rmmod fail, not hang), and module exit waits
 *     for an RCU Tasks grace period, for a work still on its last
 *     instructions after it dropped its reference.
 *
 * A write from a task that will not return to user mode (a kernel thread,
 * an io_uring or vhost worker) or outside task context falls back to the
 * QP's tasklet.
 *
 * The doorbell file, cheaper still: the process opens the doorbell device
 * (/dev/softrdma_doorbell, module softrdma_doorbell, srdma_dbfile.c) and
 * gives the file to its context instead of an eventfd;
 * ioctl(SRDMA_DOORBELL_RING, qpn) on it runs the pass inside the call, in
 * process context with interrupts on, which spares the wake-up under the
 * eventfd's lock, the task work and the slow return to user mode (about
 * a sixth of a small message's one-way time under emulation). The file's
 * code is that module's, so an open file does not hold softrdma; the
 * context holds the file and a reference to that module from
 * srdma_udb_attach() to srdma_udb_detach(), and detach waits for the
 * calls that use the context (srdma_dbfile_ops.unbind).
 */

#include <linux/file.h>
#include <linux/module.h>
#include <linux/sched/task.h>
#include <linux/task_work.h>
#include <rdma/uverbs_ioctl.h>

#include "srdma.h"
#include "srdma_dbfile.h"
#include "srdma_hdr.h"

/* The eventfds being watched; one context per eventfd. */
static LIST_HEAD(srdma_udb_list);
static DEFINE_MUTEX(srdma_udb_lock);

/*
 * srdma_udb_exit() relies on RCU Tasks to wait for a preempted work's last
 * instructions; without it, synchronize_rcu_tasks() is plain RCU, which
 * does not wait for a preempted task outside a read-side section.
 */
#if IS_ENABLED(CONFIG_PREEMPTION) && !IS_ENABLED(CONFIG_TASKS_RCU)
#error "softrdma needs CONFIG_TASKS_RCU on a preemptible kernel"
#endif

/* srdma_udb_qp.queued */
#define SRDMA_UDB_QUEUED	0

/* Tasks whose queued task work runs late or never. */
#ifdef PF_USER_WORKER
#define SRDMA_UDB_NO_TASK_WORK	(PF_KTHREAD | PF_IO_WORKER | PF_USER_WORKER | \
				 PF_EXITING)
#else
#define SRDMA_UDB_NO_TASK_WORK	(PF_KTHREAD | PF_IO_WORKER | PF_EXITING)
#endif

static void srdma_udb_put(struct srdma_udb_qp *u)
{
	if (refcount_dec_and_test(&u->ref))
		kfree(u);
}

/*
 * Run the doorbell of @u's QP, unless destroy has taken the QP away;
 * destroy waits for the pass (srdma_udb_qp_release()).
 * Context: process context, no lock held; the caller holds a reference
 * to @u.
 */
static void srdma_udb_qp_ring(struct srdma_udb_qp *u)
{
	struct srdma_qp *qp;

	spin_lock(&u->lock);
	qp = u->qp;
	if (qp)
		u->running++;
	spin_unlock(&u->lock);
	if (!qp)
		return;
	if (!READ_ONCE(qp->dead))
		srdma_qp_doorbell(qp);
	spin_lock(&u->lock);
	u->running--;
	spin_unlock(&u->lock);
	wake_up_var(&u->running);
}

/*
 * Run a process QP's doorbell, queued by srdma_udb_ring() on the task
 * that rang it. Clearing the bit before the pass lets a doorbell rung
 * during the pass queue the work again, so no WQE published before a
 * write waits for another.
 */
static void srdma_udb_work(struct callback_head *cb)
{
	struct srdma_udb_qp *u = container_of(cb, struct srdma_udb_qp, work);

	WRITE_ONCE(u->owner, NULL);
	clear_bit(SRDMA_UDB_QUEUED, &u->queued);
	/* The bit is clear before the pass reads the producer index. */
	smp_mb__after_atomic();
	srdma_udb_qp_ring(u);
	srdma_udb_put(u);
	/* The rest of this function: srdma_udb_exit(). */
	module_put(THIS_MODULE);
}

/*
 * Ring @qp's doorbell from the eventfd's wake-up.
 * Context: interrupts off, under rcu_read_lock() (which keeps @qp alive).
 */
static void srdma_udb_ring(struct srdma_qp *qp)
{
	struct srdma_udb_qp *u = qp->udb;

	if (test_and_set_bit(SRDMA_UDB_QUEUED, &u->queued)) {
		/*
		 * A work queued and not begun will see the new WQEs, but on
		 * another task it runs when that task gets to it.
		 */
		if (READ_ONCE(u->owner) != current)
			tasklet_schedule(&qp->tx_tasklet);
		return;
	}
	if (in_task() && !(current->flags & SRDMA_UDB_NO_TASK_WORK) &&
	    try_module_get(THIS_MODULE)) {
		refcount_inc(&u->ref);
		WRITE_ONCE(u->owner, current);
		if (!task_work_add(current, &u->work, TWA_RESUME))
			return;
		WRITE_ONCE(u->owner, NULL);
		/* Not the last: the QP holds one. */
		refcount_dec(&u->ref);
		module_put(THIS_MODULE);
	}
	clear_bit(SRDMA_UDB_QUEUED, &u->queued);
	tasklet_schedule(&qp->tx_tasklet);
}

/*
 * The eventfd's wake-up: eventfd_write() calls it with the eventfd's wait
 * queue lock held and interrupts off, the count just raised by the value
 * written. The count is taken back at once, so each write is read alone.
 */
static int srdma_udb_wake(struct wait_queue_entry *wait, unsigned int mode,
			  int sync, void *key)
{
	struct srdma_ucontext *uc = container_of(wait, struct srdma_ucontext,
						 udb.wait);
	struct srdma_dev *sdev = to_sdev(uc->ibuc.device);
	struct srdma_qp *qp;
	u64 qpn;

	/* A read (EPOLLOUT) or the last close (EPOLLHUP) rings nothing. */
	if (!(key_to_poll(key) & EPOLLIN))
		return 0;
	eventfd_ctx_do_read(uc->udb.efd, &qpn);
	if (qpn > SRDMA_QPN_MASK)
		return 0;
	rcu_read_lock();
	qp = xa_load(&sdev->qp_xa, qpn);
	/* Only the context's own QPs; others' numbers are ignored. */
	if (qp && qp->uctx == uc && qp->udb && !READ_ONCE(qp->dead))
		srdma_udb_ring(qp);
	rcu_read_unlock();
	return 0;
}

/* vfs_poll()'s callback: put the context's entry on the eventfd's queue. */
static void srdma_udb_queue(struct file *file, wait_queue_head_t *wqh,
			    poll_table *pt)
{
	struct srdma_ucontext *uc = container_of(pt, struct srdma_ucontext,
						 udb.pt);

	add_wait_queue(wqh, &uc->udb.wait);
}

/*
 * Ring QP @qpn of context @ctx from its doorbell file (srdma_dbfile.c).
 * Context: process context, no lock held; the binding holds @ctx.
 */
static long srdma_udb_file_ring(void *ctx, unsigned long qpn)
{
	struct srdma_ucontext *uc = ctx;
	struct srdma_dev *sdev = to_sdev(uc->ibuc.device);
	struct srdma_udb_qp *u = NULL;
	struct srdma_qp *qp;

	if (qpn > SRDMA_QPN_MASK)
		return -EINVAL;
	rcu_read_lock();
	qp = xa_load(&sdev->qp_xa, qpn);
	/* Only the context's own QPs, as for the eventfd. */
	if (qp && qp->uctx == uc && qp->udb &&
	    refcount_inc_not_zero(&qp->udb->ref))
		u = qp->udb;
	rcu_read_unlock();
	if (!u)
		return -EINVAL;
	srdma_udb_qp_ring(u);
	srdma_udb_put(u);
	return 0;
}

/*
 * Bind @file to @uc if it is a doorbell file. Returns -ENOTTY when it is
 * not one (or the doorbell device's module is not loaded, or is of
 * another version).
 */
static int srdma_udb_file_bind(struct srdma_ucontext *uc, struct file *file)
{
	const struct srdma_dbfile_ops *ops = symbol_get(srdma_dbfile_ops);
	int err;

	if (!ops)
		return -ENOTTY;
	if (ops->version != SRDMA_DBFILE_VERSION) {
		pr_warn_once("softrdma: softrdma_doorbell is of another build (version %u, not %u): doorbells by eventfd\n",
			     ops->version, SRDMA_DBFILE_VERSION);
		symbol_put(srdma_dbfile_ops);
		return -ENOTTY;
	}
	err = ops->bind(file, uc, srdma_udb_file_ring);
	if (err) {
		symbol_put(srdma_dbfile_ops);
		return err;
	}
	uc->udb.file = file;
	uc->udb.dbops = ops;
	return 0;
}

/* Cut @uc's doorbell file loose and drop it, once no call uses @uc. */
static void srdma_udb_file_unbind(struct srdma_ucontext *uc)
{
	uc->udb.dbops->unbind(uc->udb.file);
	fput(uc->udb.file);
	uc->udb.file = NULL;
	uc->udb.dbops = NULL;
	symbol_put(srdma_dbfile_ops);
}

/**
 * srdma_udb_attach() - Take a process's doorbell: a file or an eventfd
 * @uc: the process's new context
 * @fd: a doorbell file (srdma_dbfile.c) or an eventfd, a file descriptor
 *	of the calling process
 *
 * Context: process context (the ALLOC_UCONTEXT command); may sleep.
 * Return: 0; -EBADF or -EINVAL when @fd is neither; -EBUSY when another
 * context has it already.
 */
int srdma_udb_attach(struct srdma_ucontext *uc, int fd)
{
	struct srdma_udb *u;
	struct eventfd_ctx *efd;
	struct file *file;
	int err = 0;

	file = fget(fd);
	if (!file)
		return -EBADF;
	err = srdma_udb_file_bind(uc, file);
	if (err != -ENOTTY) {
		if (err)
			fput(file);
		return err;
	}
	err = 0;
	efd = eventfd_ctx_fileget(file);
	if (IS_ERR(efd)) {
		err = PTR_ERR(efd);
		goto out_fput;
	}

	mutex_lock(&srdma_udb_lock);
	list_for_each_entry(u, &srdma_udb_list, entry) {
		/* A second watcher would take the first one's values. */
		if (u->efd == efd) {
			err = -EBUSY;
			break;
		}
	}
	if (!err) {
		uc->udb.efd = efd;
		init_waitqueue_func_entry(&uc->udb.wait, srdma_udb_wake);
		init_poll_funcptr(&uc->udb.pt, srdma_udb_queue);
		list_add(&uc->udb.entry, &srdma_udb_list);
		vfs_poll(file, &uc->udb.pt);
	}
	mutex_unlock(&srdma_udb_lock);
	if (err)
		eventfd_ctx_put(efd);
out_fput:
	fput(file);
	return err;
}

/**
 * srdma_udb_detach() - Let go of a context's doorbell: file or eventfd
 * @uc: the context; nothing if it has none
 *
 * When this returns, no wake-up of the eventfd and no call on the
 * doorbell file runs for @uc any more.
 *
 * Context: process context; may sleep.
 */
void srdma_udb_detach(struct srdma_ucontext *uc)
{
	u64 cnt;

	if (uc->udb.file)
		srdma_udb_file_unbind(uc);
	if (!uc->udb.efd)
		return;
	eventfd_ctx_remove_wait_queue(uc->udb.efd, &uc->udb.wait, &cnt);
	mutex_lock(&srdma_udb_lock);
	list_del(&uc->udb.entry);
	mutex_unlock(&srdma_udb_lock);
	eventfd_ctx_put(uc->udb.efd);
	uc->udb.efd = NULL;
}

/**
 * srdma_udb_qp_init() - Set up a new QP's doorbell by eventfd
 * @qp: the QP, not yet in the device's table
 * @udata: the create command's udata; NULL for an in-kernel QP, which
 *	gets none
 *
 * Context: process context; may sleep.
 * Return: 0 or -ENOMEM.
 */
int srdma_udb_qp_init(struct srdma_qp *qp, struct ib_udata *udata)
{
	struct srdma_udb_qp *u;

	if (!udata)
		return 0;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	init_task_work(&u->work, srdma_udb_work);
	spin_lock_init(&u->lock);
	u->qp = qp;
	refcount_set(&u->ref, 1);
	qp->udb = u;
	qp->uctx = rdma_udata_to_drv_context(udata, struct srdma_ucontext,
					     ibuc);
	return 0;
}

static bool srdma_udb_idle(struct srdma_udb_qp *u)
{
	bool idle;

	spin_lock(&u->lock);
	idle = !u->running;
	spin_unlock(&u->lock);
	return idle;
}

/**
 * srdma_udb_qp_release() - Take a dying QP away from its doorbell work
 * @qp: the QP, out of the device's table and an RCU grace period past
 *	it, so srdma_udb_wake() no longer finds it
 *
 * A work still queued runs later without the QP; a pass it runs now is
 * waited for.
 *
 * Context: process context; may sleep.
 */
void srdma_udb_qp_release(struct srdma_qp *qp)
{
	struct srdma_udb_qp *u = qp->udb;

	if (!u)
		return;
	spin_lock(&u->lock);
	u->qp = NULL;
	spin_unlock(&u->lock);
	wait_var_event(&u->running, srdma_udb_idle(u));
	qp->udb = NULL;
	srdma_udb_put(u);
}

/**
 * srdma_udb_exit() - Let the last doorbell works return
 *
 * The module's references are gone, so every work has run; one may still
 * be on its last instructions, in the module's text, after it dropped its
 * reference. RCU Tasks waits until every task has been in user mode or
 * switched voluntarily since, which none does inside srdma_udb_work().
 *
 * Context: module exit; sleeps.
 */
void srdma_udb_exit(void)
{
	synchronize_rcu_tasks();
}
