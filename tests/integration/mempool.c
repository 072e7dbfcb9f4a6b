// SPDX-License-Identifier: MIT
/*
 * mempool - stream-ordered allocation through axon's shim: cuMemAllocAsync
 * and cuMemFreeAsync order and reuse (same stream at once, another stream
 * only once the free is reached), data written in stream order, pool
 * attributes and their high-water marks, the release threshold at
 * synchronisation, cuMemPoolTrimTo, created pools, cuDeviceSetMemPool,
 * destroying a pool with an allocation outstanding, pointer attributes and
 * cuMemGetInfo, and the errors. Needs no kernel image.
 *
 *   mempool           alone on the daemon: cuMemGetInfo checked exactly
 *   mempool shared    with other clients: cuMemGetInfo not checked
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuclient.h"

#define MiB (1024 * 1024ULL)

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

/* cuMemGetInfo is exact only while no other client allocates. */
static int alone = 1;

#define WANT_INFO(cond) WANT(!alone || (cond))

static size_t free_mem(void)
{
	size_t f, t;

	CK(cuMemGetInfo(&f, &t));
	return f;
}

#define WANT(cond)							\
	do {								\
		if (!(cond))						\
			cu_fail("%s:%d: %s", __FILE__, __LINE__, #cond); \
	} while (0)

/* Checks that [p, p+n) reads back as 32-bit words of v. */
static void check_words(CUdeviceptr p, size_t n, uint32_t v)
{
	uint32_t *h = malloc(n);
	size_t i;

	WANT(h);
	CK(cuMemcpyDtoH(h, p, n));
	for (i = 0; i < n / 4; i++)
		if (h[i] != v)
			cu_fail("word %zu of 0x%llx is 0x%x, expected 0x%x", i,
				(unsigned long long)p, h[i], v);
	free(h);
}

static void reuse_and_order(CUmemoryPool dflt, CUstream s1, CUstream s2)
{
	CUdeviceptr a, b, c, d, big;
	int zero = 0, one = 1, i;

	/* Same stream: the freed block comes back at once, no sync. */
	CK(cuMemAllocAsync(&a, MiB, s1));
	CK(cuMemsetD32Async(a, 7, MiB / 4, s1));
	CK(cuMemFreeAsync(a, s1));
	CK(cuMemAllocAsync(&b, MiB, s1));
	WANT(b == a);
	CK(cuMemsetD32Async(b, 9, MiB / 4, s1));
	CK(cuStreamSynchronize(s1));
	check_words(b, MiB, 9);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == MiB);

	/* Keep freed memory across synchronisation for the next part. */
	set_attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, UINT64_MAX);

	/* Another stream: not before the free is reached... */
	CK(cuMemAllocAsync(&big, 256 * MiB, s1));
	for (i = 0; i < 16; i++)
		CK(cuMemsetD32Async(big, (unsigned int)i, 64 * MiB, s1));
	CK(cuMemFreeAsync(b, s1));
	CK(cuMemAllocAsync(&c, MiB, s2));
	WANT(c != b);
	CK(cuMemFreeAsync(c, s2));
	/* ...but once it is: s2 gets both blocks back, its own and s1's. */
	CK(cuStreamSynchronize(s1));
	CK(cuMemAllocAsync(&a, MiB, s2));
	CK(cuMemAllocAsync(&d, MiB, s2));
	WANT((a == b && d == c) || (a == c && d == b));
	CK(cuMemFreeAsync(a, s2));
	CK(cuMemFreeAsync(d, s2));
	CK(cuStreamSynchronize(s2));

	/* Opportunistic reuse off: another stream never takes it. */
	CK(cuMemPoolSetAttribute(dflt, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &zero));
	CK(cuMemAllocAsync(&a, 4 * MiB, s1));
	CK(cuMemFreeAsync(a, s1));
	CK(cuStreamSynchronize(s1));
	CK(cuMemAllocAsync(&c, 4 * MiB, s2));
	WANT(c != a);
	CK(cuMemPoolSetAttribute(dflt, CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, &one));
	CK(cuMemAllocAsync(&b, 4 * MiB, s2));
	WANT(b == a);	/* reached, and allowed again */
	CK(cuMemFreeAsync(b, s2));
	CK(cuMemFreeAsync(c, s2));
	CK(cuMemFreeAsync(big, s1));
	CK(cuCtxSynchronize());
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
}

