// SPDX-License-Identifier: MIT
/*
 * Device memory, Minted: cuMemAlloc picks the address itself from the
 * client's window and tells the daemon with a deferred MEM_MAP while it has
 * credit (no crossing to wait for); past the credit it asks synchronously
 * and gets new credit back. The daemon charges by the granules a mint
 * backs that no allocation of ours backs already, so a mint spends of the
 * credit the granules it touches, less the one the last mint ended in
 * (never less than the daemon will take). cuMemFree is a deferred
 * MEM_UNMAP. Memory
 * pools (mempool.c) mint through the same path; cuMemMap'd ranges (vmm.c)
 * answer cuMemGetAddressRange and pointer attributes here too.
 */
#include <errno.h>

#include "shim.h"

static uint64_t mint_gran(void)
{
	uint64_t g = shim.ring.info->device[0].vmm_granularity;

	return g && !(g & (g - 1)) ? g : 2ULL << 20;
}

/* At most what the daemon charges for minting [addr, addr + len). */
static uint64_t mint_cost(uint64_t addr, uint64_t len)
{
	uint64_t g = mint_gran(), first = addr / g, last = (addr + len - 1) / g;
	uint64_t n = last - first + 1;

	if (shim.credit_gran == first + 1)
		n--;
	return n > UINT64_MAX / g ? UINT64_MAX : n * g;
}

CUresult shim_mint_locked(uint64_t ctx, uint64_t rounded, uint64_t *out)
{
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe;
	uint64_t addr, cost;
	CUresult r;

	if (vaalloc_alloc(&shim.va, rounded, AXON_MINT_ALIGN, &addr))
		return CUDA_ERROR_OUT_OF_MEMORY;
	cost = mint_cost(addr, rounded);
	sqe = shim_sqe();
	if (!sqe) {
		vaalloc_free(&shim.va, addr);
		return shim_gone_error();
	}
	axon_prep_mem_map(sqe, ctx, addr, rounded, 0, 0);
	if (cost <= shim.credit) {
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim.credit -= cost;
		shim_flush();
		shim.credit_gran = (addr + rounded - 1) / mint_gran() + 1;
		*out = addr;
		return CUDA_SUCCESS;
	}
	r = shim_sync_op(sqe, &w);
	if (r) {
		vaalloc_free(&shim.va, addr);
	} else {
		shim.credit = w.aux[0];
		shim.credit_gran = (addr + rounded - 1) / mint_gran() + 1;
		*out = addr;
	}
	return r;
}

CUresult shim_unmint_locked(uint64_t ctx, uint64_t addr)
{
	struct axon_sqe *sqe;
	int64_t len = vaalloc_free(&shim.va, addr);
	uint64_t g = mint_gran();

	if (len < 0)
		return CUDA_ERROR_INVALID_VALUE;
	/* The granule the last mint ended in may be left with nothing. */
	if (shim.credit_gran && addr / g < shim.credit_gran &&
	    (addr + (uint64_t)len - 1) / g + 1 >= shim.credit_gran)
		shim.credit_gran = 0;
	sqe = shim_sqe();
	if (!sqe)
		return shim_gone_error();
	axon_prep_mem_unmap(sqe, ctx, addr);
	axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
	shim_flush();
	return CUDA_SUCCESS;
}

/* The current context, for an allocation or free: neither is replayed by
 * a graph, so a capture refuses them. */
static CUresult uncaptured_ctx(struct shim_ctx **sc)
{
	CUresult r = shim_capture_unsafe();

	return r ? r : shim_get_ctx(sc);
}

static CUresult mem_alloc(CUdeviceptr *dptr, uint64_t size)
{
	struct shim_ctx *sc;
	uint64_t addr, rounded;
	CUresult r;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	r = uncaptured_ctx(&sc);
	if (r)
		return r;
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	rounded = (size + AXON_MINT_ALIGN - 1) & ~(uint64_t)(AXON_MINT_ALIGN - 1);
	if (rounded < size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	r = shim_mint_locked(sc->handle, rounded, &addr);
	shim_unlock();
	if (!r)
		*dptr = addr;
	return r;
}

SHIM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return mem_alloc(dptr, bytesize);
}

