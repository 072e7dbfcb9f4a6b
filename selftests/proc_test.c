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
#include <sys/stat.h>

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

TEST(cgroups)
{
	check_table(_metadata, "cgroups",
		    "cgroup id kind usage limit peak failcnt");
}

TEST_HARNESS_MAIN
