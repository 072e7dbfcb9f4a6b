// SPDX-License-Identifier: MIT
/*
 * streams - several streams, asynchronous copies and launches, events.
 *
 * Each of NSTREAMS streams gets its own buffers and, for ROUNDS rounds
 * submitted round-robin across the streams (so the streams' work
 * interleaves in the daemon), the chain
 *
 *   x <- host j (async copy)          y <- fill(r + s)
 *   y <- scale(y, 3)                  y <- saxpy(2, x, y)
 *   record ev[s]                      host <- y (async copy)
 *
 * whose final value y[j] = 2 j + 3 (ROUNDS - 1 + s) is right only if the
 * stream kept the chain's order. A cross-stream dependency (stream B waits
 * on an event recorded after a fill in stream A, then scales) checks
 * cuStreamWaitEvent; timing events check cuEventElapsedTime >= 0;
 * cuEventQuery / cuStreamQuery must say "done" after the synchronisation
 * and may say "not ready" before it. The NULL stream and cuCtxSynchronize
 * are used too.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuclient.h"

#define NSTREAMS	4
#define ROUNDS		8
#define N		(64 * 1024 + 3)	/* not a multiple of the block */

static void launch(CUfunction f, CUstream s, void **params)
{
	CK(cuLaunchKernel(f, cu_blocks(N), 1, 1, 256, 1, 1, 0, s, params, NULL));
}

static void ready_or_not(CUresult r, const char *what)
{
	if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
		cu_fail("%s returned %s (%d), expected SUCCESS or NOT_READY", what,
			cu_name(r), (int)r);
}

int main(void)
{
	const size_t bytes = N * sizeof(float);
	CUstream st[NSTREAMS];
	CUevent ev[NSTREAMS], t0, t1, dep;
	CUdeviceptr x[NSTREAMS], y[NSTREAMS], z;
	float *hx = malloc(bytes), *hy[NSTREAMS], *hz = malloc(bytes);
	CUfunction f_fill, f_scale, f_saxpy;
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	void *image;
	float ms = -1.0f;
	int n = N, s, r;
	size_t j;

	cu_prog = "streams";
	image = cu_load_kernels("cubin", NULL);
	if (!hx || !hz)
		cu_fail("out of host memory");
	for (j = 0; j < N; j++)
		hx[j] = (float)j;

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f_fill, mod, K_FILL));
	CK(cuModuleGetFunction(&f_scale, mod, K_SCALE));
	CK(cuModuleGetFunction(&f_saxpy, mod, K_SAXPY));

	for (s = 0; s < NSTREAMS; s++) {
		/* Two flavours: blocking (default flag) and non-blocking. */
		CK(cuStreamCreate(&st[s], s % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT));
		CK(cuEventCreate(&ev[s], CU_EVENT_DEFAULT));
		CK(cuMemAlloc(&x[s], bytes));
		CK(cuMemAlloc(&y[s], bytes));
		hy[s] = malloc(bytes);
		if (!hy[s])
			cu_fail("out of host memory");
		memset(hy[s], 0xff, bytes);
	}
	CK(cuMemAlloc(&z, bytes));
	CK(cuEventCreate(&t0, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&t1, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&dep, CU_EVENT_DISABLE_TIMING));

	CK(cuEventRecord(t0, st[0]));
	for (r = 0; r < ROUNDS; r++) {
		for (s = 0; s < NSTREAMS; s++) {
			float v = (float)(r + s), three = 3.0f, two = 2.0f;
			void *p_fill[] = { &y[s], &v, &n };
			void *p_scale[] = { &y[s], &three, &n };
			void *p_saxpy[] = { &n, &two, &x[s], &y[s] };

			CK(cuMemcpyHtoDAsync(x[s], hx, bytes, st[s]));
			launch(f_fill, st[s], p_fill);
			launch(f_scale, st[s], p_scale);
			launch(f_saxpy, st[s], p_saxpy);
			CK(cuEventRecord(ev[s], st[s]));
			CK(cuMemcpyDtoHAsync(hy[s], y[s], bytes, st[s]));
		}
	}
	/* Before synchronising, a query may say either. */
	for (s = 0; s < NSTREAMS; s++) {
		ready_or_not(cuEventQuery(ev[s]), "cuEventQuery before sync");
		ready_or_not(cuStreamQuery(st[s]), "cuStreamQuery before sync");
	}

	/* Cross-stream: st[1] scales z only after st[0]'s fill of z. */
	{
		float seven = 7.0f, two = 2.0f;
		void *p_fill[] = { &z, &seven, &n };
		void *p_scale[] = { &z, &two, &n };

		launch(f_fill, st[0], p_fill);
		CK(cuEventRecord(dep, st[0]));
		CK(cuStreamWaitEvent(st[1], dep, 0));
		launch(f_scale, st[1], p_scale);
		CK(cuMemcpyDtoHAsync(hz, z, bytes, st[1]));
	}
	CK(cuEventRecord(t1, st[0]));

	/* The NULL stream: a synchronous-looking async copy on stream 0. */
	{
		float back[4] = { 0 };

		CK(cuMemcpyHtoDAsync(z + bytes - sizeof(back), hx, sizeof(back), NULL));
		CK(cuMemcpyDtoHAsync(back, z + bytes - sizeof(back), sizeof(back), NULL));
		CK(cuStreamSynchronize(NULL));
		if (memcmp(back, hx, sizeof(back)))
			cu_fail("NULL-stream round trip gave %g %g %g %g", (double)back[0],
				(double)back[1], (double)back[2], (double)back[3]);
	}

	for (s = 0; s < NSTREAMS; s++) {
		CK(cuEventSynchronize(ev[s]));
		CK(cuEventQuery(ev[s]));
	}
	CK(cuEventSynchronize(t1));
	CK(cuEventElapsedTime(&ms, t0, t1));
	if (!(ms >= 0.0f))
		cu_fail("cuEventElapsedTime gave %g ms", (double)ms);
	for (s = 0; s < NSTREAMS; s++) {
		CK(cuStreamSynchronize(st[s]));
		CK(cuStreamQuery(st[s]));
	}
	CK(cuCtxSynchronize());

	/* Check: the last round wins, in every stream, for every element. */
	for (s = 0; s < NSTREAMS; s++) {
		for (j = 0; j < N; j++) {
			float want = 2.0f * (float)j + 3.0f * (float)(ROUNDS - 1 + s);

			if (hy[s][j] != want)
				cu_fail("stream %d: y[%zu] = %g, expected %g (order lost?)",
					s, j, (double)hy[s][j], (double)want);
		}
	}
	/* z = 7 (st[0]) then * 2 (st[1], after the wait): 14 everywhere. */
	for (j = 0; j < N; j++)
		if (hz[j] != 14.0f)
			cu_fail("cross-stream: z[%zu] = %g, expected 14 (wait-event lost?)", j,
				(double)hz[j]);
	printf("streams: %d streams x %d rounds of copy/fill/scale/saxpy/record/copy: "
	       "order kept; wait-event kept; elapsed %.3f ms\n", NSTREAMS, ROUNDS,
	       (double)ms);

	for (s = 0; s < NSTREAMS; s++) {
		CK(cuEventDestroy(ev[s]));
		CK(cuStreamDestroy(st[s]));
		CK(cuMemFree(x[s]));
		CK(cuMemFree(y[s]));
		free(hy[s]);
	}
	CK(cuEventDestroy(t0));
	CK(cuEventDestroy(t1));
	CK(cuEventDestroy(dep));
	CK(cuMemFree(z));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(hx);
	free(hz);
	free(image);
	printf("streams: PASSED\n");
	return 0;
}
