/* SPDX-License-Identifier: MIT */
/*
 * pool.h - a fixed-size object allocator for tree nodes.
 *
 * Objects are carved from slabs that double in size from POOL_MIN_SLAB up to
 * POOL_HUGE_SLAB (2 MiB); full-size slabs are 2 MiB-aligned anonymous
 * mappings advised for transparent huge pages, so a map of a million nodes
 * takes tens of page faults instead of tens of thousands, and far fewer TLB
 * misses per tree descent. A pool that holds few objects costs one small
 * slab. Freed objects go on a LIFO free list; slabs are released when the
 * last live object is freed, and by pool_destroy.
 *
 * Under AddressSanitizer, free objects and unused slab space are poisoned, so
 * a use after pool_free is still reported.
 *
 * Not thread-safe (one pool per tree, under the tree's lock).
 */
#ifndef AXON_COMMON_POOL_H
#define AXON_COMMON_POOL_H

#include <stddef.h>

#include "util.h"

#define POOL_MIN_SLAB	4096U
#define POOL_HUGE_SLAB	(2U << 20)

struct pool_slab;

struct pool {
	size_t obj_size;		/* rounded up to 16 */
	void *free_list;		/* freed objects, linked via first word */
	char *bump;			/* never-used space in the newest slab */
	char *bump_end;
	struct pool_slab *slabs;	/* all slabs, newest first */
	size_t next_slab;		/* size of the next slab */
	size_t live;			/* objects handed out */
};

/*
 * pool_init - an empty pool of objects of @obj_size bytes (1..POOL_MIN_SLAB
 * / 4). Allocates nothing. O(1).
 */
void pool_init(struct pool *p, size_t obj_size);

/*
 * pool_alloc - one object (16-byte aligned; 64-byte aligned if obj_size is
 * a multiple of 64; contents undefined), or NULL
 * when memory is exhausted. O(1) amortised (a new slab every so often).
 */
void * __must_check pool_alloc(struct pool *p);

/*
 * pool_free - return @obj (from pool_alloc on @p). Releases every slab when
 * it was the last live object. O(1) except for that release, which is
 * O(slabs).
 */
void pool_free(struct pool *p, void *obj);

/*
 * pool_destroy - release every slab; outstanding objects become invalid.
 * The pool is empty and reusable afterwards. O(slabs).
 */
void pool_destroy(struct pool *p);

#endif /* AXON_COMMON_POOL_H */
