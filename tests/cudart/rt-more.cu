// SPDX-License-Identifier: MIT
/*
 * rt-more: runtime-API calls beyond the basics that ordinary programs and
 * libraries make, each needing some driver entry point cudart resolves
 * through cuGetProcAddress: stream priorities and flags, cross-stream
 * event waits, capture queries, __device__ symbols, occupancy, limits and
 * cache preferences, pinned host memory, cudaLaunchKernel, several host
 * threads sharing the device, pitched memory with the 2D and 3D copies and
 * memsets and peer copies (issue 15: cublasSetMatrix and cuBLAS's batched
 * routines reach them), cudaProfilerStart/Stop (issue 15: without the
 * driver's cuProfilerStart in cuGetProcAddress's table they fail with
 * cudaErrorCallRequiresNewerDriver). Built and run like rt-basic (run.c).
 */
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "rt-check.h"

__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" __global__ void fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

extern "C" __global__ void iota_u32(unsigned int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (unsigned int)i;
}

/* Read and written only through cudaMemcpy{To,From}Symbol. */
__device__ float g_table[4] = { 1.0f, 2.0f, 3.0f, 4.0f };

#define N 4096

static void step(const char *what)
{
	printf("%-40s %s\n", what, rt_failures ? "(failures so far)" : "ok");
	fflush(stdout);
}

static void streams(void)
{
	cudaStream_t hi_s = NULL, lo_s = NULL;
	cudaStreamCaptureStatus cs = cudaStreamCaptureStatusActive;
	cudaEvent_t ev = NULL;
	float *d = NULL, h[N];
	int least = 0, greatest = 0, prio = 99, i, bad = 0;
	unsigned int flags = 99;

	RT_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	RT_CHECK(greatest <= least, "priority range %d..%d", least, greatest);
	RT_OK(cudaStreamCreateWithPriority(&hi_s, cudaStreamNonBlocking, greatest));
	RT_OK(cudaStreamCreateWithFlags(&lo_s, cudaStreamNonBlocking));
	RT_OK(cudaStreamGetPriority(lo_s, &prio));
	RT_OK(cudaStreamGetFlags(hi_s, &flags));
	RT_OK(cudaStreamIsCapturing(hi_s, &cs));
	RT_CHECK(cs == cudaStreamCaptureStatusNone, "capture status %d", (int)cs);
	RT_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	RT_OK(cudaMalloc((void **)&d, sizeof(h)));
	/* fill on one stream, the copy on the other after the event */
	fill<<<N / 256, 256, 0, hi_s>>>(d, 7.0f, N);
	RT_OK(cudaGetLastError());
	RT_OK(cudaEventRecord(ev, hi_s));
	RT_OK(cudaStreamWaitEvent(lo_s, ev, 0));
	RT_OK(cudaMemcpyAsync(h, d, sizeof(h), cudaMemcpyDeviceToHost, lo_s));
	RT_OK(cudaStreamSynchronize(lo_s));
	for (i = 0; i < N; i++)
		bad += h[i] != 7.0f;
	RT_CHECK(bad == 0, "fill seen through an event wait: %d wrong", bad);
	RT_OK(cudaFree(d));
	RT_OK(cudaEventDestroy(ev));
	RT_OK(cudaStreamDestroy(hi_s));
	RT_OK(cudaStreamDestroy(lo_s));
	step("priorities, flags, event waits, capture");
}

static void symbols(void)
{
	float h[4] = { 0 }, nine = 9.0f;
	void *addr = NULL;
	size_t size = 0;

	RT_OK(cudaMemcpyFromSymbol(h, g_table, sizeof(h)));
	RT_CHECK(h[0] == 1.0f && h[3] == 4.0f, "g_table initial %f %f", h[0], h[3]);
	RT_OK(cudaMemcpyToSymbol(g_table, &nine, sizeof(nine), 2 * sizeof(float)));
	RT_OK(cudaMemcpyFromSymbol(h, g_table, sizeof(h)));
	RT_CHECK(h[1] == 2.0f && h[2] == 9.0f, "g_table after write %f %f", h[1], h[2]);
	RT_OK(cudaGetSymbolAddress(&addr, g_table));
	RT_OK(cudaGetSymbolSize(&size, g_table));
	RT_CHECK(addr != NULL && size == sizeof(h), "g_table at %p, %zu bytes", addr, size);
	step("__device__ symbols");
}

