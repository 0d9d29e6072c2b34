// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsoftrdma completion fast path: polling and arming read and write the
 * mapped CQ ring only, never the kernel.
 *
 * Two ways to poll the same ring: ibv_poll_cq(), and the extended batch of
 * ibv_start_poll(), ibv_next_poll() and ibv_end_poll() with the
 * ibv_wc_read_*() accessors. A batch holds the CQ lock from start_poll to
 * end_poll (start_poll releases it again when it returns an error, ENOENT
 * included, since end_poll is then not called); the CQE it stands on stays
 * in the ring, read in place, until next_poll or end_poll hands its slot
 * back to the kernel.
 */
#include <errno.h>
#include <string.h>

#include "softrdma.h"

/* Empty, and no completion will ever come: the CQ is in the error state. */
static bool srdma_cq_failed(const struct srdma_cq *cq)
{
	return srdma_uring_error(&cq->map.ring) || cq->lost;
}

static void srdma_cqe_to_wc(const struct srdma_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	/* Same bits as invalidated_rkey, the other member of both unions. */
	wc->imm_data = cqe->ex.imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
}

int srdma_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_uring *ring = &cq->map.ring;
	const struct srdma_cqe *cqe;
	bool failed = false;
	int n = 0;

	srdma_cq_lock(cq);
	while (n < ne && (cqe = srdma_uring_cons_peek(ring))) {
		srdma_cqe_to_wc(cqe, &wc[n]);
		/* Every entry is read before its slot goes back (release). */
		srdma_uring_consume(ring, 1);
		n++;
	}
	/* An overflowed CQ reports its error once it has been drained. */
	if (!n)
		failed = srdma_cq_failed(cq);
	srdma_cq_unlock(cq);
	return failed ? -1 : n;
}

/**
 * srdma_cq_clean() - Drop the completions of a QP that went to RESET
 * @ibcq: a CQ of the QP
 * @qpn: the QP's number
 * @keep_recv: keep its receive completions (the QP has an SRQ: they hand
 *	back the SRQ's buffers)
 *
 * The entries the kernel has published are compacted toward the producer,
 * the newest first, and the consumer index skips the freed slots: the
 * kernel writes only past the producer index, into slots the consumer
 * index has released. The entry an extended poll stands on (cq->cur, a
 * single-threaded CQ reset from within its batch) stays where it is.
 */
void srdma_cq_clean(struct ibv_cq *ibcq, uint32_t qpn, bool keep_recv)
{
	struct srdma_cq *cq = to_scq(ibcq);
	struct srdma_uring *r = &cq->map.ring;
	uint32_t prod, idx, first, nfreed = 0;
	struct srdma_cqe *cqe;

	srdma_cq_lock(cq);
	prod = srdma_load_acquire(&r->ctrl->prod);
	first = r->own + (cq->cur ? 1 : 0);
	/* A corrupt index from the kernel's side: leave the ring alone. */
	if (prod - r->own > r->num || prod == r->own) {
		srdma_cq_unlock(cq);
		return;
	}
	for (idx = prod; idx != first; ) {
		cqe = srdma_uring_entry(r, --idx);
		if (cqe->qp_num == qpn &&
		    !(keep_recv && (cqe->opcode & IBV_WC_RECV)))
			nfreed++;
		else if (nfreed)
			memcpy(srdma_uring_entry(r, idx + nfreed), cqe,
			       r->stride);
	}
	if (!nfreed)
		goto out;
	if (cq->cur) {
		/* The pinned entry moves up with the others, cur with it. */
		memcpy(srdma_uring_entry(r, r->own + nfreed),
		       srdma_uring_entry(r, r->own), r->stride);
		cq->cur = srdma_uring_entry(r, r->own + nfreed);
	}
	srdma_uring_consume(r, nfreed);
out:
	srdma_cq_unlock(cq);
}

int srdma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct srdma_cq *cq = to_scq(ibcq);

	/* Not cq->lock: a process may arm inside its own polling batch. */
	if (!cq->no_lock)
		pthread_spin_lock(&cq->arm_lock);
	srdma_uring_arm(&cq->map.ring, solicited_only);
	if (!cq->no_lock)
		pthread_spin_unlock(&cq->arm_lock);
	return 0;
}

/* ---- Extended polling ---- */

