// SPDX-License-Identifier: GPL-2.0
/*
 * Charges and limits through a 3-level cgroup v2 hierarchy
 * (/axt, /axt/a, /axt/a/b): a client opened in b is charged to b, a and
 * axt; a limit on a refuses with EDQUOT; moving the process does not move
 * what it charged, but its new charges go to the cgroup it moved to (memcg's
 * rule); removing the cgroup keeps the counters consistent until the
 * client goes; everything returns to zero. Limits are set through netlink
 * by the netlink selftest; here the /proc view and ioctls are checked, with
 * limits set through a tiny raw genetlink helper (genl_set_limit(), helpers.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define CG	"/sys/fs/cgroup"

/* ---- cgroup helpers ---------------------------------------------------- */

static uint64_t cg_id(const char *cg)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), CG "%s", cg);
	return stat(path, &st) ? 0 : st.st_ino;
}

/* The usage column of /proc/axon/cgroups for cgroup cg, -1 if untracked. */
static long long cg_usage(const char *cg)
{
	char buf[64];

	if (proc_field("cgroups", cg_id(cg), "id", "usage", buf, sizeof(buf)))
		return -1;
	return atoll(buf);
}

static long long cg_failcnt(const char *cg)
{
	char buf[64];

	if (proc_field("cgroups", cg_id(cg), "id", "failcnt", buf, sizeof(buf)))
		return -1;
	return atoll(buf);
}

static void cg_cleanup(void)
{
	static const char *const dirs[] = {
		"/axt/a/b", "/axt/a/c", "/axt/a", "/axt/d", "/axt",
	};

	cg_reset(dirs, sizeof(dirs) / sizeof(dirs[0]));
}

/*
 * A client child: joins cgroup cg, opens and sets up (SETUP waits for the
 * test, which is the daemon), then sleeps. The id comes from the OPEN event.
 */
static pid_t client_in(const char *cg)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct tclient c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_inherited_fds(-1);
		if (cg_move(cg, getpid()) || tclient_open(&c) ||
		    tclient_setup(&c, 4, 4096))
			_exit(1);
		pause();
		_exit(0);
	}
	return pid;
}

FIXTURE(cg) {
	struct tdaemon d;
};

FIXTURE_SETUP(cg)
{
	/* the VM mounts cgroup2 there; a skip here would still run the body */
	ASSERT_EQ(0, access(CG "/cgroup.procs", F_OK));
	cg_cleanup();
	ASSERT_EQ(0, mkdir(CG "/axt", 0755));
	ASSERT_EQ(0, mkdir(CG "/axt/a", 0755));
	ASSERT_EQ(0, mkdir(CG "/axt/a/b", 0755));
	ASSERT_EQ(0, mkdir(CG "/axt/a/c", 0755));
	ASSERT_EQ(0, mkdir(CG "/axt/d", 0755));
	/* this process is the daemon (in the root cgroup) */
	ASSERT_EQ(0, tdaemon_attach(&self->d));
}

FIXTURE_TEARDOWN(cg)
{
	tdaemon_close(&self->d);
	genl_set_limit("/axt", AXON_LIMIT_NONE);
	genl_set_limit("/axt/a", AXON_LIMIT_NONE);
	cg_cleanup();
}

