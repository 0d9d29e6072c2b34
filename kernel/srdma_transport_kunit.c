// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suites of the RC transport's decisions (SRDMA_KUNIT=y, see Kbuild):
 * the responder's opcode sequence check (IBTA 9.7.5.1.3, Table 45), its
 * payload length check against the path MTU (C9-92), PSN
 * classification (duplicate, expected, ahead: 9.7.5.1.1), the completion
 * status of each NAK error class (9.9.2), the AETH syndromes the responder
 * sends, the requester's congestion window, which request packets ask
 * for an ACK (C9-60, 9.7.5.1.6), when a responder resource may take a
 * new READ or atomic (C9-86), which READ response opcode may come at
 * which PSN (9.7.5.1.9), and which data a duplicate READ may ask for
 * (9.7.5.1.4).
 */

#include <kunit/test.h>

#include "srdma.h"

/* --- Opcode sequence: every RC request opcode in every responder state --- */

struct srdma_seq_case {
	u8 opcode;
	bool after_none;	/* valid when no message is in progress */
	bool after_send;	/* valid in the middle of a SEND */
	bool after_write;	/* valid in the middle of an RDMA WRITE */
};

static const struct srdma_seq_case srdma_seq_cases[] = {
	{ SRDMA_OP_RC_SEND_FIRST,	true,  false, false },
	{ SRDMA_OP_RC_SEND_MIDDLE,	false, true,  false },
	{ SRDMA_OP_RC_SEND_LAST,	false, true,  false },
	{ SRDMA_OP_RC_SEND_LAST_IMM,	false, true,  false },
	{ SRDMA_OP_RC_SEND_LAST_INV,	false, true,  false },
	{ SRDMA_OP_RC_SEND_ONLY,	true,  false, false },
	{ SRDMA_OP_RC_SEND_ONLY_IMM,	true,  false, false },
	{ SRDMA_OP_RC_SEND_ONLY_INV,	true,  false, false },
	{ SRDMA_OP_RC_WRITE_FIRST,	true,  false, false },
	{ SRDMA_OP_RC_WRITE_MIDDLE,	false, false, true  },
	{ SRDMA_OP_RC_WRITE_LAST,	false, false, true  },
	{ SRDMA_OP_RC_WRITE_LAST_IMM,	false, false, true  },
	{ SRDMA_OP_RC_WRITE_ONLY,	true,  false, false },
	{ SRDMA_OP_RC_WRITE_ONLY_IMM,	true,  false, false },
	{ SRDMA_OP_RC_READ_REQ,		true,  false, false },
	{ SRDMA_OP_RC_CMP_SWAP,		true,  false, false },
	{ SRDMA_OP_RC_FETCH_ADD,	true,  false, false },
};