static void srdma_cq_set_cur(struct srdma_cq *cq, const struct srdma_cqe *cqe)
{
	cq->cur = cqe;
	cq->vcq.cq_ex.wr_id = cqe->wr_id;
	cq->vcq.cq_ex.status = (enum ibv_wc_status)cqe->status;
}

static int srdma_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct srdma_cq *cq = to_scq_ex(ibcq);
	const struct srdma_cqe *cqe;
	int err;

	if (attr->comp_mask)
		return EINVAL;
	srdma_cq_lock(cq);
	cqe = srdma_uring_cons_peek(&cq->map.ring);
	if (!cqe) {
		err = srdma_cq_failed(cq) ? EIO : ENOENT;
		srdma_cq_unlock(cq);
		return err;
	}
	srdma_cq_set_cur(cq, cqe);
	return 0;
}

static int srdma_next_poll(struct ibv_cq_ex *ibcq)
{
	struct srdma_cq *cq = to_scq_ex(ibcq);
	const struct srdma_cqe *cqe;

	/* The current entry has been read: its slot goes back (release). */
	if (cq->cur)
		srdma_uring_consume(&cq->map.ring, 1);
	cq->cur = NULL;
	cqe = srdma_uring_cons_peek(&cq->map.ring);
	if (!cqe)
		return ENOENT;
	srdma_cq_set_cur(cq, cqe);
	return 0;
}

static void srdma_end_poll(struct ibv_cq_ex *ibcq)
{
	struct srdma_cq *cq = to_scq_ex(ibcq);

	if (cq->cur)
		srdma_uring_consume(&cq->map.ring, 1);
	cq->cur = NULL;
	srdma_cq_unlock(cq);
}

static const struct srdma_cqe *srdma_cur(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur;
}

static enum ibv_wc_opcode srdma_wc_read_opcode(struct ibv_cq_ex *ibcq)
{
	return (enum ibv_wc_opcode)srdma_cur(ibcq)->opcode;
}

static uint32_t srdma_wc_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->vendor_err;
}

static uint32_t srdma_wc_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->byte_len;
}

/*
 * The immediate data (network order) or, for IBV_WC_WITH_INV, the
 * invalidated rkey in host order: ibv_wc_read_invalidated_rkey() returns
 * these bits unconverted, as struct ibv_wc's union shares them.
 */
static __be32 srdma_wc_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->ex.imm_data;
}

static uint32_t srdma_wc_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->qp_num;
}

static uint32_t srdma_wc_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->src_qp;
}

static unsigned int srdma_wc_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->wc_flags;
}

/* RoCE has no LIDs. */
static uint32_t srdma_wc_read_slid(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static uint8_t srdma_wc_read_sl(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->sl;
}

static uint8_t srdma_wc_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return 0;
}

/* Written by the kernel only in a CQ created with these wc_flags; else 0. */
static uint64_t srdma_wc_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->ts_raw;
}

static uint64_t srdma_wc_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	return srdma_cur(ibcq)->ts_real;
}

/**
 * srdma_cq_init_ex() - Give a CQ the extended polling functions
 * @cq: a CQ just created
 *
 * Only the fields a CQE holds have an accessor; creation refuses wc_flags
 * asking for others (SRDMA_CQ_WC_FLAGS).
 */
void srdma_cq_init_ex(struct srdma_cq *cq)
{
	struct ibv_cq_ex *c = &cq->vcq.cq_ex;

	c->start_poll = srdma_start_poll;
	c->next_poll = srdma_next_poll;
	c->end_poll = srdma_end_poll;
	c->read_opcode = srdma_wc_read_opcode;
	c->read_vendor_err = srdma_wc_read_vendor_err;
	c->read_byte_len = srdma_wc_read_byte_len;
	c->read_imm_data = srdma_wc_read_imm_data;
	c->read_qp_num = srdma_wc_read_qp_num;
	c->read_src_qp = srdma_wc_read_src_qp;
	c->read_wc_flags = srdma_wc_read_wc_flags;
	c->read_slid = srdma_wc_read_slid;
	c->read_sl = srdma_wc_read_sl;
	c->read_dlid_path_bits = srdma_wc_read_dlid_path_bits;
	c->read_completion_ts = srdma_wc_read_completion_ts;
	c->read_completion_wallclock_ns = srdma_wc_read_completion_wallclock_ns;
}
