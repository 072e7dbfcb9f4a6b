// SPDX-License-Identifier: MIT
/*
 * integration-garbage: hostile and broken requests against axond, through
 * libaxon directly, while well-behaved clients run beside them.
 *
 * Beside the tests, for the whole run: tests/bin/vecadd in a loop (through
 * the shim; left out when the kernel images are missing) and a raw
 * libaxon client in a child process (context, map, copy in, copy out,
 * compare, unmap, destroy, over and over). Both must make progress and
 * never see an error. At the end the daemon still answers, holds nothing once the
 * clients are gone, and exits 0 on SIGTERM.
 *
 * Every bad request must fail with the specific CUresult the daemon
 * promises (axond/dispatch.c, axond/ops/): the completion's res, or, for a
 * deferred SQE, the error latched and returned by the next synchronising
 * operation (once; device faults every time: they are sticky). AXON_TEST_SEED
 * repeats a run's random choices.
 *
 *   opcodes          unknown opcodes, sync and deferred
 *   header           unknown flags, nonzero resv0/resv1, DEFERRED on an op
 *                    that cannot be deferred, nonzero reserved union fields
 *   forged_handles   random u64s, right type with the wrong generation or
 *                    index, another type's handle, handle 0, the default
 *                    stream's destroy
 *   stale_handles    destroyed streams (also after their slots were reused),
 *                    events, modules, functions, contexts
 *   cross_client     another client's device addresses (minted by A with
 *                    MEM_MAP, used from B): copies, memsets, unmap, map,
 *                    launches; A's bytes stay intact; windows are disjoint
 *   huge_lengths     lengths and sizes that overflow or pass the end of an
 *                    allocation, the window or the arena
 *   data_offsets     data-area offsets and lengths beyond the data area;
 *                    names without NUL; broken module images (random,
 *                    truncated, bit-flipped cubins: no crash)
 *   sticky_fault     a deferred launch that faults: ILLEGAL_ADDRESS from
 *                    every later synchronising op
 *   random_sqes      thousands of SQEs of random bytes (each non-deferred
 *                    one completes with INVALID_VALUE) and of random
 *                    arguments to every opcode with valid handles mixed in
 *   tail_past_head   an SQ tail far past the head, or behind it: the client
 *                    is disconnected cleanly (DAEMON_GONE), others unharmed
 *   cq_head_games    a CQ head past the tail stalls only that client
 *   talking_client   a client that writes to its socket after the hello is
 *                    disconnected
 *   hellos           raw sockets: wrong ABI major (-EPROTO with a message),
 *                    short, long, bad magic, unknown kind, flags, reserved
 *                    fields, impossible sizes (-EINVAL), empty message, a
 *                    stats request
 *   slow_stats_reader  900 clients (a stats document larger than a socket
 *                    buffer) and a stats request that is never read: other
 *                    clients are still served
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>

#include "harness.h"

static uint64_t seed;

/* ---- small helpers ------------------------------------------------------- */

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	uint64_t x = rnd_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rnd_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static void rnd_bytes(void *p, size_t len)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = rnd();

		memcpy(b + i, &v, len - i < 8 ? len - i : 8);
	}
}

static const char *res_name(int32_t r)
{
	static __thread char buf[32];

	switch (r) {
	case CUDA_SUCCESS: return "SUCCESS";
	case CUDA_ERROR_INVALID_VALUE: return "INVALID_VALUE";
	case CUDA_ERROR_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
	case CUDA_ERROR_INVALID_DEVICE: return "INVALID_DEVICE";
	case CUDA_ERROR_INVALID_IMAGE: return "INVALID_IMAGE";
	case CUDA_ERROR_NO_BINARY_FOR_GPU: return "NO_BINARY_FOR_GPU";
	case CUDA_ERROR_INVALID_CONTEXT: return "INVALID_CONTEXT";
	case CUDA_ERROR_INVALID_HANDLE: return "INVALID_HANDLE";
	case CUDA_ERROR_NOT_FOUND: return "NOT_FOUND";
	case CUDA_ERROR_NOT_READY: return "NOT_READY";
	case CUDA_ERROR_ILLEGAL_ADDRESS: return "ILLEGAL_ADDRESS";
	case CUDA_ERROR_MISALIGNED_ADDRESS: return "MISALIGNED_ADDRESS";
	case CUDA_ERROR_NOT_SUPPORTED: return "NOT_SUPPORTED";
	case INT32_MIN: return "(no completion)";
	}
	snprintf(buf, sizeof(buf), "CUresult %d", r);
	return buf;
}

static struct axon_sqe obj(unsigned int op, uint64_t h, uint64_t a0, uint64_t a1)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, op, h, a0, a1);
	return s;
}

static struct axon_sqe copy(unsigned int op, uint64_t stream, uint64_t dst, uint64_t src,
			    uint64_t len)
{
	struct axon_sqe s = { 0 };

	axon_prep_copy(&s, op, stream, dst, src, len);
	return s;
}

static struct axon_sqe mem(unsigned int op, uint64_t ctx, uint64_t addr, uint64_t len)
{
	struct axon_sqe s = { 0 };

	axon_prep_mem(&s, op, ctx, addr, len);
	return s;
}

static struct axon_sqe mset(uint64_t stream, uint64_t dst, uint64_t width, uint64_t height,
			    uint64_t pitch, uint32_t value, uint32_t elem)
{
	struct axon_sqe s = { .opcode = AXON_OP_MEMSET, .stream = stream };

	s.memset.dst = dst;
	s.memset.width = width;
	s.memset.height = height;
	s.memset.pitch = pitch;
	s.memset.value = value;
	s.memset.elem_size = elem;
	return s;
}

static struct axon_sqe with_stream(struct axon_sqe s, uint64_t stream)
{
	s.stream = stream;
	return s;
}

/* One client: a ring, a context (with its default stream), a mapping. */
struct cl {
	struct axon_ring r;
	uint64_t ctx, stream, map, map_len;
};

static void cl_open(struct cl *c, uint64_t map_len)
{
	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(h_ring_connect(&c->r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&c->r, &c->ctx, &c->stream), 0);
	if (map_len) {
		ck_assert_int_eq(h_ring_map(&c->r, c->ctx, 0, map_len, &c->map), 0);
		c->map_len = map_len;
	}
}

static void cl_close(struct cl *c)
{
	axon_close(&c->r);
}

