// SPDX-License-Identifier: GPL-2.0
/*
 * The generic netlink family "axon" through libnl-genl-3: stats, client
 * dump and get, limits set/get/dump by cgroup path and id, strict
 * attribute validation, CAP_NET_ADMIN for setting limits, and the
 * multicast "events" group (client open/exit, limit hit, daemon
 * attach/detach).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define CG	"/sys/fs/cgroup"

struct reply {
	int n;
	uint64_t u64[AXON_A_MAX + 1];
	uint32_t u32[AXON_A_MAX + 1];
	char str[AXON_A_MAX + 1][256];
	uint64_t stats[AXON_STAT_MAX + 1];
	uint64_t want_client;
	bool found;
};

static struct nla_policy pol[AXON_A_MAX + 1] = {
	[AXON_A_CLIENT_ID]	= { .type = NLA_U64 },
	[AXON_A_CGROUP_ID]	= { .type = NLA_U64 },
	[AXON_A_USAGE]		= { .type = NLA_U64 },
	[AXON_A_LIMIT]		= { .type = NLA_U64 },
	[AXON_A_PID]		= { .type = NLA_U32 },
	[AXON_A_STATE]		= { .type = NLA_U32 },
	[AXON_A_EVENT]		= { .type = NLA_U32 },
};

static int on_msg(struct nl_msg *msg, void *arg)
{
	struct reply *r = arg;
	struct nlattr *a[AXON_A_MAX + 1];
	int i;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, AXON_A_MAX, pol))
		return NL_SKIP;
	r->n++;
	if (r->want_client && (!a[AXON_A_CLIENT_ID] ||
			       nla_get_u64(a[AXON_A_CLIENT_ID]) != r->want_client))
		return NL_OK;
	r->found = true;
	for (i = 1; i <= AXON_A_MAX; i++) {
		if (!a[i])
			continue;
		switch (nla_len(a[i])) {
		case 8:
			r->u64[i] = nla_get_u64(a[i]);
			break;
		case 4:
			r->u32[i] = nla_get_u32(a[i]);
			break;
		}
		if (i == AXON_A_COMM || i == AXON_A_CGROUP_PATH)
			snprintf(r->str[i], sizeof(r->str[i]), "%s",
				 nla_get_string(a[i]));
	}
	if (a[AXON_A_STATS]) {
		struct nlattr *s;
		int rem;

		nla_for_each_nested(s, a[AXON_A_STATS], rem)
			if (nla_type(s) <= AXON_STAT_MAX)
				r->stats[nla_type(s)] = nla_get_u64(s);
	}
	return NL_OK;
}

struct nl {
	struct nl_sock *sk;
	int fam;
};

static int on_ack(struct nl_msg *msg, void *arg)
{
	(void)msg;
	*(int *)arg = 1;
	return NL_STOP;
}

/* Receives until the ACK (doit) or DONE (dump); returns 0 or -NLE_*. */
static int nl_finish(struct nl_sock *sk, struct nl_cb *cb, bool dump)
{
	int acked = 0, ret;

	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, on_ack, &acked);
	do {
		ret = nl_recvmsgs(sk, cb);
	} while (ret >= 0 && !dump && !acked);
	return ret < 0 ? ret : 0;
}

static int nl_open(struct nl *n)
{
	n->sk = nl_socket_alloc();
	if (!n->sk || genl_connect(n->sk))
		return -1;
	n->fam = genl_ctrl_resolve(n->sk, AXON_GENL_NAME);
	return n->fam < 0 ? -1 : 0;
}

/* One request; attrs as (type, kind, value) triples ended by 0. */
static int nl_call(struct nl *n, int cmd, int flags, struct reply *r,
		   int a1, uint64_t v1, const char *s1)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	int ret;

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->fam, 0,
		    NLM_F_REQUEST | (flags & NLM_F_DUMP ? 0 : NLM_F_ACK) | flags,
		    cmd, AXON_GENL_VERSION);
	if (a1 && s1)
		nla_put_string(msg, a1, s1);
	else if (a1)
		nla_put_u64(msg, a1, v1);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_msg, r);
	ret = nl_send_auto(n->sk, msg);
	if (ret >= 0)
		ret = nl_finish(n->sk, cb, flags & NLM_F_DUMP);
	nlmsg_free(msg);
	nl_cb_put(cb);
	return ret;
}

