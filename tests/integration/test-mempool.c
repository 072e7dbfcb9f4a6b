// SPDX-License-Identifier: MIT
/*
 * integration-mempool: tests/bin/mempool (cuMemAllocAsync / cuMemFreeAsync
 * order and reuse, pool attributes, release threshold, trim, created pools,
 * errors) against a private axond; afterwards the daemon holds nothing.
 * Twice at once as well: pools are per process, the daemon sees minted
 * memory of two clients.
 */
#include <check.h>

#include "harness.h"

START_TEST(test_mempool)
{
	ck_assert_int_eq(h_run_bin(H_MS(120000), "mempool", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_mempool_twice_at_once)
{
	pid_t a = h_spawn_bin(NULL, "mempool", "shared", NULL);
	pid_t b = h_spawn_bin(NULL, "mempool", "shared", NULL);

	ck_assert(a > 0 && b > 0);
	ck_assert_int_eq(h_wait_child(a, H_MS(120000), "mempool #1"), 0);
	ck_assert_int_eq(h_wait_child(b, H_MS(120000), "mempool #2"), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_mempool);
	tcase_add_test(tc, test_mempool_twice_at_once);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-mempool", "4G", NULL, add_tests, 300);
}
