// SPDX-License-Identifier: MIT
/*
 * rt-streams: streams, events and the order between them.
 *
 *   priorities      the device's range; streams created at both ends report
 *                   the priority they were given; flags read back
 *   four streams    each its own chain (fill, 10 x scale) between two timed
 *                   events; results right, elapsed times >= 0
 *   wait event      stream A is held by a host function (a gate) in front of
 *                   fill + 20 x scale + event E; stream B waits on E, then
 *                   saxpy from A's buffer. While the gate is shut
 *                   cudaStreamQuery(A), (B) and cudaEventQuery(E) answer
 *                   cudaErrorNotReady, deterministically; after it opens
 *                   B's result uses A's finished data, every query answers
 *                   cudaSuccess
 *   event errors    elapsed time of events without timing or not recorded:
 *                   the error names are printed (they must match natively
 *                   and through axon)
 *
 * No timing is printed. Exits 0 when every check passed, 1 otherwise.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rt-gpu.h"

#define N	(1 << 20)

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

static int gate_open;
static int gate_timed_out;

/* Holds its stream until main opens the gate (at most 20 s). */
static void CUDART_CB wait_gate(void *arg)
{
	struct timespec t0, t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20) {
			__atomic_store_n(&gate_timed_out, 1, __ATOMIC_RELEASE);
			return;
		}
		usleep(200);
	}
}

static size_t count_not(const float *h, float v)
{
	size_t bad = 0;

	for (int i = 0; i < N; i++)
		bad += h[i] != v;
	return bad;
}

static void priorities(void)
{
	int least = 0, greatest = 0, p_hi = 1, p_lo = 1;
	unsigned int flags = 0;
	cudaStream_t hi = NULL, lo = NULL;

	RT_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	RT_CHECK(greatest <= least, "priority range %d..%d", least, greatest);
	RT_OK(cudaStreamCreateWithPriority(&hi, cudaStreamNonBlocking, greatest));
	RT_OK(cudaStreamCreateWithPriority(&lo, cudaStreamDefault, least));
	RT_OK(cudaStreamGetPriority(hi, &p_hi));
	RT_OK(cudaStreamGetPriority(lo, &p_lo));
	RT_CHECK(p_hi == greatest && p_lo == least, "priorities %d %d", p_hi, p_lo);
	RT_OK(cudaStreamGetFlags(hi, &flags));
	RT_CHECK(flags == cudaStreamNonBlocking, "flags %u", flags);
	RT_OK(cudaStreamDestroy(hi));
	RT_OK(cudaStreamDestroy(lo));
	printf("stream priorities %d (least) to %d (greatest), as created: %s\n", least, greatest,
	       rt_failures ? "no" : "yes");
}

static void four_streams(float *h)
{
	cudaStream_t s[4];
	cudaEvent_t start[4], stop[4];
	float *d[4], ms;
	size_t bad = 0;
	int negative = 0;

	for (int i = 0; i < 4; i++) {
		RT_OK(cudaStreamCreate(&s[i]));
		RT_OK(cudaEventCreate(&start[i]));
		RT_OK(cudaEventCreate(&stop[i]));
		RT_OK(cudaMalloc((void **)&d[i], N * sizeof(float)));
	}
	for (int i = 0; i < 4; i++) {
		RT_OK(cudaEventRecord(start[i], s[i]));
		fill<<<N / 256, 256, 0, s[i]>>>(d[i], (float)(i + 1), N);
		for (int r = 0; r < 10; r++)
			scale<<<N / 256, 256, 0, s[i]>>>(d[i], 2.0f, N);
		RT_OK(cudaEventRecord(stop[i], s[i]));
	}
	RT_OK(cudaGetLastError());
	for (int i = 0; i < 4; i++) {
		RT_OK(cudaEventSynchronize(stop[i]));
		RT_OK(cudaEventElapsedTime(&ms, start[i], stop[i]));
		negative += ms < 0;
		RT_OK(cudaMemcpyAsync(h, d[i], N * sizeof(float), cudaMemcpyDeviceToHost, s[i]));
		RT_OK(cudaStreamSynchronize(s[i]));
		bad += count_not(h, (float)(i + 1) * 1024.0f);
	}
	RT_CHECK(bad == 0 && negative == 0, "%zu wrong, %d negative times", bad, negative);
	printf("four streams, fill + 10 x scale each: results %s, elapsed times >= 0: %s\n",
	       bad ? "WRONG" : "right", negative ? "no" : "yes");
	for (int i = 0; i < 4; i++) {
		RT_OK(cudaFree(d[i]));
		RT_OK(cudaEventDestroy(start[i]));
		RT_OK(cudaEventDestroy(stop[i]));
		RT_OK(cudaStreamDestroy(s[i]));
	}
}

