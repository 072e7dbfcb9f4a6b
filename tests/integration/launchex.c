// SPDX-License-Identifier: MIT
/*
 * launchex - launch variants, function attributes and tensor maps through
 * axon (against the sim):
 *
 *   - cuLaunchKernelEx with no attributes, with IGNORE, PRIORITY,
 *     COOPERATIVE, MEM_SYNC_DOMAIN, an access policy window and a 2x1x1
 *     cluster (accepted; the sim ignores clusters), and
 *     cuLaunchCooperativeKernel: results are right
 *   - refused at once: unknown ids, SYNCHRONIZATION_POLICY (streams only),
 *     a cluster that does not divide the grid, a window outside our memory,
 *     an event attribute with flags
 *   - LAUNCH_COMPLETION_EVENT: the event completes with the kernel
 *   - a 16-block cluster needs NON_PORTABLE_CLUSTER_SIZE_ALLOWED (the error
 *     comes at the next synchronisation, once)
 *   - MAX_DYNAMIC_SHARED_SIZE_BYTES: 100 KiB launches after it is set, not
 *     before (next synchronisation); above the set maximum at once; read
 *     back; read-only and out-of-range sets refused
 *   - cuFuncGetParamInfo / cuKernelGetParamInfo, cuFuncGetName,
 *     cuFuncGetModule, cuFuncIsLoaded, cuFuncLoad
 *   - cuKernelSetAttribute holds in a context the library is loaded into
 *     later
 *   - tensor maps: the documented argument errors, memory not ours, and
 *     NOT_SUPPORTED for a valid request (the sim has no TMA)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuclient.h"

#define N	1024

static CUfunction f_fill;

static void check_fill(CUdeviceptr d, float v, const char *what)
{
	static float h[N];
	int i;

	CK(cuMemcpyDtoH(h, d, sizeof(h)));
	for (i = 0; i < N; i++)
		if (h[i] != v)
			cu_fail("%s: element %d is %g, expected %g", what, i, h[i], v);
}

static CUresult launch_ex(CUdeviceptr d, float v, unsigned int grid, unsigned int shmem,
			  CUlaunchAttribute *attrs, unsigned int nattrs)
{
	int n = N;
	void *params[] = { &d, &v, &n };
	CUlaunchConfig cfg = {
		.gridDimX = grid, .gridDimY = 1, .gridDimZ = 1,
		.blockDimX = N / grid, .blockDimY = 1, .blockDimZ = 1,
		.sharedMemBytes = shmem, .hStream = NULL,
		.attrs = attrs, .numAttrs = nattrs,
	};

	return cuLaunchKernelEx(&cfg, f_fill, params, NULL);
}

static void test_launch_ex(CUdeviceptr d)
{
	CUlaunchAttribute a[8];
	CUevent ev;
	int n = N;
	float v = 9.0f;
	void *params[] = { &d, &v, &n };

	memset(a, 0, sizeof(a));
	CK(launch_ex(d, 1.0f, 4, 0, NULL, 0));
	check_fill(d, 1.0f, "LaunchKernelEx, no attributes");

	a[0].id = CU_LAUNCH_ATTRIBUTE_IGNORE;
	a[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	a[1].value.priority = -1;
	a[2].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
	a[2].value.cooperative = 1;
	a[3].id = CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
	a[3].value.memSyncDomain = CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE;
	a[4].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
	a[4].value.accessPolicyWindow.base_ptr = (void *)(uintptr_t)d;
	a[4].value.accessPolicyWindow.num_bytes = N * sizeof(float);
	a[4].value.accessPolicyWindow.hitRatio = 0.5f;
	a[4].value.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
	a[4].value.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
	a[5].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	a[5].value.clusterDim.x = 2;
	a[5].value.clusterDim.y = 1;
	a[5].value.clusterDim.z = 1;
	CK(launch_ex(d, 2.0f, 4, 0, a, 6));
	check_fill(d, 2.0f, "LaunchKernelEx, six attributes");

	CK(cuLaunchCooperativeKernel(f_fill, 4, 1, 1, N / 4, 1, 1, 0, NULL, params));
	check_fill(d, 9.0f, "LaunchCooperativeKernel");

	/* Refused at once, nothing launched. */
	a[0].id = (CUlaunchAttributeID)99;
	EXPECT(launch_ex(d, 3.0f, 4, 0, a, 1), CUDA_ERROR_INVALID_VALUE);
	a[0].id = CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY;
	a[0].value.syncPolicy = CU_SYNC_POLICY_SPIN;
	EXPECT(launch_ex(d, 3.0f, 4, 0, a, 1), CUDA_ERROR_INVALID_VALUE);
	a[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	a[0].value.clusterDim.x = 2;
	a[0].value.clusterDim.y = 1;
	a[0].value.clusterDim.z = 1;
	EXPECT(launch_ex(d, 3.0f, 3, 0, a, 1), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	EXPECT(launch_ex(d, 3.0f, 1, 0, a, 1), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	a[0].value.clusterDim.x = 0;
	EXPECT(launch_ex(d, 3.0f, 4, 0, a, 1), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	a[0].id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
	a[0].value.accessPolicyWindow.base_ptr = (void *)(uintptr_t)0x1000;
	a[0].value.accessPolicyWindow.num_bytes = 4096;
	a[0].value.accessPolicyWindow.hitRatio = 1.0f;
	EXPECT(launch_ex(d, 3.0f, 4, 0, a, 1), CUDA_ERROR_INVALID_VALUE);
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	a[0].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT;
	a[0].value.launchCompletionEvent.event = ev;
	a[0].value.launchCompletionEvent.flags = CU_EVENT_RECORD_EXTERNAL;
	EXPECT(launch_ex(d, 3.0f, 4, 0, a, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuLaunchKernelEx(NULL, f_fill, params, NULL), CUDA_ERROR_INVALID_VALUE);
	CK(cuCtxSynchronize());
	check_fill(d, 9.0f, "refused launches ran nothing");

	/* The completion event completes with the kernel. */
	a[0].value.launchCompletionEvent.flags = 0;
	CK(launch_ex(d, 4.0f, 4, 0, a, 1));
	CK(cuEventSynchronize(ev));
	EXPECT(cuEventQuery(ev), CUDA_SUCCESS);
	check_fill(d, 4.0f, "LAUNCH_COMPLETION_EVENT");
	CK(cuEventDestroy(ev));

	/* 16 blocks per cluster: non-portable, refused until allowed. */
	a[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	a[0].value.clusterDim.x = 16;
	a[0].value.clusterDim.y = 1;
	a[0].value.clusterDim.z = 1;
	CK(launch_ex(d, 5.0f, 16, 0, a, 1));
	EXPECT(cuCtxSynchronize(), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	CK(cuCtxSynchronize());
	CK(cuFuncSetAttribute(f_fill, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	CK(launch_ex(d, 5.0f, 16, 0, a, 1));
	check_fill(d, 5.0f, "16-block cluster, non-portable allowed");
	printf("  ok    launch attributes\n");
}

static void test_func_attrs(CUmodule mod, CUdeviceptr d)
{
	CUfunction f_scale;
	const char *name;
	CUmodule m2;
	CUfunctionLoadingState st;
	size_t off, size;
	int v;

	/* More than 48 KiB of dynamic shared memory needs the attribute: the
	 * launch fails at once, as the driver's does. */
	EXPECT(launch_ex(d, 6.0f, 4, 64 * 1024, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuCtxSynchronize());
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f_fill));
	if (v != 48 * 1024)
		cu_fail("default MAX_DYNAMIC_SHARED_SIZE_BYTES is %d", v);
	CK(cuFuncSetAttribute(f_fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
			      100 * 1024));
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f_fill));
	if (v != 100 * 1024)
		cu_fail("MAX_DYNAMIC_SHARED_SIZE_BYTES reads back %d", v);
	CK(launch_ex(d, 6.0f, 4, 100 * 1024, NULL, 0));
	check_fill(d, 6.0f, "100 KiB of dynamic shared memory");
	EXPECT(launch_ex(d, 7.0f, 4, 100 * 1024 + 1, NULL, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuFuncSetAttribute(f_fill, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
				  1 << 30), CUDA_ERROR_INVALID_VALUE);
	/* (answered by the shim's cache the second time: still right) */
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f_fill));
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f_fill));
	if (v != 100 * 1024)
		cu_fail("MAX_DYNAMIC_SHARED_SIZE_BYTES after a refused set: %d", v);
	EXPECT(cuFuncSetAttribute(f_fill, CU_FUNC_ATTRIBUTE_NUM_REGS, 16),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuFuncSetAttribute(f_fill, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
				  101), CUDA_ERROR_INVALID_VALUE);
	CK(cuFuncSetAttribute(f_fill, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50));
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f_fill));
	if (v != 50)
		cu_fail("carveout reads back %d", v);
	EXPECT(cuFuncSetAttribute(NULL, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 0),
	       CUDA_ERROR_INVALID_HANDLE);
	CK(cuCtxSynchronize());

	/* fill(float *p, float v, int n): 0/8, 8/4, 12/4. */
	CK(cuFuncGetParamInfo(f_fill, 0, &off, &size));
	if (off != 0 || size != 8)
		cu_fail("param 0 at %zu size %zu", off, size);
	CK(cuFuncGetParamInfo(f_fill, 2, &off, &size));
	if (off != 12 || size != 4)
		cu_fail("param 2 at %zu size %zu", off, size);
	EXPECT(cuFuncGetParamInfo(f_fill, 3, &off, &size), CUDA_ERROR_INVALID_VALUE);
	CK(cuModuleGetFunction(&f_scale, mod, K_SCALE));
	CK(cuKernelGetParamInfo((CUkernel)f_scale, 1, &off, &size));
	if (off != 8 || size != 4)
		cu_fail("scale param 1 at %zu size %zu", off, size);
	CK(cuFuncGetName(&name, f_fill));
	if (strcmp(name, K_FILL))
		cu_fail("cuFuncGetName says %s", name);
	CK(cuFuncGetModule(&m2, f_scale));
	if (m2 != mod)
		cu_fail("cuFuncGetModule gives another module");
	CK(cuFuncIsLoaded(&st, f_fill));
	if (st != CU_FUNCTION_LOADING_STATE_LOADED)
		cu_fail("cuFuncIsLoaded says %d", (int)st);
	CK(cuFuncLoad(f_fill));
	EXPECT(cuFuncGetName(&name, (CUfunction)(uintptr_t)0x5000000000000001ULL),
	       CUDA_ERROR_INVALID_HANDLE);
	printf("  ok    function attributes\n");
}

