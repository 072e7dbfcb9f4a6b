/* SPDX-License-Identifier: MIT */
/*
 * rangemap.h - an ordered map of disjoint half-open ranges [base, base + len)
 * keyed by base, each carrying a void *value.
 *
 * Built on an AVL tree (avl.h): insert, remove, find and the span check are
 * O(log n) worst case, with no recursion. A range must be non-empty and its
 * end must be representable: base + len <= UINT64_MAX (so the byte at
 * UINT64_MAX is never part of a range, and callers may compute base + len
 * without wrapping).
 *
 * Entries are allocated by the map from its own pool (pool.h: slabs, huge
 * pages once large, all memory returned when the map empties); a struct
 * rangemap_entry pointer stays
 * valid until that entry is removed (removing other entries never moves it).
 * Users may read base and len and read or write value; the node is private.
 *
 * Not thread-safe: callers serialise writers. The lookups (find, find_span,
 * find_ge, first/next, count) do not modify the map, so any number of
 * readers may run concurrently when no writer does (e.g. under a rwlock).
 */
#ifndef AXON_COMMON_RANGEMAP_H
#define AXON_COMMON_RANGEMAP_H

#include <stddef.h>
#include <stdint.h>

#include "avl.h"
#include "pool.h"
#include "util.h"

/* 56 bytes (64 in the pool); a lookup step reads base, len, node.left and node.right, the
 * first 32 bytes of one cache line. */
struct rangemap_entry {
	uint64_t base;			/* read-only */
	uint64_t len;			/* read-only */
	struct avl_node node;		/* private */
	void *value;			/* the caller's */
};

struct rangemap {
	struct avl_root root;
	size_t count;
	struct pool pool;		/* entries */
};

/* rangemap_init - make @m an empty map. Allocates nothing. O(1). */
void rangemap_init(struct rangemap *m);

/*
 * rangemap_insert - add [base, base + len) with @value.
 * Returns 0; -EINVAL if len is 0 or base + len > UINT64_MAX; -EEXIST if the
 * range overlaps any existing range (touching end-to-start is not an
 * overlap); -ENOMEM. On success and if @out is not NULL, *out is the new
 * entry. O(log n).
 */
int __must_check rangemap_insert(struct rangemap *m, uint64_t base,
				 uint64_t len, void *value,
				 struct rangemap_entry **out);

/*
 * rangemap_remove - remove the range that starts exactly at @base.
 * Returns 0 and, if @value is not NULL, stores the range's value there;
 * -ENOENT if no range starts at @base (an address inside a range is not
 * enough). O(log n).
 */
int rangemap_remove(struct rangemap *m, uint64_t base, void **value);

/*
 * rangemap_erase - remove entry @e (from find / iteration) and return its
 * value. @e is freed. O(log n).
 */
void *rangemap_erase(struct rangemap *m, struct rangemap_entry *e);

/*
 * rangemap_find - the range containing @addr (base <= addr < base + len),
 * or NULL. O(log n).
 */
struct rangemap_entry *rangemap_find(const struct rangemap *m, uint64_t addr);

/*
 * rangemap_find_span - the single range that contains all of
 * [addr, addr + len), or NULL if no one range does (the span is unmapped,
 * straddles a gap or two adjacent ranges, or addr + len wraps past 2^64).
 * len 0 is accepted and behaves as rangemap_find(addr). This is the
 * validation fast path: O(log n), one tree descent.
 */
struct rangemap_entry *rangemap_find_span(const struct rangemap *m,
					  uint64_t addr, uint64_t len);

/*
 * rangemap_find_ge - the range with the lowest base >= @addr, or NULL.
 * O(log n).
 */
struct rangemap_entry *rangemap_find_ge(const struct rangemap *m,
					uint64_t addr);

/*
 * rangemap_first / rangemap_next - iterate in increasing base order;
 * NULL at the end. To remove while iterating, fetch the next entry before
 * erasing the current one. O(1) amortised per step, O(log n) worst case.
 */
struct rangemap_entry *rangemap_first(const struct rangemap *m);
struct rangemap_entry *rangemap_next(const struct rangemap *m,
				     const struct rangemap_entry *e);

/* rangemap_count - number of ranges. O(1). */
static inline size_t rangemap_count(const struct rangemap *m)
{
	return m->count;
}

/*
 * rangemap_destroy - remove every range, calling @fn(base, len, value, @arg)
 * for each (in no particular order; @fn may be NULL and must not use the
 * map). The map is empty and reusable afterwards. O(n).
 */
void rangemap_destroy(struct rangemap *m,
		      void (*fn)(uint64_t base, uint64_t len, void *value,
				 void *arg),
		      void *arg);

#endif /* AXON_COMMON_RANGEMAP_H */
