// SPDX-License-Identifier: MIT
/*
 * hostbw: what the kind of host memory and the shape of a staging pipeline
 * cost on this machine, natively (NVIDIA's libcuda.so.1), to explain the
 * pinned and pageable rows of drvbench (Documentation/performance.md).
 *
 *   LD_LIBRARY_PATH=<dir of NVIDIA's libcuda.so.1> hostbw [--quick]
 *
 * 1. DMA bandwidth of 256 MiB synchronous cuMemcpyHtoD/DtoH from host
 *    memory of each kind: cuMemAllocHost (what a native program gets), a
 *    memfd mapped shared and registered PORTABLE|DEVICEMAP (what axon's
 *    cuMemAllocHost is: libcuda-shim/hostmem.c, axond/cuda/hostmem.c), the
 *    same with MADV_HUGEPAGE, anonymous memory registered with and without
 *    transparent huge pages. Each row names how much of the range the
 *    kernel mapped with huge pages (/proc/self/smaps).
 * 2. The staging pipeline a pageable copy needs (libcuda-shim/copy.c): a
 *    64 MiB staging area in a registered memfd, as a client's data area is;
 *    chunks of 0.5-16 MiB, 2 or 4 in flight, the host side copied with
 *    memcpy or with non-temporal stores. Both the DMA and the host copy run
 *    in this one process here; through axon the daemon issues the DMA and
 *    the client copies, which moves the same bytes through the same memory.
 * 3. NVIDIA's own pageable cuMemcpyHtoD/DtoH and a plain memcpy of 256 MiB,
 *    for reference.
 *
 * Output: `name value GB/s # note` lines, p50 of the repetitions.
 */
#include <emmintrin.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>

#define MIB ((size_t)1 << 20)
#define LEN (256 * MIB)
#define STAGE (64 * MIB)

static int reps = 5;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* GB/s of the median repetition. */
static double rate(uint64_t *t, int n, size_t bytes)
{
	qsort(t, (size_t)n, sizeof(*t), cmp_u64);
	return (double)bytes / (double)t[(n - 1) / 2];
}

static void check(CUresult r, const char *what)
{
	const char *s = "?";

	if (r == CUDA_SUCCESS)
		return;
	cuGetErrorName(r, &s);
	fprintf(stderr, "hostbw: %s: %s\n", what, s);
	exit(1);
}

/* KiB of [p, p+len) the kernel maps with huge pages, from /proc/self/smaps. */
static unsigned long huge_kib(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	unsigned long lo, hi, kib = 0, v;
	bool in = false;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && (sscanf(line, "AnonHugePages: %lu", &v) == 1 ||
			   sscanf(line, "ShmemPmdMapped: %lu", &v) == 1 ||
			   sscanf(line, "FilePmdMapped: %lu", &v) == 1))
			kib += v;
	}
	fclose(f);
	return kib;
}

/* Copies with non-temporal stores: the destination is not read first. */
static void copy_nt(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n && ((uintptr_t)d & 15)) {
		*d++ = *s++;
		n--;
	}
	for (; n >= 64; n -= 64, d += 64, s += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)s);
		__m128i b = _mm_loadu_si128((const __m128i *)(s + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(s + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(s + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	_mm_sfence();
	memcpy(d, s, n);
}

static void dma_row(const char *name, void *h, CUdeviceptr d, const char *note)
{
	uint64_t th[16], td[16];
	int i;

	for (i = 0; i <= reps; i++) {
		uint64_t t0 = now_ns();

		check(cuMemcpyHtoD(d, h, LEN), "cuMemcpyHtoD");
		if (i)
			th[i - 1] = now_ns() - t0;
	}
	for (i = 0; i <= reps; i++) {
		uint64_t t0 = now_ns();

		check(cuMemcpyDtoH(h, d, LEN), "cuMemcpyDtoH");
		if (i)
			td[i - 1] = now_ns() - t0;
	}
	printf("%s_htod %.2f GB/s # %s; %lu of %zu MiB in huge pages\n", name,
	       rate(th, reps, LEN), note, huge_kib(h) / 1024, LEN / MIB);
	printf("%s_dtoh %.2f GB/s # %s\n", name, rate(td, reps, LEN), note);
}

static void *memfd_map(size_t len, bool thp)
{
	int fd = memfd_create("hostbw", MFD_CLOEXEC);
	void *p;

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)len) < 0) {
		close(fd);
		return NULL;
	}
	/* As axon's shim does, commit every page now; with MADV_HUGEPAGE the
	 * pages are left to the faults, which is where shmem decides on huge
	 * pages (a fallocate has no mapping to take the advice from). */
	if (!thp && fallocate(fd, 0, 0, (off_t)len) < 0) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	if (thp)
		madvise(p, len, MADV_HUGEPAGE);
	memset(p, 1, len);
	return p;
}

