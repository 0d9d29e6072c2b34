// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Network glue: RoCEv2 (IBTA Annex A17) packets in UDP datagrams to port
 * 4791, over IPv4 or IPv6, through the kernel's IP stack.
 *
 * Inventory, with the context of each entry point (details in
 * Documentation/locking.rst):
 *
 *   srdma_net_init/exit            module load/unload: the pernet operations
 *   srdma_net_dev_attach/detach    process, may sleep: a device joins or
 *                                  leaves the sockets of its namespace
 *   srdma_net_dev_moved            process, RTNL held
 *   srdma_net_ns_exit              process (namespace cleanup)
 *   srdma_udp_encap_rcv            softirq: every datagram to port 4791
 *   srdma_net_xmit,                process or softirq, interrupts enabled;
 *   srdma_net_loop_end             never sleep, may run softirqs (when
 *                                  called with bottom halves enabled)
 *
 * Sockets. A device belongs to the network namespace of its netdev. The
 * first device of a namespace opens an IPv4 and an IPv6 (v6only) UDP tunnel
 * socket bound to port 4791 there; the last one to leave closes them. So
 * loading the module takes no port anywhere, and rdma_rxe, which binds
 * port 4791 in the initial namespace, can share a machine with softrdma
 * devices in other namespaces.
 *
 * Receive. The UDP layer calls srdma_udp_encap_rcv() for each datagram,
 * checksum verified, in softirq. The device is the one on the netdev the
 * packet arrived on (or on the real device under a VLAN); a packet looped
 * back through "lo" belongs to the device on the netdev that owns its
 * destination address. srdma_rcv() runs under rcu_read_lock(), which is
 * what keeps the device alive: detach waits for a grace period.
 *
 * Transmit. The transport allocates a packet with srdma_net_alloc_skb(),
 * writes the BTH and the rest from skb->data on, optionally adds payload
 * pages, and calls srdma_net_xmit(), which adds the ICRC, the UDP and IP
 * headers, routes the packet and hands it to ip_local_out() or
 * ip6_local_out(). The buffers, routes and headers are srdma_route.c's.
 * A connected QP keeps its route (struct srdma_dst_cache) and checks it
 * with dst_check() before each packet, as a connected socket does, so a
 * route change applies to the next packet; datagrams look theirs up every
 * time.
 *
 * Loopback. A packet of a process's QP routed to a local address that a
 * softrdma device of the namespace owns does not go through the IP stack
 * and "lo": it is handed to that device's receive path at once, headers
 * in place (srdma_net_loopback()), as rdma_rxe and RoCE NICs loop such
 * traffic back themselves. Such a packet has no ICRC to protect: it never
 * leaves memory, so neither end computes one (a CRC over every byte twice,
 * the largest per-byte cost of the path). Kernel QPs do not take this
 * path: their posters may hold locks that their own completion handlers
 * take, and a receive from inside ib_post_send() would run those handlers.
 * Netfilter and packet capture on "lo" do not see looped-back packets; the
 * module parameter "loopback" (default on) sends them through the stack.
 * The receiving QP runs its transmit pass once per batch of the sender
 * rather than once per packet (struct srdma_loop, srdma_net_loop_end()).
 * Once a connected QP's packet has gone that way, the QP's route cache
 * remembers the device it reached, and the QP's next packets on the same
 * route go to it without UDP and IP headers, a route reference or a
 * device lookup (srdma_net_direct()).
 */

#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ip6_fib.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "srdma.h"
#include "srdma_hdr.h"
#include "srdma_net.h"

/* Any non-zero encap type makes UDP hand datagrams to encap_rcv. */
#define SRDMA_UDP_ENCAP_TYPE	1

/**
 * struct srdma_net - softrdma in one network namespace
 * @net: the namespace; no reference, this structure lives as long as it
 * @sock4: IPv4 UDP socket bound to port 4791, or NULL
 * @sock6: IPv6 (v6only) UDP socket bound to port 4791, or NULL (no IPv6)
 * @devs: the attached devices (srdma_dev.net_node), oldest first; the
 *	receive path walks it under RCU
 *
 * @sock4, @sock6 and @devs are written under srdma_net_lock. The sockets
 * exist exactly while @devs is not empty.
 */
