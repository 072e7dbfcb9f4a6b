// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory charges through the dmem cgroup controller (6.14+), so
 * that an administrator limits axon's tenants with the kernel's own files
 * (dmem.max, dmem.current, dmem.capacity: one region, "axon") instead of,
 * or beside, the module's counters (charge.c), which keep feeding /proc and
 * netlink and keep their own limits.
 *
 * dmem charges the cgroup of current, and the daemon charges on a client's
 * behalf from its own process. So the client reserves in its own context
 * (AXON_IOC_RESERVE): whole AXON_RESERVE_UNITs, one dmem charge each,
 * because dmem gives a charge back only whole (each charge holds a
 * reference that its uncharge drops). The daemon's device-memory charges
 * consume units of the reservation (a client's bytes charged, rounded up
 * to units, are what it has consumed); its uncharges give consumed units
 * back to dmem. A client that reserves nothing cannot be charged: its
 * allocations fail, so the limit holds whatever the client does.
 *
 * Off unless the dmem_capacity module parameter is set (a non-zero
 * capacity registers the region); a client charges dmem if the region
 * existed when it set up. The region can change only while no client
 * holds it.
 */
#include <linux/kref.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/uaccess.h>
#include <linux/axon.h>

#include "axon_drv.h"
#include "charge_dmem.h"
#include "charge_tree.h"
#include "client.h"

#if IS_ENABLED(CONFIG_CGROUP_DMEM)
#include <linux/cgroup_dmem.h>

/* Units one client may hold, reserved and used: 1 TiB. */
#define AXON_DMEM_MAX_UNITS	((1ULL << 40) / AXON_RESERVE_UNIT)

/**
 * struct axon_dmem_region - the registered dmem region
 * @ref:	the module's (while it is the current one) and each client's
 * @r:		dmem's region
 * @capacity:	bytes, as dmem.capacity shows them
 */
struct axon_dmem_region {
	struct kref ref;
	struct dmem_cgroup_region *r;
	u64 capacity;
};

/**
 * struct axon_dmem_rec - a client's units in one dmem pool (cgroup)
 * @node:	on axon_dmem_acct.pools
 * @pool:	the pool; each unit below holds one reference to it
 * @reserved:	units reserved here, not consumed
 * @used:	units consumed here
 */
struct axon_dmem_rec {
	struct list_head node;
	struct dmem_cgroup_pool_state *pool;
	u64 reserved;
	u64 used;
};

static DEFINE_MUTEX(axon_dmem_mutex);
static struct axon_dmem_region *axon_dmem_cur;	/* under axon_dmem_mutex */

static void axon_dmem_region_free(struct kref *ref)
{
	struct axon_dmem_region *rg = container_of(ref, typeof(*rg), ref);

	dmem_cgroup_unregister_region(rg->r);
	kfree(rg);
}

static u64 axon_dmem_units(u64 bytes)
{
	return bytes / AXON_RESERVE_UNIT + !!(bytes % AXON_RESERVE_UNIT);
}

/*
 * Gives one unit of @rec back to dmem (the caller took it off @rec's
 * counts); frees @rec once it holds none. Return: @rec was freed.
 */
static bool axon_dmem_unit_put(struct axon_dmem_acct *a,
			       struct axon_dmem_rec *rec)
{
	dmem_cgroup_uncharge(rec->pool, AXON_RESERVE_UNIT);
	if (rec->reserved || rec->used)
		return false;
	list_del(&rec->node);
	a->nr_pools--;
	kfree(rec);
	return true;
}

/* Gives @n reserved units back, most recently reserved first. */
static void axon_dmem_release_reserved(struct axon_dmem_acct *a, u64 n)
{
	struct axon_dmem_rec *rec, *tmp;

	list_for_each_entry_safe(rec, tmp, &a->pools, node) {
		while (n && rec->reserved) {
			rec->reserved--;
			a->reserved--;
			n--;
			if (axon_dmem_unit_put(a, rec))
				break;
		}
		if (!n)
			break;
	}
}

