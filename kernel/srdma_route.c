// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a RoCEv2 packet carries around its BTH, and where it goes: address
 * vectors, the buffers of packets to send, the routes of connected QPs,
 * the UDP and IP headers, and the check of a received packet's addresses
 * against its QP's (IBTA C9-47.1.1). srdma_net.c sends and receives.
 *
 * Inventory, with the context of each entry point:
 *
 *   srdma_av_from_ah_attr          any context
 *   srdma_net_alloc_skb,           any context, never sleep (with a
 *   srdma_net_add_page,            non-sleeping gfp)
 *   srdma_net_can_frag
 *   srdma_net_put_icrc,            any context, never sleep
 *   srdma_net_route_headers,
 *   srdma_dst_cache_release
 *   srdma_net_av_match             any context, the QP's AV stable
 */

#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_fib.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "srdma.h"
#include "srdma_hdr.h"
#include "srdma_net.h"

#define srdma_net_dbg(sdev, fmt, ...)					\
	ibdev_dbg_ratelimited(&(sdev)->ibdev, "net: " fmt, ##__VA_ARGS__)

/* --- Address vectors ---------------------------------------------------- */

union srdma_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/**
 * srdma_av_from_ah_attr() - Build an address vector from an AH attribute
 * @sdev: the device
 * @av: filled in
 * @attr: a RoCE AH attribute with a GRH whose sgid_attr the core resolved
 *	(create_ah, modify_qp with IB_QP_AV)
 * @src_qpn: local QP number, for the UDP source port
 * @dst_qpn: remote QP number, for the UDP source port
 *
 * The source address is that of the source GID, the destination address
 * that of the destination GID; both must be of the source GID's network
 * type. The UDP source port follows the core's convention for RoCEv2
 * (rdma_get_udp_sport()): derived from the flow label, or from the QP pair
 * when the flow label is 0, so both ends of a connection pick the same one.
 *
 * Context: any; does not sleep.
 * Return: 0, -EINVAL when the GID is not a RoCEv2 GID of @sdev or the GIDs'
 * families differ, -ENODEV when the source GID's netdev is gone.
 */
int srdma_av_from_ah_attr(struct srdma_dev *sdev, struct srdma_av *av,
			  const struct rdma_ah_attr *attr, u32 src_qpn,
			  u32 dst_qpn)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid_attr = grh->sgid_attr;
	union srdma_sockaddr src, dst;
	struct net_device *ndev;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) || !sgid_attr ||
	    sgid_attr->device != &sdev->ibdev ||
	    sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	rdma_gid2ip(&src.sa, &sgid_attr->gid);
	rdma_gid2ip(&dst.sa, &grh->dgid);
	if (src.sa.sa_family != dst.sa.sa_family)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	switch (rdma_gid_attr_network_type(sgid_attr)) {
	case RDMA_NETWORK_IPV4:
		av->net_type = SRDMA_NET_IPV4;
		av->saddr.v4 = src.in.sin_addr.s_addr;
		av->daddr.v4 = dst.in.sin_addr.s_addr;
		break;
	case RDMA_NETWORK_IPV6:
		av->net_type = SRDMA_NET_IPV6;
		av->saddr.v6 = src.in6.sin6_addr;
		av->daddr.v6 = dst.in6.sin6_addr;
		break;
	default:
		return -EINVAL;
	}

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	if (!IS_ERR(ndev))
		av->ifindex = ndev->ifindex;
	rcu_read_unlock();
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);

	av->tclass = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	av->sport = cpu_to_be16(rdma_get_udp_sport(av->flow_label, src_qpn,
						   dst_qpn));
	return 0;
}

/* --- Transmit ----------------------------------------------------------- */

static unsigned int srdma_net_hdr_len(const struct srdma_av *av)
{
	return sizeof(struct udphdr) + (av->net_type == SRDMA_NET_IPV4 ?
					sizeof(struct iphdr) :
					sizeof(struct ipv6hdr));
}

/**
 * srdma_net_alloc_skb() - Allocate a packet to send
 * @sdev: the device
 * @av: where it will go (for the size of its IP header)
 * @len: bytes the caller will skb_put(): BTH, extended headers, and the
 *	payload and pad it copies into the linear part
 * @gfp: allocation flags (GFP_ATOMIC in atomic context)
 *
 * The skb has headroom for the link-layer, IP and UDP headers, skb->data
 * at the BTH, and tailroom for @len bytes and the ICRC. Payload not
 * copied goes in with srdma_net_add_page(). A failure counts
 * tx_drop_nomem.
 *
 * Context: any, as @gfp allows.
 * Return: the skb, or NULL.
 */