struct srdma_net {
	struct net *net;
	struct socket *sock4;
	struct socket *sock6;
	struct list_head devs;
};

static unsigned int srdma_net_id __read_mostly;

static bool srdma_loopback = true;
module_param_named(loopback, srdma_loopback, bool, 0644);
MODULE_PARM_DESC(loopback,
		 "Deliver packets between local devices without the IP stack (default: on)");

/*
 * Nesting of loopback deliveries on a CPU: a packet's receive path may
 * transmit (an ACK, a READ response), whose delivery may transmit again.
 * Beyond this depth packets take the IP stack, whose receive runs later
 * from the softirq, so that the stack stays bounded.
 */
#define SRDMA_LOOP_MAX_DEPTH	2
static DEFINE_PER_CPU(unsigned int, srdma_loop_depth);

/*
 * Serializes attach, detach and namespace exit: every srdma_net's sockets
 * and device list, and every srdma_dev.snet. Held across socket creation
 * and release and across synchronize_net(); never taken in atomic context.
 * Taken after RTNL (srdma_net_dev_moved()); nothing under it takes RTNL.
 */
static DEFINE_MUTEX(srdma_net_lock);

/*
 * The generation of the namespaces' device lists, one for all of them:
 * bumped under srdma_net_lock whenever a device joins or leaves a list,
 * after the change. A device a QP's route cache remembers as the local
 * peer's (srdma_dst_cache.local) is used only while the generation has
 * the value it had before the device was looked up: a device that has
 * left a list since, and may be freed after the grace period its
 * detach waits for, is never used, nor one that another device now
 * shadows.
 */
static unsigned int srdma_net_devs_gen;

static void srdma_net_devs_changed(void)
{
	lockdep_assert_held(&srdma_net_lock);
	/*
	 * The list change before the new value: a lookup that reads it
	 * (srdma_net_loopback(), acquire) sees the lists as they are now.
	 */
	smp_store_release(&srdma_net_devs_gen, srdma_net_devs_gen + 1);
}

/* --- Receive ------------------------------------------------------------ */

/*
 * The device of a netdev in this namespace: its own, or, for a VLAN, the
 * real device's (the core puts a VLAN's addresses in the GID table of the
 * device under it, so its packets are ours).
 */
static struct srdma_dev *srdma_net_dev_rcu(struct srdma_net *snet,
					   const struct net_device *ndev)
{
	struct srdma_dev *sdev;

	list_for_each_entry_rcu(sdev, &snet->devs, net_node)
		if (sdev->ndev == ndev)
			return sdev;
	if (!is_vlan_dev(ndev))
		return NULL;
	ndev = vlan_dev_real_dev(ndev);
	list_for_each_entry_rcu(sdev, &snet->devs, net_node)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/* The netdev that owns the packet's destination address, if any. */
static struct net_device *srdma_net_daddr_dev_rcu(struct srdma_net *snet,
						  const struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IP))
		return __ip_dev_find(snet->net, ip_hdr(skb)->daddr, false);
	if (IS_ENABLED(CONFIG_IPV6) && skb->protocol == htons(ETH_P_IPV6))
		return ipv6_stub->ipv6_dev_find(snet->net,
						&ipv6_hdr(skb)->daddr, NULL);
	return NULL;
}

/*
 * Which device a packet is for. A packet to a local address leaves and
 * re-enters through the loopback netdev whatever netdev has the address,
 * so on "lo" the destination address decides; the device on "lo" itself
 * (whose GIDs are 127.0.0.1 and ::1) gets what no other device claims.
 */
static struct srdma_dev *srdma_net_find_dev_rcu(struct srdma_net *snet,
						const struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct srdma_dev *sdev;

	if (ndev->flags & IFF_LOOPBACK) {
		struct net_device *owner = srdma_net_daddr_dev_rcu(snet, skb);

		if (owner && owner != ndev) {
			sdev = srdma_net_dev_rcu(snet, owner);
			if (sdev)
				return sdev;
		}
	}
	return srdma_net_dev_rcu(snet, ndev);
}

