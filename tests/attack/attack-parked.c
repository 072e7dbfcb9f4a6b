// SPDX-License-Identifier: MIT
/*
 * attack-parked: work parked behind a host function that never finishes.
 * Items issued to a stream held by a host function wait in the daemon
 * (axond/ops/hostfunc.c) and were not counted against any limit: a client
 * that never sent the host function's DONE grew the daemon's heap by
 * 1.5 GiB in 3 s. Now at most --max-parked items (and --max-parked-bytes)
 * wait per client; past that an item is refused with OUT_OF_MEMORY, latched
 * like any deferred failure, and the DONE still gets through.
 *
 * The daemon runs with --max-parked=1000. The attacker holds a stream with a
 * WAIT it never answers and issues 100 000 deferred memsets behind it: the
 * daemon's resident memory must grow by far less than they would take, the
 * stats show 1000 parked and the rest refused; a bystander is served
 * meanwhile; then the DONE releases the hold, the parked memsets run and the
 * stream's next sync returns the latched OUT_OF_MEMORY once.
 */
#include <check.h>
#include <cuda.h>

#include "attack.h"

#define LIMIT	1000
#define FLOOD	100000

static int post_wait_room(struct axon_ring *r, const struct axon_sqe *s)
{
	uint64_t end = h_now_ms() + H_MS(20000);
	int ret;

	while ((ret = h_ring_post(r, s)) == -EBUSY && h_now_ms() < end)
		axon_submit(r);
	return ret;
}

START_TEST(parked_flood)
{
	const struct json *cl;
	struct axon_ring a, b;
	struct axon_sqe s = { 0 };
	struct axon_cqe cqe;
	uint64_t ctx, stream, dev, token;
	long rss0, rss1;
	struct json *doc;
	int i;

	ck_assert_int_eq(h_ring_connect(&a, &h_daemon), 0);
	ck_assert_int_eq(h_ring_connect(&b, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&a, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&a, ctx, 0, 1 << 20, &dev), 0);

	/* The hold: a WAIT whose DONE the attacker keeps. */
	s.opcode = AXON_OP_HOST_FUNC;
	s.stream = stream;
	s.obj.arg0 = AXON_HOST_FUNC_WAIT;
	ck_assert_int_eq(h_ring_sync(&a, &s, &cqe, H_MS(5000)), 0);
	ck_assert_int_eq(cqe.res, CUDA_SUCCESS);
	token = cqe.user_data;

	rss0 = a_proc_rss_kb(h_daemon.pid);
	for (i = 0; i < FLOOD; i++) {
		memset(&s, 0, sizeof(s));
		s.opcode = AXON_OP_MEMSET;
		s.flags = AXON_SQE_F_DEFERRED;
		s.stream = stream;
		s.memset.dst = dev;
		s.memset.width = 64;
		s.memset.height = 1;
		s.memset.value = 7;
		s.memset.elem_size = 1;
		ck_assert_int_eq(post_wait_room(&a, &s), 0);
	}

	/* A sync NOP after them: every memset has been taken. */
	memset(&s, 0, sizeof(s));
	axon_prep_nop(&s);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);
	rss1 = a_proc_rss_kb(h_daemon.pid);
	/* 100 000 items are > 20 MB of work items; 1000 are < 1 MB. */
	ck_assert_msg(rss1 - rss0 < 8 * 1024, "axond grew by %ld KiB for parked work",
		      rss1 - rss0);

	doc = h_stats(&h_daemon);
	ck_assert_ptr_nonnull(doc);
	cl = h_stats_client_id(doc, a.params.client_id);
	ck_assert_ptr_nonnull(cl);
	ck_assert_uint_eq(h_client_u64(cl, "limits.parked"), LIMIT);
	ck_assert_uint_eq(h_client_u64(cl, "limits.refused"), FLOOD - LIMIT);
	json_free(doc);

	/* A bystander is served while the attacker waits. */
	memset(&s, 0, sizeof(s));
	axon_prep_nop(&s);
	ck_assert_int_eq(h_ring_res(&b, &s, NULL, NULL), CUDA_SUCCESS);

	/* The DONE gets through; the stream then reports the refusals once. */
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_HOST_FUNC;
	s.flags = AXON_SQE_F_DEFERRED;
	s.stream = stream;
	s.obj.arg0 = AXON_HOST_FUNC_DONE;
	s.obj.handle = token;
	ck_assert_int_eq(h_ring_post(&a, &s), 0);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_STREAM_SYNC;
	s.stream = stream;
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);

	axon_close(&a);
	axon_close(&b);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