static void attributes_and_release(CUmemoryPool dflt, CUstream s1)
{
	cuuint64_t reserved, high;
	CUdeviceptr a, b;
	size_t f0;
	int v;

	CK(cuMemPoolTrimTo(dflt, 0));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
	high = attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH);
	WANT(high >= 256 * MiB);
	set_attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0);
	set_attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 0);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);
	{
		cuuint64_t bad = 5;

		EXPECT(cuMemPoolSetAttribute(dflt, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &bad),
		       CUDA_ERROR_INVALID_VALUE);
		EXPECT(cuMemPoolSetAttribute(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &bad),
		       CUDA_ERROR_INVALID_VALUE);
	}
	CK(cuMemPoolGetAttribute(dflt, CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, &v));
	WANT(v == 1);

	/* Pool memory is used memory for cuMemGetInfo. */
	f0 = free_mem();
	CK(cuMemAllocAsync(&a, 8 * MiB, s1));
	CK(cuMemAllocAsync(&b, 2 * MiB, s1));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 10 * MiB);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 10 * MiB);
	WANT_INFO(f0 - free_mem() == 10 * MiB);
	CK(cuMemFreeAsync(a, s1));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 2 * MiB);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 10 * MiB);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 10 * MiB);

	/* Threshold 4 MiB: synchronising gives back what is above it. */
	set_attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 4 * MiB);
	CK(cuStreamSynchronize(s1));
	reserved = attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT);
	WANT(reserved == 2 * MiB);
	WANT_INFO(f0 - free_mem() == 2 * MiB);

	/* Threshold 0 (the default): everything unused goes at a sync. */
	CK(cuMemFreeAsync(b, s1));
	set_attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);
	CK(cuCtxSynchronize());
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
	WANT_INFO(free_mem() == f0);

	/* cuMemPoolTrimTo keeps what it is told to. */
	set_attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, UINT64_MAX);
	CK(cuMemAllocAsync(&a, 2 * MiB, s1));
	CK(cuMemAllocAsync(&b, 2 * MiB, s1));
	CK(cuMemFreeAsync(a, s1));
	CK(cuMemFreeAsync(b, s1));
	CK(cuStreamSynchronize(s1));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 4 * MiB);
	CK(cuMemPoolTrimTo(dflt, 3 * MiB));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 2 * MiB);
	CK(cuMemPoolTrimTo(dflt, 0));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
	set_attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, 0);
}

