// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Polling a process's SQ from an idle CPU.
 *
 * A process posts by writing its mapped SQ ring, and makes the doorbell
 * system call only while the kernel says it will not look at the ring by
 * itself (SRDMA_RING_KSTATE_POLLING, softrdma-abi.h). Run inline, the
 * doorbell's pass sends what was posted; when the peer is on the same host,
 * or its ACK comes back within the call, nothing is left to wait for when
 * the call returns, and the next post rings again: a system call per post,
 * and the posting CPU does all the work, one message after the other.
 *
 * When a process streams (the doorbell finds other WQEs outstanding than
 * the one it announces, or that one unsignaled: srdma_sqpoll_streams())
 * and another CPU of its node was idle since the QP's last doorbell, or
 * already polls other QPs, the doorbell lists the QP with that CPU's
 * poller, a work item that serves the QPs of its list round robin: a
 * pass for each QP whose producer index moved or whose last pass left
 * work. A QP stays listed, with POLLING set, until sq_poll_linger_us
 * pass without a post, so a process that keeps posting makes no system
 * call: its CPU posts and polls completions while the poller's sends,
 * the way a NIC works beside the CPU. A QP with one signaled WQE
 * outstanding (a latency test) keeps the inline doorbell: a hand-off
 * would add a wake-up to every message.
 *
 * The poller only uses a CPU nobody else wants. Doorbells look at the
 * CPU's idle time (srdma_sqpoll_was_idle()); the poller itself, at its
 * start and after each turn that leaves it QPs, at whether another task
 * is runnable (srdma_sqpoll_contended()). When one is, and still is
 * after a short nap, the poller lets go of its QPs and doorbells stay
 * off the CPU for SRDMA_SQPOLL_BACKOFF. Sharing a CPU would slow both,
 * say a receiver busy-polling its CQ and the poller sending to it. Work
 * that a pass on the poller's CPU leaves on a polled QP is the poller's
 * (srdma_sqpoll_kick()): the QP's tasklet there would be one more task
 * competing for the CPU once softirqs go to ksoftirqd.
 *
 * Context and lifetime: a poller runs in process context on a bound,
 * CPU-intensive workqueue (it does not hold up other work items of its
 * CPU), and calls srdma_qp_step() as the doorbell would. A QP is in at
 * most one poller's list (enum srdma_sqpoll_state); letting go of it
 * ends with a pass that clears POLLING. srdma_destroy_qp() sets qp->dead,
 * which makes the poller let go, and waits for that
 * (srdma_sqpoll_stop()).
 */

#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>
#include <linux/tick.h>
#include <linux/workqueue.h>

#include "srdma.h"

static bool srdma_sqpoll_on = true;
module_param_named(sq_poll, srdma_sqpoll_on, bool, 0644);
MODULE_PARM_DESC(sq_poll,
		 "Poll streaming processes' send queues from an idle CPU (default on)");

static unsigned int srdma_sqpoll_linger_us = 50;
module_param_named(sq_poll_linger_us, srdma_sqpoll_linger_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_linger_us,
		 "How long a poller waits for new WQEs, in microseconds (default 50)");

/* A CPU found busy is left alone for this long (jiffies). */
#define SRDMA_SQPOLL_BACKOFF	(HZ / 10)
/*
 * How long a poller steps aside for another task (microseconds): naps of
 * 20, 80, 320 and 1280. The poller's wake-up preempts the task it made
 * room for, so a kernel thread that needs more than one nap is still
 * runnable after it (rcu_preempt, under emulation); only a task runnable
 * after 1.7 ms wants the CPU.
 */
#define SRDMA_SQPOLL_NAP_US	20
#define SRDMA_SQPOLL_NAP_MAX_US	1280
/* CPUs of the node looked at per doorbell for an idle one. */
#define SRDMA_SQPOLL_SCAN	8
/* The shortest window over which a CPU's idle time is judged. */
#define SRDMA_SQPOLL_WINDOW_NS	(10 * NSEC_PER_USEC)

/*
 * Where a QP stands with the pollers (struct srdma_sqpoll_qp.state):
 *   IDLE      no poller has it; a doorbell may list it
 *   LISTED    in a CPU's list, waiting for its turn
 *   STEPPING  the poller is running a pass for it
 *   RELEASING the poller took it off its list and runs the last pass that
 *             clears POLLING; a doorbell now sets rearm, and the poller
 *             lists the QP again instead of making it IDLE
 * Only IDLE lets srdma_sqpoll_stop() return.
 */
