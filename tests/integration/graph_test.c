// SPDX-License-Identifier: MIT
/*
 * integration-graph: CUDA graphs made by stream capture, against a private
 * axond (sim backend).
 *
 *   transcript   tests/gpu/drv-graph (built as tests/bin/drv-graph) through
 *                the shim: capture, instantiate, 100 launches, update,
 *                fork/join, and the calls a capture forbids; its stdout must be exactly the transcript below,
 *                which is also what it prints natively on a GPU
 *                (tests/gpu/gpucheck.sh compares the two there).
 *   raw          the daemon's side over a raw ring: a capture of a memset
 *                and a copy replays byte for byte, so does a 2D copy
 *                (MEMCPY_2D); host copies (1D or 2D) are refused
 *                in a capture (its end says INVALIDATED), a graph being
 *                captured cannot be destroyed, an update from another
 *                topology fails with TOPOLOGY_CHANGED, a launch after the
 *                graph's memory was freed is refused; stats count graphs.
 *   parts        host nodes (HOST_FUNC NODE) cut a graph into parts that
 *                launch one at a time (GRAPH_LAUNCH obj.arg0); a part past
 *                the last, a node out of order, a node outside a capture
 *                are refused.
 *   isolation    another client's graph and exec handles name nothing in
 *                its own tables (a stale slot, an empty table): every graph
 *                op with them fails with INVALID_HANDLE, and the owner's
 *                exec still runs.
 *   disconnect   a client that disconnects mid-capture (and with graphs
 *                and execs alive) leaves the daemon holding nothing.
 */
#include <check.h>
#include <cuda.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *const transcript =
	"capture: status ACTIVE while capturing, end OK\n"
	"graph nodes: 3\n"
	"instantiate: OK\n"
	"launch x100: y 50.0 z 50.0 w 0x5a OK\n"
	"update, same topology: CUDA_SUCCESS result SUCCESS\n"
	"launch after update: y 50.25 z2 50.25 w 0xa5 OK\n"
	"update, other topology: CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE result TOPOLOGY_CHANGED\n"
	"launch after refused update: y 50.5 OK\n"
	"fork: second stream ACTIVE\n"
	"join: end OK, second stream NONE after the end\n"
	"fork/join graph nodes: 3\n"
	"fork/join launch x3: p 65.0 q 27.0 OK\n"
	"unjoined fork: end CUDA_ERROR_STREAM_CAPTURE_UNJOINED, graph NULL\n"
	"stream synchronize while capturing: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n"
	"after it: status INVALIDATED, end CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, graph NULL\n"
	"stream query while capturing: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n"
	"after it: status INVALIDATED, end CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, graph NULL\n"
	"context synchronize while capturing (relaxed): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n"
	"after it: status INVALIDATED, end CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, graph NULL\n"
	"allocation in a global capture: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n"
	"after it: status INVALIDATED, end CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, graph NULL\n"
	"allocation in a relaxed capture: CUDA_SUCCESS\n"
	"after it: status ACTIVE, end CUDA_SUCCESS, graph set\n"
	"allocation in a global capture, thread relaxed: CUDA_SUCCESS\n"
	"thread mode restored: was RELAXED\n"
	"after it: status ACTIVE, end CUDA_SUCCESS, graph set\n"
	"device-to-pageable-host copy while capturing: CUDA_SUCCESS\n"
	"after it: status ACTIVE, end CUDA_SUCCESS, graph set\n"
	"begin capture twice: CUDA_ERROR_ILLEGAL_STATE\n"
	"after it: status ACTIVE, end CUDA_SUCCESS, graph set\n"
	"capture ids: distinct\n"
	"query of an event recorded in the capture: CUDA_ERROR_CAPTURED_EVENT\n"
	"after it: status INVALIDATED, end CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, graph NULL\n"
	"end capture of a stream not capturing: CUDA_ERROR_ILLEGAL_STATE\n"
	"capture of the NULL stream: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED\n"
	"stream usable after the refused operations: OK\n"
	"cuLaunchKernelEx node, graph destroyed before the launches: p 6.0 OK\n"
	"built graph: 6 nodes, 2 roots, join node EMPTY\n"
	"built graph launch x10: y 6.0 z 3.0 OK\n"
	"node parameters: graph's change leaves the exec, exec's gives y 10.0 z 5.0 OK\n"
	"update from the built graph: CUDA_SUCCESS result SUCCESS\n"
	"launch after update: y 12.0 z 6.0 OK\n"
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
	char *argv[] = { (char *)h_bin("drv-graph"),
			 (char *)h_kernel_path("cubin"), NULL };
	int fd = -1, rc;
	pid_t pid = h_spawn(argv, &fd);
	ssize_t n;

	ck_assert(pid > 0);
	n = read_all(fd, out, sizeof(out), H_MS(120000));
	close(fd);
	rc = h_wait_child(pid, H_MS(10000), "drv-graph");
	if (n < 0 || rc != 0 || strcmp(out, transcript)) {
		printf("drv-graph exited %d; its stdout:\n%s\nexpected:\n%s", rc,
		       n < 0 ? "(unreadable)" : out, transcript);
		ck_abort_msg("drv-graph's transcript differs");
	}
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

