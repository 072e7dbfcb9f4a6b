// SPDX-License-Identifier: MIT
/*
 * rt-legacy-stream: the legacy default stream's implicit barrier (issue 15:
 * through axon a NULL-stream kernel ran before a blocking stream's kernel
 * had finished, a wrong result and no error).
 *
 * A slow kernel (each block spins on clock64() for a few ms, then writes)
 * fills a buffer on one stream; work on another reads it. Where CUDA orders
 * the two (the legacy stream against a blocking stream, either way; the
 * per-thread default stream against the legacy stream) the reader must see
 * the written value, checked on the host; without the order it would see
 * the old one. A non-blocking stream is not ordered: only what holds
 * anyway is checked (its own results, after a device synchronisation).
 *
 * Built twice: as is (handle 0 is the legacy stream) and, as
 * rt-legacy-stream-ptds.cu, with --default-stream per-thread (handle 0 is
 * the thread's own stream, which is ordered against cudaStreamLegacy only).
 * No timing is printed. Exits 0 when every check passed, 1 otherwise.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt-gpu.h"

#define N	(1 << 20)
#define SPIN	(2LL * 1000 * 1000)	/* clock cycles per block: ~1 ms on an H200 */

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#define VARIANT	"per-thread"
#else
#define VARIANT	"legacy"
#endif

__global__ void slow_fill(float *p, float v, int n, long long spin)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (threadIdx.x == 0) {
		long long t0 = clock64();

		while (clock64() - t0 < spin)
			;
	}
	__syncthreads();
	if (i < n)
		p[i] = v;
}

__global__ void copy(float *dst, const float *src, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		dst[i] = src[i];
}

static float *x, *y, *h;

/* Blocks of the slow kernel: several waves of them, each spinning, so
 * that it takes some ms and writes its last elements last. */
#define SLOW_THREADS	256
#define SLOW_BLOCKS	(N / SLOW_THREADS)

static void reset(void)
{
	RT_OK(cudaDeviceSynchronize());
	RT_OK(cudaMemset(x, 0, N * sizeof(float)));
	RT_OK(cudaMemset(y, 0, N * sizeof(float)));
	RT_OK(cudaDeviceSynchronize());
}

static const char *check(const float *p, float v)
{
	size_t bad = 0;

	RT_OK(cudaMemcpy(h, p, N * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		bad += h[i] != v;
	RT_CHECK(bad == 0, "%zu of %d elements are not %g", bad, N, v);
	return bad ? "NO" : "yes";
}

/* The writer's stream w fills x slowly; the reader's r copies it to y. */
static void ordered(const char *what, cudaStream_t w, cudaStream_t r, float v)
{
	reset();
	slow_fill<<<SLOW_BLOCKS, SLOW_THREADS, 0, w>>>(x, v, N, SPIN);
	copy<<<N / 256, 256, 0, r>>>(y, x, N);
	RT_OK(cudaStreamSynchronize(r));
	printf("%s: the reader saw the writer's result: %s\n", what, check(y, v));
}

/* A copy and a memset on the legacy stream after a blocking stream's slow
 * kernel; an event recorded on it stands for the blocking stream's work. */
static void legacy_copies(cudaStream_t a, cudaStream_t nb)
{
	cudaEvent_t ev;
	size_t bad = 0;

	reset();
	slow_fill<<<SLOW_BLOCKS, SLOW_THREADS, 0, a>>>(x, 9.0f, N, SPIN);
	RT_OK(cudaMemcpyAsync(y, x, N * sizeof(float), cudaMemcpyDeviceToDevice,
			      cudaStreamLegacy));
	RT_OK(cudaStreamSynchronize(cudaStreamLegacy));
	printf("legacy-stream copy after a blocking stream's kernel: %s\n", check(y, 9.0f));

	reset();
	slow_fill<<<SLOW_BLOCKS, SLOW_THREADS, 0, a>>>(x, 4.0f, N, SPIN);
	RT_OK(cudaMemsetAsync(x, 0, N * sizeof(float), cudaStreamLegacy));
	RT_OK(cudaStreamSynchronize(cudaStreamLegacy));
	printf("legacy-stream memset after a blocking stream's kernel: %s\n", check(x, 0.0f));

	/* Once the event is complete, so is the blocking stream's kernel:
	 * read back through the non-blocking stream, ordered by nothing. */
	RT_OK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
	reset();
	slow_fill<<<SLOW_BLOCKS, SLOW_THREADS, 0, a>>>(x, 2.0f, N, SPIN);
	RT_OK(cudaEventRecord(ev, cudaStreamLegacy));
	RT_OK(cudaEventSynchronize(ev));
	RT_OK(cudaMemcpyAsync(h, x, N * sizeof(float), cudaMemcpyDeviceToHost, nb));
	RT_OK(cudaStreamSynchronize(nb));
	for (int i = 0; i < N; i++)
		bad += h[i] != 2.0f;
	RT_CHECK(bad == 0, "%zu of %d elements are not 2", bad, N);
	printf("legacy-stream event after a blocking stream's kernel: kernel done %s\n",
	       bad ? "NO" : "yes");
	RT_OK(cudaEventDestroy(ev));
}

/* Not ordered: only each stream's own result, after a device sync. */
static void nonblocking(cudaStream_t nb)
{
	reset();
	slow_fill<<<SLOW_BLOCKS, SLOW_THREADS, 0, nb>>>(x, 3.0f, N, SPIN);
	slow_fill<<<SLOW_BLOCKS, SLOW_THREADS, 0, cudaStreamLegacy>>>(y, 6.0f, N, SPIN);
	RT_OK(cudaDeviceSynchronize());
	printf("non-blocking stream and the legacy stream, each its own result: %s %s\n",
	       check(x, 3.0f), check(y, 6.0f));
}

int main(void)
{
	cudaStream_t a, b, nb;

	RT_OK(cudaMalloc((void **)&x, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&y, N * sizeof(float)));
	RT_OK(cudaMallocHost((void **)&h, N * sizeof(float)));
	RT_OK(cudaStreamCreate(&a));
	RT_OK(cudaStreamCreate(&b));
	RT_OK(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
	if (rt_failures)
		return rt_done();
	printf("default stream: %s\n", VARIANT);

	ordered("blocking stream, then cudaStreamLegacy", a, cudaStreamLegacy, 5.0f);
	ordered("cudaStreamLegacy, then a blocking stream", cudaStreamLegacy, b, 7.0f);
	ordered("cudaStreamLegacy, then cudaStreamPerThread", cudaStreamLegacy,
		cudaStreamPerThread, 8.0f);
	ordered("cudaStreamPerThread, then cudaStreamLegacy", cudaStreamPerThread,
		cudaStreamLegacy, 10.0f);
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
	/* 0 is this thread's stream: ordered against the legacy one only. */
	ordered("cudaStreamLegacy, then 0", cudaStreamLegacy, 0, 11.0f);
	ordered("0, then cudaStreamLegacy", 0, cudaStreamLegacy, 12.0f);
#else
	/* 0 is the legacy stream. */
	ordered("blocking stream, then 0", a, 0, 11.0f);
	ordered("0, then a blocking stream", 0, b, 12.0f);
#endif
	legacy_copies(a, nb);
	nonblocking(nb);

	RT_OK(cudaStreamDestroy(a));
	RT_OK(cudaStreamDestroy(b));
	RT_OK(cudaStreamDestroy(nb));
	RT_OK(cudaFree(x));
	RT_OK(cudaFree(y));
	RT_OK(cudaFreeHost(h));
	return rt_done();
}
