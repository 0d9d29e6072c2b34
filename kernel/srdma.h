/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrdma: a software RoCEv2 device on top of any netdev.
 *
 * Objects and their lifetimes are described in Documentation/design.rst;
 * the locking and context rules in Documentation/locking.rst.
 */
#ifndef SRDMA_H
#define SRDMA_H

#include <linux/completion.h>
#include <linux/eventfd.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/softrdma-abi.h>

#include "srdma_compat.h"
#include "srdma_queue.h"
#include "srdma_qp.h"
#include "srdma_stats.h"

#define SRDMA_DRV_NAME		"softrdma"
#define SRDMA_LINK_TYPE		"softrdma"

/* Device limits (what query_device reports and the verbs enforce). */
#define SRDMA_MAX_QP		BIT(17)
#define SRDMA_MAX_QP_WR		BIT(14)
#define SRDMA_MAX_SEND_SGE	32
#define SRDMA_MAX_RECV_SGE	32
#define SRDMA_MAX_INLINE	512
#define SRDMA_MAX_CQ		BIT(16)
#define SRDMA_MAX_CQE		BIT(16)
#define SRDMA_MAX_MR		BIT(18)
#define SRDMA_MAX_PD		BIT(16)
#define SRDMA_MAX_AH		BIT(16)
#define SRDMA_MAX_SRQ		BIT(16)
#define SRDMA_MAX_MCAST_GRP	BIT(13)
#define SRDMA_MAX_MCAST_QP	56
#define SRDMA_MAX_MR_SIZE	BIT_ULL(40)
#define SRDMA_MAX_MSG_SIZE	BIT(31)
#define SRDMA_MAX_FR_PAGES	BIT(12)
/* Kernel-only SQ opcode (after the uverbs ones): REG_MR of an ib_reg_wr. */
#define SRDMA_WR_REG_MR		0xf0
#define SRDMA_MAX_RD_ATOMIC	128
#define SRDMA_MAX_PKEYS		1
#define SRDMA_GID_TBL_LEN	1024
#define SRDMA_VENDOR_ID		0xffffff	/* no IEEE OUI of its own */
#define SRDMA_HW_REV		1

struct srdma_net;
struct srdma_dbfile_ops;

/* Per-CPU device counters, see srdma_stats.h. */
struct srdma_counters {
	u64 val[SRDMA_CNT_MAX];
};

/**
 * struct srdma_dev - one softrdma device, bound to one netdev
 * @ibdev: the core's device, first so that ib_alloc_device works
 * @attr: device attributes, set at creation and read-only after; the core
 *	clears ibdev.attrs before it asks for them, so they live here
 * @ndev: the netdev, held (dev_hold) from creation until dealloc_driver
 * @list: entry in the module's device list, guarded by srdma_devs_lock
 * @port_state: last port state reported, written under RTNL
 * @mtu: active path MTU of the port, from the netdev MTU
 * @pd_cnt: number of live PDs, bounded by attrs.max_pd
 * @cq_cnt: number of live CQs
 * @qp_cnt: number of live QPs
 * @mr_cnt: number of live MRs
 * @qp_xa: QP number to struct srdma_qp; readers use RCU (xa_load), writers
 *	the xarray's own lock
 * @qpn_next: cursor of the cyclic QP number allocation
 * @mr_xa: key index to struct srdma_mr, same locking as @qp_xa
 * @mr_next: cursor of the cyclic key index allocation
 * @ah_xa: AH handle to struct srdma_ah_entry; readers use RCU, writers
 *	the xarray's lock with interrupts saved (AHs come and go in any
 *	context)
 * @ah_next: cursor of the cyclic AH handle allocation
 * @ah_cnt: number of live AHs
 * @srq_cnt: number of live SRQs
 * @mcast_lock: serializes multicast attach and detach (srdma_mcast.c)
 * @mcast_list: (MGID, QP) attachments; the receive path walks it under RCU
 * @mcast_cnt: entries in @mcast_list
 * @counters: per-CPU counters
 * @snet: the network namespace state the device is attached to (its
 *	UDP sockets), NULL when detached; guarded by srdma_net_lock
 *	(srdma_net.c)
 * @net_node: entry in @snet's device list; the receive path walks it
 *	under RCU, writers hold srdma_net_lock
 */
