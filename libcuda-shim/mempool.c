// SPDX-License-Identifier: MIT
/*
 * Stream-ordered allocation: cuMemAllocAsync, cuMemFreeAsync and memory
 * pools, entirely in the client.
 *
 * A pool's memory is minted memory (mem.c): a new block is a cuMemAlloc of
 * the rounded size in the device's primary context (pools belong to no
 * context: cuCtxDestroy leaves them), so the daemon backs it before any
 * later SQE names it, which makes it usable by work on any stream after the
 * call, as the driver promises.
 *
 * A free is stream-ordered: cuMemFreeAsync only marks the block free in its
 * pool with the point of the free, (stream, its sequence number now). A
 * later allocation reuses a free block
 *  - on the same stream at once (its work runs after the work before the
 *    free), or
 *  - on any stream once the frontier shows the free's point reached
 *    (CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC, on by default).
 * Event dependencies (REUSE_FOLLOW_EVENT_DEPENDENCIES) are not tracked and
 * no dependencies are inserted (REUSE_ALLOW_INTERNAL_DEPENDENCIES): both are
 * kept as attributes, and a block whose free is not reached yet is simply
 * not reused by another stream; a new one is minted instead.
 *
 * Memory goes back to the device (a deferred MEM_UNMAP, which the daemon
 * carries out after the work queued before it, so a release never races
 * with a kernel still using the block) when a pool holds more than
 * CU_MEMPOOL_ATTR_RELEASE_THRESHOLD at a synchronisation point
 * (cuStreamSynchronize, cuCtxSynchronize, cuEventSynchronize call
 * sync_point_trim, synchooks.h), on cuMemPoolTrimTo, and when minting fails
 * (every pool's free blocks are released and the allocation is tried
 * again).
 *
 * Blocks are not split or merged: a free block is reused for a request of
 * at least half its size. On a capturing stream both calls answer
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (and end the capture): graph memory
 * nodes are not built. Sharing pools between processes (export, import)
 * is not supported: those calls answer CUDA_ERROR_NOT_SUPPORTED with a log
 * line, as does a pool created with an exportable handle type.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rangemap.h"
#include "shim.h"
#include "synchooks.h"
#include "forkreg.h"

struct mpool;

struct block {
	uint64_t addr, size;
	struct mpool *pool;
	bool free;
	/* the point of its free (free blocks) */
	uint64_t stream;
	uint32_t slot;
	uint64_t seq;
	struct block *next, *prev;	/* the pool's free list */
};

struct mpool {
	CUmemPoolProps props;
	int device;
	bool destroyed;		/* cuMemPoolDestroy'd, blocks still in use */
	uint64_t threshold;
	int follow_events, opportunistic, internal_deps;
	uint64_t reserved, reserved_high, used, used_high;
	unsigned long long access[AXON_MAX_DEVICES];	/* CUmemAccess_flags */
	size_t nblocks;
	struct block *free_head;
	struct mpool *next;	/* every live pool */
};

static struct {
	bool init;
	struct rangemap blocks;		/* every block, by address */
	struct mpool *pools;
	struct mpool *dflt[AXON_MAX_DEVICES];	/* made on first use */
	struct mpool *current[AXON_MAX_DEVICES];	/* NULL: the default */
	bool trim_wanted;	/* a pool may be above its threshold */
} mp;

/* Lock held. */
static void mp_init(void)
{
	if (mp.init)
		return;
	rangemap_init(&mp.blocks);
	mp.init = true;
}

static bool connected(void)
{
	return __atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE);
}

static bool device_ok(int dev)
{
	return dev >= 0 && (unsigned int)dev < shim.ring.info->ndevices;
}

/* A pool handle the caller gave: one of ours, live. Lock held. */
static struct mpool *pool_of(CUmemoryPool h)
{
	struct mpool *p;

	for (p = mp.pools; p; p = p->next)
		if ((CUmemoryPool)p == h && !p->destroyed)
			return p;
	return NULL;
}

