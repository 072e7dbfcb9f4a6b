/* SPDX-License-Identifier: MIT */
/*
 * handles.h - a table of generation-tagged handles (uapi/axon/protocol.h:
 * bits 63..56 type, 55..32 generation, 31..0 slot index).
 *
 * Each slot holds an object pointer and a 32-bit tag equal to the upper half
 * of its current handle (type << 24 | generation); a free slot has type 0 in
 * its tag and remembers its next generation. A lookup is therefore one bounds
 * check and one 32-bit compare, and rejects 0, a wrong type, an index out of
 * range, a free slot and a stale generation alike.
 *
 * Generations start at 1 and are bumped on every free, skipping 0 on wrap
 * (after 2^24 - 1 frees of one slot, an old handle of that slot is valid
 * again; FIFO slot reuse spreads frees over all free slots to make that
 * as unlikely as possible).
 *
 * Slot reuse: a never-used slot within the current storage first, then the
 * slot freed longest ago (FIFO), and only then is the storage grown
 * (doubling, from HANDLE_TABLE_MIN_SLOTS, up to max_entries). Indices are
 * always < max_entries, so a slot index can double as an index into another
 * fixed array (a stream's frontier slot). A table that never allocated costs
 * only the struct itself.
 *
 * Not thread-safe: callers serialise writers; lookups are pure reads.
 */
#ifndef AXON_COMMON_HANDLES_H
#define AXON_COMMON_HANDLES_H

#include <stdbool.h>
#include <stdint.h>

#include <axon/protocol.h>

#include "util.h"

#define HANDLE_TYPES		256	/* type is 8 bits; 0 is never valid */
#define HANDLE_GEN_MASK		0xffffffU
#define HANDLE_TABLE_MIN_SLOTS	16

struct handle_slot {
	void *obj;
	uint32_t tag;		/* type << 24 | gen; type 0: free */
	uint32_t next_free;	/* FIFO link while free */
};

struct handle_table {
	struct handle_slot *slots;
	uint32_t cap;		/* slots allocated */
	uint32_t used;		/* slots [0, used) have been handed out */
	uint32_t max;		/* max_entries */
	uint32_t free_head;	/* FIFO of freed slots (HANDLE_NIL: empty) */
	uint32_t free_tail;
	uint32_t live;
	uint32_t live_by_type[HANDLE_TYPES];
};

/*
 * handle_table_init - an empty table of at most @max_entries (>= 1) live
 * handles, with indices < max_entries. Allocates nothing.
 * Returns 0 or -EINVAL (max_entries 0). O(1).
 */
int __must_check handle_table_init(struct handle_table *t,
				   uint32_t max_entries);

/*
 * handle_table_destroy - free the table's storage. The objects are not
 * touched (iterate first to release them). The table must be
 * re-initialised before reuse. O(1).
 */
void handle_table_destroy(struct handle_table *t);

/*
 * handle_alloc - give @obj (not NULL) a handle of @type (1..255).
 * Returns 0 with the handle in *out; -EINVAL (type 0 or > 255, obj NULL);
 * -ENOSPC (max_entries live handles already); -ENOMEM (growing the storage
 * failed; the table is unchanged). O(1) amortised (growth doubles).
 */
int __must_check handle_alloc(struct handle_table *t, unsigned int type,
			      void *obj, uint64_t *out);

/*
 * handle_lookup - the object named by @handle if it is live and of @type,
 * else NULL (handle 0, type 0 or mismatched, index out of range, free slot,
 * stale generation, any forged bits). O(1).
 */
void *handle_lookup(const struct handle_table *t, uint64_t handle,
		    unsigned int type);

/*
 * handle_free - invalidate @handle (which must be live and of @type) and
 * return its object; NULL (and nothing changes) if it is not valid, so a
 * double free is detected. The slot's generation is bumped and the slot is
 * queued for reuse (FIFO). O(1).
 */
void *handle_free(struct handle_table *t, uint64_t handle, unsigned int type);

/*
 * handle_iter - visit live handles in index order. Start with *pos = 0;
 * each call that returns true stores the next live handle whose index is
 * >= *pos (and whose type is @type, or any type if @type is 0) in *handle
 * (and its object in *obj if obj is not NULL) and sets *pos past it.
 * Returns false at the end. The visited handle may be freed before the next
 * call (teardown of a dead client); handles allocated during the walk may or
 * may not be visited. O(slots) for a full walk.
 */
bool handle_iter(const struct handle_table *t, unsigned int type,
		 uint32_t *pos, uint64_t *handle, void **obj);

/*
 * handle_count - live handles of @type, or of all types if @type is 0
 * (0 for type > 255). O(1).
 */
uint32_t handle_count(const struct handle_table *t, unsigned int type);

/* The slot index of @handle (< max_entries for any valid handle). */
static inline uint32_t handle_index(uint64_t handle)
{
	return AXON_HANDLE_INDEX(handle);
}

/* The type encoded in @handle. */
static inline unsigned int handle_type(uint64_t handle)
{
	return AXON_HANDLE_TYPE(handle);
}

#endif /* AXON_COMMON_HANDLES_H */