/*
 * UDP has verified the checksum (or found it zero, which RoCEv2 senders
 * such as rdma_rxe use even over IPv6) and trimmed the datagram to the UDP
 * length. Check what the transport relies on again: a whole UDP header and
 * a UDP length equal to the datagram's (an IPv6 jumbogram's 0 is not
 * RoCEv2); then pull the header, keeping a CHECKSUM_COMPLETE sum right.
 */
static bool srdma_net_udp_pull(struct sk_buff *skb)
{
	if (!pskb_may_pull(skb, sizeof(struct udphdr)))
		return false;
	if (ntohs(udp_hdr(skb)->len) != skb->len)
		return false;
	skb_pull_rcsum(skb, sizeof(struct udphdr));
	return true;
}

/*
 * encap_rcv of both sockets. Returns 0: the datagram is consumed, whatever
 * happened to it.
 *
 * Context: softirq.
 */
static int srdma_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct srdma_net *snet;
	struct srdma_dev *sdev;

	rcu_read_lock();
	/* NULL once the socket is being released. */
	snet = rcu_dereference_sk_user_data(sk);
	if (unlikely(!snet))
		goto drop;

	sdev = srdma_net_find_dev_rcu(snet, skb);
	if (unlikely(!sdev)) {
		/*
		 * Port 4791 belongs to the namespace, not to a device: count
		 * the packet on the oldest device there, so that the sum of
		 * rx_drop_no_device over the namespace's devices is right.
		 */
		sdev = list_first_or_null_rcu(&snet->devs, struct srdma_dev,
					      net_node);
		if (sdev)
			srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_NO_DEV);
		goto drop;
	}

	srdma_counter_inc(sdev, SRDMA_CNT_RX_PKTS);
	if (unlikely(!srdma_net_udp_pull(skb))) {
		srdma_counter_inc(sdev, SRDMA_CNT_RX_DROP_MALFORMED);
		goto drop;
	}
	srdma_rcv(sdev, skb, NULL);
	rcu_read_unlock();
	return 0;

drop:
	rcu_read_unlock();
	kfree_skb(skb);
	return 0;
}

/* --- Sockets and devices per namespace ---------------------------------- */

static struct socket *srdma_net_sock_open(struct srdma_net *snet, bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl_cfg = {
		.sk_user_data = snet,
		.encap_type = SRDMA_UDP_ENCAP_TYPE,
		.encap_rcv = srdma_udp_encap_rcv,
	};
	/*
	 * Bound to the wildcard address. use_udp6_rx_checksums stays 0: a
	 * zero UDP checksum over IPv6 is accepted, as RoCEv2 peers send it.
	 */
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.local_udp_port = htons(SRDMA_UDP_PORT),
		.ipv6_v6only = ipv6,
	};
	struct socket *sock;
	int err;

	if (ipv6 && !IS_ENABLED(CONFIG_IPV6))
		return ERR_PTR(-EAFNOSUPPORT);
	err = udp_sock_create(snet->net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(snet->net, sock, &tnl_cfg);
	return sock;
}

static void srdma_net_socks_close(struct srdma_net *snet)
{
	lockdep_assert_held(&srdma_net_lock);
	/* Clears sk_user_data first: a receive in flight sees NULL. */
	if (snet->sock6)
		udp_tunnel_sock_release(snet->sock6);
	if (snet->sock4)
		udp_tunnel_sock_release(snet->sock4);
	snet->sock6 = NULL;
	snet->sock4 = NULL;
}

static int srdma_net_sock_err(const struct net_device *ndev,
			      const char *family, int err)
{
	if (err == -EADDRINUSE)
		pr_err("softrdma: cannot add a device on %s: UDP port %u is in use in this network namespace (rdma_rxe?)\n",
		       netdev_name(ndev), SRDMA_UDP_PORT);
	else
		pr_err("softrdma: cannot add a device on %s: %s UDP socket on port %u: error %d\n",
		       netdev_name(ndev), family, SRDMA_UDP_PORT, err);
	return err;
}

