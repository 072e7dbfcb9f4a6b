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

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_profiler);
	tcase_add_test(tc, test_occupancy);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-compatraw", "4G", NULL, add_tests, 120);
}
