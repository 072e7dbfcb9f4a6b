// SPDX-License-Identifier: MIT
/*
 * Stream-ordered allocation (memory pools) and the virtual memory
 * management API, through the driver API only, in a form that runs
 * unchanged natively and through axon and prints the same transcript on
 * stdout both ways (the device name goes to stderr). Only what CUDA
 * defines is printed: relations, not the pool's internal reservation sizes
 * (the driver reserves in its own chunks).
 *
 *   1. pools: the default pool and its attributes; cuMemAllocAsync and a
 *      kernel writing the memory in stream order; same-stream reuse of a
 *      freed block; the release threshold at synchronisation; trim; a
 *      created pool as the device's current pool; high-water marks;
 *   2. VMM: granularity; reserve; create (charged in cuMemGetInfo); one
 *      handle mapped at two addresses, a kernel writing through one and
 *      the host reading through the other; access flags; retain; the
 *      handle's properties; mappings refused off the granularity, outside
 *      a reservation or over a mapping; release before unmap keeps the
 *      memory while mapped.
 *
 * Usage: drv-mem MODULE-IMAGE (tests/sim-kernels/kernels.cu built for the
 * device, e.g. $BUILD/tests/data/kernels.cubin). Exit 0 when every check
 * passed; a mismatch or an unexpected failure exits 1 with the line that
 * says why.
 */
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB (1024 * 1024ULL)

static const char *ename(CUresult r)
{
	const char *s = NULL;

	if (cuGetErrorName(r, &s) || !s)
		return "CUresult ?";
	return s;
}