struct sk_buff *srdma_net_alloc_skb(struct srdma_dev *sdev,
				    const struct srdma_av *av,
				    unsigned int len, gfp_t gfp)
{
	unsigned int hroom = LL_RESERVED_SPACE(sdev->ndev) +
			     srdma_net_hdr_len(av);
	struct sk_buff *skb;

	skb = srdma_skbpool_alloc_skb(hroom + len + SRDMA_ICRC_SIZE, gfp);
	if (unlikely(!skb)) {
		srdma_counter_inc(sdev, SRDMA_CNT_TX_DROP_NOMEM);
		return NULL;
	}
	skb_reserve(skb, hroom);
	skb->protocol = av->net_type == SRDMA_NET_IPV4 ? htons(ETH_P_IP) :
							 htons(ETH_P_IPV6);
	return skb;
}

/**
 * srdma_net_av_match() - Is a packet from a connected QP's peer, to it?
 * @av: the QP's address vector
 * @skb: a received packet, its network header intact unless @loop says
 *	it has none
 * @loop: NULL, or the sender's batch of a packet handed over in memory;
 *	for a packet without IP header (srdma_net_direct()), the addresses
 *	the header would have had
 *
 * IBTA C9-47.1.1: the transport validates the SGID and DGID of a packet
 * for an RC, UC, RD or XRC QP, and silently drops one that fails. RoCEv2
 * carries the GIDs as the IP addresses: the packet's source must be the
 * AV's destination and its destination the AV's source, of the same IP
 * version. Without the check anyone who guesses a QP number and its PSN
 * could place data through it. A packet handed over without its IP header
 * comes with the addresses of the sender's AV, copied as its IP header
 * would have been.
 *
 * Context: any; @av must not change meanwhile (either lock of its QP).
 * Return: true when both addresses match.
 */
bool srdma_net_av_match(const struct srdma_av *av, const struct sk_buff *skb,
			const struct srdma_loop *loop)
{
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;

	if (loop && loop->direct) {
		if (loop->net_type != av->net_type)
			return false;
		if (av->net_type == SRDMA_NET_IPV4)
			return loop->saddr.v4 == av->daddr.v4 &&
			       loop->daddr.v4 == av->saddr.v4;
		return ipv6_addr_equal(&loop->saddr.v6, &av->daddr.v6) &&
		       ipv6_addr_equal(&loop->daddr.v6, &av->saddr.v6);
	}
	if (ip_hdr(skb)->version == 4) {
		iph = ip_hdr(skb);
		return av->net_type == SRDMA_NET_IPV4 &&
		       iph->saddr == av->daddr.v4 && iph->daddr == av->saddr.v4;
	}
	ip6h = ipv6_hdr(skb);
	return av->net_type == SRDMA_NET_IPV6 &&
	       ipv6_addr_equal(&ip6h->saddr, &av->daddr.v6) &&
	       ipv6_addr_equal(&ip6h->daddr, &av->saddr.v6);
}

/**
 * srdma_net_can_frag() - Whether payload should go in as page fragments
 * @sdev: the device
 *
 * True when the netdev does scatter-gather. Otherwise the stack would
 * linearize a fragmented packet before it reaches the driver, a second
 * allocation and copy per packet: the caller should then reserve the
 * payload in srdma_net_alloc_skb()'s @len and copy it, and use
 * srdma_net_add_page() only when this returns true. Both give the same
 * packet on the wire; the answer may change at any time (ethtool).
 *
 * Context: any.
 */
bool srdma_net_can_frag(const struct srdma_dev *sdev)
{
	return READ_ONCE(sdev->ndev->features) & NETIF_F_SG;
}

/**
 * srdma_net_add_page() - Append payload by reference (zero copy)
 * @skb: from srdma_net_alloc_skb(), headers and linear payload already put
 * @page: page holding the payload
 * @off: offset of the payload in @page
 * @len: bytes, within @page
 *
 * Takes a reference on @page (none when the bytes extend the previous
 * fragment in the same page); the skb releases it when freed, possibly
 * after srdma_net_xmit() returned, so the bytes must stay meaningful as
 * long as a retransmission may need them. The packet is marked as sharing
 * its fragments (SKBFL_SHARED_FRAG): their contents belong to the caller.
 * One fragment slot stays free for the ICRC.
 *
 * Context: any.
 * Return: 0, or -EMSGSIZE when the packet has no fragment slot left.
 */