/*
 * Gives consumed units back until @keep are left: to the reservation while
 * it is below the client's floor (so that freeing and allocating again
 * within it needs no new reservation), to dmem above it.
 */
static void axon_dmem_release_used(struct axon_dmem_acct *a, u64 keep)
{
	struct axon_dmem_rec *rec, *tmp;

	list_for_each_entry_safe(rec, tmp, &a->pools, node) {
		while (a->used > keep && rec->used) {
			rec->used--;
			a->used--;
			if (a->reserved < a->floor) {
				rec->reserved++;
				a->reserved++;
				continue;
			}
			if (axon_dmem_unit_put(a, rec))
				break;
		}
		if (a->used <= keep)
			break;
	}
}

/*
 * What one client may hold, reserved and used: 1 TiB, and no more than the
 * region's capacity.
 */
static u64 axon_dmem_max_units(const struct axon_dmem_acct *a)
{
	return min(AXON_DMEM_MAX_UNITS, a->region->capacity / AXON_RESERVE_UNIT);
}

/*
 * Units charged to current's cgroup without the client's lock, by pool
 * (a client holds units in at most AXON_CLIENT_CGROUPS pools): a large
 * reservation takes a while, and the daemon's charges for the client must
 * not wait on it.
 */
struct axon_dmem_batch {
	struct dmem_cgroup_pool_state *pool[AXON_CLIENT_CGROUPS];
	u64 n[AXON_CLIENT_CGROUPS];
	unsigned int nr;
};

static void axon_dmem_batch_put(struct axon_dmem_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		for (; b->n[i]; b->n[i]--)
			dmem_cgroup_uncharge(b->pool[i], AXON_RESERVE_UNIT);
	b->nr = 0;
}

static int axon_dmem_batch_get(struct dmem_cgroup_region *r, u64 n,
			       struct axon_dmem_batch *b)
{
	struct dmem_cgroup_pool_state *pool, *limit;
	unsigned int i;
	u64 got;
	int ret;

	for (got = 0; got < n; got++) {
		if (fatal_signal_pending(current))
			return -EINTR;
		limit = NULL;
		ret = dmem_cgroup_try_charge(r, AXON_RESERVE_UNIT, &pool, &limit);
		if (ret) {
			dmem_cgroup_pool_state_put(limit);
			return ret == -EAGAIN ? -EDQUOT : ret;
		}
		for (i = 0; i < b->nr && b->pool[i] != pool; i++)
			;
		if (i == b->nr) {
			if (b->nr == AXON_CLIENT_CGROUPS) {
				dmem_cgroup_uncharge(pool, AXON_RESERVE_UNIT);
				return -ENOSPC;
			}
			b->pool[i] = pool;
			b->n[i] = 0;
			b->nr++;
		}
		b->n[i]++;
		if (!(got % 256))
			cond_resched();
	}
	return 0;
}

/* The record of @pool, or NULL. */
static struct axon_dmem_rec *axon_dmem_rec_of(struct axon_dmem_acct *a,
					      struct dmem_cgroup_pool_state *pool)
{
	struct axon_dmem_rec *rec;

	list_for_each_entry(rec, &a->pools, node)
		if (rec->pool == pool)
			return rec;
	return NULL;
}

/*
 * Takes the batch's units into @a's reservation, all or nothing: 0, or
 * -ENOSPC (more than AXON_CLIENT_CGROUPS pools), -ENOMEM; @b is empty on
 * success and untouched on failure.
 */
static int axon_dmem_batch_merge(struct axon_dmem_acct *a,
				 struct axon_dmem_batch *b)
{
	struct axon_dmem_rec *fresh[AXON_CLIENT_CGROUPS], *rec;
	unsigned int i, nfresh = 0;