/*
 * The legacy stream's barrier (axond/legacy.c) puts records and waits of
 * its own in front of items that cross between the default stream and a
 * blocking stream; they park on the client's behalf and count against its
 * limits: alternating the two behind a held default stream parks no more
 * than the limit, the ordering items included, and nothing per refused
 * item.
 */
START_TEST(parked_flood_across_streams)
{
	const struct json *cl;
	struct axon_ring a;
	struct axon_sqe s = { 0 };
	struct axon_cqe cqe;
	uint64_t ctx, stream, blocking, dev, token, parked;
	long rss0, rss1;
	struct json *doc;
	int i;

	ck_assert_int_eq(h_ring_connect(&a, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&a, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&a, ctx, 0, 1 << 20, &dev), 0);
	axon_prep_stream_create(&s, ctx, 0, 0);
	ck_assert_int_eq(h_ring_sync(&a, &s, &cqe, H_MS(5000)), 0);
	ck_assert_int_eq(cqe.res, CUDA_SUCCESS);
	blocking = cqe.aux[0];

	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_HOST_FUNC;
	s.stream = stream;
	s.obj.arg0 = AXON_HOST_FUNC_WAIT;
	ck_assert_int_eq(h_ring_sync(&a, &s, &cqe, H_MS(5000)), 0);
	ck_assert_int_eq(cqe.res, CUDA_SUCCESS);
	token = cqe.user_data;

	rss0 = a_proc_rss_kb(h_daemon.pid);
	for (i = 0; i < FLOOD; i++) {
		memset(&s, 0, sizeof(s));
		s.opcode = AXON_OP_MEMSET;
		s.flags = AXON_SQE_F_DEFERRED;
		s.stream = i % 2 ? blocking : stream;
		s.memset.dst = dev;
		s.memset.width = 64;
		s.memset.height = 1;
		s.memset.value = 7;
		s.memset.elem_size = 1;
		ck_assert_int_eq(post_wait_room(&a, &s), 0);
	}
	memset(&s, 0, sizeof(s));
	axon_prep_nop(&s);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);
	rss1 = a_proc_rss_kb(h_daemon.pid);
	ck_assert_msg(rss1 - rss0 < 8 * 1024, "axond grew by %ld KiB for parked work",
		      rss1 - rss0);

	doc = h_stats(&h_daemon);
	ck_assert_ptr_nonnull(doc);
	cl = h_stats_client_id(doc, a.params.client_id);
	ck_assert_ptr_nonnull(cl);
	parked = h_client_u64(cl, "limits.parked");
	ck_assert_msg(parked >= LIMIT - 2 && parked <= LIMIT, "%llu items parked",
		      (unsigned long long)parked);
	json_free(doc);

	/* The DONE releases everything; both streams then report their
	 * refusals once, and the blocking stream's memsets ran after the
	 * default stream's. */
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_HOST_FUNC;
	s.flags = AXON_SQE_F_DEFERRED;
	s.stream = stream;
	s.obj.arg0 = AXON_HOST_FUNC_DONE;
	s.obj.handle = token;
	ck_assert_int_eq(h_ring_post(&a, &s), 0);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_STREAM_SYNC;
	s.stream = blocking;
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	s.stream = stream;
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);

	axon_close(&a);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