static void srdma_seq_case_desc(const struct srdma_seq_case *c, char *desc)
{
	const struct srdma_opcode_info *info = srdma_opcode(c->opcode);

	strscpy(desc, info ? info->name : "?", KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_seq, srdma_seq_cases, srdma_seq_case_desc);

static void srdma_resp_seq_test(struct kunit *test)
{
	const struct srdma_seq_case *c = test->param_value;
	const struct srdma_opcode_info *info = srdma_opcode(c->opcode);

	KUNIT_ASSERT_NOT_NULL(test, info);
	KUNIT_EXPECT_TRUE(test, info->flags & SRDMA_OPF_REQ);
	KUNIT_EXPECT_EQ(test, srdma_resp_seq_ok(SRDMA_RESP_NONE, info->flags),
			c->after_none);
	KUNIT_EXPECT_EQ(test, srdma_resp_seq_ok(SRDMA_RESP_SEND, info->flags),
			c->after_send);
	KUNIT_EXPECT_EQ(test, srdma_resp_seq_ok(SRDMA_RESP_WRITE, info->flags),
			c->after_write);
}

/* --- Request payload against the path MTU (C9-92, C9-195..C9-197) --- */

struct srdma_len_case {
	const char *name;
	u8 opcode;
	u32 paylen;
	bool want;
};

static const struct srdma_len_case srdma_len_cases[] = {
	{ "SEND FIRST, PMTU",		SRDMA_OP_RC_SEND_FIRST, 1024, true },
	{ "SEND FIRST, PMTU - 4",	SRDMA_OP_RC_SEND_FIRST, 1020, false },
	{ "SEND FIRST, PMTU + 4",	SRDMA_OP_RC_SEND_FIRST, 1028, false },
	{ "WRITE MIDDLE, PMTU",		SRDMA_OP_RC_WRITE_MIDDLE, 1024, true },
	{ "WRITE MIDDLE, 256",		SRDMA_OP_RC_WRITE_MIDDLE, 256, false },
	{ "SEND LAST, 1",		SRDMA_OP_RC_SEND_LAST, 1, true },
	{ "SEND LAST, PMTU",		SRDMA_OP_RC_SEND_LAST_IMM, 1024, true },
	{ "WRITE LAST, PMTU + 1",	SRDMA_OP_RC_WRITE_LAST, 1025, false },
	{ "SEND ONLY, 0",		SRDMA_OP_RC_SEND_ONLY, 0, true },
	{ "SEND ONLY, PMTU",		SRDMA_OP_RC_SEND_ONLY_INV, 1024, true },
	{ "WRITE ONLY, PMTU + 4",	SRDMA_OP_RC_WRITE_ONLY_IMM, 1028, false },
	{ "READ request",		SRDMA_OP_RC_READ_REQ, 0, true },
	{ "FETCH ADD",			SRDMA_OP_RC_FETCH_ADD, 0, true },
	{ "UC WRITE FIRST, 512",	SRDMA_OP_UC_WRITE_FIRST, 512, false },
	{ "UC SEND MIDDLE, PMTU",	SRDMA_OP_UC_SEND_MIDDLE, 1024, true },
	{ "UC SEND ONLY, PMTU + 1",	SRDMA_OP_UC_SEND_ONLY, 1025, false },
};

static void srdma_len_case_desc(const struct srdma_len_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_len, srdma_len_cases, srdma_len_case_desc);

/* With a path MTU of 1024 bytes. */
static void srdma_req_len_test(struct kunit *test)
{
	const struct srdma_len_case *c = test->param_value;
	const struct srdma_opcode_info *info = srdma_opcode(c->opcode);

	KUNIT_ASSERT_NOT_NULL(test, info);
	KUNIT_EXPECT_EQ(test, srdma_req_len_ok(info->flags, c->paylen, 1024),
			c->want);
}

/* --- PSN classification, across the 24-bit wrap --- */

struct srdma_class_case {
	const char *name;
	u32 psn;
	u32 epsn;
	enum srdma_psn_class want;
};

static const struct srdma_class_case srdma_class_cases[] = {
	{ "expected", 100, 100, SRDMA_PSN_EXPECTED },
	{ "one behind", 99, 100, SRDMA_PSN_DUPLICATE },
	{ "one ahead", 101, 100, SRDMA_PSN_AHEAD },
	{ "expected at wrap", 0xffffff, 0xffffff, SRDMA_PSN_EXPECTED },
	{ "duplicate across wrap", 0xfffffe, 1, SRDMA_PSN_DUPLICATE },
	{ "ahead across wrap", 2, 0xfffffe, SRDMA_PSN_AHEAD },
	{ "half window behind", 0, 0x7fffff, SRDMA_PSN_DUPLICATE },
	{ "far ahead", 0x7ffffe, 0, SRDMA_PSN_AHEAD },
};

static void srdma_class_case_desc(const struct srdma_class_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_class, srdma_class_cases, srdma_class_case_desc);

static void srdma_psn_classify_test(struct kunit *test)
{
	const struct srdma_class_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srdma_psn_classify(c->psn, c->epsn), c->want);
}

/* --- NAKs: what the responder sends, what the requester completes --- */

static void srdma_nak_test(struct kunit *test)
{
	static const struct {
		u8 code;
		enum ib_wc_status status;
	} t[] = {
		{ SRDMA_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR },
		{ SRDMA_NAK_REMOTE_ACCESS, IB_WC_REM_ACCESS_ERR },
		{ SRDMA_NAK_REMOTE_OP, IB_WC_REM_OP_ERR },
		{ SRDMA_NAK_INVALID_RD_REQ, IB_WC_REM_INV_RD_REQ_ERR },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		u8 syn = SRDMA_NAK_SYN(t[i].code);

		/* Table 46: 011 in bits 6..5, the code in bits 4..0. */
		KUNIT_EXPECT_EQ(test, syn, (u8)(0x60 | t[i].code));
		KUNIT_EXPECT_EQ(test, srdma_syn_type(syn), SRDMA_SYN_NAK);
		KUNIT_EXPECT_EQ(test, srdma_nak_wc_status(srdma_syn_value(syn)),
				t[i].status);
	}
	/* PSN sequence error NAK: 0x60; RNR NAK with timer 14: 0x2e. */
	KUNIT_EXPECT_EQ(test, SRDMA_NAK_SYN(SRDMA_NAK_PSN_SEQ), (u8)0x60);
	KUNIT_EXPECT_EQ(test, SRDMA_RNR_SYN(14), (u8)0x2e);
	KUNIT_EXPECT_EQ(test, srdma_syn_type(SRDMA_RNR_SYN(14)), SRDMA_SYN_RNR);
	/* An ACK without credit information: 0x1f. */
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_ACK, SRDMA_CREDITS_INVALID),
			(u8)0x1f);
}

/* --- The requester's congestion window --- */