#define EXPECT(c, sqe_value, want)					\
	expect_res(c, (struct axon_sqe[]){ sqe_value }, want, #sqe_value, __LINE__)

static void expect_res(struct cl *c, const struct axon_sqe *sqe, int32_t want,
		       const char *what, int line)
{
	int32_t got = h_ring_res(&c->r, sqe, NULL, NULL);

	ck_assert_msg(got == want, "line %d: %s (opcode %s): res %s (%d), expected %s (%d)",
		      line, what, axon_op_name(sqe->opcode), res_name(got), got,
		      res_name(want), want);
}

/* Post deferred; the error must come back from the next CTX_SYNC, once. */
#define EXPECT_LATCHED(c, sqe_value, want)				\
	expect_latched(c, (struct axon_sqe[]){ sqe_value }, want, #sqe_value, __LINE__)

static void expect_latched(struct cl *c, const struct axon_sqe *sqe, int32_t want,
			   const char *what, int line)
{
	struct axon_sqe d = *sqe, sync = obj(AXON_OP_CTX_SYNC, c->ctx, 0, 0);
	int32_t got;
	uint64_t deadline;

	d.flags |= AXON_SQE_F_DEFERRED;
	ck_assert_int_eq(h_ring_post(&c->r, &d), 0);
	/* The daemon publishes the latched error on the daemon page too. */
	deadline = h_now_ms() + (uint64_t)H_MS(5000);
	while (axon_read_once(&c->r.dpage->pending_error) == 0 && h_now_ms() < deadline)
		h_poll_pause();
	ck_assert_msg(axon_read_once(&c->r.dpage->pending_error) == (uint32_t)want,
		      "line %d: deferred %s: pending_error %u, expected %d", line, what,
		      axon_read_once(&c->r.dpage->pending_error), want);
	got = h_ring_res(&c->r, &sync, NULL, NULL);
	ck_assert_msg(got == want, "line %d: deferred %s: CTX_SYNC gave %s (%d), expected %s",
		      line, what, res_name(got), got, res_name(want));
	got = h_ring_res(&c->r, &sync, NULL, NULL);
	ck_assert_msg(got == 0, "line %d: deferred %s: the error was returned twice (%s)",
		      line, what, res_name(got));
	ck_assert_uint_eq(axon_read_once(&c->r.dpage->pending_error), 0);
}

/* Loads the test cubin into c's context: its module handle, or 0. */
static uint64_t load_cubin(struct cl *c, size_t *lenp, unsigned char **copyp)
{
	FILE *f = fopen(h_kernel_path("cubin"), "rb");
	struct axon_sqe sqe = { 0 };
	uint64_t mod = 0;
	size_t len;
	int32_t res;

	if (!f)
		return 0;
	len = fread(c->r.data, 1, c->r.data_size / 2, f);
	fclose(f);
	if (copyp) {
		*copyp = malloc(len);
		ck_assert(*copyp != NULL);
		memcpy(*copyp, c->r.data, len);
	}
	if (lenp)
		*lenp = len;
	sqe = obj(AXON_OP_MODULE_LOAD, c->ctx, 0, 0);
	sqe.obj.data_off = 0;
	sqe.obj.data_len = (uint32_t)len;
	res = h_ring_res(&c->r, &sqe, &mod, NULL);
	ck_assert_msg(res == 0, "MODULE_LOAD of the test cubin: %s", res_name(res));
	return mod;
}

#define NAME_OFF	(1u << 20)

static uint64_t get_func(struct cl *c, uint64_t mod, const char *name,
			 struct axon_func_info *fi)
{
	struct axon_sqe sqe = obj(AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
	uint64_t f = 0;
	int32_t res;

	strcpy((char *)c->r.data + NAME_OFF, name);
	sqe.obj.data_off = NAME_OFF;
	sqe.obj.data_len = sizeof(struct axon_func_info);
	res = h_ring_res(&c->r, &sqe, &f, NULL);
	ck_assert_msg(res == 0, "MODULE_GET_FUNC %s: %s", name, res_name(res));
	if (fi)
		memcpy(fi, c->r.data + NAME_OFF, sizeof(*fi));
	return f;
}

/* A launch of fill(p, v, n) with the arguments packed at args_off. */
static struct axon_sqe fill_launch(struct cl *c, uint64_t func, const struct axon_func_info *fi,
				   uint32_t args_off, uint64_t p, float v, int n)
{
	struct axon_sqe s = { .opcode = AXON_OP_LAUNCH, .stream = c->stream };

	memcpy(c->r.data + args_off + AXON_PARAM_OFFSET(fi->param[0]), &p, 8);
	memcpy(c->r.data + args_off + AXON_PARAM_OFFSET(fi->param[1]), &v, 4);
	memcpy(c->r.data + args_off + AXON_PARAM_OFFSET(fi->param[2]), &n, 4);
	s.launch.func = func;
	s.launch.grid[0] = (uint32_t)((n + 255) / 256);
	s.launch.grid[1] = s.launch.grid[2] = 1;
	s.launch.block[0] = 256;
	s.launch.block[1] = s.launch.block[2] = 1;
	s.launch.args_off = args_off;
	return s;
}

/* ---- the well-behaved companions ------------------------------------------ */

static pid_t vecadd_pid;
/*
 * The raw companion is a process, not a thread: Check forks every test,
 * and a fork while another thread runs can leave the child holding locks
 * that thread had (seen: the child deadlocked in LeakSanitizer at exit).
 * It loops until stop_fd becomes readable (closed), then writes one line
 * to report_fd ("ok N" or the error) and exits.
 */
static pid_t good_pid;
static int good_stop_w = -1, good_report_r = -1;

static void __attribute__((noreturn)) good_client(int stop_fd, int report_fd)
{
	struct axon_ring r;
	char err[256], msg[512] = "";
	uint64_t iter = 0;
	FILE *rep = fdopen(report_fd, "w");

	if (axon_connect(h_daemon.addr, NULL, &r, err, sizeof(err))) {
		fprintf(rep, "connect: %s\n", err);
		fclose(rep);
		_exit(1);
	}
	for (;;) {
		struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };
		uint64_t ctx = 0, stream = 0, len = 256 * 1024 + 256 * (iter % 7);
		uint64_t addr = r.params.va_base + (iter % 16) * (1 << 20);
		struct axon_sqe s;
		int32_t res;
		size_t i;

		if (poll(&pfd, 1, 0) != 0)
			break;
		s = obj(AXON_OP_CTX_CREATE, 0, 0, 0);
		res = h_ring_res(&r, &s, &ctx, &stream);
		if (res)
			goto bad;
		s = mem(AXON_OP_MEM_MAP, ctx, addr, len);
		if ((res = h_ring_res(&r, &s, NULL, NULL)))
			goto bad;
		for (i = 0; i < len; i++)
			r.data[i] = (unsigned char)(i * 31 + iter);
		s = copy(AXON_OP_MEMCPY_HTOD, stream, addr, 0, len);
		if ((res = h_ring_res(&r, &s, NULL, NULL)))
			goto bad;
		s = copy(AXON_OP_MEMCPY_DTOH, stream, len, addr, len);
		if ((res = h_ring_res(&r, &s, NULL, NULL)))
			goto bad;
		if (memcmp(r.data, r.data + len, len)) {
			snprintf(msg, sizeof(msg), "iteration %llu: round trip differs",
				 (unsigned long long)iter);
			break;
		}
		s = mem(AXON_OP_MEM_UNMAP, ctx, addr, 0);
		if ((res = h_ring_res(&r, &s, NULL, NULL)))
			goto bad;
		s = obj(AXON_OP_CTX_DESTROY, ctx, 0, 0);
		if ((res = h_ring_res(&r, &s, NULL, NULL)))
			goto bad;
		iter++;
		continue;
bad:
		snprintf(msg, sizeof(msg), "iteration %llu: %s (op %s)",
			 (unsigned long long)iter, res_name(res), axon_op_name(s.opcode));
		break;
	}
	axon_close(&r);
	if (msg[0])
		fprintf(rep, "%s\n", msg);
	else
		fprintf(rep, "ok %llu\n", (unsigned long long)iter);
	fclose(rep);
	_exit(msg[0] ? 1 : 0);
}

static int good_start(void)
{
	int stop[2], report[2];
	pid_t parent = getpid();

	if (pipe2(stop, O_CLOEXEC) || pipe2(report, O_CLOEXEC))
		return h_fail("pipe: %s", strerror(errno));
	fflush(NULL);
	good_pid = fork();
	if (good_pid < 0)
		return h_fail("fork: %s", strerror(errno));
	if (good_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		close(stop[1]);
		close(report[0]);
		good_client(stop[0], report[1]);
	}
	close(stop[0]);
	close(report[1]);
	good_stop_w = stop[1];
	good_report_r = report[0];
	return 0;
}

/* Stops the raw companion; 0 if it ran clean for at least 10 rounds. */
static int good_finish(void)
{
	char line[600] = "";
	unsigned long long n = 0;
	ssize_t len;
	int rc;

	close(good_stop_w);
	rc = h_wait_child(good_pid, H_MS(30000), "the raw companion");
	len = read(good_report_r, line, sizeof(line) - 1);
	close(good_report_r);
	line[len > 0 ? len : 0] = 0;
	line[strcspn(line, "\n")] = 0;
	if (rc != 0 || sscanf(line, "ok %llu", &n) != 1)
		return h_fail("the raw companion failed (exit %d): %s", rc, line);
	if (n < 10)
		return h_fail("the raw companion made only %llu rounds", n);
	h_note("raw companion: %llu clean rounds", n);
	return 0;
}

static bool pred_vecadd_running(const struct json *doc, void *arg)
{
	const struct json *c = h_stats_client(doc, vecadd_pid);

	(void)arg;
	return c && h_client_u64(c, "ops.by_op.LAUNCH") >= 1 &&
	       h_client_u64(c, "ops.by_op.LAUNCH") != UINT64_MAX;
}

static uint64_t vecadd_launches(void)
{
	struct json *doc = h_stats(&h_daemon);
	uint64_t n = json_u64(json_path(h_stats_client(doc, vecadd_pid), "ops.by_op.LAUNCH"), 0);

	json_free(doc);
	return n;
}

/* ---- the tests ------------------------------------------------------------ */

START_TEST(test_opcodes)
{
	static const uint8_t bad[] = { AXON_OP_LAST, AXON_OP_LAST + 1, 0x7f, 0x80, 0xff };
	struct cl c;
	unsigned int i;

	cl_open(&c, 0);
	for (i = 0; i < sizeof(bad); i++) {
		struct axon_sqe s = { .opcode = bad[i] };

		EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
		EXPECT_LATCHED(&c, s, CUDA_ERROR_INVALID_VALUE);
	}
	/* The ring still works. */
	EXPECT(&c, obj(AXON_OP_NOP, 0, 0, 0), 0);
	cl_close(&c);
}
END_TEST

START_TEST(test_header)
{
	struct cl c;
	struct axon_sqe s;
	unsigned int bit;

	cl_open(&c, 1 << 20);
	for (bit = 1; bit < 8; bit++) {
		s = obj(AXON_OP_NOP, 0, 0, 0);
		s.flags = (uint8_t)(1u << bit);
		EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
		s.flags |= AXON_SQE_F_DEFERRED;
		EXPECT_LATCHED(&c, s, CUDA_ERROR_INVALID_VALUE);
	}
	s = obj(AXON_OP_NOP, 0, 0, 0);
	s.resv0 = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = obj(AXON_OP_NOP, 0, 0, 0);
	s.resv1 = 0x80000000u;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	/* A valid-looking copy with a bad header is not executed. */
	memset(c.r.data, 0x77, 64);
	s = copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, 0, 64);
	s.resv1 = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);

	/* DEFERRED on ops that cannot be deferred: latched, no completion. */
	EXPECT_LATCHED(&c, obj(AXON_OP_CTX_CREATE, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&c, obj(AXON_OP_STREAM_CREATE, c.ctx, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), c.stream),
		       CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&c, obj(AXON_OP_MEM_GET_INFO, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);

	/* Reserved fields inside the union that the daemon checks. */
	s = copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, 0, 64);
	s.copy.resv[0] = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = copy(AXON_OP_MEMCPY_DTOD, c.stream, c.map, c.map + 64, 64);
	s.copy.resv[1] = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = mem(AXON_OP_MEM_MAP, c.ctx, c.map + (2 << 20), 4096);
	s.mem.resv[1] = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = mem(AXON_OP_MEM_UNMAP, c.ctx, c.map, 0);
	s.mem.resv[0] = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_UNMAP, c.ctx, c.map, 4096), CUDA_ERROR_INVALID_VALUE);
	s = obj(AXON_OP_CTX_CREATE, 0, 0, 0);
	s.obj.arg2 = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = obj(AXON_OP_CTX_CREATE, 0, 0, 0);
	s.obj.data_len = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_CTX_CREATE, c.ctx, 0, 0), CUDA_ERROR_INVALID_VALUE);

	/* None of the refused copies wrote: the mapping is still zero. */
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOH, c.stream, 4096, c.map, 64), 0);
	{
		static const unsigned char zero[64];

		ck_assert_msg(!memcmp(c.r.data + 4096, zero, 64),
			      "a refused HTOD wrote device memory");
	}
	/* The mapping is still there (the refused unmaps did nothing). */
	EXPECT(&c, mem(AXON_OP_MEM_UNMAP, c.ctx, c.map, 0), 0);
	cl_close(&c);
}
END_TEST

