// SPDX-License-Identifier: MIT
/*
 * integration-copy2d: 2D and 3D copies, peer copies and 2D memsets through
 * the shim, against a private axond (sim backend).
 *
 *   transcript   tests/gpu/drv-copy2d (built as tests/bin/drv-copy2d): every
 *                variant checked byte for byte against a host reference
 *                (tests/gpu/drv-copy2d.c's top); its stdout must be exactly
 *                the transcript below, which is also what it prints natively
 *                on a GPU (tests/gpu/gpucheck.sh compares the two there).
 *   one_request  a 1000-row rectangle each way (pageable host to device,
 *                device to device, device to pageable host) crosses as one
 *                MEMCPY_2D each, not one copy per row: the client's op
 *                counts, read while it is connected, show 3 MEMCPY_2D and no
 *                1D copy.
 */
#include <check.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *const transcript =
	"2D memsets, 8/16/32-bit, sync, async, per-thread: OK\n"
	"2D 37 rows: host to device, device to device, device to host, host to host, "
	"pageable and pinned, sync/async/unaligned/ptds/ptsz: OK\n"
	"2D one row: host to device, device to device, device to host, host to host, "
	"pageable and pinned, sync/async/unaligned/ptds/ptsz: OK\n"
	"2D one column: host to device, device to device, device to host, host to host, "
	"pageable and pinned, sync/async/unaligned/ptds/ptsz: OK\n"
	"2D past the staging chunks: host to device, device to device, device to host, "
	"host to host, pageable and pinned, sync/async/unaligned/ptds/ptsz: OK\n"
	"zero width, zero height: CUDA_SUCCESS, nothing copied\n"
	"source pitch < width: CUDA_ERROR_INVALID_VALUE; destination pitch < width (async): "
	"CUDA_ERROR_INVALID_VALUE\n"
	"3D pageable: host to device, device to device, device to host OK; srcLOD 1: "
	"CUDA_SUCCESS\n"
	"3D pinned: host to device, device to device, device to host OK; srcLOD 1: "
	"CUDA_SUCCESS\n"
	"async memset, upload, device copy, download on one stream: OK\n"
	"capture of 2D copies and a 2D memset: at least 5 nodes, 2 replays OK\n"
	"cuMemcpyPeer, cuMemcpyPeerAsync: OK; a NULL context: accepted, copied\n"
	"done\n";

/* Reads fd to EOF (bounded) into buf; returns the length or -1. */
static ssize_t read_all(int fd, char *buf, size_t cap, int timeout_ms)
{
	uint64_t end = h_now_ms() + (uint64_t)timeout_ms;
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (h_now_ms() > end || len + 1 >= cap)
			return -1;
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	return (ssize_t)len;
}

START_TEST(test_transcript)
{
	static char out[16384];
	char *argv[] = { (char *)h_bin("drv-copy2d"), NULL };
	int fd = -1, rc;
	pid_t pid = h_spawn(argv, &fd);
	ssize_t n;

	ck_assert(pid > 0);
	n = read_all(fd, out, sizeof(out), H_MS(240000));
	close(fd);
	rc = h_wait_child(pid, H_MS(10000), "drv-copy2d");
	if (n < 0 || rc != 0 || strcmp(out, transcript)) {
		printf("drv-copy2d exited %d; its stdout:\n%s\nexpected:\n%s", rc,
		       n < 0 ? "(unreadable)" : out, transcript);
		ck_abort_msg("drv-copy2d's transcript differs");
	}
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_one_request)
{
	const struct json *c;
	struct json *doc;
	int fd = -1, rc;
	pid_t pid = h_spawn_bin(&fd, "drv-copy2d", "--hold", NULL);

	ck_assert(pid > 0);
	ck_assert_int_eq(h_wait_line(fd, "held", H_MS(60000)), 0);
	doc = h_stats(&h_daemon);
	ck_assert(doc != NULL);
	c = h_stats_client(doc, pid);
	ck_assert(c != NULL);
	ck_assert_uint_eq(h_client_u64(c, "ops.by_op.MEMCPY_2D"), 3);
	ck_assert_uint_eq(json_u64(json_path(c, "ops.by_op.MEMCPY_HTOD"), 0), 0);
	ck_assert_uint_eq(json_u64(json_path(c, "ops.by_op.MEMCPY_DTOH"), 0), 0);
	ck_assert_uint_eq(json_u64(json_path(c, "ops.by_op.MEMCPY_DTOD"), 0), 0);
	ck_assert_uint_ge(h_client_u64(c, "bytes_htod"), 300000);
	ck_assert_uint_ge(h_client_u64(c, "bytes_dtoh"), 300000);
	json_free(doc);
	kill(pid, SIGUSR1);
	h_drain(fd, H_MS(10000));
	close(fd);
	rc = h_wait_child(pid, H_MS(10000), "drv-copy2d --hold");
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_transcript);
	tcase_add_test(tc, test_one_request);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-copy2d", "2G", NULL, add_tests, 300);
}
