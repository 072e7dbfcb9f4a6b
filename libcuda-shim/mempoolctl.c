// SPDX-License-Identifier: MIT
/*
 * The calls on memory pools themselves: the device's default and current
 * pool (cuDeviceGet{Default,}MemPool, cuDeviceSetMemPool and their
 * cuMem{Get,Set}[Default]MemPool forms by location), cuMemPoolCreate,
 * cuMemPoolDestroy, cuMemPoolTrimTo, attributes and access. The pools, their
 * blocks and the allocations from them are mempool.c's (mempool.h).
 * Sharing pools between processes is refused with NOT_SUPPORTED and a log
 * line.
 */
#include <string.h>

#include "mempool.h"

/* The device's default pool (dflt) or its current one, made on first use. */
static CUresult device_pool(CUmemoryPool *out, CUdevice dev, bool dflt)
{
	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	if (!shim_mp_device_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	*out = (CUmemoryPool)(dflt ? shim_mp_default_pool(dev) : shim_mp_current_pool(dev));
	shim_unlock();
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

SHIM_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	return device_pool(pool_out, dev, true);
}

SHIM_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	return device_pool(pool, dev, false);
}

static CUresult device_set_pool(CUdevice dev, CUmemoryPool pool)
{
	struct mpool *p;

	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!shim_mp_device_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	p = shim_mp_pool_of(pool);
	if (p && p->device == dev)
		shim_mp.current[dev] = p;
	shim_unlock();
	return p && p->device == dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SHIM_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	return device_set_pool(dev, pool);
}

/* The location and type cuMem{Get,Set}[Default]MemPool and cuMemPoolCreate
 * name: device pinned memory only. */
static CUresult location_dev(const CUmemLocation *loc, CUmemAllocationType type, int *dev)
{
	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!loc)
		return CUDA_ERROR_INVALID_VALUE;
	if (type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return loc->type == CU_MEM_LOCATION_TYPE_HOST ||
		       loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
		       type == CU_MEM_ALLOCATION_TYPE_MANAGED
		       ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
	if (!shim_mp_device_ok(loc->id))
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = loc->id;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
					    CUmemAllocationType type)
{
	int dev;
	CUresult r = location_dev(location, type, &dev);

	return r ? r : device_pool(pool_out, dev, true);
}

SHIM_EXPORT CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
				     CUmemAllocationType type)
{
	int dev;
	CUresult r = location_dev(location, type, &dev);

	return r ? r : device_pool(pool, dev, false);
}

SHIM_EXPORT CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
				     CUmemoryPool pool)
{
	int dev;
	CUresult r = location_dev(location, type, &dev);

	return r ? r : device_set_pool(dev, pool);
}

SHIM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	static const unsigned char zero[sizeof(props->reserved)];
	struct mpool *p;
	CUresult r;
	int dev;

	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool || !props || props->win32SecurityAttributes ||
	    memcmp(props->reserved, zero, sizeof(zero)))
		return CUDA_ERROR_INVALID_VALUE;
	r = location_dev(&props->location, props->allocType, &dev);
	if (r)
		return r;
	if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE) {
		shim_log("cuMemPoolCreate: pools shareable between processes (handle type "
			 "0x%x) are not supported", (unsigned int)props->handleTypes);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (props->usage & CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS)
		return CUDA_ERROR_NOT_SUPPORTED;
	shim_lock();
	shim_mp_init();
	p = shim_mp_pool_new(dev);
	if (p)
		p->props = *props;
	shim_unlock();
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pool = (CUmemoryPool)p;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool)
{
	struct mpool *p;
	int dev;

	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	p = shim_mp_pool_of(pool);
	if (!p || p == shim_mp.dflt[p->device]) {
		/* A default pool cannot be destroyed. */
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* The device's current pool becomes its default again. */
	for (dev = 0; dev < AXON_MAX_DEVICES; dev++)
		if (shim_mp.current[dev] == p)
			shim_mp.current[dev] = NULL;
	shim_mp_pool_trim(p, 0);
	/* Blocks still allocated go when they are freed (block_release),
	 * and the pool with the last of them. */
	if (p->nblocks)
		p->destroyed = true;
	else
		shim_mp_pool_unlink(p);
	shim_unlock();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	struct mpool *p;

	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	p = shim_mp_pool_of(pool);
	if (p)
		shim_mp_pool_trim(p, minBytesToKeep);
	shim_unlock();
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The pool an attribute call names, with the shim lock taken; NULL (the
 * lock not taken) with the error in *r. */
static struct mpool *attr_pool(CUmemoryPool pool, const void *value, CUresult *r)
{
	struct mpool *p;

	if (!shim_mp_connected()) {
		*r = CUDA_ERROR_NOT_INITIALIZED;
		return NULL;
	}
	if (!value) {
		*r = CUDA_ERROR_INVALID_VALUE;
		return NULL;
	}
	shim_lock();
	p = shim_mp_pool_of(pool);
	if (!p) {
		shim_unlock();
		*r = CUDA_ERROR_INVALID_VALUE;
	}
	return p;
}

/* The pool's field of a reuse-policy attribute (an int flag), or NULL. */
static int *flag_attr(struct mpool *p, CUmemPool_attribute attr)
{
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		return &p->follow_events;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		return &p->opportunistic;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		return &p->internal_deps;
	default:
		return NULL;
	}
}

/* The pool's field of a 64-bit attribute (the release threshold, the byte
 * counts and their high marks), or NULL. */
static uint64_t *u64_attr(struct mpool *p, CUmemPool_attribute attr)
{
	switch (attr) {
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		return &p->threshold;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
		return &p->reserved;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		return &p->reserved_high;
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		return &p->used;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		return &p->used_high;
	default:
		return NULL;
	}
}

SHIM_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
					   void *value)
{
	CUresult r = CUDA_SUCCESS;
	struct mpool *p;
	int *flag;

	p = attr_pool(pool, value, &r);
	if (!p)
		return r;
	flag = flag_attr(p, attr);
	if (flag) {
		*flag = *(int *)value != 0;
	} else if (attr == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) {
		p->threshold = *(cuuint64_t *)value;
		if (p->reserved > p->threshold)
			__atomic_store_n(&shim_mp.trim_wanted, true, __ATOMIC_RELAXED);
	} else if (attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH ||
		   attr == CU_MEMPOOL_ATTR_USED_MEM_HIGH) {
		/* Only a reset to 0 is allowed: the mark restarts at now. */
		if (*(cuuint64_t *)value)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			*u64_attr(p, attr) = attr == CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH
					     ? p->reserved : p->used;
	} else {
		r = CUDA_ERROR_INVALID_VALUE;	/* read-only or unknown */
	}
	shim_unlock();
	return r;
}

