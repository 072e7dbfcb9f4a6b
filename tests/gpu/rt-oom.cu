// SPDX-License-Identifier: MIT
/*
 * rt-oom: running out of device memory is an ordinary, recoverable error.
 *
 *   cudaMalloc(total memory + 1 GiB)   -> cudaErrorMemoryAllocation
 *   cudaMalloc(2^62 bytes)             -> cudaErrorMemoryAllocation
 *   cudaGetLastError                   -> that error once, then cudaSuccess
 *                                         (not sticky: the context lives on)
 *   then a 64 MiB allocation, a kernel over it and a copy back all work.
 *
 * `fill` is the sim's built-in of that name (sim.md §5), so the sim runs it
 * too (gpucheck-sim). Prints error names only, no sizes (the device's total
 * differs between machines). Exits 0 when every check passed, 1 otherwise.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt-gpu.h"

extern "C" __global__ void fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

static void too_big(const char *what, size_t bytes)
{
	void *p = NULL;
	cudaError_t e = cudaMalloc(&p, bytes);

	printf("cudaMalloc(%s): %s\n", what, cudaGetErrorName(e));
	RT_CHECK(e == cudaErrorMemoryAllocation, "cudaMalloc(%s) -> %s", what,
		 cudaGetErrorName(e));
	e = cudaGetLastError();
	printf("cudaGetLastError: %s\n", cudaGetErrorName(e));
	RT_CHECK(e == cudaErrorMemoryAllocation, "last error %s", cudaGetErrorName(e));
	e = cudaGetLastError();
	printf("cudaGetLastError again: %s\n", cudaGetErrorName(e));
	RT_CHECK(e == cudaSuccess, "last error not cleared: %s", cudaGetErrorName(e));
}

int main(void)
{
	const int n = 16 << 20;	/* 64 MiB of floats */
	size_t free_b = 0, total = 0, free_after = 0, bad = 0;
	float *d = NULL, *h;

	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaFree(0));
	RT_OK(cudaMemGetInfo(&free_b, &total));
	RT_CHECK(total > 0 && free_b <= total, "free %zu of %zu", free_b, total);
	if (rt_failures)
		return 1;

	too_big("total + 1 GiB", total + (1ull << 30));
	too_big("2^62 bytes", 1ull << 62);

	RT_OK(cudaMemGetInfo(&free_after, &total));
	/* (Other clients may allocate meanwhile: only a gross leak is an error.) */
	RT_CHECK(free_after + (1ull << 30) >= free_b, "free went from %zu to %zu", free_b,
		 free_after);

	h = (float *)malloc(n * sizeof(float));
	RT_CHECK(h != NULL, "malloc");
	RT_OK(cudaMalloc((void **)&d, n * sizeof(float)));
	fill<<<n / 256, 256>>>(d, 7.0f, n);
	RT_OK(cudaGetLastError());
	RT_OK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; h && i < n; i++)
		bad += h[i] != 7.0f;
	RT_CHECK(bad == 0, "fill after the failures: %zu wrong", bad);
	printf("64 MiB allocation, kernel and copy after the failures: %s\n",
	       bad || !h ? "BAD" : "ok");
	RT_OK(cudaFree(d));
	free(h);
	return rt_done();
}
