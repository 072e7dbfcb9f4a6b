// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/axon/{stats,clients,cgroups}: one header line naming the fields,
 * then rows with exactly as many whitespace-separated fields; strings
 * escaped; the values match the client.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

static int count_fields(char *line)
{
	int n = 0;
	char *s = NULL, *t;

	for (t = strtok_r(line, " ", &s); t; t = strtok_r(NULL, " ", &s))
		n++;
	return n;
}

/* Every row has the header's number of fields; returns the rows. */
static int check_table(struct __test_metadata *_metadata, const char *name,
		       const char *header)
{
	char path[64], *buf, *line, *save = NULL, copy[1024];
	int rows = 0, nf;

	buf = malloc(1 << 16);
	snprintf(path, sizeof(path), "/proc/axon/%s", name);
	EXPECT_GT(read_file(path, buf, 1 << 16), 0);
	line = strtok_r(buf, "\n", &save);
	EXPECT_NE(NULL, line);
	if (!line)
		return 0;
	EXPECT_STREQ(header, line);
	snprintf(copy, sizeof(copy), "%s", line);
	nf = count_fields(copy);
	while ((line = strtok_r(NULL, "\n", &save))) {
		snprintf(copy, sizeof(copy), "%s", line);
		EXPECT_EQ(nf, count_fields(copy));
		rows++;
	}
	free(buf);
	return rows;
}

FIXTURE(p) {
	pid_t daemon;
	struct tclient c;
};

FIXTURE_SETUP(p)
{
	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	prctl(PR_SET_NAME, "proc test\\x");
	ASSERT_EQ(0, tclient_open(&self->c));
	ASSERT_EQ(0, tclient_setup(&self->c, 8, 8192));
}

FIXTURE_TEARDOWN(p)
{
	tclient_close(&self->c);
	fake_daemon_kill(self->daemon);
}

TEST_F(p, stats)
{
	char buf[64];

	EXPECT_EQ(15, check_table(_metadata, "stats", "name value"));
	EXPECT_EQ(0, proc_field("stats", 0, "name", "value", buf, sizeof(buf)) ? 0 : 0);
	/* "format 1" is the first row */
	{
		char all[4096];

		ASSERT_GT(read_file("/proc/axon/stats", all, sizeof(all)), 0);
		EXPECT_NE(NULL, strstr(all, "\nformat 1\n"));
		EXPECT_NE(NULL, strstr(all, "\ndaemon_attached 1\n"));
		snprintf(buf, sizeof(buf), "\ndaemon_pid %d\n", self->daemon);
		EXPECT_NE(NULL, strstr(all, buf));
	}
}

