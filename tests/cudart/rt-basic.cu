// SPDX-License-Identifier: MIT
/*
 * rt-basic: an ordinary CUDA runtime-API program, built by nvcc twice (static
 * cudart, nvcc's default, and -cudart shared) and run through axon by
 * tests/cudart/run.c, or natively on a GPU machine. Nothing in it knows
 * about axon except the end-of-run process check (rt-check.h).
 *
 * The kernels are copies of tests/sim-kernels/kernels.cu ones (same names,
 * parameters and arithmetic), so the sim runs its built-in twins.
 *
 * Prints one line per step; exits 0 when every check passed, 1 otherwise.
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void scale(float *p, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * s;
}

extern "C" __global__ void add_one_u8(unsigned char *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (unsigned char)(p[i] + 1);
}

__global__ void add2d(const float *a, const float *b, float *c, int width,
		      int height, int pitch)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < width && y < height)
		c[y * pitch + x] = a[y * pitch + x] + b[y * pitch + x];
}

extern "C" __global__ void iota3d(unsigned int *p, int nx, int ny, int nz)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	int z = blockIdx.z * blockDim.z + threadIdx.z;
	if (x < nx && y < ny && z < nz) {
		unsigned int i = (unsigned int)((z * ny + y) * nx + x);
		p[i] = i;
	}
}

extern "C" __global__ void nop(void)
{
}

#define N	100000
#define BLOCK	256
#define GRID(n)	(((n) + BLOCK - 1) / BLOCK)

static float ha[N], hb[N], hc[N];

static void step(const char *what)
{
	printf("%-40s %s\n", what, rt_failures ? "(failures so far)" : "ok");
	fflush(stdout);
}

static void devices(void)
{
	cudaDeviceProp p;
	int n = 0, dev = -1, drv = 0, rt = 0;

	RT_OK(cudaGetDeviceCount(&n));
	RT_CHECK(n >= 1, "%d devices", n);
	RT_OK(cudaDriverGetVersion(&drv));
	RT_OK(cudaRuntimeGetVersion(&rt));
	RT_CHECK(drv >= 12000 && rt >= 12000, "driver %d runtime %d", drv, rt);
	memset(&p, 0, sizeof(p));
	RT_OK(cudaGetDeviceProperties(&p, 0));
	RT_CHECK(p.name[0] != '\0', "empty device name");
	RT_CHECK(p.major >= 7, "compute capability %d.%d", p.major, p.minor);
	RT_CHECK(p.totalGlobalMem > 0 && p.multiProcessorCount > 0 && p.warpSize == 32,
		 "mem %zu sms %d warp %d", p.totalGlobalMem, p.multiProcessorCount,
		 p.warpSize);
	RT_CHECK(p.maxThreadsPerBlock >= 1024, "maxThreadsPerBlock %d", p.maxThreadsPerBlock);
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaGetDevice(&dev));
	RT_CHECK(dev == 0, "cudaGetDevice %d", dev);
	printf("device 0: %s, cc %d.%d, %d SMs, driver %d, runtime %d\n", p.name,
	       p.major, p.minor, p.multiProcessorCount, drv, rt);
	step("devices");
}

static void vector_add(void)
{
	float *a = NULL, *b = NULL, *c = NULL;
	int i, bad = 0;

	for (i = 0; i < N; i++) {
		ha[i] = (float)i;
		hb[i] = 2.0f * (float)i;
	}
	RT_OK(cudaMalloc((void **)&a, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&b, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&c, N * sizeof(float)));
	RT_OK(cudaMemcpy(a, ha, N * sizeof(float), cudaMemcpyHostToDevice));
	RT_OK(cudaMemcpy(b, hb, N * sizeof(float), cudaMemcpyHostToDevice));
	vectorAdd<<<GRID(N), BLOCK>>>(a, b, c, N);
	RT_OK(cudaGetLastError());
	RT_OK(cudaDeviceSynchronize());
	memset(hc, 0, sizeof(hc));
	RT_OK(cudaMemcpy(hc, c, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (i = 0; i < N; i++)
		bad += hc[i] != 3.0f * (float)i;
	RT_CHECK(bad == 0, "vectorAdd: %d wrong, c[7] = %f", bad, hc[7]);

	/* memset, then device-to-device copy back over it */
	RT_OK(cudaMemset(c, 0, N * sizeof(float)));
	RT_OK(cudaMemcpy(hc, c, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (i = bad = 0; i < N; i++)
		bad += hc[i] != 0.0f;
	RT_CHECK(bad == 0, "cudaMemset 0: %d nonzero", bad);
	RT_OK(cudaMemcpy(c, a, N * sizeof(float), cudaMemcpyDeviceToDevice));
	RT_OK(cudaMemcpy(hc, c, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (i = bad = 0; i < N; i++)
		bad += hc[i] != (float)i;
	RT_CHECK(bad == 0, "cudaMemcpy D2D: %d wrong", bad);

	RT_OK(cudaFree(a));
	RT_OK(cudaFree(b));
	RT_OK(cudaFree(c));
	step("malloc, memcpy, vectorAdd, memset, free");
}

static void bytes(void)
{
	unsigned char *p = NULL, h[4096];
	int i, bad = 0;

	RT_OK(cudaMalloc((void **)&p, sizeof(h)));
	RT_OK(cudaMemset(p, 0x5a, sizeof(h)));
	add_one_u8<<<GRID(4096), BLOCK>>>(p, 4000);
	RT_OK(cudaGetLastError());
	RT_OK(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDeviceToHost));
	for (i = 0; i < 4096; i++)
		bad += h[i] != (i < 4000 ? 0x5b : 0x5a);
	RT_CHECK(bad == 0, "memset 0x5a + add_one_u8: %d wrong (h[0] %#x)", bad, h[0]);
	RT_OK(cudaFree(p));
	step("memset bytes, add_one_u8");
}

static void streams_and_events(void)
{
	cudaStream_t s = NULL;
	cudaEvent_t e0 = NULL, e1 = NULL;
	float *x = NULL, *y = NULL, ms = -1.0f;
	int i, bad = 0;

	RT_OK(cudaStreamCreate(&s));
	RT_OK(cudaEventCreate(&e0));
	RT_OK(cudaEventCreate(&e1));
	RT_OK(cudaMalloc((void **)&x, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&y, N * sizeof(float)));
	for (i = 0; i < N; i++)
		ha[i] = (float)(i % 1000);
	RT_OK(cudaEventRecord(e0, s));
	RT_OK(cudaMemcpyAsync(x, ha, N * sizeof(float), cudaMemcpyHostToDevice, s));
	fill<<<GRID(N), BLOCK, 0, s>>>(y, 1.5f, N);
	saxpy<<<GRID(N), BLOCK, 0, s>>>(N, 2.0f, x, y);
	scale<<<GRID(N), BLOCK, 0, s>>>(y, 0.5f, N);
	RT_OK(cudaGetLastError());
	RT_OK(cudaEventRecord(e1, s));
	RT_OK(cudaMemcpyAsync(hc, y, N * sizeof(float), cudaMemcpyDeviceToHost, s));
	RT_OK(cudaStreamSynchronize(s));
	RT_OK(cudaStreamQuery(s));
	RT_OK(cudaEventSynchronize(e1));
	RT_OK(cudaEventQuery(e1));
	RT_OK(cudaEventElapsedTime(&ms, e0, e1));
	RT_CHECK(ms >= 0.0f, "elapsed %f ms", ms);
	for (i = 0; i < N; i++)
		bad += hc[i] != (2.0f * (float)(i % 1000) + 1.5f) * 0.5f;
	RT_CHECK(bad == 0, "fill/saxpy/scale on a stream: %d wrong, y[3] = %f", bad, hc[3]);
	RT_OK(cudaEventDestroy(e0));
	RT_OK(cudaEventDestroy(e1));
	RT_OK(cudaStreamDestroy(s));
	RT_OK(cudaFree(x));
	RT_OK(cudaFree(y));
	printf("stream work took %.3f ms by events\n", ms);
	step("streams, events, async copies");
}

static void grids(void)
{
	const int w = 300, h = 70, nx = 19, ny = 7, nz = 5;
	float *a = NULL, *b = NULL, *c = NULL;
	unsigned int *p = NULL, hp[19 * 7 * 5];
	int i, bad = 0;

	RT_OK(cudaMalloc((void **)&a, w * h * sizeof(float)));
	RT_OK(cudaMalloc((void **)&b, w * h * sizeof(float)));
	RT_OK(cudaMalloc((void **)&c, w * h * sizeof(float)));
	for (i = 0; i < w * h; i++) {
		ha[i] = (float)i;
		hb[i] = 1.0f;
	}
	RT_OK(cudaMemcpy(a, ha, w * h * sizeof(float), cudaMemcpyHostToDevice));
	RT_OK(cudaMemcpy(b, hb, w * h * sizeof(float), cudaMemcpyHostToDevice));
	add2d<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(a, b, c, w, h, w);
	RT_OK(cudaGetLastError());
	RT_OK(cudaMemcpy(hc, c, w * h * sizeof(float), cudaMemcpyDeviceToHost));
	for (i = 0; i < w * h; i++)
		bad += hc[i] != (float)i + 1.0f;
	RT_CHECK(bad == 0, "add2d: %d wrong", bad);

	RT_OK(cudaMalloc((void **)&p, sizeof(hp)));
	iota3d<<<dim3(3, 2, 2), dim3(8, 4, 4)>>>(p, nx, ny, nz);
	nop<<<1, 1>>>();
	RT_OK(cudaGetLastError());
	RT_OK(cudaMemcpy(hp, p, sizeof(hp), cudaMemcpyDeviceToHost));
	for (i = bad = 0; i < nx * ny * nz; i++)
		bad += hp[i] != (unsigned int)i;
	RT_CHECK(bad == 0, "iota3d: %d wrong", bad);
	RT_OK(cudaFree(a));
	RT_OK(cudaFree(b));
	RT_OK(cudaFree(c));
	RT_OK(cudaFree(p));
	step("2-D and 3-D grids, no-argument kernel");
}

static void errors(void)
{
	cudaError_t e;
	void *p = NULL;

	RT_CHECK(strcmp(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue") == 0,
		 "cudaGetErrorName: %s", cudaGetErrorName(cudaErrorInvalidValue));
	/* An impossible block: the launch fails, and the error is reported
	 * once (not sticky), by cudaGetLastError or at the latest by the next
	 * synchronisation. */
	nop<<<1, 4096>>>();
	e = cudaGetLastError();
	if (e == cudaSuccess) {
		/* Reported by the synchronisation, which also makes it the
		 * last error: take it off once more. */
		e = cudaDeviceSynchronize();
		RT_CHECK(cudaGetLastError() == e, "last error is not the sync's");
	}
	RT_CHECK(e != cudaSuccess, "a 4096-thread block launched");
	printf("oversized block: %s\n", cudaGetErrorName(e));
	RT_OK(cudaGetLastError());
	RT_OK(cudaDeviceSynchronize());
	/* ...and the device is still usable. */
	RT_OK(cudaMalloc(&p, 1024));
	nop<<<1, 1>>>();
	RT_OK(cudaGetLastError());
	RT_OK(cudaDeviceSynchronize());
	RT_OK(cudaFree(p));
	step("errors");
}

/* After a reset cudart builds its state again on the next call. */
static void after_reset(void)
{
	float *a = NULL, *c = NULL;
	int i, bad = 0;

	RT_OK(cudaDeviceReset());
	for (i = 0; i < 1000; i++)
		ha[i] = (float)i;
	RT_OK(cudaMalloc((void **)&a, 1000 * sizeof(float)));
	RT_OK(cudaMalloc((void **)&c, 1000 * sizeof(float)));
	RT_OK(cudaMemcpy(a, ha, 1000 * sizeof(float), cudaMemcpyHostToDevice));
	vectorAdd<<<GRID(1000), BLOCK>>>(a, a, c, 1000);
	RT_OK(cudaGetLastError());
	RT_OK(cudaMemcpy(hc, c, 1000 * sizeof(float), cudaMemcpyDeviceToHost));
	for (i = 0; i < 1000; i++)
		bad += hc[i] != 2.0f * (float)i;
	RT_CHECK(bad == 0, "vectorAdd after reset: %d wrong", bad);
	RT_OK(cudaFree(a));
	RT_OK(cudaFree(c));
	step("cudaDeviceReset, then work again");
}

int main(void)
{
	devices();
	if (rt_failures)	/* nothing else can work */
		return 1;
	vector_add();
	bytes();
	streams_and_events();
	grids();
	errors();
	after_reset();
	rt_check_process();
	printf("%s: %d failure(s)\n", rt_failures ? "FAIL" : "PASS", rt_failures);
	return rt_failures ? 1 : 0;
}
