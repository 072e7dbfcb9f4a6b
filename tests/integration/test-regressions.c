// SPDX-License-Identifier: MIT
/*
 * integration-regressions: daemon defects the integration tests found,
 * each kept as the test that failed until it was fixed:
 *
 *   silent_connections  connections that never send a hello are kept
 *                       forever (no hello deadline); once they exhaust the
 *                       daemon's descriptors, accept4() fails with EMFILE,
 *                       the connection stays in the backlog and the
 *                       level-triggered listening socket makes the
 *                       dispatcher spin (server_accept() returns on any
 *                       error; run() polls again at once)
 *   deferred_flood      one client can queue deferred work without bound:
 *                       the dispatcher takes every deferred SQE at once and
 *                       the sim executor's queue grows (memory), while every
 *                       other client's stream-ordered work waits behind it
 *   refused_copy_bytes  bytes_htod / bytes_dtoh count copies that were
 *                       refused (axond/ops/copy.c adds len before the range
 *                       checks)
 *   sync_fault_not_sticky  a device fault of a launch that asked for a
 *                       completion is not sticky (dispatch_complete() does
 *                       not latch it), one of a deferred launch is
 *   unused_union_bytes  the ABI says unused SQE bytes must be zero; the
 *                       daemon accepts junk there for most opcodes (NOP,
 *                       CTX_SYNC, STREAM_SYNC, STREAM_CREATE...)
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "harness.h"

static int raw_connect(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	ck_assert(fd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", h_daemon.sock);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

/*
 * Runs axon_read_stats in a child so that a daemon that never answers
 * cannot hang the test: 0 if it answered within ms. The child asks again
 * when refused: the silent connections are this test's uid, so its share of
 * waiting connections may turn a request away until the hello deadline
 * closes them; what must hold is that an answer comes.
 */
static int stats_within(int ms)
{
	pid_t pid = fork();

	ck_assert(pid >= 0);
	if (pid == 0) {
		char err[256], *doc = NULL;

		while (axon_read_stats(h_daemon.addr, &doc, err, sizeof(err)))
			usleep(100 * 1000);
		_exit(0);
	}
	return h_wait_child(pid, ms, "a stats request");
}

static double cpu_seconds(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	p = strrchr(buf, ')');
	for (i = 0; p && i < 12; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

START_TEST(test_silent_connections)
{
	struct rlimit rl = { 64, 64 };
	double c0, c1;
	int fds[100], i, rc;
	uint64_t until;

	ck_assert_int_eq(prlimit(h_daemon.pid, RLIMIT_NOFILE, &rl, NULL), 0);
	for (i = 0; i < 100; i++)
		fds[i] = raw_connect();
	c0 = cpu_seconds(h_daemon.pid);
	until = h_now_ms() + 2000;
	while (h_now_ms() < until)
		h_poll_pause();
	c1 = cpu_seconds(h_daemon.pid);
	rc = stats_within(H_MS(15000));
	for (i = 0; i < 100; i++)
		close(fds[i]);
	ck_assert_msg(c1 - c0 < 0.5, "axond used %.2f s of CPU in 2 s with 100 silent "
		      "connections and a 64-descriptor limit (accept4 EMFILE spin)", c1 - c0);
	ck_assert_msg(rc == 0, "no stats answer within 15 s while silent connections "
		      "hold every descriptor (no hello deadline)");
}
END_TEST

START_TEST(test_deferred_flood)
{
	struct axon_params req = { .sq_entries = 4096 };
	struct axon_ring r, other;
	uint64_t ctx, st, addr, ctx2, st2, addr2, until;
	struct axon_sqe cp = { .opcode = AXON_OP_MEMCPY_HTOD };
	char err[256];
	int rc;

	ck_assert_int_eq(axon_connect(h_daemon.addr, &req, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(h_ring_connect(&other, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &st), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, 64 << 20, &addr), 0);
	ck_assert_int_eq(h_ring_ctx_create(&other, &ctx2, &st2), 0);
	ck_assert_int_eq(h_ring_map(&other, ctx2, 0, 4096, &addr2), 0);
	/* One second of deferred 64 MiB memsets. */
	until = h_now_ms() + 1000;
	while (h_now_ms() < until) {
		struct axon_sqe *s = axon_get_sqe(&r);

		if (!s) {
			ck_assert_int_ge(axon_submit(&r), 0);
			continue;
		}
		s->opcode = AXON_OP_MEMSET;
		s->flags = AXON_SQE_F_DEFERRED;
		s->stream = st;
		s->memset.dst = addr;
		s->memset.width = 16 << 20;
		s->memset.height = 1;
		s->memset.elem_size = 4;
	}
	ck_assert_int_ge(axon_submit(&r), 0);
	cp.stream = st2;
	cp.copy.dst = addr2;
	cp.copy.len = 16;
	rc = h_ring_sync(&other, &cp, NULL, H_MS(5000));
	axon_close(&r);
	axon_close(&other);
	ck_assert_msg(rc == 0, "another client's 16-byte copy waited more than 5 s behind "
		      "one client's flood of deferred work (%s)", strerror(-rc));
}
END_TEST

START_TEST(test_refused_copy_bytes)
{
	struct axon_ring r;
	uint64_t ctx, st, addr;
	struct axon_sqe s = { 0 };
	struct json *doc;
	uint64_t htod, dtoh;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &st), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, 4096, &addr), 0);
	axon_prep_copy(&s, AXON_OP_MEMCPY_HTOD, st, addr, 0, 1ULL << 40);
	ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	axon_prep_copy(&s, AXON_OP_MEMCPY_DTOH, st, 0, addr, 1ULL << 40);
	ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	doc = h_stats(&h_daemon);
	htod = h_client_u64(h_stats_client_id(doc, r.params.client_id), "bytes_htod");
	dtoh = h_client_u64(h_stats_client_id(doc, r.params.client_id), "bytes_dtoh");
	json_free(doc);
	axon_close(&r);
	ck_assert_msg(htod == 0 && dtoh == 0,
		      "refused copies counted: bytes_htod %llu, bytes_dtoh %llu",
		      (unsigned long long)htod, (unsigned long long)dtoh);
}
END_TEST

