// SPDX-License-Identifier: MIT
/*
 * loopclient: one of N concurrent launch-bound clients (bench/gpu/clients.sh
 * starts them). Like drvbench's loop rows: LEN launches of the cubin's
 * `nop` kernel (1x1x1) on a non-blocking stream, then cuStreamSynchronize,
 * again and again. Linked against $(BUILD)/lib/libcuda.so.1 without an
 * rpath, so LD_LIBRARY_PATH picks NVIDIA's driver or axon's shim (and the
 * environment MPS or not).
 *
 *   loopclient CUBIN LEN SECONDS GOFILE
 *
 * It sets up (context, stream, module), runs 20 loops of warm-up, prints
 * `ready`, then waits until GOFILE exists so that all clients measure over
 * the same interval. It then loops for SECONDS and prints
 *
 *   result LOOPS LAUNCHES ELAPSED_S P50_US P99_US MEAN_US
 *
 * (per-loop wall times, CLOCK_MONOTONIC). On a failure it prints
 * `error STEP: CUDA_ERROR_...` and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>

#include "../bench.h"
#include "drvcommon.h"

#define TRY(step, call)							\
	do {								\
		CUresult r_ = (call);					\
		if (r_ != CUDA_SUCCESS) {				\
			printf("error %s: %s\n", step, errname(r_));	\
			return 1;					\
		}							\
	} while (0)

static CUstream st;
static CUfunction fnop;

/* One loop: len launches, then the sync. */
static CUresult loop(unsigned int len)
{
	unsigned int j;
	CUresult r;

	for (j = 0; j < len; j++) {
		r = cuLaunchKernel(fnop, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL);
		if (r)
			return r;
	}
	return cuStreamSynchronize(st);
}

int main(int argc, char **argv)
{
	const struct timespec poll = { 0, 500000 };	/* 0.5 ms */
	unsigned long len, loops = 0, i;
	double secs;
	struct b_samples sm;
	struct b_summary s;
	uint64_t t_go, t_end, t_last, waited = 0;
	CUcontext ctx;
	CUdevice dev;
	CUmodule mod;
	void *img;
	char *end;

	if (argc != 5) {
		fprintf(stderr, "usage: loopclient CUBIN LEN SECONDS GOFILE\n");
		return 2;
	}
	len = strtoul(argv[2], &end, 10);
	if (*end || !len || len > 1000000) {
		fprintf(stderr, "loopclient: bad LEN %s\n", argv[2]);
		return 2;
	}
	secs = strtod(argv[3], &end);
	if (*end || !(secs > 0 && secs <= 600)) {
		fprintf(stderr, "loopclient: bad SECONDS %s\n", argv[3]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	img = read_file(argv[1]);
	if (!img) {
		printf("error read %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	TRY("cuInit", cuInit(0));
	TRY("context", cuDeviceGet(&dev, 0));
	TRY("context", cuDevicePrimaryCtxRetain(&ctx, dev));
	TRY("context", cuCtxSetCurrent(ctx));
	TRY("stream", cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
	TRY("module", cuModuleLoadData(&mod, img));
	TRY("module", cuModuleGetFunction(&fnop, mod, "nop"));
	free(img);
	for (i = 0; i < 20; i++)
		TRY("warm-up", loop((unsigned int)len));
	printf("ready\n");

	while (access(argv[4], F_OK)) {
		if (waited++ > 600 * 2000ul) {	/* 10 minutes of 0.5 ms polls */
			printf("error start: %s never appeared\n", argv[4]);
			return 1;
		}
		nanosleep(&poll, NULL);
	}

	/* A loop takes at least len launches' worth of GPU work (~1 us each),
	 * so this many samples cannot run out; b_add drops any excess. */
	b_init(&sm, (size_t)(secs * 1e6 / (double)len) + 64);
	t_go = b_now();
	t_end = t_go + (uint64_t)(secs * 1e9);
	t_last = t_go;
	do {
		uint64_t t0 = t_last;

		TRY("loop", loop((unsigned int)len));
		t_last = b_now();
		b_add(&sm, t_last - t0);
		loops++;
	} while (t_last < t_end);
	s = b_summarize(&sm);
	printf("result %lu %lu %.6f %.3f %.3f %.3f\n", loops, loops * len,
	       (double)(t_last - t_go) / 1e9, s.p50 / 1e3, s.p99 / 1e3, s.mean / 1e3);
	b_free(&sm);
	cuStreamDestroy(st);
	cuModuleUnload(mod);
	cuDevicePrimaryCtxRelease(dev);
	return 0;
}