START_TEST(test_forged_handles)
{
	struct cl c;
	uint64_t s2 = 0, ev = 0, fake;
	int i;

	cl_open(&c, 1 << 20);
	EXPECT(&c, obj(AXON_OP_NOP, 0, 0, 0), 0);
	ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){ obj(AXON_OP_STREAM_CREATE, c.ctx,
									    0, 0) },
				    &s2, NULL), 0);
	ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){ obj(AXON_OP_EVENT_CREATE, c.ctx,
									    0, 0) },
				    &ev, NULL), 0);

	for (i = 0; i < 64; i++) {
		uint64_t h = rnd();

		EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), h),
		       CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, h, c.map, 0, 16), CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, with_stream(obj(AXON_OP_EVENT_RECORD, h, 0, 0), c.stream),
		       CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, with_stream(obj(AXON_OP_STREAM_WAIT_EVENT, h, 0, 0), s2),
		       CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_CTX_SYNC, h, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
		EXPECT(&c, obj(AXON_OP_CTX_DESTROY, h, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
		EXPECT(&c, obj(AXON_OP_STREAM_CREATE, h, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
		EXPECT(&c, obj(AXON_OP_EVENT_CREATE, h, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
		EXPECT(&c, obj(AXON_OP_MODULE_LOAD, h, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
		EXPECT(&c, mem(AXON_OP_MEM_MAP, h, c.map + (4 << 20), 4096),
		       CUDA_ERROR_INVALID_CONTEXT);
		EXPECT(&c, mem(AXON_OP_MEM_UNMAP, h, c.map, 0), CUDA_ERROR_INVALID_CONTEXT);
		EXPECT(&c, obj(AXON_OP_STREAM_DESTROY, h, 0, 0), CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_EVENT_DESTROY, h, 0, 0), CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_EVENT_ELAPSED, h, ev, 0), CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_MODULE_UNLOAD, h, 0, 0), CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_MODULE_GET_FUNC, h, 0, 0), CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_MODULE_GET_GLOBAL, h, 0, 0), CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_FUNC_GET_ATTR, h, 0, 0), CUDA_ERROR_INVALID_HANDLE);
		{
			struct axon_sqe l = { .opcode = AXON_OP_LAUNCH, .stream = c.stream };

			l.launch.func = h;
			l.launch.grid[0] = l.launch.grid[1] = l.launch.grid[2] = 1;
			l.launch.block[0] = l.launch.block[1] = l.launch.block[2] = 1;
			EXPECT(&c, l, CUDA_ERROR_INVALID_HANDLE);
		}
	}
	/* Deferred, a forged stream: latched. */
	EXPECT_LATCHED(&c, copy(AXON_OP_MEMCPY_HTOD, rnd(), c.map, 0, 16),
		       CUDA_ERROR_INVALID_HANDLE);

	/* Right type, wrong generation or index. */
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, AXON_HANDLE_GEN(s2) + 1, AXON_HANDLE_INDEX(s2));
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), fake), CUDA_ERROR_INVALID_HANDLE);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, 0, AXON_HANDLE_INDEX(s2));
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), fake), CUDA_ERROR_INVALID_HANDLE);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, 0xffffff, AXON_HANDLE_INDEX(s2));
	EXPECT(&c, obj(AXON_OP_STREAM_DESTROY, fake, 0, 0), CUDA_ERROR_INVALID_HANDLE);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, AXON_HANDLE_GEN(s2), AXON_HANDLE_INDEX(s2) + 1000);
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), fake), CUDA_ERROR_INVALID_HANDLE);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, AXON_HANDLE_GEN(s2), 0xffffffffu);
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), fake), CUDA_ERROR_INVALID_HANDLE);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_CTX, AXON_HANDLE_GEN(c.ctx) + 1, AXON_HANDLE_INDEX(c.ctx));
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, fake, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_EVENT, AXON_HANDLE_GEN(ev) + 7, AXON_HANDLE_INDEX(ev));
	EXPECT(&c, with_stream(obj(AXON_OP_EVENT_RECORD, fake, 0, 0), c.stream),
	       CUDA_ERROR_INVALID_HANDLE);

	/* Another type's handle, and the same slot/generation under another type. */
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), c.ctx), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), ev), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.stream, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(&c, obj(AXON_OP_STREAM_CREATE, s2, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(&c, with_stream(obj(AXON_OP_EVENT_RECORD, s2, 0, 0), c.stream),
	       CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, obj(AXON_OP_STREAM_DESTROY, ev, 0, 0), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, obj(AXON_OP_EVENT_DESTROY, s2, 0, 0), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, obj(AXON_OP_MODULE_UNLOAD, c.ctx, 0, 0), CUDA_ERROR_INVALID_HANDLE);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, AXON_HANDLE_GEN(ev), AXON_HANDLE_INDEX(ev));
	if (fake != s2 && fake != c.stream)
		EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), fake),
		       CUDA_ERROR_INVALID_HANDLE);
	fake = AXON_HANDLE_MAKE(AXON_HANDLE_TYPE_LAST, AXON_HANDLE_GEN(s2), AXON_HANDLE_INDEX(s2));
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), fake), CUDA_ERROR_INVALID_HANDLE);

	/* Handle 0. */
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), 0), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, 0, c.map, 0, 16), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, 0, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(&c, obj(AXON_OP_EVENT_DESTROY, 0, 0, 0), CUDA_ERROR_INVALID_HANDLE);

	/* The default stream cannot be destroyed. */
	EXPECT(&c, obj(AXON_OP_STREAM_DESTROY, c.stream, 0, 0), CUDA_ERROR_INVALID_HANDLE);

	/* The real handles still work. */
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), s2), 0);
	EXPECT(&c, with_stream(obj(AXON_OP_EVENT_RECORD, ev, 0, 0), s2), 0);
	EXPECT(&c, obj(AXON_OP_EVENT_DESTROY, ev, 0, 0), 0);
	EXPECT(&c, obj(AXON_OP_STREAM_DESTROY, s2, 0, 0), 0);
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), 0);
	cl_close(&c);
}
END_TEST