static void *anon_map(size_t len, bool thp)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 1, len);
	return p;
}

static void registered_row(const char *name, void *p, CUdeviceptr d, const char *note)
{
	uint64_t t0;
	double ms;

	if (!p) {
		printf("%s_htod n/a GB/s # could not map the memory\n", name);
		return;
	}
	t0 = now_ns();
	check(cuMemHostRegister(p, LEN, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP),
	      "cuMemHostRegister");
	ms = (double)(now_ns() - t0) / 1e6;
	{
		char full[200];

		snprintf(full, sizeof(full), "%s; registering took %.1f ms", note, ms);
		dma_row(name, p, d, full);
	}
	check(cuMemHostUnregister(p), "cuMemHostUnregister");
	munmap(p, LEN);
}

/* ---- device memory made of VMM allocations --------------------------------- */

/* A LEN range backed by physical allocations of piece bytes each (axon's
 * cuda backend maps a client's memory one 2 MiB granule at a time:
 * axond/cuda/cuda.c cuda_mem_map). */
static CUdeviceptr vmm_range(size_t piece, CUmemGenericAllocationHandle *h)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc acc = {
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUdeviceptr va;
	size_t off;

	check(cuMemAddressReserve(&va, LEN, 0, 0, 0), "cuMemAddressReserve");
	for (off = 0; off < LEN; off += piece) {
		check(cuMemCreate(&h[off / piece], piece, &prop, 0), "cuMemCreate");
		check(cuMemMap(va + off, piece, 0, h[off / piece], 0), "cuMemMap");
	}
	check(cuMemSetAccess(va, LEN, &acc, 1), "cuMemSetAccess");
	return va;
}

static void vmm_free(CUdeviceptr va, size_t piece, CUmemGenericAllocationHandle *h)
{
	size_t off;

	check(cuMemUnmap(va, LEN), "cuMemUnmap");
	for (off = 0; off < LEN; off += piece)
		check(cuMemRelease(h[off / piece]), "cuMemRelease");
	check(cuMemAddressFree(va, LEN), "cuMemAddressFree");
}

/* As axon's executor issues a copy: asynchronously on a non-blocking
 * stream of a context of its own, an event after it, polled. */
