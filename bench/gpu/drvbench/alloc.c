// SPDX-License-Identifier: MIT
/*
 * alloc.c - the alloc and alloc4g groups: cuMemAlloc and cuMemFree in
 * batches at 4 KiB and 2 MiB, and 2^20 live 4 KiB allocations at once.
 */
#include <stdio.h>
#include <stdlib.h>

#include "drvbench.h"

static void alloc_size(const char *tag, size_t size, unsigned long n)
{
	const unsigned int batch = 16;
	const unsigned long warm = n / 10;
	char na[40], nf[40], nd[40], note[120];
	struct b_samples sa, sf;
	CUdeviceptr p[16];
	unsigned long i, pairs = 0;
	unsigned int k;
	uint64_t start = 0, end;
	CUresult bad = CUDA_SUCCESS;

	snprintf(na, sizeof(na), "memalloc_%s", tag);
	snprintf(nf, sizeof(nf), "memfree_%s", tag);
	snprintf(nd, sizeof(nd), "memalloc_free_%s_drained", tag);
	TRY(na, "us", cuCtxSynchronize());
	b_init(&sa, n / batch);
	b_init(&sf, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0, t1, t2;

		if (i == warm / batch)
			start = b_now();
		t0 = b_now();
		for (k = 0; k < batch; k++) {
			CUresult r = cuMemAlloc(&p[k], size);

			if (r) {
				bad = r;
				p[k] = 0;
			}
		}
		t1 = b_now();
		for (k = 0; k < batch; k++) {
			CUresult r = p[k] ? cuMemFree(p[k]) : CUDA_SUCCESS;

			if (r)
				bad = r;
		}
		t2 = b_now();
		if (bad)
			break;
		if (i >= warm / batch) {
			b_add(&sa, (t1 - t0) * 1000 / batch);
			b_add(&sf, (t2 - t1) * 1000 / batch);
			pairs += batch;
		}
	}
	if (bad) {
		put_na(na, "us", "cuMemAlloc/cuMemFree(%zu): %s", size, errname(bad));
		goto out;
	}
	TRY(nd, "us", cuCtxSynchronize());
	end = b_now();
	snprintf(note, sizeof(note), "cuMemAlloc(%s), per call; 16 allocs timed, then 16 frees",
		 tag);
	put_lat(na, "us", &sa, true, 1e3, note);
	snprintf(note, sizeof(note), "cuMemFree of the %s allocations, per call", tag);
	put_lat(nf, "us", &sf, true, 1e3, note);
	snprintf(note, sizeof(note),
		 "wall time per alloc+free pair incl. the final cuCtxSynchronize (%lu pairs)",
		 pairs);
	put1(nd, "us", (double)(end - start) / 1e3 / (double)pairs, note);
out:
	b_free(&sa);
	b_free(&sf);
}

void bench_alloc(void)
{
	alloc_size("4k", 4096, iters(40000));
	alloc_size("2m", 2 * MIB, iters(2000));
}

void bench_alloc4g(void)
{
	const size_t n = 1ul << 20, size = 4096;
	CUdeviceptr *p = calloc(n, sizeof(*p));
	uint64_t t0, t1, t2, t3, t4;
	size_t i;
	CUresult r = CUDA_SUCCESS;

	if (!p) {
		put_na("alloc4g_acquire", "ms", "calloc failed");
		return;
	}
	TRY("alloc4g_acquire", "ms", cuCtxSynchronize());
	t0 = b_now();
	for (i = 0; i < n; i++) {
		r = cuMemAlloc(&p[i], size);
		if (r)
			break;
	}
	t1 = b_now();
	if (r) {
		put_na("alloc4g_acquire", "ms", "cuMemAlloc #%zu of 2^20 x 4 KiB: %s", i,
		       errname(r));
		while (i)
			cuMemFree(p[--i]);
		cuCtxSynchronize();
		free(p);
		return;
	}
	r = cuCtxSynchronize();
	t2 = b_now();
	if (r) {
		put_na("alloc4g_acquire", "ms", "cuCtxSynchronize after 2^20 cuMemAlloc: %s",
		       errname(r));
		free(p);
		return;
	}
	for (i = 0; i < n; i++) {
		r = cuMemFree(p[i]);
		if (r)
			break;
	}
	t3 = b_now();
	if (!r)
		r = cuCtxSynchronize();
	t4 = b_now();
	free(p);
	put1("alloc4g_acquire", "ms", (double)(t1 - t0) / 1e6, "2^20 x cuMemAlloc(4 KiB), total");
	put1("alloc4g_acquire_sync", "ms", (double)(t2 - t1) / 1e6,
	     "the cuCtxSynchronize right after them");
	put1("alloc4g_acquire_per_call", "us", (double)(t1 - t0) / 1e3 / (double)n,
	     "acquire total / 2^20");
	if (r) {
		put_na("alloc4g_release", "ms", "cuMemFree / cuCtxSynchronize: %s", errname(r));
		return;
	}
	put1("alloc4g_release", "ms", (double)(t3 - t2) / 1e6, "2^20 x cuMemFree, total");
	put1("alloc4g_release_sync", "ms", (double)(t4 - t3) / 1e6,
	     "the cuCtxSynchronize right after them");
	put1("alloc4g_release_per_call", "us", (double)(t3 - t2) / 1e3 / (double)n,
	     "release total / 2^20");
}
