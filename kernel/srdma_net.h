/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The network glue: RoCEv2 (IBTA Annex A17) over UDP port 4791, one pair of
 * sockets per network namespace, address vectors, packet allocation and
 * transmission. Documentation/design.rst ("Network") describes it and
 * Documentation/locking.rst gives the context of every function.
 */
#ifndef SRDMA_NET_H
#define SRDMA_NET_H

#include <linux/in6.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct srdma_dev;

/**
 * enum srdma_net_type - network header of a RoCEv2 packet
 * @SRDMA_NET_IPV4: IPv4 (the GIDs are IPv4-mapped IPv6 addresses)
 * @SRDMA_NET_IPV6: IPv6
 */
enum srdma_net_type {
	SRDMA_NET_IPV4,
	SRDMA_NET_IPV6,
};

/**
 * union srdma_ip_addr - an IP address of the family its AV names
 * @v4: IPv4 address
 * @v6: IPv6 address
 */
union srdma_ip_addr {
	__be32 v4;
	struct in6_addr v6;
};

/**
 * struct srdma_av - address vector: how to send to one destination
 * @saddr: source address, the IP address of the source GID
 * @daddr: destination address, from the destination GID
 * @flow_label: IPv6 flow label (20 bits) as the GRH gives it, 0 when unset
 * @ifindex: output interface: the netdev of the source GID, which is the
 *	device's netdev or a VLAN on top of it
 * @sport: UDP source port: ECMP entropy (IBTA Annex A17, RoCEv2), from the flow
 *	label or, when that is 0, from the QP pair (rdma_get_udp_sport())
 * @net_type: IPv4 or IPv6
 * @tclass: traffic class: DSCP in bits 7..2, ECN in bits 1..0; the IPv4
 *	TOS byte or the IPv6 traffic class
 * @hop_limit: IPv4 TTL or IPv6 hop limit; 0 takes the route's default
 *
 * Plain data, built by srdma_av_from_ah_attr() and copied freely: it holds
 * no reference. A connected QP keeps the route of its AV in a struct
 * srdma_dst_cache, checked before every packet; datagrams look theirs up
 * for every packet (srdma_net_xmit()). An AV never goes stale beyond its
 * addresses.
 */
struct srdma_av {
	union srdma_ip_addr saddr;
	union srdma_ip_addr daddr;
	u32 flow_label;
	int ifindex;
	__be16 sport;
	u8 net_type;
	u8 tclass;
	u8 hop_limit;
};

/**
 * struct srdma_dst_cache - The route of a connected QP's packets
 * @dst: the route last looked up for the QP's AV, with a reference of its
 *	own, or NULL
 * @cookie: what dst_check() validates @dst with (the IPv6 route's serial
 *	number; 0 over IPv4, where the namespace's route generation decides)
 * @av_gen: the generation of the QP's AV (srdma_qp.av_gen) @dst is for
 * @local: the local device @dst led to when a packet last took it in
 *	memory (srdma_net_loopback()), or NULL; no reference: good only
 *	while the devices' generation is still @local_gen and @dst passes
 *	dst_check(), under rcu_read_lock() (srdma_net_direct())
 * @local_gen: the devices' generation @local was found in
 *
 * Read and written only by the one sender of a QP's stream at a time
 * (srdma_qp_xmit_stream(), srdma_txs.running), and released by
 * srdma_destroy_qp() once no sender can run. A route change makes
 * dst_check() fail, and the next packet looks the route up again.
 */
struct srdma_dst_cache {
	struct dst_entry *dst;
	struct srdma_dev *local;
	u32 cookie;
	u32 av_gen;
	u32 local_gen;
};

void srdma_dst_cache_release(struct srdma_dst_cache *dc);

int srdma_net_init(void);
void srdma_net_exit(void);

struct sk_buff *srdma_skbpool_alloc_skb(unsigned int size, gfp_t gfp);
void srdma_skbpool_consume(struct sk_buff *skb);
void srdma_skbpool_drain(void);
int srdma_net_dev_attach(struct srdma_dev *sdev);
void srdma_net_dev_detach(struct srdma_dev *sdev);
bool srdma_net_dev_moved(struct srdma_dev *sdev);

