// SPDX-License-Identifier: MIT
/*
 * ptstream - per-thread default streams through axon (issue 15: they were
 * all the legacy stream):
 *
 *   - each thread's per-thread stream (CU_STREAM_PER_THREAD, the NULL of
 *     the _ptsz and _ptds calls) is a stream of its own: work on one is
 *     not held behind another thread's, even when that one is blocked
 *   - it is not the legacy stream, and it can be captured
 *   - its id is the same within a thread and differs between threads;
 *     its context and device are the current ones
 *   - a thread's per-thread streams go when it exits: thousands of short
 *     threads do not use up the client's stream slots
 *
 * The sim runs a client's work in one queue, so "not held" is made
 * visible with a host function that does not return until the test opens
 * its gate: work ordered behind it is held in the daemon.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuclient.h"

#define N		1024
#define SHORT_THREADS	2500	/* more than a client's 2048 stream slots */

/* What cudart calls when built with --default-stream per-thread. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				     unsigned int gz, unsigned int bx, unsigned int by,
				     unsigned int bz, unsigned int shared, CUstream s,
				     void **params, void **extra);
CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *user);
CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream s);
CUresult CUDAAPI cuStreamQuery_ptsz(CUstream s);
CUresult CUDAAPI cuStreamGetId_ptsz(CUstream s, unsigned long long *id);
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream s, CUgraph *g);
CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n);
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n);

static CUcontext ctx;
static CUfunction f_fill;
static atomic_int gate_open, in_callback;

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void CUDA_CB gated(void *arg)
{
	(void)arg;
	atomic_store(&in_callback, 1);
	while (!atomic_load(&gate_open))
		msleep(1);
}

static void fill_ptsz(CUdeviceptr d, float v)
{
	int n = N;
	void *params[] = { &d, &v, &n };

	CK(cuLaunchKernel_ptsz(f_fill, cu_blocks(N), 1, 1, 256, 1, 1, 0, NULL, params, NULL));
}

/* Polls s until it is idle, for at most 5 s; false if it never was. */
static bool drains(CUresult (*query)(CUstream), CUstream s)
{
	int i;

	for (i = 0; i < 5000; i++) {
		CUresult r = query(s);

		if (r == CUDA_SUCCESS)
			return true;
		if (r != CUDA_ERROR_NOT_READY)
			cu_die("stream query", __FILE__, __LINE__, r);
		msleep(1);
	}
	return false;
}

/* The other thread: closes a gate on its own per-thread stream. */
static void *blocker(void *arg)
{
	unsigned long long *id = arg;

	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamGetId(CU_STREAM_PER_THREAD, id));
	CK(cuLaunchHostFunc_ptsz(NULL, gated, NULL));
	return NULL;
}

static void test_not_held(CUdeviceptr x, unsigned long long *other_id)
{
	float host[N];
	pthread_t t;
	int i;

	atomic_store(&gate_open, 0);
	atomic_store(&in_callback, 0);
	if (pthread_create(&t, NULL, blocker, other_id))
		cu_fail("pthread_create");
	pthread_join(t, NULL);
	while (!atomic_load(&in_callback))
		msleep(1);

	/* The other thread's stream is held at the gate; ours is not. */
	fill_ptsz(x, 3.0f);
	if (!drains(cuStreamQuery_ptsz, NULL))
		cu_fail("a _ptsz launch was held behind another thread's per-thread stream");
	if (!drains(cuStreamQuery, CU_STREAM_PER_THREAD))
		cu_fail("CU_STREAM_PER_THREAD is not this thread's per-thread stream");
	CK(cuStreamSynchronize_ptsz(NULL));
	memset(host, 0, sizeof(host));
	CK(cuMemcpyDtoH_v2_ptds(host, x, sizeof(host)));	/* not held either */
	for (i = 0; i < N; i++)
		if (host[i] != 3.0f)
			cu_fail("per-thread fill: %g at %d, not 3", host[i], i);
	for (i = 0; i < N; i++)
		host[i] = 6.0f;
	CK(cuMemcpyHtoD_v2_ptds(x, host, sizeof(host)));
	atomic_store(&gate_open, 1);
	CK(cuCtxSynchronize());
	printf("  ok    a per-thread stream is not held behind another thread's\n");
}

