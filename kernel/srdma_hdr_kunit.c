// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suites of the wire format (srdma_hdr.h), built into the module with
 * SRDMA_KUNIT=y like srdma_kunit.c:
 *
 *   softrdma_hdr   the opcode table against IBTA Table 38; build then parse
 *                  of every opcode, in linear and non-linear skbs; each
 *                  class of malformed packet; AETH encodings; drop names
 *   softrdma_psn   24-bit PSN arithmetic across 2^24 and at the 2^23
 *                  window, the RNR NAK timer table, the local ACK timeout
 *
 * The suite of the ICRC, on packets captured from rdma_rxe, is in
 * srdma_icrc_kunit.c; the test skbs are made in srdma_kunit_skb.c.
 */

#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "srdma_hdr.h"
#include "srdma_kunit_skb.h"

/* --- softrdma_hdr: the opcode table --- */

/* IBTA 9.3: sizes of the extended headers, stated here independently. */
static const u8 srdma_test_hdr_size[SRDMA_HDR_NUM] = {
	[SRDMA_HDR_RDETH] = 4, [SRDMA_HDR_DETH] = 8, [SRDMA_HDR_RETH] = 16,
	[SRDMA_HDR_ATMETH] = 28, [SRDMA_HDR_AETH] = 4, [SRDMA_HDR_ATMACK] = 8,
	[SRDMA_HDR_IMMDT] = 4, [SRDMA_HDR_IETH] = 4,
};

#define SRDMA_TEST_OPS	(SRDMA_OPF_SEND | SRDMA_OPF_WRITE | SRDMA_OPF_READ | \
			 SRDMA_OPF_READ_RESP | SRDMA_OPF_ATOMIC | \
			 SRDMA_OPF_ACK | SRDMA_OPF_ATOMIC_ACK)
#define SRDMA_TEST_POS	(SRDMA_OPF_FIRST | SRDMA_OPF_MIDDLE | SRDMA_OPF_LAST)

/* The extended headers Table 38 gives an opcode, from its semantics. */
static u8 srdma_test_want_hdrs(u8 op, u32 f)
{
	u8 hdrs = 0;

	if (srdma_opcode_transport(op) == SRDMA_TRANSPORT_UD)
		hdrs |= BIT(SRDMA_HDR_DETH);
	if (((f & SRDMA_OPF_WRITE) && (f & SRDMA_OPF_FIRST)) ||
	    (f & SRDMA_OPF_READ))
		hdrs |= BIT(SRDMA_HDR_RETH);
	if (f & SRDMA_OPF_ATOMIC)
		hdrs |= BIT(SRDMA_HDR_ATMETH);
	if (f & (SRDMA_OPF_ACK | SRDMA_OPF_ATOMIC_ACK) ||
	    ((f & SRDMA_OPF_READ_RESP) && !(f & SRDMA_OPF_MIDDLE)))
		hdrs |= BIT(SRDMA_HDR_AETH);
	if (f & SRDMA_OPF_ATOMIC_ACK)
		hdrs |= BIT(SRDMA_HDR_ATMACK);
	if (f & SRDMA_OPF_IMM)
		hdrs |= BIT(SRDMA_HDR_IMMDT);
	if (f & SRDMA_OPF_INV)
		hdrs |= BIT(SRDMA_HDR_IETH);
	return hdrs;
}

