/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device-memory charges through the kernel's dmem cgroup controller
 * (CONFIG_CGROUP_DMEM, 6.14+), beside the module's own counters: the
 * client reserves whole units in its own context (dmem charges the cgroup
 * of current), the daemon's charges consume them. See charge_dmem.c.
 */
#ifndef AXON_KMOD_CHARGE_DMEM_H
#define AXON_KMOD_CHARGE_DMEM_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

struct axon_client;
struct axon_dmem_region;
struct axon_reserve;

/**
 * struct axon_dmem_acct - one client's dmem units
 * @lock:	serialises the client's charges, uncharges and reservations
 *		in dmem mode (so the count of units follows the bytes charged)
 * @region:	the dmem region the client charges (reference held), or NULL:
 *		the module's own counters alone (no dmem, or not enabled when
 *		the client set up); set once, at SETUP, under @lock
 * @pools:	struct axon_dmem_rec per dmem pool (cgroup) holding units,
 *		most recently reserved first
 * @nr_pools:	entries on @pools, at most AXON_CLIENT_CGROUPS
 * @reserved:	units reserved and not consumed
 * @used:	units consumed by the daemon's charges
 * @floor:	units an uncharge keeps in the reservation (AXON_RESERVE_F_FLOOR)
 * @closed:	the client ended: no more reservations
 */
struct axon_dmem_acct {
	struct mutex lock;	/* see above */
	struct axon_dmem_region *region;
	struct list_head pools;
	unsigned int nr_pools;
	u64 reserved;
	u64 used;
	u64 floor;
	bool closed;
};

void axon_dmem_acct_init(struct axon_dmem_acct *a);
void axon_dmem_setup(struct axon_dmem_acct *a);
void axon_dmem_acct_release(struct axon_dmem_acct *a);
long axon_dmem_reserve(struct axon_client *c, struct axon_reserve __user *ur);
int axon_dmem_consume(struct axon_dmem_acct *a, u64 charged);
bool axon_dmem_covers(const struct axon_dmem_acct *a, u64 charged);
void axon_dmem_unsetup(struct axon_dmem_acct *a);
void axon_dmem_give_back(struct axon_dmem_acct *a, u64 charged, bool final);
void axon_dmem_exit(void);

static inline bool axon_dmem_active(const struct axon_dmem_acct *a)
{
	return a->region;
}

#endif