static int srdma_net_socks_open(struct srdma_net *snet,
				const struct net_device *ndev)
{
	struct socket *sock;

	lockdep_assert_held(&srdma_net_lock);
	sock = srdma_net_sock_open(snet, false);
	if (IS_ERR(sock))
		return srdma_net_sock_err(ndev, "IPv4", PTR_ERR(sock));
	snet->sock4 = sock;

	sock = srdma_net_sock_open(snet, true);
	if (IS_ERR(sock) && PTR_ERR(sock) == -EAFNOSUPPORT) {
		/* IPv6 disabled (ipv6.disable=1): IPv4 only. */
		pr_info("softrdma: no IPv6, RoCEv2 over IPv4 only in the namespace of %s\n",
			netdev_name(ndev));
		return 0;
	}
	if (IS_ERR(sock)) {
		srdma_net_socks_close(snet);
		return srdma_net_sock_err(ndev, "IPv6", PTR_ERR(sock));
	}
	snet->sock6 = sock;
	return 0;
}

/**
 * srdma_net_dev_attach() - Connect a device to its network namespace
 * @sdev: a device being created; sdev->ndev set, counters and QP table
 *	ready (packets may reach srdma_rcv() as soon as this returns)
 *
 * The device joins the namespace its netdev is in now. The first device of
 * a namespace opens the namespace's UDP sockets on port 4791; that fails
 * with -EADDRINUSE, and says so in the log, when another socket (rdma_rxe's
 * in the initial namespace) has the port.
 *
 * Context: process; may sleep. Takes RTNL briefly, then srdma_net_lock.
 * Return: 0, -ENODEV when the namespace is being dismantled, or the
 * error of socket creation.
 */
int srdma_net_dev_attach(struct srdma_dev *sdev)
{
	struct srdma_net *snet;
	struct net *net;
	int err = 0;

	/*
	 * A namespace whose last reference is gone may still hold netdevs
	 * on their way out; do not open sockets in it. Holding the reference
	 * keeps its exit from running until the device is on the list. RTNL
	 * keeps the netdev from moving (and its namespace from being freed)
	 * while the reference is taken.
	 */
	rtnl_lock();
	net = maybe_get_net(dev_net(sdev->ndev));
	rtnl_unlock();
	if (!net)
		return -ENODEV;

	mutex_lock(&srdma_net_lock);
	snet = net_generic(net, srdma_net_id);
	if (list_empty(&snet->devs)) {
		err = srdma_net_socks_open(snet, sdev->ndev);
		if (err)
			goto out;
	}
	list_add_tail_rcu(&sdev->net_node, &snet->devs);
	sdev->snet = snet;
	srdma_net_devs_changed();
out:
	mutex_unlock(&srdma_net_lock);
	put_net(net);
	return err;
}

/**
 * srdma_net_dev_detach() - Disconnect a device from its network namespace
 * @sdev: a device that is not registered (any more)
 *
 * Removes the device from the receive lookup, closes the namespace's
 * sockets if it was the last device there, and waits until no receive
 * path can still be running on the device: it may be freed on return.
 * Does nothing but wait when the device was never attached or the
 * namespace went away first (see srdma_net_ns_exit()).
 *
 * Context: process; may sleep (waits for an RCU grace period). Takes
 * srdma_net_lock.
 */
void srdma_net_dev_detach(struct srdma_dev *sdev)
{
	struct srdma_net *snet;

	mutex_lock(&srdma_net_lock);
	snet = sdev->snet;
	if (snet) {
		list_del_rcu(&sdev->net_node);
		sdev->snet = NULL;
		srdma_net_devs_changed();
		if (list_empty(&snet->devs))
			srdma_net_socks_close(snet);
	}
	/*
	 * Under the lock, so that a namespace exit that finds no device
	 * cannot free snet while a receive still walks it.
	 */
	synchronize_net();
	mutex_unlock(&srdma_net_lock);
}

/**
 * srdma_net_dev_moved() - Whether a device's netdev left its namespace
 * @sdev: an attached device
 *
 * A netdev that moves to another namespace sends NETDEV_UNREGISTER, which
 * unregisters its device; one that moved while its device was being
 * created, before the netdev notifier could see the device, is caught by
 * this check.
 *
 * Context: process, RTNL held (the netdev cannot move meanwhile). Takes
 * srdma_net_lock.
 * Return: true when the device is no longer attached to the namespace its
 * netdev is in.
 */
