/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softrdma: the ABI between the softrdma kernel driver and its rdma-core
 * provider (libsoftrdma). This header is the only definition shared by the
 * two; neither side keeps a private copy of any structure below.
 *
 * Versioning: SRDMA_UVERBS_ABI_VERSION is reported to libibverbs as the
 * device's uverbs ABI version. It is bumped when a structure below changes
 * incompatibly (a field moves, changes meaning or size). Appending a field
 * at the end of a command or response, guarded by a comp_mask bit, or giving
 * meaning to a reserved field that is zero today, does not bump it.
 *
 * Rules every structure follows: 8-byte aligned sizes, explicit reserved
 * fields that the sender zeroes and the receiver ignores (commands: the
 * kernel rejects non-zero reserved fields so they can be given meaning
 * later), comp_mask first in commands and responses, no kernel pointers.
 * Units are stated next to each field.
 *
 * =====================================================================
 * Shared rings
 * =====================================================================
 *
 * Every work queue (SQ, RQ, SRQ) and every completion queue is one ring in
 * kernel memory (vmalloc), mapped into the owning process with mmap() at the
 * offset that the create command's response gives. A ring is:
 *
 *   offset 0                          SRDMA_RING_CTRL_SIZE   + n * stride
 *   +--------+--------+--------+--------+-----------+-----------+--- ...
 *   | line 0 | line 1 | line 2 | line 3 | entry 0   | entry 1   |
 *   |  prod  |  cons  | notify | kstate |           |           |
 *   +--------+--------+--------+--------+-----------+-----------+--- ...
 *     64 B     64 B     64 B     64 B     stride B
 *
 * The number of entries n is a power of two; stride is a power of two of at
 * least 64 bytes. Indices are free-running 32-bit counters: entry i lives at
 * slot (i & (n - 1)); the ring is empty when prod == cons and full when
 * prod - cons == n (unsigned arithmetic, so wraparound of the counters is
 * harmless). Each index sits alone in its cache line so that the producer and
 * the consumer never write the same line.
 *
 * Who writes what:
 *
 *   ring   producer (writes prod,     consumer (writes cons)  notify   kstate
 *          then entries)
 *   SQ     process (ibv_post_send)    kernel transport        -        kernel
 *   RQ     process (ibv_post_recv)    kernel transport        -        -
 *   SRQ    process (ibv_post_srq_recv) kernel transport       -        -
 *   CQ     kernel (completions)       process (ibv_poll_cq)   process  kernel
 *
 * Ordering (C11 terms; the kernel uses smp_load_acquire/smp_store_release):
 *   - The producer writes an entry, then store-releases prod. The consumer
 *     load-acquires prod, then reads entries below it.
 *   - The consumer finishes reading an entry, then store-releases cons. The
 *     producer load-acquires cons before reusing the slot.
 *   - CQ notify (see SRDMA_CQ_NOTIFY_*): the process stores the request,
 *     then issues a full barrier and polls once more; the kernel publishes
 *     a CQE (store-release of prod), issues a full barrier, then reads
 *     notify. Either the process sees the new CQE or the kernel sees the
 *     request, never neither.
 *
 * Trust: the kernel never trusts a value that the process can write. It
 * keeps its own copy of every index it owns and only publishes it; an index
 * it reads from the process (SQ/RQ/SRQ prod, CQ cons) is checked against its
 * own copy (at most n entries ahead of, or behind, it) and a violation moves
 * the queue's QP, or the CQ, to the error state. An entry is copied out of
 * the ring once and then validated (opcode, SGE count, lengths) on the copy.
 * Indices written by the kernel are published only; the process may read
 * garbage if it writes garbage, and only its own queues suffer.
 */
#ifndef SOFTRDMA_ABI_USER_H
#define SOFTRDMA_ABI_USER_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SRDMA_UVERBS_ABI_VERSION	1

/* Size of the control area at the start of every ring, in bytes. */
#define SRDMA_RING_CTRL_SIZE		256
/* Smallest entry stride of any ring, in bytes. */
#define SRDMA_RING_MIN_STRIDE		64

struct srdma_ring_ctrl {
	/* Line 0: written only by the producer. Free-running entry count. */
	__u32 prod;
	__u32 reserved0[15];
	/* Line 1: written only by the consumer. Free-running entry count. */
	__u32 cons;
	__u32 reserved1[15];
	/* Line 2: written by the process: requests to the kernel. */
	__u32 notify;
	__u32 reserved2[15];
	/* Line 3: written by the kernel: SRDMA_RING_KSTATE_* bits. */
	__u32 kstate;
	__u32 reserved3[15];
};

