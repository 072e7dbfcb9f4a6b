// SPDX-License-Identifier: MIT
/*
 * integration-kill: clients SIGKILLed in the middle of their work.
 *
 *   shim       tests/bin/busy (context, module, 4 streams, 8 events, 10
 *              buffers, an endless loop of async copies, launches, memsets,
 *              event records and waits) is killed three times at different
 *              moments of its loop
 *   raw_flow   a libaxon client floods deferred copies, memsets, launches
 *              and event records over 4 streams (reaping its completions)
 *   raw_stuck  a libaxon client that stopped reaping: its CQ is full, the
 *              daemon holds SQEs back, its SQ is full too
 * Each time: before the kill, the stats show the victim holding memory and
 * handles; after it, within a short bounded wait, no client, no memory used
 * or reserved; then a fresh client (vecadd, or a raw round trip) works.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "harness.h"

#define GONE_MS	H_MS(5000)	/* the "short bounded wait" after a kill */

struct holding {
	pid_t pid;
	uint64_t min_streams, min_events;
};

static bool pred_holding(const struct json *doc, void *arg)
{
	const struct holding *h = arg;
	const struct json *c = h_stats_client(doc, h->pid);

	return c && h_client_u64(c, "bytes_mapped") > 0 &&
	       h_client_u64(c, "allocations") >= 1 &&
	       h_client_u64(c, "handles.contexts") >= 1 &&
	       h_client_u64(c, "handles.streams") >= h->min_streams &&
	       h_client_u64(c, "handles.events") >= h->min_events;
}

static void kill_and_check(pid_t pid, const char *what)
{
	int rc;

	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	rc = h_wait_child(pid, H_MS(10000), what);
	ck_assert_msg(rc == 128 + SIGKILL, "%s: exit %d, expected SIGKILL", what, rc);
	ck_assert_msg(h_wait_client_gone(&h_daemon, pid, GONE_MS) == 0,
		      "%s is still listed %d ms after SIGKILL", what, GONE_MS);
	ck_assert_msg(h_wait_idle(&h_daemon, GONE_MS) == 0,
		      "memory or handles of %s remain after SIGKILL", what);
}

/* ---- through the shim ---------------------------------------------------- */

START_TEST(test_shim)
{
	static const int extra_ms[] = { 0, 30, 300 };
	unsigned int round;

	for (round = 0; round < sizeof(extra_ms) / sizeof(extra_ms[0]); round++) {
		struct holding h = { .min_streams = 5, .min_events = 8 };
		uint64_t until;
		int fd = -1;

		h.pid = h_spawn_bin(&fd, "busy", NULL);
		ck_assert(h.pid > 0);
		ck_assert_msg(h_wait_line(fd, "running", H_MS(60000)) == 0,
			      "busy never got going");
		ck_assert_msg(h_wait_stats(&h_daemon, pred_holding, &h, H_MS(5000),
					   "busy's memory, streams and events") == 0,
			      "busy is not holding what it allocated");
		/* Let the loop run on a little: a different point each round. */
		until = h_now_ms() + (uint64_t)extra_ms[round];
		while (h_now_ms() < until)
			h_poll_pause();
		kill_and_check(h.pid, "busy");
		close(fd);
		ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", "--quiet", NULL), 0);
		ck_assert_int_eq(h_wait_idle(&h_daemon, GONE_MS), 0);
	}
}
END_TEST

/* ---- raw libaxon --------------------------------------------------------- */

#define RAW_MAP		(64ULL << 20)
#define RAW_CHUNK	(64ULL << 10)
#define RAW_ARGS_OFF	(8ULL << 20)
#define RAW_NAME_OFF	(9ULL << 20)

static void child_die(const char *what)
{
	fprintf(stderr, "raw child: %s\n", what);
	_exit(3);
}