TEST_F(cg, hierarchy)
{
	uint64_t id, id2;
	pid_t pid, pid2;
	struct axon_event ev;

	/* client in /axt/a/b */
	pid = client_in("/axt/a/b");
	ASSERT_GT(pid, 0);
	/* its SETUP waits for us */
	ASSERT_EQ(1, tdaemon_event(&self->d, &ev, 5000));
	EXPECT_EQ(cg_id("/axt/a/b"), ev.cgroup_id);
	ASSERT_EQ(0, tdaemon_handle(&self->d, &ev));
	id = ev.client_id;

	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 1000, true));
	EXPECT_EQ(1000, cg_usage("/axt/a/b"));
	EXPECT_EQ(1000, cg_usage("/axt/a"));
	EXPECT_EQ(1000, cg_usage("/axt"));
	EXPECT_EQ(-1, cg_usage("/axt/a/c"));
	EXPECT_GE(cg_usage("/"), 1000);

	/* a limit on the middle level */
	ASSERT_EQ(0, genl_set_limit("/axt/a", 3000));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 2000, true));
	EXPECT_EQ(-EDQUOT, tdaemon_charge(&self->d, id, 1, true));
	EXPECT_EQ(1, cg_failcnt("/axt/a"));
	EXPECT_EQ(3000, cg_usage("/axt/a/b"));
	/* a sibling under the same limit is refused too */
	pid2 = client_in("/axt/a/c");
	ASSERT_EQ(1, tdaemon_event(&self->d, &ev, 5000));
	ASSERT_EQ(0, tdaemon_handle(&self->d, &ev));
	id2 = ev.client_id;
	EXPECT_EQ(-EDQUOT, tdaemon_charge(&self->d, id2, 10, true));
	EXPECT_EQ(2, cg_failcnt("/axt/a"));
	/* uncharge, then it fits */
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 500, false));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id2, 500, true));
	EXPECT_EQ(2500, cg_usage("/axt/a/b"));
	EXPECT_EQ(500, cg_usage("/axt/a/c"));
	EXPECT_EQ(3000, cg_usage("/axt/a"));
	/* more than charged cannot go back */
	EXPECT_EQ(-EINVAL, tdaemon_charge(&self->d, id2, 501, false));
	/* a limit on the top level bites too */
	ASSERT_EQ(0, genl_set_limit("/axt/a", AXON_LIMIT_NONE));
	ASSERT_EQ(0, genl_set_limit("/axt", 3100));
	EXPECT_EQ(-EDQUOT, tdaemon_charge(&self->d, id2, 101, true));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id2, 100, true));
	EXPECT_EQ(1, cg_failcnt("/axt"));

	/* migration: charges stay with the cgroup the client opened in */
	ASSERT_EQ(0, cg_move("/axt/d", pid));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 0, true));
	EXPECT_EQ(2500, cg_usage("/axt/a/b"));
	EXPECT_EQ(-1, cg_usage("/axt/d"));
	/* removal: b is empty of processes now, rmdir works; the counters of
	 * the dying cgroup's ancestors stay until the client goes */
	ASSERT_EQ(0, rmdir(CG "/axt/a/b"));
	EXPECT_EQ(3100, cg_usage("/axt"));
	EXPECT_EQ(3100, cg_usage("/axt/a"));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 100, false));
	EXPECT_EQ(3000, cg_usage("/axt"));

	/* the client dies: its charges go, whatever the daemon does */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_EQ(600, cg_usage("/axt"));
	EXPECT_EQ(600, cg_usage("/axt/a"));
	kill(pid2, SIGKILL);
	waitpid(pid2, NULL, 0);
	/* a limit keeps a node; without usage and limit it is gone */
	EXPECT_EQ(0, cg_usage("/axt"));
	EXPECT_EQ(-1, cg_usage("/axt/a"));
	EXPECT_EQ(-1, cg_usage("/axt/a/c"));
	tdaemon_loop(&self->d, 100);
}

/*
 * memcg's rule for a migration: what the client charged in b stays in b
 * and goes back there; new charges go where its process is now (d), and
 * an uncharge takes from the most recent cgroup first. At most 8 cgroups
 * hold one client's charges at once.
 */
