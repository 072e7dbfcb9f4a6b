// SPDX-License-Identifier: MIT
/*
 * libaxon: the axon kernel module's generic netlink family (AXON_GENL_NAME)
 * through libnl-genl-3. Attribute layout as in uapi/linux/axon.h and
 * kmod/netlink.c; Documentation/kmod.rst §12.
 *
 * This file alone needs libnl: it goes into libaxon.so and libaxon-nl.a,
 * never into libaxon.a (the CUDA shim links that one).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <linux/netlink.h>

#include <axon/libaxon.h>

#ifndef SOL_NETLINK
#define SOL_NETLINK 270
#endif

struct axon_nl {
	struct nl_sock *sk;	/* requests */
	struct nl_sock *ev;	/* the "events" group, once subscribed */
	int family;
	char *err;
	size_t errlen;
};

static void seterr(struct axon_nl *nl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void seterr(struct axon_nl *nl, const char *fmt, ...)
{
	va_list ap;

	if (!nl->err || !nl->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(nl->err, nl->errlen, fmt, ap);
	va_end(ap);
}

/* libnl's NLE_* back to an errno (libnl folds the kernel's errno into them). */
static int nle_errno(int nle)
{
	switch (nle < 0 ? -nle : nle) {
	case NLE_SUCCESS:	return 0;
	case NLE_INTR:		return EINTR;
	case NLE_BAD_SOCK:	return EBADF;
	case NLE_AGAIN:		return EAGAIN;
	case NLE_NOMEM:		return ENOMEM;
	case NLE_EXIST:		return EEXIST;
	case NLE_INVAL:		return EINVAL;
	case NLE_RANGE:		return ERANGE;
	case NLE_MSGSIZE:	return EMSGSIZE;
	case NLE_OPNOTSUPP:	return EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:	return EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:	return ENOENT;
	case NLE_NOADDR:	return EADDRNOTAVAIL;
	case NLE_BUSY:		return EBUSY;
	case NLE_NOACCESS:	return EACCES;
	case NLE_PERM:		return EPERM;
	case NLE_NODEV:		return ENODEV;
	default:		return EIO;
	}
}

/* ---- one request ---------------------------------------------------------- */

struct req {
	struct axon_nl *nl;
	int (*valid)(struct nlattr **a, void *arg);	/* non-zero: stop */
	void *arg;
	int stop;		/* what valid returned, when non-zero */
	int error;		/* the kernel's negative errno */
	int nle;		/* libnl's error, when it was libnl's */
	bool acked, done;
	char extack[256];	/* the kernel's message, if any */
};

static struct nla_policy axon_policy[AXON_A_MAX + 1] = {
	[AXON_A_CLIENT_ID]	= { .type = NLA_U64 },
	[AXON_A_PID]		= { .type = NLA_U32 },
	[AXON_A_UID]		= { .type = NLA_U32 },
	[AXON_A_GID]		= { .type = NLA_U32 },
	[AXON_A_COMM]		= { .type = NLA_STRING },
	[AXON_A_STATE]		= { .type = NLA_U32 },
	[AXON_A_CGROUP_ID]	= { .type = NLA_U64 },
	[AXON_A_CGROUP_PATH]	= { .type = NLA_STRING },
	[AXON_A_KIND]		= { .type = NLA_U32 },
	[AXON_A_CHARGED]	= { .type = NLA_U64 },
	[AXON_A_USAGE]		= { .type = NLA_U64 },
	[AXON_A_LIMIT]		= { .type = NLA_U64 },
	[AXON_A_PEAK]		= { .type = NLA_U64 },
	[AXON_A_FAILCNT]	= { .type = NLA_U64 },
	[AXON_A_BYTES]		= { .type = NLA_U64 },
	[AXON_A_EVENT]		= { .type = NLA_U32 },
	[AXON_A_STATS]		= { .type = NLA_NESTED },
	[AXON_A_SUBMITS]	= { .type = NLA_U32 },
	[AXON_A_COMPLETIONS]	= { .type = NLA_U32 },
	[AXON_A_DEPTH]		= { .type = NLA_U32 },
};

static uint64_t a_u64(struct nlattr **a, int t)
{
	return a[t] ? nla_get_u64(a[t]) : 0;
}

static uint32_t a_u32(struct nlattr **a, int t)
{
	return a[t] ? nla_get_u32(a[t]) : 0;
}

static const char *a_str(struct nlattr **a, int t)
{
	return a[t] ? nla_get_string(a[t]) : "";
}

static int on_valid(struct nl_msg *msg, void *arg)
{
	struct req *r = arg;
	struct nlattr *a[AXON_A_MAX + 1];

	if (r->stop)
		return NL_SKIP;	/* drain the rest of a dump */
	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, AXON_A_MAX, axon_policy) < 0)
		return NL_SKIP;
	r->stop = r->valid(a, r->arg);
	return NL_OK;
}

