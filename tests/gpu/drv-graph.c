// SPDX-License-Identifier: MIT
/*
 * CUDA graphs made by stream capture, through the driver API only, in a
 * form that runs unchanged natively and through axon and prints the same
 * transcript on stdout both ways (the device name goes to stderr):
 *
 *   1. capture a graph (a kernel, a device-to-device copy, a memset) on a
 *      stream, instantiate it, launch it 100 times, check every byte;
 *      capture it again with other parameters (same topology), update the
 *      exec, launch once, check; an update from another topology fails;
 *   2. fork/join across two streams through events, inside a capture;
 *      a fork left unjoined fails the end of the capture;
 *   3. what a capture forbids: synchronising or querying the capturing
 *      stream, synchronising the context (in any mode), allocating in
 *      global mode (allowed in relaxed mode or with the thread's mode
 *      relaxed), beginning twice, ending a stream that does not capture,
 *      capturing the NULL stream, querying an event recorded in the
 *      capture; and what it allows: a device-to-pageable-host copy (a node
 *      that writes the host memory at each launch; tests/integration/
 *      graphcopy.c replays such copies);
 *   4. a cuLaunchKernelEx (with an attribute) in a capture, launched from
 *      an exec whose graph was already destroyed;
 *   5. a graph built node by node (memset, kernel, empty, memcpy nodes and
 *      an added dependency): counts, 10 launches, node parameters changed
 *      in the graph (the exec keeps its own) and in the exec, an update of
 *      the exec from the graph.
 *
 * Usage: drv-graph MODULE-IMAGE (tests/sim-kernels/kernels.cu built for
 * the device, e.g. $BUILD/tests/data/kernels.cubin). Exit 0 when every
 * check passed; a data mismatch or an unexpected failure exits 1 with the
 * line that says why. The sim's integration test (tests/integration/
 * graph_test.c) compares the transcript line by line.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv-gpu.h"

#define N	4096	/* floats per buffer */

static void fail(const char *what)
{
	printf("FAIL %s\n", what);
	exit(1);
}

static CUfunction f_saxpy, f_scale, f_fill;

