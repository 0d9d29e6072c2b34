// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The invariant CRC of RoCEv2 packets, IBTA vol. 1 Annex A17.3.3.
 *
 * The ICRC is the CRC-32 of Ethernet and zlib (reflected polynomial
 * 0xedb88320, initial value ~0, final complement; crc32_le() without the
 * complements) over, in order:
 *
 *   8 bytes of 0xff      in place of the IB LRH, which RoCEv2 does not have
 *   the IP header        IPv4: TOS (DSCP and ECN), TTL and header checksum
 *                        as all ones; IPv6: traffic class, flow label and
 *                        hop limit as all ones
 *   the UDP header       checksum as all ones
 *   the BTH              resv8a (byte 4; F, B and Resv6 on IB) as all ones
 *   the rest             extended headers, payload and pad, up to the ICRC
 *
 * and is stored after the packet least significant byte first. The masked
 * fields are those the network may rewrite on the way (ECN marking, routing,
 * checksums); everything else, IPv4 total length and identification
 * included, is covered. Packets captured from rdma_rxe, IPv4 and IPv6, are
 * checked against this in srdma_hdr_kunit.c.
 *
 * The IP, UDP and BTH headers are copied to a small buffer to be masked; the
 * rest is read in place, from the linear part and each page fragment (and
 * frag_list member) in turn with skb_seq_read(), so that a non-linear skb is
 * neither linearized nor copied.
 */

#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/checksum.h>

#include "srdma_hdr.h"

/* The headers the ICRC masks, longest case: IPv4 with 40 bytes of options. */
#define SRDMA_ICRC_PSEUDO_MAX	(60 + sizeof(struct udphdr) + SRDMA_BTH_LEN)

/*
 * Copy the IP, UDP and BTH headers of @skb to @buf with the variant fields
 * masked. The IP and UDP headers must lie in the linear part, in that order
 * and without a gap, right before the BTH at @bth_off; the BTH may be
 * anywhere. Return: the number of bytes in @buf, or 0 for a layout that
 * does not fit that description.
 */
static unsigned int srdma_icrc_pseudo(struct sk_buff *skb,
				      unsigned int bth_off, u8 *buf)
{
	const u8 *nh = skb_network_header(skb);
	const u8 *bth = skb->data + bth_off;
	unsigned int iplen;
	struct udphdr *udph;

	if (bth_off > skb_headlen(skb) || bth - nh < 1)
		return 0;

	switch (nh[0] >> 4) {
	case 4: {
		struct iphdr *ip4 = (struct iphdr *)buf;

		iplen = (nh[0] & 0x0f) * 4;
		if (iplen < sizeof(*ip4) ||
		    bth - nh != iplen + sizeof(*udph))
			return 0;
		memcpy(buf, nh, iplen + sizeof(*udph));
		if (ip4->protocol != IPPROTO_UDP)
			return 0;
		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = CSUM_MANGLED_0;
		break;
	}
	case 6: {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)buf;

		/* No extension headers: UDP must follow the fixed header. */
		iplen = sizeof(*ip6);
		if (bth - nh != iplen + sizeof(*udph))
			return 0;
		memcpy(buf, nh, iplen + sizeof(*udph));
		if (ip6->nexthdr != IPPROTO_UDP)
			return 0;
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
		break;
	}
	default:
		return 0;
	}

	udph = (struct udphdr *)(buf + iplen);
	udph->check = CSUM_MANGLED_0;

	buf += iplen + sizeof(*udph);
	if (skb_copy_bits(skb, bth_off, buf, SRDMA_BTH_LEN))
		return 0;
	buf[SRDMA_BTH_RESV8A_OFFSET] = 0xff;

	return iplen + sizeof(*udph) + SRDMA_BTH_LEN;
}

/* crc32_le() over @len bytes of @skb from @off, fragments included. */
static u32 srdma_crc32_skb(u32 crc, struct sk_buff *skb, unsigned int off,
			   unsigned int len)
{
	struct skb_seq_state st;
	unsigned int done = 0;
	const u8 *data;

	if (!len)
		return crc;
	skb_prepare_seq_read(skb, off, off + len, &st);
	while (done < len) {
		unsigned int n = skb_seq_read(done, &data, &st);

		/* srdma_icrc() checked that the bytes are there */
		if (WARN_ON_ONCE(!n))
			break;
		/* a block may run past the end we asked for */
		n = min(n, len - done);
		crc = crc32_le(crc, data, n);
		done += n;
	}
	/* unmaps the last fragment, which the loop did not read past */
	skb_abort_seq_read(&st);
	return crc;
}

