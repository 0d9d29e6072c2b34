// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsoftrdma glue: device matching, context setup and the ops table.
 *
 * Devices are recognized whatever the user named them: by the modalias of
 * their parent device ("platform:softrdma", the kernel driver's own), or,
 * under a virtio NIC, by the device's hca_type attribute ("softrdma").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "softrdma.h"

DECLARE_DRV_CMD(srdma_get_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		srdma_alloc_ucontext_req, srdma_alloc_ucontext_resp);

static const struct verbs_match_ent srdma_match_table[] = {
	VERBS_MODALIAS_MATCH("platform:softrdma", NULL),
	{},
};

static bool srdma_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char type[16];

	if (sysfs_dev->match)
		return true;
	if (ibv_read_ibdev_sysfs_file(type, sizeof(type), sysfs_dev,
				      "hca_type") <= 0)
		return false;
	type[strcspn(type, "\n")] = '\0';
	return !strcmp(type, "softrdma");
}

static void srdma_free_context(struct ibv_context *ibctx)
{
	struct srdma_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	if (ctx->db_fd >= 0)
		close(ctx->db_fd);
	free(ctx);
}

/* Alphabetical, as the ops structure itself. */
static const struct verbs_context_ops srdma_ctx_ops = {
	.alloc_mw = srdma_alloc_mw,
	.alloc_parent_domain = srdma_alloc_parent_domain,
	.alloc_pd = srdma_alloc_pd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = srdma_bind_mw,
	.create_ah = srdma_create_ah,
	.create_cq = srdma_create_cq,
	.create_cq_ex = srdma_create_cq_ex,
	.create_qp = srdma_create_qp,
	.create_qp_ex = srdma_create_qp_ex,
	.create_srq = srdma_create_srq,
	.dealloc_mw = srdma_dealloc_mw,
	.dealloc_pd = srdma_dealloc_pd,
	.dereg_mr = srdma_dereg_mr,
	.destroy_ah = srdma_destroy_ah,
	.destroy_cq = srdma_destroy_cq,
	.destroy_qp = srdma_destroy_qp,
	.destroy_srq = srdma_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = srdma_free_context,
	.modify_qp = srdma_modify_qp,
	.modify_srq = srdma_modify_srq,
	.poll_cq = srdma_poll_cq,
	.post_recv = srdma_post_recv,
	.post_send = srdma_post_send,
	.post_srq_recv = srdma_post_srq_recv,
	.query_device_ex = srdma_query_device_ex,
	.query_port = srdma_query_port,
	.query_qp = srdma_query_qp,
	.query_rt_values = srdma_query_rt_values,
	.query_srq = srdma_query_srq,
	.reg_mr = srdma_reg_mr,
	.rereg_mr = srdma_rereg_mr,
	.req_notify_cq = srdma_req_notify_cq,
	.resize_cq = srdma_resize_cq,
};

/*
 * The doorbells to offer the kernel, best first: the doorbell file, unless
 * SOFTRDMA_DOORBELL_FILE is 0, and an eventfd; none when
 * SOFTRDMA_EVENTFD_DOORBELL is 0 (the command is the doorbell then, for
 * comparison). Returns -1 when there is nothing (more) to offer.
 */
static int srdma_db_fd_open(bool file)
{
	const char *env = getenv("SOFTRDMA_EVENTFD_DOORBELL");

	if (env && !strcmp(env, "0"))
		return -1;
	if (file) {
		env = getenv("SOFTRDMA_DOORBELL_FILE");
		if (env && !strcmp(env, "0"))
			return -1;
		return open("/dev/" SRDMA_DOORBELL_DEV, O_RDWR | O_CLOEXEC);
	}
	return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

/*
 * GET_CONTEXT, offering the kernel a doorbell file, else an eventfd. A
 * kernel that does not know the offer ignores it; one that cannot take it
 * fails the command, which then goes again with the next offer, and last
 * with none.
 */
static int srdma_get_context(struct srdma_context *ctx,
			     struct srdma_get_context_resp *resp)
{
	struct srdma_get_context cmd = {};
	int i, err;

	for (i = 0; i < 2; i++) {
		ctx->db_ioctl = i == 0;
		ctx->db_fd = srdma_db_fd_open(ctx->db_ioctl);
		if (ctx->db_fd < 0)
			continue;
		cmd.comp_mask = SRDMA_ALLOC_UCONTEXT_DOORBELL_FD;
		cmd.doorbell_fd = ctx->db_fd;
		if (!ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd, sizeof(cmd),
					 &resp->ibv_resp, sizeof(*resp))) {
			if (resp->comp_mask &
			    SRDMA_ALLOC_UCONTEXT_RESP_DOORBELL_FD)
				return 0;
			goto no_db;
		}
		err = errno;
		close(ctx->db_fd);
		ctx->db_fd = -1;
		if (err != EOPNOTSUPP && err != EBADF && err != EINVAL &&
		    err != EBUSY)
			return err;
		memset(&cmd, 0, sizeof(cmd));
	}
	if (ibv_cmd_get_context(&ctx->vctx, &cmd.ibv_cmd, sizeof(cmd),
				&resp->ibv_resp, sizeof(*resp)))
		return errno;
no_db:
	if (ctx->db_fd >= 0)
		close(ctx->db_fd);
	ctx->db_fd = -1;
	return 0;
}

static struct verbs_context *srdma_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd,
						 void *private_data)
{
	struct srdma_get_context_resp resp = {};
	struct srdma_context *ctx;
	int err;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, vctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	err = srdma_get_context(ctx, &resp);
	if (err) {
		errno = err;
		goto err_free;
	}
	if (resp.cqe_size != sizeof(struct srdma_cqe)) {
		verbs_err(&ctx->vctx, "softrdma: kernel CQE size %u, expected %zu\n",
			  resp.cqe_size, sizeof(struct srdma_cqe));
		errno = EPROTO;
		goto err_free;
	}
	ctx->max_inline_data = resp.max_inline_data;
	ctx->max_send_sge = resp.max_send_sge;
	ctx->max_recv_sge = resp.max_recv_sge;
	verbs_set_ops(&ctx->vctx, &srdma_ctx_ops);
	return &ctx->vctx;

err_free:
	err = errno;
	if (ctx->db_fd >= 0)
		close(ctx->db_fd);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
	return NULL;
}

static struct verbs_device *srdma_alloc_device(struct verbs_sysfs_dev *sysfs)
{
	struct srdma_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->vdev;
}

static void srdma_uninit_device(struct verbs_device *vdev)
{
	free(container_of(vdev, struct srdma_device, vdev));
}

static const struct verbs_device_ops srdma_dev_ops = {
	.name = "softrdma",
	.match_min_abi_version = SRDMA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SRDMA_UVERBS_ABI_VERSION,
	.match_table = srdma_match_table,
	.match_device = srdma_match_device,
	.alloc_device = srdma_alloc_device,
	.uninit_device = srdma_uninit_device,
	.alloc_context = srdma_alloc_context,
};

PROVIDER_DRIVER(softrdma, srdma_dev_ops);