bool srdma_net_dev_moved(struct srdma_dev *sdev)
{
	bool moved;

	ASSERT_RTNL();
	mutex_lock(&srdma_net_lock);
	moved = !sdev->snet || !net_eq(sdev->snet->net, dev_net(sdev->ndev));
	mutex_unlock(&srdma_net_lock);
	return moved;
}

static int __net_init srdma_net_ns_init(struct net *net)
{
	struct srdma_net *snet = net_generic(net, srdma_net_id);

	snet->net = net;
	INIT_LIST_HEAD(&snet->devs);
	return 0;
}

/*
 * The namespace is going away. This is a subsys exit, so it runs after
 * every device exit, when all netdevs of the namespace have been
 * unregistered or moved out; unregistering a netdev waited for its
 * device's reference, so those devices have detached already. A device
 * can only still be here if its netdev moved out (a physical netdev goes
 * back to the initial namespace, or "ip link set netns"): its
 * unregistration is queued but may not have run yet. Such devices are cut
 * loose: off the list, snet cleared (detach then has nothing to do), and
 * the sockets closed, since they must not outlive the namespace.
 */
static void __net_exit srdma_net_ns_exit(struct net *net)
{
	struct srdma_net *snet = net_generic(net, srdma_net_id);
	struct srdma_dev *sdev, *tmp;

	mutex_lock(&srdma_net_lock);
	if (!list_empty(&snet->devs)) {
		list_for_each_entry_safe(sdev, tmp, &snet->devs, net_node) {
			list_del_rcu(&sdev->net_node);
			sdev->snet = NULL;
		}
		srdma_net_devs_changed();
		srdma_net_socks_close(snet);
		/* snet is freed when this returns. */
		synchronize_net();
	}
	mutex_unlock(&srdma_net_lock);
}

static struct pernet_operations srdma_net_ops = {
	.init = srdma_net_ns_init,
	.exit = srdma_net_ns_exit,
	.id = &srdma_net_id,
	.size = sizeof(struct srdma_net),
};

/**
 * srdma_net_init() - Register the per-namespace state
 *
 * Opens no socket: that waits for the first device of a namespace.
 *
 * Context: module load, process.
 * Return: 0 or -errno.
 */
int srdma_net_init(void)
{
	/* subsys, not device: exit after every netdev has left the netns. */
	return register_pernet_subsys(&srdma_net_ops);
}

/**
 * srdma_net_exit() - Unregister the per-namespace state
 *
 * Context: module unload, process, after every device has been freed.
 */
void srdma_net_exit(void)
{
	unregister_pernet_subsys(&srdma_net_ops);
	srdma_skbpool_drain();
}

/*
 * Hand a packet to a local device's receive path, skb->data at the BTH.
 * Bottom halves disabled, under rcu_read_lock(), below the nesting limit.
 */
static void srdma_net_deliver(struct srdma_dev *sdev, struct srdma_dev *to,
			      struct sk_buff *skb, struct srdma_loop *loop)
{
	skb->pkt_type = PACKET_HOST;
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	srdma_counter_inc(sdev, SRDMA_CNT_TX_PKTS);
	srdma_counter_inc(to, SRDMA_CNT_RX_PKTS);
	__this_cpu_inc(srdma_loop_depth);
	srdma_rcv(to, skb, loop);
	__this_cpu_dec(srdma_loop_depth);
}

/*
 * Deliver a packet routed to this host to the softrdma device that owns
 * its destination address, as the UDP receive path would have after "lo"
 * (srdma_udp_encap_rcv()), without its ICRC, which is not computed. The
 * device is remembered in @dc, when given, for srdma_net_direct().
 * Returns false, with @skb as it was but for skb->dev and skb->protocol,
 * when no device owns the address or the nesting limit is reached: the
 * caller then sends it through the IP stack.
 */
static bool srdma_net_loopback(struct srdma_dev *sdev, struct net *net,
			       struct sk_buff *skb, bool ipv4,
			       struct srdma_loop *loop,
			       struct srdma_dst_cache *dc)
{
	struct srdma_net *snet = net_generic(net, srdma_net_id);
	struct srdma_dev *to;
	bool done = false;
	unsigned int gen;

