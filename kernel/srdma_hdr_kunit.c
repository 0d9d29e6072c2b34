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
 *   softrdma_icrc  ICRC check and fill, and the parser, on packets
 *                  captured from rdma_rxe
 *
 * The captured packets were sent by the rdma_rxe of Debian's 6.1 kernel in
 * a guest. The CM REQs are from "rping -c" towards an address with a static
 * neighbour on a dummy device, over IPv4 and IPv6. The RC, UC and UD
 * packets are from QPs of one rxe device talking to each other through an
 * address in a second network namespace, where a raw socket swapped the IP
 * addresses, recomputed the ICRC and sent each frame back; a SEND_MIDDLE
 * dropped there once provoked the PSN sequence NAK, a SEND before any
 * receive was posted the RNR NAK, a bad R_Key the remote access NAK, and
 * the requester's PSNs started at 0xfffffd to wrap. Only frames rxe sent
 * are used, from the IP header through the ICRC. The expected header
 * fields are tshark's decoding of the same frames, not softrdma's.
 */

#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/crc32.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "srdma_hdr.h"

/* --- skbs of every shape --- */

/*
 * How the bytes of a test packet are laid out in an skb: all in the linear
 * part; the first @head bytes linear and the rest in two page fragments
 * split at @split; or the rest in a second skb on the frag_list.
 */
enum srdma_shape {
	SRDMA_SHAPE_LINEAR,
	SRDMA_SHAPE_FRAGS,
	SRDMA_SHAPE_FRAG_LIST,
};

struct srdma_layout {
	const char *name;
	enum srdma_shape shape;
	unsigned int head;
	unsigned int split;
};

/* Fragments start inside their page, as they do in real receive paths. */
#define SRDMA_TEST_FRAG_OFF	100

static bool srdma_test_add_frag(struct sk_buff *skb, const u8 *data,
				unsigned int len)
{
	struct page *page;

	if (!len)
		return true;
	page = alloc_page(GFP_KERNEL);
	if (!page)
		return false;
	memcpy(page_address(page) + SRDMA_TEST_FRAG_OFF, data, len);
	skb_add_rx_frag(skb, skb_shinfo(skb)->nr_frags, page,
			SRDMA_TEST_FRAG_OFF, len, PAGE_SIZE);
	return true;
}

