// SPDX-License-Identifier: GPL-2.0
/*
 * Hierarchical counters with limits, one node per cgroup that has a usage
 * or a limit, keyed by cgroup id (6.1 exports neither page_counter nor a
 * way to add misc cgroup resources, so the module keeps its own).
 *
 * A charge walks from the account's cgroup to the root; if any node would
 * pass its limit nothing is charged (page_counter's rule) and the charge
 * fails with -EDQUOT. memcg's rule for a migration: new charges follow the
 * process, what was charged stays where it was charged and is given back
 * there. So each account keeps a record per cgroup it holds charges in
 * (struct axon_charge_rec, at most AXON_CLIENT_CGROUPS of them); an
 * uncharge, which names no cgroup, takes from the most recently charged
 * record first.
 * A node holds a cgroup reference only while it has usage. A removed
 * (dying) cgroup's charges move to its nearest live ancestor, as memcg
 * reparents (axon_rec_reparent()): there is no offline hook for a module,
 * so this happens when the account next charges or uncharges and whenever
 * the table is read or a limit set, and nothing is charged to a dying
 * cgroup in between (a dying charge target gives way to its live ancestor
 * too). A limit alone does not pin a cgroup: the node remembers its id and
 * is dropped once that id no longer resolves (charge.c, when the nodes are
 * listed) or the limit is removed.
 *
 * A dmem backend (6.14+) would replace the nodes, not the records: the
 * records say what each client holds in which cgroup, the nodes are only
 * the counters and limits (axon_charge_check(), axon_uncharge_path(),
 * axon_rec_reparent()'s walk), which dmem keeps per pool itself and
 * reparents at offline on its own.
 *
 * The cgroups are reached only through the tree's struct axon_cg_ops.
 */
#include <linux/bug.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include "charge_tree.h"

/**
 * struct axon_charge_rec - what one account holds charged to one cgroup
 * @link:	on the account's recs, most recently charged first
 * @node_link:	on @node's recs
 * @acct:	the account
 * @cgrp:	the cgroup charged (reference held)
 * @node:	its node (which has usage, so lives, while the record does)
 * @bytes:	per kind; the record goes when all are zero
 */
struct axon_charge_rec {
	struct list_head link;
	struct list_head node_link;
	struct axon_charge_acct *acct;
	struct cgroup *cgrp;
	struct axon_cg_node *node;
	u64 bytes[AXON_CHARGE_KINDS];
};

void axon_charge_tree_init(struct axon_charge_tree *t,
			   const struct axon_cg_ops *ops)
{
	memset(t, 0, sizeof(*t));
	t->ops = ops;
	mutex_init(&t->lock);
	xa_init(&t->nodes);
}

void axon_charge_acct_init(struct axon_charge_acct *a)
{
	memset(a, 0, sizeof(*a));
	INIT_LIST_HEAD(&a->recs);
}

static bool axon_node_busy(const struct axon_cg_node *n)
{
	unsigned int k;

	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		if (n->usage[k] || n->limit[k] != AXON_LIMIT_NONE)
			return true;
	return false;
}

static u64 axon_node_usage(const struct axon_cg_node *n)
{
	u64 sum = 0;
	unsigned int k;

	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		sum += n->usage[k];
	return sum;
}

void axon_tree_node_free(struct axon_charge_tree *t, struct axon_cg_node *n)
{
	lockdep_assert_held(&t->lock);
	xa_erase(&t->nodes, n->id);
	if (n->cgrp)
		t->ops->put(n->cgrp);
	kfree(n);
}

static void axon_node_gc(struct axon_charge_tree *t, struct axon_cg_node *n)
{
	if (n && !axon_node_busy(n))
		axon_tree_node_free(t, n);
}

struct axon_cg_node *axon_tree_node(struct axon_charge_tree *t, u64 id)
{
	lockdep_assert_held(&t->lock);
	return xa_load(&t->nodes, id);
}

static struct axon_cg_node *axon_node_get(struct axon_charge_tree *t, u64 id)
{
	struct axon_cg_node *n;
	unsigned int k;

	n = axon_tree_node(t, id);
	if (n)
		return n;
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return NULL;
	n->id = id;
	INIT_LIST_HEAD(&n->recs);
	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		n->limit[k] = AXON_LIMIT_NONE;
	if (xa_insert(&t->nodes, id, n, GFP_KERNEL)) {
		kfree(n);
		return NULL;
	}
	return n;
}

/* The node of @cg, which the caller knows exists. */
static struct axon_cg_node *axon_node_of(struct axon_charge_tree *t,
					 struct cgroup *cg)
{
	return axon_tree_node(t, t->ops->id(cg));
}