static int set_limit(struct nl *n, const char *path, uint64_t limit)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct reply r = { 0 };
	int ret;

	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->fam, 0,
		    NLM_F_REQUEST | NLM_F_ACK, AXON_CMD_SET_LIMIT, AXON_GENL_VERSION);
	nla_put_string(msg, AXON_A_CGROUP_PATH, path);
	nla_put_u64(msg, AXON_A_LIMIT, limit);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_msg, &r);
	ret = nl_send_auto(n->sk, msg);
	if (ret >= 0)
		ret = nl_finish(n->sk, cb, false);
	nlmsg_free(msg);
	nl_cb_put(cb);
	return ret;
}

FIXTURE(n) {
	struct nl nl;
	pid_t daemon;
};

FIXTURE_SETUP(n)
{
	ASSERT_EQ(0, nl_open(&self->nl));
	self->daemon = 0;
}

FIXTURE_TEARDOWN(n)
{
	fake_daemon_kill(self->daemon);
	nl_socket_free(self->nl.sk);
	rmdir(CG "/axnl");
}

TEST_F(n, stats)
{
	struct reply r = { 0 };
	struct tclient c;

	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	ASSERT_EQ(0, tclient_open(&c));
	ASSERT_EQ(0, tclient_setup(&c, 4, 4096));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_STATS, 0, &r, 0, 0, NULL));
	EXPECT_EQ(1, r.n);
	EXPECT_EQ(1, r.stats[AXON_STAT_DAEMON_ATTACHED]);
	EXPECT_EQ(self->daemon, r.stats[AXON_STAT_DAEMON_PID]);
	EXPECT_LE(1, r.stats[AXON_STAT_CLIENTS]);
	EXPECT_LE(1, r.stats[AXON_STAT_OPENS]);
	EXPECT_LE(4096, r.stats[AXON_STAT_REGION_BYTES]);
	/* strict: GET_STATS takes no attributes */
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-NLE_INVAL, nl_call(&self->nl, AXON_CMD_GET_STATS, 0, &r,
				      AXON_A_CLIENT_ID, 1, NULL));
	tclient_close(&c);
}

TEST_F(n, clients)
{
	struct reply r = { 0 };
	struct tclient c[3];
	char cgp[64];
	int i;

	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, tclient_open(&c[i]));
		ASSERT_EQ(0, tclient_setup(&c[i], 4, 4096));
	}
	r.want_client = c[1].p.client_id;
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_CLIENT, NLM_F_DUMP, &r, 0, 0, NULL));
	EXPECT_LE(3, r.n);
	EXPECT_TRUE(r.found);
	EXPECT_EQ(getpid(), r.u32[AXON_A_PID]);
	EXPECT_EQ(AXON_KSTATE_ACTIVE, r.u32[AXON_A_STATE]);
	EXPECT_STREQ("netlink_test", r.str[AXON_A_COMM]);
	EXPECT_STREQ("/", r.str[AXON_A_CGROUP_PATH]);
	/* doit by id */
	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_CLIENT, 0, &r,
			     AXON_A_CLIENT_ID, c[2].p.client_id, NULL));
	EXPECT_EQ(1, r.n);
	EXPECT_EQ(c[2].p.client_id, r.u64[AXON_A_CLIENT_ID]);
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-NLE_OBJ_NOTFOUND, nl_call(&self->nl, AXON_CMD_GET_CLIENT, 0, &r,
					     AXON_A_CLIENT_ID, 1ULL << 60, NULL));
	/* strict policy: a wrong type for CLIENT_ID, an attribute of another
	 * command */
	EXPECT_EQ(-NLE_INVAL, nl_call(&self->nl, AXON_CMD_GET_CLIENT, 0, &r,
				      AXON_A_CLIENT_ID, 0, "x"));
	EXPECT_EQ(-NLE_INVAL, nl_call(&self->nl, AXON_CMD_GET_CLIENT, 0, &r,
				      AXON_A_LIMIT, 5, NULL));
	for (i = 0; i < 3; i++)
		tclient_close(&c[i]);
	(void)cgp;
}

