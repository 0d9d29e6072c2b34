// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transmit gauge: how many of a connected QP's packets the local stack
 * still holds, and a pause of the QP's transmit passes while they are too
 * many.
 *
 * Nothing else paces a responder: one READ request makes it send up to 2
 * GiB of responses back to back, and the requester's window bounds what
 * one QP asks for, not what the queues between the two ends can take. A
 * veth delivers through the backlog of the sending CPU (netdev_max_backlog
 * packets, 1000 by default), which the packets of both directions share:
 * a few QPs' READ responses fill it, and the requests and ACKs queued
 * behind them wait longer than the local ACK timeout, or are dropped.
 * Every go-back-N that follows asks for more responses again, and the QPs
 * end with IB_WC_RETRY_EXC_ERR. TCP's small queues (tcp_small_queue_check())
 * and rdma_rxe (RXE_INFLIGHT_SKBS_PER_QP_HIGH) answer this the same way:
 * every packet handed to the stack is counted until the stack frees or
 * orphans it (a NIC driver once it is sent; ip_rcv_core() of a veth peer
 * once it takes the packet in), and a QP with SRDMA_TX_INFLIGHT_HIGH
 * packets out builds no more until they are down to SRDMA_TX_INFLIGHT_LOW.
 * Some paths orphan a packet early, and it stops counting there: "lo"
 * (loopback_xmit()), netem with a delay or rate (skb_orphan_partial()),
 * a route whose device needs more headroom (skb_expand_head() clones).
 * Packets built and not yet handed to the QP's sender count too, by the
 * length of its queues (srdma_qp_budget()).
 *
 * The count lives in a gauge of its own, not in the QP: a packet may
 * outlive its QP (queued in a qdisc, a backlog, a driver's ring), and its
 * destructor must find something to decrement. The gauge's reference
 * count is the count: one reference per packet and one for the QP, so
 * that a packet costs one atomic operation when it is counted and one
 * when it is freed. It is an atomic_t rather than a refcount_t because
 * the destructor needs the value its decrement left, fully ordered
 * (atomic_dec_return()). The @qp pointer is cleared (RCU) when the QP's
 * destruction begins. The module cannot unload while a destructor may
 * still be called: srdma_txg_exit() waits for the last gauge, as long as
 * it takes (a qdisc that holds packets for ever holds the unload too).
 *
 * Both sides of the QP (requester and responder, each under its own lock)
 * count their packets in the one gauge and size their passes by its room,
 * so together they may overshoot SRDMA_TX_INFLIGHT_HIGH by up to a pass's
 * budget; and either may be the one that stops. The flag that a pass
 * stopped is one for both: only the destructor that acts on it clears it.
 *
 * Context: srdma_txg_skb() and srdma_txg_throttle() under a lock of the
 * QP (either side's); the destructor wherever the stack frees the packet
 * (process or softirq context, never hard interrupt: dev_kfree_skb_irq()
 * defers).
 */

#include <linux/atomic.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/wait_bit.h>

#include "srdma.h"

/* Gauges alive, hence destructors that may still run; srdma_txg_exit(). */
static atomic_t srdma_txg_live = ATOMIC_INIT(0);

enum {
	SRDMA_TXG_THROTTLED,	/* a pass waits for the count to fall */
};

/**
 * srdma_txg_alloc() - A new gauge for a connected QP
 * @qp: the QP
 *
 * Context: process context; may sleep.
 * Return: the gauge, or NULL.
 */
struct srdma_txg *srdma_txg_alloc(struct srdma_qp *qp)
{
	struct srdma_txg *g = kzalloc(sizeof(*g), GFP_KERNEL);

	if (!g)
		return NULL;
	atomic_set(&g->ref, 1);
	RCU_INIT_POINTER(g->qp, qp);
	atomic_inc(&srdma_txg_live);
	return g;
}

/* The last reference is gone. */
static void srdma_txg_free(struct srdma_txg *g)
{
	kfree_rcu(g, rcu);
	if (atomic_dec_and_test(&srdma_txg_live))
		wake_up_var(&srdma_txg_live);
}

/**
 * srdma_txg_detach() - The QP's destruction has begun
 * @g: the gauge, or NULL
 *
 * The QP's destroy calls this before its synchronize_rcu(): after that
 * no destructor schedules the QP's tasklet any more. Its sender may still
 * be handing packets to the stack until the tasklet is killed.
 *
 * Context: process context.
 */
void srdma_txg_detach(struct srdma_txg *g)
{
	if (g)
		RCU_INIT_POINTER(g->qp, NULL);
}

/**
 * srdma_txg_release() - The QP lets go of its gauge
 * @g: the gauge, or NULL
 *
 * Once the QP sends no more; the packets still in flight keep the gauge.
 *
 * Context: process context.
 */
void srdma_txg_release(struct srdma_txg *g)
{
	if (g && atomic_dec_and_test(&g->ref))
		srdma_txg_free(g);
}

/*
 * The stack is done with a packet. Called once, by skb_orphan() or when
 * the packet is freed; skb->sk is NULL (the packet has no socket to
 * charge), which skb_orphan() allows when a destructor is set.
 */
static void srdma_txg_skb_done(struct sk_buff *skb)
{
	struct srdma_txg *g = skb_shinfo(skb)->destructor_arg;
	struct srdma_qp *qp;
	int n;

	/*
	 * Another packet's destructor, or the QP's release, may free the
	 * gauge once this reference is dropped: the read-side section
	 * keeps it (kfree_rcu()) until the flag and @qp are read.
	 */
	rcu_read_lock();
	/* Fully ordered: pairs with the barrier in srdma_txg_throttle(). */
	n = atomic_dec_return(&g->ref);
	if (unlikely(n <= 0)) {
		WARN_ON_ONCE(n < 0);
		if (!n)
			srdma_txg_free(g);
		goto out;
	}
	/* n - 1 packets left while the QP holds its reference. */
	if (n - 1 <= SRDMA_TX_INFLIGHT_LOW &&
	    test_bit(SRDMA_TXG_THROTTLED, &g->flags) &&
	    test_and_clear_bit(SRDMA_TXG_THROTTLED, &g->flags)) {
		qp = rcu_dereference(g->qp);
		if (qp)
			tasklet_schedule(&qp->tx_tasklet);
	}
out:
	rcu_read_unlock();
}

/* Packets in flight; the QP, which calls this, holds its reference. */
static int srdma_txg_inflight(const struct srdma_txg *g)
{
	return atomic_read(&g->ref) - 1;
}

/**
 * srdma_txg_skb() - Count a packet the QP hands to the stack
 * @g: the QP's gauge
 * @skb: the packet, without a socket or destructor
 *
 * The gauge rides in skb_shinfo()->destructor_arg: the stack reads it
 * only for zero-copy packets (skb_zcopy(): SKBFL_ZEROCOPY_ENABLE, never
 * set on these), and pskb_expand_head() copies it. Clones get neither.
 *
 * Context: a lock of the QP held (its sender hands the packet on later).
 */
void srdma_txg_skb(struct srdma_txg *g, struct sk_buff *skb)
{
	atomic_inc(&g->ref);
	skb_shinfo(skb)->destructor_arg = g;
	skb->destructor = srdma_txg_skb_done;
}

/**
 * srdma_txg_room() - Packets a pass may still hand to the stack
 * @g: the QP's gauge
 *
 * Context: a lock of the QP held; the QP holds its reference until it sends
 * no more.
 * Return: SRDMA_TX_INFLIGHT_HIGH less the packets in flight; 0 or less
 * when the QP must wait.
 */
int srdma_txg_room(const struct srdma_txg *g)
{
	return SRDMA_TX_INFLIGHT_HIGH - srdma_txg_inflight(g);
}

/**
 * srdma_txg_throttle() - A pass stops for the packets in flight
 * @g: the QP's gauge
 *
 * Return: true when the packet that brings the count down to
 * SRDMA_TX_INFLIGHT_LOW will schedule the QP's tasklet; false when the
 * count is there already, and the caller must run another pass itself.
 *
 * Context: a lock of the QP held (either side's).
 */
bool srdma_txg_throttle(struct srdma_txg *g)
{
	set_bit(SRDMA_TXG_THROTTLED, &g->flags);
	/*
	 * Either the destructor that crosses LOW sees the flag, or this
	 * sees the count it left: pairs with atomic_dec_return() there.
	 */
	smp_mb__after_atomic();
	if (srdma_txg_inflight(g) > SRDMA_TX_INFLIGHT_LOW)
		return true;
	/*
	 * The caller runs again itself. The flag stays: the other side's
	 * pass may have stopped on it (it costs at most one tasklet run).
	 */
	return false;
}

/**
 * srdma_txg_exit() - Wait for the last packet that has a gauge
 *
 * Packets of QPs destroyed long ago may still be queued somewhere; their
 * destructor is this module's code.
 *
 * Context: module unload, after every device is gone; sleeps.
 */
void srdma_txg_exit(void)
{
	while (!wait_var_event_timeout(&srdma_txg_live,
				       !atomic_read(&srdma_txg_live), 10 * HZ))
		pr_warn("softrdma: waiting for %d QPs' packets in flight\n",
			atomic_read(&srdma_txg_live));
	/* The last destructor has left its read-side section. */
	synchronize_rcu();
}