#define CK(x)								\
	do {								\
		CUresult r_ = (x);					\
		if (r_) {						\
			printf("%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, ename(r_)); \
			exit(1);					\
		}							\
	} while (0)

#define WANT(c)								\
	do {								\
		if (!(c)) {						\
			printf("%s:%d: check failed: %s\n", __FILE__, __LINE__, #c); \
			exit(1);					\
		}							\
	} while (0)

static CUfunction fill_fn;

static cuuint64_t attr(CUmemoryPool p, CUmemPool_attribute a)
{
	cuuint64_t v = 0;

	CK(cuMemPoolGetAttribute(p, a, &v));
	return v;
}

static void set_attr(CUmemoryPool p, CUmemPool_attribute a, cuuint64_t v)
{
	CK(cuMemPoolSetAttribute(p, a, &v));
}

static size_t free_mem(void)
{
	size_t f, t;

	CK(cuMemGetInfo(&f, &t));
	return f;
}

/* fill(p, v, n): p[i] = v for i < n, on stream s. */
static void fill(CUdeviceptr p, float v, int n, CUstream s)
{
	void *args[] = { &p, &v, &n };

	CK(cuLaunchKernel(fill_fn, (unsigned int)(n + 255) / 256, 1, 1, 256, 1, 1, 0, s,
			  args, NULL));
}

static void check_floats(CUdeviceptr p, int n, float v, const char *what)
{
	float *h = malloc((size_t)n * sizeof(float));
	int i;

	WANT(h);
	CK(cuMemcpyDtoH(h, p, (size_t)n * sizeof(float)));
	for (i = 0; i < n; i++)
		if (h[i] != v) {
			printf("%s: element %d is %g, expected %g\n", what, i, h[i], v);
			exit(1);
		}
	printf("%s: %d floats of %g: ok\n", what, n, v);
	free(h);
}

static const char *yes(int c)
{
	return c ? "yes" : "no";
}

static void pools(CUdevice dev)
{
	CUmemPoolProps props = { 0 };
	CUmemoryPool dflt, cur, pool, got;
	CUdeviceptr a, b;
	CUstream s1;
	int v, n = (int)(2 * MiB / sizeof(float));

	printf("== pools\n");
	CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CK(cuDeviceGetDefaultMemPool(&dflt, dev));
	CK(cuDeviceGetMemPool(&cur, dev));
	printf("current pool is the default: %s\n", yes(cur == dflt));
	printf("release threshold: %llu\n",
	       (unsigned long long)attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD));
	CK(cuMemPoolGetAttribute(dflt, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &v));
	printf("opportunistic reuse: %d\n", v);
	CK(cuMemPoolGetAttribute(dflt, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &v));
	printf("follow event dependencies: %d\n", v);

	CK(cuMemAllocAsync(&a, 2 * MiB, s1));
	fill(a, 3.0f, n, s1);
	printf("used after a 2 MiB allocation: %llu MiB\n",
	       (unsigned long long)(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) / MiB));
	printf("reserved >= used: %s\n",
	       yes(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) >=
		   attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT)));
	CK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
	printf("pointer's pool is the default: %s\n", yes(got == dflt));
	CK(cuMemFreeAsync(a, s1));
	CK(cuMemAllocAsync(&b, 2 * MiB, s1));
	printf("same-stream reuse gives the freed block: %s\n", yes(b == a));
	fill(b, 4.0f, n, s1);
	CK(cuStreamSynchronize(s1));
	check_floats(b, n, 4.0f, "pool block written in stream order");
	CK(cuMemFreeAsync(b, s1));
	CK(cuStreamSynchronize(s1));
	printf("threshold 0: reserved after sync: %llu\n",
	       (unsigned long long)attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT));

	set_attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, UINT64_MAX);
	CK(cuMemAllocAsync(&a, 8 * MiB, s1));
	CK(cuMemFreeAsync(a, s1));
	CK(cuStreamSynchronize(s1));
	printf("threshold max: memory kept after sync: %s\n",
	       yes(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) >= 8 * MiB));
	CK(cuMemPoolTrimTo(dflt, 0));
	printf("trimmed to 0: reserved %llu\n",
	       (unsigned long long)attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT));
	printf("used high-water mark >= 8 MiB: %s\n",
	       yes(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_HIGH) >= 8 * MiB));
	set_attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0);
	printf("used high-water mark after reset: %llu\n",
	       (unsigned long long)attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_HIGH));
	set_attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);

	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = dev;
	CK(cuMemPoolCreate(&pool, &props));
	CK(cuDeviceSetMemPool(dev, pool));
	CK(cuMemAllocAsync(&a, 2 * MiB, s1));
	CK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a));
	printf("allocation comes from the current pool: %s\n", yes(got == pool));
	CK(cuMemAllocFromPoolAsync(&b, 2 * MiB, dflt, s1));
	CK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, b));
	printf("explicit pool allocation from the default: %s\n", yes(got == dflt));
	fill(a, 5.0f, n, s1);
	CK(cuMemcpyDtoDAsync(b, a, 2 * MiB, s1));
	CK(cuStreamSynchronize(s1));
	check_floats(b, n, 5.0f, "copy between pools");
	CK(cuMemFreeAsync(a, s1));
	CK(cuMemFreeAsync(b, s1));
	CK(cuDeviceSetMemPool(dev, dflt));
	CK(cuStreamSynchronize(s1));
	CK(cuMemPoolDestroy(pool));
	CK(cuStreamDestroy(s1));
}