START_TEST(test_stale_handles)
{
	uint64_t dead[48], live = 0, ev = 0, ctx2 = 0, ctx2_stream = 0;
	struct cl c;
	int i, k;

	cl_open(&c, 1 << 20);
	/* 48 create/destroy rounds: the table's slots get reused. */
	for (i = 0; i < 48; i++) {
		ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){
				obj(AXON_OP_STREAM_CREATE, c.ctx, 0, 0) }, &dead[i], NULL), 0);
		for (k = 0; k < i; k++)
			ck_assert_msg(dead[k] != dead[i],
				      "a destroyed stream's handle was handed out again");
		EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, dead[i], c.map, 0, 16), 0);
		EXPECT(&c, obj(AXON_OP_STREAM_DESTROY, dead[i], 0, 0), 0);
		EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), dead[i]),
		       CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, dead[i], c.map, 0, 16),
		       CUDA_ERROR_INVALID_HANDLE);
		EXPECT(&c, obj(AXON_OP_STREAM_DESTROY, dead[i], 0, 0), CUDA_ERROR_INVALID_HANDLE);
	}
	ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){
			obj(AXON_OP_STREAM_CREATE, c.ctx, 0, 0) }, &live, NULL), 0);
	for (k = 0; k < 48; k++) {
		EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), dead[k]),
		       CUDA_ERROR_INVALID_HANDLE);
		EXPECT_LATCHED(&c, copy(AXON_OP_MEMCPY_HTOD, dead[k], c.map, 0, 16),
			       CUDA_ERROR_INVALID_HANDLE);
	}
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), live), 0);

	/* A destroyed event. */
	ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){
			obj(AXON_OP_EVENT_CREATE, c.ctx, 0, 0) }, &ev, NULL), 0);
	EXPECT(&c, obj(AXON_OP_EVENT_DESTROY, ev, 0, 0), 0);
	EXPECT(&c, with_stream(obj(AXON_OP_EVENT_RECORD, ev, 0, 0), live), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_WAIT_EVENT, ev, 0, 0), live),
	       CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, obj(AXON_OP_EVENT_DESTROY, ev, 0, 0), CUDA_ERROR_INVALID_HANDLE);

	/* A destroyed module and its function. */
	{
		uint64_t mod = load_cubin(&c, NULL, NULL), fn;
		struct axon_func_info fi;

		if (mod) {
			fn = get_func(&c, mod, "fill", &fi);
			EXPECT(&c, fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 16), 0);
			EXPECT(&c, obj(AXON_OP_MODULE_UNLOAD, mod, 0, 0), 0);
			EXPECT(&c, fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 16),
			       CUDA_ERROR_INVALID_HANDLE);
			EXPECT(&c, obj(AXON_OP_FUNC_GET_ATTR, fn, 0, 0), CUDA_ERROR_INVALID_HANDLE);
			EXPECT(&c, obj(AXON_OP_MODULE_UNLOAD, mod, 0, 0), CUDA_ERROR_INVALID_HANDLE);
			EXPECT(&c, obj(AXON_OP_MODULE_GET_FUNC, mod, 0, 0), CUDA_ERROR_INVALID_HANDLE);
		}
	}

	/* A destroyed context: its default stream and memory go with it. */
	ck_assert_int_eq(h_ring_ctx_create(&c.r, &ctx2, &ctx2_stream), 0);
	ck_assert_int_eq(h_ring_map(&c.r, ctx2, 8 << 20, 1 << 20, NULL), 0);
	EXPECT(&c, obj(AXON_OP_CTX_DESTROY, ctx2, 0, 0), 0);
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, ctx2, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(&c, obj(AXON_OP_CTX_DESTROY, ctx2, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(&c, obj(AXON_OP_STREAM_CREATE, ctx2, 0, 0), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), ctx2_stream),
	       CUDA_ERROR_INVALID_HANDLE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.r.params.va_base + (8 << 20), 0, 16),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_UNMAP, ctx2, c.r.params.va_base + (8 << 20), 0),
	       CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(&c, mem(AXON_OP_MEM_UNMAP, c.ctx, c.r.params.va_base + (8 << 20), 0),
	       CUDA_ERROR_INVALID_VALUE);
	/* The first context is untouched. */
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, live, c.map, 0, 16), 0);
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), 0);
	cl_close(&c);
}
END_TEST

