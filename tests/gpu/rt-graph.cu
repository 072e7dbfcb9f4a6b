// SPDX-License-Identifier: MIT
/*
 * rt-graph: CUDA graphs made by stream capture.
 *
 *   capture     on a stream of its own: fill(a, 1), scale(a, 2),
 *               cudaMemcpyAsync a -> b (device to device), saxpy(3, a, b),
 *               saxpy(1, ones, acc); while capturing, the stream reports
 *               cudaStreamCaptureStatusActive; the graph has 5 nodes
 *   launch      instantiate, launch 100 times on another stream: b = 3 a + a
 *               = 8 after each launch, acc counts the launches (= 100)
 *   update      recapture with scale(a, 4) instead (b = 16), then
 *               cudaGraphExecUpdate of the existing executable graph:
 *               cudaGraphExecUpdateSuccess; one more launch gives b = 16 and
 *               acc = 101
 *
 * Kernels and values are exact in float. Exits 0 when every check passed, 1
 * otherwise.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt-gpu.h"

#define N	(1 << 16)

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

static float *a, *b, *ones, *acc, *h;

static cudaGraph_t capture(cudaStream_t s, float factor)
{
	cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	cudaGraph_t g = NULL;

	RT_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	RT_OK(cudaStreamIsCapturing(s, &st));
	RT_CHECK(st == cudaStreamCaptureStatusActive, "capture status %d", (int)st);
	fill<<<N / 256, 256, 0, s>>>(a, 1.0f, N);
	scale<<<N / 256, 256, 0, s>>>(a, factor, N);
	RT_OK(cudaMemcpyAsync(b, a, N * sizeof(float), cudaMemcpyDeviceToDevice, s));
	saxpy<<<N / 256, 256, 0, s>>>(N, 3.0f, a, b);
	saxpy<<<N / 256, 256, 0, s>>>(N, 1.0f, ones, acc);
	RT_OK(cudaGetLastError());
	RT_OK(cudaStreamEndCapture(s, &g));
	RT_OK(cudaStreamIsCapturing(s, &st));
	RT_CHECK(st == cudaStreamCaptureStatusNone, "capture status after %d", (int)st);
	return g;
}

/* Elements of p (N floats) that are not v. */
static size_t count_not(const float *p, float v)
{
	size_t bad = 0;

	RT_OK(cudaMemcpy(h, p, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		bad += h[i] != v;
	return bad;
}

int main(void)
{
	cudaGraphExecUpdateResultInfo info;
	cudaStream_t cap = NULL, run = NULL;
	cudaGraph_t g = NULL, g2 = NULL;
	cudaGraphExec_t exec = NULL;
	size_t nodes = 0, bad_b, bad_acc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	h = (float *)malloc(N * sizeof(float));
	RT_OK(cudaMalloc((void **)&a, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&b, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&ones, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&acc, N * sizeof(float)));
	fill<<<N / 256, 256>>>(ones, 1.0f, N);
	RT_OK(cudaMemset(acc, 0, N * sizeof(float)));
	RT_OK(cudaDeviceSynchronize());
	RT_OK(cudaStreamCreateWithFlags(&cap, cudaStreamNonBlocking));
	RT_OK(cudaStreamCreateWithFlags(&run, cudaStreamNonBlocking));
	if (rt_failures || !h)
		return rt_done();

	g = capture(cap, 2.0f);
	RT_OK(cudaGraphGetNodes(g, NULL, &nodes));
	printf("captured graph: %zu nodes\n", nodes);
	RT_CHECK(nodes == 5, "%zu nodes", nodes);
	/* Capture only records: nothing ran yet. */
	bad_acc = count_not(acc, 0.0f);
	RT_CHECK(bad_acc == 0, "capture executed work: acc changed");

	RT_OK(cudaGraphInstantiate(&exec, g, 0));
	for (int i = 0; i < 100; i++)
		RT_OK(cudaGraphLaunch(exec, run));
	RT_OK(cudaStreamSynchronize(run));
	bad_b = count_not(b, 8.0f);
	bad_acc = count_not(acc, 100.0f);
	RT_CHECK(bad_b == 0 && bad_acc == 0, "after 100 launches: b %zu wrong, acc %zu wrong",
		 bad_b, bad_acc);
	printf("100 launches: b = 8 %s, acc = 100 %s\n", bad_b ? "NO" : "yes",
	       bad_acc ? "NO" : "yes");

	g2 = capture(cap, 4.0f);
	RT_OK(cudaGraphExecUpdate(exec, g2, &info));
	printf("cudaGraphExecUpdate after recapture: result %d (%s)\n", (int)info.result,
	       info.result == cudaGraphExecUpdateSuccess ? "cudaGraphExecUpdateSuccess" : "other");
	RT_CHECK(info.result == cudaGraphExecUpdateSuccess, "update result %d",
		 (int)info.result);
	RT_OK(cudaGraphLaunch(exec, run));
	RT_OK(cudaStreamSynchronize(run));
	bad_b = count_not(b, 16.0f);
	bad_acc = count_not(acc, 101.0f);
	RT_CHECK(bad_b == 0 && bad_acc == 0, "after the update: b %zu wrong, acc %zu wrong",
		 bad_b, bad_acc);
	printf("updated graph: b = 16 %s, acc = 101 %s\n", bad_b ? "NO" : "yes",
	       bad_acc ? "NO" : "yes");

	RT_OK(cudaGraphExecDestroy(exec));
	RT_OK(cudaGraphDestroy(g));
	RT_OK(cudaGraphDestroy(g2));
	RT_OK(cudaStreamDestroy(cap));
	RT_OK(cudaStreamDestroy(run));
	RT_OK(cudaFree(a));
	RT_OK(cudaFree(b));
	RT_OK(cudaFree(ones));
	RT_OK(cudaFree(acc));
	free(h);
	return rt_done();
}
