// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory accounting on 6.1: page_counter is not exported and misc
 * cgroup resources are a compile-time list, so the module keeps its own
 * hierarchical counters, one node per cgroup that has a usage or a limit,
 * keyed by cgroup id.
 *
 * A charge walks from the client's cgroup of the moment (the opener's
 * process's cgroup when the charge is made) to the root; if any node would
 * pass its limit nothing is charged (page_counter's rule) and the charge
 * fails with -EDQUOT. memcg's rule for a migration: new charges follow the
 * process, what was charged stays where it was charged and is given back
 * there. So each client keeps a record per cgroup it holds charges in
 * (struct axon_charge_rec, at most AXON_CLIENT_CGROUPS of them); an
 * uncharge, which names no cgroup, takes from the most recently charged
 * record first.
 * A node holds a cgroup reference only while it has usage. A removed
 * (dying) cgroup's charges move to its nearest live ancestor, as memcg
 * reparents (axon_rec_reparent()): there is no offline hook for a module,
 * so this happens when the client next charges or uncharges and whenever
 * the table is read or a limit set, and nothing is charged to a dying
 * cgroup in between (a dying charge target gives way to its live ancestor
 * too). A limit alone does not pin a cgroup: the node remembers its id and
 * is dropped once that id no longer resolves (lazily, when the nodes are
 * listed) or the limit is removed.
 *
 * A dmem backend (6.14+) would replace the nodes, not the records: the
 * records say what each client holds in which cgroup, the nodes are only
 * the counters and limits (axon_charge_check(), axon_uncharge_path(),
 * axon_rec_reparent()'s walk), which dmem keeps per pool itself and
 * reparents at offline on its own.
 *
 * One mutex protects the tree and every client's charged[] (GPU memory
 * allocation is not a hot path). cgroup_mutex (cgroup_path_ns) nests
 * inside it; nothing of ours is taken under cgroup_mutex.
 */
#include <linux/cgroup.h>
#include <linux/cgroup-defs.h>
#include <linux/limits.h>
#include <linux/mutex.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "axon_drv.h"
#include "charge.h"
#include "visible.h"
#include "netlink.h"

/**
 * struct axon_cg_node - counters of one cgroup
 * @id:		cgroup id
 * @cgrp:	reference held while any @usage is non-zero, else NULL
 * @usage:	bytes charged, per kind
 * @limit:	bytes allowed (AXON_LIMIT_NONE: no limit), per kind
 * @peak:	highest @usage seen, per kind
 * @failcnt:	charges refused here, per kind
 * @recs:	the client records charged to this very cgroup
 *		(axon_charge_rec.node_link)
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
 * struct axon_charge_rec - what one client holds charged to one cgroup
 * @link:	on the client's charge_recs, most recently charged first
 * @node_link:	on @node's recs
 * @client:	the client
 * @cgrp:	the cgroup charged (reference held)
 * @node:	its node (which has usage, so lives, while the record does)
 * @bytes:	per kind; the record goes when all are zero
 */
struct axon_charge_rec {
	struct list_head link;
	struct list_head node_link;
	struct axon_client *client;
	struct cgroup *cgrp;
	struct axon_cg_node *node;
	u64 bytes[AXON_CHARGE_KINDS];
};

/* Cgroups one client may hold charges in at once (CHARGE: -ENOSPC). */
#define AXON_CLIENT_CGROUPS	8

/* Protects axon_cg_nodes, every node, and clients' charge fields. */
static DEFINE_MUTEX(axon_charge_mutex);
static DEFINE_XARRAY(axon_cg_nodes);

static struct {
	u64 charges;
	u64 fails;
	u64 uncharges;
	u64 charged;
} axon_charge_stat;

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

static void axon_node_free(struct axon_cg_node *n)
{
	lockdep_assert_held(&axon_charge_mutex);
	xa_erase(&axon_cg_nodes, n->id);
	if (n->cgrp)
		cgroup_put(n->cgrp);
	kfree(n);
}

static void axon_node_gc(struct axon_cg_node *n)
{
	if (n && !axon_node_busy(n))
		axon_node_free(n);
}

static struct axon_cg_node *axon_node_get(u64 id, bool create)
{
	struct axon_cg_node *n;
	unsigned int k;

	lockdep_assert_held(&axon_charge_mutex);
	n = xa_load(&axon_cg_nodes, id);
	if (n || !create)
		return n;
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return NULL;
	n->id = id;
	INIT_LIST_HEAD(&n->recs);
	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		n->limit[k] = AXON_LIMIT_NONE;
	if (xa_insert(&axon_cg_nodes, id, n, GFP_KERNEL)) {
		kfree(n);
		return NULL;
	}
	return n;
}

/* Adds (or removes) usage on a node, taking or dropping its cgroup ref. */
static void axon_node_add(struct axon_cg_node *n, struct cgroup *cgrp,
			  unsigned int kind, u64 bytes, bool add)
{
	if (add) {
		if (!axon_node_usage(n) && !n->cgrp) {
			cgroup_get(cgrp);
			n->cgrp = cgrp;
		}
		n->usage[kind] += bytes;
		n->peak[kind] = max(n->peak[kind], n->usage[kind]);
	} else {
		n->usage[kind] -= bytes;
		if (!axon_node_usage(n) && n->cgrp) {
			cgroup_put(n->cgrp);
			n->cgrp = NULL;
		}
	}
}

/*
 * The opener's cgroup now, referenced: the client's process may have
 * moved since it opened. A failed tryget means that cgroup is going away
 * under a migration; the cgroup at open stands in then, as it does once
 * the opener is gone (its charges are being given back anyway).
 */
static struct cgroup *axon_client_cgroup_now(struct axon_client *c)
{
	struct task_struct *task;
	struct cgroup *cgrp = NULL;

	rcu_read_lock();
	task = pid_task(c->pid, PIDTYPE_TGID);
	if (task) {
		cgrp = task_dfl_cgroup(task);
		if (!cgroup_tryget(cgrp))
			cgrp = NULL;
	}
	rcu_read_unlock();
	if (!cgrp) {
		cgrp = c->cgrp;
		cgroup_get(cgrp);
	}
	return cgrp;
}

static struct axon_charge_rec *axon_rec_find(struct axon_client *c,
					     struct cgroup *cgrp)
{
	struct axon_charge_rec *rec;

	lockdep_assert_held(&axon_charge_mutex);
	list_for_each_entry(rec, &c->charge_recs, link)
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

static void axon_rec_free(struct axon_client *c, struct axon_charge_rec *rec)
{
	lockdep_assert_held(&axon_charge_mutex);
	list_del(&rec->node_link);
	list_del(&rec->link);
	c->nr_charge_recs--;
	cgroup_put(rec->cgrp);
	kfree(rec);
}

static bool axon_cgroup_dying(struct cgroup *cgrp)
{
	return css_is_dying(&cgrp->self);
}

/* The nearest live cgroup from @cgrp up (the root never dies); no ref. */
static struct cgroup *axon_live_ancestor(struct cgroup *cgrp)
{
	while (axon_cgroup_dying(cgrp) && cgroup_parent(cgrp))
		cgrp = cgroup_parent(cgrp);
	return cgrp;
}

/* @cgrp (a reference) or, if it is dying, its nearest live ancestor. */
static struct cgroup *axon_cgroup_live(struct cgroup *cgrp)
{
	struct cgroup *live = axon_live_ancestor(cgrp);

	if (live != cgrp) {
		cgroup_get(live);
		cgroup_put(cgrp);
	}
	return live;
}

/*
 * A record of a removed (dying) cgroup moves to the nearest live ancestor,
 * as memcg reparents: the ancestors' usage already holds its bytes, so only
 * the dying nodes between lose them (and go once empty, dropping their
 * cgroup reference); the record is merged into the client's record of the
 * ancestor if it has one. Limits of the ancestors keep applying, and later
 * uncharges go to the ancestor.
 */
static void axon_rec_reparent(struct axon_charge_rec *rec)
{
	struct cgroup *old = rec->cgrp, *live = axon_live_ancestor(old), *cg;
	struct axon_client *c = rec->client;
	struct axon_charge_rec *into;
	unsigned int k;

	lockdep_assert_held(&axon_charge_mutex);
	if (live == old)
		return;
	list_del_init(&rec->node_link);
	/* @old is referenced by the record and pins its ancestors */
	for (cg = old; cg != live; cg = cgroup_parent(cg)) {
		struct axon_cg_node *n = axon_node_get(cgroup_id(cg), false);

		if (WARN_ON_ONCE(!n))
			continue;
		for (k = 0; k < AXON_CHARGE_KINDS; k++) {
			if (!rec->bytes[k])
				continue;
			if (WARN_ON_ONCE(n->usage[k] < rec->bytes[k]))
				continue;
			axon_node_add(n, cg, k, rec->bytes[k], false);
		}
		/* a limit on a removed cgroup means nothing any more */
		for (k = 0; k < AXON_CHARGE_KINDS; k++)
			n->limit[k] = AXON_LIMIT_NONE;
		axon_node_gc(n);
	}
	into = axon_rec_find(c, live);
	if (into) {
		for (k = 0; k < AXON_CHARGE_KINDS; k++)
			into->bytes[k] += rec->bytes[k];
		list_del(&rec->link);
		c->nr_charge_recs--;
		kfree(rec);
	} else {
		cgroup_get(live);
		rec->cgrp = live;
		rec->node = axon_node_get(cgroup_id(live), false);
		list_add(&rec->node_link, &rec->node->recs);
	}
	axon_dbg(CHARGE, "client %llu charges of cgroup %llu to %llu\n",
		 c->id, cgroup_id(old), cgroup_id(live));
	cgroup_put(old);
}

/* Moves the client's records of dying cgroups to live ancestors. */
static void axon_client_reparent(struct axon_client *c)
{
	struct axon_charge_rec *rec, *tmp;

	list_for_each_entry_safe(rec, tmp, &c->charge_recs, link)
		axon_rec_reparent(rec);
}

/* Every dying node's records, when the table is read or changed. */
static void axon_reparent_all(void)
{
	struct axon_cg_node *n;
	unsigned long idx;

	lockdep_assert_held(&axon_charge_mutex);
	xa_for_each(&axon_cg_nodes, idx, n) {
		/* a move may free the node: look it up again each time */
		while ((n = xa_load(&axon_cg_nodes, idx)) && n->cgrp &&
		       axon_cgroup_dying(n->cgrp) && !list_empty(&n->recs))
			axon_rec_reparent(list_first_entry(&n->recs,
							   struct axon_charge_rec,
							   node_link));
	}
}

/* Checks @cgrp and every ancestor for room; 0 or -EDQUOT/-ENOMEM/... */
static int axon_charge_check(struct cgroup *cgrp, unsigned int kind,
			     u64 bytes, struct axon_cg_node **limited)
{
	struct axon_cg_node *n;
	struct cgroup *cg;

	for (cg = cgrp; cg; cg = cgroup_parent(cg)) {
		n = axon_node_get(cgroup_id(cg), true);
		if (!n)
			return -ENOMEM;
		/*
		 * Every node, limited or not: clients of one cgroup could
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
 * axon_charge() - charge a client's cgroup and its ancestors
 * @c:		the client
 * @kind:	AXON_CHARGE_*
 * @bytes:	amount
 *
 * The cgroup is the one the opener's process is in now.
 *
 * Return: 0, -EDQUOT (some limit would be passed; its failcnt is bumped
 * and a LIMIT_HIT netlink event names the cgroup), -ENOENT (the client is
 * gone or disconnected), -ENOMEM, -EOVERFLOW (the client's or a cgroup's
 * total would pass 2^64 - 1), -ENOSPC (the client already holds charges
 * in AXON_CLIENT_CGROUPS other cgroups).
 */
int axon_charge(struct axon_client *c, unsigned int kind, u64 bytes)
{
	struct axon_charge_rec *rec, *fresh;
	struct axon_cg_node *limited = NULL;
	u64 limited_id = 0, usage = 0, limit = 0;
	struct cgroup *cgrp, *cg;
	int ret = 0;

	if (!bytes)
		return 0;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
	if (!fresh)
		return -ENOMEM;
	cgrp = axon_client_cgroup_now(c);
	mutex_lock(&axon_charge_mutex);
	if (c->charge_closed) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (c->charged[kind] + bytes < bytes) {
		ret = -EOVERFLOW;
		goto out_unlock;
	}
	axon_client_reparent(c);
	cgrp = axon_cgroup_live(cgrp);
	rec = axon_rec_find(c, cgrp);
	if (!rec && c->nr_charge_recs >= AXON_CLIENT_CGROUPS) {
		ret = -ENOSPC;
		goto out_unlock;
	}
	ret = axon_charge_check(cgrp, kind, bytes, &limited);
	if (ret) {
		if (limited) {
			limited_id = limited->id;
			usage = limited->usage[kind];
			limit = limited->limit[kind];
		}
		/* Drop nodes this attempt created and left empty. */
		for (cg = cgrp; cg; cg = cgroup_parent(cg))
			axon_node_gc(axon_node_get(cgroup_id(cg), false));
		axon_charge_stat.fails++;
		goto out_unlock;
	}
	for (cg = cgrp; cg; cg = cgroup_parent(cg))
		axon_node_add(axon_node_get(cgroup_id(cg), false), cg, kind,
			      bytes, true);
	if (!rec) {
		rec = fresh;
		fresh = NULL;
		cgroup_get(cgrp);
		rec->client = c;
		rec->cgrp = cgrp;
		rec->node = axon_node_get(cgroup_id(cgrp), false);
		list_add(&rec->node_link, &rec->node->recs);
		list_add(&rec->link, &c->charge_recs);
		c->nr_charge_recs++;
	}
	rec->bytes[kind] += bytes;
	list_move(&rec->link, &c->charge_recs);
	c->charged[kind] += bytes;
	axon_charge_stat.charges++;
	axon_charge_stat.charged += bytes;
out_unlock:
	mutex_unlock(&axon_charge_mutex);
	axon_dbg(CHARGE, "client %llu charge %llu kind %u cgroup %llu: %d\n",
		 c->id, bytes, kind, cgroup_id(cgrp), ret);
	cgroup_put(cgrp);
	kfree(fresh);
	if (ret == -EDQUOT)
		axon_nl_limit_event(c, limited_id, kind, bytes, usage, limit);
	return ret;
}

/* Takes @bytes off @cgrp and every ancestor (the record holds @cgrp). */
static void axon_uncharge_path(struct cgroup *cgrp, unsigned int kind,
			       u64 bytes)
{
	struct cgroup *cg;

	lockdep_assert_held(&axon_charge_mutex);
	for (cg = cgrp; cg; cg = cgroup_parent(cg)) {
		struct axon_cg_node *n = axon_node_get(cgroup_id(cg), false);

		if (WARN_ON_ONCE(!n || n->usage[kind] < bytes))
			continue;
		axon_node_add(n, cg, kind, bytes, false);
		axon_node_gc(n);
	}
}

/* Gives back @bytes of @kind, most recently charged cgroup first. */
static void axon_uncharge_locked(struct axon_client *c, unsigned int kind,
				 u64 bytes)
{
	struct axon_charge_rec *rec, *tmp;
	u64 left = bytes;
	bool empty;

	lockdep_assert_held(&axon_charge_mutex);
	list_for_each_entry_safe(rec, tmp, &c->charge_recs, link) {
		u64 take = min(left, rec->bytes[kind]);

		if (!take)
			continue;
		rec->bytes[kind] -= take;
		left -= take;
		empty = axon_rec_empty(rec);
		/* off the node first: its last usage may free it */
		if (empty)
			list_del_init(&rec->node_link);
		axon_uncharge_path(rec->cgrp, kind, take);
		if (empty)
			axon_rec_free(c, rec);
		if (!left)
			break;
	}
	WARN_ON_ONCE(left);
	c->charged[kind] -= bytes;
	axon_charge_stat.uncharges++;
	axon_charge_stat.charged -= bytes;
}

/**
 * axon_uncharge() - give back part of a client's charge
 * @c:		the client
 * @kind:	AXON_CHARGE_*
 * @bytes:	at most what the client holds of @kind
 *
 * Return: 0, -EINVAL (more than charged), -ENOENT (closed: its charges were
 * already given back).
 */
int axon_uncharge(struct axon_client *c, unsigned int kind, u64 bytes)
{
	int ret = 0;

	if (!bytes)
		return 0;
	mutex_lock(&axon_charge_mutex);
	if (c->charge_closed) {
		ret = -ENOENT;
	} else if (bytes > c->charged[kind]) {
		ret = -EINVAL;
	} else {
		axon_client_reparent(c);
		axon_uncharge_locked(c, kind, bytes);
	}
	mutex_unlock(&axon_charge_mutex);
	return ret;
}

/**
 * axon_charge_client_close() - give back everything a client holds
 * @c:		the client
 * @final:	refuse further charges (released or disconnected); false when
 *		only the daemon went away
 */
void axon_charge_client_close(struct axon_client *c, bool final)
{
	unsigned int k;

	mutex_lock(&axon_charge_mutex);
	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		if (c->charged[k])
			axon_uncharge_locked(c, k, c->charged[k]);
	if (final)
		c->charge_closed = true;
	mutex_unlock(&axon_charge_mutex);
}

u64 axon_charge_client_total(struct axon_client *c)
{
	u64 sum = 0;
	unsigned int k;

	for (k = 0; k < AXON_CHARGE_KINDS; k++)
		sum += READ_ONCE(c->charged[k]);
	return sum;
}

/**
 * axon_charge_cgroup_ok() - may a client be set up on this system
 *
 * The counters are keyed by cgroup v2 and the ring pages charged to the
 * memcg: with the memory controller on a v1 hierarchy (a v1 system, or
 * systemd's hybrid mode) the cgroups limits are set on are not the ones
 * the processes are managed by, and every client would be charged to the
 * v2 root (legacy mode) or to cgroups no limit is kept on. So SETUP is
 * refused there rather than charging silently.
 *
 * Return: 0, or -EOPNOTSUPP (with a rate-limited line in the log).
 */
int axon_charge_cgroup_ok(void)
{
#ifdef CONFIG_MEMCG
	if (!cgroup_subsys_on_dfl(memory_cgrp_subsys)) {
		pr_warn_ratelimited("axon: SETUP refused for %s[%d]: the memory controller is on a cgroup v1 hierarchy; axon's accounting needs cgroup v2 (unified)\n",
				    current->comm, task_tgid_nr(current));
		return -EOPNOTSUPP;
	}
#endif
	return 0;
}

/**
 * axon_limit_set() - set or remove a cgroup's limit
 * @cgrp:	the cgroup (caller's reference)
 * @kind:	AXON_CHARGE_*
 * @limit:	bytes, or AXON_LIMIT_NONE
 *
 * A limit below the current usage is accepted: later charges fail.
 *
 * Return: 0 or -ENOMEM.
 */
int axon_limit_set(struct cgroup *cgrp, unsigned int kind, u64 limit)
{
	struct axon_cg_node *n;
	int ret = 0;

	mutex_lock(&axon_charge_mutex);
	axon_reparent_all();
	n = axon_node_get(cgroup_id(cgrp), limit != AXON_LIMIT_NONE);
	if (n) {
		n->limit[kind] = limit;
		axon_node_gc(n);
	} else if (limit != AXON_LIMIT_NONE) {
		ret = -ENOMEM;
	}
	mutex_unlock(&axon_charge_mutex);
	axon_dbg(CHARGE, "limit cgroup %llu kind %u: %llu\n", cgroup_id(cgrp),
		 kind, limit);
	return ret;
}

static int axon_node_report(struct axon_cg_node *n, struct cgroup *cgrp,
			    unsigned int kind, char *buf, axon_cg_walk_fn fn,
			    void *arg)
{
	struct axon_cg_info info = {
		.id = n ? n->id : cgroup_id(cgrp),
		.path = buf,
		.kind = kind,
		.usage = n ? n->usage[kind] : 0,
		.limit = n ? n->limit[kind] : AXON_LIMIT_NONE,
		.peak = n ? n->peak[kind] : 0,
		.failcnt = n ? n->failcnt[kind] : 0,
	};

	if (cgroup_path_ns(cgrp, buf, PATH_MAX, current->nsproxy->cgroup_ns) < 0)
		strscpy(buf, "?", PATH_MAX);
	return fn(arg, &info);
}

/**
 * axon_limit_get() - report one cgroup's counters (zeros if untracked)
 * @cgrp:	the cgroup
 * @kind:	AXON_CHARGE_*
 * @fn:		called once with the counters
 * @arg:	for @fn
 *
 * Return: what @fn returned, or -ENOMEM.
 */
int axon_limit_get(struct cgroup *cgrp, unsigned int kind,
		   axon_cg_walk_fn fn, void *arg)
{
	char *buf;
	int ret;

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&axon_charge_mutex);
	axon_reparent_all();
	ret = axon_node_report(axon_node_get(cgroup_id(cgrp), false), cgrp,
			       kind, buf, fn, arg);
	mutex_unlock(&axon_charge_mutex);
	kfree(buf);
	return ret;
}

/* The reader's cgroup namespace is rooted at the real root. */
static bool axon_cgns_is_init(void)
{
	return current->nsproxy->cgroup_ns->root_cset->dfl_cgrp ==
	       &cgrp_dfl_root.cgrp;
}

/**
 * axon_charge_walk() - report every tracked cgroup the reader may see
 * (axon_cgroup_visible()), in id order
 * @cursor:	in: first id to report; out: where to resume if @fn stopped
 * @viewer:	who reads
 * @fn:		called per node and kind; a negative return stops the walk
 * @arg:	for @fn
 *
 * Nodes that only hold a limit and whose cgroup no longer exists are
 * dropped here (when the reader sees the whole hierarchy).
 *
 * Return: 0 at the end, or @fn's negative return.
 */
int axon_charge_walk(unsigned long *cursor, const struct axon_viewer *viewer,
		     axon_cg_walk_fn fn, void *arg)
{
	bool init_ns = axon_cgns_is_init();
	struct axon_cg_node *n;
	unsigned long idx = *cursor;
	unsigned int k;
	char *buf;
	int ret = 0;

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&axon_charge_mutex);
	axon_reparent_all();
	xa_for_each_start(&axon_cg_nodes, idx, n, *cursor) {
		struct cgroup *cgrp = n->cgrp;
		bool ref = false;

		if (!cgrp) {
			cgrp = cgroup_get_from_id(n->id);
			if (IS_ERR(cgrp)) {
				if (PTR_ERR(cgrp) == -ENOENT && init_ns)
					axon_node_free(n);
				continue;
			}
			ref = true;
		}
		/* a cgroup outside the reader's namespace is skipped */
		for (k = 0; k < AXON_CHARGE_KINDS && !ret; k++) {
			if (!axon_cgroup_visible(cgrp, viewer))
				break;
			ret = axon_node_report(n, cgrp, k, buf, fn, arg);
		}
		if (ref)
			cgroup_put(cgrp);
		if (ret) {
			*cursor = idx;
			break;
		}
	}
	mutex_unlock(&axon_charge_mutex);
	kfree(buf);
	return ret;
}

void axon_charge_stats(u64 *charges, u64 *fails, u64 *uncharges, u64 *charged)
{
	mutex_lock(&axon_charge_mutex);
	*charges = axon_charge_stat.charges;
	*fails = axon_charge_stat.fails;
	*uncharges = axon_charge_stat.uncharges;
	*charged = axon_charge_stat.charged;
	mutex_unlock(&axon_charge_mutex);
}

/* Module exit: no client is left, so only limit nodes remain. */
void axon_charge_uninit(void)
{
	struct axon_cg_node *n;
	unsigned long idx;

	mutex_lock(&axon_charge_mutex);
	xa_for_each(&axon_cg_nodes, idx, n) {
		WARN_ON(axon_node_usage(n));
		axon_node_free(n);
	}
	mutex_unlock(&axon_charge_mutex);
	xa_destroy(&axon_cg_nodes);
}
