// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Check the declared struct verbs_context_ops against the libibverbs that is
 * installed, without needing an RDMA device.
 *
 * Why: rdma-core releases 34 to 56 all export IBVERBS_PRIVATE_34, yet
 * verbs_context_ops gained members inside that range (73 slots in 34, 76 in
 * 44.0).  verbs_set_ops() copies each non-NULL slot by position, so a
 * provider built with another release's layout links and loads fine and
 * then calls the wrong functions.  Only the library itself can tell.
 *
 * How: every slot of an ops table gets a distinct tag value, and the table is
 * followed by spare tagged slots.  verbs_set_ops() runs on a zeroed fake
 * context whose private area is a large zeroed buffer.  Afterwards
 *  - the private area must hold the tags of slots 0..N-1 in order and no
 *    spare tag (the library copies exactly N slots, contiguously), and
 *  - every public field of struct verbs_context / ibv_context_ops that the
 *    library filled must hold the tag of the op with the same name.
 * The tags are never called.  verbs_set_ops() only stores pointers.
 *
 * Exit status 0 means the layout matches; the output says what was checked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/driver.h>

#define NSLOTS (sizeof(struct verbs_context_ops) / sizeof(void *))
#define NSPARE 32
#define PRIV_WORDS 4096

union probe_ops {
	struct verbs_context_ops ops;
	uintptr_t slot[NSLOTS + NSPARE];
};

static uintptr_t tag(size_t i)
{
	return (uintptr_t)0x5e7005000000ull + i * 16;
}

/* Slot index of a tag, or -1. */
static long tag_index(uintptr_t v)
{
	uintptr_t base = tag(0);

	if (v < base || (v - base) % 16 || (v - base) / 16 >= NSLOTS + NSPARE)
		return -1;
	return (long)((v - base) / 16);
}

static int check_private_copy(const uintptr_t *priv)
{
	long first = -1;
	size_t seen = 0;

	for (size_t w = 0; w < PRIV_WORDS; w++) {
		long i = tag_index(priv[w]);

		if (i < 0)
			continue;
		if (i >= (long)NSLOTS) {
			printf("libibverbs copies more than %zu ops slots\n",
			       NSLOTS);
			return 1;
		}
		if (first < 0)
			first = (long)w - i;
		if ((long)w - i != first) {
			printf("ops slot %ld is not where the layout puts it\n",
			       i);
			return 1;
		}
		seen++;
	}
	if (seen != NSLOTS) {
		printf("libibverbs copies %zu of %zu ops slots\n", seen,
		       NSLOTS);
		return 1;
	}
	return 0;
}

struct mirror {
	const char *name;
	size_t op_off;		/* in struct verbs_context_ops */
	size_t pub_off;		/* in struct verbs_context */
};

#define OPS_OFF(m) offsetof(struct verbs_context_ops, m)
#define VCTX(m, f) { #m, OPS_OFF(m), offsetof(struct verbs_context, f) }
#define ICTX(m)                                                                \
	{ #m, OPS_OFF(m),                                                      \
	  offsetof(struct verbs_context, context) +                            \
		  offsetof(struct ibv_context, ops) +                          \
		  offsetof(struct ibv_context_ops, m) }

static const struct mirror mirrors[] = {
	VCTX(advise_mr, advise_mr),
	VCTX(alloc_dm, alloc_dm),
	VCTX(alloc_null_mr, alloc_null_mr),
	VCTX(alloc_parent_domain, alloc_parent_domain),
	VCTX(alloc_td, alloc_td),
	VCTX(attach_counters_point_flow, attach_counters_point_flow),
	VCTX(close_xrcd, close_xrcd),
	VCTX(create_counters, create_counters),
	VCTX(create_cq_ex, create_cq_ex),
	VCTX(create_flow, ibv_create_flow),
	VCTX(create_flow_action_esp, create_flow_action_esp),
	VCTX(create_qp_ex, create_qp_ex),
	VCTX(create_rwq_ind_table, create_rwq_ind_table),
	VCTX(create_srq_ex, create_srq_ex),
	VCTX(create_wq, create_wq),
	VCTX(dealloc_td, dealloc_td),
	VCTX(destroy_counters, destroy_counters),
	VCTX(destroy_flow, ibv_destroy_flow),
	VCTX(destroy_flow_action, destroy_flow_action),
	VCTX(destroy_rwq_ind_table, destroy_rwq_ind_table),
	VCTX(destroy_wq, destroy_wq),
	VCTX(free_dm, free_dm),
	VCTX(get_srq_num, get_srq_num),
	VCTX(modify_cq, modify_cq),
	VCTX(modify_flow_action_esp, modify_flow_action_esp),
	VCTX(modify_qp_rate_limit, modify_qp_rate_limit),
	VCTX(modify_wq, modify_wq),
	VCTX(open_qp, open_qp),
	VCTX(open_xrcd, open_xrcd),
	VCTX(post_srq_ops, post_srq_ops),
	VCTX(query_device_ex, query_device_ex),
	VCTX(query_rt_values, query_rt_values),
	VCTX(read_counters, read_counters),
	VCTX(reg_dm_mr, reg_dm_mr),
	ICTX(alloc_mw),
	ICTX(bind_mw),
	ICTX(dealloc_mw),
	ICTX(poll_cq),
	ICTX(post_recv),
	ICTX(post_send),
	ICTX(post_srq_recv),
	ICTX(req_notify_cq),
};

/* A public field may be left alone, but if set it must be the named op. */
static int check_public_mirrors(const unsigned char *vctx, size_t *matched)
{
	int bad = 0;

	*matched = 0;
	for (size_t i = 0; i < sizeof(mirrors) / sizeof(mirrors[0]); i++) {
		uintptr_t v;

		memcpy(&v, vctx + mirrors[i].pub_off, sizeof(v));
		if (!v)
			continue;
		if (v == tag(mirrors[i].op_off / sizeof(void *))) {
			(*matched)++;
			continue;
		}
		printf("public field for '%s' received slot %ld\n",
		       mirrors[i].name, tag_index(v));
		bad = 1;
	}
	return bad;
}

int main(void)
{
	static union probe_ops in;
	uintptr_t *priv = calloc(PRIV_WORDS, sizeof(*priv));
	struct verbs_context *vctx = calloc(1, sizeof(*vctx));
	size_t matched;
	int bad;

	if (!priv || !vctx)
		return 2;
	for (size_t i = 0; i < NSLOTS + NSPARE; i++)
		in.slot[i] = tag(i);
	vctx->priv = (struct verbs_ex_private *)priv;

	verbs_set_ops(vctx, &in.ops);

	bad = check_private_copy(priv);
	bad |= check_public_mirrors((const unsigned char *)vctx, &matched);
	if (!bad && matched < 8) {
		printf("only %zu public fields to compare; cannot confirm\n",
		       matched);
		bad = 1;
	}
	printf("verbs_context_ops: %zu slots declared, %s; %zu named slots "
	       "confirmed via public fields\n",
	       NSLOTS, bad ? "MISMATCH" : "library copies the same", matched);
	free(vctx);
	free(priv);
	return bad;
}
