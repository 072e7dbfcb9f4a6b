// SPDX-License-Identifier: MIT
/*
 * integration-concurrent: 32 vecadd clients at once against one axond.
 *
 *   run_32      32 clients of different sizes (1 .. ~500k elements; cubin,
 *               fatbin and PTX; own and primary contexts) started together;
 *               every one must pass
 *   hold_32     32 clients that all hold their buffers at the same time:
 *               the stats list 32 clients, each under its own pid and id,
 *               each with at least its own bytes mapped; then all finish
 * After each: no client left, nothing used or reserved.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "harness.h"

#define NCLIENTS	32
#define RUN_MS		H_MS(240000)

static unsigned long size_of(int i)
{
	/* 1, then a spread of odd sizes up to ~500k. */
	return i == 0 ? 1 : 1 + (unsigned long)i * 15887UL + (unsigned long)(i % 7) * 31UL;
}

static const char *image_of(int i)
{
	static const char *const images[] = { "cubin", "fatbin", "ptx" };

	return images[i % 3];
}

START_TEST(test_run_32)
{
	pid_t pid[NCLIENTS];
	char size[NCLIENTS][32];
	int i, failed = 0;

	for (i = 0; i < NCLIENTS; i++) {
		snprintf(size[i], sizeof(size[i]), "%lu", size_of(i));
		pid[i] = h_spawn_bin(NULL, "vecadd", "--quiet", "--size", size[i],
				     "--image", image_of(i), i % 4 == 3 ? "--primary" : NULL,
				     NULL);
		ck_assert_msg(pid[i] > 0, "spawning client %d", i);
	}
	for (i = 0; i < NCLIENTS; i++) {
		char what[64];
		int rc;

		snprintf(what, sizeof(what), "vecadd #%d (size %s, %s)", i, size[i],
			 image_of(i));
		rc = h_wait_child(pid[i], RUN_MS, what);
		if (rc != 0) {
			h_note("%s: exit %d", what, rc);
			failed++;
		}
	}
	ck_assert_msg(!failed, "%d of %d concurrent clients failed", failed, NCLIENTS);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

START_TEST(test_hold_32)
{
	pid_t pid[NCLIENTS];
	int fd[NCLIENTS];
	char size[NCLIENTS][32];
	struct json *doc;
	int i;

	for (i = 0; i < NCLIENTS; i++) {
		snprintf(size[i], sizeof(size[i]), "%lu", size_of(i));
		pid[i] = h_spawn_bin(&fd[i], "vecadd", "--quiet", "--size", size[i],
				     "--hold", "300", NULL);
		ck_assert_msg(pid[i] > 0, "spawning client %d", i);
	}
	for (i = 0; i < NCLIENTS; i++)
		ck_assert_msg(h_wait_line(fd[i], "holding", RUN_MS) == 0,
			      "client %d (pid %d) never held", i, (int)pid[i]);

	doc = h_stats(&h_daemon);
	ck_assert(doc != NULL);
	ck_assert_int_eq(h_stats_nclients(doc), NCLIENTS);
	for (i = 0; i < NCLIENTS; i++) {
		const struct json *c = h_stats_client(doc, pid[i]);
		uint64_t want = 3 * size_of(i) * sizeof(float);
		int k;

		ck_assert_msg(c != NULL, "client %d (pid %d) not listed", i, (int)pid[i]);
		ck_assert_msg(h_client_u64(c, "bytes_mapped") >= want,
			      "client %d: bytes_mapped %llu < %llu", i,
			      (unsigned long long)h_client_u64(c, "bytes_mapped"),
			      (unsigned long long)want);
		ck_assert_uint_eq(h_client_u64(c, "handles.contexts"), 1);
		/* Ids are unique. */
		for (k = 0; k < i; k++) {
			const struct json *o = h_stats_client(doc, pid[k]);

			ck_assert_msg(h_client_u64(o, "id") != h_client_u64(c, "id"),
				      "clients %d and %d share id %llu", k, i,
				      (unsigned long long)h_client_u64(c, "id"));
		}
	}
	json_free(doc);

	for (i = 0; i < NCLIENTS; i++)
		kill(pid[i], SIGUSR1);
	for (i = 0; i < NCLIENTS; i++) {
		h_drain(fd[i], RUN_MS);
		close(fd[i]);
		ck_assert_msg(h_wait_child(pid[i], RUN_MS, "vecadd --hold") == 0,
			      "client %d failed", i);
	}
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_run_32);
	tcase_add_test(tc, test_hold_32);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	h_require_file(h_kernel_path("fatbin"));
	h_require_file(h_kernel_path("ptx"));
	return h_check_main("integration-concurrent", "8G", NULL, add_tests, 240);
}