/* The kernel's extack message follows the (capped) nlmsgerr. */
static int on_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	/* libnl passes nlmsg_data() of the error message */
	struct nlmsghdr *h = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);
	struct req *r = arg;
	struct nlattr *tlv;
	size_t off;
	int len, rem;

	(void)nla;
	r->error = e->error;
	if (!(h->nlmsg_flags & NLM_F_ACK_TLVS))
		return NL_STOP;
	off = sizeof(*e);
	if (!(h->nlmsg_flags & NLM_F_CAPPED))
		off += NLMSG_ALIGN(e->msg.nlmsg_len - NLMSG_HDRLEN);
	len = (int)h->nlmsg_len - NLMSG_HDRLEN - (int)off;
	if (len <= 0)
		return NL_STOP;
	nla_for_each_attr(tlv, (struct nlattr *)((char *)e + off), len, rem) {
		if (nla_type(tlv) == NLMSGERR_ATTR_MSG && nla_len(tlv) > 0) {
			snprintf(r->extack, sizeof(r->extack), "%.*s", nla_len(tlv),
				 (const char *)nla_data(tlv));
			r->extack[strcspn(r->extack, "\n")] = 0;
		}
	}
	return NL_STOP;
}

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct req *)arg)->acked = true;
	return NL_STOP;
}

static int on_finish(struct nl_msg *msg, void *arg)
{
	(void)msg;
	((struct req *)arg)->done = true;
	return NL_STOP;
}

/*
 * Sends msg (freed here) and receives until the ACK (doit) or DONE (dump).
 * Returns 0, the kernel's negative errno (r->extack then has its words, if
 * any), the non-zero value a callback stopped with, or another -errno.
 */
static int transact(struct axon_nl *nl, struct nl_msg *msg, bool dump,
		    struct req *r)
{
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	r->nl = nl;
	if (!cb) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_valid, r);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, r);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, on_finish, r);
	nl_cb_err(cb, NL_CB_CUSTOM, on_error, r);
	ret = nl_send_auto(nl->sk, msg);
	nlmsg_free(msg);
	if (ret >= 0) {
		do {
			ret = nl_recvmsgs(nl->sk, cb);
		} while (ret >= 0 && !r->error && !(dump ? r->done : r->acked));
	}
	nl_cb_put(cb);
	if (r->error)
		return r->error;
	if (ret < 0) {
		r->nle = ret;
		return -nle_errno(ret);
	}
	return r->stop;
}

static struct nl_msg *new_msg(struct axon_nl *nl, uint8_t cmd, bool dump)
{
	struct nl_msg *msg = nlmsg_alloc();

	if (!msg)
		return NULL;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK), cmd,
			 AXON_GENL_VERSION)) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* "what: the kernel's words (strerror)" */
static int fail(struct axon_nl *nl, int ret, const struct req *r, const char *what)
{
	if (ret >= 0)
		return ret;
	if (r && r->extack[0])
		seterr(nl, "%s: %s (%s)", what, r->extack, strerror(-ret));
	else if (r && r->nle)
		seterr(nl, "%s: %s", what, nl_geterror(r->nle));
	else
		seterr(nl, "%s: %s", what, strerror(-ret));
	return ret;
}

/* A request with no attributes: a doit (ACK) or a dump (DONE); "what"
 * names it in the error. */
static int request(struct axon_nl *nl, uint8_t cmd, bool dump, struct req *r,
		   const char *what)
{
	struct nl_msg *msg = new_msg(nl, cmd, dump);

	if (!msg)
		return fail(nl, -ENOMEM, NULL, what);
	return fail(nl, transact(nl, msg, dump, r), r, what);
}

/* ---- open, close ------------------------------------------------------------ */

static struct nl_sock *new_sock(struct axon_nl *nl, int *ret)
{
	struct nl_sock *sk = nl_socket_alloc();
	int one = 1, r;

