/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the KUnit suites of the wire format share (srdma_kunit_skb.c): test
 * packets in skbs of every shape, and the check of a parsed packet.
 */

#ifndef SRDMA_KUNIT_SKB_H
#define SRDMA_KUNIT_SKB_H

#include <kunit/test.h>
#include <linux/skbuff.h>

#include "srdma_hdr.h"

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

struct sk_buff *srdma_test_skb(const u8 *data, unsigned int len,
			       const struct srdma_layout *l);
void srdma_expect_pkt(struct kunit *test, const struct srdma_pkt *got,
		      const struct srdma_pkt *want, const char *what);

#endif /* SRDMA_KUNIT_SKB_H */
