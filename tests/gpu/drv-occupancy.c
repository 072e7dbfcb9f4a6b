// SPDX-License-Identifier: MIT
/*
 * Cluster occupancy through the driver API only (issue 15: JAX's
 * cuOccupancyMaxActiveClusters answered INVALID_CLUSTER_SIZE through
 * axon), in a form that runs unchanged natively and through axon and
 * prints the same transcript on stdout both ways on one GPU. The numbers
 * are the device's own (the sim answers its model's, sim/occupancy.c); the
 * error codes are the driver's whatever the device, and are checked here:
 *
 *   1. no cluster in the config (no attribute, or 0x0x0) for a function
 *      without a required size: MaxActiveClusters answers 0,
 *      MaxPotentialClusterSize the portable limit;
 *   2. clusters 1..8 blocks, in x, y and z, grids of whole clusters:
 *      answers; a grid not made of whole clusters, a cluster with one
 *      dimension 0: INVALID_CLUSTER_SIZE; a grid or block dimension 0:
 *      INVALID_VALUE (after the cluster's zero check);
 *   3. 16 blocks: INVALID_CLUSTER_SIZE until the function allows
 *      non-portable sizes, then an answer; MaxPotentialClusterSize grows;
 *   4. the way Triton (JAX's GPU kernels) asks: non-portable sizes
 *      allowed, the dynamic shared memory maximum raised, a grid of one
 *      cluster in x and y;
 *   5. blocks of 1025 threads, or more dynamic shared memory than the
 *      function opted in to: 0, no error;
 *   6. the attribute list: other attributes beside the cluster change
 *      nothing, the last CLUSTER_DIMENSION counts, an unknown id is
 *      INVALID_VALUE; NULL arguments are INVALID_VALUE.
 *
 * Usage: drv-occupancy KERNELS.cubin (the sim's built-in kernels image;
 * its "fill" is the function asked about). Exit 0 when every check
 * passed; else 1 with the line that says why.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv-gpu.h"

static int failures;

static CUfunction fn;

/* One query: prints its answer; want is the CUresult it must return. */
static int ask(const char *what, int potential, unsigned int gx, unsigned int gy,
	       unsigned int gz, unsigned int bx, unsigned int shared,
	       const CUlaunchAttribute *attrs, unsigned int nattrs, CUresult want)
{
	CUlaunchConfig cfg;
	CUresult r;
	int v = -1;

	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = gx;
	cfg.gridDimY = gy;
	cfg.gridDimZ = gz;
	cfg.blockDimX = bx;
	cfg.blockDimY = 1;
	cfg.blockDimZ = 1;
	cfg.sharedMemBytes = shared;
	cfg.attrs = (CUlaunchAttribute *)attrs;
	cfg.numAttrs = nattrs;
	r = potential ? cuOccupancyMaxPotentialClusterSize(&v, fn, &cfg)
		      : cuOccupancyMaxActiveClusters(&v, fn, &cfg);
	if (r)
		printf("%-52s %s\n", what, ename(r));
	else
		printf("%-52s %d\n", what, v);
	if (r != want) {
		printf("FAIL %s: expected %s\n", what, ename(want));
		failures++;
	}
	return v;
}

static CUlaunchAttribute cluster(unsigned int x, unsigned int y, unsigned int z)
{
	CUlaunchAttribute a;

	memset(&a, 0, sizeof(a));
	a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	a.value.clusterDim.x = x;
	a.value.clusterDim.y = y;
	a.value.clusterDim.z = z;
	return a;
}