struct srdma_dev {
	struct ib_device ibdev;
	struct ib_device_attr attr;
	struct net_device *ndev;
	struct list_head list;
	enum ib_port_state port_state;
	enum ib_mtu mtu;
	atomic_t pd_cnt;
	atomic_t cq_cnt;
	atomic_t qp_cnt;
	atomic_t mr_cnt;
	struct xarray qp_xa;
	u32 qpn_next;
	struct xarray mr_xa;
	u32 mr_next;
	struct xarray ah_xa;
	u32 ah_next;
	atomic_t ah_cnt;
	atomic_t srq_cnt;
	struct mutex mcast_lock; /* see above */
	struct list_head mcast_list;
	u32 mcast_cnt;
	struct srdma_counters __percpu *counters;
	struct srdma_net *snet;
	struct list_head net_node;
};

/**
 * struct srdma_mmap_entry - a ring buffer mapped into a process
 * @rdma: the core's entry; its refcount decides when @buf is freed
 * @buf: vmalloc_user() memory, freed in srdma_mmap_free()
 */
struct srdma_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

/**
 * struct srdma_ring - kernel view of one shared ring
 * @ctrl: control area at the start of the buffer (indices)
 * @buf: start of the entries
 * @num: number of entries, a power of two
 * @stride: bytes per entry, a power of two
 * @own: the index this side owns (prod of a CQ, cons of a work queue);
 *	the only trusted copy, published to @ctrl
 * @mmap: the entry through which the process maps the ring, or NULL for a
 *	ring of an in-kernel consumer
 */
struct srdma_ring {
	struct srdma_ring_ctrl *ctrl;
	void *buf;
	u32 num;
	u32 stride;
	u32 own;
	struct srdma_mmap_entry *mmap;
};

/**
 * struct srdma_udb - a context's doorbell: an eventfd or a doorbell file
 *	(srdma_udb.c); at most one of @efd and @file
 * @file: the doorbell file bound to the context (a reference), or NULL
 * @dbops: the doorbell device's module, held while @file is bound
 * @efd: the eventfd, or NULL when the process gave none
 * @wait: the entry on the eventfd's wait queue whose wake-up rings
 * @pt: what the eventfd's poll() queues @wait with
 * @entry: in the list of the eventfds being watched, which a second
 *	context may not watch too
 */
struct srdma_udb {
	struct file *file;
	const struct srdma_dbfile_ops *dbops;
	struct eventfd_ctx *efd;
	struct wait_queue_entry wait;
	poll_table pt;
	struct list_head entry;
};

/**
 * struct srdma_udb_qp - a process QP's doorbell by eventfd (srdma_udb.c)
 * @work: runs the doorbell when its task returns to user mode
 * @lock: guards @qp and @running
 * @qp: the QP; NULL once destroy has begun
 * @running: doorbells of @work running a pass; destroy waits for 0
 * @queued: bit 0 while @work is queued and has not begun
 * @owner: the task @work is queued on (a hint, compared only)
 * @ref: the QP's reference and one per queued @work
 *
 * Allocated apart from the QP: a queued @work may outlive it, since
 * nothing makes a task return to user mode.
 */
struct srdma_udb_qp {
	struct callback_head work;
	spinlock_t lock; /* see above */
	struct srdma_qp *qp;
	unsigned int running;
	unsigned long queued;
	struct task_struct *owner;
	refcount_t ref;
};

/**
 * struct srdma_ucontext - a process's context
 * @ibuc: the core's context
 * @udb: the doorbell eventfd
 */
struct srdma_ucontext {
	struct ib_ucontext ibuc;
	struct srdma_udb udb;
};

/**
 * struct srdma_pd - protection domain
 * @ibpd: the core's PD
 */
struct srdma_pd {
	struct ib_pd ibpd;
};

/**
 * struct srdma_ah_entry - what an AH handle names (srdma_ud.c)
 * @av: the address vector, its UDP source port left to the sender
 * @pd: the AH's PD: a QP may use only the AHs of its own PD
 * @rcu: frees the entry after the lookups that may still see it
 */
struct srdma_ah_entry {
	struct srdma_av av;
	const struct ib_pd *pd;
	struct rcu_head rcu;
};

