// SPDX-License-Identifier: MIT
/*
 * rt-copies: host<->device copies through the runtime API, pinned
 * (cudaMallocHost) and pageable (malloc) host memory, synchronous and
 * asynchronous, 1 B to 256 MiB, every byte checked:
 *
 *   sync    cudaMemcpy H2D, D2D, D2H (cudaMemcpyDefault for pinned: UVA
 *           infers the direction)
 *   async   the same three with cudaMemcpyAsync on a stream of its own,
 *           one cudaStreamSynchronize, into a cleared host buffer
 *   offset  (up to 1 MiB + 1) a device pointer 3 bytes into the allocation
 *   memset  cudaMemset of the device copy, read back
 *
 * Usage: rt-copies [LARGEST-SIZE] (default: all sizes).
 *
 * Kernel-free, so the sim runs it too (gpucheck-sim, up to 16 MiB there, to
 * keep `make check` short). Prints one line per
 * size and memory kind; no addresses or timings. Exits 0 when every check
 * passed, 1 otherwise.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt-gpu.h"

/* The bytes of a (size, kind, round) triple: xorshift64, 8 bytes a step. */
static void pattern(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
	for (; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static size_t differing(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t bad = 0;

	if (!memcmp(a, b, n))
		return 0;
	for (size_t i = 0; i < n; i++)
		bad += a[i] != b[i];
	return bad;
}

static size_t count_not(const unsigned char *a, unsigned char v, size_t n)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += a[i] != v;
	return bad;
}

static void *host_alloc(size_t n, bool pinned)
{
	void *p = NULL;

	if (pinned) {
		RT_OK(cudaMallocHost(&p, n));
		return p;
	}
	p = malloc(n);
	RT_CHECK(p != NULL, "malloc %zu", n);
	return p;
}

static void host_free(void *p, bool pinned)
{
	if (pinned)
		RT_OK(cudaFreeHost(p));
	else
		free(p);
}

static const char *verdict(size_t bad)
{
	return bad ? "BAD" : "ok";
}

static void one(size_t n, bool pinned, cudaStream_t s)
{
	unsigned char *src = (unsigned char *)host_alloc(n, pinned);
	unsigned char *dst = (unsigned char *)host_alloc(n, pinned);
	unsigned char *d1 = NULL, *d2 = NULL;
	size_t bad_sync = 0, bad_async = 0, bad_off = 0, bad_set = 0;
	bool offset = n <= (1u << 20) + 1;
	int fails = rt_failures;

	if (!src || !dst)
		return;
	RT_OK(cudaMalloc((void **)&d1, n + 3));
	RT_OK(cudaMalloc((void **)&d2, n));

	/* sync */
	pattern(src, n, n * 4 + pinned);
	memset(dst, 0, n);
	RT_OK(cudaMemcpy(d1, src, n, pinned ? cudaMemcpyDefault : cudaMemcpyHostToDevice));
	RT_OK(cudaMemcpy(d2, d1, n, cudaMemcpyDeviceToDevice));
	RT_OK(cudaMemcpy(dst, d2, n, pinned ? cudaMemcpyDefault : cudaMemcpyDeviceToHost));
	bad_sync = differing(src, dst, n);
	RT_CHECK(bad_sync == 0, "sync %zu B: %zu bytes differ", n, bad_sync);

	/* async, on a stream */
	pattern(src, n, n * 4 + 2 + pinned);
	memset(dst, 0, n);
	RT_OK(cudaMemcpyAsync(d1, src, n, cudaMemcpyHostToDevice, s));
	RT_OK(cudaMemcpyAsync(d2, d1, n, cudaMemcpyDeviceToDevice, s));
	RT_OK(cudaMemcpyAsync(dst, d2, n, cudaMemcpyDeviceToHost, s));
	RT_OK(cudaStreamSynchronize(s));
	bad_async = differing(src, dst, n);
	RT_CHECK(bad_async == 0, "async %zu B: %zu bytes differ", n, bad_async);

	/* a device address that is not aligned */
	if (offset) {
		pattern(src, n, n * 4 + 3);
		memset(dst, 0, n);
		/* on s: a pageable cudaMemcpy may return before its DMA is done,
		 * and s does not wait for the legacy stream */
		RT_OK(cudaMemcpyAsync(d1 + 3, src, n, cudaMemcpyHostToDevice, s));
		RT_OK(cudaMemcpyAsync(dst, d1 + 3, n, cudaMemcpyDeviceToHost, s));
		RT_OK(cudaStreamSynchronize(s));
		bad_off = differing(src, dst, n);
		RT_CHECK(bad_off == 0, "offset %zu B: %zu bytes differ", n, bad_off);
	}

	/* memset */
	RT_OK(cudaMemset(d2, 0xa5, n));
	RT_OK(cudaMemcpy(dst, d2, n, cudaMemcpyDeviceToHost));
	bad_set = count_not(dst, 0xa5, n);
	RT_CHECK(bad_set == 0, "memset %zu B: %zu bytes differ", n, bad_set);

	RT_OK(cudaFree(d1));
	RT_OK(cudaFree(d2));
	host_free(src, pinned);
	host_free(dst, pinned);
	printf("%-8s %10zu B: sync %s, async %s, offset %s, memset %s%s\n",
	       pinned ? "pinned" : "pageable", n, verdict(bad_sync), verdict(bad_async),
	       offset ? verdict(bad_off) : "-", verdict(bad_set),
	       rt_failures != fails ? " (API errors)" : "");
}

int main(int argc, char **argv)
{
	/* An optional largest size, for the sim's run (gpucheck-sim). */
	size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : ~(size_t)0;
	static const size_t sizes[] = {
		1, 3, 4096 + 7, 65536, (1u << 20) + 1, 16u << 20, 256u << 20,
	};
	cudaStream_t s = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	if (rt_failures)
		return 1;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && sizes[i] <= max; i++) {
		one(sizes[i], true, s);
		one(sizes[i], false, s);
	}
	RT_OK(cudaStreamDestroy(s));
	return rt_done();
}
