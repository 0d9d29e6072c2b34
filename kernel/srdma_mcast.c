// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast (IBTA 10.5): ibv_attach_mcast() and ibv_detach_mcast().
 *
 * Over RoCEv2 a multicast GID is an IP multicast address (IPv4-mapped, or
 * IPv6 ff00::/8), and a multicast datagram is a UDP datagram to that
 * address with the multicast QPN 0xFFFFFF in its BTH. Attaching a QP
 * joins the IP group on the device's netdev (the device membership that
 * IGMP or MLD reports, one per attachment: the stack counts them), so the
 * stack delivers the group's datagrams to port 4791; detaching leaves it.
 *
 * The device keeps a list of (MGID, QP) attachments. Writers hold
 * sdev->mcast_lock (a mutex: joining takes RTNL); the receive path walks
 * the list under RCU and hands the datagram to every QP attached to its
 * destination, each of which checks the Q_Key and takes a receive WQE as
 * for a unicast datagram.
 */

#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/addrconf.h>

#include "srdma.h"
#include "srdma_hdr.h"

/**
 * struct srdma_mc_attach - one QP attached to one multicast group
 * @node: entry in sdev->mcast_list (RCU)
 * @mgid: the group
 * @qp: the QP
 * @rcu: frees the entry after the receive path's walks
 */
struct srdma_mc_attach {
	struct list_head node;
	union ib_gid mgid;
	struct srdma_qp *qp;
	struct rcu_head rcu;
};

/* Join (@join) or leave the IP group of @mgid on the device's netdev. */
static int srdma_mcast_ip(struct srdma_dev *sdev, const union ib_gid *mgid,
			  bool join)
{
	struct net_device *ndev = sdev->ndev;
	struct in6_addr *a6 = (struct in6_addr *)mgid->raw;
	struct in_device *in_dev;
	int err = 0;

	rtnl_lock();
	if (ipv6_addr_v4mapped(a6)) {
		in_dev = __in_dev_get_rtnl(ndev);
		if (!in_dev)
			err = join ? -ENODEV : 0;
		else if (join)
			ip_mc_inc_group(in_dev, a6->s6_addr32[3]);
		else
			ip_mc_dec_group(in_dev, a6->s6_addr32[3]);
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		err = join ? ipv6_dev_mc_inc(ndev, a6) : ipv6_dev_mc_dec(ndev, a6);
		if (!join)
			err = 0;	/* the netdev may have lost IPv6 */
	} else {
		err = -EAFNOSUPPORT;
	}
	rtnl_unlock();
	return err;
}

static bool srdma_mgid_ok(const union ib_gid *mgid)
{
	const struct in6_addr *a6 = (const struct in6_addr *)mgid->raw;

	if (ipv6_addr_v4mapped(a6))
		return ipv4_is_multicast(a6->s6_addr32[3]);
	return ipv6_addr_is_multicast(a6);
}

/* The attachment of @qp to @mgid, or NULL. Context: mcast_lock held. */
static struct srdma_mc_attach *srdma_mcast_find(struct srdma_dev *sdev,
						const union ib_gid *mgid,
						const struct srdma_qp *qp,
						u32 *in_group)
{
	struct srdma_mc_attach *at;

	*in_group = 0;
	list_for_each_entry(at, &sdev->mcast_list, node) {
		if (memcmp(&at->mgid, mgid, sizeof(*mgid)))
			continue;
		if (at->qp == qp)
			return at;
		(*in_group)++;
	}
	return NULL;
}

/**
 * srdma_attach_mcast() - Attach a UD QP to a multicast group
 * @ibqp: the QP
 * @mgid: the group's GID: an IPv4-mapped or IPv6 multicast address
 * @mlid: unused (RoCE has no LIDs)
 *
 * Context: process context.
 * Return: 0 (also when the QP is attached already), -EINVAL for a GID
 * that is no multicast address or a QP that is not UD, -ENOMEM when the
 * device's or the group's attachment limit is reached.
 */