	lockdep_assert_held(&a->lock);
	for (i = 0; i < b->nr; i++)
		if (!axon_dmem_rec_of(a, b->pool[i]))
			nfresh++;
	if (a->nr_pools + nfresh > AXON_CLIENT_CGROUPS)
		return -ENOSPC;
	for (i = 0; i < nfresh; i++) {
		fresh[i] = kzalloc(sizeof(*fresh[i]), GFP_KERNEL_ACCOUNT);
		if (!fresh[i]) {
			while (i--)
				kfree(fresh[i]);
			return -ENOMEM;
		}
	}
	for (i = 0; i < b->nr; i++) {
		rec = axon_dmem_rec_of(a, b->pool[i]);
		if (!rec) {
			rec = fresh[--nfresh];
			rec->pool = b->pool[i];
			list_add(&rec->node, &a->pools);
			a->nr_pools++;
		}
		list_move(&rec->node, &a->pools);
		rec->reserved += b->n[i];
		a->reserved += b->n[i];
		b->n[i] = 0;
	}
	b->nr = 0;
	return 0;
}

/* The units to charge for topping @a's reservation up to @want. */
static int axon_dmem_shortfall(const struct axon_dmem_acct *a, u64 want, u64 *n)
{
	u64 max = axon_dmem_max_units(a);

	*n = 0;
	if (want <= a->reserved)
		return 0;
	if (a->reserved + a->used > max || want - a->reserved > max - a->reserved - a->used)
		return -EDQUOT;
	*n = want - a->reserved;
	return 0;
}

/**
 * axon_dmem_reserve() - AXON_IOC_RESERVE
 * @c:		the client
 * @ur:		struct axon_reserve
 *
 * The units are charged with the client's lock dropped and taken into its
 * reservation under it, all or nothing; a concurrent reservation of the
 * same client may have covered part of the request meanwhile, which keeps
 * what both asked for (at most the per-client bound).
 *
 * Return: 0 or a negative errno, as the uapi header gives them.
 */
long axon_dmem_reserve(struct axon_client *c, struct axon_reserve __user *ur)
{
	struct axon_dmem_acct *a = &c->dmem;
	struct axon_dmem_batch b = { .nr = 0 };
	struct axon_reserve r;
	u64 n = 0, check;
	long ret = 0;

	if (copy_from_user(&r, ur, sizeof(r)))
		return -EFAULT;
	if ((r.flags & ~AXON_RESERVE_F_ALL) || r.resv ||
	    hweight32(r.flags) > 1)
		return -EINVAL;
	/* dmem charges current's cgroup: it must be the client's */
	if (!axon_client_is_opener(c))
		return -EPERM;
	mutex_lock(&a->lock);
	if (!a->region) {
		mutex_unlock(&a->lock);
		return -EOPNOTSUPP;
	}
	if (a->closed)
		ret = -ENOENT;
	else if (r.flags & AXON_RESERVE_F_FLOOR)
		a->floor = min(axon_dmem_units(r.bytes), axon_dmem_max_units(a));
	else if (r.flags & AXON_RESERVE_F_RELEASE)
		axon_dmem_release_reserved(a, min(r.bytes / AXON_RESERVE_UNIT,
						  a->reserved));
	else
		ret = axon_dmem_shortfall(a, axon_dmem_units(r.bytes), &n);
	if (n) {
		/*
		 * The region stays until the client is freed, which is not
		 * before this ioctl returns.
		 */
		mutex_unlock(&a->lock);
		ret = axon_dmem_batch_get(a->region->r, n, &b);
		mutex_lock(&a->lock);
		if (!ret && a->closed)
			ret = -ENOENT;
		if (!ret && axon_dmem_shortfall(a, a->reserved + n, &check))
			ret = -EDQUOT;
		if (!ret)
			ret = axon_dmem_batch_merge(a, &b);
	}
	r.reserved = a->reserved * AXON_RESERVE_UNIT;
	r.used = a->used * AXON_RESERVE_UNIT;
	r.floor = a->floor * AXON_RESERVE_UNIT;
	mutex_unlock(&a->lock);
	/* a refused reservation keeps nothing of this call */
	axon_dmem_batch_put(&b);
	axon_dbg(CHARGE, "client %llu reserve %llu flags %u: %ld (%llu reserved, %llu used)\n",
		 c->id, r.bytes, r.flags, ret, r.reserved, r.used);
	/* what the client holds now, refused or not */
	if (copy_to_user(ur, &r, sizeof(r)))
		ret = -EFAULT;
	return ret;
}

