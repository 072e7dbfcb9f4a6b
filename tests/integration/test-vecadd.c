// SPDX-License-Identifier: MIT
/*
 * integration-vecadd: tests/bin/vecadd end to end against a private axond.
 *
 *   cubin / fatbin / ptx   vecadd with each image kind and cuCtxCreate
 *   primary                all three images in the primary context
 *   hold_work              while vecadd holds its buffers, module and
 *                          context: the stats list it (pid, comm) with its
 *                          memory and handles; the library it runs on is
 *                          our shim ($AXON_BUILD/lib/libcuda.so.1)
 *   hold_end               after its clean-up but still connected: the
 *                          stats show nothing held
 * After each: no client, no memory used or reserved in the daemon.
 */
#include <check.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define RUN_MS	H_MS(60000)
#define IDLE_MS	H_MS(5000)

static void run_ok(const char *image, const char *extra)
{
	int rc = h_run_bin(RUN_MS, "vecadd", "--image", image, "--size", "100003",
			   extra, NULL);

	ck_assert_msg(rc == 0, "vecadd --image %s %s: exit %d", image,
		      extra ? extra : "", rc);
	ck_assert_msg(h_wait_idle(&h_daemon, IDLE_MS) == 0,
		      "the daemon still holds something after vecadd exited");
}

START_TEST(test_cubin)
{
	run_ok("cubin", NULL);
}
END_TEST

START_TEST(test_fatbin)
{
	run_ok("fatbin", NULL);
}
END_TEST

START_TEST(test_ptx)
{
	run_ok("ptx", NULL);
}
END_TEST

START_TEST(test_primary)
{
	run_ok("all", "--primary");
}
END_TEST

/* Reads (and echoes) vecadd's output up to its "holding" line. */
static void wait_holding(int fd)
{
	ck_assert_msg(h_wait_line(fd, "holding", RUN_MS) == 0, "vecadd never held");
}

/* The child maps our libcuda.so.1 and no other libcuda. */
static void check_maps(pid_t pid)
{
	char path[64], line[PATH_MAX + 256], want[PATH_MAX];
	bool ours = false, other = false;
	FILE *f;

	ck_assert(realpath(h_path("lib/libcuda.so.1"), want) != NULL);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (!p || !strstr(p, "libcuda"))
			continue;
		p[strcspn(p, "\n")] = 0;
		if (!strcmp(p, want)) {
			ours = true;
		} else {
			other = true;
			h_note("vecadd also maps %s", p);
		}
	}
	fclose(f);
	ck_assert_msg(ours, "vecadd does not map %s", want);
	ck_assert_msg(!other, "vecadd maps a libcuda other than ours");
}