TEST_F(n, limits)
{
	struct reply r = { 0 };
	struct stat st;

	ASSERT_EQ(0, mkdir(CG "/axnl", 0755));
	ASSERT_EQ(0, stat(CG "/axnl", &st));
	ASSERT_EQ(0, set_limit(&self->nl, "/axnl", 1 << 20));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_LIMIT, 0, &r,
			     AXON_A_CGROUP_PATH, 0, "/axnl"));
	EXPECT_EQ(1 << 20, r.u64[AXON_A_LIMIT]);
	EXPECT_EQ(0, r.u64[AXON_A_USAGE]);
	EXPECT_EQ(st.st_ino, r.u64[AXON_A_CGROUP_ID]);
	EXPECT_STREQ("/axnl", r.str[AXON_A_CGROUP_PATH]);
	/* by id */
	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_LIMIT, 0, &r,
			     AXON_A_CGROUP_ID, st.st_ino, NULL));
	EXPECT_EQ(1 << 20, r.u64[AXON_A_LIMIT]);
	/* the dump lists it */
	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_LIMIT, NLM_F_DUMP, &r, 0, 0, NULL));
	EXPECT_LE(1, r.n);
	/* errors: no such cgroup, neither path nor id */
	EXPECT_EQ(-NLE_OBJ_NOTFOUND, set_limit(&self->nl, "/no/such", 1));
	memset(&r, 0, sizeof(r));
	EXPECT_EQ(-NLE_INVAL, nl_call(&self->nl, AXON_CMD_GET_LIMIT, 0, &r, 0, 0, NULL));
	/* remove the limit */
	ASSERT_EQ(0, set_limit(&self->nl, "/axnl", AXON_LIMIT_NONE));
	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_LIMIT, 0, &r,
			     AXON_A_CGROUP_PATH, 0, "/axnl"));
	EXPECT_EQ(AXON_LIMIT_NONE, r.u64[AXON_A_LIMIT]);
}

static int set_limit_nocaps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	struct nl n;

	if (syscall(SYS_capset, &h, d))
		return 100;
	if (nl_open(&n))
		return 101;
	return set_limit(&n, "/axnl", 1) == -NLE_PERM ? 0 : 1;
}

TEST_F(n, limit_needs_admin)
{
	pid_t pid;
	int st;

	ASSERT_EQ(0, mkdir(CG "/axnl", 0755));
	pid = fork();
	if (pid == 0)
		_exit(set_limit_nocaps());
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/* Another user's dump and get do not show root's client; its own, yes. */
TEST_F(n, clients_of_others_hidden)
{
	struct tclient c;
	pid_t pid;
	int st;

	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	ASSERT_EQ(0, tclient_open(&c));
	ASSERT_EQ(0, tclient_setup(&c, 4, 4096));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct reply r = { .want_client = c.p.client_id };
		struct tclient mine;
		struct nl n;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		if (nl_open(&n))
			_exit(101);
		if (nl_call(&n, AXON_CMD_GET_CLIENT, NLM_F_DUMP, &r, 0, 0, NULL))
			_exit(102);
		if (r.found)
			_exit(10);
		memset(&r, 0, sizeof(r));
		if (nl_call(&n, AXON_CMD_GET_CLIENT, 0, &r, AXON_A_CLIENT_ID,
			    c.p.client_id, NULL) != -NLE_OBJ_NOTFOUND)
			_exit(11);
		if (tclient_open(&mine) || tclient_setup(&mine, 4, 4096))
			_exit(103);
		memset(&r, 0, sizeof(r));
		r.want_client = mine.p.client_id;
		if (nl_call(&n, AXON_CMD_GET_CLIENT, NLM_F_DUMP, &r, 0, 0, NULL) ||
		    !r.found)
			_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	tclient_close(&c);
}

/*
 * A netlink reader is judged by the socket's opener and by the task both
 * (netlink_capable()'s rule): a socket opened as nobody and used after
 * becoming root again, or opened by root and used by nobody, does not
 * show root's client.
 */
TEST_F(n, socket_opener_credentials)
{
	struct tclient c;
	struct nl rootsk;
	pid_t pid;
	int st;

	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	ASSERT_EQ(0, tclient_open(&c));
	ASSERT_EQ(0, tclient_setup(&c, 4, 4096));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct reply r = { .want_client = c.p.client_id };
		struct nl n;

		if (setresuid(65534, 65534, 0))
			_exit(100);
		if (nl_open(&n))
			_exit(101);
		if (setresuid(0, 0, 0))
			_exit(102);
		if (nl_call(&n, AXON_CMD_GET_CLIENT, NLM_F_DUMP, &r, 0, 0, NULL))
			_exit(103);
		if (r.found)
			_exit(10);
		memset(&r, 0, sizeof(r));
		if (nl_call(&n, AXON_CMD_GET_CLIENT, 0, &r, AXON_A_CLIENT_ID,
			    c.p.client_id, NULL) != -NLE_OBJ_NOTFOUND)
			_exit(11);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));

	ASSERT_EQ(0, nl_open(&rootsk));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct reply r = { .want_client = c.p.client_id };

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		if (nl_call(&rootsk, AXON_CMD_GET_CLIENT, NLM_F_DUMP, &r, 0, 0, NULL))
			_exit(103);
		_exit(r.found ? 12 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	nl_socket_free(rootsk.sk);
	tclient_close(&c);
}

