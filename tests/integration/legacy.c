// SPDX-License-Identifier: MIT
/*
 * legacy - the legacy default stream's implicit barrier through axon
 * (issue 15: a NULL-stream kernel ran before a blocking stream's kernel):
 *
 *   - work on the legacy stream (NULL, CU_STREAM_LEGACY) waits for the
 *     earlier work of every blocking stream: kernels, copies (2D too),
 *     memsets, event records, synchronisation
 *   - work later issued to a blocking stream waits for the legacy stream's
 *     earlier work
 *   - the per-thread default stream (CU_STREAM_PER_THREAD, the _ptsz
 *     calls' NULL) is ordered against the legacy stream both ways
 *   - a non-blocking stream is not held behind the legacy stream
 *   - a blocking stream's work from before it began a capture, and from
 *     before it was destroyed, still comes first
 *
 * The sim runs a client's work in one queue, so the order is made visible
 * with a host function that does not return until the test opens its gate:
 * the work behind it is held in the daemon, and what must wait for that
 * work must be held too. A kernel that ran too early reads the old value.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuclient.h"

#define N	1024

/* What cudart calls when built with --default-stream per-thread. */
CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				     unsigned int gz, unsigned int bx, unsigned int by,
				     unsigned int bz, unsigned int shared, CUstream s,
				     void **params, void **extra);

static CUfunction f_fill, f_saxpy;
static atomic_int gate_open, in_callback;
static float *host;	/* pinned, N floats */

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

/* Closes the gate and puts a host function at it on s. */
static void gate(CUstream s)
{
	atomic_store(&gate_open, 0);
	atomic_store(&in_callback, 0);
	CK(cuLaunchHostFunc(s, gated, NULL));
}

/* Opens it once the host function runs, after a while in which work
 * wrongly let past it would have run. */
static void open_gate(void)
{
	while (!atomic_load(&in_callback))
		msleep(1);
	msleep(30);
	atomic_store(&gate_open, 1);
}

static void fill(CUdeviceptr d, float v, CUstream s)
{
	int n = N;
	void *params[] = { &d, &v, &n };

	CK(cuLaunchKernel(f_fill, cu_blocks(N), 1, 1, 256, 1, 1, 0, s, params, NULL));
}

/* y += x */
static void add(CUdeviceptr x, CUdeviceptr y, CUstream s)
{
	int n = N;
	float a = 1.0f;
	void *params[] = { &n, &a, &x, &y };

	CK(cuLaunchKernel(f_saxpy, cu_blocks(N), 1, 1, 256, 1, 1, 0, s, params, NULL));
}

static void reset(CUdeviceptr x, CUdeviceptr y)
{
	CK(cuMemsetD32(x, 0x3f800000, N));	/* 1.0f */
	CK(cuMemsetD32(y, 0, N));
	CK(cuCtxSynchronize());
}

static void expect_host(float want, const char *what)
{
	int i;

	for (i = 0; i < N; i++)
		if (host[i] != want)
			cu_fail("%s: %g at %d, not %g", what, host[i], i, want);
}

static const char *name_of(CUstream h)
{
	return !h ? "NULL" : h == CU_STREAM_LEGACY ? "CU_STREAM_LEGACY" :
	       h == CU_STREAM_PER_THREAD ? "CU_STREAM_PER_THREAD" : "a stream";
}

/* Blocking stream a writes; the legacy stream h reads. */
static void test_legacy_waits(CUstream h, CUstream a, CUdeviceptr x, CUdeviceptr y,
			      CUevent ev)
{
	reset(x, y);
	gate(a);
	fill(x, 5.0f, a);
	add(x, y, h);				/* y = 5 */
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), h));
	CK(cuEventRecord(ev, h));
	while (!atomic_load(&in_callback))
		msleep(1);
	msleep(30);
	EXPECT(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
	EXPECT(cuStreamQuery(h), CUDA_ERROR_NOT_READY);
	atomic_store(&gate_open, 1);
	if (h)
		CK(cuEventSynchronize(ev));
	else
		CK(cuStreamSynchronize(h));
	expect_host(5.0f, "a legacy-stream kernel after a blocking stream's");

	/* Copies and memsets on the legacy stream wait too. */
	reset(x, y);
	gate(a);
	fill(x, 9.0f, a);
	CK(cuMemcpyDtoDAsync(y, x, N * sizeof(float), h));
	CK(cuMemsetD32Async(x, 0, N, h));	/* after the copy, after the fill */
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), h));
	open_gate();
	CK(cuStreamSynchronize(h));
	expect_host(9.0f, "a legacy-stream copy after a blocking stream's kernel");
	CK(cuMemcpyDtoH(host, x, N * sizeof(float)));
	expect_host(0.0f, "a legacy-stream memset after a blocking stream's kernel");

	/* So does a 2D copy (MEMCPY_2D): the first half of each of the
	 * 64-float rows of x into y. */
	reset(x, y);
	gate(a);
	fill(x, 4.0f, a);
	{
		CUDA_MEMCPY2D c = {
			.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = x, .srcPitch = 256,
			.dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = y, .dstPitch = 256,
			.WidthInBytes = 128, .Height = N * sizeof(float) / 256,
		};
		int i;

		CK(cuMemcpy2DAsync(&c, h));
		CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), h));
		open_gate();
		CK(cuStreamSynchronize(h));
		for (i = 0; i < N; i++)
			if (host[i] != (i % 64 < 32 ? 4.0f : 0.0f))
				cu_fail("a legacy-stream 2D copy after a blocking stream's "
					"kernel: %g at %d", host[i], i);
	}

	printf("  ok    %s waits for a blocking stream\n", name_of(h));
}

