// SPDX-License-Identifier: MIT
/*
 * vmm - the virtual memory management API through axon's shim:
 * granularity, reserve, create, map one handle at two addresses (a write
 * through one mapping is read through the other), access flags, retain,
 * properties, pointer attributes and address ranges, cuMemGetInfo charged
 * at create and given back after the last unmap and release (in either
 * order), a copy spanning two adjacent mappings, remapping addresses just
 * unmapped, and the errors: an unreserved range, a double map, sizes and
 * offsets off the granularity, a made-up handle, cuMemFree of a
 * reservation, freeing a reservation still mapped.
 *
 *   vmm           run everything, clean up, print "vmm: ok"
 *   vmm hold      reserve, create and map, print "vmm: holding", then wait
 *                 to be killed, never releasing anything
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuclient.h"

#define MiB (1024 * 1024ULL)

#define WANT(cond)							\
	do {								\
		if (!(cond))						\
			cu_fail("%s:%d: %s", __FILE__, __LINE__, #cond); \
	} while (0)

static CUmemAllocationProp prop;

static size_t free_mem(void)
{
	size_t f, t;

	CK(cuMemGetInfo(&f, &t));
	return f;
}

static void fill(uint32_t *h, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n / 4; i++)
		h[i] = seed + (uint32_t)i;
}

static void check_fill(const uint32_t *h, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n / 4; i++)
		if (h[i] != seed + (uint32_t)i)
			cu_fail("word %zu is 0x%x, expected 0x%x", i, h[i],
				seed + (uint32_t)i);
}

static void granularity(size_t *g)
{
	CUmemAllocationProp bad = prop;
	size_t rec;

	CK(cuMemGetAllocationGranularity(g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	CK(cuMemGetAllocationGranularity(&rec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
	WANT(*g == 2 * MiB && rec >= *g);
	bad.location.id = 99;
	EXPECT(cuMemGetAllocationGranularity(&rec, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
	       CUDA_ERROR_INVALID_DEVICE);
	bad = prop;
	bad.type = CU_MEM_ALLOCATION_TYPE_INVALID;
	EXPECT(cuMemGetAllocationGranularity(&rec, &bad, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
	       CUDA_ERROR_INVALID_VALUE);
}

static void alias_and_errors(size_t g)
{
	const size_t n = g;
	uint32_t *h = malloc(n), *back = malloc(n);
	CUmemLocation loc = prop.location;
	CUmemGenericAllocationHandle mh, again;
	CUmemAllocationProp got;
	CUmemAccessDesc acc = { .location = prop.location,
				.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE };
	CUdeviceptr r, other, base, minted;
	unsigned long long flags;
	size_t f0, size;
	unsigned int ui;

	WANT(h && back);
	f0 = free_mem();
	CK(cuMemAddressReserve(&r, 4 * g, 0, 0, 0));
	WANT(r % g == 0);
	WANT(free_mem() == f0);	/* addresses cost no memory */
	CK(cuMemCreate(&mh, g, &prop, 0));
	WANT(f0 - free_mem() == g);	/* charged when created */
	CK(cuMemGetAllocationPropertiesFromHandle(&got, mh));
	WANT(got.type == prop.type && got.location.id == prop.location.id);

	/* One handle at two addresses: the same memory. */
	CK(cuMemMap(r, g, 0, mh, 0));
	CK(cuMemMap(r + 2 * g, g, 0, mh, 0));
	CK(cuMemSetAccess(r, g, &acc, 1));
	CK(cuMemSetAccess(r + 2 * g, g, &acc, 1));
	CK(cuMemGetAccess(&flags, &loc, r));
	WANT(flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	WANT(f0 - free_mem() == g);	/* mapping charges nothing more */
	fill(h, n, 0x1000);
	CK(cuMemcpyHtoD(r, h, n));
	CK(cuMemcpyDtoH(back, r + 2 * g, n));
	check_fill(back, n, 0x1000);
	CK(cuMemsetD32(r + 2 * g + 64, 0xabcdef01, 4));
	CK(cuMemcpyDtoH(back, r, 128));
	WANT(back[15] == 0x1000 + 15 && back[16] == 0xabcdef01 && back[19] == 0xabcdef01 &&
	     back[20] == 0x1000 + 20);

	/* Pointer attributes and the address range are the mapping's. */
	CK(cuMemGetAddressRange(&base, &size, r + 2 * g + 5));
	WANT(base == r + 2 * g && size == g);
	CK(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, r + 77));
	WANT(base == r);
	CK(cuPointerGetAttribute(&ui, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, r + 77));
	WANT(ui == CU_MEMORYTYPE_DEVICE);
	EXPECT(cuMemGetAddressRange(&base, &size, r + g + 5), CUDA_ERROR_NOT_FOUND);
	EXPECT(cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, r + g),
	       CUDA_ERROR_INVALID_VALUE);

	/* Retain gives the same handle, one more reference. */
	CK(cuMemRetainAllocationHandle(&again, (void *)(uintptr_t)(r + 2 * g + 100)));
	WANT(again == mh);
	CK(cuMemRelease(again));

	/* Errors. */
	CK(cuMemAlloc(&minted, 4096));
	EXPECT(cuMemMap(minted, g, 0, mh, 0), CUDA_ERROR_INVALID_VALUE);	/* not reserved */
	EXPECT(cuMemMap(r + 8 * g, g, 0, mh, 0), CUDA_ERROR_INVALID_VALUE);	/* outside */
	EXPECT(cuMemMap(r, g, 0, mh, 0), CUDA_ERROR_INVALID_VALUE);		/* mapped */
	EXPECT(cuMemMap(r + g, g / 2, 0, mh, 0), CUDA_ERROR_INVALID_VALUE);	/* size */
	EXPECT(cuMemMap(r + g, g, g / 2, mh, 0), CUDA_ERROR_INVALID_VALUE);	/* offset */
	EXPECT(cuMemMap(r + g, 2 * g, 0, mh, 0), CUDA_ERROR_INVALID_VALUE);	/* > handle */
	EXPECT(cuMemMap(r + g, g, 0, mh ^ 0x40000000ULL, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&again, g + 4096, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressReserve(&other, g + 4096, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemFree(r), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressFree(r, 4 * g), CUDA_ERROR_INVALID_VALUE);	/* mapped */
	EXPECT(cuMemUnmap(r, 2 * g), CUDA_ERROR_INVALID_VALUE);	/* not whole mappings */
	EXPECT(cuMemRelease(mh ^ 0x40000000ULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemExportToShareableHandle(&ui, mh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
	       CUDA_ERROR_NOT_SUPPORTED);
	CK(cuMemFree(minted));

	/* Release before unmap: the memory stays while mapped. */
	CK(cuMemRelease(mh));
	EXPECT(cuMemRelease(mh), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemGetAllocationPropertiesFromHandle(&got, mh), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(r + g, g, 0, mh, 0), CUDA_ERROR_INVALID_VALUE);
	CK(cuMemcpyDtoH(back, r + 2 * g, n));
	WANT(back[0] == 0x1000 && back[16] == 0xabcdef01);
	CK(cuMemUnmap(r, g));
	CK(cuCtxSynchronize());
	WANT(f0 - free_mem() == g);	/* one mapping left */
	CK(cuMemcpyDtoH(back, r + 2 * g, n));
	WANT(back[0] == 0x1000);
	CK(cuMemUnmap(r + 2 * g, g));
	CK(cuCtxSynchronize());
	WANT(free_mem() == f0);		/* last mapping gone: freed */

	/* Unmap before release; remap the addresses at once (the shim waits
	 * for the daemon's unmap when it must). */
	CK(cuMemCreate(&mh, 2 * g, &prop, 0));
	CK(cuMemMap(r, 2 * g, 0, mh, 0));
	CK(cuMemUnmap(r, 2 * g));
	CK(cuMemMap(r, g, g, mh, 0));
	CK(cuMemMap(r + g, g, 0, mh, 0));
	/* A copy across two adjacent mappings. */
	fill(h, n, 0x5000);
	CK(cuMemcpyHtoD(r + g / 2, h, n));
	CK(cuMemcpyDtoH(back, r + g / 2, n));
	check_fill(back, n, 0x5000);
	CK(cuMemUnmap(r, 2 * g));
	WANT(f0 - free_mem() == 2 * g);	/* unmapped, not released */
	CK(cuMemRelease(mh));
	CK(cuCtxSynchronize());
	WANT(free_mem() == f0);
	CK(cuMemAddressFree(r, 4 * g));
	EXPECT(cuMemAddressFree(r, 4 * g), CUDA_ERROR_INVALID_VALUE);
	free(h);
	free(back);
}

int main(int argc, char **argv)
{
	CUmemGenericAllocationHandle mh;
	CUcontext ctx;
	CUdevice dev;
	CUdeviceptr r;
	size_t g;
	int vmm = 0;

	cu_prog = "vmm";
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
				dev));
	WANT(vmm == 1);
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = dev;
	granularity(&g);

	if (argc >= 2 && !strcmp(argv[1], "hold")) {
		CK(cuMemAddressReserve(&r, 4 * g, 0, 0, 0));
		CK(cuMemCreate(&mh, 2 * g, &prop, 0));
		CK(cuMemMap(r, 2 * g, 0, mh, 0));
		CK(cuMemMap(r + 2 * g, g, g, mh, 0));
		CK(cuMemCreate(&mh, g, &prop, 0));	/* never mapped */
		CK(cuMemsetD8(r, 1, 3 * g));
		CK(cuMemUnmap(r + 2 * g, g));		/* its unmap pending */
		printf("vmm: holding\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	alias_and_errors(g);
	CK(cuDevicePrimaryCtxRelease(dev));
	printf("vmm: ok\n");
	return 0;
}