/* SET_LIMIT naming the cgroup by an fd of its directory. */
static int set_limit_fd(struct nl *n, const char *dir, uint64_t limit)
{
	struct nl_msg *msg = nlmsg_alloc();
	struct nl_cb *cb = nl_cb_alloc(NL_CB_DEFAULT);
	struct reply r = { 0 };
	int fd, ret;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1000 - errno;
	genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->fam, 0,
		    NLM_F_REQUEST | NLM_F_ACK, AXON_CMD_SET_LIMIT, AXON_GENL_VERSION);
	nla_put_u32(msg, AXON_A_CGROUP_FD, fd);
	nla_put_u64(msg, AXON_A_LIMIT, limit);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, on_msg, &r);
	ret = nl_send_auto(n->sk, msg);
	if (ret >= 0)
		ret = nl_finish(n->sk, cb, false);
	nlmsg_free(msg);
	nl_cb_put(cb);
	close(fd);
	return ret;
}

#define DEL	CG "/axdel"

static void del_cleanup(struct nl *n)
{
	static const char *const dirs[] = {
		"/axdel/sub/kid/gk", "/axdel/sub/kid", "/axdel/sub", "/axdel/sib",
		"/axdel",
	};
	char path[128];
	unsigned int i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (n)
			set_limit(n, dirs[i], AXON_LIMIT_NONE);
		snprintf(path, sizeof(path), CG "%s", dirs[i]);
		rmdir(path);
	}
}

/*
 * cgroup v2 delegation: /axdel/sub is delegated to uid 1000 (its directory,
 * cgroup.procs and cgroup.subtree_control chowned, as systemd does). uid
 * 1000 may limit the cgroups it creates below sub, by fd, but not sub
 * itself, not the sibling /axdel/sib, and not by path or id.
 */
TEST_F(n, limit_delegated)
{
	struct reply r = { 0 };
	pid_t pid;
	int st;

	del_cleanup(NULL);
	ASSERT_EQ(0, mkdir(DEL, 0755));
	ASSERT_EQ(0, mkdir(DEL "/sub", 0755));
	ASSERT_EQ(0, mkdir(DEL "/sib", 0755));
	ASSERT_EQ(0, chown(DEL "/sub", 1000, 1000));
	ASSERT_EQ(0, chown(DEL "/sub/cgroup.procs", 1000, 1000));
	ASSERT_EQ(0, chown(DEL "/sub/cgroup.subtree_control", 1000, 1000));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct nl n;

		if (setresgid(1000, 1000, 1000) || setresuid(1000, 1000, 1000))
			_exit(100);
		if (mkdir(DEL "/sub/kid", 0755) || mkdir(DEL "/sub/kid/gk", 0755))
			_exit(101);
		if (nl_open(&n))
			_exit(102);
		/* main: EPERM for all (GENL_ADMIN_PERM) */
		if (set_limit_fd(&n, DEL "/sub/kid", 5000))
			_exit(10);
		if (set_limit_fd(&n, DEL "/sub/kid/gk", 4000))
			_exit(11);
		if (set_limit_fd(&n, DEL "/sub", 5000) != -NLE_PERM)
			_exit(12);
		if (set_limit_fd(&n, DEL "/sib", 5000) != -NLE_PERM)
			_exit(13);
		if (set_limit(&n, "/axdel/sub/kid", 6000) != -NLE_PERM)
			_exit(14);
		/* a file that is no cgroup directory */
		if (set_limit_fd(&n, "/tmp", 5000) >= 0)
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_LIMIT, 0, &r,
			     AXON_A_CGROUP_PATH, 0, "/axdel/sub/kid"));
	EXPECT_EQ(5000, r.u64[AXON_A_LIMIT]);
	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, nl_call(&self->nl, AXON_CMD_GET_LIMIT, 0, &r,
			     AXON_A_CGROUP_PATH, 0, "/axdel/sub"));
	EXPECT_EQ(AXON_LIMIT_NONE, r.u64[AXON_A_LIMIT]);
	/* root names a cgroup by fd as well */
	EXPECT_EQ(0, set_limit_fd(&self->nl, DEL "/sib", 7000));
	del_cleanup(&self->nl);
}

