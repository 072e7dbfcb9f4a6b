/* SPDX-License-Identifier: MIT */
/*
 * Memory pools and their blocks (mempool.c), for the calls that create,
 * choose, configure and destroy pools (mempoolctl.c). Everything here is
 * under the shim lock.
 */
#ifndef AXON_SHIM_MEMPOOL_H
#define AXON_SHIM_MEMPOOL_H

#include "rangemap.h"
#include "shim.h"

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

extern struct shim_mp {
	bool init;
	struct rangemap blocks;		/* every block, by address */
	struct mpool *pools;
	struct mpool *dflt[AXON_MAX_DEVICES];	/* made on first use */
	struct mpool *current[AXON_MAX_DEVICES];	/* NULL: the default */
	bool trim_wanted;	/* a pool may be above its threshold */
} shim_mp;

static inline bool shim_mp_connected(void)
{
	return __atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE);
}

static inline bool shim_mp_device_ok(int dev)
{
	return dev >= 0 && (unsigned int)dev < shim.ring.info->ndevices;
}

void shim_mp_init(void);
/* A pool handle the caller gave: one of ours, live. */
struct mpool *shim_mp_pool_of(CUmemoryPool h);
struct mpool *shim_mp_pool_new(int dev);
/* Forgets and frees a pool that holds no block. */
void shim_mp_pool_unlink(struct mpool *p);
/* The device's default pool, made on first use; its current pool. */
struct mpool *shim_mp_default_pool(int dev);
struct mpool *shim_mp_current_pool(int dev);
/* Releases free blocks until the pool holds at most keep bytes. */
void shim_mp_pool_trim(struct mpool *p, uint64_t keep);

#endif