	if (!sk) {
		*ret = -ENOMEM;
		seterr(nl, "out of memory");
		return NULL;
	}
	r = genl_connect(sk);
	if (r < 0) {
		*ret = -nle_errno(r);
		seterr(nl, "cannot open a generic netlink socket: %s", nl_geterror(r));
		nl_socket_free(sk);
		return NULL;
	}
	/* the kernel's reasons with its errors, without our request echoed */
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_EXT_ACK, &one,
			 sizeof(one));
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_CAP_ACK, &one,
			 sizeof(one));
	*ret = 0;
	return sk;
}

int axon_nl_open(struct axon_nl **nlp, char *err, size_t errlen)
{
	struct axon_nl *nl;
	int ret;

	*nlp = NULL;
	if (err && errlen)
		err[0] = 0;
	nl = calloc(1, sizeof(*nl));
	if (!nl) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	nl->err = err;
	nl->errlen = errlen;
	nl->sk = new_sock(nl, &ret);
	if (!nl->sk) {
		free(nl);
		return ret;
	}
	nl->family = genl_ctrl_resolve(nl->sk, AXON_GENL_NAME);
	if (nl->family < 0) {
		ret = -nle_errno(nl->family);
		if (ret == -ENOENT)
			seterr(nl, "the axon kernel module is not loaded "
			       "(no generic netlink family \"" AXON_GENL_NAME "\")");
		else
			seterr(nl, "cannot look up the generic netlink family \""
			       AXON_GENL_NAME "\": %s", nl_geterror(nl->family));
		nl_socket_free(nl->sk);
		free(nl);
		return ret;
	}
	*nlp = nl;
	return 0;
}

void axon_nl_close(struct axon_nl *nl)
{
	if (!nl)
		return;
	if (nl->ev)
		nl_socket_free(nl->ev);
	nl_socket_free(nl->sk);
	free(nl);
}

/* ---- stats ------------------------------------------------------------------ */

static int stats_valid(struct nlattr **a, void *arg)
{
	static const size_t off[AXON_STAT_MAX + 1] = {
		[AXON_STAT_CLIENTS]		= offsetof(struct axon_kstats, clients),
		[AXON_STAT_OPENS]		= offsetof(struct axon_kstats, opens),
		[AXON_STAT_DAEMON_ATTACHED]	= offsetof(struct axon_kstats, daemon_attached),
		[AXON_STAT_DAEMON_PID]		= offsetof(struct axon_kstats, daemon_pid),
		[AXON_STAT_ATTACHES]		= offsetof(struct axon_kstats, attaches),
		[AXON_STAT_ENTERS]		= offsetof(struct axon_kstats, enters),
		[AXON_STAT_DOORBELLS]		= offsetof(struct axon_kstats, doorbells),
		[AXON_STAT_NOTIFIES]		= offsetof(struct axon_kstats, notifies),
		[AXON_STAT_EVENTS]		= offsetof(struct axon_kstats, events),
		[AXON_STAT_CHARGES]		= offsetof(struct axon_kstats, charges),
		[AXON_STAT_CHARGE_FAILS]	= offsetof(struct axon_kstats, charge_fails),
		[AXON_STAT_UNCHARGES]		= offsetof(struct axon_kstats, uncharges),
		[AXON_STAT_CHARGED_BYTES]	= offsetof(struct axon_kstats, charged_bytes),
		[AXON_STAT_REGION_BYTES]	= offsetof(struct axon_kstats, region_bytes),
	};
	struct axon_kstats *st = arg;
	struct nlattr *s;
	int rem;

	if (!a[AXON_A_STATS])
		return 0;
	nla_for_each_nested(s, a[AXON_A_STATS], rem) {
		int t = nla_type(s);

		if (t >= AXON_STAT_CLIENTS && t <= AXON_STAT_MAX &&
		    nla_len(s) == sizeof(uint64_t))
			*(uint64_t *)((char *)st + off[t]) = nla_get_u64(s);
	}
	return 0;
}

int axon_nl_stats(struct axon_nl *nl, struct axon_kstats *st)
{
	struct req r = { .valid = stats_valid, .arg = st };

	memset(st, 0, sizeof(*st));
	return request(nl, AXON_CMD_GET_STATS, false, &r, "kernel stats");
}

/* ---- clients ---------------------------------------------------------------- */

struct client_dump {
	axon_nl_client_fn fn;
	void *arg;
};