/**
 * struct srdma_ah - address handle
 * @ibah: the core's AH
 * @handle: the name UD WQEs give it (in the ABI's wr.ud.ah)
 * @ent: the entry @handle maps to
 */
struct srdma_ah {
	struct ib_ah ibah;
	u32 handle;
	struct srdma_ah_entry *ent;
};

/**
 * struct srdma_mr - memory region
 * @ibmr: the core's MR (pd, iova, length; lkey and rkey as the consumer
 *	sees them)
 * @key: the key that names the MR on the wire and in SGEs now: set at
 *	registration, and for a fast-registration MR by each REG_MR work
 *	request (the consumer updates ibmr's keys before posting it)
 * @valid: remote and local access may use the MR; a fast-registration MR
 *	is valid between REG_MR and its invalidation
 * @state_lock: makes each change of @valid and @key by REG_MR, a bind or
 *	an invalidation one step with the test of the state it depends on;
 *	MR lookups read them without it (acquire/release), a window's
 *	R_Key resolution (srdma_rkey_get()) with it. Taken with bottom
 *	halves disabled, under a QP's lock or its resp_lock
 * @fast: a fast-registration MR (alloc_mr), with @fr_pages
 * @umem: pinned user pages, or NULL for a DMA or fast-registration MR
 * @pages: @umem's pages in order, for O(1) lookup by offset
 * @npages: entries in @pages
 * @page_offset: offset of the region's first byte in @pages[0]
 * @fr_pages: kernel addresses of the blocks map_mr_sg gave (virtual DMA)
 * @fr_max: entries @fr_pages has room for
 * @fr_npages: entries in use
 * @access: IB_ACCESS_* flags granted
 * @mw_type: 0 for an MR; IB_MW_TYPE_1 or _2 for a window's key object,
 *	whose ibmr holds the window's PD, range (iova, length) and keys
 * @mw_base: a bound window: the address in its MR of the window's start
 * @mw_parent: a bound window: the key of its MR
 * @mw_qpn: a bound type 2 window: the QP it is bound to
 * @ref: the MR table's reference plus one per transport use
 * @inv_waiting: invalidations waiting in srdma_mr_quiesce(), each holding
 *	a reference of @ref
 * @done: completed when @ref drops to zero (deregistration waits for it)
 * @rcu: frees the structure after lookups that may still see it
 */
struct srdma_mr {
	struct ib_mr ibmr;
	u32 key;
	bool valid;
	spinlock_t state_lock; /* see above */
	bool fast;
	struct ib_umem *umem;
	struct page **pages;
	u32 npages;
	u32 page_offset;
	u64 *fr_pages;
	u32 fr_max;
	u32 fr_npages;
	int access;
	u8 mw_type;
	u64 mw_base;
	u32 mw_parent;
	u32 mw_qpn;
	refcount_t ref;
	atomic_t inv_waiting;
	struct completion done;
	struct rcu_head rcu;
};

/**
 * struct srdma_mw - memory window (srdma_mw.c)
 * @ibmw: the core's MW
 * @km: its key object in the MR table
 */
struct srdma_mw {
	struct ib_mw ibmw;
	struct srdma_mr *km;
};

/**
 * struct srdma_cq - completion queue
 * @ibcq: the core's CQ
 * @lock: serializes producers of CQEs (every QP completing into this CQ,
 *	from process and softirq context) and resize; taken with irqsave
 * @ring: the CQE ring (kernel is the producer); resize replaces it
 *	under @lock
 * @error: the CQ overflowed or its consumer index was corrupt
 * @kernel_notify: notify request of an in-kernel consumer (user CQs keep
 *	it in the ring's control area); guarded by @lock
 * @ts_flags: SRDMA_CREATE_CQ_TS_* the process asked for; set at creation
 * @notify_work: calls the completion handler outside every lock
 */
struct srdma_cq {
	struct ib_cq ibcq;
	spinlock_t lock; /* see above */
	struct srdma_ring ring;
	bool error;
	u32 kernel_notify;
	u32 ts_flags;
	struct irq_work notify_work;
};

/**
 * struct srdma_wq - one work queue (SQ or RQ) of a QP
 * @lock: serializes in-kernel posters with the transport consumer and
 *	with the flush on the error state; taken with irqsave
 * @ring: the WQE ring (the poster is the producer)
 * @max_sge: SGEs per WQE the queue was created with
 * @max_inline: bytes of inline data per WQE (SQ only)
 */
