// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Heads of the packets the transport builds, cut from per-CPU pages that
 * are used again once every packet cut from them has been freed.
 *
 * Where init_on_alloc is on (the default of Debian's kernels) the slab and
 * the page allocator zero every allocation. A kmalloc()ed head is zeroed
 * each time. A page_frag_cache reuses its page only when every fragment of
 * it has been freed by the time the page runs out; otherwise it takes a
 * fresh, zeroed one. A transmit pass builds up to SRDMA_TX_BUDGET packets
 * before it sends the first, so the packets last cut from a page are
 * nearly always in flight when it runs out: under profile, zeroing new
 * pages cost a quarter as much as copying the payload of a 64 KiB WRITE.
 *
 * Here each CPU keeps SRDMA_SKBPOOL_PAGES pages and cuts heads from one at
 * a time. When it runs out the next page whose heads have all been freed
 * is taken again, as it is; only when none is free is the next page in
 * turn given up to the packets still using it (the last one frees it) and
 * replaced by a new one.
 *
 * References: the pool takes SRDMA_SKBPOOL_BIAS references on a page when
 * it gets it and hands one to every head it cuts (pp->bias counts what it
 * still holds); skb_free_frag() drops a head's. A page whose reference
 * count equals pp->bias has no head in use.
 *
 * Context: the pool of a CPU is used with bottom halves disabled, so never
 * from hard interrupts or with interrupts disabled (srdma_skbpool_alloc_skb()
 * uses alloc_skb() there).
 */

#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>

#include "srdma.h"

#define SRDMA_SKBPOOL_PAGES	4
#define SRDMA_SKBPOOL_SIZE	SZ_32K
/* More references than heads a page can give: a head is over 256 bytes. */
#define SRDMA_SKBPOOL_BIAS	SZ_32K

struct srdma_skbpool_page {
	struct page *page;
	unsigned int size;	/* bytes: SRDMA_SKBPOOL_SIZE or PAGE_SIZE */
	unsigned int bias;	/* references the pool still holds */
};

struct srdma_skbpool {
	struct srdma_skbpool_page p[SRDMA_SKBPOOL_PAGES];
	unsigned int cur;	/* the page heads are cut from */
	unsigned int offset;	/* heads are cut downwards from here */
};

static DEFINE_PER_CPU(struct srdma_skbpool, srdma_skbpool);

static bool srdma_skbpool_fill(struct srdma_skbpool_page *pp, gfp_t gfp)
{
	unsigned int order = get_order(SRDMA_SKBPOOL_SIZE);
	struct page *page;

	/* No emergency reserves: a pfmemalloc head would mark its packet. */
	gfp |= __GFP_NOWARN | __GFP_NOMEMALLOC;
	page = alloc_pages((gfp & ~__GFP_DIRECT_RECLAIM) | __GFP_COMP |
			   __GFP_NORETRY, order);
	if (!page) {
		order = 0;
		page = alloc_pages(gfp, 0);
		if (!page)
			return false;
	}
	page_ref_add(page, SRDMA_SKBPOOL_BIAS - 1);
	pp->page = page;
	pp->size = PAGE_SIZE << order;
	pp->bias = SRDMA_SKBPOOL_BIAS;
	return true;
}

static void srdma_skbpool_release(struct srdma_skbpool_page *pp)
{
	if (!pp->page)
		return;
	/* Heads still in use keep the page until their packets are freed. */
	__page_frag_cache_drain(pp->page, pp->bias);
	pp->page = NULL;
}

/* The current page is used up: move to one that has room. */
static bool srdma_skbpool_next(struct srdma_skbpool *sp, gfp_t gfp)
{
	struct srdma_skbpool_page *pp;
	unsigned int i, j;

	for (i = 1; i <= SRDMA_SKBPOOL_PAGES; i++) {
		j = (sp->cur + i) % SRDMA_SKBPOOL_PAGES;
		pp = &sp->p[j];
		if (pp->page && page_ref_count(pp->page) == pp->bias) {
			/* Every head cut from it has been freed. */
			page_ref_add(pp->page, SRDMA_SKBPOOL_BIAS - pp->bias);
			pp->bias = SRDMA_SKBPOOL_BIAS;
			goto found;
		}
	}
	j = (sp->cur + 1) % SRDMA_SKBPOOL_PAGES;
	pp = &sp->p[j];
	srdma_skbpool_release(pp);
	if (!srdma_skbpool_fill(pp, gfp))
		return false;
found:
	sp->cur = j;
	sp->offset = pp->size;
	return true;
}

/* Cut a head of @fragsz bytes. Context: bottom halves disabled. */
static void *srdma_skbpool_cut(unsigned int fragsz, gfp_t gfp)
{
	struct srdma_skbpool *sp = this_cpu_ptr(&srdma_skbpool);
	struct srdma_skbpool_page *pp;

	if (sp->offset < fragsz && !srdma_skbpool_next(sp, gfp))
		return NULL;
	pp = &sp->p[sp->cur];
	sp->offset -= fragsz;
	pp->bias--;
	return page_address(pp->page) + sp->offset;
}

/**
 * srdma_skbpool_alloc_skb() - Allocate a packet to build
 * @size: bytes of linear data
 * @gfp: allocation flags
 *
 * The head comes from the CPU's pages and the sk_buff from the network
 * stack's per-CPU cache (napi_build_skb()), which srdma_skbpool_consume()
 * refills, so that neither is zeroed twice. Where the pool cannot be used
 * (a head over a page, a context that may sleep or has interrupts off, no
 * page to be had) this is alloc_skb().
 *
 * Context: any, as @gfp allows.
 * Return: the packet, or NULL.
 */
struct sk_buff *srdma_skbpool_alloc_skb(unsigned int size, gfp_t gfp)
{
	unsigned int fragsz = SKB_DATA_ALIGN(size) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb = NULL;
	void *data;

	if (fragsz > PAGE_SIZE || gfpflags_allow_blocking(gfp) ||
	    in_hardirq() || irqs_disabled())
		return alloc_skb(size, gfp);
	local_bh_disable();
	data = srdma_skbpool_cut(fragsz, gfp);
	if (likely(data)) {
		skb = napi_build_skb(data, fragsz);
		if (unlikely(!skb))
			skb_free_frag(data);
	}
	local_bh_enable();
	/* No new page (the pool takes no emergency reserves): the slab. */
	if (unlikely(!data))
		return alloc_skb(size, gfp);
	return skb;
}

/**
 * srdma_skbpool_consume() - Free a packet that was processed
 * @skb: the packet, of any origin
 *
 * Its sk_buff goes back to the per-CPU cache that napi_build_skb() takes
 * from; its head and fragments are released as by consume_skb().
 *
 * Context: softirq, or bottom halves disabled.
 */
void srdma_skbpool_consume(struct sk_buff *skb)
{
	/* A non-zero budget: not from netpoll, the cache may be used. */
	napi_consume_skb(skb, 1);
}

/**
 * srdma_skbpool_drain() - Give up every CPU's pages
 *
 * Packets still in flight keep the pages their heads are on.
 *
 * Context: module unload, process; no packet is being built.
 */
void srdma_skbpool_drain(void)
{
	struct srdma_skbpool *sp;
	unsigned int i;
	int cpu;

	for_each_possible_cpu(cpu) {
		sp = per_cpu_ptr(&srdma_skbpool, cpu);
		for (i = 0; i < SRDMA_SKBPOOL_PAGES; i++)
			srdma_skbpool_release(&sp->p[i]);
		sp->offset = 0;
	}
}