int srdma_net_add_page(struct sk_buff *skb, struct page *page,
		       unsigned int off, unsigned int len)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	int i = shinfo->nr_frags;

	if (skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&shinfo->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS - 1)
			return -EMSGSIZE;
		get_page(page);
		skb_fill_page_desc(skb, i, page, off, len);
	}
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	shinfo->flags |= SKBFL_SHARED_FRAG;
	return 0;
}

/**
 * srdma_net_put_icrc() - Make room for the ICRC
 * @skb: a packet from srdma_net_alloc_skb(), everything up to the ICRC in
 *	place
 *
 * Room for the ICRC at the very end of the packet, zeroed: the linear tail
 * when the packet has no fragment, else one more fragment, from the
 * per-CPU page fragment cache (the payload pages are not ours to write).
 * srdma_icrc_fill() computes it once the headers are on.
 *
 * Context: any; does not sleep.
 * Return: false when there was no room and no memory for it.
 */
bool srdma_net_put_icrc(struct sk_buff *skb)
{
	struct skb_shared_info *shinfo = skb_shinfo(skb);
	struct page *page;
	void *p;

	if (!shinfo->nr_frags) {
		if (WARN_ON_ONCE(skb_tailroom(skb) < SRDMA_ICRC_SIZE))
			return false;
		skb_put_zero(skb, SRDMA_ICRC_SIZE);
		return true;
	}
	if (WARN_ON_ONCE(shinfo->nr_frags >= MAX_SKB_FRAGS))
		return false;
	p = netdev_alloc_frag(SRDMA_ICRC_SIZE);
	if (!p)
		return false;
	memset(p, 0, SRDMA_ICRC_SIZE);
	page = virt_to_head_page(p);
	skb_fill_page_desc(skb, shinfo->nr_frags, page,
			   p - page_address(page), SRDMA_ICRC_SIZE);
	skb->len += SRDMA_ICRC_SIZE;
	skb->data_len += SRDMA_ICRC_SIZE;
	skb->truesize += SKB_DATA_ALIGN(SRDMA_ICRC_SIZE);
	return true;
}

static struct dst_entry *srdma_net_route4(struct srdma_dev *sdev,
					  const struct srdma_av *av,
					  struct net *net)
{
	struct flowi4 fl4 = {};
	struct rtable *rt;

	fl4.flowi4_oif = av->ifindex;
	fl4.flowi4_proto = IPPROTO_UDP;
	fl4.saddr = av->saddr.v4;
	fl4.daddr = av->daddr.v4;
	/* The ports feed multipath hashing: the source port is entropy. */
	fl4.fl4_sport = av->sport;
	fl4.fl4_dport = htons(SRDMA_UDP_PORT);
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt)) {
		srdma_net_dbg(sdev, "no route from %pI4 to %pI4: %ld\n",
			      &av->saddr.v4, &av->daddr.v4, PTR_ERR(rt));
		return ERR_CAST(rt);
	}
	return &rt->dst;
}

static struct dst_entry *srdma_net_route6(struct srdma_dev *sdev,
					  const struct srdma_av *av,
					  struct net *net)
{
	struct flowi6 fl6 = {};
	struct dst_entry *dst;

	if (!IS_ENABLED(CONFIG_IPV6))
		return ERR_PTR(-EAFNOSUPPORT);
	fl6.flowi6_oif = av->ifindex;
	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.saddr = av->saddr.v6;
	fl6.daddr = av->daddr.v6;
	fl6.flowlabel = ip6_make_flowinfo(av->tclass,
					  cpu_to_be32(av->flow_label));
	fl6.fl6_sport = av->sport;
	fl6.fl6_dport = htons(SRDMA_UDP_PORT);
	/* Fails (-EAFNOSUPPORT) when IPv6 is disabled at boot. */
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl6, NULL);
	if (IS_ERR(dst))
		srdma_net_dbg(sdev, "no route from %pI6c to %pI6c: %ld\n",
			      &av->saddr.v6, &av->daddr.v6, PTR_ERR(dst));
	return dst;
}

/**
 * srdma_dst_cache_release() - Drop a QP's cached route
 * @dc: the cache
 *
 * Context: the QP's sender, or the QP quiesced; any context.
 */
