// SPDX-License-Identifier: MIT
/*
 * attack-trace-access: any local user could trace any client's calls
 * (device pointers, sizes, handles) and read every client's pid, uid and
 * command from the stats: the socket is 0666 and neither the trace hello
 * nor the stats looked at who asked. Now (axond/access.c) tracing a client
 * is for its own uid and administrators (root, axond's uid, members of
 * --admin-group), and the stats list other users' clients to
 * administrators only; identity from SO_PEERCRED / SO_PEERGROUPS. Checked
 * with the default isolation of the sim (one process) and with
 * --isolation=process, where stats and traces pass through the supervisor
 * to the worker of the client: a process that switched to uid 65534 is
 * refused root's client (by id and by pid) and sees only its own in the
 * stats; it may trace its own; root may trace it and sees both; members
 * of the administrators' group (supplementary or primary) may trace and see
 * root's; a group named on the command line that does not exist stops
 * axond at start.
 */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack.h"

#define NOBODY		65534	/* uid; and the gid of the group "nogroup" */
#define OTHER		65533	/* a uid and gid nobody uses */

struct probe {
	const struct h_daemon *d;
	uint64_t root_client;	/* the parent's (root's) client */
	pid_t root_pid;
	bool expect_admin;	/* the child is in the administrators' group */
	int report;		/* child -> parent: its own client's id */
	int go;			/* parent -> child: done, exit */
};

/* Fails in the child: a message, then a distinct exit code. */
#define CHILD_CHECK(cond, code, ...)					\
	do {								\
		if (!(cond)) {						\
			h_fail(__VA_ARGS__);				\
			_exit(code);					\
		}							\
	} while (0)

static int32_t trace_status(const struct h_daemon *d, uint64_t id, pid_t pid, int *keep)
{
	struct axon_welcome w;
	int t = a_connect_raw(d);
	int32_t st;

	if (t < 0)
		return INT32_MIN;
	st = a_hello(t, AXON_HELLO_TRACE, id, (uint32_t)pid, &w, H_MS(10000));
	if (st == -EPERM && !strstr(w.message, "another user"))
		h_note("refusal without the access message: %.*s",
		       (int)sizeof(w.message), w.message);
	if (keep && st == 0)
		*keep = t;
	else
		close(t);
	return st;
}

/* Clients listed in d's stats: how many, and whether ids a and b are. */
static int listed(const struct h_daemon *d, uint64_t a, uint64_t b, bool *has_a, bool *has_b,
		  uint64_t *total, uid_t only_uid)
{
	struct json *doc = h_stats(d);
	const struct json *cl;
	size_t i, n;

	if (!doc)
		return -1;
	cl = json_get(doc, "clients");
	n = json_len(cl);
	*has_a = *has_b = false;
	for (i = 0; i < n; i++) {
		const struct json *c = json_at(cl, i);
		uint64_t id = json_u64(json_get(c, "id"), 0);

		*has_a |= id == a;
		*has_b |= id == b;
		if (only_uid != (uid_t)-1 && json_u64(json_get(c, "uid"), 0) != only_uid) {
			json_free(doc);
			return h_fail("client %llu of uid %llu listed to uid %u",
				      (unsigned long long)id,
				      (unsigned long long)json_u64(json_get(c, "uid"), 0),
				      (unsigned int)only_uid);
		}
	}
	*total = json_u64(json_path(doc, "daemon.clients"), 0);
	json_free(doc);
	return (int)n;
}

static void __attribute__((noreturn)) child(const struct probe *p, uid_t uid)
{
	struct axon_ring own;
	bool has_root, has_own;
	uint64_t total;
	int keep = -1, n;
	int32_t st;
	char c;

	st = trace_status(p->d, p->root_client, 0, NULL);
	CHILD_CHECK(st == (p->expect_admin ? 0 : -EPERM), 20,
		    "uid %u tracing root's client %llu by id: status %d", (unsigned int)uid,
		    (unsigned long long)p->root_client, st);
	st = trace_status(p->d, 0, p->root_pid, NULL);
	CHILD_CHECK(st == (p->expect_admin ? 0 : -EPERM), 21,
		    "uid %u tracing root's client by pid %d: status %d", (unsigned int)uid,
		    (int)p->root_pid, st);
	CHILD_CHECK(h_ring_connect(&own, p->d) == 0, 22, "uid %u cannot connect", (unsigned int)uid);
	st = trace_status(p->d, own.params.client_id, 0, &keep);
	CHILD_CHECK(st == 0, 23, "uid %u tracing its own client: status %d", (unsigned int)uid, st);
	n = listed(p->d, p->root_client, own.params.client_id, &has_root, &has_own, &total,
		   p->expect_admin ? (uid_t)-1 : uid);
	CHILD_CHECK(n >= 0, 24, "uid %u: no stats", (unsigned int)uid);
	CHILD_CHECK(has_own, 25, "uid %u does not see its own client", (unsigned int)uid);
	CHILD_CHECK(has_root == p->expect_admin, 26, "uid %u %s root's client in the stats",
		    (unsigned int)uid, has_root ? "sees" : "does not see");
	CHILD_CHECK(total >= 2, 27, "uid %u: daemon.clients %llu, want the total (2)",
		    (unsigned int)uid, (unsigned long long)total);
	CHILD_CHECK(write(p->report, &own.params.client_id, sizeof(uint64_t)) == sizeof(uint64_t),
		    28, "report");
	CHILD_CHECK(read(p->go, &c, 1) == 1, 29, "no word from the parent");
	close(keep);
	axon_close(&own);
	_exit(0);
}