/* @len bytes of @data in an skb laid out as @l says (head <= split <= len) */
static struct sk_buff *srdma_test_skb(const u8 *data, unsigned int len,
				      const struct srdma_layout *l)
{
	unsigned int head = l->shape == SRDMA_SHAPE_LINEAR ? len :
			    min(l->head, len);
	unsigned int split = clamp(l->split, head, len);
	struct sk_buff *skb, *tail;

	skb = alloc_skb(head, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_put_data(skb, data, head);
	switch (l->shape) {
	case SRDMA_SHAPE_FRAGS:
		if (!srdma_test_add_frag(skb, data + head, split - head) ||
		    !srdma_test_add_frag(skb, data + split, len - split))
			goto err;
		break;
	case SRDMA_SHAPE_FRAG_LIST:
		tail = alloc_skb(len - head, GFP_KERNEL);
		if (!tail)
			goto err;
		skb_put_data(tail, data + head, len - head);
		skb_shinfo(skb)->frag_list = tail;
		skb->len += tail->len;
		skb->data_len += tail->len;
		skb->truesize += tail->truesize;
		break;
	case SRDMA_SHAPE_LINEAR:
		break;
	}
	return skb;
err:
	kfree_skb(skb);
	return NULL;
}

/* Every field of a parsed packet against what it should be. */
static void srdma_expect_pkt(struct kunit *test, const struct srdma_pkt *got,
			     const struct srdma_pkt *want, const char *what)
{
	KUNIT_EXPECT_EQ_MSG(test, got->opcode, want->opcode, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->pad, want->pad, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->se, want->se, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->migreq, want->migreq, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->ackreq, want->ackreq, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->pkey, want->pkey, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->qpn, want->qpn, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->psn, want->psn, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->hdr_len, want->hdr_len, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->paylen, want->paylen, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->reth.va, want->reth.va, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->reth.rkey, want->reth.rkey, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->reth.len, want->reth.len, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->atmeth.va, want->atmeth.va, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->atmeth.rkey, want->atmeth.rkey,
			    "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->atmeth.swap_add, want->atmeth.swap_add,
			    "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->atmeth.compare, want->atmeth.compare,
			    "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->aeth.syndrome, want->aeth.syndrome,
			    "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->aeth.msn, want->aeth.msn, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->atmack_orig, want->atmack_orig,
			    "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, be32_to_cpu(got->imm), be32_to_cpu(want->imm),
			    "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->ieth_rkey, want->ieth_rkey, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->deth.qkey, want->deth.qkey, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, got->deth.src_qp, want->deth.src_qp,
			    "%s", what);
}

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
	{ "RC reserved 0x15", 0x15, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
	{ "RC reserved 0x1f", 0x1f, 0, 0, -1, 0, 0, SRDMA_DROP_BAD_OPCODE },
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
	  SRDMA_DROP_BAD_LENGTH },
	{ "payload on FETCH_ADD", SRDMA_OP_RC_FETCH_ADD, 0, 4, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "empty SEND_FIRST", SRDMA_OP_RC_SEND_FIRST, 0, 0, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "empty UC SEND_MIDDLE", SRDMA_OP_UC_SEND_MIDDLE, 0, 0, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "empty WRITE_LAST", SRDMA_OP_RC_WRITE_LAST, 0, 0, -1, 0, 0,
	  SRDMA_DROP_BAD_LENGTH },
	{ "empty READ_RESPONSE_MIDDLE", SRDMA_OP_RC_READ_RESP_MIDDLE, 0, 0, -1,
	  0, 0, SRDMA_DROP_BAD_LENGTH },
	{ "pad on SEND_FIRST", SRDMA_OP_RC_SEND_FIRST, SRDMA_T_PAD(1), 256, -1,
	  0, 0, SRDMA_DROP_BAD_PAD },
	{ "pad on WRITE_MIDDLE", SRDMA_OP_RC_WRITE_MIDDLE, SRDMA_T_PAD(3), 256,
	  -1, 0, 0, SRDMA_DROP_BAD_PAD },
	{ "pad on ACK", SRDMA_OP_RC_ACK, SRDMA_T_PAD(2), 0, -1, 0, 0,
	  SRDMA_DROP_BAD_PAD },
	{ "pad on READ request", SRDMA_OP_RC_READ_REQ, SRDMA_T_PAD(1), 0, -1,
	  0, 0, SRDMA_DROP_BAD_PAD },
	{ "pad without payload", SRDMA_OP_RC_SEND_ONLY, SRDMA_T_PAD(1), 0, -1,
	  0, 0, SRDMA_DROP_BAD_PAD },
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

/* --- softrdma_icrc: packets captured from rdma_rxe --- */

/* IPv4, UD SEND_ONLY to QP1: a CM REQ MAD (rping -c) */
static const u8 srdma_cap_ud_cm_req_v4[] =
	"\x45\x00\x01\x34\xb7\x45\x40\x00\x40\x11\x6d\xd3\x0a\x4f\x00\x01"
	"\x0a\x4f\x00\x02\xd8\x72\x12\xb7\x01\x20\x00\x00\x64\x00\xff\xff"
	"\x00\x00\x00\x01\x80\x00\x00\x00\x80\x01\x00\x00\x00\x00\x00\x01"
	"\x01\x07\x02\x03\x00\x00\x00\x00\x00\x00\x00\x02\xcb\x68\x0b\x86"
	"\x00\x10\x00\x00\x00\x00\x00\x00\x86\x0b\x68\xcb\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x01\x06\x1c\x06\x14\x21\x68\xff\xfe\x6f\x29\x41"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x11\x01\x00\x00\x00\x01"
	"\x00\x00\x00\xa0\x06\x85\xe3\xa7\xff\xff\x37\xf0\xff\xff\xff\xff"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x0a\x4f\x00\x01"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x0a\x4f\x00\x02"
	"\x8d\x6a\xf0\x00\x00\x40\x00\x98\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x40\xcc\x37\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x0a\x4f\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x0a\x4f\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\xd8\xb6\xe6\x40";

/* IPv6, UD SEND_ONLY to QP1: a CM REQ MAD (rping -c) */
static const u8 srdma_cap_ud_cm_req_v6[] =
	"\x60\x00\x00\x00\x01\x20\x11\x40\xfd\x79\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xd8\x72\x12\xb7\x01\x20\x00\x00"
	"\x64\x00\xff\xff\x00\x00\x00\x01\x80\x00\x00\x05\x80\x01\x00\x00"
	"\x00\x00\x00\x01\x01\x07\x02\x03\x00\x00\x00\x00\x00\x00\x00\x02"
	"\xcb\x68\x0b\x87\x00\x10\x00\x00\x00\x00\x00\x00\x87\x0b\x68\xcb"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x01\x06\x1c\x06\x14\x21\x68\xff"
	"\xfe\x6f\x29\x41\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x12\x01"
	"\x00\x00\x00\x01\x00\x00\x00\xa0\xb2\x37\xb4\xa7\xff\xff\x37\xf0"
	"\xff\xff\xff\xff\xfd\x79\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x01\xfd\x79\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x02\xc9\x5b\xf0\x00\x00\x40\x00\x98\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x60\xeb\x27\xfd\x79\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x19\x8f\x23\x9e";

/* RC SEND_ONLY, 5 bytes and 3 of pad */
static const u8 srdma_cap_rc_send_only_pad3[] =
	"\x45\x00\x00\x34\x34\xdc\x40\x00\x40\x11\xef\x3c\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x20\x00\x00\x04\x30\xff\xff"
	"\x00\x00\x00\x12\x80\xff\xff\xfd\x01\x08\x0f\x16\x1d\x00\x00\x00"
	"\x73\xc1\x9f\x5a";

/* RC ACKNOWLEDGE, RNR NAK (timer code 1): no receive WQE posted */
static const u8 srdma_cap_rc_rnr_nak[] =
	"\x45\x00\x00\x30\x34\xde\x40\x00\x40\x11\xef\x3e\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\xff\xff\xfd\x21\x00\x00\x00\x7d\x24\x2b\x0f";

/* RC SEND_FIRST, 256 bytes (PMTU 256), PSN 0xfffffe */
static const u8 srdma_cap_rc_send_first_psn_fffffe[] =
	"\x45\x00\x01\x2c\x35\x83\x40\x00\x40\x11\xed\x9d\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x01\x18\x00\x00\x00\x00\xff\xff"
	"\x00\x00\x00\x12\x00\xff\xff\xfe\x01\x08\x0f\x16\x1d\x24\x2b\x32"
	"\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86\x8d\x94\x9b\xa2"
	"\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6\xfd\x04\x0b\x12"
	"\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66\x6d\x74\x7b\x82"
	"\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6\xdd\xe4\xeb\xf2"
	"\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46\x4d\x54\x5b\x62"
	"\x69\x70\x77\x7e\x85\x8c\x93\x9a\xa1\xa8\xaf\xb6\xbd\xc4\xcb\xd2"
	"\xd9\xe0\xe7\xee\xf5\xfc\x03\x0a\x11\x18\x1f\x26\x2d\x34\x3b\x42"
	"\x49\x50\x57\x5e\x65\x6c\x73\x7a\x81\x88\x8f\x96\x9d\xa4\xab\xb2"
	"\xb9\xc0\xc7\xce\xd5\xdc\xe3\xea\xf1\xf8\xff\x06\x0d\x14\x1b\x22"
	"\x29\x30\x37\x3e\x45\x4c\x53\x5a\x61\x68\x6f\x76\x7d\x84\x8b\x92"
	"\x99\xa0\xa7\xae\xb5\xbc\xc3\xca\xd1\xd8\xdf\xe6\xed\xf4\xfb\x02"
	"\x09\x10\x17\x1e\x25\x2c\x33\x3a\x41\x48\x4f\x56\x5d\x64\x6b\x72"
	"\x79\x80\x87\x8e\x95\x9c\xa3\xaa\xb1\xb8\xbf\xc6\xcd\xd4\xdb\xe2"
	"\xe9\xf0\xf7\xfe\x05\x0c\x13\x1a\x21\x28\x2f\x36\x3d\x44\x4b\x52"
	"\x59\x60\x67\x6e\x75\x7c\x83\x8a\x91\x98\x9f\xa6\xad\xb4\xbb\xc2"
	"\xc9\xd0\xd7\xde\xe5\xec\xf3\xfa\x0c\x76\x6b\xbb";

/* RC SEND_LAST_WITH_IMMEDIATE, SE, PSN wrapped to 0 */
static const u8 srdma_cap_rc_send_last_imm_psn_0[] =
	"\x45\x00\x00\x88\x35\x85\x40\x00\x40\x11\xee\x3f\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x74\x00\x00\x03\x80\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x00\x12\x34\x56\x78\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86"
	"\x8d\x94\x9b\xa2\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6"
	"\xfd\x04\x0b\x12\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66"
	"\x6d\x74\x7b\x82\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6"
	"\xdd\xe4\xeb\xf2\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46"
	"\x4d\x54\x5b\x62\x81\xf8\x38\xbc";

/* RC ACKNOWLEDGE, NAK PSN sequence error (SEND_MIDDLE lost) */
static const u8 srdma_cap_rc_nak_psn_seq[] =
	"\x45\x00\x00\x30\x35\x88\x40\x00\x40\x11\xee\x94\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\xff\xff\xff\x60\x00\x00\x01\x6d\xc6\x2b\x0f";

/* RC ACKNOWLEDGE, ACK with credit code 0x1f (no credits) */
static const u8 srdma_cap_rc_ack[] =
	"\x45\x00\x00\x30\x35\x80\x40\x00\x40\x11\xee\x9c\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\xff\xff\xfd\x1f\x00\x00\x01\x4c\x72\x6c\x5f";

/* RC RDMA_WRITE_LAST, 44 bytes */
static const u8 srdma_cap_rc_write_last[] =
	"\x45\x00\x00\x58\x35\x8f\x40\x00\x40\x11\xee\x65\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x44\x00\x00\x08\x00\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x02\x01\x08\x0f\x16\x1d\x24\x2b\x32"
	"\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86\x8d\x94\x9b\xa2"
	"\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6\xfd\x04\x0b\x12"
	"\x19\x20\x27\x2e\x41\xee\x82\x40";

/* RC RDMA_WRITE_ONLY_WITH_IMMEDIATE, 10 bytes and 2 of pad */
static const u8 srdma_cap_rc_write_only_imm[] =
	"\x45\x00\x00\x4c\x35\x90\x40\x00\x40\x11\xee\x70\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x38\x00\x00\x0b\x20\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x03\x00\x00\x55\xfe\xbb\xc2\x5e\x20"
	"\x00\x00\x02\x3b\x00\x00\x00\x0a\xca\xfe\x00\x01\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x00\x00\x82\x0c\x95\x25";

/* RC RDMA_READ_REQUEST for 700 bytes */
static const u8 srdma_cap_rc_read_req[] =
	"\x45\x00\x00\x3c\x35\x94\x40\x00\x40\x11\xee\x7c\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x28\x00\x00\x0c\x00\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x04\x00\x00\x55\xfe\xbb\xc2\x70\x00"
	"\x00\x00\x02\x3b\x00\x00\x02\xbc\xe3\x67\x1a\xae";

/* RC RDMA_READ_RESPONSE_LAST, 188 bytes */
static const u8 srdma_cap_rc_read_resp_last[] =
	"\x45\x00\x00\xec\x35\x98\x40\x00\x40\x11\xed\xc8\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\xd8\x00\x00\x0f\x00\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x06\x1f\x00\x00\x05\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86"
	"\x8d\x94\x9b\xa2\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6"
	"\xfd\x04\x0b\x12\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66"
	"\x6d\x74\x7b\x82\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6"
	"\xdd\xe4\xeb\xf2\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46"
	"\x4d\x54\x5b\x62\x69\x70\x77\x7e\x85\x8c\x93\x9a\xa1\xa8\xaf\xb6"
	"\xbd\xc4\xcb\xd2\xd9\xe0\xe7\xee\xf5\xfc\x03\x0a\x11\x18\x1f\x26"
	"\x2d\x34\x3b\x42\x49\x50\x57\x5e\x65\x6c\x73\x7a\x81\x88\x8f\x96"
	"\x9d\xa4\xab\xb2\xb9\xc0\xc7\xce\xd5\xdc\xe3\xea\xf1\xf8\xff\x06"
	"\x0d\x14\x1b\x22\x29\x30\x37\x3e\x45\x4c\x53\x5a\x61\x68\x6f\x76"
	"\x7d\x84\x8b\x92\x99\xa0\xa7\xae\xb5\xbc\xc3\xca\xd1\xd8\xdf\xe6"
	"\xed\xf4\xfb\x02\x09\x10\x17\x1e\xec\x8d\x0d\x1f";

/* RC RDMA_READ_RESPONSE_ONLY, 3 bytes and 1 of pad */
static const u8 srdma_cap_rc_read_resp_only_pad1[] =
	"\x45\x00\x00\x34\x35\x99\x40\x00\x40\x11\xee\x7f\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x20\x00\x00\x10\x10\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x07\x1f\x00\x00\x06\x01\x08\x0f\x00"
	"\xd9\xe5\x46\xc0";

/* RC COMPARE_SWAP */
static const u8 srdma_cap_rc_cmp_swap[] =
	"\x45\x00\x00\x48\x35\x9c\x40\x00\x40\x11\xee\x68\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x34\x00\x00\x13\x00\xff\xff"
	"\x00\x00\x00\x12\x80\x00\x00\x08\x00\x00\x55\xfe\xbb\xc2\xb0\x00"
	"\x00\x00\x02\x3b\x11\x12\x13\x14\x15\x16\x17\x18\x01\x02\x03\x04"
	"\x05\x06\x07\x08\xb0\x38\xb8\x2a";

/* RC ATOMIC_ACKNOWLEDGE of the COMPARE_SWAP */
static const u8 srdma_cap_rc_atomic_ack[] =
	"\x45\x00\x00\x38\x35\x9e\x40\x00\x40\x11\xee\x76\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x24\x00\x00\x12\x00\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x08\x1f\x00\x00\x07\x32\x2b\x24\x1d"
	"\x16\x0f\x08\x01\x55\x38\x83\x94";

/* RC ACKNOWLEDGE, NAK remote access error (bad R_Key) */
static const u8 srdma_cap_rc_nak_remote_access[] =
	"\x45\x00\x00\x30\x35\xb2\x40\x00\x40\x11\xee\x6a\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x32\x12\xb7\x00\x1c\x00\x00\x11\x00\xff\xff"
	"\x00\x00\x00\x11\x00\x00\x00\x0b\x62\x00\x00\x09\x56\x20\xad\xb0";

/* UC RDMA_WRITE_LAST_WITH_IMMEDIATE, 4 bytes */
static const u8 srdma_cap_uc_write_last_imm[] =
	"\x45\x00\x00\x34\x35\xa9\x40\x00\x40\x11\xee\x6f\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x7c\x12\xb7\x00\x20\x00\x00\x29\x00\xff\xff"
	"\x00\x00\x00\x14\x00\x80\x00\x03\x00\x00\xbe\xef\x01\x08\x0f\x16"
	"\xb7\xf6\xc9\x4b";

/* UD SEND_ONLY_WITH_IMMEDIATE, 4 bytes */
static const u8 srdma_cap_ud_send_only_imm[] =
	"\x45\x00\x00\x3c\x35\xae\x40\x00\x40\x11\xee\x62\x0a\x4f\x01\x01"
	"\x0a\x4f\x01\x02\xc1\x5c\x12\xb7\x00\x28\x00\x00\x65\x00\xff\xff"
	"\x00\x00\x00\x16\x00\x00\x00\x11\x11\x11\x11\x11\x00\x00\x00\x15"
	"\xab\xcd\xef\x01\x79\x80\x87\x8e\x9b\xb4\x91\x62";

/* IPv6, RC SEND_MIDDLE, 256 bytes, PSN 0xffffff */
static const u8 srdma_cap_rc_send_middle_v6[] =
	"\x60\x00\x00\x00\x01\x18\x11\x40\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xc2\x28\x12\xb7\x01\x18\x00\x00"
	"\x01\x00\xff\xff\x00\x00\x00\x18\x00\xff\xff\xff\x01\x08\x0f\x16"
	"\x1d\x24\x2b\x32\x39\x40\x47\x4e\x55\x5c\x63\x6a\x71\x78\x7f\x86"
	"\x8d\x94\x9b\xa2\xa9\xb0\xb7\xbe\xc5\xcc\xd3\xda\xe1\xe8\xef\xf6"
	"\xfd\x04\x0b\x12\x19\x20\x27\x2e\x35\x3c\x43\x4a\x51\x58\x5f\x66"
	"\x6d\x74\x7b\x82\x89\x90\x97\x9e\xa5\xac\xb3\xba\xc1\xc8\xcf\xd6"
	"\xdd\xe4\xeb\xf2\xf9\x00\x07\x0e\x15\x1c\x23\x2a\x31\x38\x3f\x46"
	"\x4d\x54\x5b\x62\x69\x70\x77\x7e\x85\x8c\x93\x9a\xa1\xa8\xaf\xb6"
	"\xbd\xc4\xcb\xd2\xd9\xe0\xe7\xee\xf5\xfc\x03\x0a\x11\x18\x1f\x26"
	"\x2d\x34\x3b\x42\x49\x50\x57\x5e\x65\x6c\x73\x7a\x81\x88\x8f\x96"
	"\x9d\xa4\xab\xb2\xb9\xc0\xc7\xce\xd5\xdc\xe3\xea\xf1\xf8\xff\x06"
	"\x0d\x14\x1b\x22\x29\x30\x37\x3e\x45\x4c\x53\x5a\x61\x68\x6f\x76"
	"\x7d\x84\x8b\x92\x99\xa0\xa7\xae\xb5\xbc\xc3\xca\xd1\xd8\xdf\xe6"
	"\xed\xf4\xfb\x02\x09\x10\x17\x1e\x25\x2c\x33\x3a\x41\x48\x4f\x56"
	"\x5d\x64\x6b\x72\x79\x80\x87\x8e\x95\x9c\xa3\xaa\xb1\xb8\xbf\xc6"
	"\xcd\xd4\xdb\xe2\xe9\xf0\xf7\xfe\x05\x0c\x13\x1a\x21\x28\x2f\x36"
	"\x3d\x44\x4b\x52\x59\x60\x67\x6e\x75\x7c\x83\x8a\x91\x98\x9f\xa6"
	"\xad\xb4\xbb\xc2\xc9\xd0\xd7\xde\xe5\xec\xf3\xfa\xcb\x0e\x46\xec";

/* IPv6, RC ATOMIC_ACKNOWLEDGE */
static const u8 srdma_cap_rc_atomic_ack_v6[] =
	"\x60\x00\x00\x00\x00\x24\x11\x40\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xc2\x28\x12\xb7\x00\x24\x00\x00"
	"\x12\x00\xff\xff\x00\x00\x00\x17\x00\x00\x00\x08\x1f\x00\x00\x07"
	"\x32\x2b\x24\x1d\x16\x0f\x08\x01\x15\x7d\x9c\x54";

/* IPv6, UD SEND_ONLY_WITH_IMMEDIATE */
static const u8 srdma_cap_ud_send_only_imm_v6[] =
	"\x60\x00\x00\x00\x00\x28\x11\x40\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x01\xfd\x79\x00\x01\x00\x00\x00\x00"
	"\x00\x00\x00\x00\x00\x00\x00\x02\xd4\x09\x12\xb7\x00\x28\x00\x00"
	"\x65\x00\xff\xff\x00\x00\x00\x1c\x00\x00\x00\x11\x11\x11\x11\x11"
	"\x00\x00\x00\x1b\xab\xcd\xef\x01\x79\x80\x87\x8e\xe0\xad\x47\x84";

struct srdma_cap_case {
	const char *name;
	const u8 *bytes;	/* IP header .. ICRC */
	unsigned int len;
	struct srdma_pkt want;	/* tshark's decoding */
};

/* The arrays are string literals: their sizeof counts a final NUL. */
#define SRDMA_CAP(n)							\
	.name = #n, .bytes = srdma_cap_##n, .len = sizeof(srdma_cap_##n) - 1

static const struct srdma_cap_case srdma_cap_cases[] = {
	{
		SRDMA_CAP(ud_cm_req_v4),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000001, .psn = 0x000000,
			.hdr_len = 20, .paylen = 256,
			.deth = { .qkey = 0x80010000, .src_qp = 0x000001 },
		},
	},
	{
		SRDMA_CAP(ud_cm_req_v6),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000001, .psn = 0x000005,
			.hdr_len = 20, .paylen = 256,
			.deth = { .qkey = 0x80010000, .src_qp = 0x000001 },
		},
	},
	{
		SRDMA_CAP(rc_send_only_pad3),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_ONLY, .pad = 3,
			.ackreq = true, .pkey = 0xffff, .qpn = 0x000012,
			.psn = 0xfffffd, .hdr_len = 12, .paylen = 5,
		},
	},
	{
		SRDMA_CAP(rc_rnr_nak),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0xfffffd, .hdr_len = 16,
			.aeth = { .syndrome = 0x21, .msn = 0 },
		},
	},
	{
		SRDMA_CAP(rc_send_first_psn_fffffe),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_FIRST, .pkey = 0xffff,
			.qpn = 0x000012, .psn = 0xfffffe, .hdr_len = 12,
			.paylen = 256,
		},
	},
	{
		SRDMA_CAP(rc_send_last_imm_psn_0),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_LAST_IMM, .se = true,
			.ackreq = true, .pkey = 0xffff, .qpn = 0x000012,
			.psn = 0x000000, .hdr_len = 16, .paylen = 88,
			.imm = cpu_to_be32(0x12345678),
		},
	},
	{
		SRDMA_CAP(rc_nak_psn_seq),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0xffffff, .hdr_len = 16,
			.aeth = { .syndrome = 0x60, .msn = 1 },
		},
	},
	{
		SRDMA_CAP(rc_ack),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0xfffffd, .hdr_len = 16,
			.aeth = { .syndrome = 0x1f, .msn = 1 },
		},
	},
	{
		SRDMA_CAP(rc_write_last),
		.want = {
			.opcode = SRDMA_OP_RC_WRITE_LAST, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000012, .psn = 0x000002,
			.hdr_len = 12, .paylen = 44,
		},
	},
	{
		SRDMA_CAP(rc_write_only_imm),
		.want = {
			.opcode = SRDMA_OP_RC_WRITE_ONLY_IMM, .pad = 2,
			.ackreq = true, .pkey = 0xffff, .qpn = 0x000012,
			.psn = 0x000003, .hdr_len = 32, .paylen = 10,
			.reth = { .va = 0x55febbc25e20, .rkey = 0x23b, .len = 10 },
			.imm = cpu_to_be32(0xcafe0001),
		},
	},
	{
		SRDMA_CAP(rc_read_req),
		.want = {
			.opcode = SRDMA_OP_RC_READ_REQ, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000012, .psn = 0x000004,
			.hdr_len = 28,
			.reth = { .va = 0x55febbc27000, .rkey = 0x23b, .len = 700 },
		},
	},
	{
		SRDMA_CAP(rc_read_resp_last),
		.want = {
			.opcode = SRDMA_OP_RC_READ_RESP_LAST, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0x000006, .hdr_len = 16,
			.paylen = 188, .aeth = { .syndrome = 0x1f, .msn = 5 },
		},
	},
	{
		SRDMA_CAP(rc_read_resp_only_pad1),
		.want = {
			.opcode = SRDMA_OP_RC_READ_RESP_ONLY, .pad = 1,
			.pkey = 0xffff, .qpn = 0x000011, .psn = 0x000007,
			.hdr_len = 16, .paylen = 3,
			.aeth = { .syndrome = 0x1f, .msn = 6 },
		},
	},
	{
		SRDMA_CAP(rc_cmp_swap),
		.want = {
			.opcode = SRDMA_OP_RC_CMP_SWAP, .ackreq = true,
			.pkey = 0xffff, .qpn = 0x000012, .psn = 0x000008,
			.hdr_len = 40,
			.atmeth = { .va = 0x55febbc2b000, .rkey = 0x23b,
				    .swap_add = 0x1112131415161718,
				    .compare = 0x0102030405060708 },
		},
	},
	{
		SRDMA_CAP(rc_atomic_ack),
		.want = {
			.opcode = SRDMA_OP_RC_ATOMIC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0x000008, .hdr_len = 24,
			.aeth = { .syndrome = 0x1f, .msn = 7 },
			.atmack_orig = 0x322b241d160f0801,
		},
	},
	{
		SRDMA_CAP(rc_nak_remote_access),
		.want = {
			.opcode = SRDMA_OP_RC_ACK, .pkey = 0xffff,
			.qpn = 0x000011, .psn = 0x00000b, .hdr_len = 16,
			.aeth = { .syndrome = 0x62, .msn = 9 },
		},
	},
	{
		SRDMA_CAP(uc_write_last_imm),
		.want = {
			.opcode = SRDMA_OP_UC_WRITE_LAST_IMM, .pkey = 0xffff,
			.qpn = 0x000014, .psn = 0x800003, .hdr_len = 16,
			.paylen = 4, .imm = cpu_to_be32(0x0000beef),
		},
	},
	{
		SRDMA_CAP(ud_send_only_imm),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY_IMM, .pkey = 0xffff,
			.qpn = 0x000016, .psn = 0x000011, .hdr_len = 24,
			.paylen = 4,
			.deth = { .qkey = 0x11111111, .src_qp = 0x000015 },
			.imm = cpu_to_be32(0xabcdef01),
		},
	},
	{
		SRDMA_CAP(rc_send_middle_v6),
		.want = {
			.opcode = SRDMA_OP_RC_SEND_MIDDLE, .pkey = 0xffff,
			.qpn = 0x000018, .psn = 0xffffff, .hdr_len = 12,
			.paylen = 256,
		},
	},
	{
		SRDMA_CAP(rc_atomic_ack_v6),
		.want = {
			.opcode = SRDMA_OP_RC_ATOMIC_ACK, .pkey = 0xffff,
			.qpn = 0x000017, .psn = 0x000008, .hdr_len = 24,
			.aeth = { .syndrome = 0x1f, .msn = 7 },
			.atmack_orig = 0x322b241d160f0801,
		},
	},
	{
		SRDMA_CAP(ud_send_only_imm_v6),
		.want = {
			.opcode = SRDMA_OP_UD_SEND_ONLY_IMM, .pkey = 0xffff,
			.qpn = 0x00001c, .psn = 0x000011, .hdr_len = 24,
			.paylen = 4,
			.deth = { .qkey = 0x11111111, .src_qp = 0x00001b },
			.imm = cpu_to_be32(0xabcdef01),
		},
	},
};

