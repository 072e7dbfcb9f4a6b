// SPDX-License-Identifier: MIT
/*
 * busy - a client that holds a lot and keeps the daemon busy, to be
 * SIGKILLed mid-stream by the kill test: a context, a module, 4 streams,
 * 8 events, 10 buffers, and a loop that queues copies, launches, memsets
 * and event records on every stream without ever waiting for them, plus a
 * buffer allocated and freed now and then. Prints "busy: running" once the
 * loop is under way. Gives up by itself after --seconds (default 120).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuclient.h"

#define NSTREAMS	4
#define NEVENTS		8
#define N		(256 * 1024)

int main(int argc, char **argv)
{
	const size_t bytes = N * sizeof(float);
	CUdeviceptr x[NSTREAMS], y[NSTREAMS], z[2], tmp;
	CUstream st[NSTREAMS];
	CUevent ev[NEVENTS];
	float *hin = malloc(bytes), *hout = malloc(bytes);
	CUfunction vadd, fill;
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	void *image;
	long seconds = 120, iter;
	time_t start = time(NULL);
	int n = N, s, i;

	cu_prog = "busy";
	if (argc == 3 && !strcmp(argv[1], "--seconds"))
		seconds = strtol(argv[2], NULL, 0);
	image = cu_load_kernels("cubin", NULL);
	if (!hin || !hout)
		cu_fail("out of host memory");
	for (i = 0; i < N; i++)
		hin[i] = (float)i;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&vadd, mod, K_VECTOR_ADD));
	CK(cuModuleGetFunction(&fill, mod, K_FILL));
	for (s = 0; s < NSTREAMS; s++) {
		CK(cuStreamCreate(&st[s], CU_STREAM_NON_BLOCKING));
		CK(cuMemAlloc(&x[s], bytes));
		CK(cuMemAlloc(&y[s], bytes));
	}
	for (i = 0; i < NEVENTS; i++)
		CK(cuEventCreate(&ev[i], CU_EVENT_DEFAULT));
	CK(cuMemAlloc(&z[0], bytes));
	CK(cuMemAlloc(&z[1], bytes));

	for (iter = 0;; iter++) {
		for (s = 0; s < NSTREAMS; s++) {
			float v = (float)iter;
			void *p_add[] = { &x[s], &y[s], &z[s & 1], &n };
			void *p_fill[] = { &y[s], &v, &n };

			CK(cuMemcpyHtoDAsync(x[s], hin, bytes, st[s]));
			CK(cuLaunchKernel(fill, N / 256, 1, 1, 256, 1, 1, 0, st[s], p_fill, NULL));
			CK(cuLaunchKernel(vadd, N / 256, 1, 1, 256, 1, 1, 0, st[s], p_add, NULL));
			CK(cuMemsetD32Async(y[s], 0x3f800000u, N, st[s]));
			CK(cuEventRecord(ev[(iter + s) % NEVENTS], st[s]));
			CK(cuMemcpyDtoHAsync(hout, z[s & 1], bytes, st[s]));
			CK(cuStreamWaitEvent(st[(s + 1) % NSTREAMS], ev[(iter + s) % NEVENTS], 0));
		}
		if (iter % 16 == 0) {
			CK(cuMemAlloc(&tmp, bytes));
			CK(cuMemsetD8Async(tmp, 0x11, bytes, st[0]));
			CK(cuMemFree(tmp));
			(void)cuStreamQuery(st[iter % NSTREAMS]);
		}
		if (iter == 2) {
			printf("busy: running (pid %d)\n", (int)getpid());
			fflush(stdout);
		}
		if (time(NULL) - start > seconds)
			cu_fail("not killed within %ld s", seconds);
	}
}