TEST_F(cg, migration)
{
	struct axon_event ev;
	char path[64];
	uint64_t id;
	pid_t pid;
	int i;

	pid = client_in("/axt/a/b");
	ASSERT_GT(pid, 0);
	ASSERT_EQ(1, tdaemon_event(&self->d, &ev, 5000));
	ASSERT_EQ(0, tdaemon_handle(&self->d, &ev));
	id = ev.client_id;
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 1000, true));
	ASSERT_EQ(0, cg_move("/axt/d", pid));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 300, true));
	/* main: 1300 in b, nothing in d */
	EXPECT_EQ(1000, cg_usage("/axt/a/b"));
	EXPECT_EQ(300, cg_usage("/axt/d"));
	EXPECT_EQ(1000, cg_usage("/axt/a"));
	EXPECT_EQ(1300, cg_usage("/axt"));
	/* the limit of where it is now applies */
	ASSERT_EQ(0, genl_set_limit("/axt/d", 400));
	EXPECT_EQ(-EDQUOT, tdaemon_charge(&self->d, id, 101, true));
	ASSERT_EQ(0, genl_set_limit("/axt/d", AXON_LIMIT_NONE));
	/* uncharges: d first, then b */
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 200, false));
	EXPECT_EQ(100, cg_usage("/axt/d"));
	EXPECT_EQ(1000, cg_usage("/axt/a/b"));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 500, false));
	EXPECT_EQ(-1, cg_usage("/axt/d"));
	EXPECT_EQ(600, cg_usage("/axt/a/b"));
	EXPECT_EQ(600, cg_usage("/axt"));

	/* b holds a charge; 7 more cgroups can, the 8th more cannot */
	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), CG "/axt/d/m%d", i);
		ASSERT_EQ(0, mkdir(path, 0755));
		ASSERT_EQ(0, cg_move(path + strlen(CG), pid));
		EXPECT_EQ(i < 7 ? 0 : -ENOSPC, tdaemon_charge(&self->d, id, 1, true));
	}
	/* a cgroup it already holds charges in is fine */
	ASSERT_EQ(0, cg_move("/axt/d/m0", pid));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 1, true));
	EXPECT_EQ(2, cg_usage("/axt/d/m0"));
	EXPECT_EQ(608, cg_usage("/axt"));

	/* the client dies: each cgroup gets its own back */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	EXPECT_EQ(-1, cg_usage("/axt"));
	EXPECT_EQ(-1, cg_usage("/axt/a/b"));
	EXPECT_EQ(-1, cg_usage("/axt/d/m0"));
	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof(path), CG "/axt/d/m%d", i);
		EXPECT_EQ(0, rmdir(path));
	}
	tdaemon_loop(&self->d, 100);
}

/* nr_dying_descendants in @cg's cgroup.stat, -1 if unreadable. */
static int cg_dying(const char *cg)
{
	char path[256], buf[512], *p;

	snprintf(path, sizeof(path), CG "%s/cgroup.stat", cg);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "nr_dying_descendants ");
	return p ? atoi(p + 21) : -1;
}

/*
 * A cgroup removed while a client holds a charge there: as memcg
 * reparents, the charge moves to the nearest live ancestor, whose limits
 * keep applying and to which it is given back; the removed cgroup leaves
 * the table and is no longer pinned (it can be freed). The client opened
 * in d, so only its charge holds b.
 */
TEST_F(cg, rmdir_reparents)
{
	struct axon_event ev;
	uint64_t id, id2, b;
	pid_t pid, pid2;
	char buf[64];
	int i;

	pid = client_in("/axt/d");
	ASSERT_GT(pid, 0);
	ASSERT_EQ(1, tdaemon_event(&self->d, &ev, 5000));
	ASSERT_EQ(0, tdaemon_handle(&self->d, &ev));
	id = ev.client_id;
	ASSERT_EQ(0, cg_move("/axt/a/b", pid));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 1000, true));
	EXPECT_EQ(1000, cg_usage("/axt/a/b"));
	ASSERT_EQ(0, cg_move("/axt/d", pid));
	b = cg_id("/axt/a/b");
	ASSERT_EQ(0, rmdir(CG "/axt/a/b"));

	/* main: b stays in the table with 1000, pinned and dying */
	EXPECT_EQ(-ENOENT, proc_field("cgroups", b, "id", "usage", buf, sizeof(buf)));
	EXPECT_EQ(1000, cg_usage("/axt/a"));
	EXPECT_EQ(1000, cg_usage("/axt"));
	for (i = 0; i < 200 && cg_dying("/axt/a") != 0; i++)
		usleep(10000);
	EXPECT_EQ(0, cg_dying("/axt/a"));

	/* a's limit counts the moved charge */
	ASSERT_EQ(0, genl_set_limit("/axt/a", 1500));
	pid2 = client_in("/axt/a/c");
	ASSERT_EQ(1, tdaemon_event(&self->d, &ev, 5000));
	ASSERT_EQ(0, tdaemon_handle(&self->d, &ev));
	id2 = ev.client_id;
	EXPECT_EQ(-EDQUOT, tdaemon_charge(&self->d, id2, 600, true));
	EXPECT_EQ(0, tdaemon_charge(&self->d, id2, 500, true));
	/* and it is given back to a */
	EXPECT_EQ(0, tdaemon_charge(&self->d, id, 1000, false));
	EXPECT_EQ(500, cg_usage("/axt/a"));
	EXPECT_EQ(500, cg_usage("/axt"));

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	kill(pid2, SIGKILL);
	waitpid(pid2, NULL, 0);
	EXPECT_EQ(0, cg_usage("/axt/a"));
	EXPECT_EQ(-1, cg_usage("/axt"));
	tdaemon_loop(&self->d, 100);
}