START_TEST(test_cross_client)
{
	const uint64_t len = 1 << 20;
	struct cl a, b;
	uint64_t a_end, b_end;
	size_t i;

	cl_open(&a, len);
	cl_open(&b, len);
	a_end = a.r.params.va_base + a.r.params.va_size;
	b_end = b.r.params.va_base + b.r.params.va_size;
	ck_assert_msg(a_end <= b.r.params.va_base || b_end <= a.r.params.va_base,
		      "client windows overlap");
	for (i = 0; i < len; i++)
		a.r.data[i] = (unsigned char)(i * 7 + 3);
	EXPECT(&a, copy(AXON_OP_MEMCPY_HTOD, a.stream, a.map, 0, len), 0);

	/* B names A's memory. */
	memset(b.r.data, 0xbb, len);
	EXPECT(&b, copy(AXON_OP_MEMCPY_HTOD, b.stream, a.map, 0, 64), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, copy(AXON_OP_MEMCPY_HTOD, b.stream, a.map + 4096, 0, 1),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, copy(AXON_OP_MEMCPY_DTOH, b.stream, 0, a.map, 64), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, copy(AXON_OP_MEMCPY_DTOD, b.stream, b.map, a.map, 64),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, copy(AXON_OP_MEMCPY_DTOD, b.stream, a.map, b.map, 64),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, mset(b.stream, a.map, 16, 1, 0, 0xbb, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, mem(AXON_OP_MEM_UNMAP, b.ctx, a.map, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, mem(AXON_OP_MEM_MAP, b.ctx, a.map, 4096), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&b, mem(AXON_OP_MEM_MAP, b.ctx, a.map + len, 4096), CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&b, copy(AXON_OP_MEMCPY_HTOD, b.stream, a.map, 0, 64),
		       CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&b, mset(b.stream, a.map, 16, 1, 0, 0xbb, 1), CUDA_ERROR_INVALID_VALUE);
	/* A's handles mean nothing special to B (per-client tables), but
	 * A's addresses must never work from B, even through a kernel. */
	{
		uint64_t mod = load_cubin(&b, NULL, NULL), fn;
		struct axon_func_info fi;

		if (mod) {
			fn = get_func(&b, mod, "fill", &fi);
			EXPECT(&b, fill_launch(&b, fn, &fi, 2 << 20, b.map, 9.0f, 64), 0);
			/* Device faults (sticky: B is done after these). Each
			 * completion carries the launch's own fault. */
			EXPECT(&b, fill_launch(&b, fn, &fi, 2 << 20, a.map, 9.0f, 64),
			       CUDA_ERROR_ILLEGAL_ADDRESS);
			EXPECT(&b, fill_launch(&b, fn, &fi, 2 << 20, b.map + len - 128, 9.0f, 64),
			       CUDA_ERROR_ILLEGAL_ADDRESS);
			EXPECT(&b, fill_launch(&b, fn, &fi, 2 << 20, b.map + 2, 9.0f, 64),
			       CUDA_ERROR_MISALIGNED_ADDRESS);
		}
	}
	/* A's bytes are intact. */
	EXPECT(&a, copy(AXON_OP_MEMCPY_DTOH, a.stream, len, a.map, len), 0);
	ck_assert_msg(!memcmp(a.r.data, a.r.data + len, len), "client A's memory was changed");
	cl_close(&b);
	cl_close(&a);
}
END_TEST

START_TEST(test_huge_lengths)
{
	const uint64_t len = 1 << 20;
	struct cl c;
	uint64_t base, wend;

	cl_open(&c, len);
	base = c.r.params.va_base;
	wend = base + c.r.params.va_size - c.r.params.va_size / 16;
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, 0, 1ULL << 62),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, 0, UINT64_MAX),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map + len - 16, 0, 32),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, UINT64_MAX - 8, 0, 16),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOH, c.stream, 0, c.map + 8, UINT64_MAX - 4),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOD, c.stream, c.map, c.map + 8, UINT64_MAX),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOD, c.stream, c.map, c.map + 512, len - 256),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, 0, 1ULL << 40),
		       CUDA_ERROR_INVALID_VALUE);

	EXPECT(&c, mset(c.stream, c.map, UINT64_MAX, 1, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 1ULL << 61, 1, 0, 0, 4), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, len / 4 + 1, 1, 0, 0, 4), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 16, UINT64_MAX, 1ULL << 40, 0, 1),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 16, 3, UINT64_MAX / 2, 0, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 16, 2, 8, 0, 1), CUDA_ERROR_INVALID_VALUE); /* pitch < row */
	EXPECT(&c, mset(c.stream, c.map, 16, 0, 0, 0, 1), CUDA_ERROR_INVALID_VALUE); /* height 0 */
	EXPECT(&c, mset(c.stream, c.map, 16, 1, 0, 0, 3), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 16, 1, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 16, 1, 0, 0x100, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 16, 1, 0, 0x10000, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mset(c.stream, c.map, 16, 1, 0, 0xff, 1), 0);

	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, base + (16 << 20), UINT64_MAX),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, base + (16 << 20), 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, base + (16 << 20) + 128, 4096),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, base - 4096, 4096), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, wend, 4096), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, wend - 4096, 8192), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, 0, 4096), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, c.map + 4096, 4096), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, c.map, len), CUDA_ERROR_INVALID_VALUE);
	/* More than the arena (4 GiB) in the window: out of memory. */
	EXPECT(&c, mem(AXON_OP_MEM_MAP, c.ctx, base + (64 << 20), 6ULL << 30),
	       CUDA_ERROR_OUT_OF_MEMORY);
	/* Deferred past the credit: latched out of memory. */
	EXPECT_LATCHED(&c, mem(AXON_OP_MEM_MAP, c.ctx, base + (64 << 20),
			       c.r.params.mint_credit + (1 << 20)),
		       CUDA_ERROR_OUT_OF_MEMORY);
	EXPECT(&c, mem(AXON_OP_MEM_UNMAP, c.ctx, c.map + 256, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, mem(AXON_OP_MEM_UNMAP, c.ctx, base + (64 << 20), 0), CUDA_ERROR_INVALID_VALUE);

	EXPECT(&c, obj(AXON_OP_MEM_GET_INFO, 0, 5, 0), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(&c, obj(AXON_OP_MEM_GET_INFO, 0, UINT64_MAX, 0), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(&c, obj(AXON_OP_CTX_CREATE, 0, 99, 0), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(&c, obj(AXON_OP_CTX_CREATE, 0, 1ULL << 32, 0), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(&c, obj(AXON_OP_STREAM_CREATE, c.ctx, 0x80, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_STREAM_CREATE, c.ctx, UINT64_MAX, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_EVENT_CREATE, c.ctx, 0x80, 0), CUDA_ERROR_INVALID_VALUE);

	/* Launch geometry and shared memory. */
	{
		uint64_t mod = load_cubin(&c, NULL, NULL), fn;
		struct axon_func_info fi;
		struct axon_sqe l;

		if (mod) {
			fn = get_func(&c, mod, "fill", &fi);
			l = fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 256);
			l.launch.grid[0] = 0;
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
			l = fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 256);
			l.launch.block[0] = 2048;
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
			l.launch.block[0] = 64;
			l.launch.block[1] = 64;
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
			l = fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 256);
			l.launch.block[2] = 0;
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
			l = fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 256);
			l.launch.grid[1] = 70000;
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
			l = fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 256);
			l.launch.shared_bytes = UINT32_MAX;
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
			/* More threads than the sim runs: NOT_SUPPORTED. */
			l = fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 16);
			l.launch.grid[0] = 0x7fffffff;
			l.launch.block[0] = 1024;
			EXPECT(&c, l, CUDA_ERROR_NOT_SUPPORTED);
			EXPECT(&c, obj(AXON_OP_FUNC_GET_ATTR, fn, 0x7fffffff, 0),
			       CUDA_ERROR_INVALID_VALUE);
			EXPECT(&c, fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, (int)(len / 4)), 0);
			EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), 0);
			/* n larger than the mapping: a device fault (sticky, so
			 * the last thing this client does). */
			EXPECT(&c, fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, (int)(len / 4) + 1),
			       CUDA_ERROR_ILLEGAL_ADDRESS);
		}
	}
	cl_close(&c);
}
END_TEST

/* A deferred launch that faults: the fault comes back from every later
 * synchronising op (sticky), not once. */
START_TEST(test_sticky_fault)
{
	struct axon_func_info fi;
	struct axon_sqe l;
	uint64_t mod, fn;
	struct cl c;
	int i;

	cl_open(&c, 1 << 20);
	mod = load_cubin(&c, NULL, NULL);
	if (!mod) {
		cl_close(&c);
		return;
	}
	fn = get_func(&c, mod, "fill", &fi);
	l = fill_launch(&c, fn, &fi, 2 << 20, c.map + (1 << 20) - 64, 1.0f, 64);
	l.flags = AXON_SQE_F_DEFERRED;
	ck_assert_int_eq(h_ring_post(&c.r, &l), 0);
	for (i = 0; i < 3; i++)
		EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), CUDA_ERROR_ILLEGAL_ADDRESS);
	EXPECT(&c, with_stream(obj(AXON_OP_STREAM_SYNC, 0, 0, 0), c.stream),
	       CUDA_ERROR_ILLEGAL_ADDRESS);
	ck_assert_uint_eq(axon_read_once(&c.r.dpage->pending_error), CUDA_ERROR_ILLEGAL_ADDRESS);
	/* Ops that do not synchronise still work (the ring is not dead). */
	EXPECT(&c, obj(AXON_OP_NOP, 0, 0, 0), 0);
	cl_close(&c);
}
END_TEST