struct srdma_wq {
	spinlock_t lock; /* see above */
	struct srdma_ring ring;
	u32 max_sge;
	u32 max_inline;
};

/**
 * struct srdma_srq - shared receive queue (srdma_srq.c)
 * @ibsrq: the core's SRQ
 * @lock: the consumer side: QPs taking WQEs, the limit, @error; taken
 *	with bottom halves disabled (nested in a QP's lock)
 * @rq: the ring; rq.lock serializes in-kernel posters
 * @limit: arms IB_EVENT_SRQ_LIMIT_REACHED while non-zero
 * @error: a corrupt producer index was seen; the SRQ gives no more WQEs
 */
struct srdma_srq {
	struct ib_srq ibsrq;
	spinlock_t lock; /* see above */
	struct srdma_wq rq;
	u32 limit;
	bool error;
};

/* The encoding of srdma_qp.event besides -1 (nothing pending). */
#define SRDMA_QP_EV_TYPE	GENMASK(15, 0)
#define SRDMA_QP_EV_NONE	SRDMA_QP_EV_TYPE
#define SRDMA_QP_EV_LAST_WQE	BIT(16)

/* A QP's two transmit streams; see struct srdma_txs. */
enum srdma_tx_stream {
	SRDMA_TX_RESP,
	SRDMA_TX_REQ,
	SRDMA_TX_STREAMS
};

/**
 * struct srdma_txs - One transmit stream of a QP
 * @q: packets built under the lock of the QP's side that owns the stream
 *	(qp->resp_lock for responses, qp->lock for requests), waiting to be
 *	sent in order
 * @running: a CPU is sending @q; others only append (under that lock)
 * @dst: the route of the QP's AV, used and refreshed by that one sender
 * @xps_cpu: the CPU whose transmit queue the stream's packets take, plus
 *	one (the encoding of skb->sender_cpu); 0 until the first packet,
 *	which sets it to its sender's. Written under the lock above.
 *
 * Responses and requests are separate PSN sequences that the peer's
 * completer and responder check independently (IBTA 9.7), so each keeps
 * its own order but neither waits for the other: a CPU delivering a
 * response locally does not hold up a request that another CPU has just
 * built for the same QP.
 *
 * A netdev with several transmit queues picks one per packet, by default
 * by the sending CPU (XPS), and the queues drain independently. A stream
 * is sent from whichever CPU runs the pass (the poster, the softirq of
 * an ACK, the SQ poller), so its packets would be spread over queues and
 * could overtake one another: a PSN sequence error and a go-back-N for
 * RC, a lost message for UC. Every packet of a stream therefore names
 * the same CPU to XPS, as a TCP socket keeps its queue
 * (sk_tx_queue_get()).
 */
struct srdma_txs {
	struct sk_buff_head q;
	bool running;
	unsigned int xps_cpu;
	struct srdma_dst_cache dst;
};

struct srdma_sqpoll_cpu;

/**
 * struct srdma_txg - a connected QP's packets in the local stack
 *	(srdma_txg.c)
 * @ref: one for the QP, one per packet handed to the stack and not yet
 *	freed or orphaned: while the QP holds its own, the packets in flight
 *	are @ref - 1
 * @flags: SRDMA_TXG_THROTTLED: a pass waits for the packets to be fewer
 * @qp: the QP; NULL (RCU) once its destruction has begun
 * @rcu: frees the gauge
 */
struct srdma_txg {
	atomic_t ref;
	unsigned long flags;
	struct srdma_qp __rcu *qp;
	struct rcu_head rcu;
};

