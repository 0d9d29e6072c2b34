// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrdma module: device creation through "rdma link add", the netdev
 * notifier that ties each device's lifetime and port state to its netdev,
 * and module load/unload.
 *
 * Device lifetime (see Documentation/design.rst):
 *
 *   rdma link add --> srdma_newlink() --> ib_register_device()
 *                                         (now on srdma_devs)
 *   rdma link delete --+
 *   netdev unregister -+--> core unregisters the device
 *   rmmod -------------+      --> srdma_dealloc_driver(): off the
 *                                 namespace's sockets, off srdma_devs,
 *                                 netdev reference dropped
 */

#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>

#include "srdma.h"
#include "srdma_net.h"

MODULE_AUTHOR("The softrdma authors");
MODULE_DESCRIPTION("softrdma: software RDMA over Converged Ethernet v2");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK(SRDMA_LINK_TYPE);
/* The doorbell device, which processes use when it is there (srdma_udb.c). */
MODULE_SOFTDEP("pre: softrdma_doorbell");

/*
 * srdma_devs holds every registered device. srdma_devs_lock (a spinlock, so
 * that the netdev notifier can look devices up under RTNL without a lock
 * order against the core's registration, which takes RTNL itself) guards the
 * list. srdma_link_mutex serializes "rdma link add" so that two requests for
 * one netdev cannot both pass the duplicate check.
 */
static LIST_HEAD(srdma_devs);
static DEFINE_SPINLOCK(srdma_devs_lock);
static DEFINE_MUTEX(srdma_link_mutex);
static DECLARE_WAIT_QUEUE_HEAD(srdma_devs_wq);

/*
 * Parent of the softrdma ib_devices not over a virtio NIC
 * (srdma_dev_parent()). Its modalias ("platform:softrdma") is how the
 * provider recognizes them, whatever their names.
 */
static struct platform_device *srdma_parent;

/*
 * The device's parent. Over a virtio NIC, the NIC's virtio device, as a
 * RoCE NIC's device is under its PCI function: then
 * /sys/class/infiniband/DEV/device/net/ names the netdev, where tools look
 * for it (rdma-core's RDMA-CM tests skip themselves without it). Not under
 * a PCI device: a provider that lists the NIC's PCI IDs (mlx5 for a
 * ConnectX) would claim the device, as libibverbs matches modaliases, and
 * rdma-core's udev rule would rename it after its PCI slot; neither knows
 * a virtio device. Anything else, and a netdev without a parent (veth,
 * bridge), gets the module's platform device.
 */
static struct device *srdma_dev_parent(struct net_device *ndev)
{
	struct device *parent = ndev->dev.parent;

	if (parent && parent->bus && !strcmp(parent->bus->name, "virtio"))
		return parent;
	return &srdma_parent->dev;
}

static struct srdma_dev *srdma_find_by_ndev(struct net_device *ndev)
{
	struct srdma_dev *sdev;

	lockdep_assert_held(&srdma_devs_lock);
	list_for_each_entry(sdev, &srdma_devs, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

/*
 * After unregistration, and from ib_dealloc_device() when
 * srdma_dev_create() fails after setting the ops: everything undone here
 * is set up before that.
 */
static void srdma_dealloc_driver(struct ib_device *ibdev)
{
	struct srdma_dev *sdev = to_sdev(ibdev);
	bool empty;

	/* First: no packet may reach the device once this returns. */
	srdma_net_dev_detach(sdev);
	spin_lock(&srdma_devs_lock);
	list_del(&sdev->list);
	empty = list_empty(&srdma_devs);
	spin_unlock(&srdma_devs_lock);
	WARN_ON(!xa_empty(&sdev->qp_xa) || !xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->qp_xa);
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->ah_xa);
	free_percpu(sdev->counters);
	dev_put(sdev->ndev);
	if (empty)
		wake_up(&srdma_devs_wq);
}

/*
 * /sys/class/infiniband/DEV/hca_type: "softrdma", whatever the parent
 * device. The provider recognizes a device under a virtio NIC by it.
 */
static ssize_t hca_type_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", SRDMA_DRV_NAME);
}
static DEVICE_ATTR_RO(hca_type);

static struct attribute *srdma_dev_attrs[] = {
	&dev_attr_hca_type.attr,
	NULL,
};

static const struct attribute_group srdma_dev_attr_group = {
	.attrs = srdma_dev_attrs,
};

