// SPDX-License-Identifier: GPL-2.0
/*
 * axon.ko: /dev/axon, the kernel transport of the axon GPU-sharing layer.
 * Module init and exit only; see axon_drv.h for the objects and locks and
 * Documentation/kmod.rst for the interface.
 */
#include <linux/mmu_notifier.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>

#include "axon_drv.h"
#include "chardev.h"
#include "client.h"
#include "charge.h"
#include "netlink.h"
#include "proc.h"
#include "region.h"
#include "user.h"

/*
 * Kconfig's "depends on" (kmod/Kconfig), for out-of-tree builds, which
 * Kconfig does not see.
 */
#if !defined(CONFIG_64BIT) || !defined(CONFIG_MMU) || !defined(CONFIG_CGROUPS) || \
	!defined(CONFIG_NET) || !defined(CONFIG_MMU_NOTIFIER)
#error "axon.ko needs a 64-bit kernel with MMU, CGROUPS, NET and MMU_NOTIFIER"
#endif

struct axon_dev axon_dev;

int axon_daemon_uid = -1;
module_param_named(daemon_uid, axon_daemon_uid, int, 0644);
MODULE_PARM_DESC(daemon_uid, "uid that may attach as the daemon without CAP_SYS_ADMIN (-1: none)");

bool axon_wait_for_daemon;
module_param_named(wait_for_daemon, axon_wait_for_daemon, bool, 0644);
MODULE_PARM_DESC(wait_for_daemon, "AXON_IOC_SETUP waits for a daemon instead of failing with ECONNREFUSED/ECONNRESET");

unsigned long axon_default_data_size = 8UL << 20;
module_param_named(default_data_size, axon_default_data_size, ulong, 0644);
MODULE_PARM_DESC(default_data_size, "data area bytes when a client asks for 0 (default 8 MiB)");

unsigned long axon_max_data_size = AXON_KMOD_MAX_DATA_SIZE;
module_param_named(max_data_size, axon_max_data_size, ulong, 0644);
MODULE_PARM_DESC(max_data_size, "largest data area a client may ask for (at most 128 MiB)");

unsigned int axon_max_user_clients = 64;
module_param_named(max_user_clients, axon_max_user_clients, uint, 0644);
MODULE_PARM_DESC(max_user_clients, "open /dev/axon clients per user without CAP_SYS_RESOURCE (default 64)");

unsigned long axon_max_user_region_bytes = 256UL << 20;
module_param_named(max_user_region_bytes, axon_max_user_region_bytes, ulong, 0644);
MODULE_PARM_DESC(max_user_region_bytes, "region bytes of set-up clients per user without CAP_SYS_RESOURCE (default 256 MiB)");

unsigned int axon_dbg_mask;
module_param_named(dbg_mask, axon_dbg_mask, uint, 0644);
MODULE_PARM_DESC(dbg_mask, "debug log areas: 1 file, 2 daemon, 4 charge, 8 kref");

static void axon_dev_init(void)
{
	mutex_init(&axon_dev.attach_mutex);
	init_rwsem(&axon_dev.delegate_sem);
	spin_lock_init(&axon_dev.lock);
	INIT_LIST_HEAD(&axon_dev.ev_list);
	init_waitqueue_head(&axon_dev.ev_wq);
	xa_init(&axon_dev.clients);
}

static int __init axon_init(void)
{
	int ret;

	axon_dev_init();
	ret = axon_client_init();
	if (ret) {
		axon_dmem_exit();	/* a region the insmod parameter made */
		return ret;
	}
	ret = axon_info_init();
	if (ret)
		goto err_client;
	ret = axon_proc_init();
	if (ret)
		goto err_info;
	ret = axon_nl_init();
	if (ret)
		goto err_proc;
	ret = axon_chardev_init();
	if (ret)
		goto err_nl;
	pr_info("axon: /dev/axon ready (ABI %u.%u)\n", AXON_ABI_MAJOR,
		AXON_ABI_MINOR);
	return 0;

err_nl:
	axon_nl_uninit();
err_proc:
	axon_proc_uninit();
err_info:
	axon_info_uninit();
err_client:
	axon_client_uninit();
	axon_dmem_exit();
	return ret;
}

static void __exit axon_exit(void)
{
	axon_chardev_uninit();
	axon_nl_uninit();
	axon_proc_uninit();
	axon_client_uninit();
	axon_charge_uninit();
	axon_info_uninit();
	/*
	 * Clients are freed with kfree_rcu(), their mm notifiers after an
	 * SRCU grace period; let both finish.
	 */
	mmu_notifier_synchronize();
	rcu_barrier();
	axon_user_uninit();
	axon_dmem_exit();
	WARN_ON(!xa_empty(&axon_dev.clients));
	xa_destroy(&axon_dev.clients);
}

module_init(axon_init);
module_exit(axon_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("axon developers");
MODULE_DESCRIPTION("axon GPU-sharing layer: client rings, daemon attach, cgroup accounting");
MODULE_VERSION("1.0");
