// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsoftrdma posting fast path, second form: the ibv_wr_* API of a QP
 * created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS.
 *
 * A batch runs from ibv_wr_start(), which takes the SQ lock, to
 * ibv_wr_complete() or ibv_wr_abort(), which release it. Each builder
 * (ibv_wr_send(), ibv_wr_rdma_write(), ...) writes the header of a WQE
 * into the next free slot of the SQ ring and each setter its data, with
 * the code ibv_post_send() uses (qp.c), so the ring holds the same WQEs
 * whichever API posted them. Nothing is visible to the kernel until
 * ibv_wr_complete() store-releases the producer index; it rings the
 * doorbell under the same rule as ibv_post_send() (srdma_sq_publish()).
 *
 * The builders and setters return nothing: the first error of a batch (a
 * full SQ, an opcode or size the QP cannot take, a setter without a
 * builder) is kept, later calls do nothing, and ibv_wr_complete() returns
 * it without publishing any WQE of the batch.
 */
#include <errno.h>

#include "softrdma.h"

/* Every operation the builders below post (RC; UD: SRDMA_WR_UD_OPS). */
#define SRDMA_WR_SEND_OPS						\
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |	\
	 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |	\
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |				\
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_BIND_MW |	\
	 IBV_QP_EX_WITH_LOCAL_INV)

/* What a UC QP can post. */
#define SRDMA_WR_UC_OPS							\
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |		\
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |	\
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV)
/* What a UD QP can post. */
#define SRDMA_WR_UD_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)

/* Keep the first error of the batch; the WQE being built is dropped. */
static void srdma_wr_fail(struct srdma_wr_batch *b, int err)
{
	if (!err)
		return;
	if (!b->err)
		b->err = err;
	b->cur = NULL;
}

/*
 * Start the next WQE of the batch: @wr carries the opcode and its fields,
 * wr_id and the flags come from the QP.
 */
static void srdma_wr_begin(struct ibv_qp_ex *ibqp, struct ibv_send_wr *wr)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);
	struct srdma_wr_batch *b = &qp->wr;
	struct srdma_uring *r = &qp->sq.map.ring;
	struct srdma_send_wqe *w;

	b->cur = NULL;
	if (b->err)
		return;
	if (b->n == b->space) {
		srdma_wr_fail(b, ENOMEM);
		return;
	}
	wr->wr_id = ibqp->wr_id;
	wr->send_flags = ibqp->wr_flags;
	w = srdma_uring_entry(r, r->own + b->n);
	srdma_wr_fail(b, srdma_wqe_init(qp, w, wr));
	if (b->err)
		return;
	b->cur = w;
	b->n++;
}

static void srdma_wr_start(struct ibv_qp_ex *ibqp)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);

	pthread_spin_lock(&qp->sq.lock);
	qp->wr.n = 0;
	qp->wr.cur = NULL;
	/* Before RTS every WR of the batch fails: ibv_wr_complete() says so. */
	qp->wr.err = srdma_qp_sq_open(&ibqp->qp_base, &qp->sq.map.ring) ?
		     0 : EINVAL;
	qp->wr.space = srdma_uring_space(&qp->sq.map.ring);
}

static int srdma_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);
	int err = qp->wr.err;
	bool ring_db = false;

	if (!err && qp->wr.n)
		ring_db = srdma_sq_publish(&qp->sq, qp->wr.n);
	qp->wr.n = 0;
	qp->wr.cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
	if (ring_db)
		err = srdma_doorbell(&qp->vqp.qp, true);
	return err;
}

static void srdma_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);

	/* The slots written are beyond the producer index: just forget them. */
	qp->wr.n = 0;
	qp->wr.cur = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

/* ---- Builders ---- */

static void srdma_wr_send(struct ibv_qp_ex *ibqp)
{
	struct ibv_send_wr wr = { .opcode = IBV_WR_SEND };

	srdma_wr_begin(ibqp, &wr);
}

static void srdma_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND_WITH_IMM,
		.imm_data = imm_data,
	};

	srdma_wr_begin(ibqp, &wr);
}

static void srdma_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_SEND_WITH_INV,
		.invalidate_rkey = invalidate_rkey,
	};

	srdma_wr_begin(ibqp, &wr);
}

/*
 * Local operations, executed in order on the SQ; they carry no data, so no
 * setter may follow them. A bind is of a type 2 window (ibv_wr_post(3)),
 * with the window's new R_Key; mw->rkey is left to the caller.
 */
static void srdma_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw, .rkey = rkey, .bind_info = *bind_info },
	};

	if (mw && mw->type != IBV_MW_TYPE_2) {
		srdma_wr_fail(&qp->wr, EINVAL);
		return;
	}
	srdma_wr_begin(ibqp, &wr);
	qp->wr.cur = NULL;
}

static void srdma_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = invalidate_rkey,
	};

	srdma_wr_begin(ibqp, &wr);
	to_sqp_ex(ibqp)->wr.cur = NULL;
}

static void srdma_wr_rdma(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
			  uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct ibv_send_wr wr = {
		.opcode = op,
		.imm_data = imm_data,
		.wr.rdma = { .remote_addr = remote_addr, .rkey = rkey },
	};

	srdma_wr_begin(ibqp, &wr);
}

