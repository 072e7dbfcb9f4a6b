// SPDX-License-Identifier: MIT
/*
 * integration-bigcopy: tests/bin/bigcopy (256 MiB HtoD/DtoH round trip
 * compared byte for byte, DtoD, cuMemsetD8/D16/D32) against a private
 * axond with 2 GiB of sim memory; afterwards the daemon holds nothing and
 * its byte counters saw the traffic. Run again with AXON_PROFILE=1, the
 * shim's profile (libcuda-shim/profile.c) reports at exit the device-to-host
 * copies it waited for and at least the 256 MiB it staged each way.
 * Then 8 threads copy at once through a 64 KiB data area (a second axond
 * with --data-size=64K), which their staged chunks fill.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

START_TEST(test_bigcopy)
{
	struct json *doc;

	ck_assert_int_eq(h_run_bin(H_MS(300000), "bigcopy", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	doc = h_stats(&h_daemon);
	ck_assert(doc != NULL);
	ck_assert_uint_ge(json_u64(json_path(doc, "daemon.clients_total"), 0), 1);
	json_free(doc);
}
END_TEST

START_TEST(test_bigcopy_threads_small_area)
{
	static const char *const extra[] = { "--data-size=64K", NULL };
	struct h_daemon small;

	/* AXON_ADDR now names this one: the test runs in a process of its
	 * own (forked), so the suite's daemon is not affected. */
	ck_assert_int_eq(h_daemon_start(&small, "1G", extra), 0);
	ck_assert_int_eq(h_run_bin(H_MS(120000), "bigcopy", "--threads", "8", "--mib", "4",
				   NULL), 0);
	ck_assert_int_eq(h_daemon_stop(&small, false), 0);
}
END_TEST

START_TEST(test_bigcopy_profile)
{
	char cmd[4200], buf[65536];
	char *argv[] = { "/bin/sh", "-c", cmd, NULL };
	const char *p;
	double to_mib = 0, out_mib = 0;
	size_t got = 0;
	ssize_t n;
	int fd, rc;
	pid_t pid;

	/* The profile goes to stderr: through the pipe with stdout. */
	snprintf(cmd, sizeof(cmd), "AXON_PROFILE=1 exec '%s/tests/bin/bigcopy' 2>&1",
		 getenv("AXON_BUILD"));
	pid = h_spawn(argv, &fd);
	ck_assert_int_gt(pid, 0);
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = 0;
	close(fd);
	rc = h_wait_child(pid, H_MS(300000), "bigcopy with AXON_PROFILE=1");
	ck_assert_msg(rc == 0, "bigcopy: exit %d; output:\n%s", rc, buf);
	ck_assert_msg(strstr(buf, "axon: profile: pid"), "no profile in:\n%s", buf);
	p = strstr(buf, "axon: profile:   MEMCPY_DTOH");
	ck_assert_msg(p != NULL, "no MEMCPY_DTOH waits in:\n%s", buf);
	p = strstr(buf, "staging copies: to the data area ");
	ck_assert_msg(p && sscanf(p, "staging copies: to the data area %lf MiB in %*f ms, out of it %lf MiB",
				  &to_mib, &out_mib) == 2, "no staging line in:\n%s", buf);
	ck_assert_msg(to_mib >= 256 && out_mib >= 256, "staged %.1f / %.1f MiB", to_mib, out_mib);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_bigcopy);
	tcase_add_test(tc, test_bigcopy_profile);
	tcase_add_test(tc, test_bigcopy_threads_small_area);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-bigcopy", "2G", NULL, add_tests, 300);
}
