// SPDX-License-Identifier: MIT
/*
 * integration-bigimage: tests/bin/bigimage (module images larger than half
 * the data area: refused with a clean CUresult on every loading path, and
 * the client carries on) against a private axond with a 1 MiB data area;
 * afterwards the daemon holds nothing.
 */
#include <check.h>

#include "harness.h"

START_TEST(test_bigimage)
{
	ck_assert_int_eq(h_run_bin(H_MS(60000), "bigimage", "1048576", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_bigimage);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = { "--data-size=1M", NULL };

	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-bigimage", "1G", extra, add_tests, 120);
}
