/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The charge logic proper: hierarchical counters with limits over a tree
 * of cgroups, and what each account (a client) holds in which cgroup. It
 * reaches the cgroups only through struct axon_cg_ops, so that it can be
 * tested on a made-up hierarchy (charge_kunit.c); charge.c runs it on the
 * real one.
 */
#ifndef AXON_KMOD_CHARGE_TREE_H
#define AXON_KMOD_CHARGE_TREE_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/xarray.h>
#include <linux/axon.h>

struct cgroup;
struct axon_charge_acct;

/* Cgroups one account may hold charges in at once (a charge: -ENOSPC). */
#define AXON_CLIENT_CGROUPS	8

/**
 * struct axon_cg_ops - how the tree sees the cgroup hierarchy
 * @parent:	the parent, NULL for the root
 * @id:		a unique, stable id (cgroup_id())
 * @dying:	removed, but still referenced; never true of the root
 * @get:	take a reference
 * @put:	drop one
 * @moved:	optional: @a's charges of @from now belong to @to (for a log)
 */
struct axon_cg_ops {
	struct cgroup *(*parent)(struct cgroup *cg);
	u64 (*id)(struct cgroup *cg);
	bool (*dying)(struct cgroup *cg);
	void (*get)(struct cgroup *cg);
	void (*put)(struct cgroup *cg);
	void (*moved)(struct axon_charge_acct *a, struct cgroup *from,
		      struct cgroup *to);
};

/**
 * struct axon_charge_tree - the counters of every tracked cgroup
 * @ops:	the hierarchy
 * @lock:	protects @nodes, every node, and every account of the tree
 * @nodes:	struct axon_cg_node by cgroup id
 * @stat:	charges made, refused, uncharges made, bytes charged now
 */
struct axon_charge_tree {
	const struct axon_cg_ops *ops;
	struct mutex lock;	/* see above */
	struct xarray nodes;
	struct {
		u64 charges;
		u64 fails;
		u64 uncharges;
		u64 charged;
	} stat;
};

/**
 * struct axon_cg_node - counters of one cgroup
 * @id:		cgroup id
 * @cgrp:	reference held while any @usage is non-zero, else NULL
 * @recs:	the account records charged to this very cgroup
 *		(axon_charge_rec.node_link)
 * @usage:	bytes charged, per kind
 * @limit:	bytes allowed (AXON_LIMIT_NONE: no limit), per kind
 * @peak:	highest @usage seen, per kind
 * @failcnt:	charges refused here, per kind
 */
struct axon_cg_node {
	u64 id;
	struct cgroup *cgrp;
	struct list_head recs;
	u64 usage[AXON_CHARGE_KINDS];
	u64 limit[AXON_CHARGE_KINDS];
	u64 peak[AXON_CHARGE_KINDS];
	u64 failcnt[AXON_CHARGE_KINDS];
};

/**
 * struct axon_charge_acct - what one client holds, under the tree's lock
 * @charged:	bytes charged per kind, all cgroups
 * @recs:	struct axon_charge_rec per cgroup charged, most recently
 *		charged first
 * @nr_recs:	entries on @recs, at most AXON_CLIENT_CGROUPS
 * @closed:	no more charges (client gone or disconnected)
 */
struct axon_charge_acct {
	u64 charged[AXON_CHARGE_KINDS];
	struct list_head recs;
	unsigned int nr_recs;
	bool closed;
};

/**
 * struct axon_charge_hit - the limit a refused charge ran into
 * @id:		the limiting cgroup's id
 * @usage:	its usage then
 * @limit:	its limit
 */
struct axon_charge_hit {
	u64 id;
	u64 usage;
	u64 limit;
};

void axon_charge_tree_init(struct axon_charge_tree *t,
			   const struct axon_cg_ops *ops);
void axon_charge_tree_destroy(struct axon_charge_tree *t);
void axon_charge_acct_init(struct axon_charge_acct *a);

int axon_tree_charge(struct axon_charge_tree *t, struct axon_charge_acct *a,
		     struct cgroup *cgrp, unsigned int kind, u64 bytes,
		     struct axon_charge_hit *hit);
int axon_tree_uncharge(struct axon_charge_tree *t, struct axon_charge_acct *a,
		       unsigned int kind, u64 bytes);
void axon_tree_close(struct axon_charge_tree *t, struct axon_charge_acct *a,
		     bool final);
u64 axon_tree_acct_total(struct axon_charge_acct *a);
int axon_tree_limit_set(struct axon_charge_tree *t, struct cgroup *cgrp,
			unsigned int kind, u64 limit);

/* Under t->lock: for the readers of the table (charge.c). */
struct axon_cg_node *axon_tree_node(struct axon_charge_tree *t, u64 id);
void axon_tree_node_free(struct axon_charge_tree *t, struct axon_cg_node *n);
void axon_tree_reparent_all(struct axon_charge_tree *t);

#endif