static void srdma_cwnd_test(struct kunit *test)
{
	struct srdma_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	u32 before;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	spin_lock_init(&qp->lock);
	qp->req.cwnd = SRDMA_CWND_INIT;

	/* One packet more per window acknowledged. */
	srdma_req_acked(qp, SRDMA_CWND_INIT - 1);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, (u32)SRDMA_CWND_INIT);
	srdma_req_acked(qp, 1);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, (u32)SRDMA_CWND_INIT + 1);

	/* Halved on a loss signal, never below the minimum. */
	before = qp->req.cwnd;
	srdma_req_congestion(qp, false);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, before / 2);
	while (qp->req.cwnd > SRDMA_CWND_MIN)
		srdma_req_congestion(qp, false);
	srdma_req_congestion(qp, false);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, (u32)SRDMA_CWND_MIN);

	/* Never above the maximum, however much is acknowledged. */
	srdma_req_acked(qp, 1U << 30);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, (u32)SRDMA_MAX_INFLIGHT);

	/* A timeout restarts at the minimum. */
	srdma_req_congestion(qp, true);
	KUNIT_EXPECT_EQ(test, qp->req.cwnd, (u32)SRDMA_CWND_MIN);
}

/* --- Which request packets ask for an ACK --- */

struct srdma_ackreq_case {
	const char *name;
	enum ib_qp_type type;
	u8 opcode;		/* IB_UVERBS_WR_* */
	bool signaled;
	bool sig_all;
	bool last;
	u8 timeout;		/* local ACK timeout attribute */
	u32 since;		/* packets sent since the last AckReq */
	u32 cwnd;
	u32 sq_num;		/* SQ ring entries */
	s32 psn;		/* relative to una */
	s32 max_psn;		/* relative to una */
	bool want;
};

/* A 4 s ACK timeout leaves room for the tail probe at any HZ; 1 ms not. */
#define SRDMA_T_LONG	20
#define SRDMA_T_SHORT	8

static const struct srdma_ackreq_case srdma_ackreq_cases[] = {
	{ "unsignaled last", IB_QPT_RC, IB_UVERBS_WR_RDMA_WRITE, false, false,
	  true, SRDMA_T_LONG, 0, 32, 128, 0, 0, false },
	{ "signaled last", IB_QPT_RC, IB_UVERBS_WR_RDMA_WRITE, true, false,
	  true, SRDMA_T_LONG, 0, 32, 128, 0, 0, true },
	{ "signaled middle", IB_QPT_RC, IB_UVERBS_WR_SEND, true, false,
	  false, SRDMA_T_LONG, 0, 32, 128, 0, 0, false },
	{ "signal all", IB_QPT_RC, IB_UVERBS_WR_SEND, false, true,
	  true, SRDMA_T_LONG, 0, 32, 128, 0, 0, true },
	{ "no timeout", IB_QPT_RC, IB_UVERBS_WR_SEND, false, false,
	  true, 0, 0, 32, 128, 0, 0, false },
	{ "short timeout", IB_QPT_RC, IB_UVERBS_WR_SEND, false, false,
	  true, SRDMA_T_SHORT, 0, 32, 128, 0, 0, true },
	{ "32nd packet", IB_QPT_RC, IB_UVERBS_WR_RDMA_WRITE, false, false,
	  false, SRDMA_T_LONG, 31, 512, 1024, 0, 0, true },
	{ "31st packet", IB_QPT_RC, IB_UVERBS_WR_RDMA_WRITE, false, false,
	  false, SRDMA_T_LONG, 30, 512, 1024, 0, 0, false },
	{ "half the window", IB_QPT_RC, IB_UVERBS_WR_RDMA_WRITE, false, false,
	  true, SRDMA_T_LONG, 3, 8, 1024, 0, 0, true },
	{ "half the SQ", IB_QPT_RC, IB_UVERBS_WR_SEND, false, false,
	  true, SRDMA_T_LONG, 7, 512, 16, 0, 0, true },
	{ "below half the SQ", IB_QPT_RC, IB_UVERBS_WR_SEND, false, false,
	  true, SRDMA_T_LONG, 6, 512, 16, 0, 0, false },
	{ "SQ of one", IB_QPT_RC, IB_UVERBS_WR_SEND, false, false,
	  true, SRDMA_T_LONG, 0, 512, 1, 0, 0, true },
	{ "fills the window", IB_QPT_RC, IB_UVERBS_WR_RDMA_WRITE, false, false,
	  false, SRDMA_T_LONG, 0, 32, 128, 31, 31, true },
	{ "sent again", IB_QPT_RC, IB_UVERBS_WR_SEND, false, false,
	  true, SRDMA_T_LONG, 0, 32, 128, 2, 5, true },
	{ "sent again, middle", IB_QPT_RC, IB_UVERBS_WR_SEND, false, false,
	  false, SRDMA_T_LONG, 0, 32, 128, 2, 5, false },
	{ "READ", IB_QPT_RC, IB_UVERBS_WR_RDMA_READ, false, false,
	  true, SRDMA_T_LONG, 0, 32, 128, 0, 0, true },
	{ "atomic", IB_QPT_RC, IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, false, false,
	  true, SRDMA_T_LONG, 0, 32, 128, 0, 0, true },
	{ "UC, signaled", IB_QPT_UC, IB_UVERBS_WR_SEND, true, false,
	  true, SRDMA_T_SHORT, 31, 32, 128, 31, 31, false },
};