/* kstate: the kernel moved the queue (or the CQ) to the error state. */
#define SRDMA_RING_KSTATE_ERROR		(1U << 0)
/*
 * kstate of an SQ: the kernel's transport is running for this QP and will
 * look at prod again by itself (an ACK or response it asked for is due, an
 * RNR wait or another pass runs), so a post needs no doorbell. The kernel
 * clears the bit, issues a full barrier and reads prod once more before it
 * goes idle; the process store-releases prod, issues a full barrier and
 * reads the bit. Either the kernel sees the new WQE or the process sees the
 * bit clear and rings the doorbell.
 */
#define SRDMA_RING_KSTATE_POLLING	(1U << 1)

/* CQ notify values (ibv_req_notify_cq without a system call). */
enum srdma_cq_notify {
	SRDMA_CQ_NOTIFY_NONE = 0,
	SRDMA_CQ_NOTIFY_SOLICITED = 1,	/* next solicited or error CQE */
	SRDMA_CQ_NOTIFY_NEXT = 2,	/* next CQE of any kind */
};

/* Scatter/gather element of a WQE, 16 bytes. */
struct srdma_sge {
	__aligned_u64 addr;		/* virtual address (or zero-based offset) */
	__u32 length;			/* bytes */
	__u32 lkey;
};

/* Send WQE flags (values of enum ibv_send_flags). */
#define SRDMA_WQE_FENCE			(1U << 0)
#define SRDMA_WQE_SIGNALED		(1U << 1)
#define SRDMA_WQE_SOLICITED		(1U << 2)
#define SRDMA_WQE_INLINE		(1U << 3)

/*
 * Send WQE: a 64-byte header followed, in the same ring slot, by num_sge
 * struct srdma_sge or, with SRDMA_WQE_INLINE, by inline_len bytes of data.
 * opcode takes the values of enum ib_uverbs_wr_opcode.
 */
struct srdma_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 num_sge;
	__u16 flags;			/* SRDMA_WQE_* */
	__u32 inline_len;		/* bytes of inline data */
	union {
		__be32 imm_data;	/* *_WITH_IMM */
		__u32 invalidate_rkey;	/* SEND_WITH_INV, LOCAL_INV */
	} ex;
	__u32 reserved;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah;	/* handle from the create AH response */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 mw_rkey;	/* new rkey of the window */
			__u32 access;	/* IB_ACCESS_* */
			__u32 reserved;
		} bind;
		__u8 raw[40];
	} wr;
};

/* Receive WQE: a 16-byte header followed by num_sge struct srdma_sge. */
struct srdma_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* CQE flags (values of enum ib_uverbs_wc_flags / ibv_wc_flags). */
#define SRDMA_CQE_WITH_GRH		(1U << 0)
#define SRDMA_CQE_WITH_IMM		(1U << 1)
#define SRDMA_CQE_WITH_INV		(1U << 3)

/*
 * Completion queue entry, 64 bytes. status takes the values of enum
 * ibv_wc_status (equal to the kernel's enum ib_wc_status), opcode those of
 * enum ibv_wc_opcode (IB_UVERBS_WC_* for send completions, 128 and up for
 * receive completions).
 */
struct srdma_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u16 wc_flags;			/* SRDMA_CQE_* */
	__u32 byte_len;			/* bytes received or transferred */
	__u32 qp_num;
	__u32 src_qp;			/* UD: source QP number */
	union {
		__be32 imm_data;
		__u32 invalidated_rkey;
	} ex;
	__u32 vendor_err;
	__u16 pkey_index;
	__u8 sl;
	__u8 network_hdr_type;		/* UD: enum rdma_network_type */
	__u32 reserved0;
	/*
	 * When the CQE was written, in ns: ts_raw on CLOCK_MONOTONIC_RAW (the
	 * device's free-running clock), ts_real on CLOCK_REALTIME; each only
	 * in a CQ created with its flag (SRDMA_CREATE_CQ_TS_*), else 0.
	 */
	__aligned_u64 ts_raw;
	__aligned_u64 ts_real;
	__u32 reserved[2];
};

/*
 * Commands and responses (driver-specific udata of the uverbs commands).
 */

