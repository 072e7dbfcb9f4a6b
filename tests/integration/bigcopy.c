// SPDX-License-Identifier: MIT
/*
 * bigcopy - large copies and memsets, compared byte for byte:
 *   a 256 MiB pattern host -> device -> host; device -> device (whole, and
 *   at odd offsets and lengths); cuMemsetD8 / D16 / D32 over whole buffers
 *   and over an interior range whose neighbours must stay untouched.
 *
 *   bigcopy [--mib N]   (default 256)
 *
 *   bigcopy --threads T --mib N
 *     T threads at once, each copying its own N MiB pattern host -> device
 *     -> host three times and comparing it: with a small data area their
 *     staged chunks fill it, and no thread may wait for room while holding
 *     chunks only it gives back.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuclient.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64*: a pattern with no period a stride could hide in. */
static void pattern(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed | 1;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		uint64_t v = x * 0x2545f4914f6cdd1dull;

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (unsigned char)(i * 131u + 7u);
}

static void compare(const unsigned char *got, const unsigned char *want, size_t len,
		    const char *what)
{
	size_t i;

	if (!memcmp(got, want, len))
		return;
	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	cu_fail("%s: first difference at byte %zu of %zu: got 0x%02x, expected 0x%02x",
		what, i, len, got[i], want[i]);
}

static void expect_fill(const unsigned char *p, size_t off, size_t len,
			const void *val, size_t vsize, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[off + i] != ((const unsigned char *)val)[i % vsize])
			cu_fail("%s: byte %zu is 0x%02x, expected 0x%02x", what, off + i,
				p[off + i], ((const unsigned char *)val)[i % vsize]);
	}
}

struct copier {
	pthread_t t;
	CUcontext ctx;
	size_t len;
	uint64_t seed;
};

static void *copier_run(void *arg)
{
	struct copier *w = arg;
	unsigned char *src = malloc(w->len), *dst = malloc(w->len);
	CUdeviceptr d;
	int round;

	if (!src || !dst)
		cu_fail("cannot allocate 2 x %zu bytes of host memory", w->len);
	pattern(src, w->len, w->seed);
	CK(cuCtxSetCurrent(w->ctx));
	CK(cuMemAlloc(&d, w->len));
	for (round = 0; round < 3; round++) {
		memset(dst, 0, w->len);
		CK(cuMemcpyHtoD(d, src, w->len));
		CK(cuMemcpyDtoH(dst, d, w->len));
		compare(dst, src, w->len, "a thread's HtoD+DtoH round trip");
	}
	CK(cuMemFree(d));
	free(src);
	free(dst);
	return NULL;
}

static int threads_mode(unsigned long n, size_t mib)
{
	struct copier *w = calloc(n, sizeof(*w));
	CUcontext ctx;
	CUdevice dev;
	unsigned long i;

	if (!w || !n || n > 64)
		cu_fail("bad thread count %lu", n);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	for (i = 0; i < n; i++) {
		w[i].ctx = ctx;
		w[i].len = mib << 20;
		w[i].seed = 0x9e3779b97f4a7c15ull * (i + 1);
		if (pthread_create(&w[i].t, NULL, copier_run, &w[i]))
			cu_fail("pthread_create");
	}
	for (i = 0; i < n; i++)
		pthread_join(w[i].t, NULL);
	CK(cuCtxDestroy(ctx));
	free(w);
	printf("bigcopy: %lu threads x %zu MiB round trips identical\n", n, mib);
	return 0;
}

