/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Command wrappers of libibverbs' write() interface, private ABI 34.
 *
 * Standalone stand-in for rdma-core's libibverbs/kern-abi.h, which is not
 * installed by distributions.  Only what a small provider needs is declared.
 * The layouts are those of rdma-core releases 34 to 56 (all of which export
 * IBVERBS_PRIVATE_34); they are fixed by the kernel uAPI, so the payload
 * structs come straight from <rdma/ib_user_verbs.h>.
 *
 * Every command struct is the command header followed by the kernel payload:
 *
 *   struct ibv_<cmd> {
 *           struct ib_uverbs_cmd_hdr hdr;        (struct ex_hdr for EX cmds)
 *           union {
 *                   <payload fields, tagless>;   so cmd.field works
 *                   struct ib_uverbs_<cmd> core_payload;
 *           };
 *   };
 *
 * and DECLARE_DRV_CMD() appends a provider's own udata after that, in both
 * directions:
 *
 *   DECLARE_DRV_CMD(srdma_cmd_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
 *                   srdma_create_cq_req, srdma_create_cq_resp);
 *
 *   struct srdma_cmd_create_cq {             passed as &cmd.ibv_cmd
 *           struct ibv_create_cq ibv_cmd;
 *           union { <req fields>; struct srdma_create_cq_req drv_payload; };
 *   };
 *   struct srdma_cmd_create_cq_resp {        passed as &resp.ibv_resp
 *           struct ib_uverbs_create_cq_resp ibv_resp;
 *           union { <resp fields>; struct srdma_create_cq_resp drv_payload; };
 *   };
 *
 * The tagless copies (_STRUCT_<name>) are generated from the uAPI headers
 * into <kernel-abi/NAME.h>, as rdma-core does at build time.  Use "empty"
 * for a direction without provider data.
 */
#ifndef SOFTRDMA_COMPAT_PABI34_KERN_ABI_H
#define SOFTRDMA_COMPAT_PABI34_KERN_ABI_H

#include <assert.h>
#include <linux/types.h>

#include <ccan/container_of.h>
#include <rdma/ib_user_verbs.h>
#include <kernel-abi/ib_user_verbs.h>

/* uverbs ABI versions (sysfs abi_version) libibverbs 34..56 accept. */
#define IB_USER_VERBS_MIN_ABI_VERSION 3
#define IB_USER_VERBS_MAX_ABI_VERSION 6

/* Header of the extended (IB_USER_VERBS_EX_CMD_*) write() commands. */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

/* Payload type for a command direction that carries no provider data. */
struct empty {};
#define _STRUCT_empty struct {}

/* Type names bound to a command enum by DECLARE_CMD*(). */
#define IBV_ABI_REQ(_enum)   _ABI_REQ_STRUCT_##_enum
#define IBV_KABI_REQ(_enum)  _KABI_REQ_STRUCT_##_enum
#define IBV_KABI_RESP(_enum) _KABI_RESP_STRUCT_##_enum
#define IBV_ABI_ALIGN(_enum) _ABI_ALIGN_##_enum

/* Body shared by the plain and extended wrappers. */
#define SRDMA_KABI_CMD_STRUCT(_name, _hdr_type, _kabi)                         \
	struct _name {                                                         \
		_hdr_type hdr;                                                 \
		union {                                                        \
			_STRUCT_##_kabi;                                       \
			struct _kabi core_payload;                             \
		};                                                             \
	}

#define SRDMA_KABI_BIND(_enum, _name, _kabi, _kabi_resp, _align)               \
	typedef struct _name IBV_ABI_REQ(_enum);                               \
	typedef struct _kabi IBV_KABI_REQ(_enum);                              \
	typedef struct _kabi_resp IBV_KABI_RESP(_enum);                        \
	enum { IBV_ABI_ALIGN(_enum) = _align }

