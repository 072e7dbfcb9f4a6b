// SPDX-License-Identifier: MIT
/*
 * graphcopy - copies between the device and host memory the daemon cannot
 * see (pageable, cuMemHostRegister'ed), and host functions, inside CUDA
 * graphs, through axon. Natively such a copy is captured as a node that
 * reads or writes the host memory each time the graph runs; the shim
 * stages it through pinned memory and host nodes (libcuda-shim/copy.c).
 * Each check fails if a replay reads or writes stale bytes:
 *
 *   - pageable: H->D, a kernel, D->H captured; the source changes before
 *     each of 3 launches, the destination is checked after each;
 *   - the same with cuMemcpyAsync on registered memory, and on pinned
 *     memory (a node as it is, no staging);
 *   - 3 launches queued back to back, a captured cuLaunchHostFunc changing
 *     the (pinned) source before the copy and another logging the result
 *     the pageable D->H copy wrote, after it: each replay reads the source
 *     of its own time; a D->H copy on a stream forked into the capture.
 *     (Natively a pageable source is read when the launch is queued, not
 *     after the host nodes before its copy: hence pinned there.)
 *   - lifetimes: the graph destroyed before its exec is launched, the
 *     exec destroyed with its launch still queued; a graph launched into
 *     another capture outliving the first graph and exec (the sim inlines
 *     it; NVIDIA's driver 580 refuses to capture a graph launch, and the
 *     cuda backend with it: checked on the sim only); an exec updated from
 *     a capture with other host buffers;
 *   - two launches of one exec on two streams run one after the other, as
 *     the driver runs them: the second's copy and host function see the
 *     first's result doubled (a graph cut by host nodes is several
 *     launches in the daemon; unordered, both would share one staging);
 *   - an exec updated while its launch waits behind a host function
 *     queued before it: the launch keeps the old destination, as the
 *     driver's queued launches keep their parameters;
 *   - a graph built node by node with host memcpy nodes;
 *   - refusals: a NULL host pointer, cuStreamAddCallback in a capture;
 *   - afterwards no staging memory is left mapped in this process.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuclient.h"

#define N	4096
#define BYTES	(N * sizeof(float))

static CUfunction f_scale;
static bool on_sim;	/* axon's sim device (graph launches captured) */

/* The shim's pinned memory mapped in this process (memfd regions). */
static int pinned_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		cu_fail("cannot read /proc/self/maps");
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "memfd:axon-pinned") != NULL;
	fclose(f);
	return n;
}