/* Runs child() as uid/gid with the supplementary groups given; its exit code. */
static int as_user(struct probe *p, uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	int rep[2], go[2], status;
	uint64_t other_id;
	bool has_root, has_other;
	uint64_t total;
	pid_t pid;
	int n, keep = -1;

	ck_assert_int_eq(pipe(rep), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(rep[0]);
		close(go[1]);
		p->report = rep[1];
		p->go = go[0];
		if (setgroups((size_t)ngroups, groups) || setgid(gid) || setuid(uid)) {
			h_fail("cannot become uid %u: %s", (unsigned int)uid, strerror(errno));
			_exit(30);
		}
		child(p, uid);
	}
	close(rep[1]);
	close(go[0]);
	if (read(rep[0], &other_id, sizeof(other_id)) == sizeof(other_id)) {
		/* Root sees and may trace the other user's client. */
		n = listed(p->d, p->root_client, other_id, &has_root, &has_other, &total,
			   (uid_t)-1);
		ck_assert_msg(n >= 2 && has_root && has_other,
			      "root's stats: %d clients, own %d, uid %u's %d", n, has_root,
			      (unsigned int)uid, has_other);
		ck_assert_int_eq(trace_status(p->d, other_id, 0, &keep), 0);
		close(keep);
	}
	(void)!write(go[1], "k", 1);
	close(go[1]);
	close(rep[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The socket's directory (mkdtemp: 0700) open to the other users. */
static void open_dir(const struct h_daemon *d)
{
	ck_assert_int_eq(chmod(d->dir, 0711), 0);
}

static void check_daemon(const struct h_daemon *d, bool admin_group)
{
	static const gid_t nogroup[] = { NOBODY };
	struct probe p = { .d = d, .root_pid = getpid() };
	struct axon_ring r;

	if (geteuid() != 0)
		h_skip("needs root to switch to another uid");
	open_dir(d);
	ck_assert_int_eq(h_ring_connect(&r, d), 0);
	p.root_client = r.params.client_id;
	/* Another user: refused root's client, sees only its own. */
	ck_assert_int_eq(as_user(&p, NOBODY, OTHER, NULL, 0), 0);
	if (admin_group) {
		/* An administrator by a supplementary group, then by the
		 * primary one. */
		p.expect_admin = true;
		ck_assert_int_eq(as_user(&p, OTHER, OTHER, nogroup, 1), 0);
		ck_assert_int_eq(as_user(&p, OTHER, NOBODY, NULL, 0), 0);
	} else {
		/* Not in the group: the same uid, nothing more. */
		ck_assert_int_eq(as_user(&p, OTHER, OTHER, nogroup, 1), 0);
	}
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(d, H_MS(10000)), 0);
	ck_assert_msg(h_daemon_running((struct h_daemon *)d), "axond died");
}

START_TEST(one_process)
{
	check_daemon(&h_daemon, false);
}
END_TEST

START_TEST(admin_group)
{
	static const char *const args[] = { "--admin-group=nogroup", NULL };
	struct h_daemon other = { 0 };

	ck_assert_int_eq(h_daemon_start(&other, "1G", args), 0);
	check_daemon(&other, true);
	ck_assert_int_eq(h_daemon_stop(&other, false), 0);
}
END_TEST

START_TEST(process_isolation)
{
	static const char *const args[] = {
		"--isolation=process", "--context-pool=2", "--admin-group=nogroup", NULL
	};
	struct h_daemon other = { 0 };

	ck_assert_int_eq(h_daemon_start(&other, "1G", args), 0);
	check_daemon(&other, true);
	ck_assert_int_eq(h_daemon_stop(&other, false), 0);
}
END_TEST

/* A group named that does not exist: axond does not start (exit 2). */
START_TEST(missing_group)
{
	char *argv[] = {
		(char *)h_path("bin/axond"), (char *)"--backend=sim",
		(char *)"--listen=unix:/nonexistent-dir-axon/axond.sock",
		(char *)"--admin-group=no-such-group-axon", NULL
	};

	ck_assert_int_eq(h_run(argv, H_MS(10000)), 2);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, one_process);
	tcase_add_test(tc, admin_group);
	tcase_add_test(tc, process_isolation);
	tcase_add_test(tc, missing_group);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-trace-access", "1G", NULL, add, 120);
}
