// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suites of softrdma, built into the module with SRDMA_KUNIT=y (see
 * Kbuild) against a kernel with CONFIG_KUNIT; they run when the module
 * loads. Table-driven tests of the pure functions: ring index arithmetic
 * and the ABI layout shared with the provider.
 */

#include <kunit/test.h>

#include "srdma.h"

/* --- srdma_ring: free-running index arithmetic --- */

struct srdma_ring_case {
	const char *name;
	u32 prod;
	u32 cons;
	u32 num;
	u32 count;		/* expected prod - cons */
	bool ok;		/* a consistent pair for a ring of num */
};

static const struct srdma_ring_case srdma_ring_cases[] = {
	{ "empty at zero", 0, 0, 8, 0, true },
	{ "one entry", 1, 0, 8, 1, true },
	{ "full", 8, 0, 8, 8, true },
	{ "over full", 9, 0, 8, 9, false },
	{ "wrap empty", 0, 0xffffffff + 1U, 8, 0, true },
	{ "wrap across zero", 3, 0xfffffffe, 8, 5, true },
	{ "wrap full", 6, 0xfffffffe, 8, 8, true },
	{ "wrap over full", 7, 0xfffffffe, 8, 9, false },
	{ "consumer ahead", 5, 6, 8, 0xffffffff, false },
	{ "garbage", 0x12345678, 0x9abcdef0, 64, 0x12345678 - 0x9abcdef0,
	  false },
	{ "max ring full", 1U << 16, 0, 1U << 16, 1U << 16, true },
};

static void srdma_ring_case_desc(const struct srdma_ring_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_ring, srdma_ring_cases, srdma_ring_case_desc);

static void srdma_ring_index_test(struct kunit *test)
{
	const struct srdma_ring_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srdma_ring_count(c->prod, c->cons), c->count);
	/* Checked from the producer's side and from the consumer's. */
	KUNIT_EXPECT_EQ(test, srdma_ring_index_ok(c->prod, c->cons, c->num,
						  true), c->ok);
	KUNIT_EXPECT_EQ(test, srdma_ring_index_ok(c->cons, c->prod, c->num,
						  false), c->ok);
}

static void srdma_ring_slot_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srdma_ring_slot(0, 8), 0U);
	KUNIT_EXPECT_EQ(test, srdma_ring_slot(7, 8), 7U);
	KUNIT_EXPECT_EQ(test, srdma_ring_slot(8, 8), 0U);
	KUNIT_EXPECT_EQ(test, srdma_ring_slot(0xffffffff, 8), 7U);
	KUNIT_EXPECT_EQ(test, srdma_ring_slot(0xffffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, srdma_ring_slot(0x10005, 1U << 16), 5U);
}

static void srdma_ring_entries_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(0), 0U);
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(1), 1U);
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(3), 4U);
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(1024), 1024U);
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(1025), 2048U);
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(SRDMA_RING_MAX_ENTRIES),
			SRDMA_RING_MAX_ENTRIES);
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(SRDMA_RING_MAX_ENTRIES + 1),
			0U);
	KUNIT_EXPECT_EQ(test, srdma_ring_entries(U32_MAX), 0U);
}

static void srdma_ring_stride_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srdma_ring_stride(0), SRDMA_RING_MIN_STRIDE);
	KUNIT_EXPECT_EQ(test, srdma_ring_stride(16), SRDMA_RING_MIN_STRIDE);
	KUNIT_EXPECT_EQ(test, srdma_ring_stride(64), 64U);
	KUNIT_EXPECT_EQ(test, srdma_ring_stride(65), 128U);
	KUNIT_EXPECT_EQ(test, srdma_ring_stride(576), 1024U);
	KUNIT_EXPECT_EQ(test, srdma_ring_bytes(8, 64),
			(size_t)SRDMA_RING_CTRL_SIZE + 512);
}

/* --- Work queue layout --- */

struct srdma_geom_case {
	const char *name;
	u32 depth, sge, inl;
	bool send;
};

static const struct srdma_geom_case srdma_geom_cases[] = {
	{ "send minimal", 1, 1, 0, true },
	{ "send zero depth", 0, 0, 0, true },
	{ "send 16 sge", 100, 16, 0, true },
	{ "send inline 512", 128, 1, 512, true },
	{ "send inline 220", 64, 2, 220, true },
	{ "send max sge", 16384, SRDMA_MAX_SEND_SGE, SRDMA_MAX_INLINE, true },
	{ "recv one sge", 512, 1, 0, false },
	{ "recv max sge", 1000, SRDMA_MAX_RECV_SGE, 0, false },
};

static void srdma_geom_case_desc(const struct srdma_geom_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_geom, srdma_geom_cases, srdma_geom_case_desc);