static void scale(CUdeviceptr d, float by, CUstream s)
{
	int n = N;
	void *args[] = { &d, &by, &n };

	CK(cuLaunchKernel(f_scale, cu_blocks(N), 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void set(float *p, float base)
{
	for (int i = 0; i < N; i++)
		p[i] = base + (float)i;
}

static void expect(const float *dst, float base, float by, const char *what, int replay)
{
	for (int i = 0; i < N; i++)
		if (dst[i] != by * (base + (float)i))
			cu_fail("%s, replay %d: [%d] is %g, not %g (stale copy)", what, replay,
				i, (double)dst[i], (double)(by * (base + (float)i)));
}

static size_t node_count(CUgraph g)
{
	size_t n = 0;

	CK(cuGraphGetNodes(g, NULL, &n));
	return n;
}

/* H->D, scale, D->H on s; the graph. */
static CUgraph capture_round(CUstream s, CUdeviceptr d, float *src, float *dst, float by,
			     bool unified)
{
	CUgraph g = NULL;

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	if (unified)
		CK(cuMemcpyAsync(d, (CUdeviceptr)(uintptr_t)src, BYTES, s));
	else
		CK(cuMemcpyHtoDAsync(d, src, BYTES, s));
	scale(d, by, s);
	if (unified)
		CK(cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst, d, BYTES, s));
	else
		CK(cuMemcpyDtoHAsync(dst, d, BYTES, s));
	CK(cuStreamEndCapture(s, &g));
	return g;
}

/* Three launches, the source changed before each, the result checked. */
static void replay3(CUgraphExec x, CUstream s, float *src, float *dst, float by,
		    const char *what, float first)
{
	for (int r = 1; r <= 3; r++) {
		set(src, first + 1000.0f * (float)r);
		for (int i = 0; i < N; i++)
			dst[i] = -1.0f;
		CK(cuGraphLaunch(x, s));
		CK(cuStreamSynchronize(s));
		expect(dst, first + 1000.0f * (float)r, by, what, r);
	}
}

static void test_pageable(CUstream s, CUdeviceptr d)
{
	float *src = malloc(BYTES), *dst = malloc(BYTES);
	CUgraphExec x;
	CUgraph g;

	if (!src || !dst)
		cu_fail("out of memory");
	set(src, 1.0f);
	for (int i = 0; i < N; i++)
		dst[i] = -1.0f;
	g = capture_round(s, d, src, dst, 2.0f, false);
	/* Capturing ran nothing. */
	CK(cuStreamSynchronize(s));
	if (dst[0] != -1.0f)
		cu_fail("pageable: the capture copied");
	/* As natively: two copies and a kernel. */
	if (node_count(g) != 3)
		cu_fail("pageable: %zu nodes, not 3", node_count(g));
	CK(cuGraphInstantiate(&x, g, 0));
	replay3(x, s, src, dst, 2.0f, "pageable", 0.0f);
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	free(src);
	free(dst);
	printf("pageable: 3 replays read and wrote host memory at replay time\n");
}

static void test_registered_pinned(CUstream s, CUdeviceptr d)
{
	float *src = aligned_alloc(4096, BYTES), *dst = aligned_alloc(4096, BYTES);
	float *psrc, *pdst;
	CUgraphExec x;
	CUgraph g;

	if (!src || !dst)
		cu_fail("out of memory");
	CK(cuMemHostRegister(src, BYTES, 0));
	CK(cuMemHostRegister(dst, BYTES, 0));
	g = capture_round(s, d, src, dst, 3.0f, true);
	CK(cuGraphInstantiate(&x, g, 0));
	replay3(x, s, src, dst, 3.0f, "registered", 7.0f);
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	CK(cuMemHostUnregister(src));
	CK(cuMemHostUnregister(dst));
	free(src);
	free(dst);

	CK(cuMemAllocHost((void **)&psrc, BYTES));
	CK(cuMemAllocHost((void **)&pdst, BYTES));
	g = capture_round(s, d, psrc, pdst, 4.0f, false);
	CK(cuGraphInstantiate(&x, g, 0));
	replay3(x, s, psrc, pdst, 4.0f, "pinned", 3.0f);
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	CK(cuMemFreeHost(psrc));
	CK(cuMemFreeHost(pdst));
	printf("registered and pinned: 3 replays each OK\n");
}

/* Host functions inside the graph, launches queued back to back. */
static float *q_src;
static float q_log[3][2];
static int q_next, q_runs;

static void CUDA_CB bump(void *arg)
{
	(void)arg;
	q_runs++;
	set(q_src, 100.0f * (float)q_runs);
}

static void CUDA_CB note(void *arg)
{
	const float *dst = arg;

	if (q_next < 3) {
		q_log[q_next][0] = dst[0];
		q_log[q_next][1] = dst[N - 1];
	}
	q_next++;
}

static void test_queued(CUstream s, CUstream s2, CUdeviceptr d)
{
	float *dst = malloc(BYTES), *side = malloc(BYTES);
	CUevent fork, join;
	CUgraphExec x;
	CUgraph g;

	CK(cuMemAllocHost((void **)&q_src, BYTES));
	if (!dst || !side)
		cu_fail("out of memory");
	set(q_src, -5.0f);
	CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuLaunchHostFunc(s, bump, NULL));
	CK(cuMemcpyHtoDAsync(d, q_src, BYTES, s));
	scale(d, 2.0f, s);
	/* A branch on another stream copies the result out too. */
	CK(cuEventRecord(fork, s));
	CK(cuStreamWaitEvent(s2, fork, 0));
	CK(cuMemcpyDtoHAsync(side, d, BYTES, s2));
	CK(cuEventRecord(join, s2));
	CK(cuMemcpyDtoHAsync(dst, d, BYTES, s));
	CK(cuLaunchHostFunc(s, note, dst));
	CK(cuStreamWaitEvent(s, join, 0));
	CK(cuStreamEndCapture(s, &g));
	if (q_runs)
		cu_fail("queued: a captured host function ran at capture");
	/* Natively: 2 host nodes, 3 copies, a kernel. */
	if (node_count(g) != 6)
		cu_fail("queued: %zu nodes, not 6", node_count(g));
	CK(cuGraphInstantiate(&x, g, 0));
	CK(cuGraphDestroy(g));
	for (int r = 0; r < 3; r++)
		CK(cuGraphLaunch(x, s));
	CK(cuStreamSynchronize(s));
	if (q_runs != 3 || q_next != 3)
		cu_fail("queued: host functions ran %d and %d times, not 3", q_runs, q_next);
	for (int r = 0; r < 3; r++)
		if (q_log[r][0] != 2.0f * 100.0f * (float)(r + 1) ||
		    q_log[r][1] != 2.0f * (100.0f * (float)(r + 1) + (float)(N - 1)))
			cu_fail("queued: launch %d saw %g .. %g", r + 1, (double)q_log[r][0],
				(double)q_log[r][1]);
	expect(side, 300.0f, 2.0f, "queued (forked stream)", 3);
	CK(cuGraphExecDestroy(x));
	CK(cuEventDestroy(fork));
	CK(cuEventDestroy(join));
	CK(cuMemFreeHost(q_src));
	free(dst);
	free(side);
	printf("queued: 3 launches back to back, each read its own source\n");
}

static void test_lifetimes(CUstream s, CUdeviceptr d)
{
	float *src = malloc(BYTES), *dst = malloc(BYTES);
	float *src2 = malloc(BYTES), *dst2 = malloc(BYTES);
	CUgraphExecUpdateResultInfo info;
	CUgraphExec x, outer_x;
	CUgraph g, g2, outer;

	if (!src || !dst || !src2 || !dst2)
		cu_fail("out of memory");
	/* The graph goes first, then the exec with its launch queued. */
	g = capture_round(s, d, src, dst, 5.0f, false);
	CK(cuGraphInstantiate(&x, g, 0));
	CK(cuGraphDestroy(g));
	set(src, 11.0f);
	CK(cuGraphLaunch(x, s));
	CK(cuGraphExecDestroy(x));
	CK(cuStreamSynchronize(s));
	expect(dst, 11.0f, 5.0f, "exec destroyed while launched", 1);

	/* Launched into another capture, which outlives it. */
	g = capture_round(s, d, src, dst, 6.0f, false);
	CK(cuGraphInstantiate(&x, g, 0));
	outer_x = NULL;
	if (on_sim) {
		CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
		CK(cuGraphLaunch(x, s));
		CK(cuStreamEndCapture(s, &outer));
		/* As the driver would count a child graph: one node. */
		if (node_count(outer) != 1)
			cu_fail("child graph: %zu nodes, not 1", node_count(outer));
		CK(cuGraphInstantiate(&outer_x, outer, 0));
		CK(cuGraphDestroy(outer));
	}
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	if (outer_x)
		replay3(outer_x, s, src, dst, 6.0f, "child graph", 20.0f);

	/* An update from a capture with other host buffers. */
	g = capture_round(s, d, src, dst, 7.0f, false);
	CK(cuGraphInstantiate(&x, g, 0));
	g2 = capture_round(s, d, src2, dst2, 7.0f, false);
	CK(cuGraphExecUpdate(x, g2, &info));
	CK(cuGraphDestroy(g));
	CK(cuGraphDestroy(g2));
	for (int i = 0; i < N; i++)
		dst[i] = -1.0f;
	replay3(x, s, src2, dst2, 7.0f, "updated exec", 30.0f);
	if (dst[0] != -1.0f)
		cu_fail("updated exec: wrote the old destination");
	CK(cuGraphExecDestroy(x));
	if (outer_x)
		CK(cuGraphExecDestroy(outer_x));
	free(src);
	free(dst);
	free(src2);
	free(dst2);
	printf("lifetimes: destroyed graph and exec, child graph, update OK\n");
}

static float *o_dst;
static float o_log[2];
static int o_n;

static void CUDA_CB order_note(void *arg)
{
	(void)arg;
	if (o_n < 2)
		o_log[o_n] = o_dst[1];
	o_n++;
}

static void test_two_streams(CUstream s, CUstream s2, CUdeviceptr d)
{
	float *one = malloc(BYTES);
	CUgraphExec x;
	CUgraph g;
	int i;

	o_dst = malloc(BYTES);
	if (!one || !o_dst)
		cu_fail("out of memory");
	for (i = 0; i < N; i++)
		one[i] = 1.0f;
	CK(cuMemcpyHtoD(d, one, BYTES));
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	scale(d, 2.0f, s);
	CK(cuMemcpyDtoHAsync(o_dst, d, BYTES, s));
	CK(cuLaunchHostFunc(s, order_note, NULL));
	CK(cuStreamEndCapture(s, &g));
	CK(cuGraphInstantiate(&x, g, 0));
	o_n = 0;
	CK(cuGraphLaunch(x, s));
	CK(cuGraphLaunch(x, s2));
	CK(cuCtxSynchronize());
	if (o_n != 2 || o_log[0] != 2.0f || o_log[1] != 4.0f)
		cu_fail("two streams: %d host calls logged %g then %g, expected 2 then 4",
			o_n, o_log[0], o_log[1]);
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	free(one);
	free(o_dst);
}

static void CUDA_CB linger(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
}

static void test_update_queued(CUstream s, CUdeviceptr d)
{
	float *one = malloc(BYTES), *a = malloc(BYTES), *b = malloc(BYTES);
	CUgraphExecUpdateResultInfo info;
	CUgraph g, g2;
	CUgraphExec x;
	int i;

	if (!one || !a || !b)
		cu_fail("out of memory");
	for (i = 0; i < N; i++)
		one[i] = 1.0f;
	CK(cuMemcpyHtoD(d, one, BYTES));
	o_dst = a;
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	scale(d, 2.0f, s);
	CK(cuMemcpyDtoHAsync(a, d, BYTES, s));
	CK(cuLaunchHostFunc(s, order_note, NULL));
	CK(cuStreamEndCapture(s, &g));
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	scale(d, 2.0f, s);
	CK(cuMemcpyDtoHAsync(b, d, BYTES, s));
	CK(cuLaunchHostFunc(s, order_note, NULL));
	CK(cuStreamEndCapture(s, &g2));
	CK(cuGraphInstantiate(&x, g, 0));
	memset(a, 0, BYTES);
	memset(b, 0, BYTES);
	o_n = 0;
	CK(cuLaunchHostFunc(s, linger, NULL));
	CK(cuGraphLaunch(x, s));
	CK(cuGraphExecUpdate(x, g2, &info));
	CK(cuCtxSynchronize());
	if (a[1] != 2.0f || b[1] != 0.0f || o_n != 1 || o_log[0] != 2.0f)
		cu_fail("update behind a queued launch: old destination %g, new %g, "
			"host calls %d saw %g; expected 2, 0, 1, 2", a[1], b[1], o_n, o_log[0]);
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	CK(cuGraphDestroy(g2));
	free(one);
	free(a);
	free(b);
}

static void test_built(CUstream s, CUdeviceptr d, CUcontext ctx)
{
	float *src = malloc(BYTES), *dst = malloc(BYTES);
	CUDA_KERNEL_NODE_PARAMS kp = { 0 };
	CUDA_MEMCPY3D cp = { 0 };
	CUgraphNode in, k, out;
	float by = 8.0f;
	int n = N;
	void *args[] = { &d, &by, &n };
	CUgraphExec x;
	CUgraph g;

	if (!src || !dst)
		cu_fail("out of memory");
	CK(cuGraphCreate(&g, 0));
	cp.srcMemoryType = CU_MEMORYTYPE_HOST;
	cp.srcHost = src;
	cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.dstDevice = d;
	cp.WidthInBytes = BYTES;
	cp.Height = 1;
	cp.Depth = 1;
	CK(cuGraphAddMemcpyNode(&in, g, NULL, 0, &cp, ctx));
	kp.func = f_scale;
	kp.gridDimX = cu_blocks(N);
	kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = 256;
	kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = args;
	CK(cuGraphAddKernelNode(&k, g, &in, 1, &kp));
	memset(&cp, 0, sizeof(cp));
	cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.srcDevice = d;
	cp.dstMemoryType = CU_MEMORYTYPE_HOST;
	cp.dstHost = dst;
	cp.WidthInBytes = BYTES;
	cp.Height = 1;
	cp.Depth = 1;
	CK(cuGraphAddMemcpyNode(&out, g, &k, 1, &cp, ctx));
	CK(cuGraphInstantiate(&x, g, 0));
	replay3(x, s, src, dst, 8.0f, "built graph", 40.0f);
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	free(src);
	free(dst);
	printf("built graph: host memcpy nodes, 3 replays OK\n");
}

static void CUDA_CB callback(CUstream st, CUresult status, void *arg)
{
	(void)st;
	(void)status;
	(void)arg;
}

static void test_refusals(CUstream s, CUdeviceptr d)
{
	CUstreamCaptureStatus st;
	CUgraph g = NULL;

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	EXPECT(cuMemcpyDtoHAsync(NULL, d, BYTES, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyHtoDAsync(d, NULL, BYTES, s), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuStreamAddCallback(s, callback, NULL, 0), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	CK(cuStreamIsCapturing(s, &st));
	if (st != CU_STREAM_CAPTURE_STATUS_INVALIDATED)
		cu_fail("refusals: capture not invalidated by a callback");
	EXPECT(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	printf("refusals: NULL host pointers, legacy callback OK\n");
}

int main(void)
{
	CUstream s, s2;
	CUdeviceptr d;
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	void *image;
	int maps;

	cu_prog = "graphcopy";
	image = cu_load_kernels("cubin", NULL);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	{
		char name[256];

		CK(cuDeviceGetName(name, sizeof(name), dev));
		on_sim = strstr(name, "axon sim") != NULL;
	}
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f_scale, mod, K_SCALE));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&d, BYTES));
	maps = pinned_maps();

	test_pageable(s, d);
	test_registered_pinned(s, d);
	test_queued(s, s2, d);
	test_lifetimes(s, d);
	test_two_streams(s, s2, d);
	test_update_queued(s, d);
	test_built(s, d, ctx);
	test_refusals(s, d);

	/* Every graph and exec is gone: so is their staging memory. */
	CK(cuCtxSynchronize());
	if (pinned_maps() != maps)
		cu_fail("%d pinned regions left mapped, %d before", pinned_maps(), maps);
	CK(cuMemFree(d));
	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(s2));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("graphcopy: all checks passed\n");
	return 0;
}
