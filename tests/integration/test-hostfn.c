// SPDX-License-Identifier: MIT
/*
 * integration-hostfn: tests/bin/hostfn (cuLaunchHostFunc and
 * cuStreamAddCallback: order against copies and kernels, queries and
 * synchronisation, many callbacks, several streams, status, a destroyed
 * stream, fork) against a private axond; afterwards the daemon holds
 * nothing. Run twice at once as well, so two clients' held streams
 * interleave in the daemon.
 */
#include <check.h>

#include "harness.h"

START_TEST(test_hostfn)
{
	ck_assert_int_eq(h_run_bin(H_MS(120000), "hostfn", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_hostfn_twice_at_once)
{
	pid_t a = h_spawn_bin(NULL, "hostfn", NULL);
	pid_t b = h_spawn_bin(NULL, "hostfn", NULL);

	ck_assert(a > 0 && b > 0);
	ck_assert_int_eq(h_wait_child(a, H_MS(120000), "hostfn #1"), 0);
	ck_assert_int_eq(h_wait_child(b, H_MS(120000), "hostfn #2"), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_hostfn);
	tcase_add_test(tc, test_hostfn_twice_at_once);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-hostfn", "4G", NULL, add_tests, 300);
}