void srdma_dst_cache_release(struct srdma_dst_cache *dc)
{
	dst_release(dc->dst);
	dc->dst = NULL;
	dc->local = NULL;
}

static u32 srdma_net_dst_cookie(struct dst_entry *dst, bool ipv4)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (!ipv4)
		return rt6_get_cookie(container_of(dst, struct rt6_info, dst));
#endif
	return 0;
}

/*
 * The route of @av, with a reference for the packet: from @dc while
 * dst_check() accepts it, else looked up (and kept in @dc, when given).
 */
static struct dst_entry *srdma_net_route(struct srdma_dev *sdev,
					 const struct srdma_av *av,
					 struct net *net,
					 struct srdma_dst_cache *dc)
{
	bool ipv4 = av->net_type == SRDMA_NET_IPV4;
	struct dst_entry *dst;

	if (dc && dc->dst) {
		dst = dst_check(dc->dst, dc->cookie);
		if (dst) {
			dst_hold(dst);
			return dst;
		}
		srdma_dst_cache_release(dc);
	}
	dst = ipv4 ? srdma_net_route4(sdev, av, net) :
		     srdma_net_route6(sdev, av, net);
	if (IS_ERR(dst) || !dc)
		return dst;
	dst_hold(dst);
	dc->dst = dst;
	dc->local = NULL;
	dc->cookie = srdma_net_dst_cookie(dst, ipv4);
	return dst;
}

static void srdma_net_push_udp(struct sk_buff *skb, __be16 sport)
{
	struct udphdr *uh;

	__skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = sport;
	uh->dest = htons(SRDMA_UDP_PORT);
	uh->len = htons(skb->len);
	/*
	 * Zero over IPv4, as rdma_rxe and RoCEv2 NICs send it: the ICRC
	 * protects the packet. IPv6 sets it in srdma_net_push_ip6().
	 */
	uh->check = 0;
}

static void srdma_net_push_ip4(struct sk_buff *skb, const struct srdma_av *av,
			       struct net *net)
{
	struct iphdr *iph;

	__skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->tclass;
	iph->tot_len = htons(skb->len);
	/* RoCEv2 packets fit the path MTU and must not be fragmented. */
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: ip4_dst_hoplimit(skb_dst(skb));
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;
	iph->saddr = av->saddr.v4;
	iph->daddr = av->daddr.v4;
	ip_select_ident(net, skb, NULL);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void srdma_net_push_ip6(struct sk_buff *skb, const struct srdma_av *av)
{
	unsigned int len = skb->len;
	struct ipv6hdr *ip6h;

	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, av->tclass, cpu_to_be32(av->flow_label));
	ip6h->payload_len = htons(len);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: ip6_dst_hoplimit(skb_dst(skb));
	ip6h->saddr = av->saddr.v6;
	ip6h->daddr = av->daddr.v6;
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	/*
	 * IPv6 wants a UDP checksum (RFC 8200 8.1). CHECKSUM_PARTIAL: the
	 * netdev, or the stack before it, sums the final bytes, ICRC
	 * included; the ICRC itself masks the field.
	 */
	udp6_set_csum(false, skb, &ip6h->saddr, &ip6h->daddr, len);
}

/**
 * srdma_net_route_headers() - Route a packet and put its UDP and IP headers on
 * @sdev: the device
 * @av: where to
 * @net: the device's namespace
 * @skb: a packet whose ICRC has room (srdma_net_put_icrc()), skb->data at
 *	the BTH
 * @dc: the QP's route cache, or NULL to look the route up
 *
 * The route, with a reference, is attached to @skb; skb->data is then at
 * the IP header and the transport header at the UDP header.
 *
 * Context: any; does not sleep.
 * Return: 0, or a negative errno from the route lookup (-ENETUNREACH and
 * the like), @skb untouched.
 */
int srdma_net_route_headers(struct srdma_dev *sdev, const struct srdma_av *av,
			    struct net *net, struct sk_buff *skb,
			    struct srdma_dst_cache *dc)
{
	struct dst_entry *dst;

	dst = srdma_net_route(sdev, av, net, dc);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	skb_dst_set(skb, dst);
	srdma_net_push_udp(skb, av->sport);
	if (av->net_type == SRDMA_NET_IPV4)
		srdma_net_push_ip4(skb, av, net);
	else
		srdma_net_push_ip6(skb, av);
	return 0;
}