SHIM_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
					   void *value)
{
	CUresult r = CUDA_SUCCESS;
	struct mpool *p;
	uint64_t *u;
	int *flag;

	p = attr_pool(pool, value, &r);
	if (!p)
		return r;
	flag = flag_attr(p, attr);
	u = u64_attr(p, attr);
	if (flag)
		*(int *)value = *flag;
	else if (u)
		*(cuuint64_t *)value = *u;
	else
		r = CUDA_ERROR_INVALID_VALUE;
	shim_unlock();
	if (!r)
		SHIM_LOCAL();
	return r;
}

SHIM_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map,
					size_t count)
{
	struct mpool *p;
	size_t i;

	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!map && count)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++) {
		if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    (map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		     map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		     map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
			return CUDA_ERROR_INVALID_VALUE;
		if (!shim_mp_device_ok(map[i].location.id))
			return CUDA_ERROR_INVALID_DEVICE;
	}
	shim_lock();
	p = shim_mp_pool_of(pool);
	if (!p) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* The owning device always has read-write access. */
	for (i = 0; i < count; i++)
		if (map[i].location.id == p->device &&
		    map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE) {
			shim_unlock();
			return CUDA_ERROR_INVALID_DEVICE;
		}
	for (i = 0; i < count; i++)
		p->access[map[i].location.id] = map[i].flags;
	shim_unlock();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool memPool,
					CUmemLocation *location)
{
	struct mpool *p;

	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!shim_mp_device_ok(location->id))
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	p = shim_mp_pool_of(memPool);
	if (p)
		*flags = (CUmemAccess_flags)p->access[location->id];
	shim_unlock();
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Sharing a pool, or one of its allocations, with another process. */
static CUresult no_ipc(const char *fn)
{
	shim_log("%s: sharing memory pools between processes is not supported", fn);
	return CUDA_ERROR_NOT_SUPPORTED;
}

SHIM_EXPORT CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool,
						      CUmemAllocationHandleType handleType,
						      unsigned long long flags)
{
	(void)handle_out;
	(void)pool;
	(void)handleType;
	(void)flags;
	return no_ipc("cuMemPoolExportToShareableHandle");
}

SHIM_EXPORT CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
							CUmemAllocationHandleType handleType,
							unsigned long long flags)
{
	(void)pool_out;
	(void)handle;
	(void)handleType;
	(void)flags;
	return no_ipc("cuMemPoolImportFromShareableHandle");
}

SHIM_EXPORT CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr)
{
	(void)shareData_out;
	(void)ptr;
	return no_ipc("cuMemPoolExportPointer");
}

SHIM_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
					    CUmemPoolPtrExportData *shareData)
{
	(void)ptr_out;
	(void)pool;
	(void)shareData;
	return no_ipc("cuMemPoolImportPointer");
}
