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
 *
 * The pools and their blocks are here (mempool.h), with the allocations
 * and frees; the calls that create, choose, configure and destroy pools
 * are in mempoolctl.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mempool.h"
#include "ptstream.h"
#include "synchooks.h"
#include "forkreg.h"

struct shim_mp shim_mp;

/* Lock held. */
void shim_mp_init(void)
{
	if (shim_mp.init)
		return;
	rangemap_init(&shim_mp.blocks);
	shim_mp.init = true;
}

/* A pool handle the caller gave: one of ours, live. Lock held. */
struct mpool *shim_mp_pool_of(CUmemoryPool h)
{
	struct mpool *p;

	for (p = shim_mp.pools; p; p = p->next)
		if ((CUmemoryPool)p == h && !p->destroyed)
			return p;
	return NULL;
}

struct mpool *shim_mp_pool_new(int dev)
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
	p->next = shim_mp.pools;
	shim_mp.pools = p;
	return p;
}

void shim_mp_pool_unlink(struct mpool *p)
{
	struct mpool **pp;

	for (pp = &shim_mp.pools; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	free(p);
}

/* The device's default pool, made on first use. Lock held. */
struct mpool *shim_mp_default_pool(int dev)
{
	if (!shim_mp.dflt[dev])
		shim_mp.dflt[dev] = shim_mp_pool_new(dev);
	return shim_mp.dflt[dev];
}

struct mpool *shim_mp_current_pool(int dev)
{
	return shim_mp.current[dev] ? shim_mp.current[dev] : shim_mp_default_pool(dev);
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
	rangemap_remove(&shim_mp.blocks, b->addr, NULL);
	r = shim_unmint_locked(ctx, b->addr);
	p->reserved -= b->size;
	p->nblocks--;
	free(b);
	/* A destroyed pool goes with its last block. */
	if (p->destroyed && !p->nblocks)
		shim_mp_pool_unlink(p);
	return r;
}

/* Releases free blocks until the pool holds at most keep bytes. */
void shim_mp_pool_trim(struct mpool *p, uint64_t keep)
{
	while (p->reserved > keep && p->free_head)
		block_release(p->free_head);
}

bool shim_mempool_owns(uint64_t addr, CUmemoryPool *pool)
{
	struct rangemap_entry *e = shim_mp.init ? rangemap_find(&shim_mp.blocks, addr) : NULL;
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
	struct rangemap_entry *e = shim_mp.init ? rangemap_find(&shim_mp.blocks, addr) : NULL;
	struct block *b = e && e->base == addr ? e->value : NULL;

	if (!b || b->free)
		return CUDA_ERROR_INVALID_VALUE;
	return block_release(b);
}

static void sync_point_trim(void)
{
	struct mpool *p;

	if (!__atomic_load_n(&shim_mp.trim_wanted, __ATOMIC_RELAXED))
		return;
	shim_lock();
	__atomic_store_n(&shim_mp.trim_wanted, false, __ATOMIC_RELAXED);
	for (p = shim_mp.pools; p; p = p->next)
		shim_mp_pool_trim(p, p->threshold);
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

	if (shim_mp.init)
		rangemap_destroy(&shim_mp.blocks, free_block, NULL);
	for (p = shim_mp.pools; p; p = next) {
		next = p->next;
		free(p);
	}
	memset(&shim_mp, 0, sizeof(shim_mp));
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

	if (!shim_mp_connected())
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
	shim_mp_init();
	if (explicit_pool) {
		p = shim_mp_pool_of(hpool);
		if (!p) {
			shim_unlock();
			return CUDA_ERROR_INVALID_VALUE;
		}
	} else {
		p = shim_mp_current_pool(sc->device);
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
		p = explicit_pool ? shim_mp_pool_of(hpool) : shim_mp_current_pool(dev);
		if (!p) {
			r = CUDA_ERROR_INVALID_VALUE;	/* destroyed meanwhile */
			break;
		}
		if (p->props.maxSize && p->reserved + rounded > p->props.maxSize) {
			shim_mp_pool_trim(p, p->props.maxSize > rounded
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

			for (q = shim_mp.pools; q; q = q->next)
				shim_mp_pool_trim(q, 0);
		}
	}
	if (r) {
		shim_unlock();
		free(b);
		return r;
	}
	p = explicit_pool ? shim_mp_pool_of(hpool) : shim_mp_current_pool(dev);
	b->addr = addr;
	b->size = rounded;
	b->pool = p;
	if (!p || rangemap_insert(&shim_mp.blocks, addr, rounded, b, NULL)) {
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
	return SHIM_PER_THREAD(alloc_from(dptr, bytesize, NULL, false, hStream));
}

SHIM_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
					     CUmemoryPool pool, CUstream hStream)
{
	return alloc_from(dptr, bytesize, pool, true, hStream);
}

SHIM_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
						  CUmemoryPool pool, CUstream hStream)
{
	return SHIM_PER_THREAD(alloc_from(dptr, bytesize, pool, true, hStream));
}

SHIM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	struct rangemap_entry *e;
	struct shim_ctx *sc;
	struct block *b;
	struct mpool *p;
	uint64_t h;
	CUresult r;

	if (!shim_mp_connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = shim_stream(hStream, &h);
	if (!r)
		r = shim_capture_check_stream(h);
	if (r)
		return r;
	shim_lock();
	e = shim_mp.init ? rangemap_find(&shim_mp.blocks, dptr) : NULL;
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
		__atomic_store_n(&shim_mp.trim_wanted, true, __ATOMIC_RELAXED);
	shim_unlock();
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
	return SHIM_PER_THREAD(cuMemFreeAsync(dptr, hStream));
}