static void srdma_ackreq_case_desc(const struct srdma_ackreq_case *c,
				   char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_ackreq, srdma_ackreq_cases, srdma_ackreq_case_desc);

static void srdma_ackreq_test(struct kunit *test)
{
	const struct srdma_ackreq_case *c = test->param_value;
	struct srdma_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct srdma_swqe *sw = kunit_kzalloc(test, sizeof(*sw), GFP_KERNEL);
	/* Near the wrap, so that the PSN arithmetic crosses it. */
	const u32 una = 0xfffff0;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	KUNIT_ASSERT_NOT_NULL(test, sw);
	qp->ibqp.qp_type = c->type;
	qp->sq_sig_all = c->sig_all;
	qp->attr.timeout = c->timeout;
	qp->sq.ring.num = c->sq_num;
	qp->req.cwnd = c->cwnd;
	qp->req.pkts_since_ack_req = c->since;
	qp->req.una = una;
	qp->req.max_psn = srdma_psn_add(una, c->max_psn);
	sw->wqe.opcode = c->opcode;
	sw->wqe.flags = c->signaled ? SRDMA_WQE_SIGNALED : 0;

	KUNIT_EXPECT_EQ(test,
			srdma_req_want_ack(qp, sw, srdma_psn_add(una, c->psn),
					   c->last),
			c->want);
}

/* --- Responder resources: reuse or NAK invalid request (C9-86) --- */

struct srdma_res_case {
	const char *name;
	struct srdma_rd_res res;
	bool reusable;
};

/* PSNs near the wrap, so that the comparisons cross it. */
static const struct srdma_res_case srdma_res_cases[] = {
	{ "never used", { .type = 0 }, true },
	{ "READ answered",
	  { .type = SRDMA_RES_READ, .first_psn = 0xfffffe,
	    .last_psn = 0x000001, .next_psn = 0x000002 }, true },
	{ "READ answering",
	  { .type = SRDMA_RES_READ, .first_psn = 0xfffffe,
	    .last_psn = 0x000001, .next_psn = 0xffffff }, false },
	{ "READ before its first response",
	  { .type = SRDMA_RES_READ, .first_psn = 0xffffff,
	    .last_psn = 0xffffff, .next_psn = 0xffffff }, false },
	{ "READ answering a duplicate",
	  { .type = SRDMA_RES_READ, .replay = true, .first_psn = 0xfffffe,
	    .last_psn = 0x000001, .next_psn = 0x000000 }, true },
	{ "atomic answered", { .type = SRDMA_RES_ATOMIC, .resid = 0 }, true },
	{ "atomic ACK to send", { .type = SRDMA_RES_ATOMIC, .resid = 1 },
	  false },
	{ "atomic answering a duplicate",
	  { .type = SRDMA_RES_ATOMIC, .replay = true, .resid = 1 }, true },
};

static void srdma_res_case_desc(const struct srdma_res_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_res, srdma_res_cases, srdma_res_case_desc);

static void srdma_res_reuse_test(struct kunit *test)
{
	const struct srdma_res_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srdma_res_reusable(&c->res), c->reusable);
}

/* --- The answer the responder keeps waiting (9.7.5.2) --- */

struct srdma_supersede_case {
	const char *name;
	enum srdma_syn_type type;	/* of the pending answer */
	u8 value;			/* its timer or NAK code */
	u32 psn;			/* of the new one; the pending one's is 0 */
	bool replaced;
};

static const struct srdma_supersede_case srdma_supersede_cases[] = {
	{ "ACK, by a later answer", SRDMA_SYN_ACK, 0, 1, true },
	{ "sequence NAK, by the NAKed PSN's ACK",
	  SRDMA_SYN_NAK, SRDMA_NAK_PSN_SEQ, 0, true },
	{ "sequence NAK, by a later answer",
	  SRDMA_SYN_NAK, SRDMA_NAK_PSN_SEQ, 5, true },
	{ "sequence NAK, by a duplicate's ACK",
	  SRDMA_SYN_NAK, SRDMA_NAK_PSN_SEQ, 0xffffff, false },
	{ "RNR NAK, by the NAKed PSN's answer", SRDMA_SYN_RNR, 14, 0, true },
	{ "RNR NAK, by a duplicate's ACK", SRDMA_SYN_RNR, 14, 0xfffff0,
	  false },
	{ "invalid request NAK", SRDMA_SYN_NAK, SRDMA_NAK_INVALID_REQ, 1,
	  false },
	{ "remote access NAK", SRDMA_SYN_NAK, SRDMA_NAK_REMOTE_ACCESS, 1,
	  false },
	{ "remote operational NAK", SRDMA_SYN_NAK, SRDMA_NAK_REMOTE_OP, 1,
	  false },
};