/* Events arrive on the multicast group. */
struct evlog {
	int n;
	uint32_t ev[64];
	uint64_t client[64];
	uint64_t cgroup[64];
};

static int on_event(struct nl_msg *msg, void *arg)
{
	struct evlog *l = arg;
	struct nlattr *a[AXON_A_MAX + 1];

	if (genlmsg_parse(nlmsg_hdr(msg), 0, a, AXON_A_MAX, pol) || !a[AXON_A_EVENT])
		return NL_SKIP;
	if (l->n < 64) {
		l->ev[l->n] = nla_get_u32(a[AXON_A_EVENT]);
		l->client[l->n] = a[AXON_A_CLIENT_ID] ? nla_get_u64(a[AXON_A_CLIENT_ID]) : 0;
		l->cgroup[l->n] = a[AXON_A_CGROUP_ID] ? nla_get_u64(a[AXON_A_CGROUP_ID]) : 0;
		l->n++;
	}
	return NL_OK;
}

static bool has_event(struct evlog *l, uint32_t ev, uint64_t client)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->ev[i] == ev && (!client || l->client[i] == client))
			return true;
	return false;
}

TEST_F(n, events)
{
	struct nl_sock *ev = nl_socket_alloc();
	struct evlog log = { 0 };
	struct tdaemon d;
	struct tclient c;
	struct axon_event e;
	struct stat st;
	pid_t kid;
	int grp, i;
	uint64_t id;

	ASSERT_EQ(0, genl_connect(ev));
	grp = genl_ctrl_resolve_grp(self->nl.sk, AXON_GENL_NAME, AXON_GENL_MCGRP_EVENTS);
	ASSERT_GE(grp, 0);
	nl_socket_disable_seq_check(ev);
	nl_socket_modify_cb(ev, NL_CB_VALID, NL_CB_CUSTOM, on_event, &log);
	ASSERT_EQ(0, nl_socket_add_membership(ev, grp));
	nl_socket_set_nonblocking(ev);

	ASSERT_EQ(0, mkdir(CG "/axnl", 0755));
	ASSERT_EQ(0, stat(CG "/axnl", &st));
	ASSERT_EQ(0, set_limit(&self->nl, "/axnl", 100));
	ASSERT_EQ(0, tdaemon_attach(&d));
	kid = fork();
	if (kid == 0) {
		char v[32];

		close_inherited_fds(-1);
		snprintf(v, sizeof(v), "%d", getpid());
		if (write_file(CG "/axnl/cgroup.procs", v))
			_exit(1);
		if (tclient_open(&c) || tclient_setup(&c, 4, 4096))
			_exit(2);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, tdaemon_event(&d, &e, 5000));
	id = e.client_id;
	ASSERT_EQ(0, tdaemon_handle(&d, &e));
	EXPECT_EQ(-EDQUOT, tdaemon_charge(&d, id, 101, true));
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	tdaemon_close(&d);
	set_limit(&self->nl, "/axnl", AXON_LIMIT_NONE);

	for (i = 0; i < 50 && log.n < 5; i++) {
		nl_recvmsgs_default(ev);
		usleep(10000);
	}
	EXPECT_TRUE(has_event(&log, AXON_NLEV_DAEMON_ATTACH, 0));
	EXPECT_TRUE(has_event(&log, AXON_NLEV_CLIENT_OPEN, id));
	EXPECT_TRUE(has_event(&log, AXON_NLEV_LIMIT_HIT, id));
	for (i = 0; i < log.n; i++)
		if (log.ev[i] == AXON_NLEV_LIMIT_HIT)
			EXPECT_EQ(st.st_ino, log.cgroup[i]);
	EXPECT_TRUE(has_event(&log, AXON_NLEV_CLIENT_EXIT, id));
	EXPECT_TRUE(has_event(&log, AXON_NLEV_DAEMON_DETACH, 0));
	nl_socket_free(ev);
}