const struct ib_device_ops srdma_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SRDMA_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = srdma_alloc_hw_port_stats,
	.attach_mcast = srdma_attach_mcast,
	.alloc_mr = srdma_alloc_mr,
	.alloc_mw = srdma_alloc_mw,
	.alloc_pd = srdma_alloc_pd,
	.alloc_ucontext = srdma_alloc_ucontext,
	.create_ah = srdma_create_ah,
	.create_cq = srdma_create_cq,
	.create_qp = srdma_create_qp,
	.create_srq = srdma_create_srq,
	.create_user_ah = srdma_create_ah,
	.dealloc_driver = srdma_dealloc_driver,
	.dealloc_mw = srdma_dealloc_mw,
	.dealloc_pd = srdma_dealloc_pd,
	.dealloc_ucontext = srdma_dealloc_ucontext,
	.dereg_mr = srdma_dereg_mr,
	.disassociate_ucontext = srdma_disassociate_ucontext,
	.destroy_ah = srdma_destroy_ah,
	.detach_mcast = srdma_detach_mcast,
	.destroy_cq = srdma_destroy_cq,
	.destroy_qp = srdma_destroy_qp,
	.destroy_srq = srdma_destroy_srq,
	.device_group = &srdma_dev_attr_group,
	.get_dev_fw_str = srdma_get_dev_fw_str,
	.get_dma_mr = srdma_get_dma_mr,
	.get_hw_stats = srdma_get_hw_stats,
	.get_link_layer = srdma_get_link_layer,
	.get_port_immutable = srdma_get_port_immutable,
	.map_mr_sg = srdma_map_mr_sg,
	.mmap = srdma_mmap,
	.mmap_free = srdma_mmap_free,
	.modify_qp = srdma_modify_qp,
	.modify_srq = srdma_modify_srq,
	.poll_cq = srdma_poll_cq,
	.post_recv = srdma_post_recv,
	.post_send = srdma_post_send,
	.post_srq_recv = srdma_post_srq_recv,
	.query_ah = srdma_query_ah,
	.query_device = srdma_query_device,
	.query_pkey = srdma_query_pkey,
	.query_port = srdma_query_port,
	.query_qp = srdma_query_qp,
	.query_srq = srdma_query_srq,
	.reg_user_mr = srdma_reg_user_mr,
	.rereg_user_mr = srdma_rereg_user_mr,
	.req_notify_cq = srdma_req_notify_cq,
	.resize_cq = srdma_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, srdma_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, srdma_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, srdma_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, srdma_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, srdma_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, srdma_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, srdma_ucontext, ibuc),
};

/*
 * Allocate and register a device. It is visible, and may be unregistered
 * by "rdma link delete", from inside ib_register_device(): it is returned
 * with a reference on its struct device, which keeps the memory (not the
 * device) alive until the caller's put_device().
 */
static struct srdma_dev *srdma_dev_create(const char *name,
					  struct net_device *ndev)
{
	struct srdma_dev *sdev;
	int err;

	sdev = ib_alloc_device(srdma_dev, ibdev);
	if (!sdev)
		return ERR_PTR(-ENOMEM);

	sdev->counters = alloc_percpu(struct srdma_counters);
	if (!sdev->counters) {
		ib_dealloc_device(&sdev->ibdev);
		return ERR_PTR(-ENOMEM);
	}
	dev_hold(ndev);
	sdev->ndev = ndev;
	INIT_LIST_HEAD(&sdev->list);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	mutex_init(&sdev->mcast_lock);
	INIT_LIST_HEAD(&sdev->mcast_list);
	addrconf_addr_eui48((unsigned char *)&sdev->ibdev.node_guid,
			    ndev->dev_addr);
	srdma_init_dev_attrs(sdev);
	srdma_update_port(sdev);

	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = num_possible_cpus();
	sdev->ibdev.local_dma_lkey = 0;
	sdev->ibdev.dev.parent = srdma_dev_parent(ndev);
	strscpy(sdev->ibdev.node_desc, "softrdma",
		sizeof(sdev->ibdev.node_desc));
	ib_set_device_ops(&sdev->ibdev, &srdma_dev_ops);
	/*
	 * The zero-WR post commands are the provider's doorbells; the core
	 * leaves the data-path commands off unless a driver asks for them.
	 */
	sdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	err = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (err)
		goto err_dealloc;

	/* The UDP sockets of the netdev's namespace, before any QP exists. */
	err = srdma_net_dev_attach(sdev);
	if (err)
		goto err_dealloc;

	get_device(&sdev->ibdev.dev);
	/* dma_device NULL: the core stores kernel virtual addresses. */
	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		ib_dealloc_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
		return ERR_PTR(err);
	}
	return sdev;

err_dealloc:
	/*
	 * The ops are set: ib_dealloc_device() calls srdma_dealloc_driver(),
	 * which undoes all of the above (a failed ib_register_device() leaves
	 * that to us too), detach and netdev reference included.
	 */
	ib_dealloc_device(&sdev->ibdev);
	return ERR_PTR(err);
}

/*
 * "rdma link add NAME type softrdma netdev NDEV". Runs in process context
 * with the core's link_ops lock held for read; no RTNL.
 */