/* ---- raw rings ------------------------------------------------------------ */

struct raw {
	struct axon_ring r;
	uint64_t ctx, stream;
	uint64_t a, b;		/* two mapped 64 KiB ranges */
};

#define RAW_LEN	65536u

static void raw_open(struct raw *x)
{
	memset(x, 0, sizeof(*x));
	ck_assert_int_eq(h_ring_connect(&x->r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&x->r, &x->ctx, &x->stream), 0);
	ck_assert_int_eq(h_ring_map(&x->r, x->ctx, 0, RAW_LEN, &x->a), 0);
	ck_assert_int_eq(h_ring_map(&x->r, x->ctx, RAW_LEN, RAW_LEN, &x->b), 0);
}

static int32_t obj(struct raw *x, unsigned int op, uint64_t stream, uint64_t handle,
		   uint64_t arg0, uint64_t *aux0)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_obj(&sqe, op, handle, arg0, 0);
	sqe.stream = stream;
	return h_ring_res(&x->r, &sqe, aux0, NULL);
}

static int32_t memset8(struct raw *x, uint64_t dst, unsigned char v, uint64_t n)
{
	struct axon_sqe sqe = { .opcode = AXON_OP_MEMSET, .stream = x->stream };

	sqe.memset.dst = dst;
	sqe.memset.width = n;
	sqe.memset.height = 1;
	sqe.memset.value = v;
	sqe.memset.elem_size = 1;
	return h_ring_res(&x->r, &sqe, NULL, NULL);
}

static int32_t copy(struct raw *x, unsigned int op, uint64_t dst, uint64_t src, uint64_t n)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_copy(&sqe, op, x->stream, dst, src, n);
	return h_ring_res(&x->r, &sqe, NULL, NULL);
}

static int32_t rect(struct raw *x, uint32_t dir, uint64_t dst, uint64_t src, uint32_t width,
		    uint32_t height, uint32_t dpitch, uint32_t spitch)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_memcpy_2d(&sqe, x->stream, dst, src, width, height, dpitch, spitch, dir, 0);
	return h_ring_res(&x->r, &sqe, NULL, NULL);
}

