// SPDX-License-Identifier: MIT
/*
 * pinned - page-locked host memory shared with the daemon, through the
 * driver API:
 *   sizes     cuMemAllocHost / cuMemHostAlloc buffers of 1 B .. 256 MiB:
 *             HtoD and DtoH (sync and async), compared byte for byte; each
 *             is shared (it has a device pointer), its pointer attributes
 *             say HOST, its flags read back; interior sub-ranges too
 *   staged    pageable (staged) and cuMemHostRegister'd memory still copy
 *             correctly
 *   order     an async HtoD -> DtoD -> DtoH chain through pinned buffers on
 *             one stream ends with the right bytes
 *   gated     behind a blocked host function, queued pinned copies have not
 *             run; the HtoD reads its source when it runs (bytes written
 *             after the call arrive), the DtoH writes only then
 *   free      cuMemFreeHost with a 256 MiB DtoH into the buffer in flight:
 *             nothing else is written (a new pinned buffer keeps its bytes),
 *             the stream completes cleanly
 *   fork      a forked child inherits no pinned mapping, uses pinned memory
 *             of its own as a new client; the parent's buffers are intact
 *
 *   pinned [--max-mib N]   (largest size, default 256)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuclient.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pattern(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed | 1;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		v = x * 0x2545f4914f6cdd1dull;
		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (unsigned char)(i * 131u + seed);
}

static void compare(const unsigned char *got, const unsigned char *want, size_t len,
		    const char *what, size_t size)
{
	size_t i;

	if (!memcmp(got, want, len))
		return;
	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	cu_fail("%s (%zu bytes): first difference at byte %zu: got 0x%02x, expected 0x%02x",
		what, size, i, got[i], want[i]);
}

/* A pinned buffer must be shared with the daemon and look like host memory. */
static void check_shared(void *p, size_t len, unsigned int flags)
{
	CUdeviceptr dp = 0, dp1 = 0, attr_dp = 0;
	unsigned int type = 0, got_flags = ~0u;
	void *hp = NULL;

	CK(cuMemHostGetDevicePointer(&dp, p, 0));
	if (!dp)
		cu_fail("pinned buffer of %zu bytes has device pointer 0", len);
	CK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(uintptr_t)p));
	if (type != CU_MEMORYTYPE_HOST)
		cu_fail("memory type of a pinned buffer is %u, expected HOST", type);
	if (len > 1) {
		char *q = (char *)p + len - 1;

		CK(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER,
					 (CUdeviceptr)(uintptr_t)q));
		if (hp != q)
			cu_fail("HOST_POINTER of %p is %p", (void *)q, hp);
		CK(cuPointerGetAttribute(&attr_dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
					 (CUdeviceptr)(uintptr_t)q));
		CK(cuMemHostGetDevicePointer(&dp1, q, 0));
		if (attr_dp != dp + len - 1 || dp1 != attr_dp)
			cu_fail("device pointer of the last byte: %llx / %llx, expected %llx",
				(unsigned long long)attr_dp, (unsigned long long)dp1,
				(unsigned long long)(dp + len - 1));
	}
	CK(cuMemHostGetFlags(&got_flags, p));
	if (got_flags != flags)
		cu_fail("cuMemHostGetFlags: %#x, expected %#x", got_flags, flags);
}