static void srdma_supersede_case_desc(const struct srdma_supersede_case *c,
				      char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_supersede, srdma_supersede_cases,
		  srdma_supersede_case_desc);

static void srdma_ack_supersedes_test(struct kunit *test)
{
	const struct srdma_supersede_case *c = test->param_value;
	u8 syn = srdma_syn(c->type, c->value);

	KUNIT_EXPECT_EQ(test, srdma_ack_supersedes(syn, 0, c->psn),
			c->replaced);
	/* The same across the PSN wrap. */
	KUNIT_EXPECT_EQ(test,
			srdma_ack_supersedes(syn, 0xfffffe,
					     srdma_psn_add(c->psn, 0xfffffe)),
			c->replaced);
}

/* --- READ response opcodes against their position (9.7.5.1.9) --- */

struct srdma_rpos_case {
	const char *name;
	u8 opcode;
	u32 idx;	/* PSN less the READ's first */
	u32 npkts;	/* responses the READ takes */
	bool split;	/* asked for again in pieces */
	bool ok;
};

static const struct srdma_rpos_case srdma_rpos_cases[] = {
	{ "ONLY, one-packet READ", SRDMA_OP_RC_READ_RESP_ONLY,
	  0, 1, false, true },
	{ "FIRST, one-packet READ", SRDMA_OP_RC_READ_RESP_FIRST,
	  0, 1, false, false },
	{ "LAST, one-packet READ", SRDMA_OP_RC_READ_RESP_LAST,
	  0, 1, false, false },
	{ "FIRST at the first PSN", SRDMA_OP_RC_READ_RESP_FIRST,
	  0, 4, false, true },
	{ "ONLY at the first PSN", SRDMA_OP_RC_READ_RESP_ONLY,
	  0, 4, false, false },
	{ "MIDDLE at the first PSN", SRDMA_OP_RC_READ_RESP_MIDDLE,
	  0, 4, false, false },
	{ "LAST at the first PSN", SRDMA_OP_RC_READ_RESP_LAST,
	  0, 4, false, false },
	{ "MIDDLE between", SRDMA_OP_RC_READ_RESP_MIDDLE,
	  2, 4, false, true },
	{ "FIRST between, a retry", SRDMA_OP_RC_READ_RESP_FIRST,
	  2, 4, false, true },
	{ "LAST between", SRDMA_OP_RC_READ_RESP_LAST,
	  2, 4, false, false },
	{ "ONLY between", SRDMA_OP_RC_READ_RESP_ONLY,
	  2, 4, false, false },
	{ "LAST at the last PSN", SRDMA_OP_RC_READ_RESP_LAST,
	  3, 4, false, true },
	{ "ONLY at the last PSN, a retry", SRDMA_OP_RC_READ_RESP_ONLY,
	  3, 4, false, true },
	{ "MIDDLE at the last PSN", SRDMA_OP_RC_READ_RESP_MIDDLE,
	  3, 4, false, false },
	{ "FIRST at the last PSN", SRDMA_OP_RC_READ_RESP_FIRST,
	  3, 4, false, false },
	{ "LAST past the last PSN", SRDMA_OP_RC_READ_RESP_LAST,
	  4, 4, false, false },
	{ "LAST between, in pieces", SRDMA_OP_RC_READ_RESP_LAST,
	  2, 4, true, true },
	{ "ONLY between, in pieces", SRDMA_OP_RC_READ_RESP_ONLY,
	  2, 4, true, true },
	{ "MIDDLE between, in pieces", SRDMA_OP_RC_READ_RESP_MIDDLE,
	  2, 4, true, true },
	{ "LAST at the first PSN, in pieces", SRDMA_OP_RC_READ_RESP_LAST,
	  0, 4, true, false },
	{ "ONLY at the first PSN, in pieces", SRDMA_OP_RC_READ_RESP_ONLY,
	  0, 4, true, false },
	{ "MIDDLE at the last PSN, in pieces", SRDMA_OP_RC_READ_RESP_MIDDLE,
	  3, 4, true, false },
};

static void srdma_rpos_case_desc(const struct srdma_rpos_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_rpos, srdma_rpos_cases, srdma_rpos_case_desc);