static void srdma_check_opcode(struct kunit *test, u8 op,
			       const struct srdma_opcode_info *info)
{
	static const char *const prefix[] = {
		[SRDMA_TRANSPORT_RC >> 5] = "RC_",
		[SRDMA_TRANSPORT_UC >> 5] = "UC_",
		[SRDMA_TRANSPORT_UD >> 5] = "UD_",
	};
	enum srdma_transport tr = srdma_opcode_transport(op);
	u32 f = info->flags, pos = f & SRDMA_TEST_POS;
	unsigned int h, off = SRDMA_BTH_LEN;

	KUNIT_ASSERT_TRUE_MSG(test, tr == SRDMA_TRANSPORT_RC ||
			      tr == SRDMA_TRANSPORT_UC ||
			      tr == SRDMA_TRANSPORT_UD, "op %#x", op);
	KUNIT_EXPECT_EQ_MSG(test, strncmp(info->name, prefix[tr >> 5], 3), 0,
			    "op %#x", op);
	KUNIT_EXPECT_EQ_MSG(test, hweight32(f & SRDMA_TEST_OPS), 1U,
			    "op %#x", op);
	KUNIT_EXPECT_NE_MSG(test, !(f & SRDMA_OPF_REQ), !(f & SRDMA_OPF_RESP),
			    "op %#x", op);
	KUNIT_EXPECT_TRUE_MSG(test, pos == SRDMA_OPF_FIRST ||
			      pos == SRDMA_OPF_MIDDLE || pos == SRDMA_OPF_LAST ||
			      pos == SRDMA_OPF_ONLY, "op %#x", op);
	KUNIT_EXPECT_EQ_MSG(test, !!(f & SRDMA_OPF_PAYLOAD),
			    !!(f & (SRDMA_OPF_SEND | SRDMA_OPF_WRITE |
				    SRDMA_OPF_READ_RESP)), "op %#x", op);
	KUNIT_EXPECT_EQ_MSG(test, !!(f & SRDMA_OPF_RWR),
			    (f & SRDMA_OPF_SEND) ||
			    ((f & SRDMA_OPF_WRITE) && (f & SRDMA_OPF_IMM)),
			    "op %#x", op);
	/* Immediate data and invalidation come with the end of a message. */
	if (f & (SRDMA_OPF_IMM | SRDMA_OPF_INV))
		KUNIT_EXPECT_TRUE_MSG(test, f & SRDMA_OPF_LAST, "op %#x", op);
	/* 9.4.1.1: SEND with Invalidate is RC only; UC has SEND and WRITE
	 * only (9.8.2); UD has single-packet SENDs only (9.8.3).
	 */
	if (f & SRDMA_OPF_INV)
		KUNIT_EXPECT_EQ_MSG(test, tr, SRDMA_TRANSPORT_RC, "op %#x", op);
	if (tr == SRDMA_TRANSPORT_UC)
		KUNIT_EXPECT_TRUE_MSG(test, f & (SRDMA_OPF_SEND |
						 SRDMA_OPF_WRITE),
				      "op %#x", op);
	if (tr == SRDMA_TRANSPORT_UD)
		KUNIT_EXPECT_TRUE_MSG(test, (f & SRDMA_OPF_SEND) &&
				      pos == SRDMA_OPF_ONLY, "op %#x", op);

	/* Headers present, in enum order, each right after the previous. */
	KUNIT_EXPECT_EQ_MSG(test, info->hdrs, srdma_test_want_hdrs(op, f),
			    "op %#x", op);
	for (h = 0; h < SRDMA_HDR_NUM; h++) {
		if (!srdma_opcode_has(info, h)) {
			KUNIT_EXPECT_EQ_MSG(test, info->off[h], 0,
					    "op %#x hdr %u", op, h);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, info->off[h], off,
				    "op %#x hdr %u", op, h);
		off += srdma_test_hdr_size[h];
	}
	KUNIT_EXPECT_EQ_MSG(test, info->hdr_len, off, "op %#x", op);
	KUNIT_EXPECT_LE_MSG(test, off, (unsigned int)SRDMA_MAX_HDR_LEN,
			    "op %#x", op);
	KUNIT_EXPECT_EQ_MSG(test, srdma_pkt_hdr_len(op), off, "op %#x", op);
}

static void srdma_opcode_table_test(struct kunit *test)
{
	/* Not supported, or reserved: must stay unknown. */
	static const u8 unknown[] = {
		0x15, 0x18, 0x1c, 0x1f, 0x2c, 0x31, 0x3f, 0x40, 0x44, 0x55,
		0x60, 0x66, 0x80, 0x81, 0xa0, 0xa4, 0xc0, 0xe0, 0xff,
	};
	/* Header lengths of Table 38, spot-checked as plain numbers. */
	static const struct { u8 op, len; } lens[] = {
		{ SRDMA_OP_RC_SEND_FIRST, 12 }, { SRDMA_OP_RC_SEND_ONLY_IMM, 16 },
		{ SRDMA_OP_RC_WRITE_FIRST, 28 }, { SRDMA_OP_RC_WRITE_ONLY_IMM, 32 },
		{ SRDMA_OP_RC_READ_REQ, 28 }, { SRDMA_OP_RC_READ_RESP_MIDDLE, 12 },
		{ SRDMA_OP_RC_READ_RESP_ONLY, 16 }, { SRDMA_OP_RC_ACK, 16 },
		{ SRDMA_OP_RC_ATOMIC_ACK, 24 }, { SRDMA_OP_RC_FETCH_ADD, 40 },
		{ SRDMA_OP_RC_SEND_ONLY_INV, 16 }, { SRDMA_OP_UC_WRITE_ONLY, 28 },
		{ SRDMA_OP_UD_SEND_ONLY, 20 }, { SRDMA_OP_UD_SEND_ONLY_IMM, 24 },
	};
	const struct srdma_opcode_info *info;
	unsigned int op, known = 0;

	for (op = 0; op < 256; op++) {
		info = srdma_opcode(op);
		if (!info) {
			KUNIT_EXPECT_EQ_MSG(test, srdma_pkt_hdr_len(op), 0U,
					    "op %#x", op);
			continue;
		}
		known++;
		srdma_check_opcode(test, op, info);
	}
	/* RC 0x00-0x14, 0x16, 0x17; UC 0x20-0x2b; UD 0x64, 0x65 */
	KUNIT_EXPECT_EQ(test, known, 23U + 12U + 2U);

	for (op = 0; op < ARRAY_SIZE(unknown); op++)
		KUNIT_EXPECT_NULL_MSG(test, srdma_opcode(unknown[op]),
				      "op %#x", unknown[op]);
	for (op = 0; op < ARRAY_SIZE(lens); op++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_pkt_hdr_len(lens[op].op),
				    (unsigned int)lens[op].len,
				    "op %#x", lens[op].op);
}

