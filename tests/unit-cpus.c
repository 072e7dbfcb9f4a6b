// SPDX-License-Identifier: MIT
/*
 * unit-cpus: libcuda-shim/cpus.c, what the shim reads about the machine's
 * CPUs to decide whether its waits may spin: a cgroup v2 CPU quota on the
 * process's cgroup or one above it (fixture trees in a temporary
 * directory), and /proc/loadavg's running count.
 */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpus.h"

static char root[PATH_MAX];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void dir(const char *rel)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

/* cpus_cgroup_limit with the fixture's cgroup file and root. */
static unsigned int limit(void)
{
	char cg[PATH_MAX * 2], fs[PATH_MAX * 2];

	snprintf(cg, sizeof(cg), "%s/cgroup", root);
	snprintf(fs, sizeof(fs), "%s/fs", root);
	return cpus_cgroup_limit(cg, fs);
}

static void setup(void)
{
	snprintf(root, sizeof(root), "%s/unit-cpus.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(root));
	dir("fs");
	dir("fs/a");
	dir("fs/a/b");
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_no_quota)
{
	put("cgroup", "1:cpu:/\n0::/a/b\n");
	ck_assert_uint_eq(limit(), 0);			/* no cpu.max anywhere */
	put("fs/a/b/cpu.max", "max 100000\n");
	ck_assert_uint_eq(limit(), 0);			/* "max": no limit */
}
END_TEST

START_TEST(test_quota_rounds_up)
{
	put("cgroup", "0::/a/b\n");
	put("fs/a/b/cpu.max", "250000 100000\n");
	ck_assert_uint_eq(limit(), 3);
	put("fs/a/b/cpu.max", "50000 100000\n");
	ck_assert_uint_eq(limit(), 1);
	put("fs/a/b/cpu.max", "200000 100000\n");
	ck_assert_uint_eq(limit(), 2);
}
END_TEST

START_TEST(test_tightest_ancestor)
{
	put("cgroup", "0::/a/b\n");
	put("fs/a/b/cpu.max", "max 100000\n");
	put("fs/a/cpu.max", "400000 100000\n");
	ck_assert_uint_eq(limit(), 4);			/* the parent limits */
	put("fs/a/b/cpu.max", "100000 100000\n");
	ck_assert_uint_eq(limit(), 1);			/* the child is tighter */
}
END_TEST

START_TEST(test_bad_files)
{
	put("cgroup", "0::/a/b\n");
	put("fs/a/b/cpu.max", "garbage\n");
	ck_assert_uint_eq(limit(), 0);
	put("fs/a/b/cpu.max", "100000 0\n");		/* no period */
	ck_assert_uint_eq(limit(), 0);
	put("cgroup", "4:memory:/x\n");			/* no cgroup v2 line */
	ck_assert_uint_eq(limit(), 0);
	put("cgroup", "0::/\n");			/* the root: no cpu.max */
	ck_assert_uint_eq(limit(), 0);
	ck_assert_uint_eq(cpus_cgroup_limit("/nonexistent/cgroup", "/nonexistent"), 0);
}
END_TEST

START_TEST(test_loadavg)
{
	unsigned long n = 99;

	ck_assert(cpus_loadavg_running("0.50 0.40 0.30 3/812 4242\n", &n));
	ck_assert_uint_eq(n, 3);
	ck_assert(cpus_loadavg_running("12.00 8.00 4.00 17/2048 1\n", &n));
	ck_assert_uint_eq(n, 17);
	ck_assert(!cpus_loadavg_running("", &n));
	ck_assert(!cpus_loadavg_running("0.50 0.40 0.30", &n));
	ck_assert(!cpus_loadavg_running("0.50 0.40 0.30 x/812 1", &n));
	ck_assert(!cpus_loadavg_running("0.50 0.40 0.30 3 812", &n));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("unit-cpus");
	TCase *tc = tcase_create("cpus");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_no_quota);
	tcase_add_test(tc, test_quota_rounds_up);
	tcase_add_test(tc, test_tightest_ancestor);
	tcase_add_test(tc, test_bad_files);
	tcase_add_test(tc, test_loadavg);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