int srdma_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct srdma_dev *sdev = to_sdev(ibqp->device);
	struct srdma_qp *qp = to_sqp(ibqp);
	struct srdma_mc_attach *at;
	u32 in_group;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !srdma_mgid_ok(mgid))
		return -EINVAL;
	at = kzalloc(sizeof(*at), GFP_KERNEL);
	if (!at)
		return -ENOMEM;
	at->mgid = *mgid;
	at->qp = qp;

	mutex_lock(&sdev->mcast_lock);
	if (srdma_mcast_find(sdev, mgid, qp, &in_group))
		goto out_free;
	if (in_group >= sdev->attr.max_mcast_qp_attach ||
	    sdev->mcast_cnt >= sdev->attr.max_total_mcast_qp_attach) {
		err = -ENOMEM;
		goto out_free;
	}
	err = srdma_mcast_ip(sdev, mgid, true);
	if (err)
		goto out_free;
	sdev->mcast_cnt++;
	list_add_tail_rcu(&at->node, &sdev->mcast_list);
	mutex_unlock(&sdev->mcast_lock);
	return 0;

out_free:
	mutex_unlock(&sdev->mcast_lock);
	kfree(at);
	return err;
}

/* Context: mcast_lock held. */
static void srdma_mcast_remove(struct srdma_dev *sdev,
			       struct srdma_mc_attach *at)
{
	list_del_rcu(&at->node);
	sdev->mcast_cnt--;
	srdma_mcast_ip(sdev, &at->mgid, false);
	kfree_rcu(at, rcu);
}

/**
 * srdma_detach_mcast() - Detach a UD QP from a multicast group
 * @ibqp: the QP
 * @mgid: the group
 * @mlid: unused
 *
 * Context: process context.
 * Return: 0, -EINVAL when the QP is not attached to the group.
 */
int srdma_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct srdma_dev *sdev = to_sdev(ibqp->device);
	struct srdma_mc_attach *at;
	u32 in_group;
	int err = -EINVAL;

	mutex_lock(&sdev->mcast_lock);
	at = srdma_mcast_find(sdev, mgid, to_sqp(ibqp), &in_group);
	if (at) {
		srdma_mcast_remove(sdev, at);
		err = 0;
	}
	mutex_unlock(&sdev->mcast_lock);
	return err;
}

/**
 * srdma_mcast_detach_qp() - Detach a QP being destroyed from every group
 * @qp: the QP
 *
 * The receive path may still see the attachments until a grace period
 * has passed: the caller waits for one before it frees the QP.
 *
 * Context: process context.
 */
void srdma_mcast_detach_qp(struct srdma_qp *qp)
{
	struct srdma_dev *sdev = to_sdev(qp->ibqp.device);
	struct srdma_mc_attach *at, *tmp;

	if (qp->ibqp.qp_type != IB_QPT_UD)
		return;
	mutex_lock(&sdev->mcast_lock);
	list_for_each_entry_safe(at, tmp, &sdev->mcast_list, node)
		if (at->qp == qp)
			srdma_mcast_remove(sdev, at);
	mutex_unlock(&sdev->mcast_lock);
}

/**
 * srdma_mcast_rcv() - Deliver a multicast datagram
 * @sdev: the device it arrived on
 * @pkt: the packet, parsed, its ICRC checked; BTH:DestQP is 0xFFFFFF
 * @skb: the packet; not consumed
 *
 * Every UD QP attached to the datagram's destination gets it.
 *
 * Context: softirq, under rcu_read_lock.
 * Return: the number of QPs it was handed to.
 */
unsigned int srdma_mcast_rcv(struct srdma_dev *sdev,
			     const struct srdma_pkt *pkt,
			     const struct sk_buff *skb)
{
	struct srdma_mc_attach *at;
	union ib_gid dgid;
	unsigned int n = 0;

	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid.raw);
	else
		memcpy(dgid.raw, &ipv6_hdr(skb)->daddr, sizeof(dgid.raw));
	list_for_each_entry_rcu(at, &sdev->mcast_list, node) {
		if (memcmp(&at->mgid, &dgid, sizeof(dgid)))
			continue;
		srdma_qp_rcv(at->qp, pkt, skb, NULL);
		n++;
	}
	return n;
}