static void srdma_read_resp_pos_test(struct kunit *test)
{
	const struct srdma_rpos_case *c = test->param_value;
	const struct srdma_opcode_info *info = srdma_opcode(c->opcode);

	KUNIT_ASSERT_NOT_NULL(test, info);
	KUNIT_EXPECT_EQ(test,
			srdma_read_resp_pos_ok(info->flags, c->idx, c->npkts,
					       c->split),
			c->ok);
}

/* --- The PSNs a READ's request may take (C9-61) --- */

struct srdma_fit_case {
	const char *name;
	u32 out;	/* PSNs outstanding before it */
	u32 need;	/* PSNs its responses would take */
	u32 fit;	/* PSNs it may take; 0: it waits */
};

static const struct srdma_fit_case srdma_fit_cases[] = {
	{ "one response, nothing outstanding", 0, 1, 1 },
	{ "one response behind 511", 511, 1, 1 },
	{ "2^23 - 1, nothing outstanding", 0, 0x7fffff, 0x7fffff },
	{ "2^23 alone: a first piece", 0, 0x800000, 0x7fffff },
	{ "2^23 behind one: waits", 1, 0x800000, 0 },
	{ "fills the window behind 511", 511, 0x7fffff - 511, 0x7fffff - 511 },
	{ "one over behind 511: waits", 511, 0x800000 - 511, 0 },
	{ "behind a full window: waits", 0x7fffff, 1, 0 },
	{ "behind more than a window: waits", 0x800000, 1, 0 },
};

static void srdma_fit_case_desc(const struct srdma_fit_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_fit, srdma_fit_cases, srdma_fit_case_desc);

static void srdma_read_fit_test(struct kunit *test)
{
	const struct srdma_fit_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srdma_read_fit(c->out, c->need), c->fit);
}

/* --- A duplicate READ's data against the original's (9.7.5.1.4) --- */

struct srdma_within_case {
	const char *name;
	u64 va;
	u32 len;
	bool ok;	/* within [0x1000, 0x1000 + 0x3000) */
};

static const struct srdma_within_case srdma_within_cases[] = {
	{ "the whole", 0x1000, 0x3000, true },
	{ "the tail from a middle PSN", 0x2000, 0x2000, true },
	{ "the last byte", 0x3fff, 1, true },
	{ "empty, at the end", 0x4000, 0, true },
	{ "one byte past the end", 0x2000, 0x2001, false },
	{ "one byte before", 0x0fff, 0x10, false },
	{ "another address", 0x9000, 0x1000, false },
	{ "wrapping past 2^64", ~0ULL - 0x10, 0x100, false },
	{ "longer than the original", 0x1000, 0x3001, false },
};

static void srdma_within_case_desc(const struct srdma_within_case *c,
				   char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_within, srdma_within_cases, srdma_within_case_desc);

static void srdma_range_within_test(struct kunit *test)
{
	const struct srdma_within_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srdma_range_within(c->va, c->len, 0x1000, 0x3000),
			c->ok);
}

/*
 * The early retransmission comes well inside the local ACK timeout, after
 * the tail probe, never before SRDMA_EARLY_RTX_MS, and not at all when
 * the timeout leaves no room for it; the attribute 0 (no timeout) has none.
 */
static void srdma_early_rtx_test(struct kunit *test)
{
	static const u8 timeouts[] = { 0, 1, 8, 12, 14, 16, 18, 22, 31 };
	unsigned long rto, d;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		rto = srdma_ack_timeout_jiffies(timeouts[i]);
		d = srdma_early_rtx_delay(rto, 0);
		kunit_info(test, "timeout %u: %lu of %lu jiffies", timeouts[i],
			   d, rto);
		KUNIT_EXPECT_LE(test, d, rto / 2);
		if (!d)
			continue;
		KUNIT_EXPECT_GT(test, d, (unsigned long)SRDMA_PROBE_JIFFIES);
		KUNIT_EXPECT_GE(test, d, msecs_to_jiffies(SRDMA_EARLY_RTX_MS));
		KUNIT_EXPECT_GE(test, d, rto / 8);
	}
	KUNIT_EXPECT_EQ(test, srdma_early_rtx_delay(0, 0), 0UL);
	/* 4.096 us * 2^8: about 1 ms, no room at any HZ. */
	KUNIT_EXPECT_EQ(test,
			srdma_early_rtx_delay(srdma_ack_timeout_jiffies(8), 0),
			0UL);
	/* 4.096 us * 2^18: about 1.07 s, an eighth of it. */
	rto = srdma_ack_timeout_jiffies(18);
	KUNIT_EXPECT_EQ(test, srdma_early_rtx_delay(rto, 0),
			max3(rto / 8, msecs_to_jiffies(SRDMA_EARLY_RTX_MS),
			     (unsigned long)SRDMA_PROBE_JIFFIES + 1));
	/* 4.096 us * 2^14: about 67 ms, room at HZ 100 and above. */
	KUNIT_EXPECT_NE(test,
			srdma_early_rtx_delay(srdma_ack_timeout_jiffies(14), 0),
			0UL);
}

