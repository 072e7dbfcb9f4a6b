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
 *   - the private table 6e163fbe: 99 slots; slot 7 walks a module's
 *     functions as cuFFT asks: the callback gets each function of the
 *     module once (the same handles cuModuleGetFunction gives, as many as
 *     cuModuleGetFunctionCount says, and cuModuleEnumerateFunctions lists),
 *     and the answer is their count; a module that is not one, or a
 *     second module argument that differs, is refused
 *   - a library whose image has no code for the device (kernels-sm100.fatbin)
 *     loads (lazily) but gives no kernel (NO_BINARY_FOR_GPU); loaded again
 *     from the same preserved image it fails at once, as a driver loading
 *     eagerly fails it (what cuDNN 9 relies on, or it tries again at every
 *     use); a copy of it elsewhere, preserved or not, loads (lazily) and
 *     gives no kernel, and cuModuleLoadData of it fails (refusals are
 *     remembered by content: without crossing); a good image still loads
 *   - the private table 1734dc26 (cuBLASLt's half-precision heuristics):
 *     17 slots; 4 and 13 go to the device's driver (the sim has none:
 *     NOT_SUPPORTED), 13 refuses objects slot 4 did not give
 *   - cluster occupancy (cuOccupancyMaxActiveClusters,
 *     cuOccupancyMaxPotentialClusterSize), asked from the daemon: a positive
 *     count for a valid cluster, fewer clusters for bigger ones, and the
 *     errors cuBLAS relies on: a cluster above 16 blocks or one that does not
 *     divide the grid is CUDA_ERROR_INVALID_CLUSTER_SIZE (cuBLAS probes
 *     sizes upwards until it gets it), no cluster size for a function that
 *     requires none is 0 clusters, a bad function INVALID_HANDLE, no
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
typedef CUresult (*lt4_fn)(void **, void **);
typedef CUresult (*lt13_fn)(void *, void *, int, int, int *, void *);

static const CUuuid lt_uuid = { { 0x17, 0x34, (char)0xdc, 0x26, (char)0x80, 0x0d, 0x47, 0x45,
				  (char)0x87, 0x26, (char)0xc0, (char)0xf1, (char)0xe7,
				  (char)0xdd, (char)0x8b, (char)0xca } };

/* What 6e163fbe slot 7 hands its callback, collected. */
struct walk {
	CUfunction f[64];
	unsigned int n;
};

static void collect(void *user, void *f)
{
	struct walk *w = user;

	if (w->n < 64)
		w->f[w->n] = (CUfunction)f;
	w->n++;
}

static void check_refused_library(void)
{
	CUlibraryOption preserve = CU_LIBRARY_BINARY_IS_PRESERVED;
	void *yes = (void *)1;
	char path[4096];
	size_t len, good_len;
	void *image, *copy, *good = cu_load_kernels("cubin", &good_len);
	CUlibrary lib;
	CUmodule mod;
	CUkernel k;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kernels-sm100.fatbin", cu_kernel_dir());
	f = fopen(path, "rb");
	if (!f)
		cu_fail("%s: missing", path);
	fseek(f, 0, SEEK_END);
	len = (size_t)ftell(f);
	rewind(f);
	image = malloc(len);
	if (!image || fread(image, 1, len, f) != len)
		cu_fail("%s: unreadable", path);
	fclose(f);

	CK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, &preserve, &yes, 1));
	EXPECT(cuLibraryGetKernel(&k, lib, K_FILL), CUDA_ERROR_NO_BINARY_FOR_GPU);
	EXPECT(cuLibraryGetKernel(&k, lib, K_FILL), CUDA_ERROR_NO_BINARY_FOR_GPU);
	CK(cuLibraryUnload(lib));
	EXPECT(cuLibraryLoadData(&lib, image, NULL, NULL, 0, &preserve, &yes, 1),
	       CUDA_ERROR_NO_BINARY_FOR_GPU);
	/* By content: not preserved, at another address, as a module. */
	copy = malloc(len);
	if (!copy)
		cu_fail("out of memory");
	memcpy(copy, image, len);
	CK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
	EXPECT(cuLibraryGetKernel(&k, lib, K_FILL), CUDA_ERROR_NO_BINARY_FOR_GPU);
	CK(cuLibraryUnload(lib));
	CK(cuLibraryLoadData(&lib, copy, NULL, NULL, 0, &preserve, &yes, 1));
	EXPECT(cuLibraryGetKernel(&k, lib, K_FILL), CUDA_ERROR_NO_BINARY_FOR_GPU);
	CK(cuLibraryUnload(lib));
	EXPECT(cuModuleLoadData(&mod, copy), CUDA_ERROR_NO_BINARY_FOR_GPU);
	free(copy);
	CK(cuLibraryLoadData(&lib, good, NULL, NULL, 0, &preserve, &yes, 1));
	CK(cuLibraryGetKernel(&k, lib, K_FILL));
	CK(cuLibraryUnload(lib));
	CK(cuModuleLoadData(&mod, good));
	CK(cuModuleUnload(mod));
	free(image);
	free(good);
}

