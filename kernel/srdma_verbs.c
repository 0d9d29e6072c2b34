// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device, port, context and protection domain verbs.
 *
 * What query_device and query_port report is what the driver implements:
 * a capability flag appears here only together with the code behind it.
 */

#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "srdma.h"

/**
 * srdma_init_dev_attrs() - Fill the device attributes once, at creation
 * @sdev: the device being created
 *
 * Context: process context, before registration.
 */
void srdma_init_dev_attrs(struct srdma_dev *sdev)
{
	struct ib_device_attr *a = &sdev->attr;

	memset(a, 0, sizeof(*a));
	a->fw_ver = 0;
	a->sys_image_guid = sdev->ibdev.node_guid;
	a->max_mr_size = SRDMA_MAX_MR_SIZE;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = SRDMA_VENDOR_ID;
	a->vendor_part_id = 0;
	a->hw_ver = SRDMA_HW_REV;
	a->max_qp = SRDMA_MAX_QP;
	a->max_qp_wr = SRDMA_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_MGT_EXTENSIONS |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B;
	a->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
	a->max_send_sge = SRDMA_MAX_SEND_SGE;
	a->max_recv_sge = SRDMA_MAX_RECV_SGE;
	a->max_sge_rd = SRDMA_MAX_SEND_SGE;
	a->max_cq = SRDMA_MAX_CQ;
	a->max_cqe = SRDMA_MAX_CQE;
	a->max_mr = SRDMA_MAX_MR;
	a->max_pd = SRDMA_MAX_PD;
	a->max_mw = SRDMA_MAX_MR;
	a->max_ah = SRDMA_MAX_AH;
	a->max_srq = SRDMA_MAX_SRQ;
	a->max_srq_wr = SRDMA_MAX_QP_WR;
	a->max_srq_sge = SRDMA_MAX_RECV_SGE;
	a->max_mcast_grp = SRDMA_MAX_MCAST_GRP;
	a->max_mcast_qp_attach = SRDMA_MAX_MCAST_QP;
	a->max_total_mcast_qp_attach = SRDMA_MAX_MCAST_GRP * SRDMA_MAX_MCAST_QP;
	a->max_qp_rd_atom = SRDMA_MAX_RD_ATOMIC;
	a->max_qp_init_rd_atom = SRDMA_MAX_RD_ATOMIC;
	a->max_res_rd_atom = SRDMA_MAX_RD_ATOMIC * SRDMA_MAX_QP;
	/* Atomics are atomic among this device's operations (IBTA 9.4.5). */
	a->atomic_cap = IB_ATOMIC_HCA;
	a->masked_atomic_cap = IB_ATOMIC_NONE;
	a->max_fast_reg_page_list_len = SRDMA_MAX_FR_PAGES;
	a->max_pkeys = SRDMA_MAX_PKEYS;
	/*
	 * Completion timestamps (SRDMA_CREATE_CQ_TS_RAW) count ns of
	 * CLOCK_MONOTONIC_RAW: a 1 GHz clock (in kHz) that does not wrap.
	 */
	a->hca_core_clock = 1000000;
	a->timestamp_mask = U64_MAX;
}

/**
 * srdma_update_port() - Recompute port state and MTU from the netdev
 * @sdev: the device
 *
 * Dispatches IB_EVENT_PORT_ACTIVE or IB_EVENT_PORT_ERR when the state
 * changes.
 *
 * Context: RTNL held, or before registration. May be atomic.
 */
void srdma_update_port(struct srdma_dev *sdev)
{
	struct net_device *ndev = sdev->ndev;
	enum ib_port_state state;
	enum ib_mtu mtu;
	struct ib_event ev = {};

	mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));
	WRITE_ONCE(sdev->mtu, mtu ? mtu : IB_MTU_256);

	state = netif_running(ndev) && netif_carrier_ok(ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
	if (state == sdev->port_state)
		return;
	WRITE_ONCE(sdev->port_state, state);

	/* Before registration the port has no listeners yet. */
	if (!ib_device_try_get(&sdev->ibdev))
		return;
	ev.device = &sdev->ibdev;
	ev.element.port_num = 1;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
	ib_device_put(&sdev->ibdev);
}

/**
 * srdma_query_device() - ibv_query_device
 * @ibdev: the device
 * @attr: filled with the device attributes
 * @udata: extended query input; must be empty
 *
 * Context: process context.
 * Return: 0 or -EINVAL on non-empty input.
 */
int srdma_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		       struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	*attr = to_sdev(ibdev)->attr;
	return 0;
}

/**
 * srdma_query_port() - ibv_query_port
 * @ibdev: the device
 * @port: port number, always 1
 * @attr: filled with the port attributes (zeroed by the core)
 *
 * Context: process context.
 * Return: 0.
 */
int srdma_query_port(struct ib_device *ibdev, u32 port,
		     struct ib_port_attr *attr)
{
	struct srdma_dev *sdev = to_sdev(ibdev);
	enum ib_port_state state = READ_ONCE(sdev->port_state);
	u16 speed;
	u8 width;
	int err;

	attr->state = state;
	attr->phys_state = state == IB_PORT_ACTIVE ? IB_PORT_PHYS_STATE_LINK_UP :
						     IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = READ_ONCE(sdev->mtu);
	attr->gid_tbl_len = SRDMA_GID_TBL_LEN;
	attr->port_cap_flags = 0;
	attr->max_msg_sz = 1U << 31;
	/* PortInfo's P_Key and Q_Key violation counters stop at 0xFFFF. */
	attr->bad_pkey_cntr = min_t(u64, U16_MAX,
				    srdma_counter_read(sdev, SRDMA_CNT_RX_DROP_PKEY));
	attr->qkey_viol_cntr = min_t(u64, U16_MAX,
				     srdma_counter_read(sdev, SRDMA_CNT_RX_DROP_QKEY));
	attr->pkey_tbl_len = SRDMA_MAX_PKEYS;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;