/**
 * axon_dmem_covers() - would the reservation cover a charge
 * @a:		the client's units, @a->lock held
 * @charged:	the client's device-memory bytes charged, the charge in
 *
 * Return: true if axon_dmem_consume() of @charged would succeed.
 */
bool axon_dmem_covers(const struct axon_dmem_acct *a, u64 charged)
{
	u64 need = axon_dmem_units(charged);

	lockdep_assert_held(&a->lock);
	return need <= a->used || need - a->used <= a->reserved;
}

/**
 * axon_dmem_consume() - the daemon charged: consume reserved units
 * @a:		the client's units, @a->lock held
 * @charged:	the client's device-memory bytes charged, this charge in
 *
 * Return: 0, or -ENOBUFS: the reservation falls short (nothing consumed).
 */
int axon_dmem_consume(struct axon_dmem_acct *a, u64 charged)
{
	u64 need = axon_dmem_units(charged), want;
	struct axon_dmem_rec *rec;

	lockdep_assert_held(&a->lock);
	if (need <= a->used)
		return 0;
	want = need - a->used;
	if (want > a->reserved)
		return -ENOBUFS;
	list_for_each_entry(rec, &a->pools, node) {
		u64 take = min(want, rec->reserved);

		rec->reserved -= take;
		rec->used += take;
		a->reserved -= take;
		a->used += take;
		want -= take;
		if (!want)
			break;
	}
	return 0;
}

/**
 * axon_dmem_give_back() - the daemon uncharged, or the client's charges
 * went
 * @a:		the client's units, @a->lock held
 * @charged:	the client's device-memory bytes still charged
 * @final:	the client ended: its reservation goes too, and no more
 */
void axon_dmem_give_back(struct axon_dmem_acct *a, u64 charged, bool final)
{
	lockdep_assert_held(&a->lock);
	if (final)
		a->floor = 0;
	axon_dmem_release_used(a, axon_dmem_units(charged));
	if (final) {
		axon_dmem_release_reserved(a, a->reserved);
		a->closed = true;
	}
}

void axon_dmem_acct_init(struct axon_dmem_acct *a)
{
	mutex_init(&a->lock);
	INIT_LIST_HEAD(&a->pools);
}

/*
 * SETUP: the client charges dmem if the region is there now. Not at open:
 * the daemon's own file is opened as a client, and would hold the region.
 */
void axon_dmem_setup(struct axon_dmem_acct *a)
{
	mutex_lock(&a->lock);
	mutex_lock(&axon_dmem_mutex);
	if (!a->region && axon_dmem_cur) {
		a->region = axon_dmem_cur;
		kref_get(&a->region->ref);
	}
	mutex_unlock(&axon_dmem_mutex);
	mutex_unlock(&a->lock);
}

/* A SETUP that failed after axon_dmem_setup(): the region goes back. */
void axon_dmem_unsetup(struct axon_dmem_acct *a)
{
	struct axon_dmem_region *rg;

	mutex_lock(&a->lock);
	rg = list_empty(&a->pools) ? a->region : NULL;
	if (rg)
		a->region = NULL;
	mutex_unlock(&a->lock);
	if (rg)
		kref_put(&rg->ref, axon_dmem_region_free);
}

/* The client is freed: nothing may be left but its region reference. */
void axon_dmem_acct_release(struct axon_dmem_acct *a)
{
	if (!a->region)
		return;
	mutex_lock(&a->lock);
	axon_dmem_give_back(a, 0, true);
	mutex_unlock(&a->lock);
	WARN_ON(!list_empty(&a->pools));
	kref_put(&a->region->ref, axon_dmem_region_free);
	a->region = NULL;
}

