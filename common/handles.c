// SPDX-License-Identifier: MIT
/*
 * handles.c - generation-tagged handle table; see handles.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"

#define HANDLE_NIL	UINT32_MAX

static inline uint32_t tag_type(uint32_t tag)
{
	return tag >> 24;
}

static inline uint32_t tag_gen(uint32_t tag)
{
	return tag & HANDLE_GEN_MASK;
}

int handle_table_init(struct handle_table *t, uint32_t max_entries)
{
	if (max_entries == 0)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->max = max_entries;
	t->free_head = HANDLE_NIL;
	t->free_tail = HANDLE_NIL;
	return 0;
}

void handle_table_destroy(struct handle_table *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = 0;
	t->used = 0;
	t->live = 0;
	t->free_head = HANDLE_NIL;
	t->free_tail = HANDLE_NIL;
	memset(t->live_by_type, 0, sizeof(t->live_by_type));
}

static int grow(struct handle_table *t)
{
	uint64_t ncap = t->cap ? (uint64_t)t->cap * 2 : HANDLE_TABLE_MIN_SLOTS;
	struct handle_slot *s;

	if (ncap > t->max)
		ncap = t->max;
	if (ncap > SIZE_MAX / sizeof(*s))
		return -ENOMEM;
	s = realloc(t->slots, (size_t)ncap * sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->slots = s;
	t->cap = (uint32_t)ncap;
	return 0;
}

int handle_alloc(struct handle_table *t, unsigned int type, void *obj,
		 uint64_t *out)
{
	struct handle_slot *s;
	uint32_t idx, gen;

	if (type == 0 || type >= HANDLE_TYPES || !obj)
		return -EINVAL;
	if (t->used < t->cap) {
		idx = t->used++;
		t->slots[idx].tag = 1;			/* first generation */
	} else if (t->free_head != HANDLE_NIL) {
		idx = t->free_head;
		t->free_head = t->slots[idx].next_free;
		if (t->free_head == HANDLE_NIL)
			t->free_tail = HANDLE_NIL;
	} else if (t->used < t->max) {
		int err = grow(t);

		if (err)
			return err;
		idx = t->used++;
		t->slots[idx].tag = 1;
	} else {
		return -ENOSPC;
	}
	s = &t->slots[idx];
	gen = tag_gen(s->tag);
	s->tag = (uint32_t)type << 24 | gen;
	s->obj = obj;
	s->next_free = HANDLE_NIL;
	t->live++;
	t->live_by_type[type]++;
	*out = AXON_HANDLE_MAKE(type, gen, idx);
	return 0;
}

/* The slot of a live handle of @type, or NULL. */
static inline struct handle_slot *resolve(const struct handle_table *t,
					  uint64_t handle, unsigned int type)
{
	uint32_t idx = AXON_HANDLE_INDEX(handle);
	struct handle_slot *s;

	/* A free slot's tag has type 0 and type 0 is refused here, so the
	 * tag compare also rejects free slots and generation 0. */
	if (unlikely(type == 0 || idx >= t->used ||
		     AXON_HANDLE_TYPE(handle) != type))
		return NULL;
	s = &t->slots[idx];
	if (unlikely(s->tag != (uint32_t)(handle >> 32)))
		return NULL;
	return s;
}

void *handle_lookup(const struct handle_table *t, uint64_t handle,
		    unsigned int type)
{
	struct handle_slot *s = resolve(t, handle, type);

	return s ? s->obj : NULL;
}

void *handle_free(struct handle_table *t, uint64_t handle, unsigned int type)
{
	struct handle_slot *s = resolve(t, handle, type);
	uint32_t idx = AXON_HANDLE_INDEX(handle), gen;
	void *obj;

	if (!s)
		return NULL;
	obj = s->obj;
	gen = tag_gen(s->tag) + 1;
	if (gen > HANDLE_GEN_MASK)
		gen = 1;			/* 0 is never a generation */
	s->tag = gen;				/* type 0: free */
	s->obj = NULL;
	s->next_free = HANDLE_NIL;
	if (t->free_tail == HANDLE_NIL)
		t->free_head = idx;
	else
		t->slots[t->free_tail].next_free = idx;
	t->free_tail = idx;
	t->live--;
	t->live_by_type[type]--;
	return obj;
}

bool handle_iter(const struct handle_table *t, unsigned int type,
		 uint32_t *pos, uint64_t *handle, void **obj)
{
	uint32_t i;

	for (i = *pos; i < t->used; i++) {
		const struct handle_slot *s = &t->slots[i];
		uint32_t ty = tag_type(s->tag);

		if (ty == 0 || (type != 0 && ty != type))
			continue;
		*handle = AXON_HANDLE_MAKE(ty, tag_gen(s->tag), i);
		if (obj)
			*obj = s->obj;
		*pos = i + 1;
		return true;
	}
	*pos = t->used;
	return false;
}

uint32_t handle_count(const struct handle_table *t, unsigned int type)
{
	if (type == 0)
		return t->live;
	if (type >= HANDLE_TYPES)
		return 0;
	return t->live_by_type[type];
}
