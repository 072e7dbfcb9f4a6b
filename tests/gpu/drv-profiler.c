// SPDX-License-Identifier: MIT
/*
 * Profiler control through the driver API only, in a form that runs
 * unchanged natively and through axon and prints the same transcript on
 * stdout both ways (issue 15: cudaProfilerStart failed through axon with
 * cudaErrorCallRequiresNewerDriver, since cuGetProcAddress did not know
 * cuProfilerStart):
 *
 *   1. cuGetProcAddress_v2 finds cuProfilerStart, cuProfilerStop and
 *      cuProfilerInitialize at CUDA 13.0, and not at 3.0 (they came with
 *      4.0), and the pointers it gives are the exported functions;
 *   2. with a current context: start, start again, stop, stop again all
 *      succeed (no profiler is attached; a repeated start or stop has been
 *      no error since CUDA 5.0);
 *   3. cuProfilerInitialize is NOT_SUPPORTED (always, since CUDA 12.0);
 *   4. without a current context: start and stop are INVALID_CONTEXT.
 *
 * Exit 0 when every check passed; else 1 with the line that says why.
 */
#define CUDA_ENABLE_DEPRECATED 1	/* cuProfilerInitialize without a warning */
#include <cuda.h>
#include <cudaProfiler.h>
#include <stdio.h>
#include <stdlib.h>

static const char *ename(CUresult r)
{
	const char *s = NULL;

	if (cuGetErrorName(r, &s) || !s)
		return "CUresult ?";
	return s;
}

static int failures;

/* Prints the call's result; counts it a failure unless it is want. */
#define EXPECT(x, want)							\
	do {								\
		CUresult r_ = (x);					\
		printf("%-40s %s\n", #x, ename(r_));			\
		if (r_ != (want)) {					\
			printf("FAIL %s:%d expected %s\n", __FILE__, __LINE__, \
			       ename(want));				\
			failures++;					\
		}							\
	} while (0)

static void lookup(const char *name, void *exported)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
	void *pfn = NULL;

	EXPECT(cuGetProcAddress_v2(name, &pfn, 13000, 0, &st), CUDA_SUCCESS);
	printf("  %s at 13000: status %d, %s\n", name, (int)st,
	       pfn == exported ? "the exported function" : pfn ? "another pointer" : "NULL");
	if (st != CU_GET_PROC_ADDRESS_SUCCESS || pfn != exported)
		failures++;
	pfn = &st;
	EXPECT(cuGetProcAddress_v2(name, &pfn, 3000, 0, &st), CUDA_SUCCESS);
	printf("  %s at 3000: status %d, %s\n", name, (int)st, pfn ? "a pointer" : "NULL");
	if (st != CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT || pfn)
		failures++;
}

int main(void)
{
	CUcontext ctx;
	CUdevice dev;
	char name[128];

	EXPECT(cuInit(0), CUDA_SUCCESS);
	lookup("cuProfilerStart", (void *)cuProfilerStart);
	lookup("cuProfilerStop", (void *)cuProfilerStop);
	lookup("cuProfilerInitialize", (void *)cuProfilerInitialize);

	EXPECT(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	if (!cuDeviceGetName(name, sizeof(name), dev))
		fprintf(stderr, "device: %s\n", name);
	EXPECT(cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);
	EXPECT(cuProfilerStart(), CUDA_SUCCESS);
	EXPECT(cuProfilerStart(), CUDA_SUCCESS);
	EXPECT(cuCtxSynchronize(), CUDA_SUCCESS);
	EXPECT(cuProfilerStop(), CUDA_SUCCESS);
	EXPECT(cuProfilerStop(), CUDA_SUCCESS);
	EXPECT(cuProfilerInitialize(NULL, NULL, CU_OUT_CSV), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuProfilerInitialize("axon.cfg", "axon.out", CU_OUT_KEY_VALUE_PAIR),
	       CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuCtxDestroy(ctx), CUDA_SUCCESS);

	EXPECT(cuProfilerStart(), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(cuProfilerStop(), CUDA_ERROR_INVALID_CONTEXT);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