	local_bh_disable();
	if (__this_cpu_read(srdma_loop_depth) >= SRDMA_LOOP_MAX_DEPTH)
		goto out;
	rcu_read_lock();
	/*
	 * Read before the lookup, and paired with the release of
	 * srdma_net_devs_changed(): a change after it makes @dc's entry
	 * stale.
	 */
	gen = smp_load_acquire(&srdma_net_devs_gen);
	skb->dev = skb_dst(skb)->dev;
	skb->protocol = ipv4 ? htons(ETH_P_IP) : htons(ETH_P_IPV6);
	to = srdma_net_find_dev_rcu(snet, skb);
	if (dc) {
		dc->local = to;
		dc->local_gen = gen;
	}
	if (!to) {
		rcu_read_unlock();
		goto out;
	}
	/* What the IP stack would have done on the way out. */
	if (ipv4)
		ip_send_check(ip_hdr(skb));
	skb_dst_drop(skb);
	__skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	srdma_net_deliver(sdev, to, skb, loop);
	rcu_read_unlock();
	done = true;
out:
	local_bh_enable();
	return done;
}

/*
 * A connected QP's packet, skb->data at the BTH, for the local device its
 * last packet on the same route reached (srdma_net_loopback()): handed to
 * it as is. The headers that path writes and strips again, the route's
 * reference and the device lookup are left out; nothing on the way reads
 * them: the receive path of an RC or UC packet looks at its IP header
 * only for the addresses, which @loop carries instead, copied from @av
 * (srdma_net_av_match()). UD and multicast packets, whose receivers read
 * the header, never come this way. Valid while @dc's route passes
 * dst_check(), which an address or route change fails (the device that
 * owns an address follows its local route), and no device has joined or
 * left a namespace since the device was found. Returns false, @skb
 * untouched, when the packet must take srdma_net_xmit()'s other ways.
 */
static bool srdma_net_direct(struct srdma_dev *sdev,
			     const struct srdma_av *av, struct sk_buff *skb,
			     struct srdma_loop *loop,
			     struct srdma_dst_cache *dc)
{
	enum srdma_transport t;
	bool done = false;

	if (!dc->local)
		return false;
	/* UD: the receiver reads the IP header for the GRH it completes. */
	t = srdma_opcode_transport(skb->data[0]);
	if (t != SRDMA_TRANSPORT_RC && t != SRDMA_TRANSPORT_UC)
		return false;
	local_bh_disable();
	if (__this_cpu_read(srdma_loop_depth) >= SRDMA_LOOP_MAX_DEPTH)
		goto out;
	rcu_read_lock();
	/*
	 * A detach bumps the generation before its grace period: a section
	 * that still reads the old value keeps the device from being freed.
	 */
	if (dc->local_gen == READ_ONCE(srdma_net_devs_gen) &&
	    dst_check(dc->dst, dc->cookie)) {
		skb->dev = dc->dst->dev;
		/* Read once, as the header would have been: not under a lock. */
		loop->saddr = av->saddr;
		loop->daddr = av->daddr;
		loop->net_type = av->net_type;
		loop->direct = true;
		srdma_net_deliver(sdev, dc->local, skb, loop);
		loop->direct = false;
		done = true;
	}
	rcu_read_unlock();
out:
	local_bh_enable();
	return done;
}

/**
 * srdma_net_loop_end() - Run the pass a sender's batch put off
 * @loop: the batch (struct srdma_loop), its packets handed over
 *
 * The pass counts as a nesting level of srdma_net_loopback(): what it
 * sends to a local QP, whose pass may send again, is bounded by
 * SRDMA_LOOP_MAX_DEPTH like the receive paths that once ran it inline.
 *
 * Context: process or softirq, interrupts enabled, under the
 * rcu_read_lock() the batch was made under; no lock held.
 */
void srdma_net_loop_end(struct srdma_loop *loop)
{
	struct srdma_qp *qp = loop->qp;

	if (!qp)
		return;
	loop->qp = NULL;
	local_bh_disable();
	__this_cpu_inc(srdma_loop_depth);
	if (loop->resp)
		srdma_qp_run_resp(qp);
	else
		srdma_qp_run(qp);
	__this_cpu_dec(srdma_loop_depth);
	local_bh_enable();
}

