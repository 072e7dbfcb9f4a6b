// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory accounting on 6.1: the charge logic of charge_tree.c run
 * on the real cgroup v2 hierarchy, one tree for the module. This file is
 * what ties it to the kernel: which cgroup a client charges (its opener's
 * of the moment), the LIMIT_HIT event, and the table's readers (/proc and
 * netlink), which see cgroups by path.
 *
 * One mutex (the tree's) protects the tree and every client's account
 * (GPU memory allocation is not a hot path). cgroup_mutex (cgroup_path_ns)
 * nests inside it; nothing of ours is taken under cgroup_mutex.
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
#include "charge_tree.h"
#include "visible.h"
#include "netlink.h"

static struct cgroup *axon_cg_parent(struct cgroup *cg)
{
	return cgroup_parent(cg);
}

static u64 axon_cg_id(struct cgroup *cg)
{
	return cgroup_id(cg);
}

/*
 * Removed (rmdir) but still referenced: what the kernel's own
 * cgroup_is_dead() tests. Not css_is_dying(&cg->self): newer kernels (7.2)
 * mark only the controllers' csses CSS_DYING, never the cgroup's self.
 */
static bool axon_cg_dying(struct cgroup *cg)
{
	return cgroup_parent(cg) && !(READ_ONCE(cg->self.flags) & CSS_ONLINE);
}

static void axon_cg_get(struct cgroup *cg)
{
	cgroup_get(cg);
}

static void axon_cg_put(struct cgroup *cg)
{
	cgroup_put(cg);
}

static void axon_cg_moved(struct axon_charge_acct *a, struct cgroup *from,
			  struct cgroup *to)
{
	struct axon_client *c = container_of(a, struct axon_client, charge);

	axon_dbg(CHARGE, "client %llu charges of cgroup %llu to %llu\n",
		 c->id, cgroup_id(from), cgroup_id(to));
}

static const struct axon_cg_ops axon_cgroup_ops = {
	.parent = axon_cg_parent,
	.id = axon_cg_id,
	.dying = axon_cg_dying,
	.get = axon_cg_get,
	.put = axon_cg_put,
	.moved = axon_cg_moved,
};

/* Device memory of a client that opened while dmem was on (charge_dmem.c). */
static bool axon_dmem_charges(struct axon_client *c, unsigned int kind)
{
	return kind == AXON_CHARGE_DEVICE_MEM && axon_dmem_active(&c->dmem);
}

static struct axon_charge_tree axon_tree = {
	.ops = &axon_cgroup_ops,
	.lock = __MUTEX_INITIALIZER(axon_tree.lock),
	.nodes = XARRAY_INIT(axon_tree.nodes, 0),
};

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

/**
 * axon_charge() - charge a client's cgroup and its ancestors
 * @c:		the client
 * @kind:	AXON_CHARGE_*
 * @bytes:	amount
 *
 * The cgroup is the one the opener's process is in now (or, if that one
 * was removed, its nearest live ancestor).
 *
 * Return: as axon_tree_charge(); on -EDQUOT a LIMIT_HIT netlink event
 * names the cgroup.
 */
int axon_charge(struct axon_client *c, unsigned int kind, u64 bytes)
{
	struct axon_charge_hit hit = { 0 };
	struct cgroup *cgrp;
	int ret;

	if (!bytes)
		return 0;
	cgrp = axon_client_cgroup_now(c);
	if (axon_dmem_charges(c, kind)) {
		u64 now;

		/*
		 * The reservation first: a charge it cannot cover leaves no
		 * trace in the counters (peak, stats, a sibling's limit).
		 */
		mutex_lock(&c->dmem.lock);
		now = READ_ONCE(c->charge.charged[kind]);
		if (now > U64_MAX - bytes)
			ret = -EOVERFLOW;
		else if (!axon_dmem_covers(&c->dmem, now + bytes))
			ret = -ENOBUFS;
		else
			ret = axon_tree_charge(&axon_tree, &c->charge, cgrp, kind,
					       bytes, &hit);
		if (!ret)
			WARN_ON(axon_dmem_consume(&c->dmem, now + bytes));
		mutex_unlock(&c->dmem.lock);
	} else {
		ret = axon_tree_charge(&axon_tree, &c->charge, cgrp, kind,
				       bytes, &hit);
	}
	axon_dbg(CHARGE, "client %llu charge %llu kind %u cgroup %llu: %d\n",
		 c->id, bytes, kind, cgroup_id(cgrp), ret);
	cgroup_put(cgrp);
	if (ret == -EDQUOT)
		axon_nl_limit_event(c, hit.id, kind, bytes, hit.usage,
				    hit.limit);
	return ret;
}

/**
 * axon_uncharge() - give back part of a client's charge
 * @c:		the client
 * @kind:	AXON_CHARGE_*
 * @bytes:	at most what the client holds of @kind
 *
 * Return: as axon_tree_uncharge().
 */
int axon_uncharge(struct axon_client *c, unsigned int kind, u64 bytes)
{
	int ret;

	if (!axon_dmem_charges(c, kind))
		return axon_tree_uncharge(&axon_tree, &c->charge, kind, bytes);
	mutex_lock(&c->dmem.lock);
	ret = axon_tree_uncharge(&axon_tree, &c->charge, kind, bytes);
	if (!ret)
		axon_dmem_give_back(&c->dmem, READ_ONCE(c->charge.charged[kind]),
				    false);
	mutex_unlock(&c->dmem.lock);
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
	if (!axon_dmem_active(&c->dmem)) {
		axon_tree_close(&axon_tree, &c->charge, final);
		return;
	}
	mutex_lock(&c->dmem.lock);
	axon_tree_close(&axon_tree, &c->charge, final);
	axon_dmem_give_back(&c->dmem, 0, final);
	mutex_unlock(&c->dmem.lock);
}

u64 axon_charge_client_total(struct axon_client *c)
{
	return axon_tree_acct_total(&c->charge);
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
 * Return: as axon_tree_limit_set().
 */
int axon_limit_set(struct cgroup *cgrp, unsigned int kind, u64 limit)
{
	int ret = axon_tree_limit_set(&axon_tree, cgrp, kind, limit);

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
	mutex_lock(&axon_tree.lock);
	axon_tree_reparent_all(&axon_tree);
	ret = axon_node_report(axon_tree_node(&axon_tree, cgroup_id(cgrp)), cgrp,
			       kind, buf, fn, arg);
	mutex_unlock(&axon_tree.lock);
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
	mutex_lock(&axon_tree.lock);
	axon_tree_reparent_all(&axon_tree);
	xa_for_each_start(&axon_tree.nodes, idx, n, *cursor) {
		struct cgroup *cgrp = n->cgrp;
		bool ref = false;

		if (!cgrp) {
			cgrp = cgroup_get_from_id(n->id);
			if (IS_ERR(cgrp)) {
				if (PTR_ERR(cgrp) == -ENOENT && init_ns)
					axon_tree_node_free(&axon_tree, n);
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
	mutex_unlock(&axon_tree.lock);
	kfree(buf);
	return ret;
}

void axon_charge_stats(u64 *charges, u64 *fails, u64 *uncharges, u64 *charged)
{
	mutex_lock(&axon_tree.lock);
	*charges = axon_tree.stat.charges;
	*fails = axon_tree.stat.fails;
	*uncharges = axon_tree.stat.uncharges;
	*charged = axon_tree.stat.charged;
	mutex_unlock(&axon_tree.lock);
}

/* Module exit: no client is left, so only limit nodes remain. */
void axon_charge_uninit(void)
{
	axon_charge_tree_destroy(&axon_tree);
}