TEST_F(p, clients)
{
	uint64_t id = self->c.p.client_id;
	char buf[256], want[64];

	EXPECT_GE(check_table(_metadata, "clients",
			      "id pid uid gid cgroup comm charged submits completions depth state enters"), 1);
	ASSERT_EQ(0, proc_field("clients", id, "id", "pid", buf, sizeof(buf)));
	snprintf(want, sizeof(want), "%d", getpid());
	EXPECT_STREQ(want, buf);
	ASSERT_EQ(0, proc_field("clients", id, "id", "uid", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	ASSERT_EQ(0, proc_field("clients", id, "id", "comm", buf, sizeof(buf)));
	EXPECT_STREQ("proc\\040test\\134x", buf);
	ASSERT_EQ(0, proc_field("clients", id, "id", "cgroup", buf, sizeof(buf)));
	EXPECT_STREQ("/", buf);
	ASSERT_EQ(0, proc_field("clients", id, "id", "state", buf, sizeof(buf)));
	EXPECT_STREQ("active", buf);
	/* submits and completions follow the rings */
	ASSERT_EQ(0, tclient_queue(&self->c, 1, 1, 0, 0));
	ASSERT_EQ(0, tclient_queue(&self->c, 2, 2, 0, 0));
	ASSERT_EQ(0, tclient_submit(&self->c, 2));
	ASSERT_EQ(2, tclient_enter(&self->c, 0, 2, AXON_ENTER_GETEVENTS,
				   now_ns() + 5 * NSEC_PER_SEC));
	ASSERT_EQ(0, proc_field("clients", id, "id", "submits", buf, sizeof(buf)));
	EXPECT_STREQ("2", buf);
	ASSERT_EQ(0, proc_field("clients", id, "id", "completions", buf, sizeof(buf)));
	EXPECT_STREQ("2", buf);
	ASSERT_EQ(0, proc_field("clients", id, "id", "depth", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	ASSERT_EQ(0, proc_field("clients", id, "id", "enters", buf, sizeof(buf)));
	EXPECT_LE(2, atoi(buf));
}

/* Many clients: the seq_file iteration returns each exactly once. */
TEST_F(p, many_clients)
{
	struct tclient c[25];
	char buf[64];
	int i;

	for (i = 0; i < 25; i++) {
		ASSERT_EQ(0, tclient_open(&c[i]));
		ASSERT_EQ(0, tclient_setup(&c[i], 4, 4096));
	}
	EXPECT_GE(check_table(_metadata, "clients",
			      "id pid uid gid cgroup comm charged submits completions depth state enters"), 26);
	for (i = 0; i < 25; i++)
		EXPECT_EQ(0, proc_field("clients", c[i].p.client_id, "id",
					"state", buf, sizeof(buf)));
	for (i = 0; i < 25; i++)
		tclient_close(&c[i]);
}

static int no_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	return syscall(SYS_capset, &h, d);
}

/* In a child: 0 if /proc/axon/clients has no row for @id, 1 if it has. */
static int row_visible(uint64_t id)
{
	char buf[64];

	return proc_field("clients", id, "id", "state", buf, sizeof(buf)) == 0;
}

/*
 * Another user sees neither root's client in /proc/axon/clients, only its
 * own.
 */
TEST_F(p, other_user_hidden)
{
	uint64_t id = self->c.p.client_id;
	pid_t pid;
	int st;

	ASSERT_TRUE(row_visible(id));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct tclient c;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		if (row_visible(id))
			_exit(10);
		if (tclient_open(&c) || tclient_setup(&c, 4, 4096))
			_exit(11);
		if (!row_visible(c.p.client_id))
			_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/* 1 if the /proc/axon/clients contents read from @fd have a row for @id. */
static int fd_has_row(int fd, uint64_t id)
{
	static char buf[1 << 16];
	char want[32];
	size_t off = 0;
	ssize_t n;

	while (off + 1 < sizeof(buf) &&
	       (n = read(fd, buf + off, sizeof(buf) - 1 - off)) > 0)
		off += n;
	buf[off] = 0;
	snprintf(want, sizeof(want), "\n%llu ", (unsigned long long)id);
	return strstr(buf, want) != NULL;
}

/*
 * What a reader sees is judged by the credentials the file was opened
 * with, not the reader's: opened as nobody and read after becoming root
 * again (setuid), root's client stays hidden; opened by root and read by
 * nobody, it shows.
 */
TEST_F(p, opener_credentials)
{
	uint64_t id = self->c.p.client_id;
	pid_t pid;
	int st, fd;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* real and effective nobody, saved root */
		if (setresuid(65534, 65534, 0))
			_exit(100);
		fd = open("/proc/axon/clients", O_RDONLY);
		if (fd < 0)
			_exit(101);
		if (setresuid(0, 0, 0))
			_exit(102);
		_exit(fd_has_row(fd, id) ? 10 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));

	fd = open("/proc/axon/clients", O_RDONLY);
	ASSERT_GE(fd, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(100);
		_exit(fd_has_row(fd, id) ? 0 : 11);
	}
	close(fd);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/*
 * Same uid, no capabilities, but another pid namespace (the client's pid
 * is not there) or a cgroup namespace the client's cgroup is outside of:
 * hidden as well.
 */
TEST_F(p, other_namespace_hidden)
{
	uint64_t id = self->c.p.client_id;
	pid_t pid, kid;
	int st;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWPID))
			_exit(100);
		kid = fork();
		if (kid == 0)
			_exit(no_caps() ? 101 : row_visible(id) ? 10 : 0);
		if (kid < 0 || waitpid(kid, &st, 0) != kid || !WIFEXITED(st))
			_exit(102);
		_exit(WEXITSTATUS(st));
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));

	rmdir("/sys/fs/cgroup/axvis");
	ASSERT_EQ(0, mkdir("/sys/fs/cgroup/axvis", 0755));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		char v[32];

		snprintf(v, sizeof(v), "%d", getpid());
		if (write_file("/sys/fs/cgroup/axvis/cgroup.procs", v))
			_exit(100);
		if (unshare(CLONE_NEWCGROUP) || no_caps())
			_exit(101);
		_exit(row_visible(id) ? 10 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	rmdir("/sys/fs/cgroup/axvis");
}

TEST(cgroups)
{
	check_table(_metadata, "cgroups",
		    "cgroup id kind usage limit peak failcnt");
}

TEST_HARNESS_MAIN