/* The legacy stream h writes; blocking stream b, issued later, reads. */
static void test_blocking_waits(CUstream h, CUstream b, CUdeviceptr x, CUdeviceptr y,
				CUevent ev)
{
	reset(x, y);
	gate(h);
	fill(x, 7.0f, h);
	add(x, y, b);				/* y = 7 */
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), b));
	CK(cuEventRecord(ev, b));
	while (!atomic_load(&in_callback))
		msleep(1);
	msleep(30);
	EXPECT(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
	EXPECT(cuStreamQuery(b), CUDA_ERROR_NOT_READY);
	atomic_store(&gate_open, 1);
	CK(cuStreamSynchronize(b));
	expect_host(7.0f, "a blocking stream's kernel after the legacy stream's");

	/* An event waited for on the blocking stream, recorded on the
	 * legacy stream: the order holds through it as well. */
	reset(x, y);
	gate(h);
	fill(x, 8.0f, h);
	CK(cuEventRecord(ev, h));
	CK(cuStreamWaitEvent(b, ev, 0));
	add(x, y, b);
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), b));
	open_gate();
	CK(cuStreamSynchronize(b));
	expect_host(8.0f, "a blocking stream's kernel after a legacy-stream event");
	printf("  ok    a blocking stream waits for %s\n", name_of(h));
}

/* The per-thread default stream, against the legacy stream both ways,
 * through its handle and through the _ptsz calls' NULL. */
static void test_per_thread(CUdeviceptr x, CUdeviceptr y, CUevent ev)
{
	int n = N;
	float a = 1.0f;
	void *params[] = { &n, &a, &x, &y };

	reset(x, y);
	gate(NULL);
	fill(x, 3.0f, NULL);
	add(x, y, CU_STREAM_PER_THREAD);
	CK(cuEventRecord(ev, CU_STREAM_PER_THREAD));
	while (!atomic_load(&in_callback))
		msleep(1);
	msleep(30);
	EXPECT(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
	atomic_store(&gate_open, 1);
	CK(cuStreamSynchronize(CU_STREAM_PER_THREAD));
	CK(cuMemcpyDtoH(host, y, N * sizeof(float)));
	expect_host(3.0f, "a per-thread-stream kernel after the legacy stream's");

	reset(x, y);
	gate(CU_STREAM_PER_THREAD);
	fill(x, 4.0f, CU_STREAM_PER_THREAD);
	add(x, y, CU_STREAM_LEGACY);
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), CU_STREAM_LEGACY));
	open_gate();
	CK(cuStreamSynchronize(CU_STREAM_LEGACY));
	expect_host(4.0f, "a legacy-stream kernel after the per-thread stream's");

	reset(x, y);
	gate(CU_STREAM_LEGACY);
	fill(x, 2.0f, CU_STREAM_LEGACY);
	CK(cuLaunchKernel_ptsz(f_saxpy, cu_blocks(N), 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	open_gate();
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(host, y, N * sizeof(float)));
	expect_host(2.0f, "a _ptsz kernel on NULL after the legacy stream's");
	printf("  ok    the per-thread default stream and the legacy stream\n");
}

/*
 * A non-blocking stream does not wait for the legacy stream: while a
 * host function holds the legacy stream, the non-blocking stream's work
 * completes (axon never holds it; CUDA does not order it either).
 */
