// SPDX-License-Identifier: MIT
/*
 * copy.c - the copy4 and bw groups: 4-byte synchronous copies each way,
 * and 256 MiB copies from pageable and pinned host memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drvbench.h"

void bench_copy4(void)
{
	const unsigned long n = iters(5000), warm = n / 10;
	struct b_samples sm;
	CUdeviceptr d;
	uint32_t h = 0x12345678;
	unsigned long i;

	TRY("memcpy_htod_4b", "us", cuMemAlloc(&d, 4));
	b_init(&sm, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("memcpy_htod_4b", "us", cuMemcpyHtoD(d, &h, 4));
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("memcpy_htod_4b", "us", &sm, false, 1e3, "cuMemcpyHtoD, 4 bytes, pageable");
	sm.n = 0;
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("memcpy_dtoh_4b", "us", cuMemcpyDtoH(&h, d, 4));
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("memcpy_dtoh_4b", "us", &sm, false, 1e3, "cuMemcpyDtoH, 4 bytes, pageable");
	b_free(&sm);
	if (h != 0x12345678)
		printf("# warning: 4-byte copy read back %#x\n", h);
	TRY("memcpy_dtoh_4b", "us", cuMemFree(d));
}

/* HtoD then DtoH of len bytes between host and dev, reps timed each way. */
static void bw_pair(const char *what, void *host, CUdeviceptr dev, size_t len)
{
	const unsigned long reps = divisor > 1 ? 2 : 5;
	char nh[40], nd[40], note[120];
	struct b_samples sm;
	unsigned long i;

	snprintf(nh, sizeof(nh), "%s_htod", what);
	snprintf(nd, sizeof(nd), "%s_dtoh", what);
	snprintf(note, sizeof(note), "%zu MiB synchronous cuMemcpy%s, %lu reps after 1 warm-up",
		 len / MIB, "HtoD", reps);
	b_init(&sm, reps);
	for (i = 0; i <= reps; i++) {
		uint64_t t0 = b_now(), t1;

		TRY(nh, "GB/s", cuMemcpyHtoD(dev, host, len));
		t1 = b_now();
		if (i)
			b_add(&sm, t1 - t0);
	}
	put_rate(nh, "GB/s", &sm, (double)len, note);
	snprintf(note, sizeof(note), "%zu MiB synchronous cuMemcpy%s, %lu reps after 1 warm-up",
		 len / MIB, "DtoH", reps);
	sm.n = 0;
	for (i = 0; i <= reps; i++) {
		uint64_t t0 = b_now(), t1;

		TRY(nd, "GB/s", cuMemcpyDtoH(host, dev, len));
		t1 = b_now();
		if (i)
			b_add(&sm, t1 - t0);
	}
	put_rate(nd, "GB/s", &sm, (double)len, note);
	b_free(&sm);
}

void bench_bw(void)
{
	const size_t len = 256 * MIB;
	CUdeviceptr d;
	void *h;
	CUresult r;

	TRY("pageable_htod", "GB/s", cuMemAlloc(&d, len));
	TRY("pageable_htod", "GB/s", cuMemsetD8(d, 0, len));
	h = malloc(len);
	if (!h) {
		put_na("pageable_htod", "GB/s", "malloc(256 MiB) failed");
		return;
	}
	memset(h, 1, len);
	bw_pair("pageable", h, d, len);
	free(h);

	r = cuMemAllocHost(&h, len);
	if (r) {
		put_na("pinned_htod", "GB/s", "cuMemAllocHost: %s", errname(r));
		put_na("pinned_dtoh", "GB/s", "cuMemAllocHost: %s", errname(r));
	} else {
		memset(h, 1, len);
		bw_pair("pinned", h, d, len);
		TRY("pinned_dtoh", "GB/s", cuMemFreeHost(h));
	}
	TRY("pinned_dtoh", "GB/s", cuMemFree(d));
}