/* Every byte of [addr, addr + n) is v (read back through the data area). */
static bool bytes_are(struct raw *x, uint64_t addr, unsigned char v, uint64_t n)
{
	const unsigned char *p = x->r.data;
	uint64_t i;

	if (copy(x, AXON_OP_MEMCPY_DTOH, 0, addr, n))
		return false;
	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* Captures memset(a, v, n) and a <- copy to b, n bytes; returns the graph. */
static uint64_t capture_two(struct raw *x, unsigned char v, uint64_t n, bool third)
{
	uint64_t g = 0;

	ck_assert_int_eq(obj(x, AXON_OP_CAPTURE_BEGIN, x->stream, 0,
			     CU_STREAM_CAPTURE_MODE_GLOBAL, &g), 0);
	ck_assert_uint_eq(AXON_HANDLE_TYPE(g), AXON_HANDLE_GRAPH);
	ck_assert_int_eq(memset8(x, x->a, v, n), 0);
	ck_assert_int_eq(copy(x, AXON_OP_MEMCPY_DTOD, x->b, x->a, n), 0);
	if (third)
		ck_assert_int_eq(memset8(x, x->a, v, 1), 0);
	ck_assert_int_eq(obj(x, AXON_OP_CAPTURE_END, x->stream, g, 0, NULL), 0);
	return g;
}

static uint64_t client_u64(uint64_t id, const char *path)
{
	struct json *doc = h_stats(&h_daemon);
	uint64_t v;

	ck_assert_ptr_nonnull(doc);
	v = h_client_u64(h_stats_client_id(doc, id), path);
	json_free(doc);
	return v;
}

START_TEST(test_raw)
{
	struct raw x;
	uint64_t g, g2, g3, ex = 0, ex2 = 0, res = 0;

	raw_open(&x);
	ck_assert_int_eq(memset8(&x, x.b, 0, RAW_LEN), 0);
	g = capture_two(&x, 0x11, 4096, false);
	/* Capturing ran nothing. */
	ck_assert(bytes_are(&x, x.b, 0, 4096));
	/* A graph whose capture ended cannot be ended again. */
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g, 0, NULL),
			 CUDA_ERROR_ILLEGAL_STATE);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_INSTANTIATE, 0, g, 0, &ex), 0);
	ck_assert_uint_eq(AXON_HANDLE_TYPE(ex), AXON_HANDLE_GRAPH_EXEC);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_LAUNCH, x.stream, ex, 0, NULL), 0);
	ck_assert(bytes_are(&x, x.b, 0x11, 4096));
	ck_assert(bytes_are(&x, x.b + 4096, 0, 4096));

	/* Same topology, another value: the exec takes it. */
	g2 = capture_two(&x, 0x22, 4096, false);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_EXEC_UPDATE, 0, ex, g2, &res), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_LAUNCH, x.stream, ex, 0, NULL), 0);
	ck_assert(bytes_are(&x, x.b, 0x22, 4096));
	/* One node more: refused, and why. */
	g3 = capture_two(&x, 0x33, 4096, true);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_EXEC_UPDATE, 0, ex, g3, &res),
			 CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	ck_assert_uint_eq(res, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_LAUNCH, x.stream, ex, 0, NULL), 0);
	ck_assert(bytes_are(&x, x.b, 0x22, 4096));
	ck_assert_uint_eq(client_u64(x.r.params.client_id, "handles.graphs"), 3);
	ck_assert_uint_eq(client_u64(x.r.params.client_id, "handles.graph_execs"), 1);

	/* A host copy cannot join a graph: refused, and the capture with it. */
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, &g3), 0);
	/* ...and a graph being captured cannot go. */
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g3, 0, NULL),
			 CUDA_ERROR_ILLEGAL_STATE);
	ck_assert_int_eq(copy(&x, AXON_OP_MEMCPY_HTOD, x.a, 0, 16),
			 CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g3, 0, NULL),
			 CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_INSTANTIATE, 0, g3, 0, NULL),
			 CUDA_ERROR_INVALID_VALUE);
	/* A 2D copy between device sides is a node that replays; one staged
	 * in the data area is refused as the 1D ones are. */
	ck_assert_int_eq(memset8(&x, x.a, 0x44, 4096), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, &g3), 0);
	ck_assert_int_eq(rect(&x, AXON_COPY_2D_DTOD, x.b + 8192, x.a, 64, 8, 128, 256), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g3, 0, NULL), 0);
	ck_assert_int_eq(memset8(&x, x.b + 8192, 0, 1024), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_INSTANTIATE, 0, g3, 0, &ex2), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_LAUNCH, x.stream, ex2, 0, NULL), 0);
	ck_assert(bytes_are(&x, x.b + 8192 + 128 * 7, 0x44, 64));
	ck_assert(bytes_are(&x, x.b + 8192 + 128 * 7 + 64, 0, 64));
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_EXEC_DESTROY, 0, ex2, 0, NULL), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g3, 0, NULL), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, &g3), 0);
	ck_assert_int_eq(rect(&x, AXON_COPY_2D_HTOD, x.a, 0, 16, 2, 32, 16),
			 CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g3, 0, NULL),
			 CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* Beginning twice, ending elsewhere. */
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, &g3), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, NULL),
			 CUDA_ERROR_ILLEGAL_STATE);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g, 0, NULL),
			 CUDA_ERROR_STREAM_CAPTURE_UNMATCHED);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g3, 0, NULL), 0);

	/* Freed memory the graph names: its launches are refused. */
	{
		struct axon_sqe sqe = { 0 };

		axon_prep_mem(&sqe, AXON_OP_MEM_UNMAP, x.ctx, x.a, 0);
		ck_assert_int_eq(h_ring_res(&x.r, &sqe, NULL, NULL), 0);
	}
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_LAUNCH, x.stream, ex, 0, NULL),
			 CUDA_ERROR_INVALID_VALUE);

	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_EXEC_DESTROY, 0, ex, 0, NULL), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g, 0, NULL), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g2, 0, NULL), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g3, 0, NULL), 0);
	/* Stale now. */
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g, 0, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(obj(&x, AXON_OP_STREAM_SYNC, x.stream, 0, 0, NULL), 0);
	/* An exec is freed once the work queued before its destroy is done,
	 * which the dispatcher learns asynchronously: wait for it. */
	{
		int i;

		for (i = 0; i < 500 &&
		     client_u64(x.r.params.client_id, "handles.graph_execs") != 0; i++)
			usleep(10000);
	}
	ck_assert_uint_eq(client_u64(x.r.params.client_id, "handles.graph_execs"), 0);
	axon_close(&x.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static int32_t host_node(struct raw *x, uint64_t n, bool deferred)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_obj(&sqe, AXON_OP_HOST_FUNC, 0, AXON_HOST_FUNC_NODE, n);
	sqe.stream = x->stream;
	if (!deferred)
		return h_ring_res(&x->r, &sqe, NULL, NULL);
	sqe.flags = AXON_SQE_F_DEFERRED;
	return h_ring_post(&x->r, &sqe);
}

