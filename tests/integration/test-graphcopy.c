// SPDX-License-Identifier: MIT
/*
 * integration-graphcopy: tests/bin/graphcopy (copies between the device
 * and pageable, registered or pinned host memory, and host functions, in
 * CUDA graphs: each replay reads and writes the host memory of its own
 * time; lifetimes of the staging memory; host memcpy nodes of a built
 * graph) against a private axond; afterwards the daemon holds nothing.
 * Run twice at once as well: two clients' graphs cut by host nodes, their
 * parts and host functions interleaved in the daemon.
 */
#include <check.h>

#include "harness.h"

START_TEST(test_graphcopy)
{
	ck_assert_int_eq(h_run_bin(H_MS(120000), "graphcopy", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_graphcopy_twice_at_once)
{
	pid_t a = h_spawn_bin(NULL, "graphcopy", NULL);
	pid_t b = h_spawn_bin(NULL, "graphcopy", NULL);

	ck_assert(a > 0 && b > 0);
	ck_assert_int_eq(h_wait_child(a, H_MS(120000), "graphcopy #1"), 0);
	ck_assert_int_eq(h_wait_child(b, H_MS(120000), "graphcopy #2"), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_graphcopy);
	tcase_add_test(tc, test_graphcopy_twice_at_once);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-graphcopy", "4G", NULL, add_tests, 300);
}