/**
 * struct srdma_sqpoll_qp - a QP's part in SQ polling (srdma_sqpoll.c)
 * @entry: in @pc's list while @state is SRDMA_SQPOLL_LISTED or _STEPPING
 * @pc: the CPU whose poller has or last had the QP, NULL before
 * @state: enum srdma_sqpoll_state; guarded by @pc's lock
 * @rearm: a doorbell came while the poller was letting go of the QP;
 *	guarded by @pc's lock
 * @linger: the poller waits for new WQEs: passes keep
 *	SRDMA_RING_KSTATE_POLLING set; read by passes under the QP's lock,
 *	written with WRITE_ONCE() by the doorbell (under the QP's lock) and
 *	the poller
 * @more: the poller's last pass left work it did not leave to @kicked
 *	(its request stream stopped at its bound); the poller's only
 * @kicked: a pass on the poller's CPU, the poller's own among them, left
 *	requester work to the poller (srdma_sqpoll_kick()); set with
 *	WRITE_ONCE() under the QP's lock, cleared by the poller
 * @seen: the producer index before the last pass; the poller's only
 * @deadline: local_clock() after which an idle QP is let go; the poller's
 * @sample_cpu: the CPU whose idle time @sample_idle_us is; with
 *	@sample_ns, written by doorbells without a lock (a hint)
 * @sample_ns: ktime_get_ns() at the sample
 * @sample_idle_us: get_cpu_idle_time_us() of @sample_cpu at the sample
 */
struct srdma_sqpoll_qp {
	struct list_head entry;
	struct srdma_sqpoll_cpu *pc;
	u8 state;
	bool rearm;
	bool linger;
	bool more;
	bool kicked;
	u32 seen;
	u64 deadline;
	int sample_cpu;
	u64 sample_ns;
	u64 sample_idle_us;
};

/**
 * struct srdma_qp - queue pair
 * @ibqp: the core's QP
 * @lock: guards the requester and the completer (@req, the consumer side
 *	of the SQ, @sq_shadow, @tx[SRDMA_TX_REQ], the timers' state), and
 *	with @resp_lock @state, @attr, @av and @dead; taken with _bh, never
 *	from hard interrupt context
 * @resp_lock: guards the responder (@resp, the consumer side of the RQ,
 *	@tx[SRDMA_TX_RESP]); nests inside @lock. Both are held to change
 *	@state, @attr, @av and @dead, so either is enough to read them.
 *	Taken with _bh, never from hard interrupt context
 * @state: current IBTA QP state; read without the locks with READ_ONCE()
 * @attr: attributes set by modify_qp (valid bits per the state)
 * @av: where packets go, from the primary path's address vector
 * @sq: send queue
 * @rq: receive queue; without a ring when the QP has an SRQ
 * @sq_shadow: kernel copies of the SQ's WQEs (struct srdma_swqe)
 * @sq_shadow_stride: bytes per @sq_shadow entry
 * @sq_kreg: in-kernel QPs: the REG_MR arguments of each SQ slot
 * @req: requester state
 * @resp: responder state
 * @retrans_timer: local ACK timeout (srdma_comp.c)
 * @rnr_timer: RNR NAK wait, or a tick after a failed allocation (srdma_comp.c)
 * @probe_timer: tail probe (srdma_req_ack.c)
 * @tx_tasklet: continues transmission that exceeded one pass's budget, or
 *	that waited for packets in flight (@txg)
 * @sqpoll: a process's SQ polled from another CPU (srdma_sqpoll.c)
 * @tx: the packets built and waiting to be sent, in two streams that
 *	leave independently: responses (ACKs, READ responses, atomic ACKs)
 *	and requests (srdma_tx.c)
 * @txg: RC, UC: the packets of @tx the stack still holds; set at create
 * @av_gen: bumped with @av whenever it changes; each stream's route
 *	cache follows it
 * @err_idx: SQ index of the WQE that moved the QP to the error state
 * @err_status: its completion status; IB_WC_WR_FLUSH_ERR when no WQE did
 * @event: asynchronous events to raise once the lock is dropped: -1 for
 *	none, else an ib_event_type (SRDMA_QP_EV_NONE for none) and the flag
 *	SRDMA_QP_EV_LAST_WQE, taken together by one xchg() so that they are
 *	raised in order; set under @lock with WRITE_ONCE(), since the xchg()
 *	runs without it
 * @dead: destroy has begun: timers and the tasklet must not re-arm
 * @sq_sig_all: every send WQE generates a completion
 * @is_user: the rings are mapped into a process
 * @uctx: the process's context; NULL for an in-kernel QP
 * @udb: the doorbell by the context's eventfd; NULL for an in-kernel QP
 */
