/* SPDX-License-Identifier: MIT */
/*
 * rt-gpu.h - what the runtime-API programs of tests/gpu/ share: checks that
 * count failures (from any thread) and report them on stderr, and the last
 * line every program prints. Nothing here prints addresses or timings: the
 * programs' output is compared between a native run and a run through axon
 * (tests/gpu/gpucheck.sh). Whether the process went through axon is checked
 * from outside, by isocheck.so.
 */
#ifndef AXON_TESTS_GPU_RT_GPU_H
#define AXON_TESTS_GPU_RT_GPU_H

#include <stdio.h>

static int rt_failures;

#define RT_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,	\
				__LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			__atomic_fetch_add(&rt_failures, 1,		\
					   __ATOMIC_RELAXED);		\
		}							\
	} while (0)

/* A CUDA runtime call that must succeed. */
#define RT_OK(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		RT_CHECK(e_ == cudaSuccess, "%s -> %s (%s)", #call,	\
			 cudaGetErrorName(e_), cudaGetErrorString(e_));	\
	} while (0)

/* The last line and the exit status. */
static inline int rt_done(void)
{
	printf("%s: %d failure(s)\n", rt_failures ? "FAIL" : "PASS", rt_failures);
	return rt_failures ? 1 : 0;
}

#endif