/* --- softrdma_hdr: build then parse every opcode --- */

/* The opcode of a table entry (the entry does not carry it). */
static u8 srdma_test_opcode_of(const struct srdma_opcode_info *info)
{
	unsigned int op;

	for (op = 0; op < 256; op++)
		if (srdma_opcode(op) == info)
			return op;
	return 0;
}

static const void *srdma_known_op_gen(const void *prev, char *desc)
{
	const struct srdma_opcode_info *info = NULL;
	unsigned int op = prev ? srdma_test_opcode_of(prev) + 1 : 0;

	for (; op < 256 && !info; op++)
		info = srdma_opcode(op);
	if (info)
		snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", info->name);
	return info;
}

/* A packet of opcode @op with a distinctive value in every field it has. */
static void srdma_test_fill_pkt(struct srdma_pkt *pkt, u8 op,
				const struct srdma_opcode_info *info)
{
	u32 f = info->flags;

	*pkt = (struct srdma_pkt){
		.info = info, .opcode = op, .hdr_len = info->hdr_len,
		.migreq = true, .ackreq = f & SRDMA_OPF_REQ,
		.se = (f & SRDMA_OPF_LAST) &&
		      (f & (SRDMA_OPF_SEND | SRDMA_OPF_IMM)),
		.pkey = 0x8123, .qpn = 0xabcdef, .psn = 0xfedcba,
	};
	if (f & SRDMA_OPF_PAYLOAD) {
		if ((f & SRDMA_OPF_ONLY) == SRDMA_OPF_ONLY)
			pkt->paylen = 5;
		else if (f & SRDMA_OPF_LAST)
			pkt->paylen = 1;
		else
			pkt->paylen = 256;
		pkt->pad = -pkt->paylen & 3;
	}
	if (srdma_opcode_has(info, SRDMA_HDR_DETH)) {
		pkt->deth.qkey = 0x80010000;
		pkt->deth.src_qp = 0x123456;
	}
	if (srdma_opcode_has(info, SRDMA_HDR_RETH)) {
		pkt->reth.va = 0x0123456789abcdefULL;
		pkt->reth.rkey = 0x89abcdef;
		pkt->reth.len = 0x80000000;
	}
	if (srdma_opcode_has(info, SRDMA_HDR_ATMETH)) {
		pkt->atmeth.va = 0xfedcba9876543210ULL;
		pkt->atmeth.rkey = 0x13579bdf;
		pkt->atmeth.swap_add = 0x1122334455667788ULL;
		pkt->atmeth.compare = 0x99aabbccddeeff00ULL;
	}
	if (srdma_opcode_has(info, SRDMA_HDR_AETH)) {
		pkt->aeth.syndrome = srdma_syn(SRDMA_SYN_ACK, 17);
		pkt->aeth.msn = 0xa5a5a5;
	}
	if (srdma_opcode_has(info, SRDMA_HDR_ATMACK))
		pkt->atmack_orig = 0x0102030405060708ULL;
	if (srdma_opcode_has(info, SRDMA_HDR_IMMDT))
		pkt->imm = cpu_to_be32(0xdeadbeef);
	if (srdma_opcode_has(info, SRDMA_HDR_IETH))
		pkt->ieth_rkey = 0x2468ace0;
}

static void srdma_roundtrip_test(struct kunit *test)
{
	const struct srdma_opcode_info *info = test->param_value;
	const struct srdma_layout layouts[] = {
		{ "linear", SRDMA_SHAPE_LINEAR },
		{ "paged", SRDMA_SHAPE_FRAGS, 0, info->hdr_len / 2 },
		{ "split in BTH", SRDMA_SHAPE_FRAGS, 5, info->hdr_len - 1 },
		{ "frag_list", SRDMA_SHAPE_FRAG_LIST, 5 },
	};
	u8 op = srdma_test_opcode_of(info);
	struct srdma_pkt want, got;
	unsigned int len, i;
	struct sk_buff *skb;
	u8 *buf, *payload;

	srdma_test_fill_pkt(&want, op, info);
	len = info->hdr_len + want.paylen + want.pad + SRDMA_ICRC_SIZE;
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	payload = srdma_pkt_build_hdrs(buf, &want);
	KUNIT_ASSERT_PTR_EQ(test, payload, buf + info->hdr_len);
	memset(payload, 0xa5, want.paylen);
	/* The fixed bits of the BTH: TVer 0, resv8a 0, Resv7 0 (C9-5..7) */
	KUNIT_EXPECT_EQ(test, buf[0], op);
	KUNIT_EXPECT_EQ(test, buf[1] & 0x0f, 0);
	KUNIT_EXPECT_EQ(test, buf[4], 0);
	KUNIT_EXPECT_EQ(test, buf[8] & 0x7f, 0);

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		skb = srdma_test_skb(buf, len, &layouts[i]);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_EXPECT_EQ_MSG(test, srdma_pkt_parse(skb, &got),
				    SRDMA_DROP_NONE, "%s", layouts[i].name);
		KUNIT_EXPECT_PTR_EQ(test, got.info, info);
		srdma_expect_pkt(test, &got, &want, layouts[i].name);
		kfree_skb(skb);
	}
}