START_TEST(test_data_offsets)
{
	struct cl c;
	uint64_t D, mod;
	struct axon_sqe s;
	unsigned char *cubin = NULL;
	size_t cubin_len = 0;
	int i;

	cl_open(&c, 1 << 20);
	D = c.r.data_size;
	ck_assert_uint_eq(D, c.r.params.data_size);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, D, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, D - 8, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, UINT64_MAX, 2),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_HTOD, c.stream, c.map, 1ULL << 40, 16),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOH, c.stream, D, c.map, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOH, c.stream, D - 100, c.map, 4096),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOH, c.stream, UINT64_MAX - 10, c.map, 16),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT_LATCHED(&c, copy(AXON_OP_MEMCPY_DTOH, c.stream, D, c.map, 16),
		       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, copy(AXON_OP_MEMCPY_DTOH, c.stream, D - 16, c.map, 16), 0);

	s = obj(AXON_OP_MODULE_LOAD, c.ctx, 0, 0);
	s.obj.data_off = (uint32_t)D;
	s.obj.data_len = 16;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s.obj.data_off = 0;
	s.obj.data_len = 0;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s.obj.data_off = 0xffffffffu;
	s.obj.data_len = 0xffffffffu;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s.obj.data_off = (uint32_t)(D - 8);
	s.obj.data_len = 16;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);

	/* Broken images: random bytes, text, zeros. */
	for (i = 0; i < 16; i++) {
		rnd_bytes(c.r.data, 65536);
		s.obj.data_off = 0;
		s.obj.data_len = 1 + (uint32_t)(rnd() % 65536);
		EXPECT(&c, s, CUDA_ERROR_INVALID_IMAGE);
	}
	/* PTX-like text that does not start with .version. */
	strcpy((char *)c.r.data, "// no version\n.target sm_90\n.visible .entry k()\n{\n ret;\n}\n");
	s.obj.data_len = (uint32_t)strlen((char *)c.r.data) + 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_IMAGE);
	memset(c.r.data, 0, 4096);
	s.obj.data_len = 4096;
	EXPECT(&c, s, CUDA_ERROR_INVALID_IMAGE);

	mod = load_cubin(&c, &cubin_len, &cubin);
	if (mod) {
		struct axon_sqe g = obj(AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
		unsigned int loaded = 0;

		/* Names beyond the data area, unterminated, empty, too long. */
		g.obj.data_off = (uint32_t)D;
		g.obj.data_len = sizeof(struct axon_func_info);
		EXPECT(&c, g, CUDA_ERROR_INVALID_VALUE);
		g.obj.data_off = (uint32_t)(D - 16);
		EXPECT(&c, g, CUDA_ERROR_INVALID_VALUE);
		g.obj.data_off = NAME_OFF;
		memset(c.r.data + NAME_OFF, 'a', sizeof(struct axon_func_info));
		EXPECT(&c, g, CUDA_ERROR_INVALID_VALUE);
		c.r.data[NAME_OFF] = 0;
		EXPECT(&c, g, CUDA_ERROR_INVALID_VALUE);
		strcpy((char *)c.r.data + NAME_OFF, "fill");
		g.obj.data_len = 8;	/* cannot hold the answer */
		EXPECT(&c, g, CUDA_ERROR_INVALID_VALUE);
		g.obj.data_len = sizeof(struct axon_func_info);
		strcpy((char *)c.r.data + NAME_OFF, "no_such_kernel");
		EXPECT(&c, g, CUDA_ERROR_NOT_FOUND);
		g.opcode = AXON_OP_MODULE_GET_GLOBAL;
		strcpy((char *)c.r.data + NAME_OFF, "no_such_global");
		EXPECT(&c, g, CUDA_ERROR_NOT_FOUND);
		c.r.data[NAME_OFF] = 0;
		EXPECT(&c, g, CUDA_ERROR_INVALID_VALUE);

		/* Launch arguments past the data area. */
		{
			struct axon_func_info fi;
			uint64_t fn = get_func(&c, mod, "fill", &fi);
			struct axon_sqe l = fill_launch(&c, fn, &fi, 2 << 20, c.map, 1.0f, 16);

			l.launch.args_off = (uint32_t)(D - fi.args_size / 2);
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
			l.launch.args_off = 0xffffffffu;
			EXPECT(&c, l, CUDA_ERROR_INVALID_VALUE);
		}

		/* Truncated and bit-flipped cubins: refused or loaded, never a crash. */
		for (i = 0; i < 256; i++) {
			uint64_t m = 0;
			size_t n = cubin_len;
			int32_t res;
			int f;

			memcpy(c.r.data, cubin, cubin_len);
			if (i < 16) {
				n = 1 + (size_t)(rnd() % (cubin_len - 1));
			} else {
				for (f = 0; f < 1 + i % 8; f++)
					c.r.data[rnd() % cubin_len] ^= (unsigned char)(1u << (rnd() % 8));
			}
			s = obj(AXON_OP_MODULE_LOAD, c.ctx, 0, 0);
			s.obj.data_len = (uint32_t)n;
			res = h_ring_res(&c.r, &s, &m, NULL);
			ck_assert_msg(res != INT32_MIN, "no answer to a broken cubin");
			if (res == 0) {
				loaded++;
				EXPECT(&c, obj(AXON_OP_MODULE_UNLOAD, m, 0, 0), 0);
			} else {
				/* A flipped arch field: nothing for sm_90. */
				ck_assert_msg(res == CUDA_ERROR_INVALID_IMAGE ||
					      res == CUDA_ERROR_NO_BINARY_FOR_GPU ||
					      res == CUDA_ERROR_OUT_OF_MEMORY,
					      "broken cubin #%d: %s", i, res_name(res));
			}
		}
		h_note("broken cubins: %u of 256 still loaded", loaded);
		free(cubin);
	}
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), 0);
	cl_close(&c);
}
END_TEST

/* Reaps what completions there are; counts them, checks each. */
static void reap(struct cl *c, uint64_t *got, bool strict)
{
	const struct axon_cqe *cqe;

	while (axon_peek_cqe(&c->r, &cqe) == 0) {
		if (strict)
			ck_assert_msg(cqe->res == CUDA_ERROR_INVALID_VALUE,
				      "random SQE %#llx completed with %s",
				      (unsigned long long)cqe->user_data, res_name(cqe->res));
		(*got)++;
		axon_cqe_seen(&c->r);
	}
}

static void wait_reaped(struct cl *c, uint64_t *got, uint64_t want, bool strict)
{
	uint64_t deadline = h_now_ms() + (uint64_t)H_MS(20000);

	while (*got < want && h_now_ms() < deadline) {
		const struct axon_cqe *cqe;

		if (axon_wait_cqe(&c->r, &cqe, 10 * 1000 * 1000ull) == 0)
			reap(c, got, strict);
	}
	ck_assert_msg(*got == want, "%llu completions for %llu non-deferred SQEs",
		      (unsigned long long)*got, (unsigned long long)want);
}

START_TEST(test_random_sqes)
{
	const int total = 8192;
	uint64_t want = 0, got = 0, ev = 0;
	struct cl c;
	int i;

	cl_open(&c, 1 << 20);
	/* Pure random bytes: header checks refuse every one. */
	for (i = 0; i < total; i++) {
		struct axon_sqe *sqe;

		while (!(sqe = axon_get_sqe(&c.r))) {
			ck_assert_int_ge(axon_submit(&c.r), 0);
			reap(&c, &got, true);
		}
		rnd_bytes(sqe, sizeof(*sqe));
		/* Random resv/flags bits make every one invalid; keep it so. */
		if (!sqe->resv0 && !sqe->resv1 && !(sqe->flags & ~AXON_SQE_F_DEFERRED))
			sqe->resv1 = 1;
		if (!(sqe->flags & AXON_SQE_F_DEFERRED))
			want++;
		if (i % 64 == 63) {
			ck_assert_int_ge(axon_submit(&c.r), 0);
			reap(&c, &got, true);
		}
	}
	ck_assert_int_ge(axon_submit(&c.r), 0);
	wait_reaped(&c, &got, want, true);
	{
		int32_t r = h_ring_res(&c.r, (struct axon_sqe[]){ obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0) },
				       NULL, NULL);

		ck_assert_msg(r == CUDA_ERROR_INVALID_VALUE, "CTX_SYNC after random SQEs: %s",
			      res_name(r));
	}
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), 0);

	/* Random arguments to every opcode, valid handles mixed in. */
	ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){ obj(AXON_OP_EVENT_CREATE, c.ctx,
									    0, 0) },
				    &ev, NULL), 0);
	want = got = 0;
	for (i = 0; i < total; i++) {
		struct axon_sqe *sqe;
		uint64_t handles[4] = { c.ctx, c.stream, ev, rnd() };

		while (!(sqe = axon_get_sqe(&c.r))) {
			ck_assert_int_ge(axon_submit(&c.r), 0);
			reap(&c, &got, false);
		}
		rnd_bytes(sqe, sizeof(*sqe));
		sqe->opcode = (uint8_t)(rnd() % AXON_OP_LAST);
		sqe->flags = (uint8_t)(rnd() % 2);
		sqe->resv0 = 0;
		sqe->resv1 = 0;
		/* Valid-looking values in the common places, now and then. */
		if (rnd() % 2)
			sqe->stream = handles[rnd() % 4];
		if (rnd() % 2)
			sqe->obj.handle = handles[rnd() % 4];
		if (rnd() % 3 == 0)
			sqe->raw[1] = c.map + (rnd() % (1 << 20));
		if (rnd() % 3 == 0)
			sqe->raw[2] = rnd() % 8192;
		if (sqe->opcode == AXON_OP_MODULE_LOAD && rnd() % 2) {
			sqe->obj.data_off = (uint32_t)(rnd() % 4096);
			sqe->obj.data_len = (uint32_t)(rnd() % 65536);
		}
		/* Keep the context alive: its destroy would end the test early. */
		if (sqe->opcode == AXON_OP_CTX_DESTROY)
			sqe->obj.handle = rnd();
		if (!(sqe->flags & AXON_SQE_F_DEFERRED))
			want++;
		if (i % 64 == 63) {
			ck_assert_int_ge(axon_submit(&c.r), 0);
			reap(&c, &got, false);
		}
	}
	ck_assert_int_ge(axon_submit(&c.r), 0);
	wait_reaped(&c, &got, want, false);
	ck_assert_int_eq(axon_daemon_alive(&c.r), 0);
	/* Whatever was latched comes out once; then all is quiet. */
	(void)h_ring_res(&c.r, (struct axon_sqe[]){ obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0) }, NULL, NULL);
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), 0);
	EXPECT(&c, obj(AXON_OP_NOP, 0, 0, 0), 0);
	cl_close(&c);
}
END_TEST