/**
 * struct srdma_loop - a sender's batch of packets to local QPs
 * @qp: the local QP that took packets of the batch in memory
 *	(srdma_net_loopback()) and put its transmit pass off until the
 *	batch is handed over (srdma_qp_rcv()); NULL when none. The sender
 *	holds rcu_read_lock() from its first packet to that pass, which
 *	keeps @qp alive as the receive path's own read-side section would.
 * @saddr: with @direct, the source address of the sender's AV
 * @daddr: with @direct, its destination address
 * @net_type: with @direct, its SRDMA_NET_* type
 * @direct: the packet being handed over has no IP header
 *	(srdma_net_direct()): @saddr, @daddr and @net_type, copied from the
 *	sender's AV as the header would have been, stand in for the
 *	header's addresses in the receiver's check (srdma_net_av_match())
 * @resp: the pass of @qp put off is its responder's (requests were
 *	handed over), else its requester's (responses)
 * @last: the packet being handed over is the last the sender has: the
 *	QP that takes it runs its pass at once, @qp's too if it is that QP
 *
 * A QP's sender hands its packets over one after the other, and those of
 * a connected QP all go to its one peer. Delivered in memory, each would
 * make the peer run a pass of the side that takes it (the responder's
 * ACKs and READ responses for requests, the requester's next packets and
 * doorbell state for responses) and raise its events; the batch lets the
 * peer do that once, after the last packet, with one coalesced ACK (IBTA
 * 9.7.5.1.6 lets a responder hold an ACK back). The pass runs
 * inside the delivery of the last packet, under the lock taken for it,
 * as it would for a packet sent alone: a ping-pong's reply waits for no
 * second round of the peer's lock.
 */
struct srdma_loop {
	struct srdma_qp *qp;
	union srdma_ip_addr saddr;
	union srdma_ip_addr daddr;
	u8 net_type;
	bool direct;
	bool resp;
	bool last;
};

int srdma_av_from_ah_attr(struct srdma_dev *sdev, struct srdma_av *av,
			  const struct rdma_ah_attr *attr, u32 src_qpn,
			  u32 dst_qpn);

struct sk_buff *srdma_net_alloc_skb(struct srdma_dev *sdev,
				    const struct srdma_av *av,
				    unsigned int len, gfp_t gfp);
bool srdma_net_can_frag(const struct srdma_dev *sdev);
int srdma_net_add_page(struct sk_buff *skb, struct page *page,
		       unsigned int off, unsigned int len);
bool srdma_net_put_icrc(struct sk_buff *skb);
int srdma_net_route_headers(struct srdma_dev *sdev, const struct srdma_av *av,
			    struct net *net, struct sk_buff *skb,
			    struct srdma_dst_cache *dc);
int srdma_net_xmit(struct srdma_dev *sdev, const struct srdma_av *av,
		   struct sk_buff *skb, struct srdma_loop *loop,
		   struct srdma_dst_cache *dc);

void srdma_net_loop_end(struct srdma_loop *loop);

/**
 * srdma_net_set_xps_cpu() - Have XPS pick the transmit queue of one CPU
 * @skb: a packet about to go to srdma_net_xmit()
 * @cpu1: the CPU plus one; 0 lets the sending CPU decide
 *
 * netdev_core_pick_tx() keeps a sender_cpu that a packet already carries;
 * a netdev without XPS maps, or with one transmit queue, ignores it. On
 * the receive side the field is napi_id, whose values start above
 * NR_CPUS (MIN_NAPI_ID), so a packet delivered locally carries no NAPI
 * ID: the same as every packet the stack sends.
 */
static inline void srdma_net_set_xps_cpu(struct sk_buff *skb,
					 unsigned int cpu1)
{
#ifdef CONFIG_XPS
	skb->sender_cpu = cpu1;
#endif
}

bool srdma_net_av_match(const struct srdma_av *av, const struct sk_buff *skb,
			const struct srdma_loop *loop);

/**
 * srdma_rcv() - The transport's receive entry point (srdma_recv.c)
 * @sdev: the device the packet is for
 * @skb: a RoCEv2 packet; consumed
 * @loop: NULL for a packet from the network; else the packet comes
 *	straight from this host's transmit path (srdma_net_loopback(),
 *	srdma_net_direct()), which wrote no ICRC: none is checked, and the
 *	receiving QP may put its transmit pass off into the sender's batch
 *
 * The network glue has found @sdev and checked the UDP header, whose
 * length matches the datagram, then pulled it: skb->data is at the BTH.
 * Nothing beyond the UDP header is checked yet, and the skb may be
 * non-linear with a linear part shorter than the BTH (use pskb_may_pull()
 * or skb_header_pointer()). The network and transport (UDP) headers are
 * intact for the ICRC, except in an RC or UC packet whose @loop says it
 * has none (srdma_loop.direct): nothing but srdma_net_av_match() may read
 * a connected QP's packet's headers. The ICRC is still at the end of the
 * packet.
 *
 * Context: softirq, under rcu_read_lock(): @sdev stays valid until
 * srdma_rcv() returns, because srdma_net_dev_detach() waits for an RCU
 * grace period before the device can be freed. An skb kept beyond the
 * return (queued to a task) must first lose its noref dst
 * (skb_dst_drop() or skb_dst_force()), must not use skb->dev, and must
 * not keep @sdev without a reference of its own.
 */
void srdma_rcv(struct srdma_dev *sdev, struct sk_buff *skb,
	       struct srdma_loop *loop);

#endif /* SRDMA_NET_H */