/*
 * The round trip, measured, moves the early retransmission out: it waits
 * a tick longer than the round trip may take, and once that leaves no
 * room inside the timeout there is none. A short round trip changes
 * nothing.
 */
static void srdma_early_rtx_rtt_test(struct kunit *test)
{
	unsigned long rto = srdma_ack_timeout_jiffies(18);	/* 1.07 s */
	unsigned long base = srdma_early_rtx_delay(rto, 0);

	KUNIT_EXPECT_EQ(test, srdma_early_rtx_delay(rto, 50), base);
	KUNIT_EXPECT_EQ(test, srdma_early_rtx_delay(rto, 300000),
			max(base, usecs_to_jiffies(300000) + 1));
	KUNIT_EXPECT_GT(test, srdma_early_rtx_delay(rto, 300000),
			usecs_to_jiffies(300000));
	KUNIT_EXPECT_EQ(test, srdma_early_rtx_delay(rto, 600000), 0UL);
	KUNIT_EXPECT_EQ(test, srdma_early_rtx_delay(rto, U32_MAX), 0UL);
	/* 67 ms: a 40 ms round trip leaves no room. */
	rto = srdma_ack_timeout_jiffies(14);
	KUNIT_EXPECT_EQ(test, srdma_early_rtx_delay(rto, 40000), 0UL);
}

/*
 * C9-141: a local ACK timeout is detected between T_tr and 4 T_tr. Each
 * timeout without progress lengthens the next, to 2 and 3 T_tr and no
 * further, which leaves room for a timer that fires an eighth late; no
 * timeout stays none.
 */
static void srdma_rto_backoff_test(struct kunit *test)
{
	static const u8 timeouts[] = { 1, 8, 12, 14, 18, 31 };
	unsigned long t, b;
	unsigned int i;
	u64 ns;
	u8 k;

	for (i = 0; i < ARRAY_SIZE(timeouts); i++) {
		ns = srdma_ack_timeout_ns(timeouts[i]);
		t = srdma_timer_jiffies(ns);
		KUNIT_EXPECT_EQ(test, srdma_rto_jiffies(timeouts[i], 0), t);
		KUNIT_EXPECT_EQ(test, srdma_rto_jiffies(timeouts[i], 0),
				srdma_ack_timeout_jiffies(timeouts[i]));
		for (k = 1; k <= 4; k++) {
			b = srdma_rto_jiffies(timeouts[i], k);
			KUNIT_EXPECT_EQ(test, b,
					srdma_timer_jiffies(ns * (1 + min_t(u8, k, 2))));
			/* Never sooner than T_tr, nor later than 4 T_tr. */
			KUNIT_EXPECT_GE(test, b, t);
			KUNIT_EXPECT_LE(test, b + b / 8, 4 * t);
		}
	}
	KUNIT_EXPECT_EQ(test, srdma_rto_jiffies(0, 0), 0UL);
	KUNIT_EXPECT_EQ(test, srdma_rto_jiffies(0, 2), 0UL);
	/* 67 ms, 134 ms, then 201 ms for good. */
	KUNIT_EXPECT_EQ(test, srdma_rto_jiffies(14, 2), srdma_rto_jiffies(14, 9));
	KUNIT_EXPECT_GT(test, srdma_rto_jiffies(14, 1), srdma_rto_jiffies(14, 0));
	KUNIT_EXPECT_GT(test, srdma_rto_jiffies(14, 2), srdma_rto_jiffies(14, 1));
}

/* RFC 6298 2.2, 2.3: samples in, the estimate and its bound out. */
struct srdma_rtt_case {
	const char *name;
	u32 samples[8];
	unsigned int n;
	u32 srtt, rttvar, bound;
};

static const struct srdma_rtt_case srdma_rtt_cases[] = {
	{ "none", {}, 0, 0, 0, 0 },
	{ "first sample", { 1000 }, 1, 1000, 500, 3000 },
	{ "zero counts as one", { 0 }, 1, 1, 0, 1 },
	/* rttvar 500 -> 375 + 0; srtt 1000 */
	{ "steady", { 1000, 1000 }, 2, 1000, 375, 2500 },
	/* dev 7000: rttvar 375 + 1750; srtt 875 + 1000 */
	{ "one long sample", { 1000, 8000 }, 2, 1875, 2125, 10375 },
	/* dev 900: rttvar 375 + 225; srtt 875 + 12 */
	{ "one short sample", { 1000, 100 }, 2, 887, 600, 3287 },
	{ "saturates", { U32_MAX, U32_MAX }, 2, U32_MAX, 1610612736U,
	  U32_MAX },
};

