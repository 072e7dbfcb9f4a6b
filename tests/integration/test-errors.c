// SPDX-License-Identifier: MIT
/*
 * integration-errors: tests/bin/errors (invalid pointers, lengths, handles,
 * images and launches give the right CUresult; a kernel outside the sim's
 * built-in set fails with CUDA_ERROR_NOT_SUPPORTED at launch or at the next
 * synchronisation; device faults are sticky; cuGetErrorName/String)
 * against a private axond.
 * Afterwards the daemon holds nothing, logged the unsupported kernel, and
 * still serves a good client.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static bool log_mentions(const char *needle)
{
	char line[2048];
	bool found = false;
	FILE *f = fopen(h_daemon.log, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

START_TEST(test_errors)
{
	ck_assert_int_eq(h_run_bin(H_MS(120000), "errors", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	ck_assert_msg(log_mentions("g_touch"),
		      "axond did not log the launch of g_touch (not in its built-in set)");
	/* Device faults are sticky: one process each. */
	ck_assert_int_eq(h_run_bin(H_MS(60000), "errors", "--sticky", "past-end", NULL), 0);
	ck_assert_int_eq(h_run_bin(H_MS(60000), "errors", "--sticky", "freed", NULL), 0);
	ck_assert_int_eq(h_run_bin(H_MS(60000), "errors", "--sticky", "misaligned", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	/* The daemon is fine afterwards. */
	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", "--quiet", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_errors);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-errors", "4G", NULL, add_tests, 240);
}