struct srdma_qp {
	struct ib_qp ibqp;
	spinlock_t lock; /* see above */
	spinlock_t resp_lock; /* see above */
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	struct srdma_av av;
	struct srdma_wq sq;
	struct srdma_wq rq;
	void *sq_shadow;
	u32 sq_shadow_stride;
	struct srdma_kreg *sq_kreg;
	struct srdma_req req;
	struct srdma_resp resp;
	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct timer_list probe_timer;
	struct tasklet_struct tx_tasklet;
	struct srdma_sqpoll_qp sqpoll;
	struct srdma_txs tx[SRDMA_TX_STREAMS];
	struct srdma_txg *txg;
	u32 av_gen;
	u32 err_idx;
	enum ib_wc_status err_status;
	int event;
	bool dead;
	bool sq_sig_all;
	bool is_user;
	struct srdma_ucontext *uctx;
	struct srdma_udb_qp *udb;
};

static inline struct srdma_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct srdma_dev, ibdev);
}

static inline struct srdma_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct srdma_pd, ibpd);
}

/* A datagram QP: UD, or QP1 (GSI), which is UD on the wire. */
static inline bool srdma_qp_is_ud(const struct srdma_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

static inline struct srdma_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct srdma_srq, ibsrq);
}

static inline struct srdma_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct srdma_ah, ibah);
}

static inline struct srdma_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct srdma_mr, ibmr);
}

static inline struct srdma_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct srdma_mw, ibmw);
}

static inline struct srdma_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct srdma_cq, ibcq);
}

/* Rate-limited debug output (dynamic debug) naming the QP and the function. */
#define srdma_qp_dbg(qp, fmt, ...) do {					\
	const struct srdma_qp *_qp = (qp);					\
										\
	ibdev_dbg_ratelimited(_qp->ibqp.device, "qp#%u %s: " fmt,		\
			      _qp->ibqp.qp_num, __func__, ##__VA_ARGS__);	\
} while (0)

static inline struct srdma_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct srdma_qp, ibqp);
}

static inline struct srdma_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct srdma_ucontext, ibuc);
}

/* srdma_main.c */
extern const struct ib_device_ops srdma_dev_ops;

/* srdma_verbs.c */
int srdma_udata_cmd(struct ib_udata *udata, void *cmd, size_t size);
int srdma_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata);
int srdma_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr);
int srdma_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable);
enum rdma_link_layer srdma_get_link_layer(struct ib_device *ibdev, u32 port);
int srdma_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
void srdma_get_dev_fw_str(struct ib_device *ibdev, char *str);
int srdma_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void srdma_dealloc_ucontext(struct ib_ucontext *ibuc);
void srdma_disassociate_ucontext(struct ib_ucontext *ibuc);
int srdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int srdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
void srdma_init_dev_attrs(struct srdma_dev *sdev);
void srdma_update_port(struct srdma_dev *sdev);
extern const struct attribute_group srdma_attr_group;

/* srdma_ring.c */
int srdma_ring_init(struct srdma_ring *ring, struct ib_udata *udata,
		    u32 num, u32 stride);
void srdma_ring_destroy(struct srdma_ring *ring);
void srdma_ring_info(const struct srdma_ring *ring,
		     struct srdma_ring_info *info);
int srdma_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void srdma_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

/* srdma_cq.c */
int srdma_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SRDMA_CREATE_CQ_ARG *arg);
int srdma_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int srdma_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int srdma_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int srdma_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
bool srdma_cq_post(struct srdma_cq *cq, const struct srdma_cqe *cqe,
		   bool solicited);

/* srdma_mr.c */
enum srdma_copy_dir {
	SRDMA_GATHER,
	SRDMA_SCATTER,
	SRDMA_SCATTER_SKB,
};

bool srdma_sgl_copy(struct srdma_dev *sdev, const struct ib_pd *pd,
		    const struct srdma_sge *sge, u32 num_sge, u32 off, u32 len,
		    enum srdma_copy_dir dir, void *buf,
		    const struct sk_buff *skb, int skb_off);
int srdma_sgl_attach(struct srdma_dev *sdev, const struct ib_pd *pd,
		     const struct srdma_sge *sge, u32 num_sge, u32 off,
		     u32 len, struct sk_buff *skb);
int srdma_mr_attach(const struct srdma_mr *mr, u64 iova, u32 len,
		    struct sk_buff *skb);
