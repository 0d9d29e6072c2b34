// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsoftrdma completion fast path: polling and arming read and write the
 * mapped CQ ring only, never the kernel.
 */
#include <string.h>

#include "softrdma.h"

static void srdma_cqe_to_wc(const struct srdma_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
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
	int n = 0;

	pthread_spin_lock(&cq->lock);
	while (n < ne && (cqe = srdma_uring_cons_peek(ring))) {
		srdma_cqe_to_wc(cqe, &wc[n]);
		/* Every entry is read before its slot goes back (release). */
		srdma_uring_consume(ring, 1);
		n++;
	}
	pthread_spin_unlock(&cq->lock);
	/* An overflowed CQ reports its error once it has been drained. */
	if (!n && srdma_uring_error(ring))
		return -1;
	return n;
}

int srdma_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct srdma_cq *cq = to_scq(ibcq);

	srdma_uring_arm(&cq->map.ring, solicited_only);
	return 0;
}