static void check_walk(CUcontext ctx, CUmodule mod)
{
	const void *const *t = NULL;
	struct walk w = { .n = 0 };
	CUfunction listed[64], byname;
	unsigned int count = 0, i, j;
	int r;

	CK(cuGetExportTable((const void **)&t, &fft_uuid));
	CK(cuModuleGetFunctionCount(&count, mod));
	if (count < 3 || count > 64)
		cu_fail("cuModuleGetFunctionCount: %u", count);
	r = ((slot7_fn)t[7])(ctx, mod, (void *)collect, &w, mod, NULL);
	if (r != (int)count || w.n != count)
		cu_fail("6e163fbe[7]: answer %d, %u callbacks, %u functions", r, w.n, count);
	CK(cuModuleEnumerateFunctions(listed, count, mod));
	for (i = 0; i < count; i++) {
		for (j = 0; j < count && listed[j] != w.f[i]; j++)
			;
		if (j == count)
			cu_fail("6e163fbe[7]: function %u is not one cuModuleEnumerateFunctions lists", i);
		for (j = 0; j < i; j++)
			if (w.f[j] == w.f[i])
				cu_fail("6e163fbe[7]: function %u given twice", i);
	}
	CK(cuModuleGetFunction(&byname, mod, K_FILL));
	for (j = 0; j < count && listed[j] != byname; j++)
		;
	if (j == count)
		cu_fail("%s is not among the enumerated functions", K_FILL);
	w.n = 0;
	EXPECT(((slot7_fn)t[7])(ctx, (void *)(uintptr_t)0x12345, (void *)collect, &w,
				(void *)(uintptr_t)0x12345, NULL), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(((slot7_fn)t[7])(ctx, mod, (void *)collect, &w, NULL, NULL),
	       CUDA_ERROR_INVALID_VALUE);
	if (w.n)
		cu_fail("6e163fbe[7]: refused, yet called back %u times", w.n);
	EXPECT(cuModuleGetFunctionCount(NULL, mod), CUDA_ERROR_INVALID_VALUE);
}

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

	t = NULL;
	CK(cuGetExportTable((const void **)&t, &lt_uuid));
	if (!t || (uintptr_t)t[0] != 17 * sizeof(void *))
		cu_fail("1734dc26: size word %p, expected %#zx", t ? t[0] : NULL,
			17 * sizeof(void *));
	{
		void *a = NULL, *b = NULL;
		int v = 0;

		EXPECT(((lt4_fn)t[4])(&a, &b), CUDA_ERROR_NOT_SUPPORTED);
		EXPECT(((lt13_fn)t[13])(&v, &v, 2, 1, &v, NULL), CUDA_ERROR_INVALID_VALUE);
	}
	EXPECT(((noarg_fn)t[16])(), CUDA_ERROR_NOT_SUPPORTED);
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
	/* No cluster size given and none required by the function: no
	 * error, no cluster (what the H200's driver answers). */
	c = config(8, 0, &a);
	n = -1;
	CK(cuOccupancyMaxActiveClusters(&n, f, &c));
	if (n != 0)
		cu_fail("no cluster size: %d clusters", n);
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
	check_walk(ctx, mod);
	check_refused_library();
	CK(cuLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0));
	check_clusters(mod, lib);
	CK(cuLibraryUnload(lib));
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	free(image);
	printf("mathlibs: ok\n");
	return 0;
}