struct srdma_mr *srdma_mr_get(struct srdma_dev *sdev, u32 key);
void srdma_mr_put(struct srdma_mr *mr);
bool srdma_mr_check(const struct srdma_mr *mr, const struct ib_pd *pd,
		    u64 iova, u64 len, int access);
void srdma_mr_copy(const struct srdma_mr *mr, u64 iova, void *buf, u32 len,
		   bool to_mr);
int srdma_mr_copy_from_skb(const struct srdma_mr *mr, u64 iova,
			   const struct sk_buff *skb, int off, u32 len);
u64 srdma_mr_atomic(const struct srdma_mr *mr, u64 iova, bool cmp_swap,
		    u64 compare, u64 swap_add);
struct ib_mr *srdma_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *srdma_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int srdma_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *srdma_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);
struct ib_mr *srdma_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int srdma_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
enum ib_wc_status srdma_mr_fast_reg(struct srdma_dev *sdev,
				    const struct ib_pd *pd,
				    struct srdma_mr *mr, u32 key, int access);
enum ib_wc_status srdma_mr_invalidate(const struct srdma_qp *qp, u32 key);
int srdma_mr_alloc_key(struct srdma_dev *sdev, struct srdma_mr *mr);
void srdma_mr_retire(struct srdma_dev *sdev, struct srdma_mr *mr);
struct srdma_mr *srdma_mr_get_index(struct srdma_dev *sdev, u32 key);

/* srdma_mw.c */
int srdma_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int srdma_dealloc_mw(struct ib_mw *ibmw);
enum ib_wc_status srdma_mw_bind(struct srdma_qp *qp,
				const struct srdma_send_wqe *w);
enum ib_wc_status srdma_mw_invalidate(struct srdma_mr *km,
				      const struct srdma_qp *qp);
struct srdma_mr *srdma_rkey_get(const struct srdma_qp *qp, u32 rkey, u64 va,
				u64 len, int access, u64 *mva);

/* srdma_qp.c */
int srdma_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int srdma_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int srdma_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int srdma_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
void srdma_qp_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		  const struct sk_buff *skb, struct srdma_loop *loop);
void srdma_qp_fatal(struct srdma_qp *qp, u32 idx, enum ib_wc_status status);
void srdma_qp_fatal_event(struct srdma_qp *qp, u32 idx,
			  enum ib_wc_status status);
void srdma_resp_end(struct srdma_qp *qp, bool fatal);
void srdma_qp_resp_ended(struct srdma_qp *qp);
void srdma_qp_flush(struct srdma_qp *qp);
void srdma_qp_raise_event(struct srdma_qp *qp);

/* srdma_tx.c */
int srdma_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int srdma_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
int srdma_recv_wqe_put(struct srdma_wq *wq, const struct ib_recv_wr *wr);
void srdma_qp_kick(struct srdma_qp *qp);
bool srdma_qp_step(struct srdma_qp *qp);
void srdma_qp_set_polling(struct srdma_qp *qp);
void srdma_qp_run(struct srdma_qp *qp);
void srdma_qp_doorbell(struct srdma_qp *qp);
void srdma_qp_run_resp(struct srdma_qp *qp);
void srdma_qp_tasklet(struct tasklet_struct *t);

/* srdma_txg.c */
struct srdma_txg *srdma_txg_alloc(struct srdma_qp *qp);
void srdma_txg_detach(struct srdma_txg *g);
void srdma_txg_release(struct srdma_txg *g);
void srdma_txg_skb(struct srdma_txg *g, struct sk_buff *skb);
int srdma_txg_room(const struct srdma_txg *g);
bool srdma_txg_throttle(struct srdma_txg *g);
void srdma_txg_exit(void);

/* srdma_udb.c */
int srdma_udb_attach(struct srdma_ucontext *uc, int fd);
void srdma_udb_detach(struct srdma_ucontext *uc);
int srdma_udb_qp_init(struct srdma_qp *qp, struct ib_udata *udata);
void srdma_udb_qp_release(struct srdma_qp *qp);
void srdma_udb_exit(void);

/* srdma_sqpoll.c */
int srdma_sqpoll_init(void);
void srdma_sqpoll_exit(void);
bool srdma_sqpoll_doorbell(struct srdma_qp *qp);
bool srdma_sqpoll_kick(struct srdma_qp *qp);
void srdma_sqpoll_stop(struct srdma_qp *qp);