static void srdma_cap_case_desc(const struct srdma_cap_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(srdma_cap, srdma_cap_cases, srdma_cap_case_desc);

/* Length of the IP and UDP headers in front of the BTH. */
static unsigned int srdma_cap_l3l4(const u8 *bytes)
{
	return (bytes[0] >> 4 == 4 ? (bytes[0] & 0x0f) * 4 : 40) + 8;
}

/*
 * A received packet: network header at the IP header, skb->data at the BTH,
 * skb->len from BTH through ICRC, as srdma_icrc_verify() gets it.
 */
static struct sk_buff *srdma_cap_rx_skb(const u8 *bytes, unsigned int len,
					const struct srdma_layout *l)
{
	struct sk_buff *skb = srdma_test_skb(bytes, len, l);

	if (!skb)
		return NULL;
	skb_reset_network_header(skb);
	skb_pull(skb, srdma_cap_l3l4(bytes));
	return skb;
}

static void srdma_icrc_seed_test(struct kunit *test)
{
	static const u8 lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};

	KUNIT_EXPECT_EQ(test, crc32_le(~0U, lrh, sizeof(lrh)),
			(u32)SRDMA_ICRC_SEED);
}

static void srdma_icrc_capture_test(struct kunit *test)
{
	const struct srdma_cap_case *c = test->param_value;
	unsigned int l3l4 = srdma_cap_l3l4(c->bytes);
	/* splits inside the BTH and inside the ICRC */
	const struct srdma_layout layouts[] = {
		{ "linear", SRDMA_SHAPE_LINEAR },
		{ "frags", SRDMA_SHAPE_FRAGS, l3l4 + 5, c->len - 2 },
		{ "frags after UDP", SRDMA_SHAPE_FRAGS, l3l4, l3l4 + 1 },
		{ "frag_list", SRDMA_SHAPE_FRAG_LIST, l3l4 + 13 },
	};
	struct srdma_pkt got;
	struct sk_buff *skb;
	unsigned int i;
	u8 *hdrs;

	/* Built from tshark's values, the headers are byte for byte rxe's. */
	hdrs = kunit_kzalloc(test, SRDMA_MAX_HDR_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, hdrs);
	KUNIT_ASSERT_NOT_NULL(test, srdma_pkt_build_hdrs(hdrs, &c->want));
	KUNIT_EXPECT_EQ(test, memcmp(hdrs, c->bytes + l3l4, c->want.hdr_len),
			0);

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		skb = srdma_cap_rx_skb(c->bytes, c->len, &layouts[i]);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_verify(skb), 0, "%s",
				    layouts[i].name);
		KUNIT_EXPECT_EQ_MSG(test, srdma_pkt_parse(skb, &got),
				    SRDMA_DROP_NONE, "%s", layouts[i].name);
		KUNIT_EXPECT_PTR_EQ(test, got.info,
				    srdma_opcode(c->want.opcode));
		srdma_expect_pkt(test, &got, &c->want, layouts[i].name);
		kfree_skb(skb);
	}
}

