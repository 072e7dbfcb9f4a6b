/* SPDX-License-Identifier: MIT */
/*
 * namemap: objects found by (owner, name) in O(1): a client's functions by
 * (module, kernel name), a sim module's globals by name. Names come from
 * clients (their images and their lookups), so the hash is keyed with a
 * random per-process secret (SipHash-2-4): a client cannot choose names
 * that all land in one bucket. Open addressing with linear probing; a
 * removed entry leaves a tombstone, dropped when the table is rebuilt.
 *
 * The map stores the name pointer it is given, not a copy: the name must
 * live as long as its entry (it is the object's own name). Not
 * thread-safe: one owner thread, or the caller's lock.
 */
#ifndef AXOND_NAMEMAP_H
#define AXOND_NAMEMAP_H

#include <stddef.h>
#include <stdint.h>

struct namemap_slot;

struct namemap {
	struct namemap_slot *slots;
	uint32_t cap;		/* slots, a power of two (0: nothing allocated) */
	uint32_t live;		/* entries */
	uint32_t used;		/* entries and tombstones */
};

/* A zeroed struct namemap is an empty map; so is one after destroy. */
void namemap_destroy(struct namemap *m);
/* 0, -EEXIST (that owner and name are there already: unchanged), -ENOMEM. */
int namemap_insert(struct namemap *m, uintptr_t owner, const char *name, void *value);
/* The value, or NULL. */
void *namemap_find(const struct namemap *m, uintptr_t owner, const char *name);
/* Removes the entry; returns its value, or NULL if there was none. */
void *namemap_remove(struct namemap *m, uintptr_t owner, const char *name);

#endif