static void srdma_wq_geometry_test(struct kunit *test)
{
	const struct srdma_geom_case *c = test->param_value;
	u32 hdr = c->send ? sizeof(struct srdma_send_wqe) :
			    sizeof(struct srdma_recv_wqe);
	struct srdma_wq_geom g;

	KUNIT_ASSERT_TRUE(test, srdma_wq_geometry(c->depth, c->sge, c->inl,
						  c->send, SRDMA_MAX_SEND_SGE,
						  SRDMA_MAX_INLINE, &g));
	/* Granted at least what was asked for, never past the limits. */
	KUNIT_EXPECT_GE(test, g.num, max_t(u32, c->depth, 1));
	KUNIT_EXPECT_TRUE(test, is_power_of_2(g.num));
	KUNIT_EXPECT_TRUE(test, is_power_of_2(g.stride));
	KUNIT_EXPECT_GE(test, g.stride, (u32)SRDMA_RING_MIN_STRIDE);
	KUNIT_EXPECT_GE(test, g.max_sge, c->sge);
	KUNIT_EXPECT_LE(test, g.max_sge, (u32)SRDMA_MAX_SEND_SGE);
	KUNIT_EXPECT_LE(test, hdr + g.max_sge * sizeof(struct srdma_sge),
			g.stride);
	if (c->send) {
		KUNIT_EXPECT_GE(test, g.max_inline, c->inl);
		KUNIT_EXPECT_LE(test, g.max_inline, (u32)SRDMA_MAX_INLINE);
		KUNIT_EXPECT_LE(test, hdr + g.max_inline, g.stride);
	} else {
		KUNIT_EXPECT_EQ(test, g.max_inline, 0U);
	}
}

static void srdma_wq_geometry_limit_test(struct kunit *test)
{
	struct srdma_wq_geom g;

	KUNIT_EXPECT_FALSE(test, srdma_wq_geometry(SRDMA_RING_MAX_ENTRIES + 1,
						   1, 0, true, 32, 512, &g));
}

/* --- CQ notification (IBTA 11.4.2.2) --- */

static void srdma_cq_notify_test(struct kunit *test)
{
	/* notify, solicited, error -> event */
	static const struct { u32 n; bool sol, err, want; } t[] = {
		{ SRDMA_CQ_NOTIFY_NONE, false, false, false },
		{ SRDMA_CQ_NOTIFY_NONE, true, true, false },
		{ SRDMA_CQ_NOTIFY_NEXT, false, false, true },
		{ SRDMA_CQ_NOTIFY_NEXT, true, false, true },
		{ SRDMA_CQ_NOTIFY_SOLICITED, false, false, false },
		{ SRDMA_CQ_NOTIFY_SOLICITED, true, false, true },
		{ SRDMA_CQ_NOTIFY_SOLICITED, false, true, true },
		{ 7, true, true, false },	/* garbage from a process */
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_cq_notify_wanted(t[i].n,
								 t[i].sol,
								 t[i].err),
				    t[i].want, "case %d", i);
}

/* --- ABI layout shared with the provider --- */

static void srdma_abi_layout_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct srdma_ring_ctrl),
			(size_t)SRDMA_RING_CTRL_SIZE);
	KUNIT_EXPECT_EQ(test, offsetof(struct srdma_ring_ctrl, prod), 0UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct srdma_ring_ctrl, cons), 64UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct srdma_ring_ctrl, notify), 128UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct srdma_ring_ctrl, kstate), 192UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct srdma_send_wqe), 64UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct srdma_send_wqe, wr), 24UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct srdma_recv_wqe), 16UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct srdma_cqe), 64UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct srdma_cqe, status), 8UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct srdma_sge), 16UL);
	KUNIT_EXPECT_EQ(test, sizeof(struct srdma_alloc_ucontext_req), 8UL);
	KUNIT_EXPECT_EQ(test, offsetof(struct srdma_alloc_ucontext_req,
				       doorbell_fd), 4UL);
	/* Kernel and uverbs numberings that the CQE carries unchanged. */
	KUNIT_EXPECT_EQ(test, (int)IB_WC_RECV, 128);
	KUNIT_EXPECT_EQ(test, (int)IB_WC_RDMA_READ, (int)IB_UVERBS_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, (int)IB_WC_WR_FLUSH_ERR, 5);
}

static struct kunit_case srdma_ring_test_cases[] = {
	KUNIT_CASE_PARAM(srdma_ring_index_test, srdma_ring_gen_params),
	KUNIT_CASE(srdma_ring_slot_test),
	KUNIT_CASE(srdma_ring_entries_test),
	KUNIT_CASE(srdma_ring_stride_test),
	KUNIT_CASE_PARAM(srdma_wq_geometry_test, srdma_geom_gen_params),
	KUNIT_CASE(srdma_wq_geometry_limit_test),
	KUNIT_CASE(srdma_cq_notify_test),
	{}
};

static struct kunit_suite srdma_ring_test_suite = {
	.name = "softrdma_ring",
	.test_cases = srdma_ring_test_cases,
};

static struct kunit_case srdma_abi_test_cases[] = {
	KUNIT_CASE(srdma_abi_layout_test),
	{}
};

static struct kunit_suite srdma_abi_test_suite = {
	.name = "softrdma_abi",
	.test_cases = srdma_abi_test_cases,
};

kunit_test_suites(&srdma_ring_test_suite, &srdma_abi_test_suite);
