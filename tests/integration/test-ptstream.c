// SPDX-License-Identifier: MIT
/*
 * integration-ptstream: tests/bin/ptstream (per-thread default streams:
 * one per thread, not held behind each other, capturable, gone with their
 * thread) against a private axond; afterwards the daemon holds nothing.
 */
#include <check.h>

#include "harness.h"

START_TEST(test_ptstream)
{
	ck_assert_int_eq(h_run_bin(H_MS(120000), "ptstream", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_ptstream);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-ptstream", "4G", NULL, add_tests, 300);
}
