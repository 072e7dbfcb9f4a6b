/* SPDX-License-Identifier: GPL-2.0 */
/* Hierarchical per-cgroup counters with limits (6.1 has no dmem). */
#ifndef AXON_KMOD_CHARGE_H
#define AXON_KMOD_CHARGE_H

#include <linux/types.h>

struct axon_client;
struct axon_viewer;
struct cgroup;

/**
 * struct axon_cg_info - one tracked cgroup and kind, for /proc and netlink
 * @id:		cgroup id (inode number of its directory)
 * @path:	path in the reader's cgroup namespace
 * @kind:	AXON_CHARGE_*
 * @usage:	bytes charged
 * @limit:	bytes allowed, AXON_LIMIT_NONE for no limit
 * @peak:	highest usage seen
 * @failcnt:	charges refused because of this cgroup's limit
 */
struct axon_cg_info {
	u64 id;
	const char *path;
	unsigned int kind;
	u64 usage;
	u64 limit;
	u64 peak;
	u64 failcnt;
};

typedef int (*axon_cg_walk_fn)(void *arg, const struct axon_cg_info *info);

int axon_charge(struct axon_client *c, unsigned int kind, u64 bytes);
int axon_uncharge(struct axon_client *c, unsigned int kind, u64 bytes);
void axon_charge_client_close(struct axon_client *c, bool final);
u64 axon_charge_client_total(struct axon_client *c);
int axon_charge_cgroup_ok(void);
int axon_limit_set(struct cgroup *cgrp, unsigned int kind, u64 limit);
int axon_limit_get(struct cgroup *cgrp, unsigned int kind,
		   axon_cg_walk_fn fn, void *arg);
int axon_charge_walk(unsigned long *cursor, const struct axon_viewer *viewer,
		     axon_cg_walk_fn fn, void *arg);
void axon_charge_stats(u64 *charges, u64 *fails, u64 *uncharges,
		       u64 *charged);
void axon_charge_uninit(void);

#endif