static void srdma_rtt_case_desc(const struct srdma_rtt_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_rtt, srdma_rtt_cases, srdma_rtt_case_desc);

static void srdma_rtt_test(struct kunit *test)
{
	const struct srdma_rtt_case *c = test->param_value;
	u32 srtt = 0, rttvar = 0;
	unsigned int i;

	for (i = 0; i < c->n; i++)
		srdma_rtt_update(&srtt, &rttvar, c->samples[i]);
	KUNIT_EXPECT_EQ(test, srtt, c->srtt);
	KUNIT_EXPECT_EQ(test, rttvar, c->rttvar);
	KUNIT_EXPECT_EQ(test, srdma_rtt_bound_us(srtt, rttvar), c->bound);
}

/*
 * Only the timed packet's own answer ends a measurement with a sample:
 * PSN 99 timed (rtt_end 100).
 */
struct srdma_answer_case {
	const char *name;
	bool timing;
	u8 opcode;
	u32 psn;
	u8 syndrome;
	bool answer;
};

static const struct srdma_answer_case srdma_answer_cases[] = {
	{ "ACK", true, SRDMA_OP_RC_ACK, 99, 0x1f, true },
	{ "ACK, nothing timed", false, SRDMA_OP_RC_ACK, 99, 0x1f, false },
	{ "ACK of a later PSN", true, SRDMA_OP_RC_ACK, 100, 0x1f, false },
	{ "ACK of an earlier PSN", true, SRDMA_OP_RC_ACK, 98, 0x1f, false },
	{ "RNR NAK", true, SRDMA_OP_RC_ACK, 99, 0x21, false },
	{ "sequence NAK", true, SRDMA_OP_RC_ACK, 99, 0x60, false },
	{ "atomic ACK", true, SRDMA_OP_RC_ATOMIC_ACK, 99, 0x1f, true },
	{ "READ response only", true, SRDMA_OP_RC_READ_RESP_ONLY, 99, 0x1f,
	  true },
	{ "READ response first", true, SRDMA_OP_RC_READ_RESP_FIRST, 99, 0x1f,
	  true },
	{ "READ response middle", true, SRDMA_OP_RC_READ_RESP_MIDDLE, 99, 0,
	  false },
	{ "READ response last", true, SRDMA_OP_RC_READ_RESP_LAST, 99, 0x1f,
	  false },
	{ "first READ response of the next PSN", true,
	  SRDMA_OP_RC_READ_RESP_FIRST, 100, 0x1f, false },
};

static void srdma_answer_case_desc(const struct srdma_answer_case *c,
				   char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_answer, srdma_answer_cases, srdma_answer_case_desc);

static void srdma_rtt_answer_test(struct kunit *test)
{
	const struct srdma_answer_case *c = test->param_value;
	struct srdma_req req = { .rtt_timing = c->timing, .rtt_end = 100 };
	struct srdma_pkt pkt = {
		.opcode = c->opcode,
		.psn = c->psn,
		.aeth.syndrome = c->syndrome,
	};

	KUNIT_EXPECT_EQ(test, srdma_rtt_answer(&req, &pkt), c->answer);
}

static struct kunit_case srdma_transport_test_cases[] = {
	KUNIT_CASE_PARAM(srdma_resp_seq_test, srdma_seq_gen_params),
	KUNIT_CASE_PARAM(srdma_req_len_test, srdma_len_gen_params),
	KUNIT_CASE_PARAM(srdma_psn_classify_test, srdma_class_gen_params),
	KUNIT_CASE(srdma_nak_test),
	KUNIT_CASE(srdma_cwnd_test),
	KUNIT_CASE_PARAM(srdma_ackreq_test, srdma_ackreq_gen_params),
	KUNIT_CASE_PARAM(srdma_res_reuse_test, srdma_res_gen_params),
	KUNIT_CASE_PARAM(srdma_ack_supersedes_test, srdma_supersede_gen_params),
	KUNIT_CASE_PARAM(srdma_read_resp_pos_test, srdma_rpos_gen_params),
	KUNIT_CASE_PARAM(srdma_read_fit_test, srdma_fit_gen_params),
	KUNIT_CASE_PARAM(srdma_range_within_test, srdma_within_gen_params),
	KUNIT_CASE(srdma_early_rtx_test),
	KUNIT_CASE(srdma_early_rtx_rtt_test),
	KUNIT_CASE(srdma_rto_backoff_test),
	KUNIT_CASE_PARAM(srdma_rtt_test, srdma_rtt_gen_params),
	KUNIT_CASE_PARAM(srdma_rtt_answer_test, srdma_answer_gen_params),
	{}
};

static struct kunit_suite srdma_transport_test_suite = {
	.name = "softrdma_transport",
	.test_cases = srdma_transport_test_cases,
};

kunit_test_suite(srdma_transport_test_suite);
