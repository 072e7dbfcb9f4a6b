// SPDX-License-Identifier: MIT
/*
 * integration-compatraw: the daemon's own checks of PROFILER and
 * OCCUPANCY, through libaxon directly (the shim checks much of this first,
 * so only raw SQEs reach them):
 *
 *   profiler   start and stop in a context succeed (the sim has no
 *              profiler to tell); another value than 0 or 1, a reserved
 *              field, a handle that names no context of this client are
 *              refused
 *   occupancy  the driver's checks in its order: a cluster with some
 *              dimensions 0 before a grid or block of 0, a grid not made
 *              of whole clusters; reserved fields, an unknown query and a
 *              bad function handle are refused; a block larger than any
 *              function takes is 0 clusters, not an error
 *   streamattr the attributes a stream takes, set; an access policy
 *              window outside the client's memory (another client's
 *              addresses, or none), one longer than the device's largest
 *              window, a hit ratio above 1, an id a stream does not take,
 *              a policy of 0, a reserved field, a handle that names no
 *              stream are refused
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>

#include "harness.h"

struct cl {
	struct axon_ring r;
	uint64_t ctx, stream;
};

static void cl_open(struct cl *c)
{
	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(h_ring_connect(&c->r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&c->r, &c->ctx, &c->stream), 0);
}

static struct axon_sqe obj(unsigned int op, uint64_t h, uint64_t a0, uint64_t a1)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, op, h, a0, a1);
	return s;
}

#define EXPECT_SQE(c, sqe, want, aux0)					\
	do {								\
		int32_t got_ = h_ring_res(&(c)->r, &(sqe), (aux0), NULL); \
		ck_assert_msg(got_ == (want), "line %d: res %d, expected %d", \
			      __LINE__, got_, (int)(want));		\
	} while (0)

/* Loads the test cubin and finds fill. */
static uint64_t fill_func(struct cl *c)
{
	FILE *f = fopen(h_kernel_path("cubin"), "rb");
	struct axon_sqe sqe;
	uint64_t mod = 0, fn = 0;
	size_t len;

	ck_assert(f != NULL);
	len = fread(c->r.data, 1, c->r.data_size / 2, f);
	fclose(f);
	sqe = obj(AXON_OP_MODULE_LOAD, c->ctx, 0, 0);
	sqe.obj.data_len = (uint32_t)len;
	ck_assert_int_eq(h_ring_res(&c->r, &sqe, &mod, NULL), 0);
	strcpy((char *)c->r.data, "fill");
	sqe = obj(AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
	sqe.obj.data_len = sizeof(struct axon_func_info);
	ck_assert_int_eq(h_ring_res(&c->r, &sqe, &fn, NULL), 0);
	return fn;
}

START_TEST(test_profiler)
{
	struct axon_sqe s;
	struct cl c;

	cl_open(&c);
	s = (struct axon_sqe){ 0 };
	axon_prep_profiler(&s, c.ctx, 1);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, NULL);
	axon_prep_profiler(&s, c.ctx, 1);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, NULL);
	axon_prep_profiler(&s, c.ctx, 0);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, NULL);
	axon_prep_profiler(&s, c.ctx, 2);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	axon_prep_profiler(&s, c.ctx, 0);
	s.profiler.resv0 = 1;
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	s = (struct axon_sqe){ 0 };
	axon_prep_profiler(&s, c.ctx + 1, 1);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_CONTEXT, NULL);
	axon_prep_profiler(&s, 0, 1);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_CONTEXT, NULL);
	axon_close(&c.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static struct axon_sqe occ(uint64_t fn, uint32_t gx, uint32_t gy, uint16_t bx, uint8_t cx,
			   uint8_t cy, uint8_t cz, uint8_t query)
{
	const uint32_t grid[3] = { gx, gy, 1 };
	const uint16_t block[3] = { bx, 1, 1 };
	const uint8_t cluster[3] = { cx, cy, cz };
	struct axon_sqe s = { 0 };

	axon_prep_occupancy(&s, fn, grid, block, cluster, query, 0);
	return s;
}

START_TEST(test_occupancy)
{
	const uint8_t act = AXON_OCC_MAX_ACTIVE_CLUSTERS, pot = AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE;
	uint64_t fn, v = 99;
	struct axon_sqe s;
	struct cl c;

	cl_open(&c);
	fn = fill_func(&c);
	s = occ(fn, 4, 1, 128, 2, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, &v);
	ck_assert_uint_gt(v, 0);
	s = occ(fn, 4, 1, 128, 0, 0, 0, act);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, &v);
	ck_assert_uint_eq(v, 0);
	s = occ(fn, 4, 1, 128, 0, 0, 0, pot);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, &v);
	ck_assert_uint_eq(v, 8);
	/* The cluster's zero check comes before the grid's. */
	s = occ(fn, 4, 0, 128, 2, 0, 1, act);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_CLUSTER_SIZE, NULL);
	s = occ(fn, 4, 0, 128, 2, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	s = occ(fn, 4, 1, 0, 2, 1, 1, pot);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	s = occ(fn, 3, 1, 128, 2, 1, 1, pot);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_CLUSTER_SIZE, NULL);
	/* Too large for a portable size; then allowed, but too large to fit. */
	s = occ(fn, 32, 1, 128, 16, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_CLUSTER_SIZE, NULL);
	s = obj(AXON_OP_FUNC_SET_ATTR, fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, NULL);
	s = occ(fn, 32, 1, 128, 16, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, &v);
	ck_assert_uint_gt(v, 0);
	s = occ(fn, 255, 1, 128, 255, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, &v);
	ck_assert_uint_eq(v, 0);
	/* More threads than the function takes: no cluster fits. */
	s = occ(fn, 4, 1, 2048, 2, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_SUCCESS, &v);
	ck_assert_uint_eq(v, 0);
	s = occ(fn, 4, 1, 128, 2, 1, 1, 2);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	s = occ(fn, 4, 1, 128, 2, 1, 1, act);
	s.occupancy.resv0 = 1;
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	s = occ(fn, 4, 1, 128, 2, 1, 1, act);
	s.occupancy.resv1 = 1;
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	s = occ(fn + 1, 4, 1, 128, 2, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_HANDLE, NULL);
	s = occ(c.ctx, 4, 1, 128, 2, 1, 1, act);
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_HANDLE, NULL);
	axon_close(&c.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static int32_t set_attr(struct cl *c, uint64_t stream, uint32_t id, uint64_t v0, uint64_t v1,
			uint64_t v2, uint64_t v3)
{
	const uint64_t val[4] = { v0, v1, v2, v3 };
	struct axon_sqe s = { 0 };

	axon_prep_stream_set_attr(&s, stream, id, val);
	return h_ring_res(&c->r, &s, NULL, NULL);
}

START_TEST(test_streamattr)
{
	const uint64_t half = 0x3f000000, props = 2 | (1ULL << 32);	/* 0.5f; PERSISTING, STREAMING */
	uint64_t mem = 0;
	struct axon_sqe s;
	struct cl c, other;

	cl_open(&c);
	cl_open(&other);
	ck_assert_int_eq(h_ring_map(&c.r, c.ctx, 0, 1 << 20, &mem), 0);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, mem,
				  4096, half, props), CUDA_SUCCESS);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, 0, 0,
				  0, 0), CUDA_SUCCESS);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
				  CU_SYNC_POLICY_SPIN, 0, 0, 0), CUDA_SUCCESS);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_PRIORITY, (uint64_t)-9, 0, 0,
				  0), CUDA_SUCCESS);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, 1, 0, 0, 0),
			 CUDA_SUCCESS);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP,
				  3 | 2 << 8, 0, 0, 0), CUDA_SUCCESS);
	/* The window names memory: only this client's. */
	ck_assert_int_eq(set_attr(&other, other.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
				  mem, 4096, half, props), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, 0x1000,
				  4096, half, props), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, mem,
				  (uint64_t)-4096, half, props), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, mem,
				  1ULL << 30, half, props), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, mem,
				  4096, 0x3fc00000 /* 1.5f */, props), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW, mem,
				  4096, half, 3), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_COOPERATIVE, 1, 0, 0, 0),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 2, 0, 0, 0),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, 0, 0,
				  0, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY, 1, 1,
				  0, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_PRIORITY, 1ULL << 40, 0, 0, 0),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN, 2, 0, 0, 0),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set_attr(&c, c.stream, CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, 4, 0, 0,
				  0), CUDA_ERROR_INVALID_VALUE);
	/* A handle no stream of this client has. */
	ck_assert_int_eq(set_attr(&c, c.stream + 0x100, CU_LAUNCH_ATTRIBUTE_PRIORITY, 0, 0, 0, 0),
			 CUDA_ERROR_INVALID_HANDLE);
	s = (struct axon_sqe){ 0 };
	axon_prep_stream_set_attr(&s, c.stream, CU_LAUNCH_ATTRIBUTE_PRIORITY,
				  (const uint64_t[4]){ 0, 0, 0, 0 });
	s.stream_set_attr.resv0 = 1;
	EXPECT_SQE(&c, s, CUDA_ERROR_INVALID_VALUE, NULL);
	axon_close(&other.r);
	axon_close(&c.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_profiler);
	tcase_add_test(tc, test_occupancy);
	tcase_add_test(tc, test_streamattr);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-compatraw", "4G", NULL, add_tests, 120);
}