static void exec_row(const char *name, void *h, CUdeviceptr d, const char *note)
{
	uint64_t th[16], td[16];
	CUstream s;
	CUevent e;
	int i, dir;

	check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	check(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
	for (dir = 0; dir < 2; dir++) {
		for (i = 0; i <= reps; i++) {
			uint64_t t0 = now_ns();

			if (dir)
				check(cuMemcpyDtoHAsync(h, d, LEN, s), "cuMemcpyDtoHAsync");
			else
				check(cuMemcpyHtoDAsync(d, h, LEN, s), "cuMemcpyHtoDAsync");
			check(cuEventRecord(e, s), "cuEventRecord");
			while (cuEventQuery(e) == CUDA_ERROR_NOT_READY)
				;
			if (i)
				(dir ? td : th)[i - 1] = now_ns() - t0;
		}
	}
	printf("%s_htod %.2f GB/s # %s\n", name, rate(th, reps, LEN), note);
	printf("%s_dtoh %.2f GB/s # %s\n", name, rate(td, reps, LEN), note);
	cuEventDestroy(e);
	cuStreamDestroy(s);
}

static void vmm_rows(void)
{
	static CUmemGenericAllocationHandle h[LEN / (2 * MIB)];
	void *host = memfd_map(LEN, false);
	CUcontext own, prim;
	CUdeviceptr va, d;

	if (!host)
		return;
	check(cuMemHostRegister(host, LEN, CU_MEMHOSTREGISTER_PORTABLE |
				CU_MEMHOSTREGISTER_DEVICEMAP), "cuMemHostRegister");
	va = vmm_range(LEN, h);
	dma_row("vmm_one", host, va, "memfd host; device: one 256 MiB cuMemCreate, mapped");
	vmm_free(va, LEN, h);
	va = vmm_range(2 * MIB, h);
	dma_row("vmm_2m", host, va,
		"memfd host; device: 128 cuMemCreate of 2 MiB mapped side by side (axon's)");
	/* The executor's way, in a context of its own as axon's pool makes. */
	check(cuCtxGetCurrent(&prim), "cuCtxGetCurrent");
	check(cuCtxCreate(&own, NULL, 0, 0), "cuCtxCreate");
	exec_row("exec_vmm_2m", host, va, "as vmm_2m, async on a stream of a cuCtxCreate context, "
		 "an event polled");
	check(cuMemAlloc(&d, LEN), "cuMemAlloc");
	exec_row("exec_alloc", host, d, "as exec_vmm_2m, device memory from cuMemAlloc");
	check(cuMemFree(d), "cuMemFree");
	check(cuCtxSetCurrent(prim), "cuCtxSetCurrent");
	check(cuCtxDestroy(own), "cuCtxDestroy");
	vmm_free(va, 2 * MIB, h);
	check(cuMemHostUnregister(host), "cuMemHostUnregister");
	munmap(host, LEN);
}

/* ---- the staging pipeline ------------------------------------------------- */

typedef void copy_fn(void *, const void *, size_t);

static void copy_libc(void *d, const void *s, size_t n)
{
	memcpy(d, s, n);
}

/* Device to pageable host through the staging area: chunk k+depth-1's DMA
 * runs while chunk k is copied out, as copy.c's dtoh_staged does. */
static uint64_t pipe_dtoh(unsigned char *user, unsigned char *stage, CUdeviceptr d,
			  CUstream s, CUevent *ev, size_t chunk, int depth, copy_fn *cp)
{
	size_t issued = 0, done = 0;
	int head = 0, busy = 0;
	uint64_t t0 = now_ns();

	while (done < LEN) {
		while (busy < depth && issued < LEN) {
			int slot = (head + busy) % depth;

			check(cuMemcpyDtoHAsync(stage + (size_t)slot * chunk, d + issued, chunk, s),
			      "cuMemcpyDtoHAsync");
			check(cuEventRecord(ev[slot], s), "cuEventRecord");
			issued += chunk;
			busy++;
		}
		check(cuEventSynchronize(ev[head]), "cuEventSynchronize");
		cp(user + done, stage + (size_t)head * chunk, chunk);
		done += chunk;
		head = (head + 1) % depth;
		busy--;
	}
	return now_ns() - t0;
}

/* Pageable host to device: copy a chunk in, queue its DMA, reuse a slot once
 * its DMA is done, as copy.c's staged host-to-device path does. */
static uint64_t pipe_htod(unsigned char *user, unsigned char *stage, CUdeviceptr d,
			  CUstream s, CUevent *ev, size_t chunk, int depth, copy_fn *cp)
{
	size_t done = 0;
	int slot = 0, used = 0;
	uint64_t t0 = now_ns();

	for (; done < LEN; done += chunk, slot = (slot + 1) % depth) {
		if (used >= depth)
			check(cuEventSynchronize(ev[slot]), "cuEventSynchronize");
		else
			used++;
		cp(stage + (size_t)slot * chunk, user + done, chunk);
		check(cuMemcpyHtoDAsync(d + done, stage + (size_t)slot * chunk, chunk, s),
		      "cuMemcpyHtoDAsync");
		check(cuEventRecord(ev[slot], s), "cuEventRecord");
	}
	check(cuStreamSynchronize(s), "cuStreamSynchronize");
	return now_ns() - t0;
}

static void pipelines(CUdeviceptr d)
{
	static const size_t chunks[] = { 16 * MIB, 8 * MIB, 4 * MIB, 2 * MIB, 1 * MIB, MIB / 2 };
	static const int depths[] = { 2, 4, 8, 16 };
	unsigned char *user = malloc(LEN);
	unsigned char *stage = memfd_map(STAGE, false);
	CUevent ev[16];
	CUstream s;
	unsigned int c, k, m;
	int i;

	if (!user || !stage) {
		printf("pipe n/a GB/s # no memory\n");
		return;
	}
	memset(user, 2, LEN);
	check(cuMemHostRegister(stage, STAGE, CU_MEMHOSTREGISTER_PORTABLE), "register stage");
	check(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
	for (i = 0; i < 16; i++)
		check(cuEventCreate(&ev[i], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
	for (m = 0; m < 2; m++) {
		copy_fn *cp = m ? copy_nt : copy_libc;

		for (k = 0; k < sizeof(depths) / sizeof(depths[0]); k++) {
			for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
				uint64_t th[16], td[16];
				size_t ch = chunks[c];

				if (ch * (size_t)depths[k] > STAGE)
					continue;
				for (i = 0; i <= reps; i++) {
					uint64_t t = pipe_dtoh(user, stage, d, s, ev, ch, depths[k], cp);

					if (i)
						td[i - 1] = t;
				}
				for (i = 0; i <= reps; i++) {
					uint64_t t = pipe_htod(user, stage, d, s, ev, ch, depths[k], cp);

					if (i)
						th[i - 1] = t;
				}
				printf("pipe_dtoh_%s_d%d_%zuk %.2f GB/s # staged, %zu KiB chunks, %d in flight, %s\n",
				       m ? "nt" : "memcpy", depths[k], ch >> 10, rate(td, reps, LEN),
				       ch >> 10, depths[k], m ? "non-temporal stores" : "memcpy");
				printf("pipe_htod_%s_d%d_%zuk %.2f GB/s # as above, host to device\n",
				       m ? "nt" : "memcpy", depths[k], ch >> 10, rate(th, reps, LEN));
				fflush(stdout);
			}
		}
	}
	for (i = 0; i < 16; i++)
		cuEventDestroy(ev[i]);
	cuStreamDestroy(s);
	cuMemHostUnregister(stage);
	munmap(stage, STAGE);

	/* References: NVIDIA's pageable copies and plain host copies. */
	dma_row("native_pageable", user, d, "NVIDIA's own pageable path, malloc'd buffer");
	{
		unsigned char *other = malloc(LEN);
		uint64_t t[16];

		if (other) {
			memset(other, 3, LEN);
			for (m = 0; m < 2; m++) {
				for (i = 0; i <= reps; i++) {
					uint64_t t0 = now_ns();

					(m ? copy_nt : copy_libc)(other, user, LEN);
					if (i)
						t[i - 1] = now_ns() - t0;
				}
				printf("host_%s %.2f GB/s # 256 MiB malloc to malloc, one thread\n",
				       m ? "nt" : "memcpy", rate(t, reps, LEN));
			}
			free(other);
		}
	}
	free(user);
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr d;
	void *h;
	FILE *f;
	char line[128];

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		reps = 2;
	check(cuInit(0), "cuInit");
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	check(cuMemAlloc(&d, LEN), "cuMemAlloc");
	check(cuMemsetD8(d, 0, LEN), "cuMemsetD8");
	f = fopen("/sys/kernel/mm/transparent_hugepage/shmem_enabled", "r");
	if (f && fgets(line, sizeof(line), f))
		printf("# shmem_enabled: %s", line);
	if (f)
		fclose(f);
	f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	if (f && fgets(line, sizeof(line), f))
		printf("# thp enabled: %s", line);
	if (f)
		fclose(f);

	check(cuMemAllocHost(&h, LEN), "cuMemAllocHost");
	memset(h, 1, LEN);
	dma_row("allochost", h, d, "cuMemAllocHost");
	check(cuMemFreeHost(h), "cuMemFreeHost");
	registered_row("memfd", memfd_map(LEN, false), d,
		       "memfd, MAP_SHARED, registered (axon's pinned memory)");
	registered_row("memfd_thp", memfd_map(LEN, true), d, "as memfd, with MADV_HUGEPAGE");
	registered_row("anon_nothp", anon_map(LEN, false), d, "anonymous, MADV_NOHUGEPAGE, registered");
	registered_row("anon_thp", anon_map(LEN, true), d, "anonymous, MADV_HUGEPAGE, registered");
	fflush(stdout);
	vmm_rows();
	fflush(stdout);
	pipelines(d);
	check(cuMemFree(d), "cuMemFree");
	return 0;
}