enum srdma_sqpoll_state {
	SRDMA_SQPOLL_IDLE,
	SRDMA_SQPOLL_LISTED,
	SRDMA_SQPOLL_STEPPING,
	SRDMA_SQPOLL_RELEASING,
};

/**
 * struct srdma_sqpoll_cpu - a CPU's poller
 * @lock: guards @qps and the sqpoll.state and sqpoll.rearm of QPs whose
 *	sqpoll.pc this is; taken with bottom halves disabled, inside a QP's
 *	lock (by the doorbell) or alone, never around a QP's lock
 * @qps: the QPs this CPU polls, served round robin
 * @work: the poller, queued on this CPU only
 * @busy_until: jiffies until which doorbells do not come here; written by
 *	the poller, read by any doorbell
 * @cpu: this CPU
 */
struct srdma_sqpoll_cpu {
	spinlock_t lock; /* see above */
	struct list_head qps;
	struct work_struct work;
	unsigned long busy_until;
	int cpu;
};

static struct workqueue_struct *srdma_sqpoll_wq;
static DEFINE_PER_CPU(struct srdma_sqpoll_cpu, srdma_sqpoll_cpus);

static bool srdma_sqpoll_busy(int cpu)
{
	return time_before(jiffies,
			   READ_ONCE(per_cpu(srdma_sqpoll_cpus, cpu).busy_until));
}

/* An idle CPU of the node other than @this, the QP's last one first. */
static int srdma_sqpoll_pick_cpu(struct srdma_qp *qp, int this)
{
	const struct cpumask *node = cpumask_of_node(cpu_to_node(this));
	struct srdma_sqpoll_cpu *last = READ_ONCE(qp->sqpoll.pc);
	int cpu = last ? last->cpu : -1;
	int n = 0;

	if (cpu >= 0 && cpu != this && cpu_online(cpu) &&
	    !srdma_sqpoll_busy(cpu))
		return cpu;
	for_each_cpu_wrap(cpu, node, this) {
		if (cpu == this || !cpu_online(cpu))
			continue;
		if (!srdma_sqpoll_busy(cpu))
			return cpu;
		if (++n == SRDMA_SQPOLL_SCAN)
			break;
	}
	return -1;
}

/*
 * Was @cpu idle for half the time since the QP's last judged doorbell? A CPU
 * that runs a task (a process polling its CQ, say) is not worth waking a
 * poller on: it would preempt that task, and the scheduler would move the
 * task onto the poster's CPU. The first doorbell towards a CPU only
 * samples it. Where the kernel keeps no idle time (nohz=off), the
 * poller's own check (srdma_sqpoll_contended()) is all there is.
 */
static bool srdma_sqpoll_was_idle(struct srdma_sqpoll_qp *sp, int cpu)
{
	u64 idle = get_cpu_idle_time_us(cpu, NULL);
	u64 now = ktime_get_ns();
	s64 d_idle = (s64)(idle - READ_ONCE(sp->sample_idle_us));
	s64 d_ns = (s64)(now - READ_ONCE(sp->sample_ns));
	bool idle_enough;

	if (idle == (u64)-1)
		return true;
	if (READ_ONCE(sp->sample_cpu) == cpu) {
		/* Too short a window says nothing (idle time is in usec). */
		if (d_ns < SRDMA_SQPOLL_WINDOW_NS)
			return false;
		/* 6.1 reads another CPU's idle time unlocked: it may step back. */
		idle_enough = d_idle > 0 && d_idle * NSEC_PER_USEC * 2 >= d_ns;
	} else {
		idle_enough = false;
	}
	WRITE_ONCE(sp->sample_cpu, cpu);
	WRITE_ONCE(sp->sample_ns, now);
	WRITE_ONCE(sp->sample_idle_us, idle);
	return idle_enough;
}

/*
 * Does the process stream, post after post without waiting for each? It
 * does when WQEs besides the one announced are not yet completed, or when
 * the one announced asks for no completion: a process that will not learn
 * when this WQE completes does not wait for it before it posts the next.
 * perftest's bandwidth tests signal one WQE in 100 (cq_mod), and a READ,
 * or a WRITE whose ACK comes back within the doorbell, is complete before
 * the call returns; its latency tests signal every WQE. prod and the WQE
 * are the process's and may be anything: they only pick the path, the
 * pass validates them.
 */