static struct mpool *pool_new(int dev)
{
	struct mpool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->device = dev;
	p->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	p->props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	p->props.location.id = dev;
	p->opportunistic = 1;
	p->follow_events = 1;
	p->internal_deps = 1;
	p->access[dev] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	p->next = mp.pools;
	mp.pools = p;
	return p;
}

static void pool_unlink(struct mpool *p)
{
	struct mpool **pp;

	for (pp = &mp.pools; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	free(p);
}

/* The device's default pool, made on first use. Lock held. */
static struct mpool *default_pool(int dev)
{
	if (!mp.dflt[dev])
		mp.dflt[dev] = pool_new(dev);
	return mp.dflt[dev];
}

static struct mpool *current_pool(int dev)
{
	return mp.current[dev] ? mp.current[dev] : default_pool(dev);
}

static void free_list_del(struct block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		b->pool->free_head = b->next;
	if (b->next)
		b->next->prev = b->prev;
	b->next = b->prev = NULL;
}

/* The device's primary context: pool memory lives there. Lock not held. */
static CUresult owner_ctx(int dev, uint64_t *ctx)
{
	return shim_primary_peek(dev, ctx);
}

/*
 * Gives a block's memory back to the device (deferred MEM_UNMAP: after the
 * work queued before it) and forgets it. Lock held.
 */
static CUresult block_release(struct block *b)
{
	struct mpool *p = b->pool;
	uint64_t ctx = shim.primary[p->device].ctx;
	CUresult r;

	if (b->free)
		free_list_del(b);
	else
		p->used -= b->size;
	rangemap_remove(&mp.blocks, b->addr, NULL);
	r = shim_unmint_locked(ctx, b->addr);
	p->reserved -= b->size;
	p->nblocks--;
	free(b);
	/* A destroyed pool goes with its last block. */
	if (p->destroyed && !p->nblocks)
		pool_unlink(p);
	return r;
}

/* Releases free blocks until the pool holds at most keep bytes. */
static void pool_trim(struct mpool *p, uint64_t keep)
{
	while (p->reserved > keep && p->free_head)
		block_release(p->free_head);
}

bool shim_mempool_owns(uint64_t addr, CUmemoryPool *pool)
{
	struct rangemap_entry *e = mp.init ? rangemap_find(&mp.blocks, addr) : NULL;
	struct block *b;

	if (!e || e->base != addr)
		return false;
	b = e->value;
	if (b->free)
		return false;	/* freed: no longer the caller's */
	if (pool)
		*pool = (CUmemoryPool)b->pool;
	return true;
}

CUresult shim_mempool_release_locked(uint64_t addr)
{
	struct rangemap_entry *e = mp.init ? rangemap_find(&mp.blocks, addr) : NULL;
	struct block *b = e && e->base == addr ? e->value : NULL;

	if (!b || b->free)
		return CUDA_ERROR_INVALID_VALUE;
	return block_release(b);
}

static void sync_point_trim(void)
{
	struct mpool *p;

	if (!__atomic_load_n(&mp.trim_wanted, __ATOMIC_RELAXED))
		return;
	shim_lock();
	__atomic_store_n(&mp.trim_wanted, false, __ATOMIC_RELAXED);
	for (p = mp.pools; p; p = p->next)
		pool_trim(p, p->threshold);
	shim_unlock();
}

__attribute__((constructor)) static void register_sync_point_trim(void)
{
	shim_on_sync_point(sync_point_trim);
}

static void free_block(uint64_t base, uint64_t len, void *value, void *arg)
{
	(void)base;
	(void)len;
	(void)arg;
	free(value);
}

static void mempool_forget(void)
{
	struct mpool *p, *next;

	if (mp.init)
		rangemap_destroy(&mp.blocks, free_block, NULL);
	for (p = mp.pools; p; p = next) {
		next = p->next;
		free(p);
	}
	memset(&mp, 0, sizeof(mp));
}

__attribute__((constructor)) static void register_mempool_forget(void)
{
	shim_fork_register(mempool_forget);
}

/* A free block this request on stream h may take, best fit. Lock held. */
static struct block *find_reusable(struct mpool *p, uint64_t size, uint64_t h)
{
	struct block *b, *best = NULL;

	for (b = p->free_head; b; b = b->next) {
		if (b->size < size || b->size / 2 > size)
			continue;
		if (b->stream != h &&
		    (!p->opportunistic || axon_frontier(&shim.ring, b->slot) < b->seq))
			continue;
		if (!best || b->size < best->size)
			best = b;
		if (b->size == size)
			break;
	}
	return best;
}

static void count_used(struct mpool *p, uint64_t size)
{
	p->used += size;
	if (p->used > p->used_high)
		p->used_high = p->used;
}

static CUresult alloc_from(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool hpool,
			   bool explicit_pool, CUstream hstream)
{
	uint64_t h, rounded, addr, ctx;
	struct shim_ctx *sc;
	struct block *b;
	struct mpool *p;
	CUresult r;
	int dev, attempt;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!dptr || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(hstream, &h);
	if (!r)	/* a capture would need graph memory nodes: not built */
		r = shim_capture_check_stream(h);
	if (r)
		return r;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	rounded = ((uint64_t)bytesize + AXON_MINT_ALIGN - 1) & ~(uint64_t)(AXON_MINT_ALIGN - 1);
	if (rounded < bytesize)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	mp_init();
	if (explicit_pool) {
		p = pool_of(hpool);
		if (!p) {
			shim_unlock();
			return CUDA_ERROR_INVALID_VALUE;
		}
	} else {
		p = current_pool(sc->device);
		if (!p) {
			shim_unlock();
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	dev = p->device;
	b = find_reusable(p, rounded, h);
	if (b) {
		free_list_del(b);
		b->free = false;
		count_used(p, b->size);
		*dptr = b->addr;
		shim_unlock();
		SHIM_LOCAL();
		return CUDA_SUCCESS;
	}
	shim_unlock();
	r = owner_ctx(dev, &ctx);
	if (r)
		return r;
	b = calloc(1, sizeof(*b));
	if (!b)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	for (attempt = 0;; attempt++) {
		p = explicit_pool ? pool_of(hpool) : current_pool(dev);
		if (!p) {
			r = CUDA_ERROR_INVALID_VALUE;	/* destroyed meanwhile */
			break;
		}
		if (p->props.maxSize && p->reserved + rounded > p->props.maxSize) {
			pool_trim(p, p->props.maxSize > rounded
				  ? p->props.maxSize - rounded : 0);
			if (p->reserved + rounded > p->props.maxSize) {
				r = CUDA_ERROR_OUT_OF_MEMORY;
				break;
			}
		}
		r = shim_mint_locked(ctx, rounded, &addr);
		if (r != CUDA_ERROR_OUT_OF_MEMORY || attempt)
			break;
		/* Out of memory: what the pools keep unused goes back first,
		 * as the driver's allocator does, then one more try. */
		{
			struct mpool *q;

			for (q = mp.pools; q; q = q->next)
				pool_trim(q, 0);
		}
	}
	if (r) {
		shim_unlock();
		free(b);
		return r;
	}
	p = explicit_pool ? pool_of(hpool) : current_pool(dev);
	b->addr = addr;
	b->size = rounded;
	b->pool = p;
	if (!p || rangemap_insert(&mp.blocks, addr, rounded, b, NULL)) {
		shim_unmint_locked(ctx, addr);
		shim_unlock();
		free(b);
		return p ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	}
	p->nblocks++;
	p->reserved += rounded;
	if (p->reserved > p->reserved_high)
		p->reserved_high = p->reserved;
	count_used(p, rounded);
	shim_unlock();
	*dptr = addr;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_from(dptr, bytesize, NULL, false, hStream);
}

SHIM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	return alloc_from(dptr, bytesize, NULL, false, hStream);
}

SHIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
					     CUmemoryPool pool, CUstream hStream)
{
	return alloc_from(dptr, bytesize, pool, true, hStream);
}

SHIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
						  CUmemoryPool pool, CUstream hStream)
{
	return alloc_from(dptr, bytesize, pool, true, hStream);
}

SHIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	struct rangemap_entry *e;
	struct shim_ctx *sc;
	struct block *b;
	struct mpool *p;
	uint64_t h;
	CUresult r;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = shim_stream(hStream, &h);
	if (!r)
		r = shim_capture_check_stream(h);
	if (r)
		return r;
	shim_lock();
	e = mp.init ? rangemap_find(&mp.blocks, dptr) : NULL;
	b = e && e->base == dptr ? e->value : NULL;
	if (!b) {
		shim_unlock();
		/* cuMemAlloc memory may be freed this way too: its free is
		 * already ordered after the work queued before it. */
		if (!dptr)
			return CUDA_ERROR_INVALID_VALUE;
		r = shim_get_ctx(&sc);
		if (r)
			return r;
		shim_lock();
		r = shim_vmm_reserved(dptr) ? CUDA_ERROR_INVALID_VALUE
					    : shim_unmint_locked(sc->handle, dptr);
		shim_unlock();
		return r;
	}
	if (b->free) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;	/* freed twice */
	}
	p = b->pool;
	if (p->destroyed) {
		r = block_release(b);
		shim_unlock();
		return r;
	}
	b->free = true;
	b->stream = h;
	b->slot = shim_slot(h) % AXON_MAX_FRONTIER;
	b->seq = shim.seq[b->slot];	/* everything queued on it so far */
	b->prev = NULL;
	b->next = p->free_head;
	if (p->free_head)
		p->free_head->prev = b;
	p->free_head = b;
	p->used -= b->size;
	if (p->reserved > p->threshold)
		__atomic_store_n(&mp.trim_wanted, true, __ATOMIC_RELAXED);
	shim_unlock();
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return cuMemFreeAsync(dptr, hStream);
}

