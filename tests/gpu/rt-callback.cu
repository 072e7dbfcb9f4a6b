// SPDX-License-Identifier: MIT
/*
 * rt-callback: host functions in stream order, cudaLaunchHostFunc and
 * cudaStreamAddCallback.
 *
 *   one stream    fill(d, 1), copy d into pinned memory, host function #1,
 *                 scale(d, 2), copy, stream callback #2, then host
 *                 functions #3..#102. Each logs its number; #1 and #2 also
 *                 check that the pinned copy in front of them had landed (all
 *                 1s, all 2s); #2 gets status cudaSuccess. The log must read
 *                 1, 2, ..., 102 and every check inside must hold.
 *   two streams   stream B waits on an event recorded on A after A's host
 *                 function X, which is held by a gate until main has queued
 *                 B's host function Y: Y must run after X.
 *
 * Prints counts and orders, not timings. Exits 0 when every check passed, 1
 * otherwise.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rt-gpu.h"

#define N	(1 << 18)
#define MAXLOG	256

extern "C" __global__ void fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

__global__ void scale(float *p, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * s;
}

static int log_[MAXLOG], nlog, inside_bad, bad_status;
static float *pinned;
static int gate_open;

struct entry {
	int id;
	float expect;	/* what pinned[] must hold when it runs; 0: not checked */
};

static void record(struct entry *e)
{
	int k = __atomic_fetch_add(&nlog, 1, __ATOMIC_ACQ_REL);

	if (k < MAXLOG)
		log_[k] = e->id;
	if (e->expect != 0)
		for (int i = 0; i < N; i++)
			if (pinned[i] != e->expect) {
				__atomic_fetch_add(&inside_bad, 1, __ATOMIC_RELAXED);
				break;
			}
}

static void CUDART_CB host_fn(void *arg)
{
	record((struct entry *)arg);
}

static void CUDART_CB stream_cb(cudaStream_t s, cudaError_t status, void *arg)
{
	(void)s;
	if (status != cudaSuccess)
		__atomic_fetch_add(&bad_status, 1, __ATOMIC_RELAXED);
	record((struct entry *)arg);
}

/* Holds A until main has queued everything (at most 20 s), then logs X. */
static void CUDART_CB gate_then_x(void *arg)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20)
			break;
		usleep(200);
	}
	record((struct entry *)arg);
}

static void one_stream(void)
{
	static struct entry e[102];
	cudaStream_t s = NULL;
	float *d = NULL;
	int in_order = 0;

	for (int i = 0; i < 102; i++)
		e[i].id = i + 1;
	e[0].expect = 1.0f;
	e[1].expect = 2.0f;
	nlog = 0;
	RT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	RT_OK(cudaMalloc((void **)&d, N * sizeof(float)));
	fill<<<N / 256, 256, 0, s>>>(d, 1.0f, N);
	RT_OK(cudaMemcpyAsync(pinned, d, N * sizeof(float), cudaMemcpyDeviceToHost, s));
	RT_OK(cudaLaunchHostFunc(s, host_fn, &e[0]));
	scale<<<N / 256, 256, 0, s>>>(d, 2.0f, N);
	RT_OK(cudaMemcpyAsync(pinned, d, N * sizeof(float), cudaMemcpyDeviceToHost, s));
	RT_OK(cudaStreamAddCallback(s, stream_cb, &e[1], 0));
	for (int i = 2; i < 102; i++)
		RT_OK(cudaLaunchHostFunc(s, host_fn, &e[i]));
	RT_OK(cudaGetLastError());
	RT_OK(cudaStreamSynchronize(s));
	for (int i = 0; i < 102 && i < nlog; i++)
		in_order += log_[i] == i + 1;
	RT_CHECK(nlog == 102 && in_order == 102, "%d ran, %d in order", nlog, in_order);
	RT_CHECK(inside_bad == 0, "%d host functions saw the copy before them unfinished",
		 inside_bad);
	RT_CHECK(bad_status == 0, "%d callbacks got an error status", bad_status);
	printf("one stream: %d of 102 host functions ran, %d in enqueue order\n", nlog, in_order);
	printf("one stream: work in front of each host function was done: %s; "
	       "callback status cudaSuccess: %s\n", inside_bad ? "NO" : "yes",
	       bad_status ? "NO" : "yes");
	RT_OK(cudaFree(d));
	RT_OK(cudaStreamDestroy(s));
}

static void two_streams(void)
{
	static struct entry x = { 1000, 0 }, y = { 2000, 0 };
	cudaStream_t a = NULL, b = NULL;
	cudaEvent_t ev = NULL;

	nlog = 0;
	__atomic_store_n(&gate_open, 0, __ATOMIC_RELEASE);
	RT_OK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	RT_OK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	RT_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	RT_OK(cudaLaunchHostFunc(a, gate_then_x, &x));
	RT_OK(cudaEventRecord(ev, a));
	RT_OK(cudaStreamWaitEvent(b, ev, 0));
	RT_OK(cudaLaunchHostFunc(b, host_fn, &y));
	__atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
	RT_OK(cudaStreamSynchronize(b));
	RT_OK(cudaStreamSynchronize(a));
	RT_CHECK(nlog == 2 && log_[0] == 1000 && log_[1] == 2000, "order %d: %d %d", nlog,
		 log_[0], log_[1]);
	printf("two streams: %s\n", nlog == 2 && log_[0] == 1000 && log_[1] == 2000 ?
	       "B's host function ran after A's, as its event wait says" : "WRONG ORDER");
	RT_OK(cudaEventDestroy(ev));
	RT_OK(cudaStreamDestroy(a));
	RT_OK(cudaStreamDestroy(b));
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaMallocHost((void **)&pinned, N * sizeof(float)));
	if (rt_failures)
		return rt_done();
	one_stream();
	two_streams();
	RT_OK(cudaFreeHost(pinned));
	return rt_done();
}