/* Flip bits @mask of byte @off of a copy of the packet and verify it. */
static int srdma_icrc_flip(struct kunit *test, const struct srdma_cap_case *c,
			   unsigned int off, u8 mask)
{
	static const struct srdma_layout linear = { "linear" };
	struct sk_buff *skb;
	u8 *buf;
	int ret;

	buf = kunit_kmalloc(test, c->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memcpy(buf, c->bytes, c->len);
	buf[off] ^= mask;
	skb = srdma_cap_rx_skb(buf, c->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	ret = srdma_icrc_verify(skb);
	kfree_skb(skb);
	kunit_kfree(test, buf);
	return ret;
}

struct srdma_icrc_byte {
	u8 off;
	u8 mask;
};

/* IPv4: TOS, TTL, header checksum */
static const struct srdma_icrc_byte srdma_masked4[] = {
	{ 1, 0xff }, { 8, 0xff }, { 10, 0xff }, { 11, 0xff },
};

/* IPv6: traffic class (across bytes 0 and 1), flow label, hop limit */
static const struct srdma_icrc_byte srdma_masked6[] = {
	{ 0, 0x0f }, { 1, 0xff }, { 2, 0xff }, { 3, 0xff }, { 7, 0xff },
};

/* IPv4: total length, identification, flags, addresses */
static const struct srdma_icrc_byte srdma_covered4[] = {
	{ 3, 0x04 }, { 4, 0x80 }, { 5, 0x01 }, { 6, 0x20 }, { 12, 0x01 },
	{ 19, 0x80 },
};

/* IPv6: payload length, addresses */
static const struct srdma_icrc_byte srdma_covered6[] = {
	{ 5, 0x04 }, { 8, 0x01 }, { 23, 0x10 }, { 24, 0x01 }, { 39, 0x80 },
};

/* Annex A17.3.3: the variant fields are masked, everything else counts. */
static void srdma_icrc_mask_test(struct kunit *test)
{
	const struct srdma_cap_case *c = test->param_value;
	unsigned int bth = srdma_cap_l3l4(c->bytes), i, n;
	bool v4 = c->bytes[0] >> 4 == 4;
	const struct srdma_icrc_byte *b;

	b = v4 ? srdma_masked4 : srdma_masked6;
	n = v4 ? ARRAY_SIZE(srdma_masked4) : ARRAY_SIZE(srdma_masked6);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, b[i].off,
							  b[i].mask),
				    0, "IP byte %u", b[i].off);
	/* UDP checksum, BTH resv8a */
	KUNIT_EXPECT_EQ(test, srdma_icrc_flip(test, c, bth - 2, 0xff), 0);
	KUNIT_EXPECT_EQ(test, srdma_icrc_flip(test, c, bth - 1, 0xff), 0);
	KUNIT_EXPECT_EQ(test, srdma_icrc_flip(test, c,
					      bth + SRDMA_BTH_RESV8A_OFFSET,
					      0xff), 0);

	b = v4 ? srdma_covered4 : srdma_covered6;
	n = v4 ? ARRAY_SIZE(srdma_covered4) : ARRAY_SIZE(srdma_covered6);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, b[i].off,
							  b[i].mask),
				    -EBADMSG, "IP byte %u", b[i].off);
	/* UDP ports and length; the BTH but resv8a; the end and the ICRC */
	for (i = bth - 8; i < bth - 2; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, i, 0x5a),
				    -EBADMSG, "byte %u", i);
	for (i = bth; i < bth + SRDMA_BTH_LEN; i++)
		if (i != bth + SRDMA_BTH_RESV8A_OFFSET)
			KUNIT_EXPECT_EQ_MSG(test,
					    srdma_icrc_flip(test, c, i, 0x5a),
					    -EBADMSG, "BTH byte %u", i - bth);
	for (i = c->len - 5; i < c->len; i++)
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_flip(test, c, i, 0x5a),
				    -EBADMSG, "byte %u", i);
}

