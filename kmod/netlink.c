// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "axon" (init_net only). New family, so
 * resv_start_op is 0: every command validates strictly and accepts only
 * the attributes of its own policy. Setting limits needs CAP_NET_ADMIN, or
 * cgroup v2 delegation (axon_nl_delegated());
 * joining the "events" group too (the events name every tenant's pids,
 * uids, cgroups): GENL_MCAST_CAP_NET_ADMIN, in 6.7 and backported to the
 * stable kernels (Debian's 6.1 has it). A kernel without it has no other
 * hook to refuse a join (no family bind callback before 6.7), and
 * multicast cannot be filtered per listener, so there the events are
 * never sent.
 * Client and limit queries and dumps show only what visible.c lets the
 * caller see (another tenant's client is "no such client").
 * Multicast is lossy: it is for monitoring tools; axond gets its client
 * events from its fd.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/limits.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/slab.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <net/genetlink.h>
#include <net/sock.h>

#include "axon_drv.h"
#include "charge.h"
#include "client.h"
#include "netlink.h"
#include "proc.h"
#include "region.h"
#include "visible.h"

static struct genl_family axon_genl_family;

/* The events go out only where joining their group needs CAP_NET_ADMIN. */
#ifdef GENL_MCAST_CAP_NET_ADMIN
#define AXON_NL_EVENTS	1
#else
#define AXON_NL_EVENTS	0
#endif

enum axon_mcgrp {
	AXON_MCGRP_EVENTS,
};

static const struct genl_multicast_group axon_mcgrps[] = {
	[AXON_MCGRP_EVENTS] = {
		.name = AXON_GENL_MCGRP_EVENTS,
#ifdef GENL_MCAST_CAP_NET_ADMIN
		.flags = GENL_MCAST_CAP_NET_ADMIN,
#endif
	},
};

static const struct nla_policy axon_client_policy[AXON_A_MAX + 1] = {
	[AXON_A_CLIENT_ID]	= { .type = NLA_U64 },
};

static const struct nla_policy axon_limit_policy[AXON_A_MAX + 1] = {
	[AXON_A_CGROUP_ID]	= { .type = NLA_U64 },
	[AXON_A_CGROUP_PATH]	= { .type = NLA_NUL_STRING, .len = PATH_MAX - 1 },
	[AXON_A_KIND]		= NLA_POLICY_MAX(NLA_U32, AXON_CHARGE_KINDS - 1),
	[AXON_A_LIMIT]		= { .type = NLA_U64 },
	[AXON_A_CGROUP_FD]	= { .type = NLA_U32 },
};

/*
 * The reader of a request: the socket's opener and the task both
 * (netlink_capable()'s rule), so that a socket opened unprivileged and
 * used after gaining privilege, or passed on, shows no more than either.
 */
static void axon_nl_viewer(struct sk_buff *skb, struct axon_viewer *v)
{
	struct sock *sk = NETLINK_CB(skb).sk;

	v->cred = sk && sk->sk_socket && sk->sk_socket->file ?
		  sk->sk_socket->file->f_cred : current_cred();
	v->task_too = true;
}

static void *axon_nl_put(struct sk_buff *skb, u32 portid, u32 seq, int flags,
			 u8 cmd)
{
	return genlmsg_put(skb, portid, seq, &axon_genl_family, flags, cmd);
}

static int axon_nl_stats(struct sk_buff *skb, struct genl_info *info)
{
	u64 v[AXON_STAT_MAX + 1];
	struct sk_buff *msg;
	struct nlattr *nest;
	void *hdr;
	int i;

	axon_stats_read(v);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = axon_nl_put(msg, info->snd_portid, info->snd_seq, 0,
			  AXON_CMD_GET_STATS);
	if (!hdr)
		goto err_free;
	nest = nla_nest_start(msg, AXON_A_STATS);
	if (!nest)
		goto err_free;
	for (i = AXON_STAT_CLIENTS; i <= AXON_STAT_MAX; i++)
		if (nla_put_u64_64bit(msg, i, v[i], AXON_STAT_PAD))
			goto err_free;
	nla_nest_end(msg, nest);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int axon_nl_fill_client(struct sk_buff *skb, u32 portid, u32 seq,
			       int flags, struct axon_client *c, char *path)
{
	struct user_namespace *ns = current_user_ns();
	struct axon_region *r = c->region;
	u32 sq_tail = 0, sq_head = 0, cq_tail = 0;
	void *hdr;

	hdr = axon_nl_put(skb, portid, seq, flags, AXON_CMD_GET_CLIENT);
	if (!hdr)
		return -EMSGSIZE;
	if (axon_client_state(c) != AXON_KSTATE_NEW && r) {
		sq_tail = READ_ONCE(r->cpage->sq_tail);
		sq_head = READ_ONCE(r->dpage->sq_head);
		cq_tail = READ_ONCE(r->dpage->cq_tail);
	}
	if (cgroup_path_ns(c->cgrp, path, PATH_MAX,
			   current->nsproxy->cgroup_ns) < 0)
		strscpy(path, "?", PATH_MAX);
	if (nla_put_u64_64bit(skb, AXON_A_CLIENT_ID, c->id, AXON_A_PAD) ||
	    nla_put_u32(skb, AXON_A_PID,
			pid_nr_ns(c->pid, task_active_pid_ns(current))) ||
	    nla_put_u32(skb, AXON_A_UID, from_kuid_munged(ns, c->cred->uid)) ||
	    nla_put_u32(skb, AXON_A_GID, from_kgid_munged(ns, c->cred->gid)) ||
	    nla_put_string(skb, AXON_A_COMM, c->comm) ||
	    nla_put_u32(skb, AXON_A_STATE, axon_client_kstate(c)) ||
	    nla_put_u64_64bit(skb, AXON_A_CGROUP_ID, cgroup_id(c->cgrp),
			      AXON_A_PAD) ||
	    nla_put_string(skb, AXON_A_CGROUP_PATH, path) ||
	    nla_put_u64_64bit(skb, AXON_A_CHARGED, axon_charge_client_total(c),
			      AXON_A_PAD) ||
	    nla_put_u32(skb, AXON_A_SUBMITS, sq_tail) ||
	    nla_put_u32(skb, AXON_A_COMPLETIONS, cq_tail) ||
	    nla_put_u32(skb, AXON_A_DEPTH, sq_tail - sq_head)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int axon_nl_get_client(struct sk_buff *skb, struct genl_info *info)
{
	struct axon_viewer viewer;
	struct axon_client *c;
	struct sk_buff *msg;
	char *path;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, AXON_A_CLIENT_ID))
		return -EINVAL;
	axon_nl_viewer(skb, &viewer);
	c = axon_client_lookup(nla_get_u64(info->attrs[AXON_A_CLIENT_ID]));
	if (c && !axon_client_visible(c, &viewer)) {
		axon_client_put(c);
		c = NULL;
	}
	if (!c) {
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[AXON_A_CLIENT_ID],
				    "no such client");
		return -ENOENT;
	}
	ret = -ENOMEM;
	path = kmalloc(PATH_MAX, GFP_KERNEL);
	msg = genlmsg_new(NLMSG_GOODSIZE + PATH_MAX, GFP_KERNEL);
	if (path && msg)
		ret = axon_nl_fill_client(msg, info->snd_portid, info->snd_seq,
					  0, c, path);
	axon_client_put(c);
	kfree(path);
	if (ret) {
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

/* cb->args[0]: the last client id dumped. */
static int axon_nl_dump_clients(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	unsigned long id = cb->args[0];
	struct axon_viewer viewer;
	struct axon_client *c;
	char *path;

	axon_nl_viewer(cb->skb, &viewer);
	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	while ((c = axon_client_next(&id))) {
		int ret = 0;

		if (axon_client_visible(c, &viewer))
			ret = axon_nl_fill_client(skb,
						  NETLINK_CB(cb->skb).portid,
						  cb->nlh->nlmsg_seq,
						  NLM_F_MULTI, c, path);

		axon_client_put(c);
		if (ret)
			break;
		cb->args[0] = id;
	}
	kfree(path);
	return skb->len;
}

/*
 * The cgroup v2 directory open as the sender's @fd (the request runs in
 * the sender's context), referenced; @fdp gets the file (a reference).
 * A cgroup's id is its directory's inode number.
 */
static struct cgroup *axon_nl_cgroup_fd(u32 fd, struct file **fdp)
{
	struct file *f = fget(fd);
	struct cgroup *cgrp;

	if (!f)
		return ERR_PTR(-EBADF);
	if (file_inode(f)->i_sb->s_magic != CGROUP2_SUPER_MAGIC ||
	    !S_ISDIR(file_inode(f)->i_mode)) {
		fput(f);
		return ERR_PTR(-EBADF);
	}
	cgrp = cgroup_get_from_id(file_inode(f)->i_ino);
	if (IS_ERR(cgrp) || !fdp)
		fput(f);
	else
		*fdp = f;
	return cgrp;
}

/*
 * The cgroup named by CGROUP_PATH, CGROUP_ID or CGROUP_FD (exactly one),
 * referenced; @fdp, if not NULL, gets CGROUP_FD's file (NULL otherwise).
 */
static struct cgroup *axon_nl_cgroup(struct sk_buff *skb,
				     struct genl_info *info,
				     struct file **fdp)
{
	struct nlattr *p = info->attrs[AXON_A_CGROUP_PATH];
	struct nlattr *id = info->attrs[AXON_A_CGROUP_ID];
	struct nlattr *fd = info->attrs[AXON_A_CGROUP_FD];
	struct axon_viewer viewer;
	struct cgroup *cgrp;
	struct nlattr *which = p ? p : id ? id : fd;

	if (fdp)
		*fdp = NULL;
	if (!!p + !!id + !!fd != 1) {
		NL_SET_ERR_MSG(info->extack,
			       "give exactly one of CGROUP_PATH, CGROUP_ID and CGROUP_FD");
		return ERR_PTR(-EINVAL);
	}
	if (p)
		cgrp = cgroup_get_from_path(nla_data(p));
	else if (id)
		cgrp = cgroup_get_from_id(nla_get_u64(id));
	else
		cgrp = axon_nl_cgroup_fd(nla_get_u32(fd), fdp);
	axon_nl_viewer(skb, &viewer);
	if (!IS_ERR(cgrp) && !axon_cgroup_visible(cgrp, &viewer)) {
		cgroup_put(cgrp);
		if (fdp && *fdp) {
			fput(*fdp);
			*fdp = NULL;
		}
		cgrp = ERR_PTR(-ENOENT);
	}
	if (IS_ERR(cgrp))
		NL_SET_ERR_MSG_ATTR(info->extack, which, "no such cgroup");
	return cgrp;
}

/*
 * cgroup v2 delegation: whoever may create and remove cgroups in the
 * parent directory of @f (a cgroup's directory) may limit that cgroup.
 * The delegatee of a subtree owns its root's directory, so it may limit
 * every cgroup below the root and neither the root itself (whose parent
 * it does not own) nor any sibling. The kernel's own check on the parent's
 * kernfs inode, with the sender's credentials; a directory that is the
 * root of its mount has no parent to check and is refused.
 */
static bool axon_nl_delegated(struct file *f)
{
	struct dentry *dentry = f->f_path.dentry, *parent;
	int ret;

	parent = dget_parent(dentry);
	if (parent == dentry) {
		dput(parent);
		return false;
	}
#ifdef AXON_HAVE_MNT_IDMAP
	ret = inode_permission(file_mnt_idmap(f), d_inode(parent),
			       MAY_WRITE | MAY_EXEC);
#else
	ret = inode_permission(file_mnt_user_ns(f), d_inode(parent),
			       MAY_WRITE | MAY_EXEC);
#endif
	dput(parent);
	return !ret;
}

static int axon_nl_set_limit(struct sk_buff *skb, struct genl_info *info)
{
	bool admin = netlink_capable(skb, CAP_NET_ADMIN);
	unsigned int kind = AXON_CHARGE_DEVICE_MEM;
	struct file *f = NULL;
	struct cgroup *cgrp;
	int ret;

	if (GENL_REQ_ATTR_CHECK(info, AXON_A_LIMIT))
		return -EINVAL;
	if (info->attrs[AXON_A_KIND])
		kind = nla_get_u32(info->attrs[AXON_A_KIND]);
	if (!admin && !info->attrs[AXON_A_CGROUP_FD]) {
		NL_SET_ERR_MSG(info->extack,
			       "without CAP_NET_ADMIN, name the cgroup by CGROUP_FD");
		return -EPERM;
	}
	cgrp = axon_nl_cgroup(skb, info, &f);
	if (IS_ERR(cgrp))
		return PTR_ERR(cgrp);
	if (!admin && !axon_nl_delegated(f)) {
		NL_SET_ERR_MSG(info->extack,
			       "CAP_NET_ADMIN, or write access to the cgroup's parent directory, needed");
		ret = -EPERM;
		goto out;
	}
	ret = axon_limit_set(cgrp, kind,
			     nla_get_u64(info->attrs[AXON_A_LIMIT]));
out:
	if (f)
		fput(f);
	cgroup_put(cgrp);
	return ret;
}

struct axon_nl_cg_ctx {
	struct sk_buff *skb;
	u32 portid;
	u32 seq;
	int flags;
};

static int axon_nl_fill_cg(void *arg, const struct axon_cg_info *cg)
{
	struct axon_nl_cg_ctx *ctx = arg;
	struct sk_buff *skb = ctx->skb;
	void *hdr;

	hdr = axon_nl_put(skb, ctx->portid, ctx->seq, ctx->flags,
			  AXON_CMD_GET_LIMIT);
	if (!hdr)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, AXON_A_CGROUP_ID, cg->id, AXON_A_PAD) ||
	    nla_put_string(skb, AXON_A_CGROUP_PATH, cg->path) ||
	    nla_put_u32(skb, AXON_A_KIND, cg->kind) ||
	    nla_put_u64_64bit(skb, AXON_A_USAGE, cg->usage, AXON_A_PAD) ||
	    nla_put_u64_64bit(skb, AXON_A_LIMIT, cg->limit, AXON_A_PAD) ||
	    nla_put_u64_64bit(skb, AXON_A_PEAK, cg->peak, AXON_A_PAD) ||
	    nla_put_u64_64bit(skb, AXON_A_FAILCNT, cg->failcnt, AXON_A_PAD)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int axon_nl_get_limit(struct sk_buff *skb, struct genl_info *info)
{
	unsigned int kind = AXON_CHARGE_DEVICE_MEM;
	struct axon_nl_cg_ctx ctx = {
		.portid = info->snd_portid,
		.seq = info->snd_seq,
	};
	struct cgroup *cgrp;
	int ret;

	if (info->attrs[AXON_A_KIND])
		kind = nla_get_u32(info->attrs[AXON_A_KIND]);
	cgrp = axon_nl_cgroup(skb, info, NULL);
	if (IS_ERR(cgrp))
		return PTR_ERR(cgrp);
	ctx.skb = genlmsg_new(NLMSG_GOODSIZE + PATH_MAX, GFP_KERNEL);
	if (!ctx.skb) {
		cgroup_put(cgrp);
		return -ENOMEM;
	}
	ret = axon_limit_get(cgrp, kind, axon_nl_fill_cg, &ctx);
	cgroup_put(cgrp);
	if (ret) {
		nlmsg_free(ctx.skb);
		return ret;
	}
	return genlmsg_reply(ctx.skb, info);
}

/* cb->args[0]: the cgroup id to resume from; cb->args[1]: done. */
static int axon_nl_dump_limits(struct sk_buff *skb,
			       struct netlink_callback *cb)
{
	struct axon_nl_cg_ctx ctx = {
		.skb = skb,
		.portid = NETLINK_CB(cb->skb).portid,
		.seq = cb->nlh->nlmsg_seq,
		.flags = NLM_F_MULTI,
	};
	unsigned long cursor = cb->args[0];
	struct axon_viewer viewer;
	int ret;

	if (cb->args[1])
		return 0;
	axon_nl_viewer(cb->skb, &viewer);
	ret = axon_charge_walk(&cursor, &viewer, axon_nl_fill_cg, &ctx);
	if (ret == -EMSGSIZE) {
		cb->args[0] = cursor;
		return skb->len;
	}
	if (ret)
		return ret;
	cb->args[1] = 1;
	return skb->len;
}

static const struct genl_ops axon_genl_ops[] = {
	{
		.cmd	= AXON_CMD_GET_STATS,
		.doit	= axon_nl_stats,
	},
	{
		.cmd	= AXON_CMD_GET_CLIENT,
		.doit	= axon_nl_get_client,
		.dumpit	= axon_nl_dump_clients,
		.policy	= axon_client_policy,
		.maxattr = AXON_A_MAX,
	},
	{
		.cmd	= AXON_CMD_GET_LIMIT,
		.doit	= axon_nl_get_limit,
		.dumpit	= axon_nl_dump_limits,
		.policy	= axon_limit_policy,
		.maxattr = AXON_A_MAX,
	},
	{
		.cmd	= AXON_CMD_SET_LIMIT,
		.doit	= axon_nl_set_limit,
		.policy	= axon_limit_policy,
		.maxattr = AXON_A_MAX,
		/* CAP_NET_ADMIN or delegation: axon_nl_set_limit() */
	},
};

static struct genl_family axon_genl_family __ro_after_init = {
	.name		= AXON_GENL_NAME,
	.version	= AXON_GENL_VERSION,
	.module		= THIS_MODULE,
	.ops		= axon_genl_ops,
	.n_ops		= ARRAY_SIZE(axon_genl_ops),
	.mcgrps		= axon_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(axon_mcgrps),
	.parallel_ops	= true,
};

static struct sk_buff *axon_nl_event_new(u32 event, void **hdr)
{
	struct sk_buff *skb;

	if (!AXON_NL_EVENTS ||
	    !genl_has_listeners(&axon_genl_family, &init_net,
				AXON_MCGRP_EVENTS))
		return NULL;
	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return NULL;
	*hdr = genlmsg_put(skb, 0, 0, &axon_genl_family, 0, AXON_CMD_EVENT);
	if (!*hdr || nla_put_u32(skb, AXON_A_EVENT, event)) {
		nlmsg_free(skb);
		return NULL;
	}
	return skb;
}

static void axon_nl_event_send(struct sk_buff *skb, void *hdr, bool ok)
{
	if (!ok) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&axon_genl_family, skb, 0, AXON_MCGRP_EVENTS,
			  GFP_KERNEL);
}

/* Ids in the events are global: pids and uids of the initial namespaces. */
void axon_nl_client_event(u32 event, struct axon_client *c)
{
	struct sk_buff *skb;
	void *hdr;
	bool ok;

	skb = axon_nl_event_new(event, &hdr);
	if (!skb)
		return;
	ok = !nla_put_u64_64bit(skb, AXON_A_CLIENT_ID, c->id, AXON_A_PAD) &&
	     !nla_put_u32(skb, AXON_A_PID, pid_nr(c->pid)) &&
	     !nla_put_u32(skb, AXON_A_UID,
			  from_kuid_munged(&init_user_ns, c->cred->uid)) &&
	     !nla_put_string(skb, AXON_A_COMM, c->comm) &&
	     !nla_put_u64_64bit(skb, AXON_A_CGROUP_ID, cgroup_id(c->cgrp),
				AXON_A_PAD);
	axon_nl_event_send(skb, hdr, ok);
}

void axon_nl_daemon_event(u32 event, pid_t pid)
{
	struct sk_buff *skb;
	void *hdr;

	skb = axon_nl_event_new(event, &hdr);
	if (!skb)
		return;
	axon_nl_event_send(skb, hdr, !nla_put_u32(skb, AXON_A_PID, pid));
}

void axon_nl_limit_event(struct axon_client *c, u64 cgroup_id,
			 unsigned int kind, u64 bytes, u64 usage, u64 limit)
{
	struct sk_buff *skb;
	void *hdr;
	bool ok;

	skb = axon_nl_event_new(AXON_NLEV_LIMIT_HIT, &hdr);
	if (!skb)
		return;
	ok = !nla_put_u64_64bit(skb, AXON_A_CLIENT_ID, c->id, AXON_A_PAD) &&
	     !nla_put_u64_64bit(skb, AXON_A_CGROUP_ID, cgroup_id, AXON_A_PAD) &&
	     !nla_put_u32(skb, AXON_A_KIND, kind) &&
	     !nla_put_u64_64bit(skb, AXON_A_BYTES, bytes, AXON_A_PAD) &&
	     !nla_put_u64_64bit(skb, AXON_A_USAGE, usage, AXON_A_PAD) &&
	     !nla_put_u64_64bit(skb, AXON_A_LIMIT, limit, AXON_A_PAD);
	axon_nl_event_send(skb, hdr, ok);
}

int __init axon_nl_init(void)
{
	if (!AXON_NL_EVENTS)
		pr_notice("axon: no GENL_MCAST_CAP_NET_ADMIN in this kernel: netlink events disabled\n");
	return genl_register_family(&axon_genl_family);
}

void axon_nl_uninit(void)
{
	genl_unregister_family(&axon_genl_family);
}