/* Values wider than their wire fields are cut to them, nothing spills. */
static void srdma_build_truncate_test(struct kunit *test)
{
	struct srdma_pkt pkt = {
		.opcode = SRDMA_OP_UD_SEND_ONLY, .pad = 7, .pkey = 0xffff,
		.qpn = 0xff000001, .psn = 0xff000002, .ackreq = true,
		.deth = { .qkey = 0x11111111, .src_qp = 0xff000003 },
	};
	static const u8 want[SRDMA_BTH_LEN + SRDMA_DETH_LEN] = {
		0x64, 0x30, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
		0x80, 0x00, 0x00, 0x02, 0x11, 0x11, 0x11, 0x11,
		0x00, 0x00, 0x00, 0x03,
	};
	u8 buf[sizeof(want)];

	KUNIT_ASSERT_PTR_EQ(test, srdma_pkt_build_hdrs(buf, &pkt),
			    (void *)(buf + sizeof(buf)));
	KUNIT_EXPECT_EQ(test, memcmp(buf, want, sizeof(want)), 0);
}

/* --- softrdma_hdr: what the parser drops --- */

#define SRDMA_T_PAD(n)	((n) << 4)
#define SRDMA_T_SE	0x80
#define SRDMA_T_MIG	0x40

struct srdma_bad_case {
	const char *name;
	u8 opcode;
	u8 flags;		/* BTH byte 1: SE, M, PadCnt, TVer */
	u16 room;		/* bytes between the headers and the ICRC */
	int len;		/* total length; -1: headers + room + ICRC */
	u8 syn;			/* AETH syndrome, when the opcode has one */
	u8 resv;		/* resv8a, and Resv7 from its low 7 bits */
	enum srdma_drop want;
};