static void queries(void)
{
	int blocks = 0, grid = 0, block = 0;
	size_t free_b = 0, total = 0, lim = 0;
	cudaPointerAttributes pa;
	float *d = NULL;

	/* (Not cudaFuncGetAttributes or cudaOccupancyMaxPotentialBlockSize,
	 * which uses it: cudart asks for CU_FUNC_ATTRIBUTE_CACHE_MODE_CA,
	 * which the sim does not answer. drv-tables checks the driver's
	 * cuOccupancyMaxPotentialBlockSize.) */
	RT_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, vectorAdd, 256, 0));
	RT_CHECK(blocks > 0 && blocks <= 32, "occupancy %d", blocks);
	RT_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&grid, fill, 1024, 0,
								    cudaOccupancyDefault));
	RT_CHECK(grid > 0 && grid <= 2, "occupancy %d blocks of 1024", grid);
	block = 1024;
	RT_OK(cudaFuncSetCacheConfig(vectorAdd, cudaFuncCachePreferL1));
	RT_OK(cudaDeviceGetLimit(&lim, cudaLimitStackSize));
	RT_CHECK(lim > 0, "stack size %zu", lim);
	RT_OK(cudaMemGetInfo(&free_b, &total));
	RT_CHECK(total > 0 && free_b <= total, "free %zu of %zu", free_b, total);
	RT_OK(cudaMalloc((void **)&d, 4096));
	memset(&pa, 0, sizeof(pa));
	RT_OK(cudaPointerGetAttributes(&pa, d));
	RT_CHECK(pa.type == cudaMemoryTypeDevice && pa.devicePointer == d,
		 "pointer type %d", (int)pa.type);
	RT_OK(cudaFree(d));
	printf("occupancy: %d blocks of 256/SM, %d of %d; stack %zu\n", blocks, grid,
	       block, lim);
	step("occupancy, limits, memory info");
}

/* The profiler's bracket around a piece of work; no profiler is attached,
 * so both succeed and change nothing (as natively). */
static void profiler(void)
{
	float *d = NULL;

	RT_OK(cudaProfilerStart());
	RT_OK(cudaMalloc((void **)&d, 4096));
	RT_OK(cudaMemset(d, 0, 4096));
	RT_OK(cudaDeviceSynchronize());
	RT_OK(cudaProfilerStop());
	RT_OK(cudaProfilerStop());	/* already stopped: no error since CUDA 5.0 */
	RT_OK(cudaFree(d));
	step("profiler start and stop");
}

static void pinned_and_launch(void)
{
	unsigned int *d = NULL, *h = NULL;
	int n = N, i, bad = 0;
	void *args[] = { &d, &n };

	RT_OK(cudaMallocHost((void **)&h, N * sizeof(*h)));
	RT_OK(cudaMalloc((void **)&d, N * sizeof(*d)));
	RT_OK(cudaLaunchKernel((const void *)iota_u32, dim3(N / 128), dim3(128), args, 0, 0));
	RT_OK(cudaMemcpyAsync(h, d, N * sizeof(*h), cudaMemcpyDeviceToHost, 0));
	RT_OK(cudaDeviceSynchronize());
	for (i = 0; i < N; i++)
		bad += h[i] != (unsigned int)i;
	RT_CHECK(bad == 0, "iota through cudaLaunchKernel into pinned memory: %d wrong", bad);
	RT_OK(cudaFree(d));
	RT_OK(cudaFreeHost(h));
	step("pinned memory, cudaLaunchKernel");
}

/* Pitched memory: cudaMallocPitch, cudaMemset2D[Async], cudaMemcpy2D
 * every way, cudaMemcpy3D, cudaMemcpyPeer; every byte checked. */
