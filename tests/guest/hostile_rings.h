/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Test-only access to libsoftrdma's mapped rings (hostile_rings.c). */
#ifndef HOSTILE_RINGS_H
#define HOSTILE_RINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/softrdma-abi.h>

#ifdef __cplusplus
extern "C" {
#endif

struct srdma_ring_ctrl *hostile_sq_ctrl(struct ibv_qp *qp);
struct srdma_ring_ctrl *hostile_rq_ctrl(struct ibv_qp *qp);
struct srdma_ring_ctrl *hostile_cq_ctrl(struct ibv_cq *cq);
void *hostile_sq_slot(struct ibv_qp *qp, uint32_t idx, uint32_t *stride);
void *hostile_rq_slot(struct ibv_qp *qp, uint32_t idx, uint32_t *stride);
void hostile_sq_publish(struct ibv_qp *qp, uint32_t n);
void hostile_rq_publish(struct ibv_qp *qp, uint32_t n);
uint32_t hostile_sq_prod(struct ibv_qp *qp);
uint32_t hostile_rq_prod(struct ibv_qp *qp);
int hostile_sq_doorbell(struct ibv_qp *qp);
int hostile_db_fd(struct ibv_context *ctx);
bool hostile_db_is_file(struct ibv_context *ctx);

#ifdef __cplusplus
}
#endif

#endif /* HOSTILE_RINGS_H */