static const struct srdma_bad_case srdma_bad_cases[] = {
	/* 1. room for BTH and ICRC */
	{ "empty", SRDMA_OP_RC_SEND_ONLY, 0, 0, 0, 0, 0,
	  SRDMA_DROP_TOO_SHORT },
	{ "BTH without ICRC", SRDMA_OP_RC_SEND_ONLY, 0, 0, 12, 0, 0,
	  SRDMA_DROP_TOO_SHORT },
	{ "15 bytes", SRDMA_OP_RC_SEND_ONLY, 0, 0, 15, 0, 0,
	  SRDMA_DROP_TOO_SHORT },
	/* 2. TVer, before the opcode means anything */
	{ "TVer 1", SRDMA_OP_RC_SEND_ONLY, 1, 0, -1, 0, 0,
	  SRDMA_DROP_BAD_TVER },
	{ "TVer 15, reserved opcode", 0x15, 15, 0, -1, 0, 0,
	  SRDMA_DROP_BAD_TVER },
	/* 3. opcode */
	{ "RC reserved 0x15", 0x15, 0, 0, -1, 0, 0, SRDMA_DROP_INVALID_REQ },
	{ "RC reserved 0x1f", 0x1f, 0, 0, -1, 0, 0, SRDMA_DROP_INVALID_REQ },
	{ "RC reserved 0x18, 8 bytes", 0x18, 0, 8, -1, 0, 0,
	  SRDMA_DROP_INVALID_REQ },
	{ "RC reserved, length not a multiple of 4", 0x1f, 0, 3, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "UC READ request", 0x2c, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "UC ACKNOWLEDGE", 0x31, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "RD SEND_ONLY", 0x44, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "UD SEND_FIRST", 0x60, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "CNP", SRDMA_OP_CNP, 0, 16, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "XRC SEND_ONLY", 0xa4, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "manufacturer 0xc0", 0xc0, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "manufacturer 0xff", 0xff, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	/* 4. length */
	{ "length not a multiple of 4", SRDMA_OP_RC_SEND_ONLY, 0, 5, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "RETH cut short", SRDMA_OP_RC_WRITE_FIRST, 0, 0, 24, 0, 0,
	  SRDMA_DROP_TRUNCATED },
	{ "AtomicETH cut short", SRDMA_OP_RC_CMP_SWAP, 0, 0, 40, 0, 0,
	  SRDMA_DROP_TRUNCATED },
	{ "DETH missing", SRDMA_OP_UD_SEND_ONLY, 0, 0, 16, 0, 0,
	  SRDMA_DROP_TRUNCATED },
	{ "ImmDt missing", SRDMA_OP_RC_SEND_ONLY_IMM, 0, 0, 16, 0, 0,
	  SRDMA_DROP_TRUNCATED },
	{ "AETH missing", SRDMA_OP_RC_ACK, 0, 0, 16, 0, 0,
	  SRDMA_DROP_TRUNCATED },
	/* 5. pad and payload */
	{ "payload on ACK", SRDMA_OP_RC_ACK, 0, 4, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "payload on READ request", SRDMA_OP_RC_READ_REQ, 0, 8, -1, 0, 0,
	  SRDMA_DROP_INVALID_REQ },
	{ "payload on FETCH_ADD", SRDMA_OP_RC_FETCH_ADD, 0, 4, -1, 0, 0,
	  SRDMA_DROP_INVALID_REQ },
	{ "empty SEND_FIRST", SRDMA_OP_RC_SEND_FIRST, 0, 0, -1, 0, 0,
	  SRDMA_DROP_INVALID_REQ },
	{ "empty UC SEND_MIDDLE", SRDMA_OP_UC_SEND_MIDDLE, 0, 0, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "empty WRITE_LAST", SRDMA_OP_RC_WRITE_LAST, 0, 0, -1, 0, 0,
	  SRDMA_DROP_INVALID_REQ },
	{ "empty UC WRITE_LAST", SRDMA_OP_UC_WRITE_LAST, 0, 0, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "empty READ_RESPONSE_MIDDLE", SRDMA_OP_RC_READ_RESP_MIDDLE, 0, 0, -1,
	  0, 0, SRDMA_DROP_BAD_LENGTH },
	{ "pad on SEND_FIRST", SRDMA_OP_RC_SEND_FIRST, SRDMA_T_PAD(1), 256, -1,
	  0, 0, SRDMA_DROP_INVALID_REQ },
	{ "pad on WRITE_MIDDLE", SRDMA_OP_RC_WRITE_MIDDLE, SRDMA_T_PAD(3), 256,
	  -1, 0, 0, SRDMA_DROP_INVALID_REQ },
	{ "pad on UC SEND_FIRST", SRDMA_OP_UC_SEND_FIRST, SRDMA_T_PAD(1), 256,
	  -1, 0, 0, SRDMA_DROP_BAD_PAD },
	{ "pad on READ_RESPONSE_FIRST", SRDMA_OP_RC_READ_RESP_FIRST,
	  SRDMA_T_PAD(1), 256, -1, 0x1f, 0, SRDMA_DROP_BAD_PAD },
	{ "pad on ACK", SRDMA_OP_RC_ACK, SRDMA_T_PAD(2), 0, -1, 0, 0,
	  SRDMA_DROP_BAD_PAD },
	{ "pad on READ request", SRDMA_OP_RC_READ_REQ, SRDMA_T_PAD(1), 0, -1,
	  0, 0, SRDMA_DROP_INVALID_REQ },
	{ "pad without payload", SRDMA_OP_RC_SEND_ONLY, SRDMA_T_PAD(1), 0, -1,
	  0, 0, SRDMA_DROP_INVALID_REQ },
	{ "pad longer than payload", SRDMA_OP_UD_SEND_ONLY, SRDMA_T_PAD(3), 0,
	  -1, 0, 0, SRDMA_DROP_BAD_PAD },
	/* 6. AETH syndrome */
	{ "reserved syndrome 010", SRDMA_OP_RC_ACK, 0, 0, -1, 0x40, 0,
	  SRDMA_DROP_BAD_AETH },
	{ "reserved syndrome msb", SRDMA_OP_RC_ACK, 0, 0, -1, 0x80, 0,
	  SRDMA_DROP_BAD_AETH },
	{ "reserved NAK code 5", SRDMA_OP_RC_ACK, 0, 0, -1, 0x65, 0,
	  SRDMA_DROP_BAD_AETH },
	{ "reserved NAK code 31", SRDMA_OP_RC_ATOMIC_ACK, 0, 0, -1, 0x7f, 0,
	  SRDMA_DROP_BAD_AETH },
	{ "reserved syndrome on READ response", SRDMA_OP_RC_READ_RESP_FIRST, 0,
	  256, -1, 0x5f, 0, SRDMA_DROP_BAD_AETH },
	{ "NAK on READ response", SRDMA_OP_RC_READ_RESP_ONLY, 0, 0, -1, 0x61,
	  0, SRDMA_DROP_BAD_AETH },
	{ "RNR NAK on READ response", SRDMA_OP_RC_READ_RESP_LAST, 0, 4, -1,
	  0x2e, 0, SRDMA_DROP_BAD_AETH },
	{ "NAK on atomic ACK", SRDMA_OP_RC_ATOMIC_ACK, 0, 0, -1, 0x62, 0,
	  SRDMA_DROP_BAD_AETH },
	/* and the edges that are fine */
	{ "empty SEND_ONLY", SRDMA_OP_RC_SEND_ONLY, 0, 0, -1, 0, 0,
	  SRDMA_DROP_NONE },
	{ "SEND_LAST of 1 byte", SRDMA_OP_RC_SEND_LAST, SRDMA_T_PAD(3), 4, -1,
	  0, 0, SRDMA_DROP_NONE },
	{ "empty READ_RESPONSE_ONLY", SRDMA_OP_RC_READ_RESP_ONLY, 0, 0, -1,
	  0x1f, 0, SRDMA_DROP_NONE },
	{ "NAK invalid RD request", SRDMA_OP_RC_ACK, 0, 0, -1, 0x64, 0,
	  SRDMA_DROP_NONE },
	{ "RNR NAK timer 31", SRDMA_OP_RC_ACK, 0, 0, -1, 0x3f, 0,
	  SRDMA_DROP_NONE },
	{ "reserved bits set (C9-6, C9-7)", SRDMA_OP_RC_SEND_ONLY, 0, 4, -1, 0,
	  0xff, SRDMA_DROP_NONE },
	{ "SE and M on an ACK (C9-4)", SRDMA_OP_RC_ACK,
	  SRDMA_T_SE | SRDMA_T_MIG, 0, -1, 0, 0, SRDMA_DROP_NONE },
	{ "UD with immediate and pad", SRDMA_OP_UD_SEND_ONLY_IMM,
	  SRDMA_T_PAD(3), 4, -1, 0, 0, SRDMA_DROP_NONE },
};

static void srdma_bad_case_desc(const struct srdma_bad_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_bad, srdma_bad_cases, srdma_bad_case_desc);

static void srdma_parse_reject_test(struct kunit *test)
{
	const struct srdma_bad_case *c = test->param_value;
	const struct srdma_opcode_info *info = srdma_opcode(c->opcode);
	unsigned int hdr_len = info ? info->hdr_len : SRDMA_BTH_LEN;
	unsigned int len = c->len >= 0 ? c->len :
			   hdr_len + c->room + SRDMA_ICRC_SIZE;
	const struct srdma_layout layouts[] = {
		{ "linear", SRDMA_SHAPE_LINEAR },
		{ "paged", SRDMA_SHAPE_FRAGS, 0, len / 2 },
	};
	struct srdma_pkt pkt;
	struct sk_buff *skb;
	unsigned int i;
	u8 *buf;

	/* Encoded by hand, not with srdma_pkt_build_hdrs(). */
	buf = kunit_kzalloc(test, SRDMA_MAX_HDR_LEN + 256 + SRDMA_ICRC_SIZE,
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	buf[0] = c->opcode;
	buf[1] = c->flags;
	buf[2] = 0xff;
	buf[3] = 0xff;
	buf[4] = c->resv;
	buf[7] = 0x11;
	buf[8] = c->resv & 0x7f;
	buf[11] = 0x42;
	if (info && srdma_opcode_has(info, SRDMA_HDR_AETH))
		buf[info->off[SRDMA_HDR_AETH]] = c->syn;

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		skb = srdma_test_skb(buf, len, &layouts[i]);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_EXPECT_EQ_MSG(test, srdma_pkt_parse(skb, &pkt), c->want,
				    "%s", layouts[i].name);
		/* An invalid RC request keeps its BTH, for the NAK. */
		KUNIT_EXPECT_EQ(test, pkt.invalid_req,
				c->want == SRDMA_DROP_INVALID_REQ);
		if (c->want == SRDMA_DROP_INVALID_REQ) {
			KUNIT_EXPECT_EQ(test, pkt.opcode, c->opcode);
			KUNIT_EXPECT_EQ(test, pkt.qpn, 0x11U);
			KUNIT_EXPECT_EQ(test, pkt.psn, 0x42U);
			KUNIT_EXPECT_EQ(test, pkt.paylen, 0U);
		}
		if (c->want == SRDMA_DROP_NONE) {
			KUNIT_EXPECT_EQ(test, pkt.qpn, 0x11U);
			KUNIT_EXPECT_EQ(test, pkt.psn, 0x42U);
			KUNIT_EXPECT_EQ(test, pkt.hdr_len + pkt.paylen + pkt.pad +
					SRDMA_ICRC_SIZE, len);
		}
		kfree_skb(skb);
	}
}

static void srdma_drop_name_test(struct kunit *test)
{
	static const char lower[] = "abcdefghijklmnopqrstuvwxyz_";
	unsigned int i, j;
	const char *name;

	KUNIT_EXPECT_STREQ(test, srdma_drop_name(SRDMA_DROP_NONE), "none");
	KUNIT_EXPECT_STREQ(test, srdma_drop_name(SRDMA_DROP_MAX), "invalid");
	for (i = 1; i < SRDMA_DROP_MAX; i++) {
		name = srdma_drop_name(i);
		KUNIT_ASSERT_NOT_NULL_MSG(test, name, "reason %u", i);
		/* usable as rdma_hw_stats counter names */
		KUNIT_EXPECT_EQ_MSG(test, strncmp(name, "rx_drop_", 8), 0,
				    "%s", name);
		KUNIT_EXPECT_EQ_MSG(test, strspn(name, lower), strlen(name),
				    "%s", name);
		for (j = 1; j < i; j++)
			KUNIT_EXPECT_STRNEQ(test, name, srdma_drop_name(j));
	}
}

/* --- softrdma_hdr: AETH encodings (IBTA 9.7.5.2, Tables 46, 47, 50) --- */

static void srdma_aeth_syndrome_test(struct kunit *test)
{
	/* The values rdma_rxe put on the wire in the captures below. */
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_ACK, SRDMA_CREDITS_INVALID),
			0x1f);
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_RNR, IB_RNR_TIMER_000_01),
			0x21);
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_NAK, SRDMA_NAK_PSN_SEQ), 0x60);
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_NAK, SRDMA_NAK_REMOTE_ACCESS),
			0x62);
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_NAK, SRDMA_NAK_INVALID_REQ),
			0x61);
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_NAK, SRDMA_NAK_REMOTE_OP),
			0x63);
	/* the value is cut to 5 bits and the reserved msb stays clear */
	KUNIT_EXPECT_EQ(test, srdma_syn(SRDMA_SYN_ACK, 0xff), 0x1f);
	KUNIT_EXPECT_EQ(test, srdma_syn_type(0x62), SRDMA_SYN_NAK);
	KUNIT_EXPECT_EQ(test, srdma_syn_value(0x62), SRDMA_NAK_REMOTE_ACCESS);
	KUNIT_EXPECT_EQ(test, srdma_syn_type(0x3f), SRDMA_SYN_RNR);
	KUNIT_EXPECT_EQ(test, srdma_syn_value(0x3f), 31);
	KUNIT_EXPECT_EQ(test, srdma_syn_type(0x4a), SRDMA_SYN_RESERVED);
}