static void sizes(size_t max, CUdeviceptr d, CUstream s)
{
	static const size_t sz[] = {
		1, 3, 4095, 4096, 4097, 65537, (1u << 20) + 5, (16u << 20) + 1,
		(64u << 20) + 3, 256u << 20,
	};
	unsigned char *want = malloc(max);
	unsigned int i;

	if (!want)
		cu_fail("out of memory");
	for (i = 0; i < sizeof(sz) / sizeof(sz[0]) && sz[i] <= max; i++) {
		const size_t n = sz[i];
		const unsigned int fl = i % 2 ? CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE : 0;
		unsigned char *src, *dst;
		double t;

		if (fl)
			CK(cuMemHostAlloc((void **)&src, n, fl));
		else
			CK(cuMemAllocHost((void **)&src, n));
		CK(cuMemHostAlloc((void **)&dst, n, CU_MEMHOSTALLOC_WRITECOMBINED));
		check_shared(src, n, fl);
		check_shared(dst, n, CU_MEMHOSTALLOC_WRITECOMBINED);
		pattern(src, n, n);
		memcpy(want, src, n);
		memset(dst, 0, n);
		t = now_s();
		CK(cuMemcpyHtoD(d, src, n));
		CK(cuMemcpyDtoH(dst, d, n));
		t = now_s() - t;
		compare(dst, want, n, "pinned HtoD + DtoH", n);
		/* Async, and through cuMemcpy (unified addressing). */
		memset(dst, 0, n);
		pattern(src, n, n + 1);
		memcpy(want, src, n);
		CK(cuMemcpyHtoDAsync(d, src, n, s));
		CK(cuMemcpyDtoHAsync(dst, d, n, s));
		CK(cuStreamSynchronize(s));
		compare(dst, want, n, "pinned async HtoD + DtoH", n);
		memset(dst, 0, n);
		CK(cuMemcpy((CUdeviceptr)(uintptr_t)dst, d, n));
		compare(dst, want, n, "cuMemcpy device -> pinned", n);
		/* Interior sub-ranges: odd offsets inside both buffers. */
		if (n > 64 && n < (128u << 20)) {
			memset(dst, 0, n);
			CK(cuMemcpyHtoD(d + 7, src + 13, n - 40));
			CK(cuMemcpyDtoH(dst + 5, d + 7, n - 40));
			compare(dst + 5, want + 13, n - 40, "pinned interior ranges", n);
		}
		printf("pinned: %zu bytes identical (sync round trip %.1f MiB/s)\n", n,
		       2.0 * (double)n / (1 << 20) / (t > 0 ? t : 1e-9));
		CK(cuMemFreeHost(src));
		CK(cuMemFreeHost(dst));
	}
	free(want);
}

/* Pageable (staged) and registered memory keep working. */
static void staged(CUdeviceptr d)
{
	const size_t n = (8u << 20) + 77;
	unsigned char *a = malloc(n), *b = malloc(n), *r;
	CUdeviceptr dp;

	if (!a || !b || posix_memalign((void **)&r, 4096, n))
		cu_fail("out of memory");
	pattern(a, n, 42);
	CK(cuMemcpyHtoD(d, a, n));
	CK(cuMemcpyDtoH(b, d, n));
	compare(b, a, n, "pageable round trip", n);
	/* Registered memory is shared now (hostreg): its device pointer is
	 * its host pointer; tests/integration/hostreg.c tests it through. */
	CK(cuMemHostRegister(r, n, CU_MEMHOSTREGISTER_PORTABLE));
	CK(cuMemHostGetDevicePointer(&dp, r, 0));
	if (dp != (CUdeviceptr)(uintptr_t)r)
		cu_fail("registered memory: device pointer %#llx, host pointer %p",
			(unsigned long long)dp, (void *)r);
	memset(r, 0, n);
	CK(cuMemcpyDtoH(r, d, n));
	compare(r, a, n, "registered DtoH", n);
	CK(cuMemHostUnregister(r));
	EXPECT(cuMemFreeHost(a), CUDA_ERROR_INVALID_VALUE);	/* not ours */
	free(a);
	free(b);
	free(r);
	printf("pinned: pageable and registered memory copied correctly\n");
}