/* srdma_req.c */
bool srdma_wr_is_read_atomic(u8 op);
struct srdma_swqe *srdma_swqe_at(struct srdma_qp *qp, u32 idx);
int srdma_req_fetch(struct srdma_qp *qp);
struct sk_buff *srdma_req_packet(struct srdma_qp *qp, struct srdma_swqe *sw,
				 u32 psn, u32 off, bool probe, bool *bad);
bool srdma_req_tx(struct srdma_qp *qp, struct sk_buff_head *q, int *budget);
bool srdma_req_idle(struct srdma_qp *qp);
bool srdma_req_fail_due(struct srdma_qp *qp);
void srdma_req_drained(struct srdma_qp *qp);
void srdma_req_congestion(struct srdma_qp *qp, bool timeout);
void srdma_req_acked(struct srdma_qp *qp, u32 n);
void srdma_req_credits(struct srdma_qp *qp, const struct srdma_pkt *pkt);

/* srdma_req_ack.c */
bool srdma_req_want_ack(const struct srdma_qp *qp,
			const struct srdma_swqe *sw, u32 psn, bool last);
void srdma_req_time_rtt(struct srdma_qp *qp, u32 psn);
void srdma_req_rtt_rewind(struct srdma_req *req);
void srdma_req_probe(struct srdma_qp *qp, struct sk_buff_head *q);
void srdma_req_probe_timeout(struct timer_list *t);
bool srdma_req_expects(struct srdma_qp *qp);
void srdma_req_arm_probe(struct srdma_qp *qp);

/* srdma_comp.c */
void srdma_comp_complete(struct srdma_qp *qp, enum ib_wc_status status);
void srdma_comp_local(struct srdma_qp *qp);
void srdma_comp_arm_timer(struct srdma_qp *qp);
void srdma_rtt_update(u32 *srtt_us, u32 *rttvar_us, u32 m_us);
u32 srdma_rtt_bound_us(u32 srtt_us, u32 rttvar_us);
bool srdma_rtt_answer(const struct srdma_req *req, const struct srdma_pkt *pkt);
void srdma_comp_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		    const struct sk_buff *skb);
void srdma_comp_timeout(struct timer_list *t);
void srdma_comp_rnr_timeout(struct timer_list *t);

/* srdma_resp.c */
void srdma_resp_nak_fatal(struct srdma_qp *qp, u8 nak, u32 psn);
void srdma_resp_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		    const struct sk_buff *skb);
u32 srdma_res_age(const struct srdma_resp *resp, u32 slot);
bool srdma_res_pending(const struct srdma_rd_res *res);
bool srdma_res_reusable(const struct srdma_rd_res *res);
int srdma_resp_take_rwqe(struct srdma_qp *qp);
void srdma_uc_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		  const struct sk_buff *skb);
void srdma_resp_rwqe_done(struct srdma_qp *qp);
u64 srdma_rwqe_room(const struct srdma_recv_wqe *w);

/* srdma_resp_tx.c */
bool srdma_resp_tx(struct srdma_qp *qp, struct sk_buff_head *q, int *budget);

/* srdma_srq.c */
int srdma_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int srdma_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int srdma_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int srdma_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int srdma_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);
int srdma_srq_take(struct srdma_srq *srq, struct srdma_recv_wqe *w);

/* srdma_mcast.c */
int srdma_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
int srdma_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
void srdma_mcast_detach_qp(struct srdma_qp *qp);
unsigned int srdma_mcast_rcv(struct srdma_dev *sdev,
			     const struct srdma_pkt *pkt,
			     const struct sk_buff *skb);

/* srdma_ud.c */
int srdma_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int srdma_destroy_ah(struct ib_ah *ibah, u32 flags);
int srdma_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
bool srdma_ud_tx(struct srdma_qp *qp, struct sk_buff_head *q, int *budget);
void srdma_ud_av_of(const struct sk_buff *skb, struct srdma_av *av);
void srdma_ud_rcv(struct srdma_qp *qp, const struct srdma_pkt *pkt,
		  const struct sk_buff *skb);

/* srdma_recv.c: srdma_rcv(), declared with its contract in srdma_net.h */

#endif /* SRDMA_H */
