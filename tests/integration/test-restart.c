// SPDX-License-Identifier: MIT
/*
 * integration-restart: axond starts again in place (SIGHUP here; a device
 * fault with the cuda backend, main.c axond_request_restart): the same pid
 * execs itself, the listening socket is handed over so a client that
 * connects during the restart waits in its backlog and is served, and the
 * new process counts clients from zero.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"

static uint64_t daemon_u64(const char *key)
{
	struct json *doc = h_stats(&h_daemon);
	char path[64];
	uint64_t v;

	ck_assert_ptr_nonnull(doc);
	snprintf(path, sizeof(path), "daemon.%s", key);
	v = json_u64(json_path(doc, path), ~0ULL);
	json_free(doc);
	return v;
}

START_TEST(test_restart)
{
	pid_t pid = h_daemon.pid;

	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", NULL), 0);
	ck_assert_uint_eq(daemon_u64("clients_total"), 1);
	ck_assert_int_eq(kill(pid, SIGHUP), 0);
	/* At once: this client may reach the old process's socket before
	 * the new one listens; it must be served all the same. */
	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", NULL), 0);
	ck_assert(h_daemon_running(&h_daemon));
	ck_assert_uint_eq(daemon_u64("pid"), (uint64_t)pid);
	ck_assert_uint_eq(daemon_u64("clients_total"), 1);
	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", NULL), 0);
	ck_assert_uint_eq(daemon_u64("clients_total"), 2);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_restart);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-restart", "4G", NULL, add_tests, 120);
}