/* ---- pools ---------------------------------------------------------------- */

SHIM_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev)
{
	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool_out)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	*pool_out = (CUmemoryPool)default_pool(dev);
	shim_unlock();
	return *pool_out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

SHIM_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev)
{
	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	*pool = (CUmemoryPool)current_pool(dev);
	shim_unlock();
	return *pool ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

SHIM_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool)
{
	struct mpool *p;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!device_ok(dev))
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	p = pool_of(pool);
	if (p && p->device == dev)
		mp.current[dev] = p;
	shim_unlock();
	return p && p->device == dev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* The location and type cuMem{Get,Set}[Default]MemPool name: device pinned
 * memory only. */
static CUresult location_dev(const CUmemLocation *loc, CUmemAllocationType type, int *dev)
{
	if (!loc)
		return CUDA_ERROR_INVALID_VALUE;
	if (type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    loc->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return loc->type == CU_MEM_LOCATION_TYPE_HOST ||
		       loc->type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
		       type == CU_MEM_ALLOCATION_TYPE_MANAGED
		       ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
	if (!device_ok(loc->id))
		return CUDA_ERROR_INVALID_DEVICE;
	*dev = loc->id;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location,
					    CUmemAllocationType type)
{
	CUresult r;
	int dev;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = location_dev(location, type, &dev);
	return r ? r : cuDeviceGetDefaultMemPool(pool_out, dev);
}

SHIM_EXPORT CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location,
				     CUmemAllocationType type)
{
	CUresult r;
	int dev;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = location_dev(location, type, &dev);
	return r ? r : cuDeviceGetMemPool(pool, dev);
}