static void order(CUdeviceptr d, CUdeviceptr d2, size_t n, CUstream s)
{
	unsigned char *a, *b, *want = malloc(n);
	double t0, t_enq, t_all;
	CUresult q;

	if (!want)
		cu_fail("out of memory");
	CK(cuMemAllocHost((void **)&a, n));
	CK(cuMemAllocHost((void **)&b, n));
	pattern(a, n, 7);
	memcpy(want, a, n);
	memset(b, 0, n);
	t0 = now_s();
	CK(cuMemcpyHtoDAsync(d, a, n, s));
	CK(cuMemcpyDtoDAsync(d2, d, n, s));
	CK(cuMemcpyDtoHAsync(b, d2, n, s));
	t_enq = now_s() - t0;
	q = cuStreamQuery(s);
	/* Three copies of n bytes are not done by the time the calls return
	 * unless the calls waited for them (or this thread was descheduled
	 * that long: gated() below is the exact check). */
	if (q != CUDA_ERROR_NOT_READY && q != CUDA_SUCCESS)
		cu_fail("cuStreamQuery: %s", cu_name(q));
	if (q == CUDA_SUCCESS)
		printf("pinned: note: stream already idle after queuing (%.3f ms)\n", t_enq * 1e3);
	CK(cuStreamSynchronize(s));
	t_all = now_s() - t0;
	compare(b, want, n, "async chain HtoD -> DtoD -> DtoH", n);
	printf("pinned: async chain of 3 x %zu MiB queued in %.3f ms, done after %.1f ms\n",
	       n >> 20, t_enq * 1e3, t_all * 1e3);
	CK(cuMemFreeHost(a));
	CK(cuMemFreeHost(b));
	free(want);
}

static int gate_open;

static void CUDA_CB gate(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&gate_open, __ATOMIC_ACQUIRE))
		usleep(1000);
}

/*
 * Truly asynchronous, exactly: behind a host function that does not return
 * until told to, queued pinned copies cannot have run; the HtoD reads its
 * source when it runs (the bytes written after the call are the ones that
 * arrive: nothing was staged at the call), and the DtoH writes its
 * destination only then.
 */
static void gated(CUdeviceptr d, CUstream s)
{
	const size_t n = (1u << 20) + 3;
	unsigned char *a, *b, *zero = calloc(1, n), *want = malloc(n);
	CUresult r;

	if (!zero || !want)
		cu_fail("out of memory");
	CK(cuMemAllocHost((void **)&a, n));
	CK(cuMemAllocHost((void **)&b, n));
	pattern(a, n, 3);
	memset(b, 0, n);
	__atomic_store_n(&gate_open, 0, __ATOMIC_RELEASE);
	r = cuLaunchHostFunc(s, gate, NULL);
	if (r == CUDA_ERROR_NOT_SUPPORTED) {
		printf("pinned: cuLaunchHostFunc not supported: gated check skipped\n");
	} else {
		CK(r);
		CK(cuMemcpyHtoDAsync(d, a, n, s));
		CK(cuMemcpyDtoHAsync(b, d, n, s));
		if (cuStreamQuery(s) != CUDA_ERROR_NOT_READY)
			cu_fail("stream not busy behind a blocked host function");
		compare(b, zero, n, "pinned DtoH destination before the copy ran", n);
		pattern(a, n, 4);	/* after the call, before the copy */
		memcpy(want, a, n);
		__atomic_store_n(&gate_open, 1, __ATOMIC_RELEASE);
		CK(cuStreamSynchronize(s));
		compare(b, want, n, "pinned HtoD read at execution, DtoH written then", n);
		printf("pinned: async pinned copies run in stream order, reading and writing in place\n");
	}
	CK(cuMemFreeHost(a));
	CK(cuMemFreeHost(b));
	free(zero);
	free(want);
}

static void free_in_flight(CUdeviceptr d, size_t n, CUstream s)
{
	unsigned char *p, *q, *want = malloc(n);

	if (!want)
		cu_fail("out of memory");
	CK(cuMemsetD8(d, 0xee, n));
	CK(cuMemAllocHost((void **)&p, n));
	CK(cuMemcpyDtoHAsync(p, d, n, s));
	CK(cuMemFreeHost(p));
	/* Likely the same addresses again: the copy above must not land here. */
	CK(cuMemAllocHost((void **)&q, n));
	pattern(q, n, 99);
	memcpy(want, q, n);
	CK(cuStreamSynchronize(s));
	compare(q, want, n, "new pinned buffer after freeing one with a copy in flight", n);
	/* And an HtoD whose source is freed at once reads what it held. */
	CK(cuMemcpyHtoDAsync(d, q, n, s));
	CK(cuMemFreeHost(q));
	{
		unsigned char *back = malloc(n);

		if (!back)
			cu_fail("out of memory");
		CK(cuMemcpyDtoH(back, d, n));
		compare(back, want, n, "HtoD from a pinned buffer freed while queued", n);
		free(back);
	}
	free(want);
	printf("pinned: freeing with copies in flight is safe\n");
}