/**
 * srdma_net_xmit() - Send a packet
 * @sdev: the device
 * @av: where to
 * @skb: from srdma_net_alloc_skb(), skb->data at the BTH, everything up to
 *	the ICRC in place (linear part and srdma_net_add_page() fragments);
 *	consumed in all cases
 * @loop: NULL, or the caller holds no lock of anyone else's, so a packet
 *	for a local device may be received from inside this call, and the
 *	caller's batch, whose put-off pass it runs (srdma_net.h)
 * @dc: the QP's route cache, or NULL to look the route up
 *
 * Appends the ICRC, adds the UDP header (source port from @av, destination
 * port 4791) and the IP header (traffic class and hop limit from @av, DF
 * over IPv4), routes the packet out of @av's interface from @av's source
 * address and hands it to the IP stack, through which it goes like any
 * locally generated datagram (netfilter, neighbour resolution, qdisc). A
 * destination on this host, another device's or this one's, is delivered
 * directly when @loop (srdma_net_loopback(), without an ICRC; for a
 * connected QP whose last packet went there, also without UDP and IP
 * headers, srdma_net_direct()), else through "lo". skb->cb belongs to
 * the IP layer from here on; skb->sk, when the caller set it (with a
 * destructor, for instance, to count packets in flight), is passed
 * along. The packet counts in tx_packets when the stack accepts it, else
 * in one tx_drop counter.
 *
 * Context: process or softirq, interrupts enabled; never sleeps. May run
 * the receive path before it returns: a packet to a local device at once
 * when @loop, bottom halves disabled (the receiving QP's completion
 * handlers may run, so @loop only when no ULP lock can be held: the
 * QPs of processes); a packet to a veth peer or through "lo" once bottom
 * halves are enabled again (within the call if the caller had them
 * enabled). Hold no lock the receive path takes.
 * Return: 0; -ENETUNREACH and the like when there is no route; -ENOMEM;
 * -ENOBUFS or another -errno when the stack drops the packet.
 */
int srdma_net_xmit(struct srdma_dev *sdev, const struct srdma_av *av,
		   struct sk_buff *skb, struct srdma_loop *loop,
		   struct srdma_dst_cache *dc)
{
	struct net *net = dev_net(sdev->ndev);
	bool ipv4 = av->net_type == SRDMA_NET_IPV4;
	enum srdma_counter drop;
	int err;

	if (unlikely(!srdma_net_put_icrc(skb))) {
		drop = SRDMA_CNT_TX_DROP_NOMEM;
		err = -ENOMEM;
		goto drop;
	}
	if (loop && dc && srdma_loopback &&
	    srdma_net_direct(sdev, av, skb, loop, dc))
		return 0;
	err = srdma_net_route_headers(sdev, av, net, skb, dc);
	if (err) {
		drop = SRDMA_CNT_TX_DROP_NO_ROUTE;
		goto drop;
	}
	if (loop && srdma_loopback &&
	    (skb_dst(skb)->dev->flags & IFF_LOOPBACK) &&
	    srdma_net_loopback(sdev, net, skb, ipv4, loop, dc))
		return 0;
	/* Over the headers just written, variant fields masked (A17.3.3). */
	err = srdma_icrc_fill(skb);
	if (WARN_ON_ONCE(err)) {
		drop = SRDMA_CNT_TX_DROP_XMIT;
		goto drop;
	}
	/* These set the IP length (and IPv4 checksum) again: both masked. */
	if (ipv4)
		err = ip_local_out(net, skb->sk, skb);
	else
		err = ip6_local_out(net, skb->sk, skb);
	/* Positive values are NET_XMIT codes; congestion still sent it. */
	if (err > 0)
		err = net_xmit_errno(err);
	if (unlikely(err)) {
		srdma_counter_inc(sdev, SRDMA_CNT_TX_DROP_XMIT);
		return err;
	}
	srdma_counter_inc(sdev, SRDMA_CNT_TX_PKTS);
	return 0;

drop:
	srdma_counter_inc(sdev, drop);
	kfree_skb(skb);
	return err;
}
