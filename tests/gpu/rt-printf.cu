// SPDX-License-Identifier: MIT
/*
 * rt-printf: device-side printf, whose lines the driver prints on the host
 * at synchronization points. Every line's content and place is fixed:
 *
 *   formats   one thread: %d %u %x %lld %f %e %g %s %c, widths, precision
 *   turns     one block of 64 threads printing one after another
 *             (__syncthreads between turns), so in thread order
 *   launches  five launches on one stream, one synchronization: in launch
 *             order
 *   many      one thread, 500 lines (about 12 KiB of the printf buffer)
 *   host      a host line after each synchronization, which must follow
 *             every device line before it
 *
 * Exits 0 when every call succeeded (the lines themselves are checked by
 * comparing with the native run).
 */
#include <cuda_runtime.h>
#include <stdio.h>

#include "rt-gpu.h"

__global__ void formats(int i, unsigned int u, long long ll, float f, double d)
{
	printf("int %d, negative %d, unsigned %u, hex %x, long long %lld\n", i, -i, u, u, ll);
	printf("float %f, exp %.3e, general %g, string %s, char %c\n", f, d, d * 1e-9,
	       "axon", 'x');
	printf("widths [%5d] [%-5d] [%05.1f] [%8.3s]\n", i, i, f, "truncated");
}

__global__ void turns(void)
{
	for (int k = 0; k < blockDim.x; k++) {
		if (threadIdx.x == k)
			printf("turn %2d: thread %d of block %d\n", k, threadIdx.x, blockIdx.x);
		__syncthreads();
	}
}

__global__ void hello(int launch)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		printf("launch %d: hello from the device\n", launch);
}

__global__ void many(int n)
{
	for (int i = 0; i < n; i++)
		printf("line %3d of %d\n", i + 1, n);
}

int main(void)
{
	size_t fifo = 0;
	cudaStream_t s = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaDeviceGetLimit(&fifo, cudaLimitPrintfFifoSize));
	RT_CHECK(fifo >= 64 * 1024, "printf buffer of %zu bytes", fifo);
	printf("host: printf buffer of at least 64 KiB: %s\n", fifo >= 64 * 1024 ? "yes" : "no");

	formats<<<1, 1>>>(42, 0xdeadbeefu, -1234567890123ll, 3.25f, 6.02214076e23);
	RT_OK(cudaGetLastError());
	RT_OK(cudaDeviceSynchronize());
	printf("host: after formats\n");

	turns<<<1, 64>>>();
	RT_OK(cudaGetLastError());
	RT_OK(cudaDeviceSynchronize());
	printf("host: after turns\n");

	RT_OK(cudaStreamCreate(&s));
	for (int i = 0; i < 5; i++)
		hello<<<4, 32, 0, s>>>(i);
	RT_OK(cudaGetLastError());
	RT_OK(cudaStreamSynchronize(s));
	printf("host: after five launches\n");

	many<<<1, 1, 0, s>>>(500);
	RT_OK(cudaGetLastError());
	RT_OK(cudaStreamSynchronize(s));
	printf("host: after 500 lines\n");
	RT_OK(cudaStreamDestroy(s));
	return rt_done();
}
