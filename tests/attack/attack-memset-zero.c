// SPDX-License-Identifier: MIT
/*
 * attack-memset-zero: memsets with a zero extent. MEMSET width 0, height 2,
 * pitch 0 divided by the pitch in axond's overflow check (SIGFPE: one
 * request, from an unmodified program too — cuMemsetD2D8(p, 0, 0, 0, 2) —
 * ended the daemon and every client), and zero-length memsets skipped the
 * range check, so the sim formed a pointer outside the client's window for
 * any destination. A memset of nothing does nothing and succeeds, as the
 * driver's does; the destination of a real one is still checked; the daemon
 * lives and the memory around stays untouched.
 */
#include <check.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

static struct axon_sqe mset(uint64_t stream, uint64_t dst, uint64_t width, uint64_t height,
			    uint64_t pitch, uint32_t elem)
{
	struct axon_sqe s = { .opcode = AXON_OP_MEMSET, .stream = stream };

	s.memset.dst = dst;
	s.memset.width = width;
	s.memset.height = height;
	s.memset.pitch = pitch;
	s.memset.value = 0x5a;
	s.memset.elem_size = elem;
	return s;
}

START_TEST(zero_extent)
{
	static const struct { uint64_t width, height, pitch; } cases[] = {
		{ 0, 2, 0 }, { 0, 1, 0 }, { 0, 3, 7 }, { 0, UINT64_MAX, 0 },
		{ 0, 2, UINT64_MAX },
	};
	static const uint64_t dsts[] = { 0, 1, UINT64_MAX, 0x1000 };
	struct axon_ring r;
	uint64_t ctx, stream, buf;
	unsigned int i, j, e;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, 1 << 20, &buf), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (j = 0; j < sizeof(dsts) / sizeof(dsts[0]); j++) {
			for (e = 1; e <= 4; e *= 2) {
				struct axon_sqe s = mset(stream, dsts[j], cases[i].width,
							 cases[i].height, cases[i].pitch, e);
				int32_t res = h_ring_res(&r, &s, NULL, NULL);

				ck_assert_msg(res == CUDA_SUCCESS,
					      "memset w=0 h=%llu pitch=%llu dst=%#llx elem=%u: res %d",
					      (unsigned long long)cases[i].height,
					      (unsigned long long)cases[i].pitch,
					      (unsigned long long)dsts[j], e, res);
			}
		}
	}
	/* A real memset is still checked, and the daemon still serves. */
	{
		struct axon_sqe bad = mset(stream, buf + (1 << 20), 1, 2, 0, 1);
		struct axon_sqe good = mset(stream, buf, 16, 2, 32, 1);

		ck_assert_int_eq(h_ring_res(&r, &bad, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
		bad = mset(stream, buf + (1 << 20) - 8, 16, 1, 0, 1);
		ck_assert_int_eq(h_ring_res(&r, &bad, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(h_ring_res(&r, &good, NULL, NULL), CUDA_SUCCESS);
	}
	axon_close(&r);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, zero_extent);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-memset-zero", "1G", NULL, add, 60);
}