/* cuKernelSetAttribute reaches a context the library is loaded into later. */
static void test_kernel_attrs(const void *image, CUdevice dev, CUcontext ctx)
{
	CUlibrary lib;
	CUkernel k;
	CUfunction f2;
	CUcontext c2;
	int v;

	CK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&k, lib, K_FILL));
	CK(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 80 * 1024, k,
				dev));
	CK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, k, dev));
	if (v != 80 * 1024)
		cu_fail("cuKernelGetAttribute reads back %d", v);
	EXPECT(cuKernelSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1, k, 99),
	       CUDA_ERROR_INVALID_DEVICE);
	CK(cuCtxCreate(&c2, NULL, 0, dev));
	CK(cuKernelGetFunction(&f2, k));
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f2));
	if (v != 80 * 1024)
		cu_fail("a later context's function has %d, not the kernel's 80 KiB", v);
	CK(cuCtxDestroy(c2));
	CK(cuCtxSetCurrent(ctx));
	CK(cuLibraryUnload(lib));
	printf("  ok    kernel attributes\n");
}

static CUresult tiled(CUtensorMap *m, cuuint32_t rank, CUdeviceptr addr, cuuint64_t dim0,
		      cuuint64_t stride0, cuuint32_t box0, CUtensorMapSwizzle swz)
{
	cuuint64_t dim[5] = { dim0, 64, 1, 1, 1 }, strides[4] = { stride0, stride0 * 64,
								  stride0 * 64, stride0 * 64 };
	cuuint32_t box[5] = { box0, 16, 1, 1, 1 }, estr[5] = { 1, 1, 1, 1, 1 };

	return cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, rank,
				      (void *)(uintptr_t)addr, dim, strides, box, estr,
				      CU_TENSOR_MAP_INTERLEAVE_NONE, swz,
				      CU_TENSOR_MAP_L2_PROMOTION_NONE,
				      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

static void test_tensor_maps(void)
{
	static CUtensorMap map;	/* 64-byte aligned by its type */
	cuuint64_t dim[5] = { 64, 64, 8, 1, 1 }, strides[4] = { 256, 256 * 64, 0, 0 };
	cuuint32_t estr[5] = { 1, 1, 1, 1, 1 };
	int lower[3] = { 0 }, upper[3] = { 0 };
	CUdeviceptr t;

	CK(cuMemAlloc(&t, 64 * 64 * sizeof(float)));	/* 64 x 64 floats */
	/* Valid: the sim has no tensor memory accelerator. */
	EXPECT(tiled(&map, 2, t, 64, 256, 32, CU_TENSOR_MAP_SWIZZLE_128B),
	       CUDA_ERROR_NOT_SUPPORTED);
	/* The documented errors. */
	EXPECT(tiled(&map, 0, t, 64, 256, 32, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(tiled(&map, 6, t, 64, 256, 32, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(tiled(&map, 2, t + 8, 64, 256, 32, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);			/* address not 16-aligned */
	EXPECT(tiled(&map, 2, t, 60, 248, 32, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);			/* stride not 16-multiple */
	EXPECT(tiled(&map, 2, t, 64, 256, 257, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);			/* box > 256 */
	EXPECT(tiled(&map, 2, t, 64, 256, 6, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);			/* 24-byte inner box */
	EXPECT(tiled(&map, 2, t, 64, 256, 64, CU_TENSOR_MAP_SWIZZLE_64B),
	       CUDA_ERROR_INVALID_VALUE);			/* 256 B > swizzle span */
	EXPECT(tiled(&map, 2, t, 64, 512, 32, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);			/* spans past the allocation */
	EXPECT(tiled(&map, 2, 0x1000, 64, 256, 32, CU_TENSOR_MAP_SWIZZLE_NONE),
	       CUDA_ERROR_INVALID_VALUE);			/* not our memory */
	EXPECT(tiled((CUtensorMap *)((char *)&map + 8), 2, t, 64, 256, 32,
		     CU_TENSOR_MAP_SWIZZLE_NONE), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2,
				      (void *)(uintptr_t)t, dim, strides, NULL, estr,
				      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
				      CU_TENSOR_MAP_L2_PROMOTION_NONE,
				      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), CUDA_ERROR_INVALID_VALUE);
	/* Zero-FMA NaN fill only for floating-point data. */
	{
		cuuint32_t box[5] = { 16, 16, 1, 1, 1 };

		EXPECT(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2,
					      (void *)(uintptr_t)t, dim, strides, box, estr,
					      CU_TENSOR_MAP_INTERLEAVE_NONE,
					      CU_TENSOR_MAP_SWIZZLE_NONE,
					      CU_TENSOR_MAP_L2_PROMOTION_NONE,
					      CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA),
		       CUDA_ERROR_INVALID_VALUE);
	}
	/* im2col: rank 3..5, pixels per column 1..1024. */
	strides[1] = 256 * 64;
	EXPECT(cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
				       (void *)(uintptr_t)t, dim, strides, lower, upper, 16, 8,
				       estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
				       CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), CUDA_ERROR_INVALID_VALUE);
	dim[0] = 4;
	dim[1] = 4;
	dim[2] = 4;
	strides[0] = 16;
	strides[1] = 64;
	EXPECT(cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3,
				       (void *)(uintptr_t)t, dim, strides, lower, upper, 4, 2000,
				       estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
				       CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3,
				       (void *)(uintptr_t)t, dim, strides, lower, upper, 4, 2,
				       estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
				       CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuTensorMapEncodeIm2colWide(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3,
					   (void *)(uintptr_t)t, dim, strides, 0, 0, 4, 2, estr,
					   CU_TENSOR_MAP_INTERLEAVE_NONE,
					   CU_TENSOR_MAP_IM2COL_WIDE_MODE_W,
					   CU_TENSOR_MAP_SWIZZLE_NONE,
					   CU_TENSOR_MAP_L2_PROMOTION_NONE,
					   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
	       CUDA_ERROR_INVALID_VALUE);	/* wide mode: 64B/128B swizzles only */
	/* A map this process never made cannot have its address replaced. */
	memset(&map, 0x5a, sizeof(map));
	EXPECT(cuTensorMapReplaceAddress(&map, (void *)(uintptr_t)t), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemFree(t));
	CK(cuCtxSynchronize());
	printf("  ok    tensor maps\n");
}

int main(void)
{
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	CUdeviceptr d;
	void *image;

	cu_prog = "launchex";
	image = cu_load_kernels("cubin", NULL);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f_fill, mod, K_FILL));
	CK(cuMemAlloc(&d, N * sizeof(float)));

	test_launch_ex(d);
	test_func_attrs(mod, d);
	test_kernel_attrs(image, dev, ctx);
	test_tensor_maps();

	CK(cuMemFree(d));
	CK(cuModuleUnload(mod));
	CK(cuCtxSynchronize());
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("launchex: all checks passed\n");
	return 0;
}
