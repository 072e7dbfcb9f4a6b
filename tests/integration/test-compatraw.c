// SPDX-License-Identifier: MIT
/*
 * integration-compatraw: the daemon's own checks of PROFILER, through libaxon directly (the shim checks much of this first,
 * so only raw SQEs reach them):
 *
 *   profiler   start and stop in a context succeed (the sim has no
 *              profiler to tell); another value than 0 or 1, a reserved
 *              field, a handle that names no context of this client are
 *              refused
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

#define EXPECT_SQE(c, sqe, want, aux0)					\
	do {								\
		int32_t got_ = h_ring_res(&(c)->r, &(sqe), (aux0), NULL); \
		ck_assert_msg(got_ == (want), "line %d: res %d, expected %d", \
			      __LINE__, got_, (int)(want));		\
	} while (0)

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

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_profiler);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-compatraw", "4G", NULL, add_tests, 120);
}
