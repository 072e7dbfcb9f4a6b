// SPDX-License-Identifier: MIT
/*
 * bench-shim: per-call cost of CUDA driver API calls through axon's
 * libcuda.so.1 (linked against $(BUILD)/lib/libcuda.so.1, connecting to the
 * axond named by $AXON_ADDR). Run by bench-ring, which puts its rows in
 * the table; prints lines in the format bench.h describes.
 *
 *   g1  cuStreamQuery on an idle stream      Local/Frontier: no crossing
 *   g2  cuMemAlloc(4 KiB) + cuMemFree        Minted: deferred MEM_MAP/UNMAP
 *   g3  cuLaunchKernel(nop), enqueue only    deferred LAUNCH
 *   g4  cuStreamSynchronize, idle stream     one synchronous crossing
 *
 *   bench-shim CUBIN [DIVISOR]   (DIVISOR divides iteration counts)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>

#include "bench.h"

static unsigned long divisor = 1;

static unsigned long iters(unsigned long n)
{
	return n / divisor ? n / divisor : 1;
}

static const char *errname(CUresult r)
{
	const char *s = NULL;

	cuGetErrorName(r, &s);
	return s ? s : "?";
}

#define TRY(call)							\
	do {								\
		CUresult r_ = (call);					\
		if (r_ != CUDA_SUCCESS) {				\
			printf("%s failed: %s (%d)\n", #call, errname(r_), r_); \
			return -1;					\
		}							\
	} while (0)

/* g1: per call, in batches of 16 (one call is ~10 ns: the clock would
 * dominate a single-call sample). */
static int bench_query(CUstream s)
{
	const unsigned long n = iters(100000), warm = n / 10;
	const unsigned int batch = 16;
	struct b_samples sm;
	struct b_summary r;
	unsigned long i;
	unsigned int k;
	int bad = 0;

	TRY(cuStreamSynchronize(s));
	TRY(cuStreamQuery(s));
	b_init(&sm, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0 = b_now(), t1;

		for (k = 0; k < batch; k++)
			bad |= cuStreamQuery(s) != CUDA_SUCCESS;
		t1 = b_now();
		if (i >= warm / batch)
			b_add(&sm, (t1 - t0) * 1000 / batch);
	}
	if (bad) {
		printf("SKIP\tg1 cuStreamQuery\tcuStreamQuery did not return CUDA_SUCCESS\n");
		b_free(&sm);
		return 0;
	}
	r = b_summarize_ps(&sm);
	b_print_row("g1 shim cuStreamQuery, idle stream (Local; batch 16)", "a", &r);
	b_free(&sm);
	return 0;
}

/* g2: alloc + free pairs, in batches of 8. */
static int bench_alloc(void)
{
	const unsigned long n = iters(100000), warm = n / 10;
	const unsigned int batch = 8;
	CUdeviceptr p[8];
	struct b_samples sm;
	struct b_summary r;
	unsigned long i;
	unsigned int k;
	int bad = 0;

	b_init(&sm, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0 = b_now(), t1;

		for (k = 0; k < batch; k++) {
			bad |= cuMemAlloc(&p[k], 4096) != CUDA_SUCCESS;
			bad |= cuMemFree(p[k]) != CUDA_SUCCESS;
		}
		t1 = b_now();
		if (i >= warm / batch)
			b_add(&sm, (t1 - t0) * 1000 / batch);
	}
	/* Surface any latched failure of the deferred operations. */
	TRY(cuCtxSynchronize());
	if (bad) {
		printf("SKIP\tg2 cuMemAlloc+cuMemFree\ta call failed\n");
		b_free(&sm);
		return 0;
	}
	r = b_summarize_ps(&sm);
	b_print_row("g2 shim cuMemAlloc+cuMemFree 4 KiB (Minted; batch 8)", "a", &r);
	b_free(&sm);
	return 0;
}

/* g3: enqueue cost of a launch; the stream is drained (untimed) every 128
 * launches (fewer than the SQ holds) so the queue stays short. */
static int bench_launch(const char *cubin, CUstream s)
{
	const unsigned long n = iters(20000), warm = n / 10;
	const unsigned int batch = 8;
	struct b_samples sm;
	struct b_summary r;
	CUmodule mod;
	CUfunction f;
	unsigned long i;
	unsigned int k;
	int bad = 0;

	if (access(cubin, R_OK)) {
		printf("SKIP\tg3 cuLaunchKernel(nop)\tno %s (needs nvcc)\n", cubin);
		return 0;
	}
	TRY(cuModuleLoad(&mod, cubin));
	TRY(cuModuleGetFunction(&f, mod, "nop"));
	b_init(&sm, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0, t1;

		if (i % (128 / batch) == 0)
			TRY(cuStreamSynchronize(s));
		t0 = b_now();
		for (k = 0; k < batch; k++)
			bad |= cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL) !=
			       CUDA_SUCCESS;
		t1 = b_now();
		if (i >= warm / batch)
			b_add(&sm, (t1 - t0) * 1000 / batch);
	}
	TRY(cuStreamSynchronize(s));
	TRY(cuModuleUnload(mod));
	if (bad) {
		printf("SKIP\tg3 cuLaunchKernel(nop)\ta launch failed\n");
		b_free(&sm);
		return 0;
	}
	r = b_summarize_ps(&sm);
	b_print_row("g3 shim cuLaunchKernel(nop) enqueue (deferred; batch 8)", "a", &r);
	b_free(&sm);
	return 0;
}

/* g4: one synchronous crossing per call, timed one by one. */
static int bench_sync(CUstream s)
{
	const unsigned long n = iters(50000), warm = n / 10;
	struct b_samples sm;
	struct b_summary r;
	unsigned long i;
	int bad = 0;

	b_init(&sm, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		bad |= cuStreamSynchronize(s) != CUDA_SUCCESS;
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	if (bad) {
		printf("SKIP\tg4 cuStreamSynchronize\ta call failed\n");
		b_free(&sm);
		return 0;
	}
	r = b_summarize(&sm);
	b_print_row("g4 shim cuStreamSynchronize, idle stream (1 crossing)", "a", &r);
	b_free(&sm);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cubin = argc > 1 ? argv[1] : "kernels.cubin";
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUresult r;

	if (argc > 2)
		divisor = strtoul(argv[2], NULL, 10) ? strtoul(argv[2], NULL, 10) : 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	r = cuInit(0);
	if (r != CUDA_SUCCESS) {
		printf("SKIP\tg cuInit\tcuInit: %s (is $AXON_ADDR an axond?)\n", errname(r));
		return 0;
	}
	TRY(cuDeviceGet(&dev, 0));
	TRY(cuDevicePrimaryCtxRetain(&ctx, dev));
	TRY(cuCtxSetCurrent(ctx));
	TRY(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	if (bench_query(s) || bench_alloc() || bench_launch(cubin, s) || bench_sync(s))
		return 1;

	TRY(cuStreamDestroy(s));
	TRY(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
