// SPDX-License-Identifier: MIT
/*
 * Device memory, Minted: cuMemAlloc picks the address itself from the
 * client's window and tells the daemon with a deferred MEM_MAP while it has
 * credit (no crossing to wait for); past the credit it asks synchronously
 * and gets new credit back. cuMemFree is a deferred MEM_UNMAP.
 */
#include <errno.h>

#include "shim.h"

static CUresult mem_alloc(CUdeviceptr *dptr, uint64_t size)
{
	struct shim_waiter w = { 0 };
	struct shim_ctx *sc;
	struct axon_sqe *sqe;
	uint64_t addr, rounded;
	CUresult r;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_capture_unsafe();	/* not replayed by a graph */
	if (r)
		return r;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	rounded = (size + AXON_MINT_ALIGN - 1) & ~(uint64_t)(AXON_MINT_ALIGN - 1);
	if (rounded < size)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	if (vaalloc_alloc(&shim.va, rounded, AXON_MINT_ALIGN, &addr)) {
		shim_unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	sqe = shim_sqe();
	if (!sqe) {
		vaalloc_free(&shim.va, addr);
		shim_unlock();
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	}
	axon_prep_mem(sqe, AXON_OP_MEM_MAP, sc->handle, addr, rounded);
	if (rounded <= shim.credit) {
		sqe->flags = AXON_SQE_F_DEFERRED;
		shim.credit -= rounded;
		shim_flush();
		shim_unlock();
		*dptr = addr;
		return CUDA_SUCCESS;
	}
	r = shim_sync_op(sqe, &w);
	if (r) {
		vaalloc_free(&shim.va, addr);
	} else {
		shim.credit = w.aux[0];
		*dptr = addr;
	}
	shim_unlock();
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
	struct axon_sqe *sqe;
	CUresult r;

	if (!dptr)
		return CUDA_SUCCESS;
	r = shim_capture_unsafe();	/* not replayed by a graph */
	if (r)
		return r;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	shim_lock();
	if (vaalloc_free(&shim.va, dptr) < 0) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_mem(sqe, AXON_OP_MEM_UNMAP, sc->handle, dptr, 0);
		sqe->flags = AXON_SQE_F_DEFERRED;
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : CUDA_ERROR_DEVICE_UNAVAILABLE;
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
	r = shim_call_obj(AXON_OP_MEM_GET_INFO, 0, (uint64_t)sc->device, 0, &w);
	if (!r) {
		*free_bytes = w.aux[0];
		*total = w.aux[1];
	}
	return r;
}

SHIM_EXPORT CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	uint64_t base, size;
	int ret;

	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	ret = vaalloc_lookup(&shim.va, dptr, &base, &size);
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

/* Pointer attributes of minted memory, answered locally. */
static CUresult pointer_attr(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
	struct shim_ctx *sc;
	uint64_t base, size;
	int ret;

	shim_lock();
	ret = vaalloc_lookup(&shim.va, ptr, &base, &size);
	shim_unlock();
	if (ret)
		return CUDA_ERROR_INVALID_VALUE;
	sc = shim_current_ctx();
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
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
		*(int *)data = sc ? sc->device : 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = size;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = base;
		break;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		*(int *)data = 1;
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