/* Transmit side: the ICRC written into a zeroed trailer is rxe's. */
static void srdma_icrc_fill_test(struct kunit *test)
{
	const struct srdma_cap_case *c = test->param_value;
	unsigned int l3l4 = srdma_cap_l3l4(c->bytes), i;
	const struct srdma_layout layouts[] = {
		{ "linear", SRDMA_SHAPE_LINEAR },
		{ "frags, ICRC split", SRDMA_SHAPE_FRAGS, l3l4 + 12, c->len - 3 },
		{ "frag_list", SRDMA_SHAPE_FRAG_LIST, l3l4 },
	};
	struct sk_buff *skb;
	u8 *buf, *out;

	buf = kunit_kmalloc(test, c->len, GFP_KERNEL);
	out = kunit_kmalloc(test, c->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, out);
	memcpy(buf, c->bytes, c->len);
	memset(buf + c->len - SRDMA_ICRC_SIZE, 0, SRDMA_ICRC_SIZE);

	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		skb = srdma_test_skb(buf, c->len, &layouts[i]);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb_reset_network_header(skb);
		skb_set_transport_header(skb, l3l4 - 8);
		KUNIT_EXPECT_EQ_MSG(test, srdma_icrc_fill(skb), 0, "%s",
				    layouts[i].name);
		KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, 0, out, c->len), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(out, c->bytes, c->len), 0,
				    "%s", layouts[i].name);
		kfree_skb(skb);
	}
}