static void matrices(void)
{
	const size_t W = 300, H = 70, hp = 333;
	static unsigned char src[hp * H], out[hp * H], want[hp * H];
	unsigned char *d, *d2, *pin;
	size_t pitch, pitch2, i, y;
	cudaStream_t s;
	int bad = 0;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 3);
	RT_OK(cudaStreamCreate(&s));
	RT_OK(cudaMallocPitch((void **)&d, &pitch, W + 8, H + 2));
	RT_OK(cudaMallocPitch((void **)&d2, &pitch2, W + 8, H + 2));
	RT_OK(cudaMallocHost((void **)&pin, hp * H));
	RT_OK(cudaMemset2D(d, pitch, 0x11, W + 8, H + 2));
	RT_OK(cudaMemset2DAsync(d + pitch, pitch, 0x22, 4, H, s));
	RT_OK(cudaMemcpy2DAsync(d + pitch + 4, pitch, src, hp, W, H, cudaMemcpyHostToDevice, s));
	RT_OK(cudaMemcpy2DAsync(d2, pitch2, d + pitch, pitch, W + 4, H, cudaMemcpyDefault, s));
	RT_OK(cudaMemcpy2DAsync(pin, hp, d2, pitch2, W + 4, H, cudaMemcpyDeviceToHost, s));
	RT_OK(cudaStreamSynchronize(s));
	RT_OK(cudaMemcpy2D(out, hp, d + pitch, pitch, W + 4, H, cudaMemcpyDeviceToHost));
	for (y = 0; y < H; y++)
		for (i = 0; i < W + 4; i++) {
			unsigned char v = i < 4 ? 0x22 : src[y * hp + i - 4];

			bad += out[y * hp + i] != v;
			bad += pin[y * hp + i] != v;
		}
	RT_CHECK(bad == 0, "2D copies and memsets: %d wrong", bad);
	/* 3D: two slices of 5 rows of 40 bytes, the source's slices 9 rows
	 * apart, into d2 from its row 10; then a peer copy back. */
	{
		cudaMemcpy3DParms p = {};

		p.srcPtr = make_cudaPitchedPtr(src, hp, W, 9);
		p.srcPos = make_cudaPos(2, 1, 1);
		p.dstPtr = make_cudaPitchedPtr(d2 + 10 * pitch2, pitch2, W, 5);
		p.extent = make_cudaExtent(40, 5, 2);
		p.kind = cudaMemcpyHostToDevice;
		RT_OK(cudaMemcpy3D(&p));
		RT_OK(cudaMemcpyPeer(d, 0, d2 + 10 * pitch2, 0, 40));
		RT_OK(cudaMemcpy2D(want, 40, d2 + 10 * pitch2, pitch2, 40, 10, cudaMemcpyDeviceToHost));
		RT_OK(cudaMemcpy(out, d, 40, cudaMemcpyDeviceToHost));
		for (y = 0; y < 10; y++)
			for (i = 0; i < 40; i++)
				bad += want[y * 40 + i] !=
				       src[((1 + y / 5) * 9 + 1 + y % 5) * hp + 2 + i];
		bad += memcmp(out, want, 40) != 0;
		RT_CHECK(bad == 0, "3D and peer copies: %d wrong", bad);
	}
	RT_OK(cudaFreeHost(pin));
	RT_OK(cudaFree(d));
	RT_OK(cudaFree(d2));
	RT_OK(cudaStreamDestroy(s));
	step("pitched memory, 2D/3D/peer copies");
}

static void *worker(void *arg)
{
	int id = (int)(long)arg, i, bad = 0;
	cudaStream_t s = NULL;
	float *a = NULL, h[N];

	RT_OK(cudaSetDevice(0));
	RT_OK(cudaStreamCreate(&s));
	RT_OK(cudaMalloc((void **)&a, sizeof(h)));
	for (int round = 0; round < 20; round++) {
		fill<<<N / 256, 256, 0, s>>>(a, (float)(id * 100 + round), N);
		vectorAdd<<<N / 256, 256, 0, s>>>(a, a, a, N);
		RT_OK(cudaMemcpyAsync(h, a, sizeof(h), cudaMemcpyDeviceToHost, s));
		RT_OK(cudaStreamSynchronize(s));
		for (i = 0; i < N; i++)
			bad += h[i] != 2.0f * (float)(id * 100 + round);
	}
	RT_CHECK(bad == 0, "thread %d: %d wrong", id, bad);
	RT_OK(cudaFree(a));
	RT_OK(cudaStreamDestroy(s));
	return NULL;
}

static void threads(void)
{
	pthread_t t[4];
	int i;

	for (i = 0; i < 4; i++)
		RT_CHECK(pthread_create(&t[i], NULL, worker, (void *)(long)i) == 0, "thread %d", i);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	step("four host threads, a stream each");
}

int main(void)
{
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaFree(0));	/* initialise the context */
	if (rt_failures)
		return 1;
	streams();
	symbols();
	queries();
	profiler();
	pinned_and_launch();
	matrices();
	threads();
	RT_OK(cudaGetLastError());
	rt_check_process();
	printf("%s: %d failure(s)\n", rt_failures ? "FAIL" : "PASS", rt_failures);
	return rt_failures ? 1 : 0;
}
