// SPDX-License-Identifier: MIT
/*
 * rt-assert: a device-side assert() that fails.
 *
 *   1. check(p, 7) over values none of which is 7: passes, cudaSuccess
 *   2. check(p, 42) where p[0] is 42: the driver prints the assertion
 *      message (file, line, function, block, thread, expression) on stderr
 *      and the next synchronization returns cudaErrorAssert
 *   3. the error is sticky: cudaMalloc and cudaGetLastError report it too
 *
 * The program prints each error's name and text and exits 0 when they are
 * what CUDA documents (so the native run passes too); gpucheck.sh compares
 * stdout and stderr, the assertion line included, with the native run's.
 */
#include <assert.h>
#include <cuda_runtime.h>
#include <stdio.h>

#include "rt-gpu.h"

__global__ void check(const int *p, int bad)
{
	assert(p[threadIdx.x] != bad);
}

static void show(const char *what, cudaError_t e)
{
	printf("%s: %s: %s\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
}

int main(void)
{
	int h[32], *d = NULL;
	void *more = NULL;
	cudaError_t e;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < 32; i++)
		h[i] = 42 + i;
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaMalloc((void **)&d, sizeof(h)));
	RT_OK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	if (rt_failures)
		return rt_done();

	check<<<1, 32>>>(d, 7);
	e = cudaDeviceSynchronize();
	show("assert that holds, cudaDeviceSynchronize", e);
	RT_CHECK(e == cudaSuccess, "a passing assert failed");

	/* One thread, so one message: thread 0 sees 42. */
	check<<<1, 1>>>(d, 42);
	e = cudaDeviceSynchronize();
	fflush(stderr);
	show("assert that fails, cudaDeviceSynchronize", e);
	RT_CHECK(e == cudaErrorAssert, "got %s", cudaGetErrorName(e));

	e = cudaMalloc(&more, 4096);
	show("then cudaMalloc", e);
	RT_CHECK(e == cudaErrorAssert, "not sticky: cudaMalloc %s", cudaGetErrorName(e));
	e = cudaGetLastError();
	show("then cudaGetLastError", e);
	RT_CHECK(e == cudaErrorAssert, "last error %s", cudaGetErrorName(e));
	return rt_done();
}