/*
 * The events name every tenant's clients: a socket without CAP_NET_ADMIN
 * cannot join the group (as nobody, and as root with no capabilities),
 * and gets none of the events root's clients cause meanwhile.
 */
TEST_F(n, events_need_admin)
{
	struct nl_sock *ev = nl_socket_alloc();
	struct evlog log = { 0 };
	int grp, i, st, rdy[2], go[2];
	struct tclient c;
	pid_t pid;
	char x;

	grp = genl_ctrl_resolve_grp(self->nl.sk, AXON_GENL_NAME, AXON_GENL_MCGRP_EVENTS);
	ASSERT_GE(grp, 0);
	/* root listens, so the events are sent */
	ASSERT_EQ(0, genl_connect(ev));
	nl_socket_disable_seq_check(ev);
	nl_socket_modify_cb(ev, NL_CB_VALID, NL_CB_CUSTOM, on_event, &log);
	ASSERT_EQ(0, nl_socket_add_membership(ev, grp));
	nl_socket_set_nonblocking(ev);
	ASSERT_EQ(0, pipe(rdy));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct __user_cap_header_struct h = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct d[2] = { { 0 } };
		struct nl_sock *sk[2];
		struct evlog mine = { 0 };
		int k;

		close(rdy[0]);
		close(go[1]);
		for (k = 0; k < 2; k++) {
			int fd;

			/* nobody (saved root), then root without capabilities */
			if (k == 0 && setresuid(65534, 65534, 0))
				_exit(100);
			if (k == 1 && (setresuid(0, 0, 0) ||
				       syscall(SYS_capset, &h, d)))
				_exit(101);
			sk[k] = nl_socket_alloc();
			if (!sk[k] || genl_connect(sk[k]))
				_exit(102);
			fd = nl_socket_get_fd(sk[k]);
			if (!setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP,
					&grp, sizeof(grp)) || errno != EPERM)
				_exit(10 + k);
			nl_socket_disable_seq_check(sk[k]);
			nl_socket_modify_cb(sk[k], NL_CB_VALID, NL_CB_CUSTOM,
					    on_event, &mine);
			nl_socket_set_nonblocking(sk[k]);
		}
		x = 'r';
		if (write(rdy[1], &x, 1) != 1 || read(go[0], &x, 1) != 1)
			_exit(103);
		for (i = 0; i < 20; i++) {
			nl_recvmsgs_default(sk[0]);
			nl_recvmsgs_default(sk[1]);
			usleep(10000);
		}
		_exit(mine.n ? 12 : 0);
	}
	close(rdy[1]);
	close(go[0]);
	ASSERT_EQ(1, read(rdy[0], &x, 1));
	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	ASSERT_EQ(0, tclient_open(&c));
	ASSERT_EQ(0, tclient_setup(&c, 4, 4096));
	tclient_close(&c);
	for (i = 0; i < 50 && !has_event(&log, AXON_NLEV_CLIENT_EXIT, 0); i++) {
		nl_recvmsgs_default(ev);
		usleep(10000);
	}
	/* the events were sent: root's socket got them */
	EXPECT_TRUE(has_event(&log, AXON_NLEV_CLIENT_OPEN, 0));
	ASSERT_EQ(1, write(go[1], &x, 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(rdy[0]);
	close(go[1]);
	nl_socket_free(ev);
}

TEST_HARNESS_MAIN