/*
 * The byte limit, with the legacy barrier's own items in the count: they
 * used to park unadmitted, so parked_bytes could pass --max-parked-bytes,
 * and then hold_admit's "size <= max - parked_bytes" wrapped and let every
 * later item park (up to --max-parked of them, whatever their size). A
 * daemon of its own with a small byte limit: alternating the default
 * stream and a blocking stream behind a held default stream must never
 * park more bytes than the limit.
 */
START_TEST(parked_bytes_exact)
{
	static const char *const extra[] = { "--max-parked-bytes=16640", NULL };
	struct h_daemon small = { 0 };
	const struct json *cl;
	struct axon_ring a;
	struct axon_sqe s = { 0 };
	struct axon_cqe cqe;
	uint64_t ctx, stream, blocking, dev, token, bytes, parked;
	struct json *doc;
	int i;

	ck_assert_int_eq(h_daemon_start(&small, "1G", extra), 0);
	ck_assert_int_eq(h_ring_connect(&a, &small), 0);
	ck_assert_int_eq(h_ring_ctx_create(&a, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&a, ctx, 0, 1 << 20, &dev), 0);
	axon_prep_stream_create(&s, ctx, 0, 0);
	ck_assert_int_eq(h_ring_sync(&a, &s, &cqe, H_MS(5000)), 0);
	ck_assert_int_eq(cqe.res, CUDA_SUCCESS);
	blocking = cqe.aux[0];

	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_HOST_FUNC;
	s.stream = stream;
	s.obj.arg0 = AXON_HOST_FUNC_WAIT;
	ck_assert_int_eq(h_ring_sync(&a, &s, &cqe, H_MS(5000)), 0);
	ck_assert_int_eq(cqe.res, CUDA_SUCCESS);
	token = cqe.user_data;

	for (i = 0; i < 20000; i++) {
		memset(&s, 0, sizeof(s));
		s.opcode = AXON_OP_MEMSET;
		s.flags = AXON_SQE_F_DEFERRED;
		s.stream = i % 2 ? blocking : stream;
		s.memset.dst = dev;
		s.memset.width = 64;
		s.memset.height = 1;
		s.memset.value = 7;
		s.memset.elem_size = 1;
		ck_assert_int_eq(post_wait_room(&a, &s), 0);
	}
	memset(&s, 0, sizeof(s));
	axon_prep_nop(&s);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);

	doc = h_stats(&small);
	ck_assert_ptr_nonnull(doc);
	cl = h_stats_client_id(doc, a.params.client_id);
	ck_assert_ptr_nonnull(cl);
	bytes = h_client_u64(cl, "limits.parked_bytes");
	parked = h_client_u64(cl, "limits.parked");
	ck_assert_msg(bytes <= 16640, "%llu bytes parked in %llu items (limit 16640)",
		      (unsigned long long)bytes, (unsigned long long)parked);
	ck_assert_uint_gt(parked, 0);
	json_free(doc);

	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_HOST_FUNC;
	s.flags = AXON_SQE_F_DEFERRED;
	s.stream = stream;
	s.obj.arg0 = AXON_HOST_FUNC_DONE;
	s.obj.handle = token;
	ck_assert_int_eq(h_ring_post(&a, &s), 0);
	memset(&s, 0, sizeof(s));
	s.opcode = AXON_OP_STREAM_SYNC;
	s.stream = blocking;
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	s.stream = stream;
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);

	axon_close(&a);
	ck_assert_int_eq(h_wait_idle(&small, H_MS(10000)), 0);
	ck_assert_int_eq(h_daemon_stop(&small, false), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, parked_flood);
	tcase_add_test(tc, parked_flood_across_streams);
	tcase_add_test(tc, parked_bytes_exact);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = { "--max-parked=1000", NULL };

	h_init(argc, argv);
	a_lean_sanitizer();	/* RSS is compared with a baseline */
	return h_check_main("attack-parked", "1G", extra, add, 120);
}
