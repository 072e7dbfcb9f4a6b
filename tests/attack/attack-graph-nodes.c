// SPDX-License-Identifier: MIT
/*
 * attack-graph-nodes: a stream capture without end. Every stream-ordered op
 * issued to a capturing stream becomes a node the daemon keeps, and there
 * was no bound: a capture grew axond by 1.5 GiB. Now one client's graphs and
 * their instantiations hold at most --max-graph-nodes nodes together.
 *
 * With --max-graph-nodes=1000:
 *   - a capture of 100 000 memsets is invalidated at node 1001 (its end
 *     says STREAM_CAPTURE_INVALIDATED, the stream's next sync
 *     OUT_OF_MEMORY) and axond's resident memory stays low;
 *   - a capture of 400 nodes succeeds and instantiates once; a second
 *     instantiation (another 400) is refused with OUT_OF_MEMORY; after the
 *     first exec is destroyed it succeeds;
 *   - the stats show the nodes held; a bystander is served throughout.
 */
#include <check.h>
#include <cuda.h>

#include "attack.h"

#define LIMIT	1000

struct cap {
	struct axon_ring r;
	uint64_t ctx, stream, buf;
};

static void memset_node(struct cap *c)
{
	struct axon_sqe s = { 0 };
	uint64_t end = h_now_ms() + H_MS(20000);

	s.opcode = AXON_OP_MEMSET;
	s.flags = AXON_SQE_F_DEFERRED;
	s.stream = c->stream;
	s.memset.dst = c->buf;
	s.memset.width = 256;
	s.memset.height = 1;
	s.memset.value = 1;
	s.memset.elem_size = 1;
	while (h_ring_post(&c->r, &s) == -EBUSY && h_now_ms() < end)
		axon_submit(&c->r);
}

/* Captures n memsets; returns CAPTURE_END's result, the graph in *graph. */
static int32_t capture(struct cap *c, unsigned int n, uint64_t *graph)
{
	struct axon_sqe s = { 0 };
	uint64_t g = 0;
	unsigned int i;

	s.opcode = AXON_OP_CAPTURE_BEGIN;
	s.stream = c->stream;
	ck_assert_int_eq(h_ring_res(&c->r, &s, &g, NULL), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		memset_node(c);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_CAPTURE_END;
	s.stream = c->stream;
	s.obj.handle = g;
	*graph = g;
	return h_ring_res(&c->r, &s, NULL, NULL);
}

static uint64_t nodes_held(uint64_t id)
{
	struct json *doc = h_stats(&h_daemon);
	uint64_t v;

	ck_assert_ptr_nonnull(doc);
	v = h_client_u64(h_stats_client_id(doc, id), "limits.graph_nodes");
	json_free(doc);
	return v;
}

START_TEST(bounded_nodes)
{
	struct cap c;
	struct axon_ring by;
	struct axon_sqe s;
	uint64_t g1, g2, x1 = 0, x2 = 0;
	long rss0, rss1;

	ck_assert_int_eq(h_ring_connect(&c.r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_connect(&by, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&c.r, &c.ctx, &c.stream), 0);
	ck_assert_int_eq(h_ring_map(&c.r, c.ctx, 0, 1 << 20, &c.buf), 0);

	rss0 = a_proc_rss_kb(h_daemon.pid);
	ck_assert_int_eq(capture(&c, 100000, &g1), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* The node that passed the limit failed with OUT_OF_MEMORY, latched
	 * for the stream's next synchronisation. */
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_STREAM_SYNC;
	s.stream = c.stream;
	ck_assert_int_eq(h_ring_res(&c.r, &s, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	rss1 = a_proc_rss_kb(h_daemon.pid);
	ck_assert_msg(rss1 - rss0 < 8 * 1024, "axond grew by %ld KiB for a capture", rss1 - rss0);
	ck_assert_uint_le(nodes_held(c.r.params.client_id), LIMIT);
	memset(&s, 0, sizeof(s));
	axon_prep_nop(&s);
	ck_assert_int_eq(h_ring_res(&by, &s, NULL, NULL), CUDA_SUCCESS);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_GRAPH_DESTROY;
	s.obj.handle = g1;
	ck_assert_int_eq(h_ring_res(&c.r, &s, NULL, NULL), CUDA_SUCCESS);
	/* The graph is freed after the work queued before its destroy. */
	{
		uint64_t end = h_now_ms() + H_MS(5000);

		while (nodes_held(c.r.params.client_id) && h_now_ms() < end)
			h_poll_pause();
	}
	ck_assert_uint_eq(nodes_held(c.r.params.client_id), 0);

	/* Instantiations count too. */
	ck_assert_int_eq(capture(&c, 400, &g2), CUDA_SUCCESS);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_GRAPH_INSTANTIATE;
	s.obj.handle = g2;
	ck_assert_int_eq(h_ring_res(&c.r, &s, &x1, NULL), CUDA_SUCCESS);
	ck_assert_uint_eq(nodes_held(c.r.params.client_id), 800);
	ck_assert_int_eq(h_ring_res(&c.r, &s, &x2, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_GRAPH_EXEC_DESTROY;
	s.obj.handle = x1;
	ck_assert_int_eq(h_ring_res(&c.r, &s, NULL, NULL), CUDA_SUCCESS);
	{
		uint64_t end = h_now_ms() + H_MS(5000);

		while (nodes_held(c.r.params.client_id) > 400 && h_now_ms() < end)
			h_poll_pause();
	}
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_GRAPH_INSTANTIATE;
	s.obj.handle = g2;
	ck_assert_int_eq(h_ring_res(&c.r, &s, &x2, NULL), CUDA_SUCCESS);

	axon_close(&c.r);
	axon_close(&by);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, bounded_nodes);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = { "--max-graph-nodes=1000", NULL };

	h_init(argc, argv);
	a_lean_sanitizer();	/* RSS is compared with a baseline */
	return h_check_main("attack-graph-nodes", "1G", extra, add, 120);
}