static int axon_dmem_capacity_set(const char *val,
				  const struct kernel_param *kp)
{
	struct axon_dmem_region *rg = NULL;
	char *end;
	u64 cap;
	int ret = 0;

	cap = memparse(val, &end);
	if (end == val || (*end && strcmp(end, "\n")))
		return -EINVAL;
	if (cap) {
		rg = kzalloc(sizeof(*rg), GFP_KERNEL);
		if (!rg)
			return -ENOMEM;
		kref_init(&rg->ref);
		rg->capacity = cap;
	}
	mutex_lock(&axon_dmem_mutex);
	/* a client's units are in the old region's pools */
	if (axon_dmem_cur && kref_read(&axon_dmem_cur->ref) > 1) {
		ret = -EBUSY;
		goto out;
	}
	/* the new region first: a failure leaves the old one in place */
	if (rg) {
		rg->r = dmem_cgroup_register_region(cap, "axon");
		if (IS_ERR_OR_NULL(rg->r)) {
			ret = rg->r ? PTR_ERR(rg->r) : -EINVAL;
			goto out;
		}
	}
	if (axon_dmem_cur)
		kref_put(&axon_dmem_cur->ref, axon_dmem_region_free);
	axon_dmem_cur = rg;
	rg = NULL;
out:
	mutex_unlock(&axon_dmem_mutex);
	kfree(rg);
	return ret;
}

static int axon_dmem_capacity_get(char *buf, const struct kernel_param *kp)
{
	u64 cap;

	mutex_lock(&axon_dmem_mutex);
	cap = axon_dmem_cur ? axon_dmem_cur->capacity : 0;
	mutex_unlock(&axon_dmem_mutex);
	return sysfs_emit(buf, "%llu\n", cap);
}

/* Module exit: every client is gone. */
void axon_dmem_exit(void)
{
	mutex_lock(&axon_dmem_mutex);
	if (axon_dmem_cur) {
		WARN_ON(kref_read(&axon_dmem_cur->ref) != 1);
		kref_put(&axon_dmem_cur->ref, axon_dmem_region_free);
		axon_dmem_cur = NULL;
	}
	mutex_unlock(&axon_dmem_mutex);
}

#else /* !CONFIG_CGROUP_DMEM */

void axon_dmem_acct_init(struct axon_dmem_acct *a)
{
	mutex_init(&a->lock);
	INIT_LIST_HEAD(&a->pools);
}

void axon_dmem_setup(struct axon_dmem_acct *a)
{
}

void axon_dmem_acct_release(struct axon_dmem_acct *a)
{
}

long axon_dmem_reserve(struct axon_client *c, struct axon_reserve __user *ur)
{
	struct axon_reserve r;

	if (copy_from_user(&r, ur, sizeof(r)))
		return -EFAULT;
	if ((r.flags & ~AXON_RESERVE_F_ALL) || r.resv ||
	    hweight32(r.flags) > 1)
		return -EINVAL;
	return -EOPNOTSUPP;
}

int axon_dmem_consume(struct axon_dmem_acct *a, u64 charged)
{
	return 0;
}

bool axon_dmem_covers(const struct axon_dmem_acct *a, u64 charged)
{
	return true;
}

void axon_dmem_unsetup(struct axon_dmem_acct *a)
{
}

void axon_dmem_give_back(struct axon_dmem_acct *a, u64 charged, bool final)
{
}

static int axon_dmem_capacity_set(const char *val,
				  const struct kernel_param *kp)
{
	char *end;
	u64 cap = memparse(val, &end);

	if (end == val || (*end && strcmp(end, "\n")))
		return -EINVAL;
	return cap ? -EOPNOTSUPP : 0;
}

static int axon_dmem_capacity_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "0\n");
}

void axon_dmem_exit(void)
{
}

#endif

static const struct kernel_param_ops axon_dmem_capacity_ops = {
	.set = axon_dmem_capacity_set,
	.get = axon_dmem_capacity_get,
};

module_param_cb(dmem_capacity, &axon_dmem_capacity_ops, NULL, 0644);
MODULE_PARM_DESC(dmem_capacity,
		 "device memory shared through axon (bytes, K/M/G suffixes); non-zero charges clients set up afterwards through the dmem cgroup controller, region \"axon\" (needs CONFIG_CGROUP_DMEM; 0: the module's own counters only)");