static void sizes(void)
{
	static const unsigned int dims[][3] = {
		{ 1, 1, 1 }, { 2, 1, 1 }, { 4, 1, 1 }, { 8, 1, 1 }, { 3, 1, 1 },
		{ 1, 2, 1 }, { 1, 1, 2 }, { 2, 2, 1 }, { 2, 2, 2 },
	};
	char what[96];
	unsigned int i;

	for (i = 0; i < sizeof(dims) / sizeof(dims[0]); i++) {
		CUlaunchAttribute a = cluster(dims[i][0], dims[i][1], dims[i][2]);

		snprintf(what, sizeof(what), "active, cluster %ux%ux%u, 128 threads",
			 dims[i][0], dims[i][1], dims[i][2]);
		ask(what, 0, dims[i][0] * 4, dims[i][1], dims[i][2], 128, 0, &a, 1, CUDA_SUCCESS);
	}
	for (i = 32; i <= 1024; i *= 2) {
		CUlaunchAttribute a = cluster(2, 1, 1);

		snprintf(what, sizeof(what), "active, cluster 2x1x1, %u threads", i);
		ask(what, 0, 2, 1, 1, i, 0, &a, 1, CUDA_SUCCESS);
	}
}

static void refusals(void)
{
	CUlaunchAttribute a = cluster(2, 1, 1), z = cluster(0, 1, 1);

	ask("active, 2x1x1 on a grid of 3", 0, 3, 1, 1, 128, 0, &a, 1,
	    CUDA_ERROR_INVALID_CLUSTER_SIZE);
	ask("potential, 2x1x1 on a grid of 1", 1, 1, 1, 1, 128, 0, &a, 1,
	    CUDA_ERROR_INVALID_CLUSTER_SIZE);
	ask("active, cluster 0x1x1", 0, 2, 1, 1, 128, 0, &z, 1, CUDA_ERROR_INVALID_CLUSTER_SIZE);
	ask("active, cluster 0x1x1, grid y 0", 0, 2, 0, 1, 128, 0, &z, 1,
	    CUDA_ERROR_INVALID_CLUSTER_SIZE);
	ask("active, grid y 0", 0, 2, 0, 1, 128, 0, &a, 1, CUDA_ERROR_INVALID_VALUE);
	ask("potential, grid y 0", 1, 2, 0, 1, 128, 0, NULL, 0, CUDA_ERROR_INVALID_VALUE);
	ask("active, block 0", 0, 2, 1, 1, 0, 0, &a, 1, CUDA_ERROR_INVALID_VALUE);
}

static void large_clusters(void)
{
	CUlaunchAttribute a16 = cluster(16, 1, 1), a44 = cluster(4, 4, 1);

	ask("potential, non-portable not allowed", 1, 16, 1, 1, 128, 0, NULL, 0, CUDA_SUCCESS);
	ask("active, 16x1x1, non-portable not allowed", 0, 16, 1, 1, 128, 0, &a16, 1,
	    CUDA_ERROR_INVALID_CLUSTER_SIZE);
	ask("potential, 16x1x1, non-portable not allowed", 1, 16, 1, 1, 128, 0, &a16, 1,
	    CUDA_ERROR_INVALID_CLUSTER_SIZE);
	CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	ask("potential, non-portable allowed", 1, 16, 1, 1, 128, 0, NULL, 0, CUDA_SUCCESS);
	ask("active, 16x1x1, non-portable allowed", 0, 16, 1, 1, 128, 0, &a16, 1, CUDA_SUCCESS);
	ask("active, 4x4x1, non-portable allowed", 0, 4, 4, 1, 128, 0, &a44, 1, CUDA_SUCCESS);
}

/* Triton's occupancyMaxActiveClusters: cluster (x, y, 1), a grid of
 * (x, y, 1), 128 threads, the shared memory opted in to. */
static void triton(void)
{
	static const unsigned int shapes[][2] = { { 2, 1 }, { 4, 1 }, { 2, 2 }, { 8, 2 } };
	char what[96];
	unsigned int i;

	CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100 * 1024));
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		CUlaunchAttribute a = cluster(shapes[i][0], shapes[i][1], 1);

		snprintf(what, sizeof(what), "triton, cluster %ux%u, 96 KiB shared",
			 shapes[i][0], shapes[i][1]);
		ask(what, 0, shapes[i][0], shapes[i][1], 1, 128, 96 * 1024, &a, 1, CUDA_SUCCESS);
	}
}

