// SPDX-License-Identifier: MIT
/*
 * Launch variants, function attributes, host callbacks and tensor maps,
 * through the driver API only, in a form that runs unchanged natively and
 * through axon and prints the same transcript on stdout both ways (the
 * device name goes to stderr):
 *
 *   1. cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 2x1x1 on
 *      a kernel without __cluster_dims__: every block sees a cluster of two
 *      and reads its neighbour's shared memory; without the attribute each
 *      block is a cluster of one; cuLaunchCooperativeKernel runs;
 *   2. CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set to 100 KiB, read
 *      back, and a kernel that uses all of it;
 *   3. host functions in stream order between kernels and copies, and a
 *      cuStreamAddCallback's status;
 *   4. cuTensorMapEncodeTiled: the 128 bytes, with the global address's
 *      field cleared (the address differs between runs, the rest must not);
 *      where the field lies is found by encoding at two addresses 16 bytes
 *      apart, and checked against the address.
 *
 * Usage: drv-launch [LAUNCH-KERNELS-CUBIN] (default: launch-kernels.cubin
 * beside the program, which tests/gpu/gpu.mk builds from
 * tests/gpu/launch-kernels.cu for sm_90). Exit 0 when every check passed;
 * a mismatch or an unexpected failure exits 1 with the line that says why.
 */
#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv-gpu.h"

static void fail(const char *what)
{
	printf("FAIL %s\n", what);
	exit(1);
}

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *p;

	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	if (!p || fread(p, 1, (size_t)n, f) != (size_t)n)
		fail("reading the module image");
	p[n] = 0;
	fclose(f);
	return p;
}

static CUfunction f_cluster, f_smem, f_add;

/* ---- 1. clusters ---------------------------------------------------------- */

#define CBLOCKS 8

static void probe(CUdeviceptr out, unsigned int cx, const char *what)
{
	unsigned int h[CBLOCKS * 3];
	void *params[] = { &out };
	CUlaunchAttribute a;
	CUlaunchConfig cfg = {
		.gridDimX = CBLOCKS, .gridDimY = 1, .gridDimZ = 1,
		.blockDimX = 32, .blockDimY = 1, .blockDimZ = 1,
		.attrs = &a, .numAttrs = cx ? 1 : 0,
	};
	int b;

	memset(&a, 0, sizeof(a));
	a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	a.value.clusterDim.x = cx;
	a.value.clusterDim.y = 1;
	a.value.clusterDim.z = 1;
	CK(cuMemsetD32(out, 0xffffffffU, CBLOCKS * 3));
	CK(cuLaunchKernelEx(&cfg, f_cluster, params, NULL));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h, out, sizeof(h)));
	printf("clusters %s:", what);
	for (b = 0; b < CBLOCKS; b++)
		printf(" %u/%u:%u", h[b * 3], h[b * 3 + 1], h[b * 3 + 2]);
	printf("\n");
	for (b = 0; b < CBLOCKS; b++) {
		unsigned int n = cx ? cx : 1;

		if (h[b * 3] != (unsigned int)b % n || h[b * 3 + 1] != n)
			fail("cluster rank or size");
		if (n == 2 && h[b * 3 + 2] != (unsigned int)(b ^ 1) * 10 + 1)
			fail("distributed shared memory of the neighbour");
	}
}

static void test_clusters(void)
{
	CUdeviceptr out;
	void *params[] = { &out };

	CK(cuMemAlloc(&out, CBLOCKS * 3 * sizeof(unsigned int)));
	probe(out, 0, "none");
	probe(out, 2, "2x1x1");
	CK(cuLaunchCooperativeKernel(f_cluster, CBLOCKS, 1, 1, 32, 1, 1, 0, NULL, params));
	CK(cuCtxSynchronize());
	printf("cooperative launch: ok\n");
	CK(cuMemFree(out));
}

/* ---- 2. 100 KiB of dynamic shared memory --------------------------------- */

static void test_smem(void)
{
	const int bytes = 100 * 1024, n = bytes / (int)sizeof(float);
	float h[2], want = 0.0f;
	CUdeviceptr out;
	void *params[] = { &out, (void *)&n };
	int v, i;

	CK(cuMemAlloc(&out, sizeof(h)));
	CK(cuFuncSetAttribute(f_smem, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
	CK(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f_smem));
	printf("max dynamic shared memory: %d\n", v);
	CK(cuLaunchKernel(f_smem, 2, 1, 1, 256, 1, 1, (unsigned int)bytes, NULL, params, NULL));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h, out, sizeof(h)));
	for (i = 0; i < n; i++)
		want += (float)(i % 97);
	printf("100 KiB shared sums: %.1f %.1f (expected %.1f)\n", h[0], h[1], want);
	if (h[0] != want || h[1] != want)
		fail("sum over 100 KiB of shared memory");
	CK(cuMemFree(out));
}

/* ---- 3. host functions ------------------------------------------------------ */

#define NCB 10

static float *pinned;
static float seen[NCB];
static int ncalls;
static CUresult statuses[2];
static int nstatus;

static void CUDA_CB record(void *arg)
{
	(void)arg;
	seen[ncalls++] = pinned[0];
}