/* Plain write() command; the response is _kabi_resp. */
#define DECLARE_CMDX(_enum, _name, _kabi, _kabi_resp)                          \
	SRDMA_KABI_CMD_STRUCT(_name, struct ib_uverbs_cmd_hdr, _kabi);         \
	SRDMA_KABI_BIND(_enum, _name, _kabi, _kabi_resp, 4);                   \
	static_assert(sizeof(struct _name) ==                                  \
		      sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct _kabi), \
		      #_name ": header and payload must be contiguous");       \
	static_assert(sizeof(struct _kabi_resp) % 4 == 0,                      \
		      #_kabi_resp ": length must be whole 32-bit words")

#define DECLARE_CMD(_enum, _name, _kabi)                                       \
	DECLARE_CMDX(_enum, _name, _kabi, _kabi##_resp)

/* Extended write() command (ex_hdr); everything is 8-byte granular. */
#define DECLARE_CMD_EXX(_enum, _name, _kabi, _kabi_resp)                       \
	SRDMA_KABI_CMD_STRUCT(_name, struct ex_hdr, _kabi);                    \
	SRDMA_KABI_BIND(_enum, _name, _kabi, _kabi_resp, 8);                   \
	static_assert(sizeof(struct _name) ==                                  \
		      sizeof(struct ex_hdr) + sizeof(struct _kabi),            \
		      #_name ": header and payload must be contiguous");       \
	static_assert(sizeof(struct _kabi) % 8 == 0,                           \
		      #_kabi ": length must be whole 64-bit words");           \
	static_assert(sizeof(struct _kabi_resp) % 8 == 0,                      \
		      #_kabi_resp ": length must be whole 64-bit words")

#define DECLARE_CMD_EX(_enum, _name, _kabi)                                    \
	DECLARE_CMD_EXX(_enum, _name, _kabi, _kabi##_resp)

/*
 * A provider's command/response pair: the core wrapper (or core response)
 * followed by the provider's udata.  The asserts reject implicit padding
 * between the two parts and at the end, which would make the udata length
 * libibverbs computes differ from what the kernel driver expects.
 */
#define DECLARE_DRV_CMD(_name, _enum, _kabi_req, _kabi_resp)                   \
	struct _name {                                                         \
		IBV_ABI_REQ(_enum) ibv_cmd;                                    \
		union {                                                        \
			_STRUCT_##_kabi_req;                                   \
			struct _kabi_req drv_payload;                          \
		};                                                             \
	};                                                                     \
	struct _name##_resp {                                                  \
		IBV_KABI_RESP(_enum) ibv_resp;                                 \
		union {                                                        \
			_STRUCT_##_kabi_resp;                                  \
			struct _kabi_resp drv_payload;                         \
		};                                                             \
	};                                                                     \
	static_assert(sizeof(IBV_KABI_REQ(_enum)) %                            \
			      __alignof__(struct _kabi_req) == 0,              \
		      #_name ": core request misaligns the udata");            \
	static_assert(sizeof(struct _name) ==                                  \
		      sizeof(IBV_ABI_REQ(_enum)) + sizeof(struct _kabi_req),   \
		      #_name ": padding between core and udata");              \
	static_assert(sizeof(struct _name) % IBV_ABI_ALIGN(_enum) == 0,        \
		      #_name ": request is not word granular");                \
	static_assert(sizeof(IBV_KABI_RESP(_enum)) %                           \
			      __alignof__(struct _kabi_resp) == 0,             \
		      #_name ": core response misaligns the udata");           \
	static_assert(sizeof(struct _name##_resp) ==                           \
		      sizeof(IBV_KABI_RESP(_enum)) + sizeof(struct _kabi_resp), \
		      #_name ": padding between core and udata response");     \
	static_assert(sizeof(struct _name##_resp) % IBV_ABI_ALIGN(_enum) == 0, \
		      #_name ": response is not word granular")

/* Plain commands (name, kernel payload, kernel response). */
DECLARE_CMD(IB_USER_VERBS_CMD_ALLOC_MW, ibv_alloc_mw, ib_uverbs_alloc_mw);
DECLARE_CMD(IB_USER_VERBS_CMD_ALLOC_PD, ibv_alloc_pd, ib_uverbs_alloc_pd);
DECLARE_CMDX(IB_USER_VERBS_CMD_ATTACH_MCAST, ibv_attach_mcast,
	     ib_uverbs_attach_mcast, empty);
DECLARE_CMDX(IB_USER_VERBS_CMD_CLOSE_XRCD, ibv_close_xrcd,
	     ib_uverbs_close_xrcd, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_AH, ibv_create_ah, ib_uverbs_create_ah);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL, ibv_create_comp_channel,
	    ib_uverbs_create_comp_channel);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_CQ, ibv_create_cq, ib_uverbs_create_cq);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_QP, ibv_create_qp, ib_uverbs_create_qp);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_SRQ, ibv_create_srq,
	    ib_uverbs_create_srq);
DECLARE_CMDX(IB_USER_VERBS_CMD_CREATE_XSRQ, ibv_create_xsrq,
	     ib_uverbs_create_xsrq, ib_uverbs_create_srq_resp);
DECLARE_CMDX(IB_USER_VERBS_CMD_DEALLOC_MW, ibv_dealloc_mw,
	     ib_uverbs_dealloc_mw, empty);
DECLARE_CMDX(IB_USER_VERBS_CMD_DEALLOC_PD, ibv_dealloc_pd,
	     ib_uverbs_dealloc_pd, empty);
DECLARE_CMDX(IB_USER_VERBS_CMD_DEREG_MR, ibv_dereg_mr, ib_uverbs_dereg_mr,
	     empty);
DECLARE_CMDX(IB_USER_VERBS_CMD_DESTROY_AH, ibv_destroy_ah,
	     ib_uverbs_destroy_ah, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_DESTROY_CQ, ibv_destroy_cq,
	    ib_uverbs_destroy_cq);
DECLARE_CMD(IB_USER_VERBS_CMD_DESTROY_QP, ibv_destroy_qp,
	    ib_uverbs_destroy_qp);
DECLARE_CMD(IB_USER_VERBS_CMD_DESTROY_SRQ, ibv_destroy_srq,
	    ib_uverbs_destroy_srq);
DECLARE_CMDX(IB_USER_VERBS_CMD_DETACH_MCAST, ibv_detach_mcast,
	     ib_uverbs_detach_mcast, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_GET_CONTEXT, ibv_get_context,
	    ib_uverbs_get_context);
DECLARE_CMDX(IB_USER_VERBS_CMD_MODIFY_QP, ibv_modify_qp, ib_uverbs_modify_qp,
	     empty);
DECLARE_CMDX(IB_USER_VERBS_CMD_MODIFY_SRQ, ibv_modify_srq,
	     ib_uverbs_modify_srq, empty);
DECLARE_CMDX(IB_USER_VERBS_CMD_OPEN_QP, ibv_open_qp, ib_uverbs_open_qp,
	     ib_uverbs_create_qp_resp);
DECLARE_CMD(IB_USER_VERBS_CMD_OPEN_XRCD, ibv_open_xrcd, ib_uverbs_open_xrcd);
DECLARE_CMD(IB_USER_VERBS_CMD_POLL_CQ, ibv_poll_cq, ib_uverbs_poll_cq);
DECLARE_CMD(IB_USER_VERBS_CMD_POST_RECV, ibv_post_recv, ib_uverbs_post_recv);
DECLARE_CMD(IB_USER_VERBS_CMD_POST_SEND, ibv_post_send, ib_uverbs_post_send);
DECLARE_CMD(IB_USER_VERBS_CMD_POST_SRQ_RECV, ibv_post_srq_recv,
	    ib_uverbs_post_srq_recv);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_DEVICE, ibv_query_device,
	    ib_uverbs_query_device);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_PORT, ibv_query_port,
	    ib_uverbs_query_port);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_QP, ibv_query_qp, ib_uverbs_query_qp);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_SRQ, ibv_query_srq, ib_uverbs_query_srq);
DECLARE_CMD(IB_USER_VERBS_CMD_REG_MR, ibv_reg_mr, ib_uverbs_reg_mr);
DECLARE_CMDX(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, ibv_req_notify_cq,
	     ib_uverbs_req_notify_cq, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_REREG_MR, ibv_rereg_mr, ib_uverbs_rereg_mr);
DECLARE_CMD(IB_USER_VERBS_CMD_RESIZE_CQ, ibv_resize_cq, ib_uverbs_resize_cq);

/* Extended commands. */
DECLARE_CMD_EX(IB_USER_VERBS_EX_CMD_CREATE_CQ, ibv_create_cq_ex,
	       ib_uverbs_ex_create_cq);
DECLARE_CMD_EX(IB_USER_VERBS_EX_CMD_CREATE_QP, ibv_create_qp_ex,
	       ib_uverbs_ex_create_qp);
DECLARE_CMD_EXX(IB_USER_VERBS_EX_CMD_MODIFY_CQ, ibv_modify_cq,
		ib_uverbs_ex_modify_cq, empty);
DECLARE_CMD_EX(IB_USER_VERBS_EX_CMD_MODIFY_QP, ibv_modify_qp_ex,
	       ib_uverbs_ex_modify_qp);
DECLARE_CMD_EX(IB_USER_VERBS_EX_CMD_QUERY_DEVICE, ibv_query_device_ex,
	       ib_uverbs_ex_query_device);

#endif /* SOFTRDMA_COMPAT_PABI34_KERN_ABI_H */