static int client_valid(struct nlattr **a, void *arg)
{
	struct client_dump *d = arg;
	struct axon_kclient c = {
		.id = a_u64(a, AXON_A_CLIENT_ID),
		.pid = a_u32(a, AXON_A_PID),
		.uid = a_u32(a, AXON_A_UID),
		.gid = a_u32(a, AXON_A_GID),
		.state = a_u32(a, AXON_A_STATE),
		.cgroup_id = a_u64(a, AXON_A_CGROUP_ID),
		.cgroup_path = a_str(a, AXON_A_CGROUP_PATH),
		.comm = a_str(a, AXON_A_COMM),
		.charged = a_u64(a, AXON_A_CHARGED),
		.submits = a_u32(a, AXON_A_SUBMITS),
		.completions = a_u32(a, AXON_A_COMPLETIONS),
		.depth = a_u32(a, AXON_A_DEPTH),
	};

	if (!a[AXON_A_CLIENT_ID])
		return 0;
	return d->fn(&c, d->arg);
}

int axon_nl_clients(struct axon_nl *nl, axon_nl_client_fn fn, void *arg)
{
	struct client_dump d = { fn, arg };
	struct req r = { .valid = client_valid, .arg = &d };

	return request(nl, AXON_CMD_GET_CLIENT, true, &r, "kernel clients");
}

/* ---- limits ----------------------------------------------------------------- */

struct limit_dump {
	axon_nl_limit_fn fn;
	void *arg;
	struct axon_klimit one;	/* fn NULL: the doit reply */
	bool got;
};

static int limit_valid(struct nlattr **a, void *arg)
{
	struct limit_dump *d = arg;
	struct axon_klimit l = {
		.cgroup_id = a_u64(a, AXON_A_CGROUP_ID),
		.cgroup_path = a_str(a, AXON_A_CGROUP_PATH),
		.kind = a_u32(a, AXON_A_KIND),
		.usage = a_u64(a, AXON_A_USAGE),
		.limit = a[AXON_A_LIMIT] ? nla_get_u64(a[AXON_A_LIMIT]) : AXON_LIMIT_NONE,
		.peak = a_u64(a, AXON_A_PEAK),
		.failcnt = a_u64(a, AXON_A_FAILCNT),
	};

	if (!d->fn) {
		d->one = l;
		d->one.cgroup_path = NULL;
		d->got = true;
		return 0;
	}
	return d->fn(&l, d->arg);
}

/* Words for an error about one cgroup. */
static int cgroup_fail(struct axon_nl *nl, int ret, const struct req *r,
		       const char *path, const char *doing)
{
	if (ret == -EPERM)
		seterr(nl, "setting limits needs CAP_NET_ADMIN, or write access to the "
		       "cgroup's parent directory (%s)", r->extack[0] ? r->extack : strerror(EPERM));
	else if (ret == -ENOENT)
		seterr(nl, "cgroup %s: %s (paths are relative to the cgroup2 root, "
		       "e.g. /t1 for /sys/fs/cgroup/t1)",
		       path, r->extack[0] ? r->extack : "no such cgroup");
	else if (r->extack[0])
		seterr(nl, "%s %s: %s (%s)", doing, path, r->extack, strerror(-ret));
	else
		seterr(nl, "%s %s: %s", doing, path, strerror(-ret));
	return ret;
}

/* The cgroup as the request names it: by path, or by an fd of its
 * directory (cgroup_fd >= 0), which lets the kernel check delegation. */
static int put_cgroup(struct nl_msg *msg, const char *cgroup_path, int cgroup_fd)
{
	if (cgroup_fd >= 0)
		return nla_put_u32(msg, AXON_A_CGROUP_FD, (uint32_t)cgroup_fd);
	return nla_put_string(msg, AXON_A_CGROUP_PATH, cgroup_path);
}

static int limit_get(struct axon_nl *nl, const char *cgroup_path, int cgroup_fd,
		     uint64_t *limit, uint64_t *usage, uint64_t *peak, uint64_t *failcnt)
{
	const char *name = cgroup_fd >= 0 ? "(by descriptor)" : cgroup_path;
	struct limit_dump d = { 0 };
	struct req r = { .valid = limit_valid, .arg = &d };
	struct nl_msg *msg = new_msg(nl, AXON_CMD_GET_LIMIT, false);
	int ret;

	if (!msg)
		return fail(nl, -ENOMEM, NULL, "kernel limit");
	if (put_cgroup(msg, cgroup_path, cgroup_fd) < 0) {
		nlmsg_free(msg);
		seterr(nl, "cgroup path too long: %.64s...", name);
		return -ENAMETOOLONG;
	}
	ret = transact(nl, msg, false, &r);
	if (!ret && !d.got) {
		seterr(nl, "the kernel sent no limit for %s", name);
		ret = -EPROTO;
	}
	if (ret < 0)
		return cgroup_fail(nl, ret, &r, name, "getting the limit of");
	if (limit)
		*limit = d.one.limit;
	if (usage)
		*usage = d.one.usage;
	if (peak)
		*peak = d.one.peak;
	if (failcnt)
		*failcnt = d.one.failcnt;
	return 0;
}