static bool srdma_sqpoll_streams(struct srdma_qp *qp)
{
	struct srdma_ring *r = &qp->sq.ring;
	u32 prod = READ_ONCE(r->ctrl->prod);
	u32 own = READ_ONCE(r->own);
	const struct srdma_send_wqe *wqe;

	if (prod - own >= 2)
		return true;
	if (prod == own || qp->sq_sig_all)
		return false;
	wqe = r->buf + (size_t)srdma_ring_slot(prod - 1, r->num) * r->stride;
	return !(READ_ONCE(wqe->flags) & SRDMA_WQE_SIGNALED);
}

/**
 * srdma_sqpoll_doorbell() - Hand a process's doorbell to a poller
 * @qp: the QP whose SQ the process wrote
 *
 * Context: process context (the doorbell system call); takes qp->lock,
 * then a poller's lock.
 * Return: true when a poller has the QP; false when the caller must run
 * the pass itself.
 */
bool srdma_sqpoll_doorbell(struct srdma_qp *qp)
{
	struct srdma_sqpoll_qp *sp = &qp->sqpoll;
	struct srdma_sqpoll_cpu *pc;
	bool add = true, wake = false;
	int cpu;

	if (!READ_ONCE(srdma_sqpoll_on) || num_online_cpus() < 2)
		return false;
	if (!srdma_sqpoll_streams(qp))
		return false;
	cpu = srdma_sqpoll_pick_cpu(qp, raw_smp_processor_id());
	if (cpu < 0)
		return false;
	pc = per_cpu_ptr(&srdma_sqpoll_cpus, cpu);
	/*
	 * A CPU whose poller has QPs is busy with them: that is no reason
	 * to keep another QP off it. Read without the lock: a hint.
	 */
	if (list_empty(&pc->qps) && !srdma_sqpoll_was_idle(sp, cpu))
		return false;

	/*
	 * Say POLLING now, not when the poller gets to the QP: posts made
	 * until then need no doorbell of their own. From here on the QP
	 * gets a pass: from this poller, or from the one that has it now.
	 * qp->lock serializes doorbells of the process's threads; a QP that
	 * is IDLE is in no list, so no poller changes its state meanwhile.
	 */
	spin_lock_bh(&qp->lock);
	if (qp->dead || qp->state != IB_QPS_RTS) {
		spin_unlock_bh(&qp->lock);
		return false;
	}
	WRITE_ONCE(qp->sqpoll.linger, true);
	srdma_qp_set_polling(qp);
	if (sp->pc) {
		spin_lock(&sp->pc->lock);
		if (sp->state == SRDMA_SQPOLL_RELEASING)
			sp->rearm = true;
		add = sp->state == SRDMA_SQPOLL_IDLE;
		spin_unlock(&sp->pc->lock);
	}
	if (add) {
		spin_lock(&pc->lock);
		/* A poller with QPs is running: it will get to this one. */
		wake = list_empty(&pc->qps);
		WRITE_ONCE(sp->pc, pc);
		sp->state = SRDMA_SQPOLL_LISTED;
		sp->more = true;
		list_add_tail(&sp->entry, &pc->qps);
		spin_unlock(&pc->lock);
	}
	spin_unlock_bh(&qp->lock);
	if (add) {
		srdma_counter_inc(to_sdev(qp->ibqp.device),
				  SRDMA_CNT_SQ_POLL_HANDOFFS);
		if (wake)
			queue_work_on(cpu, srdma_sqpoll_wq, &pc->work);
	}
	return true;
}

/**
 * srdma_sqpoll_kick() - Leave a pass's leftover work to the QP's poller
 * @qp: the QP
 *
 * On the CPU of a poller that has the QP (linger set), requester work
 * that a pass leaves (the completer's, after an ACK delivered in the
 * poller's own pass) is for the poller's next turn. The QP's tasklet
 * would run it again and again, each run leaving work for the next,
 * until the CPU's softirqs went to ksoftirqd, which the poller takes for
 * a competitor. Elsewhere the tasklet runs it at once, where the poller
 * may be napping. Under qp->lock, so that a poller letting go of the QP,
 * which clears linger before its last pass takes the lock, runs that
 * pass after this one.
 *
 * Context: any; qp->lock held.
 * Return: true when the poller will run the pass.
 */
