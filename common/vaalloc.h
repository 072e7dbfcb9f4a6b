/* SPDX-License-Identifier: MIT */
/*
 * vaalloc.h - an address-space allocator over a fixed window
 * [base, base + size), e.g. a client's device-address window for minting
 * (struct axon_params va_base / va_size).
 *
 * Granularity: every allocation starts and ends on a VAALLOC_MIN_ALIGN
 * (= AXON_MINT_ALIGN, 256) boundary; sizes are rounded up to it. Alignment
 * is of the absolute address, not of the offset in the window.
 *
 * Policy: address-ordered first fit. Free ranges live in an AVL tree sorted
 * by address and augmented with the largest free range in each subtree, so
 * the lowest-addressed free range that can hold a request is found in one
 * O(log n) descent. Address-ordered first fit was chosen over best fit
 * because it has comparably low fragmentation in practice (Johnstone &
 * Wilson, "The Memory Fragmentation Problem: Solved?", 1998), needs a single
 * tree for both coalescing and searching, keeps live memory packed at the
 * low end with one large free tail, and gives deterministic, cuMemAlloc-like
 * ascending addresses. The 2^20 x 4 KiB pattern allocates sequentially from
 * the front of one free range and freeing everything (in any order)
 * coalesces back to a single range.
 *
 * With an alignment above 256 the O(log n) search looks for the lowest free
 * range of at least size + align - 256 bytes (which fits at any address).
 * Only if there is none does it fall back to an exact scan, pruned by the
 * subtree maxima, that also considers smaller ranges which happen to be
 * suitably aligned; that fallback is O(number of free ranges) in the worst
 * case and runs only near exhaustion.
 *
 * Adjacent free ranges always coalesce; vaalloc_free never allocates memory
 * and cannot fail except for a bad address.
 *
 * NOT thread-safe: the caller serialises every call (including lookups,
 * which are pure reads and may run concurrently with each other only).
 */
#ifndef AXON_COMMON_VAALLOC_H
#define AXON_COMMON_VAALLOC_H

#include <stddef.h>
#include <stdint.h>

#include <axon/protocol.h>

#include "avl.h"
#include "pool.h"
#include "util.h"

#define VAALLOC_MIN_ALIGN	AXON_MINT_ALIGN

struct vaalloc {
	uint64_t base;			/* the window */
	uint64_t size;
	struct avl_root free_tree;	/* free ranges, by address */
	struct avl_root alloc_tree;	/* live allocations, by address */
	uint64_t used;			/* bytes in live allocations */
	size_t nr_allocs;		/* live allocations */
	size_t nr_free;			/* free ranges */
	struct pool pool;		/* range nodes of both trees */
};

struct vaalloc_stats {
	uint64_t window_size;		/* size given to vaalloc_init */
	uint64_t used_bytes;		/* in live allocations (rounded sizes) */
	uint64_t free_bytes;		/* window_size - used_bytes */
	uint64_t largest_free;		/* largest free range */
	size_t live_allocs;		/* live allocations */
	size_t free_ranges;		/* free ranges (1 = unfragmented) */
};

/*
 * vaalloc_init - manage the window [base, base + size) (all free).
 * base and size must be multiples of VAALLOC_MIN_ALIGN, size must be
 * non-zero and at most INT64_MAX, and base + size <= UINT64_MAX.
 * Returns 0, -EINVAL, or -ENOMEM. O(1).
 */
int __must_check vaalloc_init(struct vaalloc *va, uint64_t base,
			      uint64_t size);

/*
 * vaalloc_destroy - release all bookkeeping (live allocations are simply
 * forgotten). @va must be re-initialised before further use. O(n).
 */
void vaalloc_destroy(struct vaalloc *va);

/*
 * vaalloc_alloc - allocate @size bytes (rounded up to 256) at an address
 * that is a multiple of @align (0 or anything below 256 means 256; otherwise
 * a power of two). On success stores the address in *addr and returns 0.
 * Errors: -EINVAL (size 0, align not a power of two), -ENOSPC (no free
 * range can hold it), -ENOMEM (host memory for bookkeeping). On failure
 * nothing changes. O(log n) (see the header comment for the one exception
 * with align > 256 near exhaustion).
 */
int __must_check vaalloc_alloc(struct vaalloc *va, uint64_t size,
			       uint64_t align, uint64_t *addr);

/*
 * vaalloc_free - free the live allocation that starts exactly at @addr.
 * Returns its (rounded) size, > 0; -ENOENT if @addr is not the start of a
 * live allocation (never allocated, an interior address, or already freed:
 * double frees are detected). Coalesces with free neighbours. Never
 * allocates. O(log n).
 */
int64_t vaalloc_free(struct vaalloc *va, uint64_t addr);

/*
 * vaalloc_lookup - the live allocation containing @addr (for
 * cuMemGetAddressRange): stores its start and rounded size in *base and
 * *size (either may be NULL) and returns 0, or returns -ENOENT. O(log n).
 */
int vaalloc_lookup(const struct vaalloc *va, uint64_t addr, uint64_t *base,
		   uint64_t *size);

/*
 * vaalloc_next - the live allocation with the lowest start >= @addr;
 * iterate all with addr = window base, then addr = *base + *size. Returns 0
 * or -ENOENT when there is none. O(log n).
 */
int vaalloc_next(const struct vaalloc *va, uint64_t addr, uint64_t *base,
		 uint64_t *size);

/* vaalloc_stats - fill @st. O(1). */
void vaalloc_stats(const struct vaalloc *va, struct vaalloc_stats *st);

/* Bytes in live allocations. O(1). */
static inline uint64_t vaalloc_used(const struct vaalloc *va)
{
	return va->used;
}

/* Number of live allocations. O(1). */
static inline size_t vaalloc_count(const struct vaalloc *va)
{
	return va->nr_allocs;
}

/*
 * vaalloc_verify - check every internal invariant (tree shape, order,
 * augmentation, coalescing, accounting); for tests and debugging. Returns 0
 * if consistent, otherwise a negative number identifying the failed check.
 * O(n).
 */
int vaalloc_verify(const struct vaalloc *va);

#endif /* AXON_COMMON_VAALLOC_H */