static void srdma_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t remote_addr)
{
	srdma_wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void srdma_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	srdma_wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		      imm_data);
}

static void srdma_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t remote_addr)
{
	srdma_wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void srdma_wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode op,
			    uint32_t rkey, uint64_t remote_addr,
			    uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr wr = {
		.opcode = op,
		.wr.atomic = {
			.remote_addr = remote_addr,
			.compare_add = compare_add,
			.swap = swap,
			.rkey = rkey,
		},
	};

	srdma_wr_begin(ibqp, &wr);
}

static void srdma_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	srdma_wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
			compare, swap);
}

static void srdma_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	srdma_wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
			add, 0);
}

/* ---- Data setters: complete the WQE the last builder started ---- */

/* The WQE a setter completes, or NULL (the batch has failed). */
static struct srdma_send_wqe *srdma_wr_cur(struct srdma_qp *qp)
{
	if (!qp->wr.cur)
		srdma_wr_fail(&qp->wr, EINVAL);	/* no builder before it */
	return qp->wr.cur;
}

static void srdma_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);
	struct srdma_send_wqe *w = srdma_wr_cur(qp);

	if (w)
		srdma_wr_fail(&qp->wr,
			      srdma_wqe_set_sge(qp, w, sg_list, num_sge));
}

static void srdma_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	srdma_wr_set_sge_list(ibqp, 1, &sge);
}

static void srdma_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					  size_t num_buf,
					  const struct ibv_data_buf *buf_list)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);
	struct srdma_send_wqe *w = srdma_wr_cur(qp);
	size_t i;
	int err;

	if (!w)
		return;
	/* The data replaces whatever an earlier setter gave. */
	w->flags &= ~SRDMA_WQE_INLINE;
	err = srdma_wqe_add_inline(qp, w, NULL, 0);
	for (i = 0; !err && i < num_buf; i++)
		err = srdma_wqe_add_inline(qp, w, buf_list[i].addr,
					   buf_list[i].length);
	srdma_wr_fail(&qp->wr, err);
}

static void srdma_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	srdma_wr_set_inline_data_list(ibqp, 1, &buf);
}

/* UD: where the WQE being built goes (ibv_wr_set_ud_addr(3)). */
static void srdma_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct srdma_qp *qp = to_sqp_ex(ibqp);
	struct srdma_send_wqe *w = srdma_wr_cur(qp);

	if (!w)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		srdma_wr_fail(&qp->wr, EINVAL);
		return;
	}
	w->wr.ud.ah = to_sah(ah)->handle;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

/**
 * srdma_wr_check() - Can a QP take the ibv_wr_* API?
 * @type: the QP's type
 * @send_ops_flags: the IBV_QP_EX_WITH_* operations the caller will post
 *
 * Return: 0, or EOPNOTSUPP for a QP type or an operation not implemented:
 * the QP must then not be created (ibv_wr_post(3)).
 */
int srdma_wr_check(enum ibv_qp_type type, uint64_t send_ops_flags)
{
	switch (type) {
	case IBV_QPT_RC:
		break;
	case IBV_QPT_UD:
		if (send_ops_flags & ~(uint64_t)SRDMA_WR_UD_OPS)
			return EOPNOTSUPP;
		break;
	case IBV_QPT_UC:
		if (send_ops_flags & ~(uint64_t)SRDMA_WR_UC_OPS)
			return EOPNOTSUPP;
		break;
	default:
		return EOPNOTSUPP;
	}
	if (send_ops_flags & ~(uint64_t)SRDMA_WR_SEND_OPS)
		return EOPNOTSUPP;
	return 0;
}

/**
 * srdma_qp_init_wr() - Give a QP the ibv_wr_* API
 * @qp: a QP just created, that srdma_wr_check() accepted
 *
 * Makes ibv_qp_to_qp_ex() return the QP's struct ibv_qp_ex. Every builder
 * of SRDMA_WR_SEND_OPS is set, whatever subset was asked for.
 */
void srdma_qp_init_wr(struct srdma_qp *qp)
{
	struct ibv_qp_ex *q = &qp->vqp.qp_ex;

	q->wr_atomic_cmp_swp = srdma_wr_atomic_cmp_swp;
	q->wr_atomic_fetch_add = srdma_wr_atomic_fetch_add;
	q->wr_bind_mw = srdma_wr_bind_mw;
	q->wr_local_inv = srdma_wr_local_inv;
	q->wr_rdma_read = srdma_wr_rdma_read;
	q->wr_rdma_write = srdma_wr_rdma_write;
	q->wr_rdma_write_imm = srdma_wr_rdma_write_imm;
	q->wr_send = srdma_wr_send;
	q->wr_send_imm = srdma_wr_send_imm;
	q->wr_send_inv = srdma_wr_send_inv;
	q->wr_set_inline_data = srdma_wr_set_inline_data;
	q->wr_set_inline_data_list = srdma_wr_set_inline_data_list;
	q->wr_set_sge = srdma_wr_set_sge;
	q->wr_set_sge_list = srdma_wr_set_sge_list;
	q->wr_set_ud_addr = srdma_wr_set_ud_addr;
	q->wr_start = srdma_wr_start;
	q->wr_complete = srdma_wr_complete;
	q->wr_abort = srdma_wr_abort;
	/* After the create command, which clears the mask. */
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