static int32_t launch_part(struct raw *x, uint64_t ex, uint64_t part)
{
	return obj(x, AXON_OP_GRAPH_LAUNCH, x->stream, ex, part, NULL);
}

START_TEST(test_parts)
{
	uint64_t g, g2, ex = 0, ex2 = 0, nodes = 0;
	struct raw x;

	raw_open(&x);
	ck_assert_int_eq(memset8(&x, x.b, 0, RAW_LEN), 0);
	/* Not capturing: a node has no graph to go in. */
	ck_assert_int_eq(host_node(&x, 0, false), CUDA_ERROR_ILLEGAL_STATE);

	/* memset a | node 0 | b <- a, memset a again | node 1 | (nothing) */
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, &g), 0);
	ck_assert_int_eq(memset8(&x, x.a, 0x31, 4096), 0);
	ck_assert_int_eq(host_node(&x, 0, true), 0);
	ck_assert_int_eq(copy(&x, AXON_OP_MEMCPY_DTOD, x.b, x.a, 4096), 0);
	ck_assert_int_eq(memset8(&x, x.a, 0x32, 4096), 0);
	ck_assert_int_eq(host_node(&x, 1, true), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g, 0, &nodes), 0);
	ck_assert_uint_eq(nodes, 5);	/* the host nodes count, as natively */
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_INSTANTIATE, 0, g, 0, &ex), 0);
	/* Part by part: each runs only its own nodes. */
	ck_assert_int_eq(launch_part(&x, ex, 0), 0);
	ck_assert(bytes_are(&x, x.a, 0x31, 4096));
	ck_assert(bytes_are(&x, x.b, 0, 4096));
	ck_assert_int_eq(launch_part(&x, ex, 1), 0);
	ck_assert(bytes_are(&x, x.a, 0x32, 4096));
	ck_assert(bytes_are(&x, x.b, 0x31, 4096));
	ck_assert_int_eq(launch_part(&x, ex, 2), 0);
	ck_assert_int_eq(launch_part(&x, ex, 3), CUDA_ERROR_INVALID_VALUE);

	/* Another number of host nodes: another topology. */
	g2 = capture_two(&x, 0x33, 4096, true);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_INSTANTIATE, 0, g2, 0, &ex2), 0);
	ck_assert_int_eq(launch_part(&x, ex2, 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_EXEC_UPDATE, 0, ex2, g, &nodes),
			 CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	ck_assert_uint_eq(nodes, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g2, 0, NULL), 0);

	/* Numbered out of order: the capture fails. */
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, &g2), 0);
	ck_assert_int_eq(host_node(&x, 1, true), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_END, x.stream, g2, 0, NULL),
			 CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g2, 0, NULL), 0);

	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_EXEC_DESTROY, 0, ex, 0, NULL), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_EXEC_DESTROY, 0, ex2, 0, NULL), 0);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_DESTROY, 0, g, 0, NULL), 0);
	axon_close(&x.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_isolation)
{
	struct raw a, b;
	uint64_t g, ex = 0, res = 0;

	raw_open(&a);
	raw_open(&b);
	g = capture_two(&a, 0x44, 4096, false);
	ck_assert_int_eq(obj(&a, AXON_OP_GRAPH_INSTANTIATE, 0, g, 0, &ex), 0);
	/*
	 * Handles index the submitter's own tables: the same number in b
	 * would name b's own graph in the same slot (never a's). Here b's
	 * slot held a graph it destroyed, so a's handle is stale in b.
	 */
	res = capture_two(&b, 0x55, 4096, false);
	ck_assert_uint_eq(res, g);
	ck_assert_int_eq(obj(&b, AXON_OP_GRAPH_DESTROY, 0, res, 0, NULL), 0);
	ck_assert_int_eq(obj(&b, AXON_OP_STREAM_SYNC, b.stream, 0, 0, NULL), 0);

	ck_assert_int_eq(obj(&b, AXON_OP_GRAPH_INSTANTIATE, 0, g, 0, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(obj(&b, AXON_OP_GRAPH_LAUNCH, b.stream, ex, 0, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(obj(&b, AXON_OP_GRAPH_EXEC_UPDATE, 0, ex, g, &res),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(obj(&b, AXON_OP_CAPTURE_END, b.stream, g, 0, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(obj(&b, AXON_OP_GRAPH_EXEC_DESTROY, 0, ex, 0, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	ck_assert_int_eq(obj(&b, AXON_OP_GRAPH_DESTROY, 0, g, 0, NULL),
			 CUDA_ERROR_INVALID_HANDLE);
	/* a's own stream handle in b's ring names nothing either. */
	ck_assert_int_eq(obj(&b, AXON_OP_GRAPH_LAUNCH, a.stream, ex, 0, NULL),
			 CUDA_ERROR_INVALID_HANDLE);

	/* The owner's exec is untouched and runs. */
	ck_assert_int_eq(obj(&a, AXON_OP_GRAPH_LAUNCH, a.stream, ex, 0, NULL), 0);
	ck_assert(bytes_are(&a, a.b, 0x44, 4096));
	ck_assert(bytes_are(&b, b.b, 0, 4096));
	ck_assert_uint_eq(client_u64(a.r.params.client_id, "handles.graphs"), 1);
	ck_assert_uint_eq(client_u64(a.r.params.client_id, "handles.graph_execs"), 1);
	ck_assert_uint_eq(client_u64(b.r.params.client_id, "handles.graph_execs"), 0);
	axon_close(&a.r);
	axon_close(&b.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_disconnect)
{
	struct raw x, y;
	uint64_t g, ex = 0, open = 0;

	raw_open(&x);
	g = capture_two(&x, 0x66, 4096, false);
	ck_assert_int_eq(obj(&x, AXON_OP_GRAPH_INSTANTIATE, 0, g, 0, &ex), 0);
	/* A launch queued, and a capture left open with nodes in it. */
	{
		struct axon_sqe sqe = { 0 };

		axon_prep_obj(&sqe, AXON_OP_GRAPH_LAUNCH, ex, 0, 0);
		sqe.stream = x.stream;
		sqe.flags = AXON_SQE_F_DEFERRED;
		ck_assert_int_eq(h_ring_post(&x.r, &sqe), 0);
	}
	ck_assert_int_eq(obj(&x, AXON_OP_CAPTURE_BEGIN, x.stream, 0, 0, &open), 0);
	ck_assert_int_eq(memset8(&x, x.a, 0x77, 4096), 0);
	ck_assert_int_eq(copy(&x, AXON_OP_MEMCPY_DTOD, x.b, x.a, 4096), 0);
	ck_assert_uint_eq(client_u64(x.r.params.client_id, "handles.graphs"), 2);
	ck_assert_uint_eq(client_u64(x.r.params.client_id, "handles.graph_execs"), 1);
	axon_close(&x.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);

	/* The daemon serves graphs as before. */
	raw_open(&y);
	g = capture_two(&y, 0x12, 4096, false);
	ck_assert_int_eq(obj(&y, AXON_OP_GRAPH_INSTANTIATE, 0, g, 0, &ex), 0);
	ck_assert_int_eq(obj(&y, AXON_OP_GRAPH_LAUNCH, y.stream, ex, 0, NULL), 0);
	ck_assert(bytes_are(&y, y.b, 0x12, 4096));
	axon_close(&y.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_transcript);
	tcase_add_test(tc, test_raw);
	tcase_add_test(tc, test_parts);
	tcase_add_test(tc, test_isolation);
	tcase_add_test(tc, test_disconnect);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	h_require_file(h_bin("drv-graph"));
	return h_check_main("integration-graph", "4G", NULL, add_tests, 300);
}
