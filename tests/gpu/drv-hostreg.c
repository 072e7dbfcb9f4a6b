// SPDX-License-Identifier: MIT
/*
 * Host memory the program owns, registered with cuMemHostRegister and used
 * the way XLA uses it: the host pointer handed to memsets, copies and
 * kernels as a device pointer (unified addressing). Driver API only; runs
 * unchanged natively and through axon and prints the same transcript on
 * stdout both ways (timings and the device name go to stderr):
 *
 *   1. identity: memory from mmap, registered PORTABLE (as XLA registers)
 *      at an unaligned start and end; its device pointer (from
 *      cuMemHostGetDevicePointer and the DEVICE_POINTER attribute) is its
 *      host pointer, its contents survive the registration;
 *   2. through the host pointer: cuMemsetD32/D8 (sync and async), a
 *      device-to-device copy out of it and into it, a device-to-host copy
 *      out of it, kernels reading (vectorAdd) and writing (add_one_u8,
 *      iota_u32) it; the bytes around the range are untouched;
 *   3. unregistered: the contents stay in place, there is no device
 *      pointer any more, and the memory is ordinary memory again;
 *   4. a small range inside a page, malloc'd memory, DEVICEMAP, re-registered
 *      after an unregistration; cuMemHostAlloc(DEVICEMAP) memory has the
 *      same identity; an overlapping registration is refused;
 *   5. READ_ONLY (where the device supports it): kernels and copies read
 *      it through the host pointer;
 *   6. registration cost, 1 MiB .. 256 MiB (stderr only).
 *
 * With --edges (axon only: what the driver does there is not axon's to
 * promise) it also checks what only axon defines: writes into READ_ONLY
 * memory and one byte past a range are refused, a file's shared mapping and
 * a range sharing a page with another registration are registered without
 * a device pointer (copies staged; DEVICEMAP refused), IOMEMORY is
 * refused, and a forked child gets a private copy of registered memory.
 *
 * Usage: drv-hostreg MODULE-IMAGE [--edges] (tests/sim-kernels/kernels.cu
 * built for the device). Exit 0 when every check passed; a mismatch or an
 * unexpected failure exits 1 with the line that says why.
 * tests/integration/hostreg_test.c compares the transcript through the sim.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* memfd_create */
#endif
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "drv-gpu.h"