/* Adds (or removes) usage on a node, taking or dropping its cgroup ref. */
static void axon_node_add(struct axon_charge_tree *t, struct axon_cg_node *n,
			  struct cgroup *cgrp, unsigned int kind, u64 bytes,
			  bool add)
{
	if (add) {
		if (!axon_node_usage(n) && !n->cgrp) {
			t->ops->get(cgrp);
			n->cgrp = cgrp;
		}
		n->usage[kind] += bytes;
		n->peak[kind] = max(n->peak[kind], n->usage[kind]);
	} else {
		n->usage[kind] -= bytes;
		if (!axon_node_usage(n) && n->cgrp) {
			t->ops->put(n->cgrp);
			n->cgrp = NULL;
		}
	}
}

static struct axon_charge_rec *axon_rec_find(struct axon_charge_tree *t,
					     struct axon_charge_acct *a,
					     struct cgroup *cgrp)
{
	struct axon_charge_rec *rec;

	lockdep_assert_held(&t->lock);
	list_for_each_entry(rec, &a->recs, link)
		if (rec->cgrp == cgrp)
			return rec;
	return NULL;
}

static bool axon_rec_empty(const struct axon_charge_rec *rec)
{
	unsigned int k;

	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		if (rec->bytes[k])
			return false;
	return true;
}

static void axon_rec_free(struct axon_charge_tree *t,
			  struct axon_charge_rec *rec)
{
	lockdep_assert_held(&t->lock);
	list_del(&rec->node_link);
	list_del(&rec->link);
	rec->acct->nr_recs--;
	t->ops->put(rec->cgrp);
	kfree(rec);
}

/* The nearest live cgroup from @cgrp up (the root never dies); no ref. */
static struct cgroup *axon_live_ancestor(struct axon_charge_tree *t,
					 struct cgroup *cgrp)
{
	while (t->ops->dying(cgrp) && t->ops->parent(cgrp))
		cgrp = t->ops->parent(cgrp);
	return cgrp;
}

/*
 * A record of a removed (dying) cgroup moves to the nearest live ancestor,
 * as memcg reparents: the ancestors' usage already holds its bytes, so only
 * the dying nodes between lose them (and go once empty, dropping their
 * cgroup reference); the record is merged into the account's record of the
 * ancestor if it has one. Limits of the ancestors keep applying, and later
 * uncharges go to the ancestor.
 */
static void axon_rec_reparent(struct axon_charge_tree *t,
			      struct axon_charge_rec *rec)
{
	struct cgroup *old = rec->cgrp, *live = axon_live_ancestor(t, old), *cg;
	struct axon_charge_acct *a = rec->acct;
	struct axon_charge_rec *into;
	unsigned int k;

	lockdep_assert_held(&t->lock);
	if (live == old)
		return;
	list_del_init(&rec->node_link);
	/* @old is referenced by the record and pins its ancestors */
	for (cg = old; cg != live; cg = t->ops->parent(cg)) {
		struct axon_cg_node *n = axon_node_of(t, cg);

		if (WARN_ON_ONCE(!n))
			continue;
		for (k = 0; k < AXON_CHARGE_KINDS; k++) {
			if (!rec->bytes[k])
				continue;
			if (WARN_ON_ONCE(n->usage[k] < rec->bytes[k]))
				continue;
			axon_node_add(t, n, cg, k, rec->bytes[k], false);
		}
		/* a limit on a removed cgroup means nothing any more */
		for (k = 0; k < AXON_CHARGE_KINDS; k++)
			n->limit[k] = AXON_LIMIT_NONE;
		axon_node_gc(t, n);
	}
	into = axon_rec_find(t, a, live);
	if (into) {
		for (k = 0; k < AXON_CHARGE_KINDS; k++)
			into->bytes[k] += rec->bytes[k];
		list_del(&rec->link);
		a->nr_recs--;
		kfree(rec);
	} else {
		t->ops->get(live);
		rec->cgrp = live;
		rec->node = axon_node_of(t, live);
		list_add(&rec->node_link, &rec->node->recs);
	}
	if (t->ops->moved)
		t->ops->moved(a, old, live);
	t->ops->put(old);
}

/* Moves the account's records of dying cgroups to live ancestors. */
static void axon_acct_reparent(struct axon_charge_tree *t,
			       struct axon_charge_acct *a)
{
	struct axon_charge_rec *rec, *tmp;

	list_for_each_entry_safe(rec, tmp, &a->recs, link)
		axon_rec_reparent(t, rec);
}