/**
 * srdma_icrc() - Compute the ICRC of a RoCEv2 packet
 * @skb: the packet. skb_network_header() points at its IPv4 or IPv6
 *	header, which the UDP header follows directly (no IPv6 extension
 *	headers), which the BTH follows directly; the IP and UDP headers are
 *	in the linear part; the rest may be in fragments
 * @bth_off: offset of the BTH from skb->data
 * @len: bytes from the start of the BTH up to, not including, the ICRC
 * @icrc: the ICRC, in CPU order; it goes on the wire as cpu_to_le32()
 *
 * Context: any; @skb is not modified (fragments are mapped with
 * kmap_local/atomic while they are read).
 * Return: 0, or -EINVAL when @len is shorter than a BTH, runs past the
 * end of @skb, or the headers are not laid out as above.
 */
int srdma_icrc(struct sk_buff *skb, unsigned int bth_off, unsigned int len,
	       u32 *icrc)
{
	u8 buf[SRDMA_ICRC_PSEUDO_MAX] __aligned(8);
	unsigned int n;
	u32 crc;

	if (len < SRDMA_BTH_LEN || bth_off > skb->len ||
	    len > skb->len - bth_off)
		return -EINVAL;
	n = srdma_icrc_pseudo(skb, bth_off, buf);
	if (!n)
		return -EINVAL;

	crc = crc32_le(SRDMA_ICRC_SEED, buf, n);
	crc = srdma_crc32_skb(crc, skb, bth_off + SRDMA_BTH_LEN,
			      len - SRDMA_BTH_LEN);
	*icrc = ~crc;
	return 0;
}

/**
 * srdma_icrc_verify() - Check the ICRC of a received packet
 * @skb: the packet as the UDP encapsulation receive hook has it after
 *	pulling the UDP header: skb->data at the BTH, skb->len covering BTH
 *	to ICRC inclusive (trimmed to the UDP length), skb_network_header()
 *	at the IP header, IP and UDP headers intact in the linear part
 *	before skb->data. May be non-linear from the BTH on.
 *
 * Context: any.
 * Return: 0 when the ICRC matches, -EBADMSG when it does not, -EINVAL
 * when the packet is too short for a BTH and ICRC or its headers are not
 * laid out as srdma_icrc() needs.
 */
int srdma_icrc_verify(struct sk_buff *skb)
{
	__le32 wire;
	u32 icrc;
	int err;

	if (skb->len < SRDMA_BTH_LEN + SRDMA_ICRC_SIZE)
		return -EINVAL;
	err = srdma_icrc(skb, 0, skb->len - SRDMA_ICRC_SIZE, &icrc);
	if (err)
		return err;
	if (skb_copy_bits(skb, skb->len - SRDMA_ICRC_SIZE, &wire, sizeof(wire)))
		return -EINVAL;
	return le32_to_cpu(wire) == icrc ? 0 : -EBADMSG;
}

/**
 * srdma_icrc_fill() - Write the ICRC of a packet to send
 * @skb: the complete packet, ICRC excepted. Before the call the caller
 *	has: built BTH, extended headers, payload and pad; reserved the last
 *	SRDMA_ICRC_SIZE bytes of @skb (skb->len includes them, their content
 *	is overwritten); pushed the UDP header and set skb_transport_header()
 *	at it; pushed the IP header right before it and set
 *	skb_network_header() at it; and given every IP and UDP field the
 *	ICRC covers its final value: addresses, ports, IPv4 total length and
 *	identification (so ip_select_ident() must have run), IPv6 payload
 *	length, UDP length. TOS/traffic class, flow label, TTL/hop limit and
 *	both checksums may still change afterwards. skb->data may point at
 *	the IP header or at a link-layer header before it. The IP and UDP
 *	headers must be in the linear part and the tail writable (not a
 *	clone).
 *
 * Context: any.
 * Return: 0, or -EINVAL when @skb is not laid out as described (a bug
 * of the caller; nothing is written).
 */
int srdma_icrc_fill(struct sk_buff *skb)
{
	unsigned int bth_off;
	__le32 wire;
	u32 icrc;
	int err;

	if (!skb_transport_header_was_set(skb) ||
	    skb_transport_offset(skb) < 0)
		return -EINVAL;
	bth_off = skb_transport_offset(skb) + sizeof(struct udphdr);
	if (skb->len < bth_off + SRDMA_BTH_LEN + SRDMA_ICRC_SIZE)
		return -EINVAL;
	err = srdma_icrc(skb, bth_off, skb->len - bth_off - SRDMA_ICRC_SIZE,
			 &icrc);
	if (err)
		return err;
	wire = cpu_to_le32(icrc);
	return skb_store_bits(skb, skb->len - SRDMA_ICRC_SIZE, &wire,
			      sizeof(wire));
}