static void vmm(CUdevice dev)
{
	CUmemAllocationProp prop = { 0 }, got;
	CUmemAccessDesc acc = { 0 };
	CUmemGenericAllocationHandle h, again;
	CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev };
	unsigned long long fl;
	CUdeviceptr r, minted;
	size_t g, f0;
	int n;

	printf("== vmm\n");
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location = loc;
	CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	printf("granularity: %zu MiB\n", g / (size_t)MiB);
	n = (int)(g / sizeof(float));
	f0 = free_mem();
	CK(cuMemAddressReserve(&r, 4 * g, 0, 0, 0));
	printf("reservation aligned: %s\n", yes(r % g == 0));
	CK(cuMemCreate(&h, g, &prop, 0));
	printf("creating %zu MiB takes at least that much: %s\n", g / (size_t)MiB,
	       yes(f0 - free_mem() >= g));
	CK(cuMemGetAllocationPropertiesFromHandle(&got, h));
	printf("properties: pinned %s, device %d\n",
	       yes(got.type == CU_MEM_ALLOCATION_TYPE_PINNED), got.location.id);

	CK(cuMemMap(r, g, 0, h, 0));
	CK(cuMemMap(r + 2 * g, g, 0, h, 0));
	acc.location = loc;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemSetAccess(r, g, &acc, 1));
	CK(cuMemSetAccess(r + 2 * g, g, &acc, 1));
	CK(cuMemGetAccess(&fl, &loc, r));
	printf("access read-write: %s\n", yes(fl == CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
	fill(r, 7.0f, n, NULL);
	CK(cuCtxSynchronize());
	check_floats(r + 2 * g, n, 7.0f, "written through one mapping, read through the other");
	CK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(r + 2 * g + 64)));
	printf("retained handle is the same: %s\n", yes(again == h));
	CK(cuMemRelease(again));

	CK(cuMemAlloc(&minted, 4096));
	printf("map outside a reservation refused: %s\n",
	       yes(cuMemMap(minted, g, 0, h, 0) != CUDA_SUCCESS));
	printf("map over a mapping refused: %s\n", yes(cuMemMap(r, g, 0, h, 0) != CUDA_SUCCESS));
	printf("map of half a granule refused: %s\n",
	       yes(cuMemMap(r + g, g / 2, 0, h, 0) != CUDA_SUCCESS));
	printf("map past the handle refused: %s\n",
	       yes(cuMemMap(r + g, 2 * g, 0, h, 0) != CUDA_SUCCESS));
	printf("create of a granule and a page refused: %s\n",
	       yes(cuMemCreate(&again, g + 4096, &prop, 0) != CUDA_SUCCESS));
	CK(cuMemFree(minted));

	/* Released while mapped: still there until the last unmap. */
	CK(cuMemRelease(h));
	check_floats(r, n, 7.0f, "released but mapped");
	CK(cuMemUnmap(r, g));
	check_floats(r + 2 * g, n, 7.0f, "one mapping left");
	CK(cuMemUnmap(r + 2 * g, g));
	CK(cuCtxSynchronize());
	/* Not cuMemGetInfo: free memory is the device's, which other
	 * processes (axond's workers starting, say) change at any time. */
	printf("all unmapped and released: nothing left at the addresses: %s\n",
	       yes(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)r) != CUDA_SUCCESS &&
		   cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(r + 2 * g)) !=
		   CUDA_SUCCESS));

	/* Two handles side by side, one kernel across both. */
	CK(cuMemCreate(&h, g, &prop, 0));
	CK(cuMemCreate(&again, g, &prop, 0));
	CK(cuMemMap(r, g, 0, h, 0));
	CK(cuMemMap(r + g, g, 0, again, 0));
	CK(cuMemSetAccess(r, 2 * g, &acc, 1));
	fill(r, 9.0f, 2 * n, NULL);
	CK(cuCtxSynchronize());
	check_floats(r, 2 * n, 9.0f, "kernel across two adjacent mappings");
	CK(cuMemUnmap(r, 2 * g));
	CK(cuMemRelease(h));
	CK(cuMemRelease(again));
	CK(cuMemAddressFree(r, 4 * g));
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	char name[256];
	int a = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s MODULE-IMAGE\n", argv[0]);
		return 2;
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	fprintf(stderr, "device: %s\n", name);
	CK(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
	printf("memory pools supported: %d\n", a);
	CK(cuDeviceGetAttribute(&a, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev));
	printf("VMM supported: %d\n", a);
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	{
		FILE *fp = fopen(argv[1], "rb");
		long len;
		char *img;

		if (!fp) {
			perror(argv[1]);
			return 2;
		}
		fseek(fp, 0, SEEK_END);
		len = ftell(fp);
		rewind(fp);
		img = calloc(1, (size_t)len + 1);
		if (!img || fread(img, 1, (size_t)len, fp) != (size_t)len) {
			fprintf(stderr, "cannot read %s\n", argv[1]);
			return 2;
		}
		fclose(fp);
		CK(cuModuleLoadData(&mod, img));
		free(img);
	}
	CK(cuModuleGetFunction(&fill_fn, mod, "fill"));
	pools(dev);
	vmm(dev);
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	printf("drv-mem: ok\n");
	return 0;
}
