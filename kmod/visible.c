// SPDX-License-Identifier: GPL-2.0
/*
 * Tenants do not see each other. /proc/axon/clients and the netlink client
 * dump name a client's pid, uid, cgroup, charge and ring counters: a
 * reader sees a client only as it could see the opener in /proc, that is
 * when the opener's pid exists in the reader's pid namespace, the
 * client's cgroup lies inside the reader's cgroup namespace, and the
 * reader is the same user (real or effective uid) or may ptrace the
 * opener's user namespace (CAP_SYS_PTRACE there; the module cannot call
 * ptrace_may_access()). The per-cgroup tables show only cgroups inside
 * the reader's cgroup namespace. CAP_SYS_ADMIN or CAP_NET_ADMIN in the
 * initial user namespace sees everything (axon-top run by the admin,
 * axond's monitoring).
 *
 * The credentials judged are those the file was opened with (f_cred), as
 * for the kernel's own /proc files: a reader that gained privilege after
 * opening (setuid) sees what the opener could, and so does one a
 * privileged opener passed the file to. Netlink checks the socket's
 * opener and the task both, as netlink_capable() does. The namespaces
 * (pid, cgroup) are the reading task's.
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/nsproxy.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>

#include "axon_drv.h"
#include "visible.h"

/* Not audited: a denial here only hides rows, it refuses nothing. */
static bool axon_sees_all(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN) ||
	       ns_capable_noaudit(&init_user_ns, CAP_NET_ADMIN);
}

static bool axon_cgroup_in_ns(struct cgroup *cgrp)
{
	struct cgroup *root = current->nsproxy->cgroup_ns->root_cset->dfl_cgrp;

	return cgroup_is_descendant(cgrp, root);
}

/* Both checks run as current_cred(): the viewer's is put in place. */
static bool axon_cgroup_visible_cur(struct cgroup *cgrp)
{
	return axon_sees_all() || axon_cgroup_in_ns(cgrp);
}

static bool axon_client_visible_cur(struct axon_client *c)
{
	const struct cred *cred = current_cred();

	if (axon_sees_all())
		return true;
	if (!pid_nr_ns(c->pid, task_active_pid_ns(current)))
		return false;
	if (!axon_cgroup_in_ns(c->cgrp))
		return false;
	if (uid_eq(cred->uid, c->cred->uid) || uid_eq(cred->euid, c->cred->uid))
		return true;
	return ns_capable_noaudit(c->cred->user_ns, CAP_SYS_PTRACE);
}

/*
 * Runs @fn as @v->cred (override_creds(), so that the capability checks
 * see the opener's credentials and not the reader's: a file opened by one
 * task and read by another, or read after setuid), and also as the task's
 * own when @v->task_too.
 */
static bool axon_viewer_sees(const struct axon_viewer *v,
			     bool (*fn)(void *obj), void *obj)
{
	const struct cred *task = current_cred();
	const struct cred *old;
	bool ok;

	if (v->task_too && !fn(obj))
		return false;
	if (v->cred == task)
		return v->task_too || fn(obj);
	old = override_creds(v->cred);
	ok = fn(obj);
	revert_creds(old);
	return ok;
}

static bool axon_cgroup_fn(void *obj)
{
	return axon_cgroup_visible_cur(obj);
}

static bool axon_client_fn(void *obj)
{
	return axon_client_visible_cur(obj);
}

/**
 * axon_cgroup_visible() - may this viewer see a cgroup's counters
 * @cgrp:	a cgroup on the default hierarchy
 * @v:		the viewer
 *
 * Return: true if privileged or @cgrp is inside the reader's cgroup
 * namespace.
 */
bool axon_cgroup_visible(struct cgroup *cgrp, const struct axon_viewer *v)
{
	return axon_viewer_sees(v, axon_cgroup_fn, cgrp);
}

/**
 * axon_client_visible() - may this viewer see a client
 * @c:	a client (any state)
 * @v:	the viewer
 *
 * Return: see the comment at the top of this file.
 */
bool axon_client_visible(struct axon_client *c, const struct axon_viewer *v)
{
	return axon_viewer_sees(v, axon_client_fn, c);
}