int axon_nl_limit_get(struct axon_nl *nl, const char *cgroup_path,
		      uint64_t *limit, uint64_t *usage, uint64_t *peak,
		      uint64_t *failcnt)
{
	return limit_get(nl, cgroup_path, -1, limit, usage, peak, failcnt);
}

int axon_nl_limit_get_fd(struct axon_nl *nl, int cgroup_fd, uint64_t *limit,
			 uint64_t *usage, uint64_t *peak, uint64_t *failcnt)
{
	if (cgroup_fd < 0)
		return -EBADF;
	return limit_get(nl, NULL, cgroup_fd, limit, usage, peak, failcnt);
}

static int limit_set(struct axon_nl *nl, const char *cgroup_path, int cgroup_fd,
		     uint64_t limit)
{
	const char *name = cgroup_fd >= 0 ? "(by descriptor)" : cgroup_path;
	struct req r = { 0 };
	struct nl_msg *msg = new_msg(nl, AXON_CMD_SET_LIMIT, false);
	int ret;

	r.valid = limit_valid;	/* no reply is expected; ignore any */
	r.arg = &(struct limit_dump){ 0 };
	if (!msg)
		return fail(nl, -ENOMEM, NULL, "kernel limit");
	if (put_cgroup(msg, cgroup_path, cgroup_fd) < 0 ||
	    nla_put_u32(msg, AXON_A_KIND, AXON_CHARGE_DEVICE_MEM) < 0 ||
	    nla_put_u64(msg, AXON_A_LIMIT, limit) < 0) {
		nlmsg_free(msg);
		seterr(nl, "cgroup path too long: %.64s...", name);
		return -ENAMETOOLONG;
	}
	ret = transact(nl, msg, false, &r);
	if (ret < 0)
		return cgroup_fail(nl, ret, &r, name, "setting the limit of");
	return 0;
}

int axon_nl_limit_set(struct axon_nl *nl, const char *cgroup_path, uint64_t limit)
{
	return limit_set(nl, cgroup_path, -1, limit);
}

int axon_nl_limit_set_fd(struct axon_nl *nl, int cgroup_fd, uint64_t limit)
{
	if (cgroup_fd < 0)
		return -EBADF;
	return limit_set(nl, NULL, cgroup_fd, limit);
}

int axon_nl_limits(struct axon_nl *nl, axon_nl_limit_fn fn, void *arg)
{
	struct limit_dump d = { .fn = fn, .arg = arg };
	struct req r = { .valid = limit_valid, .arg = &d };

	return request(nl, AXON_CMD_GET_LIMIT, true, &r, "kernel limits");
}

/* ---- events ----------------------------------------------------------------- */

int axon_nl_events_subscribe(struct axon_nl *nl)
{
	int grp, ret;

	if (nl->ev)
		return 0;
	grp = genl_ctrl_resolve_grp(nl->sk, AXON_GENL_NAME, AXON_GENL_MCGRP_EVENTS);
	if (grp < 0) {
		seterr(nl, "the axon module has no \"" AXON_GENL_MCGRP_EVENTS
		       "\" multicast group: %s", nl_geterror(grp));
		return -nle_errno(grp);
	}
	nl->ev = new_sock(nl, &ret);
	if (!nl->ev)
		return ret;
	nl_socket_disable_seq_check(nl->ev);
	ret = nl_socket_add_membership(nl->ev, grp);
	if (ret >= 0)
		ret = nl_socket_set_nonblocking(nl->ev);
	if (ret < 0) {
		ret = -nle_errno(ret);
		if (ret == -EPERM || ret == -EACCES)
			seterr(nl, "following axon events needs CAP_NET_ADMIN (%s)",
			       strerror(-ret));
		else
			seterr(nl, "cannot join the axon events group: %s", strerror(-ret));
		nl_socket_free(nl->ev);
		nl->ev = NULL;
		return ret;
	}
	return 0;
}

struct event_rx {
	struct axon_kevent *ev;
	bool got;
};