static void saxpy(CUstream s, float a, CUdeviceptr x, CUdeviceptr y)
{
	int n = N;
	void *args[] = { &n, &a, &x, &y };

	CK(cuLaunchKernel(f_saxpy, N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void scale(CUstream s, CUdeviceptr p, float v)
{
	int n = N;
	void *args[] = { &p, &v, &n };

	CK(cuLaunchKernel(f_scale, N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void fill(CUstream s, CUdeviceptr p, float v)
{
	int n = N;
	void *args[] = { &p, &v, &n };

	CK(cuLaunchKernel(f_fill, N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

/* Every float of p equals want. */
static void check_f(CUdeviceptr p, float want, const char *what)
{
	static float h[N];
	int i;

	CK(cuMemcpyDtoH(h, p, sizeof(h)));
	for (i = 0; i < N; i++) {
		if (h[i] != want) {
			printf("FAIL %s: [%d] = %f, expected %f\n", what, i, h[i], want);
			exit(1);
		}
	}
}

/* Every byte of p equals want. */
static void check_b(CUdeviceptr p, unsigned char want, const char *what)
{
	static unsigned char h[N];
	int i;

	CK(cuMemcpyDtoH(h, p, sizeof(h)));
	for (i = 0; i < N; i++) {
		if (h[i] != want) {
			printf("FAIL %s: byte %d = %#x, expected %#x\n", what, i, h[i], want);
			exit(1);
		}
	}
}

static const char *status_name(CUstreamCaptureStatus st)
{
	switch (st) {
	case CU_STREAM_CAPTURE_STATUS_NONE: return "NONE";
	case CU_STREAM_CAPTURE_STATUS_ACTIVE: return "ACTIVE";
	case CU_STREAM_CAPTURE_STATUS_INVALIDATED: return "INVALIDATED";
	default: return "?";
	}
}

static const char *update_name(CUgraphExecUpdateResult r)
{
	switch (r) {
	case CU_GRAPH_EXEC_UPDATE_SUCCESS: return "SUCCESS";
	case CU_GRAPH_EXEC_UPDATE_ERROR: return "ERROR";
	case CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED: return "TOPOLOGY_CHANGED";
	case CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED: return "NODE_TYPE_CHANGED";
	case CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED: return "FUNCTION_CHANGED";
	case CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED: return "PARAMETERS_CHANGED";
	case CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED: return "NOT_SUPPORTED";
	default: return "other";
	}
}

/* The graph of part 1: y += a x; z <- y; w <- byte v. */
static CUgraph capture_step(CUstream s, float a, CUdeviceptr x, CUdeviceptr y,
			    CUdeviceptr z, CUdeviceptr w, unsigned char v, bool extra)
{
	CUstreamCaptureStatus st;
	cuuint64_t id = 0;
	CUgraph g = NULL, g_info = NULL;

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	saxpy(s, a, x, y);
	CK(cuMemcpyDtoDAsync(z, y, N * sizeof(float), s));
	CK(cuMemsetD8Async(w, v, N, s));
	if (extra)
		scale(s, z, 1.0f);
	CK(cuStreamGetCaptureInfo(s, &st, &id, &g_info, NULL, NULL, NULL));
	if (st != CU_STREAM_CAPTURE_STATUS_ACTIVE || !id || !g_info)
		fail("capture info while capturing");
	CK(cuStreamEndCapture(s, &g));
	if (!g)
		fail("end capture returned no graph");
	CK(cuStreamIsCapturing(s, &st));
	if (st != CU_STREAM_CAPTURE_STATUS_NONE)
		fail("stream still capturing after the end");
	return g;
}

static void part1(CUstream s)
{
	CUdeviceptr x, y, z, z2, w;
	CUgraph g, g2, g3;
	CUgraphExec ge;
	CUgraphExecUpdateResultInfo info;
	CUresult r;
	int i;

	CK(cuMemAlloc(&x, N * sizeof(float)));
	CK(cuMemAlloc(&y, N * sizeof(float)));
	CK(cuMemAlloc(&z, N * sizeof(float)));
	CK(cuMemAlloc(&z2, N * sizeof(float)));
	CK(cuMemAlloc(&w, N));
	fill(s, x, 1.0f);
	CK(cuMemsetD32Async(y, 0, N, s));
	CK(cuMemsetD32Async(z2, 0, N, s));
	CK(cuStreamSynchronize(s));

	g = capture_step(s, 0.5f, x, y, z, w, 0x5a, false);
	/* Capturing runs nothing. */
	check_f(y, 0.0f, "y after capture");
	printf("capture: status ACTIVE while capturing, end OK\n");
	{
		size_t n = 0;

		CK(cuGraphGetNodes(g, NULL, &n));
		printf("graph nodes: %zu\n", n);
	}
	CK(cuGraphInstantiateWithFlags(&ge, g, 0));
	printf("instantiate: OK\n");
	for (i = 0; i < 100; i++)
		CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(y, 50.0f, "y after 100 launches");
	check_f(z, 50.0f, "z after 100 launches");
	check_b(w, 0x5a, "w after 100 launches");
	printf("launch x100: y 50.0 z 50.0 w 0x5a OK\n");

	/* Same topology, other parameters: the exec takes them. */
	g2 = capture_step(s, 0.25f, x, y, z2, w, 0xa5, false);
	memset(&info, 0, sizeof(info));
	r = cuGraphExecUpdate(ge, g2, &info);
	printf("update, same topology: %s result %s\n", ename(r), update_name(info.result));
	if (r)
		exit(1);
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(y, 50.25f, "y after the update");
	check_f(z2, 50.25f, "z2 after the update");
	check_f(z, 50.0f, "z after the update (no longer written)");
	check_b(w, 0xa5, "w after the update");
	printf("launch after update: y 50.25 z2 50.25 w 0xa5 OK\n");

	/* Another topology (one more node): refused, the exec unchanged. */
	g3 = capture_step(s, 1.0f, x, y, z, w, 0, true);
	memset(&info, 0, sizeof(info));
	r = cuGraphExecUpdate(ge, g3, &info);
	printf("update, other topology: %s result %s\n", ename(r), update_name(info.result));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(y, 50.5f, "y after a refused update");
	printf("launch after refused update: y 50.5 OK\n");

	CK(cuGraphExecDestroy(ge));
	CK(cuGraphDestroy(g));
	CK(cuGraphDestroy(g2));
	CK(cuGraphDestroy(g3));
	CK(cuMemFree(x));
	CK(cuMemFree(y));
	CK(cuMemFree(z));
	CK(cuMemFree(z2));
	CK(cuMemFree(w));
}

static void part2(CUstream a, CUstream b)
{
	CUevent fork, join;
	CUdeviceptr p, q;
	CUstreamCaptureStatus st;
	CUgraphExec ge;
	CUgraph g;
	CUresult r;
	int i;

	CK(cuEventCreate(&fork, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&join, CU_EVENT_DISABLE_TIMING));
	CK(cuMemAlloc(&p, N * sizeof(float)));
	CK(cuMemAlloc(&q, N * sizeof(float)));
	fill(a, p, 1.0f);
	fill(a, q, 1.0f);
	CK(cuStreamSynchronize(a));

	/* a: p *= 2 | fork | b: q *= 3 | join | a: p += q */
	CK(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL));
	scale(a, p, 2.0f);
	CK(cuEventRecord(fork, a));
	CK(cuStreamWaitEvent(b, fork, 0));
	CK(cuStreamIsCapturing(b, &st));
	printf("fork: second stream %s\n", status_name(st));
	scale(b, q, 3.0f);
	CK(cuEventRecord(join, b));
	CK(cuStreamWaitEvent(a, join, 0));
	saxpy(a, 1.0f, q, p);
	CK(cuStreamEndCapture(a, &g));
	CK(cuStreamIsCapturing(b, &st));
	printf("join: end OK, second stream %s after the end\n", status_name(st));
	{
		size_t n = 0;

		CK(cuGraphGetNodes(g, NULL, &n));
		printf("fork/join graph nodes: %zu\n", n);
	}
	CK(cuGraphInstantiate(&ge, g, 0));
	/* q *= 3, p = 2p + q, three times: q 3, 9, 27; p 5, 19, 65 */
	for (i = 0; i < 3; i++)
		CK(cuGraphLaunch(ge, a));
	CK(cuStreamSynchronize(a));
	check_f(q, 27.0f, "q after 3 fork/join launches");
	check_f(p, 65.0f, "p after 3 fork/join launches");
	printf("fork/join launch x3: p 65.0 q 27.0 OK\n");
	CK(cuGraphExecDestroy(ge));
	CK(cuGraphDestroy(g));

	/* A fork never joined back. */
	CK(cuStreamBeginCapture(a, CU_STREAM_CAPTURE_MODE_GLOBAL));
	scale(a, p, 1.0f);
	CK(cuEventRecord(fork, a));
	CK(cuStreamWaitEvent(b, fork, 0));
	scale(b, q, 1.0f);
	g = NULL;
	r = cuStreamEndCapture(a, &g);
	printf("unjoined fork: end %s, graph %s\n", ename(r), g ? "set" : "NULL");
	if (g)
		CK(cuGraphDestroy(g));
	/* Whatever the end said, nothing of it ran and both streams work. */
	CK(cuStreamSynchronize(a));
	CK(cuStreamSynchronize(b));
	check_f(q, 27.0f, "q after the unjoined capture");
	CK(cuEventDestroy(fork));
	CK(cuEventDestroy(join));
	CK(cuMemFree(p));
	CK(cuMemFree(q));
}

/* Ends s's capture and prints how it ended. */
static void end_report(CUstream s, const char *what)
{
	CUstreamCaptureStatus st;
	CUgraph g = (CUgraph)1;
	CUresult r;

	CK(cuStreamIsCapturing(s, &st));
	r = cuStreamEndCapture(s, &g);
	printf("%s: status %s, end %s, graph %s\n", what, status_name(st), ename(r),
	       g ? "set" : "NULL");
	if (!r && g)
		CK(cuGraphDestroy(g));
}

/* A launch with attributes (cuLaunchKernelEx) as a node. */
static void part4(CUstream s)
{
	CUlaunchAttribute attr = { .id = CU_LAUNCH_ATTRIBUTE_PRIORITY };
	CUlaunchConfig cfg = {
		.gridDimX = N / 256, .gridDimY = 1, .gridDimZ = 1,
		.blockDimX = 256, .blockDimY = 1, .blockDimZ = 1,
		.hStream = s, .attrs = &attr, .numAttrs = 1,
	};
	CUgraphExec ge;
	CUdeviceptr p;
	CUgraph g;
	float v = 3.0f;
	int n = N;
	void *args[] = { &p, &v, &n };

	attr.value.priority = 0;
	CK(cuMemAlloc(&p, N * sizeof(float)));
	CK(cuMemsetD32Async(p, 0, N, s));
	CK(cuStreamSynchronize(s));
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuLaunchKernelEx(&cfg, f_fill, args, NULL));
	scale(s, p, 2.0f);
	CK(cuStreamEndCapture(s, &g));
	CK(cuGraphInstantiateWithFlags(&ge, g, 0));
	CK(cuGraphDestroy(g));	/* the exec is a copy: it outlives its graph */
	CK(cuGraphLaunch(ge, s));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(p, 6.0f, "p after launches of a cuLaunchKernelEx node");
	printf("cuLaunchKernelEx node, graph destroyed before the launches: p 6.0 OK\n");
	CK(cuGraphExecDestroy(ge));
	CK(cuMemFree(p));
}

/* A kernel node's parameters for f(args) over N elements. */
static CUDA_KERNEL_NODE_PARAMS knode(CUfunction f, void **args)
{
	CUDA_KERNEL_NODE_PARAMS p = {
		.func = f, .gridDimX = N / 256, .gridDimY = 1, .gridDimZ = 1,
		.blockDimX = 256, .blockDimY = 1, .blockDimZ = 1,
		.kernelParams = args,
	};

	return p;
}

/*
 * A graph built node by node:
 *   memset y = 0 ----\
 *   fill(x, 2) -------> empty -> saxpy(3, x, y) -> copy z <- y -> scale(z, 0.5)
 * (the last edge added with cuGraphAddDependencies): y 6, z 3.
 */
static void part5(CUstream s)
{
	CUgraphNode n_ms, n_fill, n_join, n_saxpy, n_copy, n_scale, two[2];
	CUdeviceptr x, y, z;
	CUgraphExec ge;
	CUcontext ctx;
	CUgraph g;
	CUgraphExecUpdateResultInfo info;
	CUgraphNodeType type;
	float two_f = 2.0f, four_f = 4.0f, three_f = 3.0f, five_f = 5.0f, half_f = 0.5f;
	int n = N, i;
	size_t count = 0;
	void *a_fill[] = { &x, &two_f, &n };
	void *a_fill4[] = { &x, &four_f, &n };
	void *a_saxpy[] = { &n, &three_f, &x, &y };
	void *a_saxpy5[] = { &n, &five_f, &x, &y };
	void *a_scale[] = { &z, &half_f, &n };
	CUDA_KERNEL_NODE_PARAMS kp;
	CUDA_MEMSET_NODE_PARAMS ms = { 0 };
	CUDA_MEMCPY3D cp = { 0 };
	CUresult r;

	CK(cuCtxGetCurrent(&ctx));
	CK(cuMemAlloc(&x, N * sizeof(float)));
	CK(cuMemAlloc(&y, N * sizeof(float)));
	CK(cuMemAlloc(&z, N * sizeof(float)));
	CK(cuGraphCreate(&g, 0));
	ms.dst = y;
	ms.value = 0;
	ms.elementSize = 4;
	ms.width = N;
	ms.height = 1;
	CK(cuGraphAddMemsetNode(&n_ms, g, NULL, 0, &ms, ctx));
	kp = knode(f_fill, a_fill);
	CK(cuGraphAddKernelNode(&n_fill, g, NULL, 0, &kp));
	two[0] = n_ms;
	two[1] = n_fill;
	CK(cuGraphAddEmptyNode(&n_join, g, two, 2));
	kp = knode(f_saxpy, a_saxpy);
	CK(cuGraphAddKernelNode(&n_saxpy, g, &n_join, 1, &kp));
	cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.srcDevice = y;
	cp.srcPitch = N * sizeof(float);
	cp.srcHeight = 1;
	cp.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.dstDevice = z;
	cp.dstPitch = N * sizeof(float);
	cp.dstHeight = 1;
	cp.WidthInBytes = N * sizeof(float);
	cp.Height = 1;
	cp.Depth = 1;
	CK(cuGraphAddMemcpyNode(&n_copy, g, &n_saxpy, 1, &cp, ctx));
	kp = knode(f_scale, a_scale);
	CK(cuGraphAddKernelNode(&n_scale, g, NULL, 0, &kp));
	CK(cuGraphAddDependencies(g, &n_copy, &n_scale, NULL, 1));
	CK(cuGraphGetNodes(g, NULL, &count));
	printf("built graph: %zu nodes", count);
	CK(cuGraphGetRootNodes(g, NULL, &count));
	CK(cuGraphNodeGetType(n_join, &type));
	printf(", %zu roots, join node %s\n", count,
	       type == CU_GRAPH_NODE_TYPE_EMPTY ? "EMPTY" : "?");

	CK(cuGraphInstantiateWithFlags(&ge, g, 0));
	for (i = 0; i < 10; i++)
		CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(y, 6.0f, "y of the built graph");
	check_f(z, 3.0f, "z of the built graph");
	printf("built graph launch x10: y 6.0 z 3.0 OK\n");

	/* The graph changes, the exec (a snapshot) does not. */
	kp = knode(f_fill, a_fill4);
	CK(cuGraphKernelNodeSetParams(n_fill, &kp));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(y, 6.0f, "y after the graph's node changed");
	/* The exec's node changes. */
	kp = knode(f_saxpy, a_saxpy5);
	CK(cuGraphExecKernelNodeSetParams(ge, n_saxpy, &kp));
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(y, 10.0f, "y after the exec's node changed");
	check_f(z, 5.0f, "z after the exec's node changed");
	printf("node parameters: graph's change leaves the exec, exec's gives y 10.0 z 5.0 OK\n");
	/* The exec takes the graph's parameters: fill 4, saxpy 3. */
	memset(&info, 0, sizeof(info));
	r = cuGraphExecUpdate(ge, g, &info);
	printf("update from the built graph: %s result %s\n", ename(r), update_name(info.result));
	if (r)
		exit(1);
	CK(cuGraphLaunch(ge, s));
	CK(cuStreamSynchronize(s));
	check_f(y, 12.0f, "y after the update from the built graph");
	check_f(z, 6.0f, "z after the update from the built graph");
	printf("launch after update: y 12.0 z 6.0 OK\n");
	CK(cuGraphExecDestroy(ge));
	CK(cuGraphDestroy(g));
	CK(cuMemFree(x));
	CK(cuMemFree(y));
	CK(cuMemFree(z));
}

static void part3(CUstream s, CUstream other)
{
	static float host[N];
	CUstreamCaptureMode mode;
	CUdeviceptr p, extra;
	cuuint64_t id1 = 0, id2 = 0;
	CUstreamCaptureStatus st;
	CUevent ev;
	CUresult r;

	CK(cuMemAlloc(&p, N * sizeof(float)));
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	fill(s, p, 1.0f);
	r = cuStreamSynchronize(s);
	printf("stream synchronize while capturing: %s\n", ename(r));
	end_report(s, "after it");

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	fill(s, p, 1.0f);
	r = cuStreamQuery(s);
	printf("stream query while capturing: %s\n", ename(r));
	end_report(s, "after it");

	/* Even relaxed: it would have to wait for the capturing stream. */
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	fill(s, p, 1.0f);
	r = cuCtxSynchronize();
	printf("context synchronize while capturing (relaxed): %s\n", ename(r));
	end_report(s, "after it");

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	r = cuMemAlloc(&extra, 4096);
	printf("allocation in a global capture: %s\n", ename(r));
	if (!r)
		CK(cuMemFree(extra));
	end_report(s, "after it");

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
	r = cuMemAlloc(&extra, 4096);
	printf("allocation in a relaxed capture: %s\n", ename(r));
	end_report(s, "after it");
	if (!r)
		CK(cuMemFree(extra));

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	CK(cuThreadExchangeStreamCaptureMode(&mode));
	r = cuMemAlloc(&extra, 4096);
	printf("allocation in a global capture, thread relaxed: %s\n", ename(r));
	CK(cuThreadExchangeStreamCaptureMode(&mode));
	printf("thread mode restored: %s\n",
	       mode == CU_STREAM_CAPTURE_MODE_RELAXED ? "was RELAXED" : "?");
	end_report(s, "after it");
	if (!r)
		CK(cuMemFree(extra));

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	r = cuMemcpyDtoHAsync(host, p, sizeof(host), s);
	printf("device-to-pageable-host copy while capturing: %s\n", ename(r));
	end_report(s, "after it");

	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	r = cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	printf("begin capture twice: %s\n", ename(r));
	CK(cuStreamGetCaptureInfo(s, &st, &id1, NULL, NULL, NULL, NULL));
	end_report(s, "after it");
	CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CK(cuStreamGetCaptureInfo(s, &st, &id2, NULL, NULL, NULL, NULL));
	printf("capture ids: %s\n", id1 && id2 && id1 != id2 ? "distinct" : "SAME");
	CK(cuEventRecord(ev, s));
	r = cuEventQuery(ev);
	printf("query of an event recorded in the capture: %s\n", ename(r));
	end_report(s, "after it");

	r = cuStreamEndCapture(other, &(CUgraph){ NULL });
	printf("end capture of a stream not capturing: %s\n", ename(r));
	r = cuStreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL);
	printf("capture of the NULL stream: %s\n", ename(r));
	if (!r)
		end_report(NULL, "after it");

	/* After all that, the stream works. */
	fill(s, p, 7.0f);
	CK(cuStreamSynchronize(s));
	check_f(p, 7.0f, "p after the refused operations");
	printf("stream usable after the refused operations: OK\n");
	CK(cuEventDestroy(ev));
	CK(cuMemFree(p));
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUstream s, s2;
	char name[256];
	char *img;
	long len;
	FILE *fp;

	if (argc != 2) {
		fprintf(stderr, "usage: %s MODULE-IMAGE\n", argv[0]);
		return 2;
	}
	fp = fopen(argv[1], "rb");
	if (!fp) {
		perror(argv[1]);
		return 77;	/* no kernels: a skip for the test harness */
	}
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	rewind(fp);
	img = calloc(1, (size_t)len + 1);
	if (!img || fread(img, 1, (size_t)len, fp) != (size_t)len) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 2;
	}
	fclose(fp);
	setvbuf(stdout, NULL, _IOLBF, 0);

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	fprintf(stderr, "device: %s\n", name);
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, img));
	CK(cuModuleGetFunction(&f_saxpy, mod, "saxpy"));
	CK(cuModuleGetFunction(&f_scale, mod, "_Z5scalePffi"));
	CK(cuModuleGetFunction(&f_fill, mod, "fill"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));

	part1(s);
	part2(s, s2);
	part3(s, s2);
	part4(s);
	part5(s);

	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(s2));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(img);
	printf("done\n");
	return 0;
}
