// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compile-time checks of the PABI 34 declarations in infiniband/driver.h and
 * infiniband/kern-abi.h.  Compiled into the standalone provider; it emits no
 * code.
 *
 * The numbers are those libibverbs 44.0 uses on x86-64 (read from its
 * machine code, see driver.h).  Structure-relative checks hold on every
 * architecture; absolute offsets are checked on LP64 only, where they were
 * measured.
 */
#include <stddef.h>

#include <infiniband/driver.h>

#define SRDMA_PTR sizeof(void *)

#define SRDMA_SAME_TYPE(a, b)                                                  \
	__builtin_types_compatible_p(__typeof__(a), __typeof__(b))

/* ---- struct verbs_context_ops: 76 pointer slots, alphabetical ---- */

#define SRDMA_OPS_SLOT(member, index)                                          \
	static_assert(offsetof(struct verbs_context_ops, member) ==            \
			      (index) * SRDMA_PTR,                             \
		      "verbs_context_ops." #member " must be slot " #index)

SRDMA_OPS_SLOT(advise_mr, 0);
SRDMA_OPS_SLOT(alloc_dm, 1);
SRDMA_OPS_SLOT(alloc_mw, 2);
SRDMA_OPS_SLOT(alloc_null_mr, 3);
SRDMA_OPS_SLOT(alloc_parent_domain, 4);
SRDMA_OPS_SLOT(alloc_pd, 5);
SRDMA_OPS_SLOT(alloc_td, 6);
SRDMA_OPS_SLOT(async_event, 7);
SRDMA_OPS_SLOT(attach_counters_point_flow, 8);
SRDMA_OPS_SLOT(attach_mcast, 9);
SRDMA_OPS_SLOT(bind_mw, 10);
SRDMA_OPS_SLOT(close_xrcd, 11);
SRDMA_OPS_SLOT(cq_event, 12);
SRDMA_OPS_SLOT(create_ah, 13);
SRDMA_OPS_SLOT(create_counters, 14);
SRDMA_OPS_SLOT(create_cq, 15);
SRDMA_OPS_SLOT(create_cq_ex, 16);
SRDMA_OPS_SLOT(create_flow, 17);
SRDMA_OPS_SLOT(create_flow_action_esp, 18);
SRDMA_OPS_SLOT(create_qp, 19);
SRDMA_OPS_SLOT(create_qp_ex, 20);
SRDMA_OPS_SLOT(create_rwq_ind_table, 21);
SRDMA_OPS_SLOT(create_srq, 22);
SRDMA_OPS_SLOT(create_srq_ex, 23);
SRDMA_OPS_SLOT(create_wq, 24);
SRDMA_OPS_SLOT(dealloc_mw, 25);
SRDMA_OPS_SLOT(dealloc_pd, 26);
SRDMA_OPS_SLOT(dealloc_td, 27);
SRDMA_OPS_SLOT(dereg_mr, 28);
SRDMA_OPS_SLOT(destroy_ah, 29);
SRDMA_OPS_SLOT(destroy_counters, 30);
SRDMA_OPS_SLOT(destroy_cq, 31);
SRDMA_OPS_SLOT(destroy_flow, 32);
SRDMA_OPS_SLOT(destroy_flow_action, 33);
SRDMA_OPS_SLOT(destroy_qp, 34);
SRDMA_OPS_SLOT(destroy_rwq_ind_table, 35);
SRDMA_OPS_SLOT(destroy_srq, 36);
SRDMA_OPS_SLOT(destroy_wq, 37);
SRDMA_OPS_SLOT(detach_mcast, 38);
SRDMA_OPS_SLOT(free_context, 39);
SRDMA_OPS_SLOT(free_dm, 40);
SRDMA_OPS_SLOT(get_srq_num, 41);
SRDMA_OPS_SLOT(import_dm, 42);
SRDMA_OPS_SLOT(import_mr, 43);
SRDMA_OPS_SLOT(import_pd, 44);
SRDMA_OPS_SLOT(modify_cq, 45);
SRDMA_OPS_SLOT(modify_flow_action_esp, 46);
SRDMA_OPS_SLOT(modify_qp, 47);
SRDMA_OPS_SLOT(modify_qp_rate_limit, 48);
SRDMA_OPS_SLOT(modify_srq, 49);
SRDMA_OPS_SLOT(modify_wq, 50);
SRDMA_OPS_SLOT(open_qp, 51);
SRDMA_OPS_SLOT(open_xrcd, 52);
SRDMA_OPS_SLOT(poll_cq, 53);
SRDMA_OPS_SLOT(post_recv, 54);
SRDMA_OPS_SLOT(post_send, 55);
SRDMA_OPS_SLOT(post_srq_ops, 56);
SRDMA_OPS_SLOT(post_srq_recv, 57);
SRDMA_OPS_SLOT(query_device_ex, 58);
SRDMA_OPS_SLOT(query_ece, 59);
SRDMA_OPS_SLOT(query_port, 60);
SRDMA_OPS_SLOT(query_qp, 61);
SRDMA_OPS_SLOT(query_qp_data_in_order, 62);
SRDMA_OPS_SLOT(query_rt_values, 63);
SRDMA_OPS_SLOT(query_srq, 64);
SRDMA_OPS_SLOT(read_counters, 65);
SRDMA_OPS_SLOT(reg_dm_mr, 66);
SRDMA_OPS_SLOT(reg_dmabuf_mr, 67);
SRDMA_OPS_SLOT(reg_mr, 68);
SRDMA_OPS_SLOT(req_notify_cq, 69);
SRDMA_OPS_SLOT(rereg_mr, 70);
SRDMA_OPS_SLOT(resize_cq, 71);
SRDMA_OPS_SLOT(set_ece, 72);
SRDMA_OPS_SLOT(unimport_dm, 73);
SRDMA_OPS_SLOT(unimport_mr, 74);
SRDMA_OPS_SLOT(unimport_pd, 75);

static_assert(sizeof(struct verbs_context_ops) ==
		      SRDMA_COMPAT_VERBS_OPS_SLOTS * SRDMA_PTR,
	      "verbs_context_ops must be exactly 76 pointers");

/*
 * Ops that verbs_set_ops() mirrors into public fields of struct
 * verbs_context or struct ibv_context_ops must have the public field's
 * exact type.
 */
#define SRDMA_OPS_LIKE_VCTX(member, field)                                     \
	static_assert(SRDMA_SAME_TYPE(((struct verbs_context_ops *)0)->member, \
				      ((struct verbs_context *)0)->field),     \
		      "verbs_context_ops." #member " != verbs_context." #field)
#define SRDMA_OPS_LIKE_CTX(member)                                             \
	static_assert(SRDMA_SAME_TYPE(((struct verbs_context_ops *)0)->member, \
				      ((struct ibv_context_ops *)0)->member),  \
		      "verbs_context_ops." #member " != ibv_context_ops." #member)

SRDMA_OPS_LIKE_VCTX(advise_mr, advise_mr);
SRDMA_OPS_LIKE_VCTX(alloc_dm, alloc_dm);
SRDMA_OPS_LIKE_VCTX(alloc_null_mr, alloc_null_mr);
SRDMA_OPS_LIKE_VCTX(alloc_parent_domain, alloc_parent_domain);
SRDMA_OPS_LIKE_VCTX(alloc_td, alloc_td);
SRDMA_OPS_LIKE_VCTX(attach_counters_point_flow, attach_counters_point_flow);
SRDMA_OPS_LIKE_VCTX(close_xrcd, close_xrcd);
SRDMA_OPS_LIKE_VCTX(create_counters, create_counters);
SRDMA_OPS_LIKE_VCTX(create_cq_ex, create_cq_ex);
SRDMA_OPS_LIKE_VCTX(create_flow, ibv_create_flow);
SRDMA_OPS_LIKE_VCTX(create_flow_action_esp, create_flow_action_esp);
SRDMA_OPS_LIKE_VCTX(create_qp_ex, create_qp_ex);
SRDMA_OPS_LIKE_VCTX(create_rwq_ind_table, create_rwq_ind_table);
SRDMA_OPS_LIKE_VCTX(create_srq_ex, create_srq_ex);
SRDMA_OPS_LIKE_VCTX(create_wq, create_wq);
SRDMA_OPS_LIKE_VCTX(dealloc_td, dealloc_td);
SRDMA_OPS_LIKE_VCTX(destroy_counters, destroy_counters);
SRDMA_OPS_LIKE_VCTX(destroy_flow, ibv_destroy_flow);
SRDMA_OPS_LIKE_VCTX(destroy_flow_action, destroy_flow_action);
SRDMA_OPS_LIKE_VCTX(destroy_rwq_ind_table, destroy_rwq_ind_table);
SRDMA_OPS_LIKE_VCTX(destroy_wq, destroy_wq);
SRDMA_OPS_LIKE_VCTX(free_dm, free_dm);
SRDMA_OPS_LIKE_VCTX(get_srq_num, get_srq_num);
SRDMA_OPS_LIKE_VCTX(modify_cq, modify_cq);
SRDMA_OPS_LIKE_VCTX(modify_flow_action_esp, modify_flow_action_esp);
SRDMA_OPS_LIKE_VCTX(modify_qp_rate_limit, modify_qp_rate_limit);
SRDMA_OPS_LIKE_VCTX(modify_wq, modify_wq);
SRDMA_OPS_LIKE_VCTX(open_qp, open_qp);
SRDMA_OPS_LIKE_VCTX(open_xrcd, open_xrcd);
SRDMA_OPS_LIKE_VCTX(post_srq_ops, post_srq_ops);
SRDMA_OPS_LIKE_VCTX(query_device_ex, query_device_ex);
SRDMA_OPS_LIKE_VCTX(query_rt_values, query_rt_values);
SRDMA_OPS_LIKE_VCTX(read_counters, read_counters);
SRDMA_OPS_LIKE_VCTX(reg_dm_mr, reg_dm_mr);

SRDMA_OPS_LIKE_CTX(alloc_mw);
SRDMA_OPS_LIKE_CTX(bind_mw);
SRDMA_OPS_LIKE_CTX(dealloc_mw);
SRDMA_OPS_LIKE_CTX(poll_cq);
SRDMA_OPS_LIKE_CTX(post_recv);
SRDMA_OPS_LIKE_CTX(post_send);
SRDMA_OPS_LIKE_CTX(post_srq_recv);
SRDMA_OPS_LIKE_CTX(req_notify_cq);

/* ---- public verbs.h assumptions the private structs build on ---- */

static_assert(IBV_SYSFS_NAME_MAX == 64 && IBV_SYSFS_PATH_MAX == 256,
	      "verbs_sysfs_dev array sizes follow verbs.h");
static_assert(offsetof(struct verbs_context, context) +
			      sizeof(struct ibv_context) ==
		      sizeof(struct verbs_context),
	      "struct ibv_context must end struct verbs_context");
static_assert(offsetof(struct verbs_context, sz) + sizeof(size_t) ==
		      offsetof(struct verbs_context, context),
	      "verbs_context.sz must sit just before the ibv_context");
static_assert(offsetof(struct verbs_device, device) == 0,
	      "struct ibv_device must start struct verbs_device");
static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0,
	      "struct ibv_qp must start struct ibv_qp_ex");
static_assert(offsetof(struct verbs_qp, qp) == 0 &&
		      offsetof(struct verbs_qp, qp_ex) == 0,
	      "verbs_qp union must start the struct");
static_assert(offsetof(struct verbs_cq, cq) == 0 &&
		      offsetof(struct verbs_cq, cq_ex) == 0,
	      "verbs_cq union must start the struct");
static_assert(offsetof(struct ibv_cq_ex, context) ==
			      offsetof(struct ibv_cq, context) &&
		      offsetof(struct ibv_cq_ex, handle) ==
			      offsetof(struct ibv_cq, handle) &&
		      offsetof(struct ibv_cq_ex, cqe) ==
			      offsetof(struct ibv_cq, cqe) &&
		      offsetof(struct ibv_cq_ex, comp_events_completed) ==
			      offsetof(struct ibv_cq, comp_events_completed),
	      "ibv_cq_ex must begin like ibv_cq");
static_assert(offsetof(struct verbs_mr, ibv_mr) == 0 &&
		      offsetof(struct verbs_srq, srq) == 0 &&
		      offsetof(struct verbs_xrcd, xrcd) == 0,
	      "public object must start each verbs_* wrapper");

/* ---- command wrappers: header + kernel payload, nothing else ---- */

#define SRDMA_CMD_IS(name, hdr, kabi)                                          \
	static_assert(sizeof(struct name) ==                                   \
			      sizeof(struct hdr) + sizeof(struct kabi) &&      \
		      offsetof(struct name, core_payload) == sizeof(struct hdr), \
		      #name " is not " #hdr " + " #kabi)

SRDMA_CMD_IS(ibv_get_context, ib_uverbs_cmd_hdr, ib_uverbs_get_context);
SRDMA_CMD_IS(ibv_query_port, ib_uverbs_cmd_hdr, ib_uverbs_query_port);
SRDMA_CMD_IS(ibv_alloc_pd, ib_uverbs_cmd_hdr, ib_uverbs_alloc_pd);
SRDMA_CMD_IS(ibv_open_xrcd, ib_uverbs_cmd_hdr, ib_uverbs_open_xrcd);
SRDMA_CMD_IS(ibv_reg_mr, ib_uverbs_cmd_hdr, ib_uverbs_reg_mr);
SRDMA_CMD_IS(ibv_rereg_mr, ib_uverbs_cmd_hdr, ib_uverbs_rereg_mr);
SRDMA_CMD_IS(ibv_alloc_mw, ib_uverbs_cmd_hdr, ib_uverbs_alloc_mw);
SRDMA_CMD_IS(ibv_create_cq, ib_uverbs_cmd_hdr, ib_uverbs_create_cq);
SRDMA_CMD_IS(ibv_resize_cq, ib_uverbs_cmd_hdr, ib_uverbs_resize_cq);
SRDMA_CMD_IS(ibv_create_srq, ib_uverbs_cmd_hdr, ib_uverbs_create_srq);
SRDMA_CMD_IS(ibv_create_xsrq, ib_uverbs_cmd_hdr, ib_uverbs_create_xsrq);
SRDMA_CMD_IS(ibv_modify_srq, ib_uverbs_cmd_hdr, ib_uverbs_modify_srq);
SRDMA_CMD_IS(ibv_query_srq, ib_uverbs_cmd_hdr, ib_uverbs_query_srq);
SRDMA_CMD_IS(ibv_create_qp, ib_uverbs_cmd_hdr, ib_uverbs_create_qp);
SRDMA_CMD_IS(ibv_open_qp, ib_uverbs_cmd_hdr, ib_uverbs_open_qp);
SRDMA_CMD_IS(ibv_query_qp, ib_uverbs_cmd_hdr, ib_uverbs_query_qp);
SRDMA_CMD_IS(ibv_modify_qp, ib_uverbs_cmd_hdr, ib_uverbs_modify_qp);
SRDMA_CMD_IS(ibv_post_send, ib_uverbs_cmd_hdr, ib_uverbs_post_send);
SRDMA_CMD_IS(ibv_create_ah, ib_uverbs_cmd_hdr, ib_uverbs_create_ah);
SRDMA_CMD_IS(ibv_create_cq_ex, ex_hdr, ib_uverbs_ex_create_cq);
SRDMA_CMD_IS(ibv_create_qp_ex, ex_hdr, ib_uverbs_ex_create_qp);
SRDMA_CMD_IS(ibv_modify_qp_ex, ex_hdr, ib_uverbs_ex_modify_qp);
SRDMA_CMD_IS(ibv_modify_cq, ex_hdr, ib_uverbs_ex_modify_cq);
SRDMA_CMD_IS(ibv_query_device_ex, ex_hdr, ib_uverbs_ex_query_device);

static_assert(sizeof(struct ib_uverbs_cmd_hdr) == 8 &&
		      sizeof(struct ex_hdr) == 24,
	      "uverbs command headers are 8 and 8 + 16 bytes");
/* Fixed by the kernel uAPI; a change means a broken header. */
static_assert(sizeof(struct ibv_get_context) == 16 &&
		      sizeof(struct ibv_alloc_pd) == 16 &&
		      sizeof(struct ibv_create_cq) == 40 &&
		      sizeof(struct ibv_create_srq) == 40 &&
		      sizeof(struct ibv_reg_mr) == 48 &&
		      sizeof(struct ibv_create_qp) == 64 &&
		      sizeof(struct ibv_post_send) == 32 &&
		      sizeof(struct ibv_create_cq_ex) == 56 &&
		      sizeof(struct ibv_create_qp_ex) == 88,
	      "uverbs command sizes differ from the kernel uAPI");

/* The tagless copy must alias the named payload field by field. */
static_assert(offsetof(struct ibv_create_cq, user_handle) ==
			      offsetof(struct ibv_create_cq, core_payload) +
				      offsetof(struct ib_uverbs_create_cq,
					       user_handle) &&
		      offsetof(struct ibv_post_send, wr_count) ==
			      offsetof(struct ibv_post_send, core_payload) +
				      offsetof(struct ib_uverbs_post_send,
					       wr_count),
	      "tagless kernel-abi copy does not match the uAPI struct");

/* ---- LP64 offsets measured in libibverbs 44.0 ---- */

#if __SIZEOF_POINTER__ == 8 && __SIZEOF_LONG__ == 8

#define SRDMA_AT(type, member, off)                                            \
	static_assert(offsetof(struct type, member) == (off),                  \
		      #type "." #member " must be at " #off)

SRDMA_AT(verbs_device_ops, name, 0);
SRDMA_AT(verbs_device_ops, match_min_abi_version, 8);
SRDMA_AT(verbs_device_ops, match_max_abi_version, 12);
SRDMA_AT(verbs_device_ops, match_table, 16);
SRDMA_AT(verbs_device_ops, static_providers, 24);
SRDMA_AT(verbs_device_ops, match_device, 32);
SRDMA_AT(verbs_device_ops, alloc_context, 40);
SRDMA_AT(verbs_device_ops, import_context, 48);
SRDMA_AT(verbs_device_ops, alloc_device, 56);
SRDMA_AT(verbs_device_ops, uninit_device, 64);
static_assert(sizeof(struct verbs_device_ops) == 72, "verbs_device_ops size");

SRDMA_AT(verbs_match_ent, driver_data, 0);
SRDMA_AT(verbs_match_ent, u, 8);
SRDMA_AT(verbs_match_ent, vendor, 16);
SRDMA_AT(verbs_match_ent, device, 18);
SRDMA_AT(verbs_match_ent, kind, 20);
static_assert(sizeof(struct verbs_match_ent) == 24, "verbs_match_ent size");

SRDMA_AT(verbs_sysfs_dev, entry, 0);
SRDMA_AT(verbs_sysfs_dev, provider_data, 16);
SRDMA_AT(verbs_sysfs_dev, match, 24);
SRDMA_AT(verbs_sysfs_dev, flags, 32);
SRDMA_AT(verbs_sysfs_dev, sysfs_name, 36);
SRDMA_AT(verbs_sysfs_dev, sysfs_cdev, 104);
SRDMA_AT(verbs_sysfs_dev, ibdev_name, 112);
SRDMA_AT(verbs_sysfs_dev, ibdev_path, 176);
SRDMA_AT(verbs_sysfs_dev, modalias, 432);
SRDMA_AT(verbs_sysfs_dev, node_guid, 944);
SRDMA_AT(verbs_sysfs_dev, driver_id, 952);
SRDMA_AT(verbs_sysfs_dev, node_type, 956);
SRDMA_AT(verbs_sysfs_dev, ibdev_idx, 960);
SRDMA_AT(verbs_sysfs_dev, num_ports, 964);
SRDMA_AT(verbs_sysfs_dev, abi_ver, 968);
SRDMA_AT(verbs_sysfs_dev, time_created, 976);
static_assert(sizeof(struct verbs_sysfs_dev) == 992,
	      "verbs_sysfs_dev size (libibverbs callocs 992 bytes)");

static_assert(sizeof(struct ibv_device) == 664, "ibv_device size");
SRDMA_AT(verbs_device, ops, 664);
SRDMA_AT(verbs_device, refcount, 672);
SRDMA_AT(verbs_device, entry, 680);
SRDMA_AT(verbs_device, sysfs, 696);
SRDMA_AT(verbs_device, core_support, 704);
static_assert(sizeof(struct verbs_device) == 712, "verbs_device size");

SRDMA_AT(verbs_context, priv, 208);
SRDMA_AT(verbs_context, context, 320);

SRDMA_AT(verbs_mr, mr_type, 48);
SRDMA_AT(verbs_mr, access, 52);
SRDMA_AT(verbs_qp, comp_mask, 352);
SRDMA_AT(verbs_qp, xrcd, 360);
SRDMA_AT(verbs_srq, srq_type, 128);
SRDMA_AT(verbs_srq, xrcd, 136);
SRDMA_AT(verbs_srq, cq, 144);
SRDMA_AT(verbs_srq, srq_num, 152);
SRDMA_AT(verbs_xrcd, comp_mask, 8);
SRDMA_AT(verbs_xrcd, handle, 12);

#endif /* LP64 */