static bool pred_client_gone(const struct json *doc, void *arg)
{
	return !h_stats_client_id(doc, *(uint64_t *)arg);
}

static void expect_disconnected(struct cl *c, const char *why)
{
	uint64_t deadline = h_now_ms() + (uint64_t)H_MS(5000);
	uint64_t id = c->r.params.client_id;

	while (axon_daemon_alive(&c->r) == 0 && h_now_ms() < deadline)
		h_poll_pause();
	ck_assert_msg(axon_daemon_alive(&c->r) == -EPIPE, "%s: still connected", why);
	ck_assert_msg(axon_read_once(&c->r.dpage->sq_flags) & AXON_SQ_F_DAEMON_GONE,
		      "%s: DAEMON_GONE not set", why);
	ck_assert_int_eq(h_wait_stats(&h_daemon, pred_client_gone, &id, H_MS(5000),
				      "the disconnected client to leave the stats"), 0);
}

static void ring_doorbell(struct cl *c)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(c->r.doorbell_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
}

START_TEST(test_tail_past_head)
{
	struct cl c, other;

	cl_open(&other, 1 << 20);
	/* Far ahead. */
	cl_open(&c, 1 << 20);
	axon_store_release(&c.r.cpage->sq_tail, c.r.sq_tail + c.r.sq_entries + 1000);
	ring_doorbell(&c);
	expect_disconnected(&c, "SQ tail far past the head");
	ck_assert_uint_ge(axon_read_once(&c.r.dpage->sq_dropped), 1);
	cl_close(&c);
	/* Behind the head (wraps to a huge distance). */
	cl_open(&c, 1 << 20);
	EXPECT(&c, obj(AXON_OP_NOP, 0, 0, 0), 0);
	axon_store_release(&c.r.cpage->sq_tail, c.r.sq_tail - 1);
	ring_doorbell(&c);
	expect_disconnected(&c, "SQ tail behind the head");
	cl_close(&c);
	/* The neighbour is unharmed. */
	EXPECT(&other, copy(AXON_OP_MEMCPY_HTOD, other.stream, other.map, 0, 4096), 0);
	EXPECT(&other, obj(AXON_OP_CTX_SYNC, other.ctx, 0, 0), 0);
	cl_close(&other);
}
END_TEST

START_TEST(test_cq_head_games)
{
	struct axon_sqe nop = obj(AXON_OP_NOP, 0, 0, 0);
	const struct axon_cqe *cqe;
	struct cl c, other;
	uint32_t head;

	cl_open(&other, 0);
	cl_open(&c, 0);
	head = c.r.cq_head;
	/* A head past the tail: the daemon must consider the CQ full. */
	axon_store_release(&c.r.cpage->cq_head, head + 100000);
	ck_assert_int_eq(h_ring_post(&c.r, &nop), 0);
	ring_doorbell(&c);
	/* Another client is served meanwhile. */
	EXPECT(&other, nop, 0);
	ck_assert_msg(axon_wait_cqe(&c.r, &cqe, 200 * 1000 * 1000ull) == -ETIMEDOUT,
		      "the daemon posted into a CQ whose head was past its tail");
	/* Back to sane: the NOP completes. */
	axon_store_release(&c.r.cpage->cq_head, head);
	ring_doorbell(&c);
	ck_assert_int_eq(axon_wait_cqe(&c.r, &cqe, (uint64_t)H_MS(5000) * 1000000ull), 0);
	ck_assert_int_eq(cqe->res, 0);
	axon_cqe_seen(&c.r);
	EXPECT(&c, nop, 0);
	cl_close(&c);
	cl_close(&other);
}
END_TEST

START_TEST(test_talking_client)
{
	struct cl c;

	cl_open(&c, 1 << 20);
	ck_assert_int_eq(send(c.r.sock_fd, "hello?", 6, MSG_NOSIGNAL), 6);
	expect_disconnected(&c, "a client that wrote to its socket");
	cl_close(&c);
}
END_TEST

/* ---- raw hellos ------------------------------------------------------------ */