SHIM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width,
					size_t height, unsigned int elemSize)
{
	size_t p;

	if (!pitch || !width || !height ||
	    (elemSize != 4 && elemSize != 8 && elemSize != 16))
		return CUDA_ERROR_INVALID_VALUE;
	p = (width + 511) & ~(size_t)511;	/* texture pitch alignment */
	if (p / 512 > SIZE_MAX / 512 / height)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pitch = p;
	return mem_alloc(dptr, (uint64_t)p * height);
}

SHIM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	struct shim_ctx *sc;
	CUresult r;

	if (!dptr)
		return CUDA_SUCCESS;
	r = uncaptured_ctx(&sc);
	if (r)
		return r;
	shim_lock();
	if (shim_vmm_reserved(dptr)) {
		/* A cuMemAddressReserve range goes with cuMemAddressFree. */
		r = CUDA_ERROR_INVALID_VALUE;
	} else if (shim_mempool_owns(dptr, NULL)) {
		/* cuMemAllocAsync memory freed synchronously: back to the
		 * device, in order after the work queued before. */
		r = shim_mempool_release_locked(dptr);
	} else {
		r = shim_unmint_locked(sc->handle, dptr);
	}
	shim_unlock();
	return r;
}

SHIM_EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	struct shim_waiter w = { 0 };
	struct shim_ctx *sc;
	CUresult r;

	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	r = shim_call(&w, axon_prep_mem_get_info, (uint64_t)sc->device);
	if (!r) {
		*free_bytes = w.aux[0];
		*total = w.aux[1];
	}
	return r;
}

/*
 * The allocation holding ptr: a cuMemMap'd range (vmm.c), or minted memory
 * (cuMemAlloc, pools) from the minting allocator. An address reserved with
 * cuMemAddressReserve but not mapped is no allocation. Lock held.
 */
static int find_alloc(uint64_t ptr, uint64_t *base, uint64_t *size,
		      const struct shim_vmm_info **vmm)
{
	int ret = shim_vmm_lookup(ptr, base, size, vmm);

	if (ret > 0)
		return 0;
	if (ret < 0)
		return -1;
	*vmm = NULL;
	return vaalloc_lookup(&shim.va, ptr, base, size) ? -1 : 0;
}

SHIM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	const struct shim_vmm_info *vmm;
	uint64_t base, size;
	int ret;

	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	ret = find_alloc(dptr, &base, &size, &vmm);
	shim_unlock();
	if (ret)
		return CUDA_ERROR_NOT_FOUND;
	SHIM_LOCAL();
	if (pbase)
		*pbase = base;
	if (psize)
		*psize = size;
	return CUDA_SUCCESS;
}

/* Pointer attributes of minted and mapped memory, answered locally. */
static CUresult pointer_attr(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
	const struct shim_vmm_info *vmm;
	CUmemoryPool pool = NULL;
	struct shim_ctx *sc;
	uint64_t base, size;
	int ret;

	shim_lock();
	ret = find_alloc(ptr, &base, &size, &vmm);
	if (!ret && !vmm)
		shim_mempool_owns(base, &pool);
	shim_unlock();
	if (ret)	/* not device memory: maybe page-locked host memory */
		return shim_hostmem_pointer_attr(data, attr, ptr);
	sc = shim_current_ctx();
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		/* cuMemMap'd memory belongs to no context. */
		if (vmm)
			*(CUcontext *)data = NULL;
		else
			*(CUcontext *)data = sc ? (CUcontext)(uintptr_t)sc->handle : NULL;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = ptr;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		return CUDA_ERROR_INVALID_VALUE;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		*(int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(int *)data = 1;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = vmm ? vmm->device : sc ? sc->device : 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
	case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
		*(CUdeviceptr *)data = base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
	case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
		*(size_t *)data = size;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = base;
		break;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		*(int *)data = 1;
		break;
	case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
		*(CUmemoryPool *)data = pool;
		break;
	case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
		*(unsigned long long *)data = vmm ? vmm->handle_types : 0;
		break;
	case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
		*(unsigned int *)data = vmm ? vmm->access : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
		break;
	case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
		*(int *)data = 0;
		break;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	return pointer_attr(data, attr, ptr);
}

SHIM_EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs,
					    void **data, CUdeviceptr ptr)
{
	unsigned int i;

	if (!attrs || !data)
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	for (i = 0; i < n; i++) {
		/* Unlike the single form, unknown pointers read as zeros. */
		if (pointer_attr(data[i], attrs[i], ptr) != CUDA_SUCCESS && data[i])
			*(unsigned int *)data[i] = 0;
	}
	return CUDA_SUCCESS;
}