bool srdma_sqpoll_kick(struct srdma_qp *qp)
{
	struct srdma_sqpoll_cpu *pc;

	lockdep_assert_held(&qp->lock);
	if (!READ_ONCE(qp->sqpoll.linger))
		return false;
	pc = READ_ONCE(qp->sqpoll.pc);
	if (!pc || pc->cpu != raw_smp_processor_id())
		return false;
	WRITE_ONCE(qp->sqpoll.kicked, true);
	return true;
}

/*
 * Another task is runnable on the poller's CPU. It may be passing through
 * (a kworker, an RCU thread): the poller sleeps to let it run, a longer nap
 * each time it is still there. If it is runnable after the last one, it
 * wants the CPU (a process polling its CQ, say): the poller lets go of its
 * QPs and doorbells stay off the CPU for SRDMA_SQPOLL_BACKOFF.
 */
static bool srdma_sqpoll_contended(struct srdma_sqpoll_cpu *pc)
{
	unsigned int nap;

	for (nap = SRDMA_SQPOLL_NAP_US; nap <= SRDMA_SQPOLL_NAP_MAX_US;
	     nap *= 4) {
		if (single_task_running())
			return false;
		usleep_range(nap, 2 * nap);
	}
	if (single_task_running())
		return false;
	WRITE_ONCE(pc->busy_until, jiffies + SRDMA_SQPOLL_BACKOFF);
	return true;
}

/*
 * One turn of a listed QP: a pass when the process posted or the last
 * pass left work. Return: true to keep the QP, false to let it go (idle
 * for the linger time, dead, out of RTS, or the CPU is wanted).
 */
static bool srdma_sqpoll_serve(struct srdma_qp *qp, bool *stepped,
			       bool drain)
{
	struct srdma_sqpoll_qp *sp = &qp->sqpoll;
	u32 prod = READ_ONCE(qp->sq.ring.ctrl->prod);

	if (drain || READ_ONCE(qp->dead) || READ_ONCE(qp->state) != IB_QPS_RTS)
		return false;
	if (sp->more || prod != sp->seen || READ_ONCE(sp->kicked)) {
		sp->seen = prod;
		/* Before the pass: a kick during it is for the next one. */
		WRITE_ONCE(sp->kicked, false);
		sp->more = srdma_qp_step(qp);
		sp->deadline = local_clock() +
			       (u64)READ_ONCE(srdma_sqpoll_linger_us) *
			       NSEC_PER_USEC;
		*stepped = true;
		return true;
	}
	return local_clock() < sp->deadline;
}

/*
 * Let go of a QP the poller took off its list: the last pass clears
 * POLLING and looks at the producer index again
 * (srdma_qp_update_polling()), so a WQE posted while the bit was still
 * set is not left behind. A doorbell meanwhile (rearm) lists it again, or,
 * when the poller is giving its CPU back (@drain), leaves it to the QP's
 * tasklet: linger, which that doorbell set, is cleared first, under the
 * lock the doorbell took after setting it, so the tasklet's pass clears
 * POLLING and reads the producer index again.
 */
static void srdma_sqpoll_release(struct srdma_sqpoll_cpu *pc,
				 struct srdma_qp *qp, bool drain)
{
	WRITE_ONCE(qp->sqpoll.linger, false);
	srdma_qp_run(qp);
	spin_lock_bh(&pc->lock);
	if (qp->sqpoll.rearm && !READ_ONCE(qp->dead) && !drain) {
		WRITE_ONCE(qp->sqpoll.linger, true);
		qp->sqpoll.more = true;
		qp->sqpoll.state = SRDMA_SQPOLL_LISTED;
		list_add_tail(&qp->sqpoll.entry, &pc->qps);
	} else {
		WRITE_ONCE(qp->sqpoll.linger, false);
		/* Before IDLE: destroy kills the tasklet after that. */
		if (qp->sqpoll.rearm && !READ_ONCE(qp->dead))
			tasklet_schedule(&qp->tx_tasklet);
		qp->sqpoll.state = SRDMA_SQPOLL_IDLE;
	}
	qp->sqpoll.rearm = false;
	/* The QP may be freed once IDLE: only its address is used below. */
	spin_unlock_bh(&pc->lock);
	wake_up_var(&qp->sqpoll.state);
}

/*
 * The poller: serves its QPs round robin while any has work or lingers,
 * and stops when its list is empty.
 *
 * Context: process context, on its own CPU (the workqueue is bound);
 * takes the QPs' locks through srdma_qp_step().
 */