/* Every dying node's records, when the table is read or changed. */
void axon_tree_reparent_all(struct axon_charge_tree *t)
{
	struct axon_cg_node *n;
	unsigned long idx;

	lockdep_assert_held(&t->lock);
	xa_for_each(&t->nodes, idx, n) {
		/* a move may free the node: look it up again each time */
		while ((n = xa_load(&t->nodes, idx)) && n->cgrp &&
		       t->ops->dying(n->cgrp) && !list_empty(&n->recs))
			axon_rec_reparent(t, list_first_entry(&n->recs,
							      struct axon_charge_rec,
							      node_link));
	}
}

/* Checks @cgrp and every ancestor for room; 0 or -EDQUOT/-ENOMEM/... */
static int axon_charge_check(struct axon_charge_tree *t, struct cgroup *cgrp,
			     unsigned int kind, u64 bytes,
			     struct axon_cg_node **limited)
{
	struct axon_cg_node *n;
	struct cgroup *cg;

	for (cg = cgrp; cg; cg = t->ops->parent(cg)) {
		n = axon_node_get(t, t->ops->id(cg));
		if (!n)
			return -ENOMEM;
		/*
		 * Every node, limited or not: accounts of one cgroup could
		 * otherwise wrap its usage (and the root's) between them.
		 */
		if (n->usage[kind] + bytes < bytes)
			return -EOVERFLOW;
		if (n->limit[kind] != AXON_LIMIT_NONE &&
		    n->usage[kind] + bytes > n->limit[kind]) {
			n->failcnt[kind]++;
			*limited = n;
			return -EDQUOT;
		}
	}
	return 0;
}

/**
 * axon_tree_charge() - charge a cgroup and its ancestors for an account
 * @t:		the tree
 * @a:		the account
 * @cgrp:	the cgroup to charge (caller's reference); a dying one gives
 *		way to its nearest live ancestor
 * @kind:	AXON_CHARGE_*, below AXON_CHARGE_KINDS
 * @bytes:	amount
 * @hit:	on -EDQUOT, the cgroup whose limit refused it
 *
 * Return: 0, -EDQUOT (some limit would be passed; its failcnt is bumped),
 * -ENOENT (the account is closed), -ENOMEM, -EOVERFLOW (the account's or a
 * cgroup's total would pass 2^64 - 1), -ENOSPC (the account already holds
 * charges in AXON_CLIENT_CGROUPS other cgroups). Nothing is charged
 * anywhere unless it returns 0.
 */
int axon_tree_charge(struct axon_charge_tree *t, struct axon_charge_acct *a,
		     struct cgroup *cgrp, unsigned int kind, u64 bytes,
		     struct axon_charge_hit *hit)
{
	struct axon_charge_rec *rec, *fresh;
	struct axon_cg_node *limited = NULL;
	struct cgroup *cg;
	int ret = 0;

	if (!bytes)
		return 0;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	mutex_lock(&t->lock);
	if (a->closed) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (a->charged[kind] + bytes < bytes) {
		ret = -EOVERFLOW;
		goto out_unlock;
	}
	axon_acct_reparent(t, a);
	/* the caller's reference on @cgrp pins its ancestors */
	cgrp = axon_live_ancestor(t, cgrp);
	rec = axon_rec_find(t, a, cgrp);
	if (!rec && a->nr_recs >= AXON_CLIENT_CGROUPS) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	ret = axon_charge_check(t, cgrp, kind, bytes, &limited);
	if (ret) {
		if (limited) {
			hit->id = limited->id;
			hit->usage = limited->usage[kind];
			hit->limit = limited->limit[kind];
		}
		/* Drop nodes this attempt created and left empty. */
		for (cg = cgrp; cg; cg = t->ops->parent(cg))
			axon_node_gc(t, axon_node_of(t, cg));
		t->stat.fails++;
		goto out_unlock;
	}
	for (cg = cgrp; cg; cg = t->ops->parent(cg))
		axon_node_add(t, axon_node_of(t, cg), cg, kind, bytes, true);
	if (!rec) {
		rec = fresh;
		fresh = NULL;
		t->ops->get(cgrp);
		rec->acct = a;
		rec->cgrp = cgrp;
		rec->node = axon_node_of(t, cgrp);
		list_add(&rec->node_link, &rec->node->recs);
		list_add(&rec->link, &a->recs);
		a->nr_recs++;
	}
	rec->bytes[kind] += bytes;
	list_move(&rec->link, &a->recs);
	a->charged[kind] += bytes;
	t->stat.charges++;
	t->stat.charged += bytes;
out_unlock:
	mutex_unlock(&t->lock);
	kfree(fresh);
	return ret;
}

/* Takes @bytes off @cgrp and every ancestor (the record holds @cgrp). */
static void axon_uncharge_path(struct axon_charge_tree *t, struct cgroup *cgrp,
			       unsigned int kind, u64 bytes)
{
	struct cgroup *cg;

	lockdep_assert_held(&t->lock);
	for (cg = cgrp; cg; cg = t->ops->parent(cg)) {
		struct axon_cg_node *n = axon_node_of(t, cg);

		if (WARN_ON_ONCE(!n || n->usage[kind] < bytes))
			continue;
		axon_node_add(t, n, cg, kind, bytes, false);
		axon_node_gc(t, n);
	}
}