static void forked(CUdeviceptr d)
{
	const size_t n = 3u << 20;
	unsigned char *p, *want = malloc(n);
	int status;
	pid_t pid;

	if (!want)
		cu_fail("out of memory");
	CK(cuMemAllocHost((void **)&p, n));
	pattern(p, n, 5);
	memcpy(want, p, n);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		cu_fail("fork: %s", strerror(errno));
	if (pid == 0) {
		CUdeviceptr cd;
		CUcontext cctx;
		CUdevice dev;
		unsigned int f;
		unsigned char *cp, *back;

		/* The driver's pinned memory is not inherited; neither is ours,
		 * so the child cannot write into the parent's buffer. */
		if (msync(p, 4096, MS_ASYNC) == 0 || errno != ENOMEM) {
			fprintf(stderr, "pinned: child: the parent's pinned buffer is mapped\n");
			_exit(3);
		}
		if (cuMemHostGetFlags(&f, p) != CUDA_ERROR_INVALID_VALUE) {
			fprintf(stderr, "pinned: child: the parent's buffer is still known\n");
			_exit(4);
		}
		CK(cuInit(0));
		CK(cuDeviceGet(&dev, 0));
		CK(cuCtxCreate(&cctx, NULL, 0, dev));
		CK(cuMemAlloc(&cd, n));
		CK(cuMemAllocHost((void **)&cp, n));
		back = malloc(n);
		if (!back)
			_exit(5);
		pattern(cp, n, 6);
		CK(cuMemcpyHtoD(cd, cp, n));
		memset(cp, 0, n);
		CK(cuMemcpyDtoH(cp, cd, n));
		pattern(back, n, 6);
		if (memcmp(cp, back, n)) {
			fprintf(stderr, "pinned: child: round trip differs\n");
			_exit(6);
		}
		CK(cuMemFreeHost(cp));
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		cu_fail("forked child failed (status %#x)", status);
	compare(p, want, n, "parent's pinned buffer after the child ran", n);
	CK(cuMemcpyHtoD(d, p, n));
	memset(p, 0, n);
	CK(cuMemcpyDtoH(p, d, n));
	compare(p, want, n, "parent's round trip after fork", n);
	CK(cuMemFreeHost(p));
	free(want);
	printf("pinned: fork: child has no pinned mapping, parent intact\n");
}

int main(int argc, char **argv)
{
	size_t max = 256u << 20;
	CUdeviceptr d, d2;
	CUcontext ctx;
	CUstream s;
	CUdevice dev;

	cu_prog = "pinned";
	if (argc == 3 && !strcmp(argv[1], "--max-mib"))
		max = strtoul(argv[2], NULL, 0) << 20;
	else if (argc != 1) {
		fprintf(stderr, "usage: pinned [--max-mib N]\n");
		return 2;
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&d, max));
	CK(cuMemAlloc(&d2, max));
	sizes(max, d, s);
	staged(d);
	/* 64 MiB is plenty to see overlap, and keeps the run short on a
	 * loaded machine. */
	order(d, d2, max < (64u << 20) ? max : 64u << 20, s);
	gated(d, s);
	free_in_flight(d, max < (64u << 20) ? max : 64u << 20, s);
	forked(d);
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
	CK(cuMemFree(d2));
	CK(cuCtxDestroy(ctx));
	printf("pinned: PASSED\n");
	return 0;
}