/* Layouts the ICRC cannot cover are refused, not guessed at. */
static void srdma_icrc_layout_test(struct kunit *test)
{
	static const struct srdma_layout linear = { "linear" };
	const struct srdma_cap_case *v4 = &srdma_cap_cases[0];
	const struct srdma_cap_case *v6 = &srdma_cap_cases[1];
	struct sk_buff *skb;
	u32 icrc;
	u8 *buf;

	buf = kunit_kmalloc(test, v6->len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	/* IP version 5 */
	memcpy(buf, v4->bytes, v4->len);
	buf[0] = 0x55;
	skb = srdma_cap_rx_skb(buf, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* IPv4, protocol TCP */
	memcpy(buf, v4->bytes, v4->len);
	buf[9] = IPPROTO_TCP;
	skb = srdma_cap_rx_skb(buf, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* the BTH not right after the UDP header */
	skb = srdma_cap_rx_skb(v4->bytes, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), 0);
	skb_pull(skb, 4);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* IPv6 with an extension header */
	memcpy(buf, v6->bytes, v6->len);
	buf[6] = 0;	/* hop-by-hop options */
	skb = srdma_cap_rx_skb(buf, v6->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	/* lengths past the end */
	KUNIT_EXPECT_EQ(test, srdma_icrc(skb, 0, skb->len + 1, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(test, srdma_icrc(skb, 4, skb->len, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(test, srdma_icrc(skb, 0, SRDMA_BTH_LEN - 1, &icrc),
			-EINVAL);
	/* no room for BTH and ICRC */
	skb_trim(skb, SRDMA_BTH_LEN + SRDMA_ICRC_SIZE - 1);
	KUNIT_EXPECT_EQ(test, srdma_icrc_verify(skb), -EINVAL);
	kfree_skb(skb);

	/* transmit without a transport header */
	skb = srdma_test_skb(v4->bytes, v4->len, &linear);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reset_network_header(skb);
	KUNIT_EXPECT_EQ(test, srdma_icrc_fill(skb), -EINVAL);
	kfree_skb(skb);
}

static struct kunit_case srdma_icrc_test_cases[] = {
	KUNIT_CASE(srdma_icrc_seed_test),
	KUNIT_CASE_PARAM(srdma_icrc_capture_test, srdma_cap_gen_params),
	KUNIT_CASE_PARAM(srdma_icrc_mask_test, srdma_cap_gen_params),
	KUNIT_CASE_PARAM(srdma_icrc_fill_test, srdma_cap_gen_params),
	KUNIT_CASE(srdma_icrc_layout_test),
	{}
};

static struct kunit_suite srdma_icrc_test_suite = {
	.name = "softrdma_icrc",
	.test_cases = srdma_icrc_test_cases,
};

kunit_test_suites(&srdma_hdr_test_suite, &srdma_psn_test_suite,
		  &srdma_icrc_test_suite);