/*
 * Command of ALLOC_UCONTEXT. A process may send less of it, or none: what
 * is missing reads as zero.
 *
 * The doorbell eventfd (SRDMA_ALLOC_UCONTEXT_DOORBELL_FD in comp_mask):
 * doorbell_fd is an eventfd of the process, made for this context alone
 * (neither semaphore mode nor another context's). The kernel watches it
 * from then on: an 8-byte write() to it whose value is the number of one
 * of this context's QPs rings that QP's SQ doorbell, as a POST_SEND command
 * without work requests does, at a fraction of the cost of a uverbs
 * command. The kernel takes the value back from the counter at each
 * write (in semaphore mode only 1, which names no QP), so the process
 * never reads the eventfd; a value that names no QP of the context is
 * ignored. Unlike the command, the write reports no error: a QP in the
 * error state, or a device that went away, is seen in completions and
 * events. The response's comp_mask says whether the kernel watches the
 * eventfd (SRDMA_ALLOC_UCONTEXT_RESP_DOORBELL_FD); if not, the command is
 * the doorbell.
 *
 * doorbell_fd may instead be a file of the doorbell device,
 * /dev/softrdma_doorbell (SRDMA_DOORBELL_DEV), opened by the process for
 * this context alone: the kernel binds the file to the context, and
 * ioctl(fd, SRDMA_DOORBELL_RING, qpn) rings the SQ doorbell of QP qpn of
 * the context, running the transport inside the call (no wake-up, no
 * work on the way back to user mode: the cheapest doorbell). It returns
 * 0 (also for a QP being destroyed, whose doorbell then does nothing);
 * -1 with errno EINVAL when qpn names no QP of the context or the file
 * was never bound, ENODEV once the context is gone (closed, or its device
 * removed), ENOTTY for another request; a process then falls back to the
 * command. A file bound once
 * cannot be bound again (EBUSY). The device belongs to a module of its
 * own, softrdma_doorbell: an open file holds that module, never
 * softrdma. Without it loaded there is no device, and eventfds serve.
 */
struct srdma_alloc_ucontext_req {
	__u32 comp_mask;		/* SRDMA_ALLOC_UCONTEXT_* */
	__s32 doorbell_fd;
};

#define SRDMA_ALLOC_UCONTEXT_DOORBELL_FD	(1U << 0)

/* Response of ALLOC_UCONTEXT. */
struct srdma_alloc_ucontext_resp {
	__u32 comp_mask;		/* SRDMA_ALLOC_UCONTEXT_RESP_* */
	__u32 max_inline_data;		/* bytes, per send WQE */
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 cqe_size;			/* sizeof(struct srdma_cqe) */
	__u32 reserved;
};

/* Response comp_mask: the kernel watches the command's doorbell_fd. */
#define SRDMA_ALLOC_UCONTEXT_RESP_DOORBELL_FD	(1U << 0)

/* The doorbell device, under /dev, and its one request (argument: qpn). */
#define SRDMA_DOORBELL_DEV			"softrdma_doorbell"
#define SRDMA_DOORBELL_RING			_IO(0xd5, 0x01)

/* Where and how big a ring is, as every create response reports it. */
struct srdma_ring_info {
	__aligned_u64 mmap_offset;	/* pass to mmap() on the context fd */
	__aligned_u64 mmap_length;	/* bytes to map */
	__u32 num_entries;		/* n, a power of two */
	__u32 stride;			/* bytes per entry, a power of two */
};

/*
 * Command of CREATE_CQ (plain or extended). A process may send less of it,
 * or none: what is missing reads as zero. The response's comp_mask says
 * whether the kernel knew the flags (SRDMA_CREATE_CQ_RESP_FLAGS); a kernel
 * that did not know them ignored them.
 */
struct srdma_create_cq_req {
	__u32 comp_mask;		/* none defined: 0 */
	__u32 flags;			/* SRDMA_CREATE_CQ_* */
};

/* Stamp every CQE with the time it was written (struct srdma_cqe). */
#define SRDMA_CREATE_CQ_TS_RAW		(1U << 0)
#define SRDMA_CREATE_CQ_TS_REAL		(1U << 1)

/* Response comp_mask: the command's flags were honoured. */
#define SRDMA_CREATE_CQ_RESP_FLAGS	(1U << 0)

/*
 * Response of CREATE_CQ (plain or extended) and RESIZE_CQ. RESIZE_CQ
 * replaces the CQ's ring: the new one holds the CQEs not yet consumed at
 * the same free-running indices, with prod, cons and notify carried over,
 * so the process keeps its consumer index and maps the new ring in place
 * of the old one. The old ring's mmap offset is gone and the kernel writes
 * the old ring no more. The kernel refuses (EINVAL) a size smaller than the
 * number of CQEs outstanding.
 */
struct srdma_create_cq_resp {
	__u32 comp_mask;
	__u32 reserved;
	struct srdma_ring_info ring;
};

/* Response of CREATE_QP. A ring with num_entries == 0 does not exist. */
struct srdma_create_qp_resp {
	__u32 comp_mask;
	__u32 max_inline_data;		/* bytes accepted in an inline WQE */
	struct srdma_ring_info sq;
	struct srdma_ring_info rq;
};

/* Response of CREATE_SRQ: the SRQ's ring (layout and rules of an RQ). */
struct srdma_create_srq_resp {
	__u32 comp_mask;
	__u32 reserved;
	struct srdma_ring_info ring;
};

/*
 * Response of CREATE_AH: the handle that UD send WQEs give in wr.ud.ah.
 * It names the AH only for QPs of the AH's protection domain.
 */
struct srdma_create_ah_resp {
	__u32 comp_mask;
	__u32 ah;
};

#endif /* SOFTRDMA_ABI_USER_H */