static void junk(struct axon_ring *r, const struct axon_sqe *s, const char *what, int *bad)
{
	int32_t res = h_ring_res(r, s, NULL, NULL);

	if (res != CUDA_ERROR_INVALID_VALUE) {
		h_note("%s: res %d", what, res);
		(*bad)++;
	}
}

START_TEST(test_unused_union_bytes)
{
	struct axon_ring r;
	uint64_t ctx, st;
	struct axon_sqe s;
	int bad = 0;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &st), 0);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_NOP;
	s.raw[4] = 1;
	junk(&r, &s, "NOP with raw[4] = 1 accepted", &bad);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_NOP;
	s.stream = st;
	junk(&r, &s, "NOP with a stream accepted", &bad);
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_CTX_SYNC, ctx, 5, 6);
	junk(&r, &s, "CTX_SYNC with arg0/arg1 accepted", &bad);
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_STREAM_SYNC, 99, 0, 0);
	s.stream = st;
	junk(&r, &s, "STREAM_SYNC with obj.handle accepted", &bad);
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_STREAM_CREATE, ctx, 0, 0);
	s.obj.arg2 = 7;
	junk(&r, &s, "STREAM_CREATE with obj.arg2 accepted", &bad);
	axon_close(&r);
	ck_assert_msg(bad == 0, "%d SQEs with nonzero unused bytes were accepted", bad);
}
END_TEST

/* dispatch_complete() posts a non-deferred launch's fault in its CQE but
 * does not latch it as sticky (only work_done() -> client_latch_error()
 * does, for deferred work), so the poisoning depends on whether the
 * client asked for a completion. */
START_TEST(test_sync_fault_not_sticky)
{
	struct axon_func_info fi;
	struct axon_ring r;
	uint64_t ctx, st, addr, mod = 0, fn = 0;
	struct axon_sqe s = { 0 };
	FILE *f = fopen(h_kernel_path("cubin"), "rb");
	size_t len;
	uint64_t p;
	float v = 1.0f;
	int n = 64;

	if (!f) {
		h_note("no %s: not run", h_kernel_path("cubin"));
		return;
	}
	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &st), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, 4096, &addr), 0);
	len = fread(r.data, 1, 1 << 20, f);
	fclose(f);
	axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	s.obj.data_len = (uint32_t)len;
	ck_assert_int_eq(h_ring_res(&r, &s, &mod, NULL), 0);
	strcpy((char *)r.data + (2 << 20), "fill");
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
	s.obj.data_off = 2 << 20;
	s.obj.data_len = sizeof(fi);
	ck_assert_int_eq(h_ring_res(&r, &s, &fn, NULL), 0);
	memcpy(&fi, r.data + (2 << 20), sizeof(fi));
	p = addr + 4096 - 16;	/* 64 floats from here: past the mapping */
	memcpy(r.data + AXON_PARAM_OFFSET(fi.param[0]), &p, 8);
	memcpy(r.data + AXON_PARAM_OFFSET(fi.param[1]), &v, 4);
	memcpy(r.data + AXON_PARAM_OFFSET(fi.param[2]), &n, 4);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_LAUNCH;
	s.stream = st;
	s.launch.func = fn;
	s.launch.grid[0] = s.launch.grid[1] = s.launch.grid[2] = 1;
	s.launch.block[0] = 64;
	s.launch.block[1] = s.launch.block[2] = 1;
	ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_CTX_SYNC, ctx, 0, 0);
	n = h_ring_res(&r, &s, NULL, NULL);
	axon_close(&r);
	ck_assert_msg(n == CUDA_ERROR_ILLEGAL_ADDRESS,
		      "after a non-deferred launch faulted, CTX_SYNC returned %d, not the "
		      "sticky ILLEGAL_ADDRESS a deferred one leaves", n);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_sync_fault_not_sticky);
	tcase_add_test(tc, test_refused_copy_bytes);
	tcase_add_test(tc, test_unused_union_bytes);
	tcase_add_test(tc, test_deferred_flood);
	/* Last: it lowers the daemon's descriptor limit for good. */
	tcase_add_test(tc, test_silent_connections);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-regressions", "4G", NULL, add_tests, 120);
}