static void srdma_aeth_credit_test(struct kunit *test)
{
	/* Table 50, written out */
	static const u32 counts[31] = {
		0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
		384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
		16384, 24576, 32768,
	};
	u8 code;

	for (code = 0; code < ARRAY_SIZE(counts); code++) {
		KUNIT_EXPECT_EQ_MSG(test, srdma_aeth_credits(code), counts[code],
				    "code %u", code);
		KUNIT_EXPECT_EQ_MSG(test, srdma_aeth_credit_code(counts[code]),
				    code, "code %u", code);
		/* one short of a count rounds down to the code below */
		if (code > 0)
			KUNIT_EXPECT_EQ_MSG(test,
					    srdma_aeth_credit_code(counts[code] - 1),
					    code - 1, "code %u", code);
	}
	KUNIT_EXPECT_EQ(test, srdma_aeth_credits(SRDMA_CREDITS_INVALID),
			U32_MAX);
	KUNIT_EXPECT_EQ(test, srdma_aeth_credits(0x20 | 5), 6U);
	KUNIT_EXPECT_EQ(test, srdma_aeth_credit_code(5), 4);
	KUNIT_EXPECT_EQ(test, srdma_aeth_credit_code(40000), 30);
	KUNIT_EXPECT_EQ(test, srdma_aeth_credit_code(U32_MAX), 30);
}