	err = ib_get_eth_speed(ibdev, port, &speed, &width);
	if (err) {
		speed = IB_SPEED_SDR;
		width = IB_WIDTH_1X;
	}
	attr->active_speed = speed;
	attr->active_width = width;
	return 0;
}

/**
 * srdma_get_port_immutable() - Port properties fixed for the device's life
 * @ibdev: the device
 * @port: port number
 * @immutable: filled in
 *
 * Context: process context, during registration.
 * Return: 0.
 */
int srdma_get_port_immutable(struct ib_device *ibdev, u32 port,
			     struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = SRDMA_MAX_PKEYS;
	immutable->gid_tbl_len = SRDMA_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/**
 * srdma_get_link_layer() - Link layer of a port
 * @ibdev: the device
 * @port: port number
 *
 * Return: IB_LINK_LAYER_ETHERNET.
 */
enum rdma_link_layer srdma_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/**
 * srdma_query_pkey() - P_Key table lookup
 * @ibdev: the device
 * @port: port number
 * @index: table index, only 0 exists
 * @pkey: filled with the default P_Key
 *
 * Return: 0 or -EINVAL for an index past the table.
 */
int srdma_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= SRDMA_MAX_PKEYS)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/**
 * srdma_get_dev_fw_str() - Firmware version string (the driver's ABI)
 * @ibdev: the device
 * @str: IB_FW_VERSION_NAME_MAX bytes
 */
void srdma_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.0.0",
		 SRDMA_UVERBS_ABI_VERSION);
}

/**
 * srdma_udata_cmd() - Copy in a process's driver command
 * @udata: the command's udata; NULL for an in-kernel caller
 * @cmd: the command, zeroed by the caller: what the process leaves out
 *	(a shorter command from an older provider, or none) reads as zero
 * @size: sizeof(*@cmd)
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP for non-zero bytes past what this kernel knows;
 * -EFAULT.
 */
int srdma_udata_cmd(struct ib_udata *udata, void *cmd, size_t size)
{
	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen > size &&
	    !ib_is_udata_cleared(udata, size, udata->inlen - size))
		return -EOPNOTSUPP;
	return ib_copy_from_udata(cmd, udata, min(size, udata->inlen));
}

/**
 * srdma_alloc_ucontext() - Open a device context for a process
 * @ibuc: the core's context
 * @udata: may carry struct srdma_alloc_ucontext_req; carries struct
 *	srdma_alloc_ucontext_resp back
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP for a request this kernel does not know;
 * -EBADF, -EINVAL or -EBUSY for a doorbell file or eventfd it cannot take
 * (srdma_udb_attach()); -EFAULT.
 */
int srdma_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct srdma_ucontext *uc = to_suc(ibuc);
	struct srdma_alloc_ucontext_req cmd = {};
	struct srdma_alloc_ucontext_resp resp = {
		.max_inline_data = SRDMA_MAX_INLINE,
		.max_send_sge = SRDMA_MAX_SEND_SGE,
		.max_recv_sge = SRDMA_MAX_RECV_SGE,
		.cqe_size = sizeof(struct srdma_cqe),
	};
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	err = srdma_udata_cmd(udata, &cmd, sizeof(cmd));
	if (err)
		return err;
	if (cmd.comp_mask & ~SRDMA_ALLOC_UCONTEXT_DOORBELL_FD)
		return -EOPNOTSUPP;
	if (cmd.comp_mask & SRDMA_ALLOC_UCONTEXT_DOORBELL_FD) {
		err = srdma_udb_attach(uc, cmd.doorbell_fd);
		if (err)
			return err;
		resp.comp_mask |= SRDMA_ALLOC_UCONTEXT_RESP_DOORBELL_FD;
	}
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err)
		srdma_udb_detach(uc);
	return err;
}

/**
 * srdma_dealloc_ucontext() - Close a process's context
 * @ibuc: the core's context; the core has destroyed its objects
 *
 * Context: process context.
 */
void srdma_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	srdma_udb_detach(to_suc(ibuc));
}

/**
 * srdma_disassociate_ucontext() - The device goes away under a process
 * @ibuc: the context; the core has destroyed its objects already
 *
 * With this op the core unregisters a device without waiting for the
 * processes that use it: their objects are destroyed and their commands
 * fail. Nothing is left to do here: the rings still mapped into the
 * process are vmalloc pages with a reference from each mapping, freed
 * when the process unmaps them, and the kernel no longer reads them.
 *
 * Context: process context.
 */
void srdma_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/**
 * srdma_alloc_pd() - Allocate a protection domain
 * @ibpd: the core's PD
 * @udata: user data, unused
 *
 * Context: process context.
 * Return: 0 or -ENOMEM past the device's PD limit.
 */
int srdma_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct srdma_dev *sdev = to_sdev(ibpd->device);

	if (atomic_inc_return(&sdev->pd_cnt) > sdev->attr.max_pd) {
		atomic_dec(&sdev->pd_cnt);
		return -ENOMEM;
	}
	return 0;
}

/**
 * srdma_dealloc_pd() - Free a protection domain
 * @ibpd: the core's PD, with no object left in it
 * @udata: user data, unused
 *
 * Return: 0.
 */
int srdma_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->pd_cnt);
	return 0;
}