/* Gives back @bytes of @kind, most recently charged cgroup first. */
static void axon_uncharge_locked(struct axon_charge_tree *t,
				 struct axon_charge_acct *a, unsigned int kind,
				 u64 bytes)
{
	struct axon_charge_rec *rec, *tmp;
	u64 left = bytes;
	bool empty;

	lockdep_assert_held(&t->lock);
	list_for_each_entry_safe(rec, tmp, &a->recs, link) {
		u64 take = min(left, rec->bytes[kind]);

		if (!take)
			continue;
		rec->bytes[kind] -= take;
		left -= take;
		empty = axon_rec_empty(rec);
		/* off the node first: its last usage may free it */
		if (empty)
			list_del_init(&rec->node_link);
		axon_uncharge_path(t, rec->cgrp, kind, take);
		if (empty)
			axon_rec_free(t, rec);
		if (!left)
			break;
	}
	WARN_ON_ONCE(left);
	a->charged[kind] -= bytes;
	t->stat.uncharges++;
	t->stat.charged -= bytes;
}

/**
 * axon_tree_uncharge() - give back part of an account's charge
 * @t:		the tree
 * @a:		the account
 * @kind:	AXON_CHARGE_*, below AXON_CHARGE_KINDS
 * @bytes:	at most what the account holds of @kind
 *
 * Return: 0, -EINVAL (more than charged), -ENOENT (closed: its charges were
 * already given back).
 */
int axon_tree_uncharge(struct axon_charge_tree *t, struct axon_charge_acct *a,
		       unsigned int kind, u64 bytes)
{
	int ret = 0;

	if (!bytes)
		return 0;
	mutex_lock(&t->lock);
	if (a->closed) {
		ret = -ENOENT;
	} else if (bytes > a->charged[kind]) {
		ret = -EINVAL;
	} else {
		axon_acct_reparent(t, a);
		axon_uncharge_locked(t, a, kind, bytes);
	}
	mutex_unlock(&t->lock);
	return ret;
}

/**
 * axon_tree_close() - give back everything an account holds
 * @t:		the tree
 * @a:		the account
 * @final:	refuse further charges (released or disconnected); false when
 *		only the daemon went away
 */
void axon_tree_close(struct axon_charge_tree *t, struct axon_charge_acct *a,
		     bool final)
{
	unsigned int k;

	mutex_lock(&t->lock);
	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		if (a->charged[k])
			axon_uncharge_locked(t, a, k, a->charged[k]);
	if (final)
		a->closed = true;
	mutex_unlock(&t->lock);
}

/* What the account holds, all kinds; a racy read for /proc and netlink. */
u64 axon_tree_acct_total(struct axon_charge_acct *a)
{
	u64 sum = 0;
	unsigned int k;

	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		sum += READ_ONCE(a->charged[k]);
	return sum;
}

/**
 * axon_tree_limit_set() - set or remove a cgroup's limit
 * @t:		the tree
 * @cgrp:	the cgroup (caller's reference)
 * @kind:	AXON_CHARGE_*, below AXON_CHARGE_KINDS
 * @limit:	bytes, or AXON_LIMIT_NONE
 *
 * A limit below the current usage is accepted: later charges fail.
 *
 * Return: 0 or -ENOMEM.
 */
int axon_tree_limit_set(struct axon_charge_tree *t, struct cgroup *cgrp,
			unsigned int kind, u64 limit)
{
	struct axon_cg_node *n;
	u64 id = t->ops->id(cgrp);
	int ret = 0;

	mutex_lock(&t->lock);
	axon_tree_reparent_all(t);
	n = limit != AXON_LIMIT_NONE ? axon_node_get(t, id) :
				       axon_tree_node(t, id);
	if (n) {
		n->limit[kind] = limit;
		axon_node_gc(t, n);
	} else if (limit != AXON_LIMIT_NONE) {
		ret = -ENOMEM;
	}
	mutex_unlock(&t->lock);
	return ret;
}

/* Module exit: no account is left, so only limit nodes remain. */
void axon_charge_tree_destroy(struct axon_charge_tree *t)
{
	struct axon_cg_node *n;
	unsigned long idx;

	mutex_lock(&t->lock);
	xa_for_each(&t->nodes, idx, n) {
		WARN_ON(axon_node_usage(n));
		axon_tree_node_free(t, n);
	}
	mutex_unlock(&t->lock);
	xa_destroy(&t->nodes);
}