static struct kunit_case srdma_hdr_test_cases[] = {
	KUNIT_CASE(srdma_opcode_table_test),
	KUNIT_CASE_PARAM(srdma_roundtrip_test, srdma_known_op_gen),
	KUNIT_CASE(srdma_build_truncate_test),
	KUNIT_CASE_PARAM(srdma_parse_reject_test, srdma_bad_gen_params),
	KUNIT_CASE(srdma_drop_name_test),
	KUNIT_CASE(srdma_aeth_syndrome_test),
	KUNIT_CASE(srdma_aeth_credit_test),
	{}
};

static struct kunit_suite srdma_hdr_test_suite = {
	.name = "softrdma_hdr",
	.test_cases = srdma_hdr_test_cases,
};

/* --- softrdma_psn: 24-bit PSN arithmetic (IBTA 9.7.1, 9.7.4) --- */

struct srdma_psn_case {
	const char *name;
	u32 a, b;
	s32 diff;		/* a - b in the 2^23 window */
	bool before, after;	/* a before b, a after b */
};

static const struct srdma_psn_case srdma_psn_cases[] = {
	{ "equal", 0x123456, 0x123456, 0, false, false },
	{ "one after", 1, 0, 1, false, true },
	{ "one before", 0, 1, -1, true, false },
	{ "after across 2^24", 0, 0xffffff, 1, false, true },
	{ "before across 2^24", 0xffffff, 0, -1, true, false },
	{ "5 across 2^24", 0x000003, 0xfffffe, 5, false, true },
	{ "farthest after", 0x7fffff, 0, 0x7fffff, false, true },
	{ "farthest after, wrapped", 0x7ffffe, 0xffffff, 0x7fffff, false,
	  true },
	{ "half window is before", 0x800000, 0, -0x800000, true, false },
	{ "half window, other side", 0, 0x800000, -0x800000, true, false },
	{ "just past half window", 0x800001, 0, -0x7fffff, true, false },
	{ "half window mid-space", 0x123456, 0x923456, -0x800000, true,
	  false },
	{ "bits above 24 ignored", 0xff000001, 0x00000001, 0, false, false },
};

static void srdma_psn_case_desc(const struct srdma_psn_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_psn, srdma_psn_cases, srdma_psn_case_desc);

static void srdma_psn_diff_test(struct kunit *test)
{
	const struct srdma_psn_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srdma_psn_diff(c->a, c->b), c->diff);
	KUNIT_EXPECT_EQ(test, srdma_psn_before(c->a, c->b), c->before);
	KUNIT_EXPECT_EQ(test, srdma_psn_after(c->a, c->b), c->after);
	/* stepping a by the distance lands on b's 24 bits */
	KUNIT_EXPECT_EQ(test, srdma_psn_add(c->b, c->diff),
			c->a & SRDMA_PSN_MASK);
}