START_TEST(test_hold_work)
{
	const uint64_t n = 200000, bytes = 3 * n * sizeof(float);
	const struct json *c;
	struct json *doc;
	int fd = -1, rc;
	pid_t pid;

	pid = h_spawn_bin(&fd, "vecadd", "--size", "200000", "--hold", "120", NULL);
	ck_assert(pid > 0);
	wait_holding(fd);
	check_maps(pid);

	doc = h_stats(&h_daemon);
	ck_assert(doc != NULL);
	c = h_stats_client(doc, pid);
	if (!c)
		h_stats_print(&h_daemon);
	ck_assert_msg(c != NULL, "client pid %d not in the stats", (int)pid);
	ck_assert_str_eq(json_str(json_get(c, "comm"), "?"), "vecadd");
	ck_assert_int_eq(h_stats_nclients(doc), 1);
	ck_assert_msg(h_client_u64(c, "uid") == (uint64_t)getuid(), "uid");
	ck_assert_msg(h_client_u64(c, "bytes_mapped") >= bytes &&
		      h_client_u64(c, "bytes_mapped") != UINT64_MAX,
		      "bytes_mapped %llu < %llu",
		      (unsigned long long)h_client_u64(c, "bytes_mapped"),
		      (unsigned long long)bytes);
	/* 3 cuMemAlloc (a shim may pool them) + the module's 9 globals
	 * (tests/sim-kernels/kernels.cu: 5 declared, 4 strings nvcc made for
	 * print_hello and assert_nonzero), which the daemon maps for it. */
	ck_assert_msg(h_client_u64(c, "allocations") >= 1 &&
		      h_client_u64(c, "allocations") <= 3 + 9,
		      "allocations %llu (3 cuMemAlloc, 9 module globals)",
		      (unsigned long long)h_client_u64(c, "allocations"));
	ck_assert_uint_eq(h_client_u64(c, "handles.contexts"), 1);
	ck_assert_uint_eq(h_client_u64(c, "handles.modules"), 1);
	ck_assert_uint_ge(h_client_u64(c, "handles.functions"), 1);
	ck_assert_uint_ge(h_client_u64(c, "handles.streams"), 1);
	ck_assert_uint_eq(h_client_u64(c, "handles.events"), 0);
	ck_assert_uint_ge(h_client_u64(c, "ops.sync"), 1);
	ck_assert_uint_ge(h_client_u64(c, "ops.by_op.LAUNCH"), 1);
	ck_assert_uint_ge(h_client_u64(c, "bytes_htod"), 2 * n * sizeof(float));
	ck_assert_uint_ge(h_client_u64(c, "bytes_dtoh"), n * sizeof(float));
	ck_assert_uint_eq(h_client_u64(c, "errors"), 0);
	ck_assert_uint_ge(json_u64(json_path(doc, "daemon.mem_used"), 0), bytes);
	json_free(doc);

	kill(pid, SIGUSR1);
	h_drain(fd, RUN_MS);
	close(fd);
	rc = h_wait_child(pid, RUN_MS, "vecadd --hold");
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(h_wait_client_gone(&h_daemon, pid, IDLE_MS), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, IDLE_MS), 0);
}
END_TEST

/*
 * Everything freed; what stays charged is the device runtime's reserve in
 * its context (kernels.cu calls printf), which the driver keeps until the
 * context goes, and nothing else (local_mem is part of bytes_mapped).
 */
static bool pred_freed(const struct json *doc, void *arg)
{
	const struct json *c = h_stats_client(doc, *(pid_t *)arg);
	static const char *const zero[] = {
		"allocations", "handles.contexts", "handles.streams",
		"handles.events", "handles.modules", "handles.functions", NULL
	};
	int i;

	if (!c)
		return false;
	if (h_client_u64(c, "bytes_mapped") != h_client_u64(c, "local_mem"))
		return false;
	for (i = 0; zero[i]; i++)
		if (h_client_u64(c, zero[i]) != 0)
			return false;
	return true;
}

START_TEST(test_hold_end)
{
	int fd = -1, rc;
	pid_t pid;

	pid = h_spawn_bin(&fd, "vecadd", "--image", "all", "--hold", "120",
			  "--hold-at", "end", NULL);
	ck_assert(pid > 0);
	wait_holding(fd);
	/* Frees may still be on their way through the queue: bounded wait. */
	ck_assert_msg(h_wait_stats(&h_daemon, pred_freed, &pid, IDLE_MS,
				   "vecadd's memory and handles to be freed while it "
				   "is still connected") == 0,
		      "the shim's frees did not reach the daemon");
	kill(pid, SIGUSR1);
	h_drain(fd, RUN_MS);
	close(fd);
	rc = h_wait_child(pid, RUN_MS, "vecadd --hold-at end");
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, IDLE_MS), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_cubin);
	tcase_add_test(tc, test_fatbin);
	tcase_add_test(tc, test_ptx);
	tcase_add_test(tc, test_primary);
	tcase_add_test(tc, test_hold_work);
	tcase_add_test(tc, test_hold_end);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	h_require_file(h_kernel_path("fatbin"));
	h_require_file(h_kernel_path("ptx"));
	return h_check_main("integration-vecadd", "4G", NULL, add_tests, 180);
}
