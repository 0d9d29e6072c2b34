// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Test packets for the KUnit suites of the wire format (srdma_hdr_kunit.c,
 * srdma_icrc_kunit.c), built into the module with SRDMA_KUNIT=y: the bytes
 * of a packet all in the linear part of an skb, or split over page
 * fragments or a frag_list, as receive paths hand them over.
 */

#include <linux/mm.h>

#include "srdma_kunit_skb.h"

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

/**
 * srdma_test_skb() - A test packet in an skb of a given shape
 * @data: the packet's bytes
 * @len: how many
 * @l: the shape (head <= split <= len)
 *
 * Context: process, may sleep.
 * Return: the skb, which the caller frees, or NULL without memory.
 */
struct sk_buff *srdma_test_skb(const u8 *data, unsigned int len,
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

/**
 * srdma_expect_pkt() - Every field of a parsed packet against what it should be
 * @test: the test
 * @got: what the parser found
 * @want: what it should have found
 * @what: the name of the case, for the failure messages
 *
 * Context: process (a KUnit test).
 */
void srdma_expect_pkt(struct kunit *test, const struct srdma_pkt *got,
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