static void srdma_sqpoll_cpu_work(struct work_struct *work)
{
	struct srdma_sqpoll_cpu *pc =
		container_of(work, struct srdma_sqpoll_cpu, work);
	bool stepped, keep, drain, empty;
	struct srdma_qp *qp;

	/* Before the first pass: a CPU that is not idle is not used at all. */
	drain = srdma_sqpoll_contended(pc);
	for (;;) {
		spin_lock_bh(&pc->lock);
		qp = list_first_entry_or_null(&pc->qps, struct srdma_qp,
					      sqpoll.entry);
		if (!qp) {
			spin_unlock_bh(&pc->lock);
			break;
		}
		list_move_tail(&qp->sqpoll.entry, &pc->qps);
		qp->sqpoll.state = SRDMA_SQPOLL_STEPPING;
		spin_unlock_bh(&pc->lock);

		stepped = false;
		keep = srdma_sqpoll_serve(qp, &stepped, drain);

		spin_lock_bh(&pc->lock);
		if (keep) {
			qp->sqpoll.state = SRDMA_SQPOLL_LISTED;
		} else {
			list_del_init(&qp->sqpoll.entry);
			qp->sqpoll.state = SRDMA_SQPOLL_RELEASING;
		}
		empty = list_empty(&pc->qps);
		spin_unlock_bh(&pc->lock);
		if (!keep) {
			/* Given back for the CPU's sake, not its own. */
			if (drain && !READ_ONCE(qp->dead))
				srdma_counter_inc(to_sdev(qp->ibqp.device),
						  SRDMA_CNT_SQ_POLL_YIELDS);
			srdma_sqpoll_release(pc, qp, drain);
		}

		/*
		 * After every turn that leaves QPs to serve (a poller with
		 * none has nothing to give back): single_task_running() is a
		 * read of the run queue, and cond_resched() a test of a flag.
		 */
		if (!drain && !empty && srdma_sqpoll_contended(pc))
			drain = true;
		if (!stepped)
			cpu_relax();
		cond_resched();
	}
}

static bool srdma_sqpoll_idle(struct srdma_sqpoll_cpu *pc,
			      struct srdma_qp *qp)
{
	bool idle;

	spin_lock_bh(&pc->lock);
	idle = qp->sqpoll.state == SRDMA_SQPOLL_IDLE;
	spin_unlock_bh(&pc->lock);
	return idle;
}

/**
 * srdma_sqpoll_stop() - Take a QP from the pollers for good
 * @qp: the QP, with qp->dead set
 *
 * Context: process context (destroy); may sleep until the poller that
 * has the QP lets go of it.
 */
void srdma_sqpoll_stop(struct srdma_qp *qp)
{
	struct srdma_sqpoll_cpu *pc = qp->sqpoll.pc;

	if (!pc)
		return;
	spin_lock_bh(&pc->lock);
	if (qp->sqpoll.state == SRDMA_SQPOLL_LISTED) {
		list_del_init(&qp->sqpoll.entry);
		qp->sqpoll.state = SRDMA_SQPOLL_IDLE;
	}
	spin_unlock_bh(&pc->lock);
	/* STEPPING or RELEASING: the poller sees qp->dead and lets go. */
	wait_var_event(&qp->sqpoll.state, srdma_sqpoll_idle(pc, qp));
}

/**
 * srdma_sqpoll_init() - Create the pollers
 *
 * Context: module load.
 * Return: 0 or -ENOMEM.
 */
int srdma_sqpoll_init(void)
{
	struct srdma_sqpoll_cpu *pc;
	int cpu;

	for_each_possible_cpu(cpu) {
		pc = per_cpu_ptr(&srdma_sqpoll_cpus, cpu);
		spin_lock_init(&pc->lock);
		INIT_LIST_HEAD(&pc->qps);
		INIT_WORK(&pc->work, srdma_sqpoll_cpu_work);
		pc->cpu = cpu;
	}
	srdma_sqpoll_wq = alloc_workqueue("srdma_sqpoll",
					  WQ_HIGHPRI | WQ_CPU_INTENSIVE, 0);
	return srdma_sqpoll_wq ? 0 : -ENOMEM;
}

/**
 * srdma_sqpoll_exit() - Destroy the pollers
 *
 * Context: module unload, after every QP is destroyed: the lists are
 * empty; destroy_workqueue() waits for pollers still finishing.
 */
void srdma_sqpoll_exit(void)
{
	destroy_workqueue(srdma_sqpoll_wq);
}
