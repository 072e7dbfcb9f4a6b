// SPDX-License-Identifier: GPL-2.0
/*
 * What one user may make the module hold before any daemon has looked at
 * it: open clients (each a struct and, once set up, its region) and the
 * region memory of its set-up clients, counted until the pages are no
 * longer mapped anywhere (a retired region still mapped holds them).
 * Keyed by the opener's real uid in the initial user namespace, so a new
 * user namespace does not reset it.
 * The limits are the max_user_clients and max_user_region_bytes
 * parameters; a task with CAP_SYS_RESOURCE in the initial namespace is
 * counted but not limited. Region memory is also charged to the memory
 * cgroup (GFP_KERNEL_ACCOUNT); this bounds what the memcg does not (no
 * memcg, or a large one shared by many users).
 */
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "axon_drv.h"
#include "user.h"

/**
 * struct axon_user - one user's counts
 * @node:	in axon_users, while @clients > 0
 * @uid:	the real uid
 * @clients:	client objects alive (from open to their last reference)
 * @region_bytes: region bytes of set-up clients, until each region is
 *		retired and no longer mapped (region.c)
 */
struct axon_user {
	struct hlist_node node;
	kuid_t uid;
	unsigned int clients;
	u64 region_bytes;
};

#define AXON_USER_HASH_BITS	6

static DEFINE_HASHTABLE(axon_users, AXON_USER_HASH_BITS);
static DEFINE_SPINLOCK(axon_users_lock);

static struct axon_user *axon_user_find_locked(kuid_t uid)
{
	struct axon_user *u;

	hash_for_each_possible(axon_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * axon_user_get() - count one more client of @uid
 * @uid:	the opener's real uid
 * @limited:	apply max_user_clients
 *
 * Return: the user's counts (one client reference) or an ERR_PTR:
 * -EMFILE at the limit, -ENOMEM.
 */
struct axon_user *axon_user_get(kuid_t uid, bool limited)
{
	struct axon_user *u, *fresh;

	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return ERR_PTR(-ENOMEM);
	spin_lock(&axon_users_lock);
	u = axon_user_find_locked(uid);
	if (!u) {
		u = fresh;
		fresh = NULL;
		u->uid = uid;
		hash_add(axon_users, &u->node, __kuid_val(uid));
	}
	if (limited && u->clients >= READ_ONCE(axon_max_user_clients)) {
		if (!u->clients) {
			hash_del(&u->node);
			fresh = u;
		}
		u = ERR_PTR(-EMFILE);
	} else {
		u->clients++;
	}
	spin_unlock(&axon_users_lock);
	kfree(fresh);
	return u;
}

/* Drops a client reference taken by axon_user_get(). */
void axon_user_put(struct axon_user *u)
{
	bool last;

	spin_lock(&axon_users_lock);
	last = !--u->clients;
	if (last) {
		WARN_ON(u->region_bytes);
		hash_del(&u->node);
	}
	spin_unlock(&axon_users_lock);
	if (last)
		kfree(u);
}

/**
 * axon_user_charge_region() - count a region before allocating it
 * @u:		the client's user
 * @bytes:	its size
 * @limited:	apply max_user_region_bytes
 *
 * Return: 0, or -EDQUOT if the user would hold more than the limit.
 */
int axon_user_charge_region(struct axon_user *u, u64 bytes, bool limited)
{
	u64 max = READ_ONCE(axon_max_user_region_bytes);
	int ret = 0;

	spin_lock(&axon_users_lock);
	if (limited && (bytes > max || u->region_bytes > max - bytes))
		ret = -EDQUOT;
	else
		u->region_bytes += bytes;
	spin_unlock(&axon_users_lock);
	return ret;
}

void axon_user_uncharge_region(struct axon_user *u, u64 bytes)
{
	spin_lock(&axon_users_lock);
	if (!WARN_ON(u->region_bytes < bytes))
		u->region_bytes -= bytes;
	spin_unlock(&axon_users_lock);
}

/* At unload every client is gone, so every entry is too. */
void axon_user_uninit(void)
{
	WARN_ON(!hash_empty(axon_users));
}