/* A limit on a cgroup that is then removed disappears from the table. */
TEST_F(cg, limit_on_removed_cgroup)
{
	uint64_t id = cg_id("/axt/d");
	char buf[64];

	ASSERT_EQ(0, genl_set_limit("/axt/d", 12345));
	EXPECT_EQ(0, proc_field("cgroups", id, "id", "limit", buf, sizeof(buf)));
	EXPECT_STREQ("12345", buf);
	ASSERT_EQ(0, rmdir(CG "/axt/d"));
	EXPECT_EQ(-ENOENT, proc_field("cgroups", id, "id", "limit", buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, genl_set_limit("/axt/d", 1));
}

/* The daemon dies: every charge goes back. */
TEST_F(cg, daemon_death_uncharges)
{
	struct axon_event ev;
	pid_t pid;

	pid = client_in("/axt/a/c");
	ASSERT_EQ(1, tdaemon_event(&self->d, &ev, 5000));
	ASSERT_EQ(0, tdaemon_handle(&self->d, &ev));
	EXPECT_EQ(0, tdaemon_charge(&self->d, ev.client_id, 4096, true));
	EXPECT_EQ(4096, cg_usage("/axt/a/c"));
	tdaemon_close(&self->d);
	EXPECT_EQ(-1, cg_usage("/axt/a/c"));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ASSERT_EQ(0, tdaemon_attach(&self->d));
}

#define V1	"/tmp/axv1"

/* 1 if /dev/kmsg has, from @fd's position, a line containing @what. */
static int kmsg_has(int fd, const char *what)
{
	char rec[1024];
	ssize_t n;

	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		rec[n] = 0;
		if (strstr(rec, what))
			return 1;
	}
	return 0;
}

/*
 * cgroup v2 is required: with the memory controller on a v1 hierarchy
 * SETUP fails with EOPNOTSUPP and says why in the log, instead of charging
 * everything to the v2 root; once memory is back on v2 it works again.
 */
TEST(v1_memory_refused)
{
	pid_t d = fake_daemon_spawn(true);
	struct tclient c;
	int kmsg, i, ret;

	ASSERT_GT(d, 0);
	/* memory must be in use nowhere on v2 to be bound to v1 */
	write_file(CG "/cgroup.subtree_control", "-memory");
	mkdir(V1, 0755);
	if (mount("cgroup", V1, "cgroup", 0, "memory")) {
		fake_daemon_kill(d);
		SKIP(return, "cannot mount a v1 memory hierarchy: %s", strerror(errno));
	}
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ASSERT_GE(kmsg, 0);
	lseek(kmsg, 0, SEEK_END);
	ASSERT_EQ(0, tclient_open(&c));
	/* main: 0, charged to the v2 root */
	EXPECT_EQ(-EOPNOTSUPP, tclient_setup(&c, 4, 4096));
	EXPECT_TRUE(kmsg_has(kmsg, "needs cgroup v2"));
	tclient_close(&c);
	close(kmsg);
	ASSERT_EQ(0, umount(V1));
	rmdir(V1);
	/* the v1 root goes asynchronously, and memory back to v2 with it */
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(0, tclient_open(&c));
		ret = tclient_setup(&c, 4, 4096);
		tclient_close(&c);
		if (ret != -EOPNOTSUPP)
			break;
		usleep(10000);
	}
	EXPECT_EQ(0, ret);
	fake_daemon_kill(d);
}

TEST_HARNESS_MAIN