#define EXPECT(x, want)							\
	do {								\
		CUresult r_ = (x);					\
		if (r_ != (want)) {					\
			printf("FAIL %s:%d %s -> %s, expected %s\n", __FILE__, __LINE__, \
			       #x, ename(r_), ename(want));		\
			exit(1);					\
		}							\
	} while (0)

static void fail(const char *what)
{
	printf("FAIL %s\n", what);
	exit(1);
}

static CUfunction f_vadd, f_add_one, f_iota;

static CUdeviceptr dp_of(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

static void add_one(CUstream s, CUdeviceptr p, int n)
{
	void *args[] = { &p, &n };

	CK(cuLaunchKernel(f_add_one, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void iota(CUstream s, CUdeviceptr p, int n)
{
	void *args[] = { &p, &n };

	CK(cuLaunchKernel(f_iota, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void vadd(CUstream s, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int n)
{
	void *args[] = { &a, &b, &c, &n };

	CK(cuLaunchKernel(f_vadd, (unsigned)(n + 255) / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
}

static void pattern(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 31 + seed);
}

static bool is_pattern(const unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 31 + seed))
			return false;
	return true;
}

static bool all(const unsigned char *p, size_t n, unsigned char v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The identity checks of a registered (or DEVICEMAP-allocated) pointer. */
static void identity(const char *what, void *p, size_t n)
{
	CUdeviceptr dp = 0, attr = 0;
	unsigned int type = 0;
	void *host = NULL;

	CK(cuMemHostGetDevicePointer(&dp, p, 0));
	CK(cuPointerGetAttribute(&attr, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, dp_of(p)));
	CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, dp_of(p)));
	CK(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, dp_of(p)));
	printf("%s: device pointer %s host pointer, attribute %s, type %s, host %s\n", what,
	       dp == dp_of(p) ? "==" : "!=", attr == dp_of(p) ? "==" : "!=",
	       type == CU_MEMORYTYPE_HOST ? "HOST" : "other", host == p ? "==" : "!=");
	CK(cuMemHostGetDevicePointer(&dp, (char *)p + n - 1, 0));
	if (dp != dp_of(p) + n - 1)
		fail("the last byte's device pointer");
}

#define LEN	((3u << 20) + 1000)	/* the registered range */
#define OFF	100			/* its start in its first page */

/* 1-3: mmap'd memory registered at an unaligned range, used, unregistered. */
static void through_host_pointer(CUstream s)
{
	const size_t map = LEN + 2 * 4096 + OFF;
	unsigned char *m, *p, *back = malloc(LEN);
	CUdeviceptr d, d2;
	float *fa;
	size_t i;
	int n = (int)(LEN / 4) & ~255;

	m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || !back)
		fail("out of memory");
	memset(m, 0xee, map);
	p = m + OFF;
	pattern(p, LEN, 1);
	CK(cuMemHostRegister(p, LEN, CU_MEMHOSTREGISTER_PORTABLE));
	printf("register PORTABLE, unaligned: contents %s\n", is_pattern(p, LEN, 1) ? "kept" : "LOST");
	identity("registered", p, LEN);

	/* 2: as XLA's autotuner does: memset it, copy from it. */
	CK(cuMemAlloc(&d, LEN));
	CK(cuMemAlloc(&d2, LEN));
	CK(cuMemsetD32(dp_of(p), 0x01020304, LEN / 4));
	for (i = 0; i < LEN / 4 * 4; i += 4)
		if (p[i] != 4 || p[i + 1] != 3 || p[i + 2] != 2 || p[i + 3] != 1)
			fail("cuMemsetD32 through the host pointer");
	CK(cuMemsetD8Async(dp_of(p), 0x5a, LEN, s));
	CK(cuStreamSynchronize(s));
	printf("memset through the host pointer: %s\n", all(p, LEN, 0x5a) ? "OK" : "WRONG");
	pattern(p, LEN, 2);
	CK(cuMemcpyDtoD(d, dp_of(p), LEN));
	CK(cuMemcpyDtoH(back, d, LEN));
	printf("copy device <- host pointer: %s\n", is_pattern(back, LEN, 2) ? "OK" : "WRONG");
	memset(back, 0, LEN);
	CK(cuMemcpyDtoH(back, dp_of(p), LEN));
	printf("copy pageable <- host pointer: %s\n", is_pattern(back, LEN, 2) ? "OK" : "WRONG");
	pattern(back, LEN, 3);
	CK(cuMemcpyHtoD(d2, back, LEN));
	CK(cuMemcpyDtoDAsync(dp_of(p), d2, LEN, s));
	CK(cuStreamSynchronize(s));
	printf("copy host pointer <- device: %s\n", is_pattern(p, LEN, 3) ? "OK" : "WRONG");

	/* Kernels: write it, read it. */
	add_one(s, dp_of(p), (int)LEN);
	CK(cuStreamSynchronize(s));
	for (i = 0; i < LEN; i++)
		if (p[i] != (unsigned char)(i * 31 + 3 + 1))
			fail("add_one_u8 through the host pointer");
	iota(s, dp_of(p), n);
	CK(cuStreamSynchronize(s));
	for (i = 0; i < (size_t)n; i++)
		if (((unsigned int *)p)[i] != (unsigned int)i)
			fail("iota_u32 through the host pointer");
	fa = (float *)p;
	for (i = 0; i < (size_t)n; i++)
		fa[i] = (float)i;
	vadd(s, dp_of(p), dp_of(p), d, n);
	CK(cuMemcpyDtoH(back, d, (size_t)n * 4));
	for (i = 0; i < (size_t)n; i++)
		if (((float *)back)[i] != 2.0f * (float)i)
			fail("vectorAdd reading the host pointer");
	printf("kernels through the host pointer: add_one OK, iota OK, vectorAdd OK\n");
	printf("bytes around the range: %s\n",
	       all(m, OFF, 0xee) && all(p + LEN, map - OFF - LEN, 0xee) ? "untouched" : "WRITTEN");

	/* 3: unregistered, it stays where it is, with what it holds. */
	pattern(p, LEN, 4);
	CK(cuMemHostUnregister(p));
	printf("unregistered: contents %s\n", is_pattern(p, LEN, 4) ? "kept" : "LOST");
	{
		CUdeviceptr dp;

		EXPECT(cuMemHostGetDevicePointer(&dp, p, 0), CUDA_ERROR_INVALID_VALUE);
	}
	EXPECT(cuMemHostUnregister(p), CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
	p[0] = 9;
	p[LEN - 1] = 9;
	printf("unregistered: no device pointer, writable\n");
	CK(cuMemFree(d));
	CK(cuMemFree(d2));
	munmap(m, map);
	free(back);
}

/* 4: what programs register, and the pinned memory they allocate. */
static void kinds(CUstream s)
{
	unsigned char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned char *small = page + 3000, *big = malloc(8u << 20), *a;
	CUdeviceptr dp;

	/* (Small malloc chunks would do as well, but a sanitizer's allocator
	 * puts them at the same fixed addresses in every process, the
	 * daemon's too, where axon then cannot map them: see architecture.md,
	 * "Registered host memory".) */
	if (page == MAP_FAILED || !big)
		fail("out of memory");
	memset(page, 0xee, 8192);
	pattern(small, 1000, 5);
	CK(cuMemHostRegister(small, 1000, CU_MEMHOSTREGISTER_PORTABLE));
	identity("1000 bytes inside a page", small, 1000);
	CK(cuMemsetD8(dp_of(small) + 10, 0x11, 10));
	printf("1000 bytes inside a page: memset %s\n",
	       all(small + 10, 10, 0x11) && is_pattern(small, 10, 5) && all(page, 3000, 0xee) &&
	       all(small + 1000, 8192 - 4000, 0xee) ? "OK" : "WRONG");
	CK(cuMemHostUnregister(small));
	munmap(page, 8192);

	CK(cuMemHostRegister(big, 8u << 20, CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_PORTABLE));
	identity("malloc 8 MiB, DEVICEMAP", big, 8u << 20);
	EXPECT(cuMemHostRegister(big + 4096, 4096, 0), CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	add_one(s, dp_of(big), 4096);
	CK(cuStreamSynchronize(s));
	CK(cuMemHostUnregister(big));
	CK(cuMemHostRegister(big, 8u << 20, 0));
	identity("registered again", big, 8u << 20);
	CK(cuMemHostUnregister(big));
	printf("overlapping registration: refused\n");
	free(big);

	CK(cuMemHostAlloc((void **)&a, 1u << 20, CU_MEMHOSTALLOC_DEVICEMAP));
	identity("cuMemHostAlloc DEVICEMAP", a, 1u << 20);
	CK(cuMemsetD8(dp_of(a), 0x33, 1u << 20));
	printf("cuMemHostAlloc DEVICEMAP: memset %s\n", all(a, 1u << 20, 0x33) ? "OK" : "WRONG");
	CK(cuMemHostGetDevicePointer(&dp, a, 0));
	CK(cuMemFreeHost(a));
}

/* 5: memory the device may only read. */
static void read_only(CUstream s, CUdevice dev)
{
	const size_t n = 1u << 20;
	int ro = 0;
	float *p;
	CUdeviceptr d;
	size_t i;

	CK(cuDeviceGetAttribute(&ro, CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED, dev));
	if (!ro) {
		printf("read-only: not supported by the device\n");
		return;
	}
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		fail("out of memory");
	for (i = 0; i < n / 4; i++)
		p[i] = (float)i;
	CK(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_READ_ONLY));
	CK(cuMemAlloc(&d, n));
	vadd(s, dp_of(p), dp_of(p), d, (int)(n / 4));
	CK(cuStreamSynchronize(s));
	{
		float out[4];

		CK(cuMemcpyDtoH(out, d + 4 * 1000, sizeof(out)));
		printf("read-only: kernel read %s\n", out[0] == 2000.0f && out[3] == 2006.0f ?
		       "OK" : "WRONG");
	}
	CK(cuMemHostUnregister(p));
	CK(cuMemFree(d));
	munmap(p, n);
}

/* 6: what a registration costs (stderr: timings differ by nature). */
static void cost(void)
{
	size_t n;

	for (n = 1u << 20; n <= (256u << 20); n <<= 2) {
		unsigned char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		double t0, t1, t2;

		if (p == MAP_FAILED)
			fail("out of memory");
		memset(p, 1, n);
		t0 = now_s();
		CK(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE));
		t1 = now_s();
		CK(cuMemHostUnregister(p));
		t2 = now_s();
		fprintf(stderr, "cost: %4zu MiB register %8.3f ms unregister %8.3f ms\n", n >> 20,
			(t1 - t0) * 1e3, (t2 - t1) * 1e3);
		munmap(p, n);
	}
	printf("registration cost: measured (stderr)\n");
}

/* In a forked child: 0 when registered memory is a private copy. */
static int child_sees_copy(unsigned char *q, size_t n)
{
	char line[512];
	FILE *f;
	int bad = !is_pattern(q, n, 7);

	q[0] = 0x77;	/* must not reach the parent */
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a = 0, e = 0;

		if (sscanf(line, "%llx-%llx", &a, &e) == 2 && a <= (uintptr_t)q &&
		    (uintptr_t)q < e && strstr(line, "axon-hostreg"))
			bad = 1;
	}
	if (f)
		fclose(f);
	return bad;
}

/* --edges: what only axon defines (see the header). */
static int hostreg_edges(CUstream s)
{
	const size_t n = 1u << 20;
	unsigned char *p, *q, *back = malloc(n);
	CUdeviceptr d, dp;
	pid_t pid;
	int fd, st = 0;

	(void)s;
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || !back)
		fail("out of memory");
	CK(cuMemAlloc(&d, n));
	memset(p, 0x44, n);
	CK(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_READ_ONLY));
	EXPECT(cuMemsetD8(dp_of(p), 1, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyDtoD(dp_of(p), d, 16), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyDtoH(p, d, 16), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemcpyDtoD(d, dp_of(p), n));
	printf("edges: read-only: writes refused, reads OK, contents %s\n",
	       all(p, n, 0x44) ? "kept" : "WRITTEN");
	CK(cuMemHostUnregister(p));

	/* One byte past either end is no device memory. */
	CK(cuMemHostRegister(p + 100, 1000, 0));
	EXPECT(cuMemsetD8(dp_of(p) + 99, 0, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemsetD8(dp_of(p) + 1099, 0, 2), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemsetD8(dp_of(p) + 100, 0, 1000));
	/* A range on a page another registration moved: no device pointer. */
	CK(cuMemHostRegister(p + 2000, 100, CU_MEMHOSTREGISTER_PORTABLE));
	EXPECT(cuMemHostGetDevicePointer(&dp, p + 2000, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemHostRegister(p + 3000, 100, CU_MEMHOSTREGISTER_DEVICEMAP),
	       CUDA_ERROR_NOT_SUPPORTED);
	pattern(p + 2000, 100, 8);
	CK(cuMemcpyHtoD(d, p + 2000, 100));
	CK(cuMemcpyDtoH(back, d, 100));
	printf("edges: past the ends refused; a shared page: staged %s\n",
	       is_pattern(back, 100, 8) && all(p, 100, 0x44) && all(p + 1100, 900, 0x44) ?
	       "OK" : "WRONG");
	CK(cuMemHostUnregister(p + 2000));
	CK(cuMemHostUnregister(p + 100));

	/* Memory shared with a file stays the file's: no device pointer. */
	fd = memfd_create("hostreg-file", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, (off_t)n))
		fail("memfd");
	q = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (q == MAP_FAILED)
		fail("mmap of the file");
	EXPECT(cuMemHostRegister(q, n, CU_MEMHOSTREGISTER_DEVICEMAP), CUDA_ERROR_NOT_SUPPORTED);
	CK(cuMemHostRegister(q, n, CU_MEMHOSTREGISTER_PORTABLE));
	EXPECT(cuMemHostGetDevicePointer(&dp, q, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemsetD8(dp_of(q), 0, 16), CUDA_ERROR_INVALID_VALUE);
	pattern(back, n, 9);
	CK(cuMemcpyHtoD(d, back, n));
	CK(cuMemcpyDtoH(q, d, n));
	{
		unsigned char b[64];

		printf("edges: a file's mapping: staged, the file %s\n",
		       pread(fd, b, sizeof(b), 4096) == (ssize_t)sizeof(b) &&
		       is_pattern(q, n, 9) && !memcmp(b, q + 4096, sizeof(b)) ? "sees the copy" :
		       "WRONG");
	}
	CK(cuMemHostUnregister(q));
	munmap(q, n);
	close(fd);
	EXPECT(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_IOMEMORY), CUDA_ERROR_NOT_SUPPORTED);

	/* Registered again at once, over and over: the daemon's mapping of
	 * the last registration is gone each time (else: no identity). */
	for (st = 0; st < 20; st++) {
		CK(cuMemHostRegister(p + 64, n - 128, CU_MEMHOSTREGISTER_PORTABLE));
		CK(cuMemHostGetDevicePointer(&dp, p + 64, 0));
		if (dp != dp_of(p + 64))
			fail("registered again at once: no identity");
		CK(cuMemsetD8(dp, (unsigned char)st, 1));
		CK(cuMemHostUnregister(p + 64));
	}
	st = 0;
	printf("edges: registered again at once x20: identity each time, last byte %u\n", p[64]);

	/* A forked child: a private copy, never the parent's pages. */
	pattern(p, n, 7);
	CK(cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE));
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child_sees_copy(p, n));
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		fail("fork");
	printf("edges: fork: child %s, parent's memory %s\n",
	       WIFEXITED(st) && !WEXITSTATUS(st) ? "had a private copy" : "WRONG",
	       is_pattern(p, n, 7) ? "kept" : "WRITTEN");
	CK(cuMemsetD8(dp_of(p), 0x12, 8));
	CK(cuMemHostUnregister(p));
	CK(cuMemFree(d));
	munmap(p, n);
	free(back);
	return 0;
}

int main(int argc, char **argv)
{
	bool edges = argc == 3 && !strcmp(argv[2], "--edges");
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUstream s;
	char name[256];
	char *img;
	long len;
	int can = -1;
	FILE *fp;

	if (argc != 2 && !edges) {
		fprintf(stderr, "usage: %s MODULE-IMAGE [--edges]\n", argv[0]);
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
	CK(cuDeviceGetAttribute(&can, CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM,
				dev));
	printf("CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: %d\n", can);
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, img));
	free(img);
	CK(cuModuleGetFunction(&f_vadd, mod, "_Z9vectorAddPKfS0_Pfi"));
	CK(cuModuleGetFunction(&f_add_one, mod, "add_one_u8"));
	CK(cuModuleGetFunction(&f_iota, mod, "iota_u32"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	through_host_pointer(s);
	kinds(s);
	read_only(s, dev);
	cost();
	if (edges && hostreg_edges(s))
		return 1;
	CK(cuStreamDestroy(s));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	printf("done\n");
	return 0;
}