/* Loads the cubin and finds fill(); 0 if none (no kernels: no launches). */
static uint64_t raw_fill_func(struct axon_ring *r, uint64_t ctx, struct axon_func_info *fi)
{
	struct axon_sqe sqe = { 0 };
	uint64_t mod = 0, func = 0;
	FILE *f = fopen(h_kernel_path("cubin"), "rb");
	size_t len;

	if (!f)
		return 0;
	len = fread(r->data, 1, RAW_ARGS_OFF, f);
	fclose(f);
	axon_prep_obj(&sqe, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	sqe.obj.data_off = 0;
	sqe.obj.data_len = (uint32_t)len;
	if (h_ring_res(r, &sqe, &mod, NULL) != 0)
		child_die("MODULE_LOAD of the cubin failed");
	strcpy((char *)r->data + RAW_NAME_OFF, "fill");
	memset(&sqe, 0, sizeof(sqe));
	axon_prep_obj(&sqe, AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
	sqe.obj.data_off = RAW_NAME_OFF;
	sqe.obj.data_len = sizeof(*fi);
	if (h_ring_res(r, &sqe, &func, NULL) != 0)
		child_die("MODULE_GET_FUNC fill failed");
	memcpy(fi, r->data + RAW_NAME_OFF, sizeof(*fi));
	if (fi->nparams != 3)
		child_die("fill() does not have 3 parameters");
	return func;
}

static void put_param(struct axon_ring *r, const struct axon_func_info *fi, unsigned int i,
		      const void *v, size_t size)
{
	if (AXON_PARAM_SIZE(fi->param[i]) != size)
		child_die("unexpected parameter size");
	memcpy(r->data + RAW_ARGS_OFF + AXON_PARAM_OFFSET(fi->param[i]), v, size);
}

/*
 * The victim: sets up, tells the parent (one byte on notify), then floods.
 * stuck: stop reaping completions, so the CQ fills and everything stalls.
 */
static void __attribute__((noreturn)) raw_victim(int notify, bool stuck)
{
	struct axon_func_info fi;
	struct axon_ring r;
	uint64_t ctx, defstream, streams[4], events[8], addr, func;
	uint64_t i, submitted = 0;
	bool told = false;
	int k;

	if (h_ring_connect(&r, &h_daemon))
		child_die("connect");
	if (h_ring_ctx_create(&r, &ctx, &defstream))
		child_die("ctx");
	for (k = 0; k < 4; k++) {
		struct axon_sqe sqe = { 0 };

		axon_prep_obj(&sqe, AXON_OP_STREAM_CREATE, ctx, 0, 0);
		if (h_ring_res(&r, &sqe, &streams[k], NULL))
			child_die("STREAM_CREATE");
	}
	for (k = 0; k < 8; k++) {
		struct axon_sqe sqe = { 0 };

		axon_prep_obj(&sqe, AXON_OP_EVENT_CREATE, ctx, 0, 0);
		if (h_ring_res(&r, &sqe, &events[k], NULL))
			child_die("EVENT_CREATE");
	}
	if (h_ring_map(&r, ctx, 0, RAW_MAP, &addr))
		child_die("MEM_MAP");
	func = raw_fill_func(&r, ctx, &fi);
	if (func) {
		uint64_t p = addr + RAW_MAP / 2;
		float v = 2.5f;
		int n = (int)(RAW_CHUNK / 4);

		put_param(&r, &fi, 0, &p, 8);
		put_param(&r, &fi, 1, &v, 4);
		put_param(&r, &fi, 2, &n, 4);
	}
	memset(r.data, 0x5c, RAW_CHUNK);

	for (i = 0;; i++) {
		struct axon_sqe *sqe;
		const struct axon_cqe *cqe;
		uint64_t s = streams[i % 4];
		uint64_t off = (i * RAW_CHUNK) % (RAW_MAP / 2);

		if (!stuck || submitted < 64) {
			while (axon_peek_cqe(&r, &cqe) == 0)
				axon_cqe_seen(&r);
		}
		sqe = axon_get_sqe(&r);
		if (!sqe) {
			if (axon_submit(&r) < 0)
				child_die("daemon gone");
			if (!told && stuck &&
			    axon_load_acquire(&r.dpage->cq_tail) - r.cq_head >= r.cq_entries) {
				/* SQ full with the CQ full: stalled for good. */
				(void)!write(notify, "x", 1);
				told = true;
			}
			continue;
		}
		switch (i % 6) {
		case 0:
			axon_prep_copy(sqe, AXON_OP_MEMCPY_HTOD, s, addr + off, 0, RAW_CHUNK);
			break;
		case 1:
			axon_prep_copy(sqe, AXON_OP_MEMCPY_DTOH, s, RAW_CHUNK, addr + off,
				       RAW_CHUNK);
			break;
		case 2:
			sqe->opcode = AXON_OP_MEMSET;
			sqe->stream = s;
			sqe->memset.dst = addr + off;
			sqe->memset.width = RAW_CHUNK / 4;
			sqe->memset.height = 1;
			sqe->memset.value = 0x3f800000u;
			sqe->memset.elem_size = 4;
			break;
		case 3:
			if (func) {
				sqe->opcode = AXON_OP_LAUNCH;
				sqe->stream = s;
				sqe->launch.func = func;
				sqe->launch.grid[0] = (uint32_t)(RAW_CHUNK / 4 / 256);
				sqe->launch.grid[1] = sqe->launch.grid[2] = 1;
				sqe->launch.block[0] = 256;
				sqe->launch.block[1] = sqe->launch.block[2] = 1;
				sqe->launch.args_off = RAW_ARGS_OFF;
			} else {
				axon_prep_nop(sqe);
			}
			break;
		case 4:
			axon_prep_obj(sqe, AXON_OP_EVENT_RECORD, events[i % 8], 0, 0);
			sqe->stream = s;
			break;
		default:
			/* Non-deferred: produces a completion. */
			axon_prep_obj(sqe, AXON_OP_STREAM_WAIT_EVENT, events[(i + 3) % 8], 0, 0);
			sqe->stream = streams[(i + 1) % 4];
			break;
		}
		if (sqe->opcode != AXON_OP_STREAM_WAIT_EVENT || i % 12 != 5)
			sqe->flags = AXON_SQE_F_DEFERRED;
		sqe->user_data = i;
		submitted++;
		if (submitted % 32 == 0 && axon_submit(&r) < 0)
			child_die("daemon gone");
		if (!told && !stuck && submitted >= 4000) {
			(void)!write(notify, "x", 1);
			told = true;
		}
	}
}

static void raw_kill(bool stuck)
{
	struct holding h = { .min_streams = 5, .min_events = 8 };
	struct pollfd pfd;
	int pfds[2];
	pid_t parent = getpid();
	char b;

	ck_assert_int_eq(pipe(pfds), 0);
	h.pid = fork();
	ck_assert(h.pid >= 0);
	if (h.pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(4);
		close(pfds[0]);
		raw_victim(pfds[1], stuck);
	}
	close(pfds[1]);
	pfd.fd = pfds[0];
	pfd.events = POLLIN;
	ck_assert_msg(poll(&pfd, 1, H_MS(30000)) == 1 && read(pfds[0], &b, 1) == 1,
		      "the raw victim never got going");
	close(pfds[0]);
	ck_assert_msg(h_wait_stats(&h_daemon, pred_holding, &h, H_MS(5000),
				   "the raw victim's memory, streams and events") == 0,
		      "the raw victim is not holding what it allocated");
	if (stuck) {
		struct json *doc = h_stats(&h_daemon);
		const struct json *c = h_stats_client(doc, h.pid);

		ck_assert(c != NULL);
		h_note("stuck victim: sq_depth %llu",
		       (unsigned long long)h_client_u64(c, "sq_depth"));
		ck_assert_uint_gt(h_client_u64(c, "sq_depth"), 0);
		json_free(doc);
	}
	kill_and_check(h.pid, stuck ? "the stuck raw victim" : "the flooding raw victim");
}

/* A fresh raw client: a verified round trip. */
static void raw_fresh(void)
{
	struct axon_sqe sqe = { 0 };
	struct axon_ring r;
	uint64_t ctx, stream, addr;
	size_t i;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, 1 << 20, &addr), 0);
	for (i = 0; i < 4096; i++)
		r.data[i] = (unsigned char)(i * 13);
	axon_prep_copy(&sqe, AXON_OP_MEMCPY_HTOD, stream, addr, 0, 4096);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), 0);
	axon_prep_copy(&sqe, AXON_OP_MEMCPY_DTOH, stream, 8192, addr, 4096);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), 0);
	ck_assert_int_eq(memcmp(r.data, r.data + 8192, 4096), 0);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, GONE_MS), 0);
}

START_TEST(test_raw_flow)
{
	raw_kill(false);
	raw_fresh();
}
END_TEST

START_TEST(test_raw_stuck)
{
	raw_kill(true);
	raw_fresh();
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_raw_flow);
	tcase_add_test(tc, test_raw_stuck);
	if (access(h_kernel_path("cubin"), R_OK) == 0)
		tcase_add_test(tc, test_shim);
	else
		h_note("%s missing: the shim kill test is left out",
		       h_kernel_path("cubin"));
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-kill", "4G", NULL, add_tests, 240);
}
