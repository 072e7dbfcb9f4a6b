// SPDX-License-Identifier: MIT
/*
 * mathlibs - what cuBLAS and cuFFT need from the driver beyond cudart,
 * through axon (against the sim):
 *
 *   - the private table 21318c60: served at the 580 driver's size (93
 *     slots); slot 4 answers a context's unique id as cuCtxGetId does (NULL
 *     = the current context); a slot nobody has identified refuses with
 *     NOT_SUPPORTED instead of being NULL
 *     slots 51 and 39 are the driver's own, asked through the daemon: the
 *     sim has no driver to ask (NOT_SUPPORTED), arguments not as cuBLAS
 *     passes them are refused, and an object not given out is INVALID_VALUE
 *   - the private table 6e163fbe: 99 slots; slot 7 answers
 *     CUDA_ERROR_INVALID_VALUE, as NVIDIA's driver does for cuFFT's call
 *   - cluster occupancy (cuOccupancyMaxActiveClusters,
 *     cuOccupancyMaxPotentialClusterSize), asked from the daemon: a positive
 *     count for a valid cluster, fewer clusters for bigger ones, and the
 *     errors cuBLAS relies on: a cluster above 16 blocks or one that does not
 *     divide the grid is CUDA_ERROR_INVALID_CLUSTER_SIZE (cuBLAS probes
 *     sizes upwards until it gets it), a bad function INVALID_HANDLE, no
 *     config INVALID_VALUE; a CUkernel is accepted where a CUfunction is
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuclient.h"

static const CUuuid ctxid_uuid = { { 0x21, 0x31, (char)0x8c, 0x60, (char)0x97, 0x14, 0x32, 0x48,
				     (char)0x8c, (char)0xa6, 0x41, (char)0xff, 0x73, 0x24,
				     (char)0xc8, (char)0xf2 } };
static const CUuuid fft_uuid = { { 0x6e, 0x16, 0x3f, (char)0xbe, (char)0xb9, 0x58, 0x44, 0x4d,
				   (char)0x83, 0x5c, (char)0xe1, (char)0x82, (char)0xaf,
				   (char)0xf1, (char)0x99, 0x1e } };

typedef CUresult (*ctxid_fn)(CUcontext, unsigned long long *);
typedef CUresult (*noarg_fn)(void);
typedef CUresult (*slot7_fn)(void *, void *, void *, void *, void *, void *);
typedef CUresult (*priv51_fn)(CUcontext, void *, void **, void *);
typedef CUresult (*priv39_fn)(CUcontext, void *, uint32_t *, void *);

static void check_tables(CUcontext ctx)
{
	const void *const *t = NULL;
	unsigned long long id = 0, want = 0;

	CK(cuGetExportTable((const void **)&t, &ctxid_uuid));
	if (!t || (uintptr_t)t[0] != 93 * sizeof(void *))
		cu_fail("21318c60: size word %p, expected %#zx", t ? t[0] : NULL,
			93 * sizeof(void *));
	CK(cuCtxGetId(ctx, &want));
	CK(((ctxid_fn)t[4])(ctx, &id));
	if (id != want)
		cu_fail("21318c60[4] gave %llu, cuCtxGetId %llu", id, want);
	id = 0;
	CK(((ctxid_fn)t[4])(NULL, &id));
	if (id != want)
		cu_fail("21318c60[4](NULL) gave %llu, expected the current context's %llu",
			id, want);
	for (int s = 1; s < 93; s++)
		if (!t[s])
			cu_fail("21318c60 slot %d is NULL", s);
	EXPECT(((noarg_fn)t[1])(), CUDA_ERROR_NOT_SUPPORTED);
	/* 51 and 39 go to the device's driver: the sim has none to ask. */
	{
		void *obj = NULL;
		uint32_t v = 0;

		EXPECT(((priv51_fn)t[51])(ctx, NULL, &obj, NULL), CUDA_ERROR_NOT_SUPPORTED);
		EXPECT(((priv51_fn)t[51])(ctx, &v, &obj, NULL), CUDA_ERROR_NOT_SUPPORTED);
		EXPECT(((priv39_fn)t[39])(ctx, &v, &v, NULL), CUDA_ERROR_INVALID_VALUE);
	}
	EXPECT(((noarg_fn)t[92])(), CUDA_ERROR_NOT_SUPPORTED);

	t = NULL;
	CK(cuGetExportTable((const void **)&t, &fft_uuid));
	if (!t || (uintptr_t)t[0] != 99 * sizeof(void *))
		cu_fail("6e163fbe: size word %p, expected %#zx", t ? t[0] : NULL,
			99 * sizeof(void *));
	EXPECT(((slot7_fn)t[7])(ctx, NULL, NULL, &id, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT(((noarg_fn)t[98])(), CUDA_ERROR_NOT_SUPPORTED);
}

static CUlaunchConfig config(unsigned int grid, unsigned int cluster, CUlaunchAttribute *a)
{
	CUlaunchConfig c;

	memset(&c, 0, sizeof(c));
	memset(a, 0, sizeof(*a));
	c.gridDimX = grid;
	c.gridDimY = c.gridDimZ = 1;
	c.blockDimX = 128;
	c.blockDimY = c.blockDimZ = 1;
	if (cluster) {
		a->id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		a->value.clusterDim.x = cluster;
		a->value.clusterDim.y = a->value.clusterDim.z = 1;
		c.attrs = a;
		c.numAttrs = 1;
	}
	return c;
}

static void check_clusters(CUmodule mod, CUlibrary lib)
{
	CUlaunchAttribute a;
	CUlaunchConfig c;
	CUfunction f;
	CUkernel k;
	int n2 = 0, n4 = 0, n = 0;

	CK(cuModuleGetFunction(&f, mod, K_FILL));
	c = config(8, 2, &a);
	CK(cuOccupancyMaxActiveClusters(&n2, f, &c));
	c = config(8, 4, &a);
	CK(cuOccupancyMaxActiveClusters(&n4, f, &c));
	if (n2 <= 0 || n4 <= 0 || n4 > n2)
		cu_fail("clusters of 2: %d, of 4: %d", n2, n4);
	c = config(9, 2, &a);
	EXPECT(cuOccupancyMaxActiveClusters(&n, f, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	c = config(34, 17, &a);
	EXPECT(cuOccupancyMaxActiveClusters(&n, f, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	c = config(512, 256, &a);
	EXPECT(cuOccupancyMaxActiveClusters(&n, f, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	EXPECT(cuOccupancyMaxActiveClusters(&n, f, NULL), CUDA_ERROR_INVALID_VALUE);
	/* No cluster size given and none required by the function. */
	c = config(8, 0, &a);
	EXPECT(cuOccupancyMaxActiveClusters(&n, f, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	/* Some dimensions zero: all three or none. */
	c = config(8, 2, &a);
	a.value.clusterDim.y = 0;
	EXPECT(cuOccupancyMaxActiveClusters(&n, f, &c), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	c = config(8, 2, &a);
	EXPECT(cuOccupancyMaxActiveClusters(NULL, f, &c), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuOccupancyMaxActiveClusters(&n, (CUfunction)(uintptr_t)0x12345, &c),
	       CUDA_ERROR_INVALID_HANDLE);
	CK(cuOccupancyMaxPotentialClusterSize(&n, f, &c));
	if (n < 2 || n > 16)
		cu_fail("potential cluster size %d", n);

	/* A CUkernel in place of a CUfunction, as cuBLAS passes it. */
	CK(cuLibraryGetKernel(&k, lib, K_FILL));
	n = 0;
	CK(cuOccupancyMaxActiveClusters(&n, (CUfunction)k, &c));
	if (n != n2)
		cu_fail("through the CUkernel: %d clusters, through the function %d", n, n2);
}

int main(void)
{
	size_t len;
	void *image = cu_load_kernels("cubin", &len);
	CUcontext ctx;
	CUlibrary lib;
	CUmodule mod;
	CUdevice dev;

	cu_prog = "mathlibs";
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	check_tables(ctx);
	CK(cuModuleLoadData(&mod, image));
	CK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
	check_clusters(mod, lib);
	CK(cuLibraryUnload(lib));
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	free(image);
	printf("mathlibs: ok\n");
	return 0;
}