static int raw_socket(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct timeval tv = { .tv_sec = 10 * H_SLOW };

	ck_assert(fd >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", h_daemon.sock);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static struct axon_hello good_hello(void)
{
	struct axon_hello h = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
		.kind = AXON_HELLO_CLIENT,
	};

	return h;
}

/* Sends len bytes of msg; expects a welcome with status want, then EOF. */
static void hello_expect(const void *msg, size_t len, int want, const char *what)
{
	struct axon_welcome w;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	int fd = raw_socket();
	ssize_t n;
	char b;

	memset(&w, 0, sizeof(w));
	ck_assert_int_eq(send(fd, msg, len, MSG_NOSIGNAL), (ssize_t)len);
	n = recvmsg(fd, &mh, 0);
	ck_assert_msg(n == (ssize_t)sizeof(w), "%s: welcome of %zd bytes (%s)", what, n,
		      n < 0 ? strerror(errno) : "short");
	ck_assert_msg(CMSG_FIRSTHDR(&mh) == NULL, "%s: descriptors came with a refusal", what);
	ck_assert_uint_eq(w.magic, AXON_MAGIC);
	ck_assert_uint_eq(w.abi_major, AXON_ABI_MAJOR);
	ck_assert_msg(w.status == want, "%s: status %d, expected %d", what, w.status, want);
	w.message[sizeof(w.message) - 1] = 0;
	ck_assert_msg(w.message[0] != 0, "%s: no message with status %d", what, w.status);
	h_note("%s: %d \"%s\"", what, w.status, w.message);
	n = recv(fd, &b, 1, 0);
	ck_assert_msg(n == 0, "%s: connection not closed after the refusal (%zd)", what, n);
	close(fd);
}

START_TEST(test_hellos)
{
	struct axon_hello h;
	unsigned char junk[sizeof(h) + 100];
	int fd;
	ssize_t n;
	char b;

	h = good_hello();
	h.abi_major = AXON_ABI_MAJOR + 1;
	hello_expect(&h, sizeof(h), -EPROTO, "ABI major + 1");
	{
		struct axon_welcome w;
		int fd2 = raw_socket();

		h.abi_major = 0;
		ck_assert_int_eq(send(fd2, &h, sizeof(h), MSG_NOSIGNAL), (ssize_t)sizeof(h));
		ck_assert_int_eq(recv(fd2, &w, sizeof(w), 0), (ssize_t)sizeof(w));
		ck_assert_int_eq(w.status, -EPROTO);
		w.message[sizeof(w.message) - 1] = 0;
		ck_assert_msg(strstr(w.message, "ABI") != NULL, "message \"%s\" does not say ABI",
			      w.message);
		close(fd2);
	}
	rnd_bytes(junk, sizeof(junk));
	hello_expect(junk, 7, -EINVAL, "7 random bytes");
	hello_expect(junk, sizeof(h), -EINVAL, "random bytes of hello size");
	h = good_hello();
	memcpy(junk, &h, sizeof(h));
	hello_expect(junk, sizeof(h) + 100, -EINVAL, "a hello with 100 bytes more");
	hello_expect(&h, sizeof(h) - 1, -EINVAL, "a hello one byte short");
	h.magic = ~AXON_MAGIC;
	hello_expect(&h, sizeof(h), -EINVAL, "bad magic");
	h = good_hello();
	h.kind = 99;
	hello_expect(&h, sizeof(h), -EINVAL, "unknown kind");
	h.kind = 0;
	hello_expect(&h, sizeof(h), -EINVAL, "kind 0");
	h = good_hello();
	h.flags = 1;
	hello_expect(&h, sizeof(h), -EINVAL, "hello flags");
	h = good_hello();
	h.params.flags = 1;
	hello_expect(&h, sizeof(h), -EINVAL, "params flags");
	h = good_hello();
	h.params.resv[5] = 1;
	hello_expect(&h, sizeof(h), -EINVAL, "params reserved");
	h = good_hello();
	h.params.sq_entries = AXON_MAX_SQ_ENTRIES + 1;
	hello_expect(&h, sizeof(h), -EINVAL, "sq_entries too large");
	h = good_hello();
	h.params.sq_entries = 64;
	h.params.cq_entries = 32;
	hello_expect(&h, sizeof(h), -EINVAL, "cq_entries < sq_entries");
	h = good_hello();
	h.params.data_size = AXON_MAX_DATA_SIZE + 1;
	hello_expect(&h, sizeof(h), -EINVAL, "data_size too large");

	/* An empty message: the daemon just hangs up. */
	fd = raw_socket();
	ck_assert_int_eq(send(fd, "", 0, MSG_NOSIGNAL), 0);
	n = recv(fd, &b, 1, 0);
	ck_assert_msg(n == 0, "empty hello: %zd", n);
	close(fd);
	/* Connect and hang up without a word. */
	close(raw_socket());

	/* A stats request by hand. */
	{
		struct axon_welcome w;
		char *doc = malloc(1 << 20), err[256];
		size_t len = 0;
		struct json *j;

		ck_assert(doc != NULL);
		h = good_hello();
		h.kind = AXON_HELLO_STATS;
		fd = raw_socket();
		ck_assert_int_eq(send(fd, &h, sizeof(h), MSG_NOSIGNAL), (ssize_t)sizeof(h));
		ck_assert_int_eq(recv(fd, &w, sizeof(w), 0), (ssize_t)sizeof(w));
		ck_assert_int_eq(w.status, 0);
		while ((n = recv(fd, doc + len, (1 << 20) - 1 - len, 0)) > 0)
			len += (size_t)n;
		ck_assert_int_eq(n, 0);
		doc[len] = 0;
		j = json_parse(doc, err, sizeof(err));
		ck_assert_msg(j != NULL, "stats by hand: %s", err);
		ck_assert_str_eq(json_str(json_path(j, "daemon.backend"), ""), "sim");
		json_free(j);
		free(doc);
		close(fd);
	}
	/* A good client after all that. */
	{
		struct cl c;

		cl_open(&c, 4096);
		EXPECT(&c, obj(AXON_OP_NOP, 0, 0, 0), 0);
		cl_close(&c);
	}
}
END_TEST

START_TEST(test_slow_stats_reader)
{
	const int n = 900;	/* a stats document larger than a socket buffer */
	struct axon_params small = { .sq_entries = 8, .data_size = 4096 };
	struct axon_ring *rings = calloc(n, sizeof(*rings)), probe;
	struct axon_hello h = {
		.magic = AXON_MAGIC, .abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR, .kind = AXON_HELLO_STATS,
	};
	struct axon_sqe nop = { .opcode = AXON_OP_NOP };
	struct rlimit rl;
	char err[256];
	int i, fd, rc;

	ck_assert(rings != NULL);
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < 4096) {
		h_note("slow_stats_reader: needs RLIMIT_NOFILE >= 4096 (have %llu): not run",
		       (unsigned long long)rl.rlim_cur);
		free(rings);
		return;
	}
	for (i = 0; i < n; i++)
		ck_assert_msg(axon_connect(h_daemon.addr, &small, &rings[i], err,
					   sizeof(err)) == 0, "client %d: %s", i, err);
	ck_assert_int_eq(h_ring_connect(&probe, &h_daemon), 0);
	fd = raw_socket();
	ck_assert_int_eq(send(fd, &h, sizeof(h), MSG_NOSIGNAL), (ssize_t)sizeof(h));
	/* The welcome is there: the daemon is sending the document. */
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		ck_assert_int_eq(poll(&pfd, 1, H_MS(10000)), 1);
	}
	/* We never read. Another client must still be served. */
	rc = h_ring_sync(&probe, &nop, NULL, H_MS(3000));
	close(fd);
	axon_close(&probe);
	for (i = 0; i < n; i++)
		axon_close(&rings[i]);
	free(rings);
	ck_assert_msg(rc == 0, "with a stats reader that does not read, another client's "
		      "NOP got no completion (%s): the dispatcher is stuck sending stats",
		      strerror(-rc));
}
END_TEST

/* ---- main ------------------------------------------------------------------ */

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_opcodes);
	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_forged_handles);
	tcase_add_test(tc, test_stale_handles);
	tcase_add_test(tc, test_cross_client);
	tcase_add_test(tc, test_huge_lengths);
	tcase_add_test(tc, test_data_offsets);
	tcase_add_test(tc, test_sticky_fault);
	tcase_add_test(tc, test_random_sqes);
	tcase_add_test(tc, test_tail_past_head);
	tcase_add_test(tc, test_cq_head_games);
	tcase_add_test(tc, test_talking_client);
	tcase_add_test(tc, test_hellos);
	tcase_add_test(tc, test_slow_stats_reader);
}

int main(int argc, char **argv)
{
	const char *env = getenv("AXON_TEST_SEED");
	bool have_kernels, failed = false;
	uint64_t launches_before = 0;
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int rc;

	h_init(argc, argv);
	/* slow_stats_reader: 900 clients, ~2 descriptors each here, ~3 in
	 * the daemon (which inherits the limit). */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096) {
			rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
	rnd_state = seed | 1;
	h_note("random seed %llu (AXON_TEST_SEED to repeat)", (unsigned long long)seed);
	/* slow_stats_reader's 900 clients are all this test's uid. */
	if (h_daemon_start(&h_daemon, "4G",
			   (const char *const[]){ "--max-clients-per-user=1024", NULL }))
		return H_FAIL;

	/* The well-behaved companions. */
	have_kernels = access(h_kernel_path("cubin"), R_OK) == 0;
	if (have_kernels) {
		vecadd_pid = h_spawn_bin(NULL, "vecadd", "--quiet", "--loops", "0", "--size",
					 "50000", NULL);
		if (vecadd_pid < 0 ||
		    h_wait_stats(&h_daemon, pred_vecadd_running, NULL, H_MS(30000),
				 "the vecadd companion to launch") != 0) {
			h_fail("the vecadd companion did not get going");
			failed = true;
		}
		launches_before = vecadd_launches();
	} else {
		h_note("%s missing: no vecadd companion (the raw one still runs)",
		       h_kernel_path("cubin"));
	}
	if (good_start())
		return h_finish(true);

	s = suite_create("integration-garbage");
	tc = tcase_create("garbage");
	tcase_set_timeout(tc, h_test_timeout(60));
	add_tests(tc);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed |= srunner_ntests_failed(sr) != 0;
	srunner_free(sr);

	/* The companions ran all along and are fine. */
	if (good_finish())
		failed = true;
	if (vecadd_pid > 0) {
		uint64_t launches_after = vecadd_launches();

		h_note("vecadd companion: %llu launches during the tests",
		       (unsigned long long)(launches_after - launches_before));
		if (launches_after <= launches_before) {
			h_fail("the vecadd companion made no progress during the tests");
			failed = true;
		}
		kill(vecadd_pid, SIGUSR1);
		rc = h_wait_child(vecadd_pid, H_MS(60000), "the vecadd companion");
		if (rc != 0) {
			h_fail("the vecadd companion exited %d", rc);
			failed = true;
		}
	}
	if (h_wait_idle(&h_daemon, H_MS(5000)))
		failed = true;
	return h_finish(failed);
}