static int event_valid(struct nl_msg *msg, void *arg)
{
	struct event_rx *rx = arg;
	struct nlattr *a[AXON_A_MAX + 1];
	struct axon_kevent *ev = rx->ev;

	if (rx->got || genlmsg_hdr(nlmsg_hdr(msg))->cmd != AXON_CMD_EVENT ||
	    genlmsg_parse(nlmsg_hdr(msg), 0, a, AXON_A_MAX, axon_policy) < 0 ||
	    !a[AXON_A_EVENT])
		return NL_SKIP;
	memset(ev, 0, sizeof(*ev));
	ev->event = a_u32(a, AXON_A_EVENT);
	ev->client_id = a_u64(a, AXON_A_CLIENT_ID);
	ev->pid = a_u32(a, AXON_A_PID);
	ev->uid = a_u32(a, AXON_A_UID);
	snprintf(ev->comm, sizeof(ev->comm), "%s", a_str(a, AXON_A_COMM));
	ev->cgroup_id = a_u64(a, AXON_A_CGROUP_ID);
	ev->kind = a_u32(a, AXON_A_KIND);
	ev->bytes = a_u64(a, AXON_A_BYTES);
	ev->usage = a_u64(a, AXON_A_USAGE);
	ev->limit = a_u64(a, AXON_A_LIMIT);
	rx->got = true;
	return NL_OK;
}

/* Multicast messages carry sequence number 0: no check. */
static int no_seq_check(struct nl_msg *msg, void *arg)
{
	(void)msg;
	(void)arg;
	return NL_OK;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int axon_nl_event_next(struct axon_nl *nl, struct axon_kevent *ev, int timeout_ms)
{
	struct event_rx rx = { .ev = ev };
	int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	struct nl_cb *cb;
	int ret = 0;

	if (!nl->ev) {
		seterr(nl, "not subscribed to axon events (axon_nl_events_subscribe)");
		return -EINVAL;
	}
	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return fail(nl, -ENOMEM, NULL, "axon events");
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, event_valid, &rx);
	nl_cb_set(cb, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, no_seq_check, NULL);
	while (!rx.got) {
		struct pollfd p = { .fd = nl_socket_get_fd(nl->ev), .events = POLLIN };
		int wait = -1;

		if (deadline >= 0) {
			int64_t left = deadline - now_ms();

			wait = left < 0 ? 0 : (int)left;
		}
		ret = poll(&p, 1, wait);
		if (ret < 0) {
			ret = -errno;
			if (ret != -EINTR)
				seterr(nl, "waiting for axon events: %s", strerror(-ret));
			break;
		}
		if (ret == 0) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = nl_recvmsgs(nl->ev, cb);
		if (ret == -NLE_AGAIN) {
			ret = 0;
			continue;
		}
		if (ret < 0) {
			int nle = ret;

			ret = -nle_errno(nle);
			if (ret == -ENOMEM)	/* ENOBUFS: libnl says NLE_NOMEM */
				ret = -ENOBUFS;
			if (ret == -ENOBUFS)
				seterr(nl, "axon events were lost (the socket buffer overflowed)");
			else
				seterr(nl, "receiving axon events: %s", nl_geterror(nle));
			break;
		}
		ret = 0;
	}
	nl_cb_put(cb);
	return rx.got ? 0 : ret;
}

/* ---- names ------------------------------------------------------------------ */

const char *axon_nl_event_name(uint32_t event)
{
	switch (event) {
	case AXON_NLEV_CLIENT_OPEN:	return "client-open";
	case AXON_NLEV_CLIENT_EXIT:	return "client-exit";
	case AXON_NLEV_LIMIT_HIT:	return "limit-hit";
	case AXON_NLEV_DAEMON_ATTACH:	return "daemon-attach";
	case AXON_NLEV_DAEMON_DETACH:	return "daemon-detach";
	default:			return "?";
	}
}

const char *axon_nl_kstate_name(uint32_t state)
{
	static const char *const names[] = {
		[AXON_KSTATE_NEW]	= "new",
		[AXON_KSTATE_PENDING]	= "pending",
		[AXON_KSTATE_ACTIVE]	= "active",
		[AXON_KSTATE_ORPHAN]	= "orphan",
		[AXON_KSTATE_DEAD]	= "dead",
		[AXON_KSTATE_GONE]	= "gone",
	};

	return state < AXON_KSTATE_LAST && names[state] ? names[state] : "?";
}