static void test_identity(unsigned long long other_id)
{
	unsigned long long pt, pt2, legacy, legacy_null;
	CUcontext c = NULL;
	CUdevice dev = -1;

	CK(cuStreamGetId(CU_STREAM_PER_THREAD, &pt));
	CK(cuStreamGetId_ptsz(NULL, &pt2));
	CK(cuStreamGetId(CU_STREAM_LEGACY, &legacy));
	CK(cuStreamGetId(NULL, &legacy_null));
	if (pt != pt2)
		cu_fail("CU_STREAM_PER_THREAD (%llu) and the _ptsz NULL (%llu) differ", pt, pt2);
	if (legacy != legacy_null)
		cu_fail("NULL (%llu) is not CU_STREAM_LEGACY (%llu)", legacy_null, legacy);
	if (pt == legacy)
		cu_fail("the per-thread stream is the legacy stream (%llu)", pt);
	if (pt == other_id)
		cu_fail("two threads share per-thread stream %llu", pt);
	CK(cuStreamGetCtx(CU_STREAM_PER_THREAD, &c));
	if (c != ctx)
		cu_fail("the per-thread stream's context is not the current one");
	CK(cuStreamGetDevice(CU_STREAM_PER_THREAD, &dev));
	if (dev != 0)
		cu_fail("the per-thread stream's device is %d, not 0", dev);
	printf("  ok    per-thread stream ids, context and device\n");
}

/* The legacy stream cannot capture; a per-thread stream can. */
static void test_capture(CUdeviceptr x)
{
	CUgraphExec exec;
	float host[N];
	CUgraph g;
	int i;

	EXPECT(cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
	       CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CK(cuStreamBeginCapture_v2_ptsz(NULL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
	fill_ptsz(x, 8.0f);
	CK(cuStreamEndCapture_ptsz(NULL, &g));
	CK(cuGraphInstantiate(&exec, g, 0));
	CK(cuGraphLaunch(exec, CU_STREAM_PER_THREAD));
	CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	CK(cuMemcpyDtoH(host, x, sizeof(host)));
	for (i = 0; i < N; i++)
		if (host[i] != 8.0f)
			cu_fail("captured per-thread fill: %g at %d, not 8", host[i], i);
	CK(cuGraphExecDestroy(exec));
	CK(cuGraphDestroy(g));
	printf("  ok    a per-thread stream captures\n");
}

static void *short_lived(void *arg)
{
	CUdeviceptr x = *(CUdeviceptr *)arg;

	CK(cuCtxSetCurrent(ctx));
	fill_ptsz(x, 1.0f);
	CK(cuStreamSynchronize_ptsz(NULL));
	return NULL;
}

static void test_thread_exit(CUdeviceptr x)
{
	int i;

	for (i = 0; i < SHORT_THREADS; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, short_lived, &x))
			cu_fail("pthread_create");
		pthread_join(t, NULL);
	}
	printf("  ok    %d threads' per-thread streams came and went\n", SHORT_THREADS);
}

int main(void)
{
	unsigned long long other_id = 0;
	CUdeviceptr x;
	CUmodule mod;
	CUdevice dev;
	void *image;

	cu_prog = "ptstream";
	image = cu_load_kernels("cubin", NULL);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f_fill, mod, K_FILL));
	CK(cuMemAlloc(&x, N * sizeof(float)));

	test_not_held(x, &other_id);
	test_identity(other_id);
	test_capture(x);
	test_thread_exit(x);

	CK(cuMemFree(x));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("ptstream: all checks passed\n");
	return 0;
}