static void CUDA_CB status_cb(CUstream s, CUresult status, void *arg)
{
	(void)s;
	(void)arg;
	statuses[nstatus++] = status;
}

static void test_callbacks(void)
{
	CUdeviceptr d;
	CUstream s;
	float one = 1.0f;
	int n = 1, i;
	void *params[] = { &d, &one, &n };

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAllocHost((void **)&pinned, sizeof(float)));
	CK(cuMemAlloc(&d, sizeof(float)));
	CK(cuMemsetD32Async(d, 0, 1, s));
	for (i = 0; i < NCB; i++) {
		CK(cuLaunchKernel(f_add, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
		CK(cuMemcpyDtoHAsync(pinned, d, sizeof(float), s));
		CK(cuLaunchHostFunc(s, record, NULL));
	}
	CK(cuStreamAddCallback(s, status_cb, NULL, 0));
	CK(cuStreamSynchronize(s));
	printf("callbacks saw:");
	for (i = 0; i < ncalls; i++)
		printf(" %.0f", seen[i]);
	printf("\n");
	if (ncalls != NCB)
		fail("number of callbacks");
	for (i = 0; i < NCB; i++)
		if (seen[i] != (float)(i + 1))
			fail("a callback ran out of order with the stream's copies");
	printf("callback status: %s\n", nstatus == 1 ? ename(statuses[0]) : "missing");
	CK(cuStreamQuery(s));
	CK(cuMemFree(d));
	CK(cuMemFreeHost(pinned));
	CK(cuStreamDestroy(s));
}

/* ---- 4. tensor maps -------------------------------------------------------- */

static CUresult tiled(CUtensorMap *m, CUdeviceptr addr)
{
	cuuint64_t dim[2] = { 256, 256 }, strides[1] = { 256 * sizeof(float) };
	cuuint32_t box[2] = { 32, 32 }, estr[2] = { 1, 1 };

	return cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2,
				      (void *)(uintptr_t)addr, dim, strides, box, estr,
				      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
				      CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
				      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

static int get_bit(const unsigned char *m, int bit)
{
	return (m[bit / 8] >> (bit % 8)) & 1;
}

static void test_tensor_map(void)
{
	static CUtensorMap m0, m1;
	const unsigned char *b0 = (const void *)&m0, *b1 = (const void *)&m1;
	unsigned char masked[sizeof(m0)];
	CUdeviceptr buf, a;
	uint64_t field = 0;
	int i, p = -1, ndiff = 0;

	/* 2 MiB, and a 64 KiB-aligned base inside it (its bit 4 is 0). */
	CK(cuMemAlloc(&buf, (2 << 20)));
	a = (buf + 0xffff) & ~(CUdeviceptr)0xffff;
	CK(tiled(&m0, a));
	CK(tiled(&m1, a + 16));
	for (i = 0; i < (int)sizeof(m0) * 8; i++) {
		if (get_bit(b0, i) != get_bit(b1, i)) {
			ndiff++;
			if (p < 0)
				p = i;
		}
	}
	if (ndiff != 1 || p < 0 || p + 53 > (int)sizeof(m0) * 8)
		fail("the tensor map's address field: not one bit for 16 bytes");
	/* Address bits 4..56 from bit p on, if the field is contiguous. */
	for (i = 0; i < 53; i++)
		field |= (uint64_t)get_bit(b0, p + i) << i;
	printf("tensor map: address field at bit %d, holds the address: %s\n", p,
	       field == (uint64_t)a >> 4 ? "yes" : "no");
	memcpy(masked, b0, sizeof(masked));
	for (i = 0; i < 53; i++)
		masked[(p + i) / 8] &= (unsigned char)~(1U << ((p + i) % 8));
	printf("tensor map bytes (address cleared):");
	for (i = 0; i < (int)sizeof(masked); i++)
		printf("%s%02x", i % 16 ? "" : "\n  ", masked[i]);
	printf("\n");
	CK(cuTensorMapReplaceAddress(&m0, (void *)(uintptr_t)(a + 16)));
	printf("replace address: %s\n", memcmp(&m0, &m1, sizeof(m0)) ? "differs" : "same as encoded there");
	CK(cuMemFree(buf));
}

int main(int argc, char **argv)
{
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	char name[256], path[4096];
	void *image;
	int major = 0;

	if (argc > 2) {
		fprintf(stderr, "usage: %s [launch-kernels.cubin]\n", argv[0]);
		return 2;
	}
	if (argc == 2) {
		snprintf(path, sizeof(path), "%s", argv[1]);
	} else {
		const char *slash = strrchr(argv[0], '/');

		snprintf(path, sizeof(path), "%.*slaunch-kernels.cubin",
			 slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	}
	image = read_file(path);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	fprintf(stderr, "device: %s (sm_%d)\n", name, major * 10);
	if (major < 9)
		fail("needs sm_90 or newer (clusters, tensor maps)");
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f_cluster, mod, "cluster_probe"));
	CK(cuModuleGetFunction(&f_smem, mod, "smem_sum"));
	CK(cuModuleGetFunction(&f_add, mod, "add_const"));

	test_clusters();
	test_smem();
	test_callbacks();
	test_tensor_map();

	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("drv-launch: all checks passed\n");
	return 0;
}