static void srdma_psn_add_test(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, srdma_psn_add(0x123456, 0), 0x123456U);
	KUNIT_EXPECT_EQ(test, srdma_psn_add(0xffffff, 1), 0U);
	KUNIT_EXPECT_EQ(test, srdma_psn_add(0xfffffd, 5), 2U);
	KUNIT_EXPECT_EQ(test, srdma_psn_add(0, 0x1000000), 0U);
	KUNIT_EXPECT_EQ(test, srdma_psn_add(0x7fffff, SRDMA_PSN_WINDOW),
			0xffffffU);
	/* backwards, as a requester rewinding to a NAKed PSN does */
	KUNIT_EXPECT_EQ(test, srdma_psn_add(5, -1), 4U);
	KUNIT_EXPECT_EQ(test, srdma_psn_add(0, -1), 0xffffffU);
	KUNIT_EXPECT_EQ(test, srdma_psn_add(2, -5), 0xfffffdU);
}

/* IBTA Table 48, against the core's IB_RNR_TIMER_* names (ms in the name) */
struct srdma_rnr_case {
	u8 code;
	u32 usecs;
};

static const struct srdma_rnr_case srdma_rnr_cases[] = {
	{ IB_RNR_TIMER_655_36, 655360 }, { IB_RNR_TIMER_000_01, 10 },
	{ IB_RNR_TIMER_000_02, 20 }, { IB_RNR_TIMER_000_03, 30 },
	{ IB_RNR_TIMER_000_04, 40 }, { IB_RNR_TIMER_000_06, 60 },
	{ IB_RNR_TIMER_000_08, 80 }, { IB_RNR_TIMER_000_12, 120 },
	{ IB_RNR_TIMER_000_16, 160 }, { IB_RNR_TIMER_000_24, 240 },
	{ IB_RNR_TIMER_000_32, 320 }, { IB_RNR_TIMER_000_48, 480 },
	{ IB_RNR_TIMER_000_64, 640 }, { IB_RNR_TIMER_000_96, 960 },
	{ IB_RNR_TIMER_001_28, 1280 }, { IB_RNR_TIMER_001_92, 1920 },
	{ IB_RNR_TIMER_002_56, 2560 }, { IB_RNR_TIMER_003_84, 3840 },
	{ IB_RNR_TIMER_005_12, 5120 }, { IB_RNR_TIMER_007_68, 7680 },
	{ IB_RNR_TIMER_010_24, 10240 }, { IB_RNR_TIMER_015_36, 15360 },
	{ IB_RNR_TIMER_020_48, 20480 }, { IB_RNR_TIMER_030_72, 30720 },
	{ IB_RNR_TIMER_040_96, 40960 }, { IB_RNR_TIMER_061_44, 61440 },
	{ IB_RNR_TIMER_081_92, 81920 }, { IB_RNR_TIMER_122_88, 122880 },
	{ IB_RNR_TIMER_163_84, 163840 }, { IB_RNR_TIMER_245_76, 245760 },
	{ IB_RNR_TIMER_327_68, 327680 }, { IB_RNR_TIMER_491_52, 491520 },
};

static void srdma_rnr_case_desc(const struct srdma_rnr_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "code %u: %u us", c->code,
		 c->usecs);
}

KUNIT_ARRAY_PARAM(srdma_rnr, srdma_rnr_cases, srdma_rnr_case_desc);

static void srdma_rnr_timer_test(struct kunit *test)
{
	const struct srdma_rnr_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, srdma_rnr_timer_usecs(c->code), c->usecs);
	/* only the five bits of the AETH timer field count */
	KUNIT_EXPECT_EQ(test, srdma_rnr_timer_usecs(c->code | 0xe0), c->usecs);
}

static void srdma_ack_timeout_test(struct kunit *test)
{
	/* 4.096 us * 2^timeout; 0 is no timeout */
	KUNIT_EXPECT_EQ(test, srdma_ack_timeout_ns(0), 0ULL);
	KUNIT_EXPECT_EQ(test, srdma_ack_timeout_ns(1), 8192ULL);
	KUNIT_EXPECT_EQ(test, srdma_ack_timeout_ns(14), 67108864ULL);
	KUNIT_EXPECT_EQ(test, srdma_ack_timeout_ns(31), 8796093022208ULL);
	KUNIT_EXPECT_EQ(test, srdma_ack_timeout_ns(0x20 | 14), 67108864ULL);
}

static struct kunit_case srdma_psn_test_cases[] = {
	KUNIT_CASE_PARAM(srdma_psn_diff_test, srdma_psn_gen_params),
	KUNIT_CASE(srdma_psn_add_test),
	KUNIT_CASE_PARAM(srdma_rnr_timer_test, srdma_rnr_gen_params),
	KUNIT_CASE(srdma_ack_timeout_test),
	{}
};

static struct kunit_suite srdma_psn_test_suite = {
	.name = "softrdma_psn",
	.test_cases = srdma_psn_test_cases,
};

kunit_test_suites(&srdma_hdr_test_suite, &srdma_psn_test_suite);