static void created_pools(CUdevice dev, CUmemoryPool dflt, CUstream s1)
{
	CUmemPoolProps props = { 0 };
	CUmemAccessDesc acc = { 0 };
	CUmemLocation loc = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev };
	CUmemAccess_flags fl;
	CUmemoryPool pool, cur, got;
	CUdeviceptr a, b, base;
	size_t size;

	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location = loc;
	CK(cuMemPoolCreate(&pool, &props));
	WANT(pool != dflt);
	CK(cuMemAllocFromPoolAsync(&a, 3 * MiB, pool, s1));
	WANT(attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 3 * MiB);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);

	/* Pointer attributes and address range of pool memory. */
	CK(cuPointerGetAttribute(&got, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, a + 100));
	WANT(got == pool);
	CK(cuMemGetAddressRange(&base, &size, a + 100));
	WANT(base == a && size == 3 * MiB);

	/* The device's current pool serves cuMemAllocAsync. */
	CK(cuDeviceSetMemPool(dev, pool));
	CK(cuDeviceGetMemPool(&cur, dev));
	WANT(cur == pool);
	CK(cuMemGetMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	WANT(cur == pool);
	CK(cuMemGetDefaultMemPool(&cur, &loc, CU_MEM_ALLOCATION_TYPE_PINNED));
	WANT(cur == dflt);
	CK(cuMemAllocAsync(&b, MiB, s1));
	WANT(attr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 4 * MiB);
	CK(cuMemSetMemPool(&loc, CU_MEM_ALLOCATION_TYPE_PINNED, dflt));
	CK(cuDeviceGetMemPool(&cur, dev));
	WANT(cur == dflt);

	/* Access: one device, read-write; anything else for it is refused. */
	acc.location = loc;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	CK(cuMemPoolSetAccess(pool, &acc, 1));
	CK(cuMemPoolGetAccess(&fl, pool, &loc));
	WANT(fl == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
	EXPECT(cuMemPoolSetAccess(pool, &acc, 1), CUDA_ERROR_INVALID_DEVICE);

	/* Destroyed with allocations outstanding: they stay usable and go
	 * when freed. */
	CK(cuMemFreeAsync(b, s1));
	CK(cuMemPoolDestroy(pool));
	EXPECT(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &size),
	       CUDA_ERROR_INVALID_VALUE);
	CK(cuMemsetD32Async(a, 5, 3 * MiB / 4, s1));
	CK(cuStreamSynchronize(s1));
	check_words(a, 3 * MiB, 5);
	CK(cuMemFreeAsync(a, s1));
	CK(cuStreamSynchronize(s1));

	/* cuMemFree of pool memory gives it back at once. */
	CK(cuMemAllocAsync(&a, MiB, s1));
	CK(cuMemFree(a));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
}

static void errors(CUdevice dev, CUmemoryPool dflt, CUstream s1)
{
	CUmemPoolProps props = { 0 };
	CUmemLocation host = { .type = CU_MEM_LOCATION_TYPE_HOST };
	CUmemPoolPtrExportData ex;
	CUmemoryPool pool;
	CUdeviceptr a;
	int fd = -1;

	CK(cuMemAllocAsync(&a, MiB, s1));
	CK(cuMemFreeAsync(a, s1));
	EXPECT(cuMemFreeAsync(a, s1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAllocAsync(&a, 0, s1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAllocAsync(NULL, 16, s1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemPoolDestroy(dflt), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAllocFromPoolAsync(&a, 16, (CUmemoryPool)(uintptr_t)0x1234, s1),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuDeviceGetDefaultMemPool(&pool, 99), CUDA_ERROR_INVALID_DEVICE);
	props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	props.location.id = dev;
	props.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	EXPECT(cuMemPoolCreate(&pool, &props), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(cuMemPoolExportToShareableHandle(&fd, dflt,
						CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
	       CUDA_ERROR_NOT_SUPPORTED);
	CK(cuMemAllocAsync(&a, MiB, s1));
	EXPECT(cuMemPoolExportPointer(&ex, a), CUDA_ERROR_NOT_SUPPORTED);
	CK(cuMemFreeAsync(a, s1));
	EXPECT(cuMemGetMemPool(&pool, &host, CU_MEM_ALLOCATION_TYPE_PINNED),
	       CUDA_ERROR_NOT_SUPPORTED);
	CK(cuStreamSynchronize(s1));
}

int main(int argc, char **argv)
{
	CUmemoryPool dflt, cur;
	CUstream s1, s2;
	CUcontext ctx;
	CUdevice dev;
	int pools = 0;

	cu_prog = "mempool";
	/* "shared": another client runs at the same time. */
	alone = !(argc > 1 && !strcmp(argv[1], "shared"));
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev));
	WANT(pools == 1);
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	CK(cuDeviceGetDefaultMemPool(&dflt, dev));
	CK(cuDeviceGetMemPool(&cur, dev));
	WANT(cur == dflt);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 0);
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);

	reuse_and_order(dflt, s1, s2);
	attributes_and_release(dflt, s1);
	created_pools(dev, dflt, s1);
	errors(dev, dflt, s1);

	CK(cuMemPoolTrimTo(dflt, 0));
	WANT(attr(dflt, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
	CK(cuStreamDestroy(s1));
	CK(cuStreamDestroy(s2));
	CK(cuDevicePrimaryCtxRelease(dev));
	printf("mempool: ok\n");
	return 0;
}