static void test_nonblocking(CUstream nb, CUdeviceptr x, CUdeviceptr y)
{
	reset(x, y);
	gate(NULL);
	fill(x, 5.0f, NULL);
	fill(y, 2.0f, nb);
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), nb));
	CK(cuStreamSynchronize(nb));
	expect_host(2.0f, "a non-blocking stream's kernel");
	EXPECT(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
	atomic_store(&gate_open, 1);
	CK(cuStreamSynchronize(NULL));
	CK(cuMemcpyDtoH(host, x, N * sizeof(float)));
	expect_host(5.0f, "the legacy stream's kernel");
	printf("  ok    a non-blocking stream is not held by the legacy stream\n");
}

/* A blocking stream destroyed with work queued: the legacy stream's
 * later work still waits for that work. */
static void test_destroyed(CUdeviceptr x, CUdeviceptr y)
{
	CUstream d;

	reset(x, y);
	CK(cuStreamCreate(&d, 0));
	gate(d);
	fill(x, 12.0f, d);
	CK(cuStreamDestroy(d));
	add(x, y, NULL);
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), NULL));
	open_gate();
	CK(cuStreamSynchronize(NULL));
	expect_host(12.0f, "a legacy-stream kernel after a destroyed stream's");
	printf("  ok    a destroyed blocking stream's work\n");
}

/* A blocking stream that begins a capture with work queued: that work is
 * real, and the legacy stream's later work waits for it (axond joins it
 * when the capture begins, not at the legacy stream's next item); what
 * the capture takes runs only when its graph is launched. CUDA forbids
 * legacy-stream work while a blocking stream captures, so the gate opens
 * before the capture ends (axond's capture end waits for the stream's
 * earlier work; the gate's host function waits for this thread). */
static void test_captured(CUdeviceptr x, CUdeviceptr y)
{
	CUgraphExec exec;
	CUstream c;
	CUgraph g;

	reset(x, y);
	CK(cuStreamCreate(&c, 0));
	gate(c);
	fill(x, 14.0f, c);
	CK(cuStreamBeginCapture(c, CU_STREAM_CAPTURE_MODE_RELAXED));
	fill(x, 99.0f, c);			/* a node, not run now */
	open_gate();
	CK(cuStreamEndCapture(c, &g));
	add(x, y, NULL);			/* y = 14 */
	CK(cuMemcpyDtoHAsync(host, y, N * sizeof(float), NULL));
	CK(cuStreamSynchronize(NULL));
	expect_host(14.0f, "a legacy-stream kernel after a capturing stream's earlier work");
	CK(cuGraphInstantiate(&exec, g, 0));
	CK(cuGraphLaunch(exec, c));
	CK(cuStreamSynchronize(c));
	CK(cuMemcpyDtoH(host, x, N * sizeof(float)));
	expect_host(99.0f, "the captured fill, launched");
	CK(cuGraphExecDestroy(exec));
	CK(cuGraphDestroy(g));
	CK(cuStreamDestroy(c));
	printf("  ok    a capturing blocking stream's earlier work\n");
}

int main(void)
{
	static const CUstream legacy[] = { NULL, CU_STREAM_LEGACY };
	CUstream a, b, nb;
	CUdeviceptr x, y;
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	CUevent ev;
	void *image;
	unsigned int i;

	cu_prog = "legacy";
	image = cu_load_kernels("cubin", NULL);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f_fill, mod, K_FILL));
	CK(cuModuleGetFunction(&f_saxpy, mod, K_SAXPY));
	CK(cuStreamCreate(&a, CU_STREAM_DEFAULT));
	CK(cuStreamCreate(&b, CU_STREAM_DEFAULT));
	CK(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	CK(cuMemAlloc(&x, N * sizeof(float)));
	CK(cuMemAlloc(&y, N * sizeof(float)));
	CK(cuMemAllocHost((void **)&host, N * sizeof(float)));

	for (i = 0; i < sizeof(legacy) / sizeof(legacy[0]); i++) {
		test_legacy_waits(legacy[i], a, x, y, ev);
		test_blocking_waits(legacy[i], b, x, y, ev);
	}
	test_per_thread(x, y, ev);
	test_nonblocking(nb, x, y);
	test_destroyed(x, y);
	test_captured(x, y);

	CK(cuMemFreeHost(host));
	CK(cuMemFree(x));
	CK(cuMemFree(y));
	CK(cuEventDestroy(ev));
	CK(cuStreamDestroy(a));
	CK(cuStreamDestroy(b));
	CK(cuStreamDestroy(nb));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("legacy: all checks passed\n");
	return 0;
}