static void cannot_run(void)
{
	CUlaunchAttribute a = cluster(2, 1, 1);

	if (ask("active, 1025 threads", 0, 2, 1, 1, 1025, 0, &a, 1, CUDA_SUCCESS) != 0) {
		printf("FAIL 1025 threads: expected 0\n");
		failures++;
	}
	if (ask("active, more shared memory than opted in", 0, 2, 1, 1, 128, 101 * 1024, &a, 1,
		CUDA_SUCCESS) != 0) {
		printf("FAIL 101 KiB of shared memory: expected 0\n");
		failures++;
	}
}

static void attribute_list(void)
{
	CUlaunchAttribute a[3];
	CUlaunchConfig cfg;
	int v;

	memset(a, 0, sizeof(a));
	a[0] = cluster(2, 1, 1);
	a[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	a[1].value.priority = -1;
	a[2].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
	a[2].value.clusterSchedulingPolicyPreference = CU_CLUSTER_SCHEDULING_POLICY_SPREAD;
	ask("active, 2x1x1 with priority and policy", 0, 4, 1, 1, 128, 0, a, 3, CUDA_SUCCESS);
	a[1] = cluster(4, 1, 1);
	ask("active, 2x1x1 then 4x1x1", 0, 4, 1, 1, 128, 0, a, 2, CUDA_SUCCESS);
	a[1].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
	ask("active, 2x1x1 and a preferred 4x1x1", 0, 4, 1, 1, 128, 0, a, 2, CUDA_SUCCESS);
	a[1].id = (CUlaunchAttributeID)99;
	ask("active, an unknown attribute id", 0, 4, 1, 1, 128, 0, a, 2, CUDA_ERROR_INVALID_VALUE);
	ask("active, no attribute list", 0, 4, 1, 1, 128, 0, NULL, 1, CUDA_ERROR_INVALID_VALUE);
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = cfg.blockDimY = cfg.blockDimZ = 1;
	printf("%-52s %s\n", "active, NULL answer",
	       ename(cuOccupancyMaxActiveClusters(NULL, fn, &cfg)));
	printf("%-52s %s\n", "active, NULL config",
	       ename(cuOccupancyMaxActiveClusters(&v, fn, NULL)));
	printf("%-52s %s\n", "active, NULL function",
	       ename(cuOccupancyMaxActiveClusters(&v, NULL, &cfg)));
	if (cuOccupancyMaxActiveClusters(NULL, fn, &cfg) != CUDA_ERROR_INVALID_VALUE ||
	    cuOccupancyMaxActiveClusters(&v, fn, NULL) != CUDA_ERROR_INVALID_VALUE ||
	    cuOccupancyMaxActiveClusters(&v, NULL, &cfg) != CUDA_ERROR_INVALID_VALUE) {
		printf("FAIL NULL arguments: expected CUDA_ERROR_INVALID_VALUE\n");
		failures++;
	}
}

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *b;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		printf("FAIL cannot read %s\n", path);
		exit(1);
	}
	b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
		printf("FAIL cannot read %s\n", path);
		exit(1);
	}
	b[n] = 0;
	fclose(f);
	return b;
}

int main(int argc, char **argv)
{
	CUlaunchAttribute none = cluster(0, 0, 0);
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	char name[128];
	void *image;

	if (argc != 2) {
		fprintf(stderr, "usage: drv-occupancy KERNELS.cubin\n");
		return 2;
	}
	image = read_file(argv[1]);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	if (!cuDeviceGetName(name, sizeof(name), dev))
		fprintf(stderr, "device: %s\n", name);
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&fn, mod, "fill"));

	if (ask("active, no cluster attribute", 0, 1, 1, 1, 128, 0, NULL, 0, CUDA_SUCCESS) != 0 ||
	    ask("active, cluster 0x0x0", 0, 1, 1, 1, 128, 0, &none, 1, CUDA_SUCCESS) != 0) {
		printf("FAIL no cluster: expected 0\n");
		failures++;
	}
	ask("potential, no cluster attribute", 1, 1, 1, 1, 128, 0, NULL, 0, CUDA_SUCCESS);
	sizes();
	refusals();
	large_clusters();
	triton();
	cannot_run();
	attribute_list();

	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