static void wait_event(float *h)
{
	cudaStream_t a = NULL, b = NULL;
	cudaEvent_t e = NULL;
	float *x = NULL, *y = NULL;
	cudaError_t qa, qb, qe;
	size_t bad;
	int n = N;

	RT_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	RT_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	RT_OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	RT_OK(cudaMalloc((void **)&x, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&y, N * sizeof(float)));
	RT_OK(cudaDeviceSynchronize());

	__atomic_store_n(&gate_open, 0, __ATOMIC_RELEASE);
	RT_OK(cudaLaunchHostFunc(a, wait_gate, NULL));
	fill<<<N / 256, 256, 0, a>>>(x, 3.0f, N);
	for (int r = 0; r < 20; r++)
		scale<<<N / 256, 256, 0, a>>>(x, 2.0f, N);
	RT_OK(cudaEventRecord(e, a));
	fill<<<N / 256, 256, 0, b>>>(y, 1.0f, N);
	RT_OK(cudaStreamWaitEvent(b, e, 0));
	saxpy<<<N / 256, 256, 0, b>>>(n, 2.0f, x, y);
	RT_OK(cudaGetLastError());

	qa = cudaStreamQuery(a);
	qb = cudaStreamQuery(b);
	qe = cudaEventQuery(e);
	printf("gate shut: query A %s, query B %s, query E %s\n", cudaGetErrorName(qa),
	       cudaGetErrorName(qb), cudaGetErrorName(qe));
	RT_CHECK(qa == cudaErrorNotReady && qb == cudaErrorNotReady && qe == cudaErrorNotReady,
		 "queries while the gate is shut");
	__atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);

	RT_OK(cudaStreamSynchronize(b));
	RT_OK(cudaMemcpy(h, y, N * sizeof(float), cudaMemcpyDeviceToHost));
	/* 2 * (3 * 2^20) + 1: exact in float */
	bad = count_not(h, 6291457.0f);
	RT_CHECK(bad == 0, "B did not wait for A: %zu wrong (h[0] = %f)", bad, h[0]);
	RT_CHECK(!gate_timed_out, "the gate timed out");
	RT_OK(cudaStreamSynchronize(a));
	qa = cudaStreamQuery(a);
	qb = cudaStreamQuery(b);
	qe = cudaEventQuery(e);
	printf("gate open:  query A %s, query B %s, query E %s\n", cudaGetErrorName(qa),
	       cudaGetErrorName(qb), cudaGetErrorName(qe));
	RT_CHECK(qa == cudaSuccess && qb == cudaSuccess && qe == cudaSuccess, "queries after");
	printf("B waited for A's event: %s\n", bad ? "NO" : "yes");
	RT_OK(cudaFree(x));
	RT_OK(cudaFree(y));
	RT_OK(cudaEventDestroy(e));
	RT_OK(cudaStreamDestroy(a));
	RT_OK(cudaStreamDestroy(b));
}

static void event_errors(void)
{
	cudaEvent_t timed = NULL, untimed = NULL, never = NULL;
	cudaError_t e;
	float ms = 0;

	RT_OK(cudaEventCreate(&timed));
	RT_OK(cudaEventCreate(&never));
	RT_OK(cudaEventCreateWithFlags(&untimed, cudaEventDisableTiming));
	RT_OK(cudaEventRecord(timed, 0));
	RT_OK(cudaEventRecord(untimed, 0));
	RT_OK(cudaDeviceSynchronize());
	e = cudaEventElapsedTime(&ms, timed, untimed);
	printf("elapsed time to an event without timing: %s\n", cudaGetErrorName(e));
	RT_CHECK(e != cudaSuccess, "elapsed time with a DisableTiming event succeeded");
	e = cudaEventElapsedTime(&ms, timed, never);
	printf("elapsed time to an event never recorded: %s\n", cudaGetErrorName(e));
	RT_CHECK(e != cudaSuccess, "elapsed time to an unrecorded event succeeded");
	(void)cudaGetLastError();
	e = cudaEventQuery(never);
	printf("query of an event never recorded: %s\n", cudaGetErrorName(e));
	RT_CHECK(e == cudaSuccess, "query of a fresh event %s", cudaGetErrorName(e));
	RT_OK(cudaEventDestroy(timed));
	RT_OK(cudaEventDestroy(untimed));
	RT_OK(cudaEventDestroy(never));
}

int main(void)
{
	float *h = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaMallocHost((void **)&h, N * sizeof(float)));
	if (rt_failures)
		return rt_done();
	priorities();
	four_streams(h);
	wait_event(h);
	event_errors();
	RT_OK(cudaFreeHost(h));
	return rt_done();
}