int main(int argc, char **argv)
{
	size_t mib = 256, len, i;
	unsigned char *src, *dst;
	CUdeviceptr da, db;
	CUcontext ctx;
	CUdevice dev;
	double t;

	cu_prog = "bigcopy";
	if (argc == 5 && !strcmp(argv[1], "--threads") && !strcmp(argv[3], "--mib"))
		return threads_mode(strtoul(argv[2], NULL, 0), strtoul(argv[4], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "--mib"))
		mib = strtoul(argv[2], NULL, 0);
	else if (argc != 1) {
		fprintf(stderr, "usage: bigcopy [--mib N] | --threads T --mib N\n");
		return 2;
	}
	len = mib << 20;
	src = malloc(len);
	dst = malloc(len);
	if (!src || !dst)
		cu_fail("cannot allocate 2 x %zu MiB of host memory", mib);
	pattern(src, len, 0x0123456789abcdefull);

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuMemAlloc(&da, len));
	CK(cuMemAlloc(&db, len));

	/* Host -> device -> host. */
	t = now_s();
	CK(cuMemcpyHtoD(da, src, len));
	CK(cuMemcpyDtoH(dst, da, len));
	t = now_s() - t;
	compare(dst, src, len, "HtoD+DtoH round trip");
	printf("bigcopy: %zu MiB HtoD + DtoH round trip identical (%.2f s, %.0f MiB/s)\n",
	       mib, t, 2.0 * (double)mib / (t > 0 ? t : 1e-9));

	/* Device -> device, whole. */
	CK(cuMemcpyDtoD(db, da, len));
	memset(dst, 0, len);
	CK(cuMemcpyDtoH(dst, db, len));
	compare(dst, src, len, "DtoD copy");
	printf("bigcopy: %zu MiB DtoD identical\n", mib);

	/* Odd offsets and lengths, both directions. */
	{
		const size_t off_s = 4097, off_d = 13, l = (1u << 20) + 5;

		CK(cuMemcpyDtoD(db + off_d, da + off_s, l));
		memset(dst, 0, len);
		CK(cuMemcpyDtoH(dst, db, len));
		compare(dst + off_d, src + off_s, l, "DtoD at odd offsets");
		compare(dst, src, off_d, "DtoD: bytes before the range");
		compare(dst + off_d + l, src + off_d + l, len - off_d - l,
			"DtoD: bytes after the range");
		CK(cuMemcpyHtoD(da + 3, src + 1000, 777));
		CK(cuMemcpyDtoH(dst + 5, da + 3, 777));
		compare(dst + 5, src + 1000, 777, "HtoD/DtoH at odd offsets");
		printf("bigcopy: odd offsets and lengths identical\n");
	}

	/* Memsets over the whole buffer. */
	{
		const unsigned char v8 = 0xa5;
		const uint16_t v16 = 0x1234;
		const uint32_t v32 = 0xdeadbeefu;

		CK(cuMemsetD8(db, v8, len));
		CK(cuMemcpyDtoH(dst, db, len));
		expect_fill(dst, 0, len, &v8, 1, "cuMemsetD8");
		CK(cuMemsetD16(db, v16, len / 2));
		CK(cuMemcpyDtoH(dst, db, len));
		expect_fill(dst, 0, len, &v16, 2, "cuMemsetD16");
		CK(cuMemsetD32(db, v32, len / 4));
		CK(cuMemcpyDtoH(dst, db, len));
		expect_fill(dst, 0, len, &v32, 4, "cuMemsetD32");
		printf("bigcopy: cuMemsetD8/D16/D32 over %zu MiB correct\n", mib);
	}

	/* Interior memsets: neighbours untouched. */
	{
		const size_t off = 1 << 20, cnt = 4096 + 3;
		const unsigned char v8 = 0x5a;
		const uint16_t v16 = 0xbeef;
		const uint32_t v32 = 0x01020304u;

		CK(cuMemcpyHtoD(da, src, len));
		CK(cuMemsetD8(da + off + 1, v8, cnt));
		CK(cuMemsetD16(da + 2 * off + 2, v16, cnt));
		CK(cuMemsetD32(da + 3 * off + 4, v32, cnt));
		CK(cuMemcpyDtoH(dst, da, len));
		expect_fill(dst, off + 1, cnt, &v8, 1, "interior cuMemsetD8");
		expect_fill(dst, 2 * off + 2, cnt * 2, &v16, 2, "interior cuMemsetD16");
		expect_fill(dst, 3 * off + 4, cnt * 4, &v32, 4, "interior cuMemsetD32");
		/* Put the expected bytes into src and compare everything. */
		memset(src + off + 1, v8, cnt);
		for (i = 0; i < cnt; i++) {
			memcpy(src + 2 * off + 2 + 2 * i, &v16, 2);
			memcpy(src + 3 * off + 4 + 4 * i, &v32, 4);
		}
		compare(dst, src, len, "after interior memsets (neighbours)");
		printf("bigcopy: interior memsets exact, neighbours untouched\n");
	}

	CK(cuMemFree(da));
	CK(cuMemFree(db));
	CK(cuCtxDestroy(ctx));
	free(src);
	free(dst);
	printf("bigcopy: PASSED\n");
	return 0;
}