SHIM_EXPORT CUresult cuMemSetMemPool(CUmemLocation *location, CUmemAllocationType type,
				     CUmemoryPool pool)
{
	CUresult r;
	int dev;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = location_dev(location, type, &dev);
	return r ? r : cuDeviceSetMemPool(dev, pool);
}

SHIM_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props)
{
	static const unsigned char zero[sizeof(props->reserved)];
	struct mpool *p;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!pool || !props || props->win32SecurityAttributes ||
	    memcmp(props->reserved, zero, sizeof(zero)))
		return CUDA_ERROR_INVALID_VALUE;
	if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return props->location.type == CU_MEM_LOCATION_TYPE_HOST ||
		       props->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
		       props->allocType == CU_MEM_ALLOCATION_TYPE_MANAGED
		       ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
	if (!device_ok(props->location.id))
		return CUDA_ERROR_INVALID_DEVICE;
	if (props->handleTypes != CU_MEM_HANDLE_TYPE_NONE) {
		shim_log("cuMemPoolCreate: pools shareable between processes (handle type "
			 "0x%x) are not supported", (unsigned int)props->handleTypes);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (props->usage & CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS)
		return CUDA_ERROR_NOT_SUPPORTED;
	shim_lock();
	mp_init();
	p = pool_new(props->location.id);
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

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	p = pool_of(pool);
	if (!p || p == mp.dflt[p->device]) {
		/* A default pool cannot be destroyed. */
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* The device's current pool becomes its default again. */
	for (dev = 0; dev < AXON_MAX_DEVICES; dev++)
		if (mp.current[dev] == p)
			mp.current[dev] = NULL;
	pool_trim(p, 0);
	/* Blocks still allocated go when they are freed (block_release),
	 * and the pool with the last of them. */
	if (p->nblocks)
		p->destroyed = true;
	else
		pool_unlink(p);
	shim_unlock();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep)
{
	struct mpool *p;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	p = pool_of(pool);
	if (p)
		pool_trim(p, minBytesToKeep);
	shim_unlock();
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SHIM_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
					   void *value)
{
	CUresult r = CUDA_SUCCESS;
	struct mpool *p;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	p = pool_of(pool);
	if (!p) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		p->follow_events = *(int *)value != 0;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		p->opportunistic = *(int *)value != 0;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		p->internal_deps = *(int *)value != 0;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		p->threshold = *(cuuint64_t *)value;
		if (p->reserved > p->threshold)
			__atomic_store_n(&mp.trim_wanted, true, __ATOMIC_RELAXED);
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		/* Only a reset to 0 is allowed: the mark restarts at now. */
		if (*(cuuint64_t *)value)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			p->reserved_high = p->reserved;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		if (*(cuuint64_t *)value)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			p->used_high = p->used;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;	/* read-only or unknown */
		break;
	}
	shim_unlock();
	return r;
}

SHIM_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr,
					   void *value)
{
	CUresult r = CUDA_SUCCESS;
	struct mpool *p;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	p = pool_of(pool);
	if (!p) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	switch (attr) {
	case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
		*(int *)value = p->follow_events;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
		*(int *)value = p->opportunistic;
		break;
	case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
		*(int *)value = p->internal_deps;
		break;
	case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
		*(cuuint64_t *)value = p->threshold;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
		*(cuuint64_t *)value = p->reserved;
		break;
	case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
		*(cuuint64_t *)value = p->reserved_high;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
		*(cuuint64_t *)value = p->used;
		break;
	case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
		*(cuuint64_t *)value = p->used_high;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
		break;
	}
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

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!map && count)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++) {
		if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
		    (map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE &&
		     map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
		     map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE))
			return CUDA_ERROR_INVALID_VALUE;
		if (!device_ok(map[i].location.id))
			return CUDA_ERROR_INVALID_DEVICE;
	}
	shim_lock();
	p = pool_of(pool);
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

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!device_ok(location->id))
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	p = pool_of(memPool);
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