static int srdma_newlink(const char *name, struct net_device *ndev)
{
	struct srdma_dev *sdev;
	bool dup, live;
	int err = 0;

	if (ndev->type != ARPHRD_ETHER && ndev->type != ARPHRD_LOOPBACK &&
	    ndev->type != ARPHRD_NONE) {
		pr_err("softrdma: %s is not an Ethernet-like device\n",
		       ndev->name);
		return -EINVAL;
	}

	mutex_lock(&srdma_link_mutex);
	spin_lock(&srdma_devs_lock);
	dup = srdma_find_by_ndev(ndev);
	spin_unlock(&srdma_devs_lock);
	if (dup) {
		pr_err("softrdma: %s already has a softrdma device\n",
		       ndev->name);
		err = -EEXIST;
		goto out_unlock;
	}

	sdev = srdma_dev_create(name, ndev);
	if (IS_ERR(sdev)) {
		err = PTR_ERR(sdev);
		goto out_unlock;
	}

	/*
	 * The netdev may have started to unregister, or moved to another
	 * namespace, while the device was not on the list yet, so the
	 * notifier did not see it: unregister it now, or the netdev would
	 * wait for our reference forever (or the device would listen in the
	 * wrong namespace). Under RTNL either the notifier has run (and
	 * reg_state or the namespace says so) or it will run and find the
	 * device on the list. A device that "rdma link delete" unregistered
	 * meanwhile is not listed; one that it has yet to unregister waits
	 * for the reference taken here (ib_device_try_get()).
	 */
	rtnl_lock();
	live = ib_device_try_get(&sdev->ibdev);
	if (live) {
		spin_lock(&srdma_devs_lock);
		list_add_tail(&sdev->list, &srdma_devs);
		spin_unlock(&srdma_devs_lock);
		if (ndev->reg_state != NETREG_REGISTERED ||
		    srdma_net_dev_moved(sdev))
			ib_unregister_device_queued(&sdev->ibdev);
		ib_device_put(&sdev->ibdev);
	}
	rtnl_unlock();
	if (live)
		ibdev_info(&sdev->ibdev, "added on %s\n", netdev_name(ndev));
	put_device(&sdev->ibdev.dev);

out_unlock:
	mutex_unlock(&srdma_link_mutex);
	return err;
}

static struct rdma_link_ops srdma_link_ops = {
	.type = SRDMA_LINK_TYPE,
	.newlink = srdma_newlink,
};

/* Context: RTNL held (netdev notifier chain). */
static int srdma_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct srdma_dev *sdev;

	spin_lock(&srdma_devs_lock);
	sdev = srdma_find_by_ndev(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * Once, while the device is registered: the event comes again
		 * every second for as long as the netdev is still referenced
		 * (netdev_wait_allrefs_any()), and the device holds a
		 * reference until its unregistration, queued now, completes.
		 */
		if (ib_device_try_get(&sdev->ibdev)) {
			ib_unregister_device_queued(&sdev->ibdev);
			ib_device_put(&sdev->ibdev);
		}
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		srdma_update_port(sdev);
		break;
	default:
		break;
	}
out:
	spin_unlock(&srdma_devs_lock);
	return NOTIFY_OK;
}

static struct notifier_block srdma_netdev_nb = {
	.notifier_call = srdma_netdev_event,
};

/*
 * Unregister every device and wait until the core has called
 * srdma_dealloc_driver() for each, including those whose unregistration a
 * netdev event queued earlier.
 */
static void srdma_unregister_all(void)
{
	struct srdma_dev *sdev;
	bool found;

	for (;;) {
		found = false;
		spin_lock(&srdma_devs_lock);
		list_for_each_entry(sdev, &srdma_devs, list) {
			if (ib_device_try_get(&sdev->ibdev)) {
				found = true;
				break;
			}
		}
		spin_unlock(&srdma_devs_lock);
		if (!found)
			break;
		ib_unregister_device_and_put(&sdev->ibdev);
	}
	wait_event(srdma_devs_wq, list_empty(&srdma_devs));
}

static int __init srdma_init(void)
{
	int err;

	err = srdma_sqpoll_init();
	if (err)
		return err;
	err = srdma_net_init();
	if (err)
		goto err_sqpoll_exit;

	srdma_parent = platform_device_register_simple(SRDMA_DRV_NAME,
						       PLATFORM_DEVID_NONE,
						       NULL, 0);
	if (IS_ERR(srdma_parent)) {
		err = PTR_ERR(srdma_parent);
		goto err_net_exit;
	}

	err = register_netdevice_notifier(&srdma_netdev_nb);
	if (err)
		goto err_unregister_parent;

	rdma_link_register(&srdma_link_ops);
	pr_info("softrdma: loaded\n");
	return 0;

err_unregister_parent:
	platform_device_unregister(srdma_parent);
err_net_exit:
	srdma_net_exit();
err_sqpoll_exit:
	srdma_sqpoll_exit();
	return err;
}

static void __exit srdma_exit(void)
{
	rdma_link_unregister(&srdma_link_ops);
	srdma_unregister_all();
	/* Every QP is gone: let their last doorbell works return. */
	srdma_udb_exit();
	unregister_netdevice_notifier(&srdma_netdev_nb);
	platform_device_unregister(srdma_parent);
	/* Every device has detached: no socket is left open. */
	srdma_net_exit();
	srdma_sqpoll_exit();
	srdma_txg_exit();
	pr_info("softrdma: unloaded\n");
}

module_init(srdma_init);
module_exit(srdma_exit);
