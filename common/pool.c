// SPDX-License-Identifier: MIT
/*
 * pool.c - fixed-size object allocator; see pool.h.
 *
 * Slabs come from malloc / aligned_alloc (not raw mmap) so that
 * LeakSanitizer still scans them for pointers the objects hold.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "pool.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n)	((void)(p), (void)(n))
#define UNPOISON(p, n)	((void)(p), (void)(n))
#endif

/* One cache line, so that 64-byte objects are line-aligned. */
struct pool_slab {
	struct pool_slab *next;
	size_t size;
	/* objects follow */
} __attribute__((aligned(64)));

void pool_init(struct pool *p, size_t obj_size)
{
	p->obj_size = ALIGN_UP(obj_size ? obj_size : 1, 16);
	p->free_list = NULL;
	p->bump = NULL;
	p->bump_end = NULL;
	p->slabs = NULL;
	p->next_slab = POOL_MIN_SLAB;
	p->live = 0;
}

static int new_slab(struct pool *p)
{
	size_t size = p->next_slab;
	struct pool_slab *s;

	if (size >= POOL_HUGE_SLAB) {
		s = aligned_alloc(POOL_HUGE_SLAB, size);
		if (!s)
			return -1;
		/* Best effort: one TLB entry and one fault per slab. */
		(void)madvise(s, size, MADV_HUGEPAGE);
	} else {
		s = aligned_alloc(64, size);
		if (!s)
			return -1;
		p->next_slab = size * 2;
	}
	s->size = size;
	s->next = p->slabs;
	p->slabs = s;
	p->bump = (char *)(s + 1);
	p->bump_end = (char *)s + size;
	POISON(p->bump, p->bump_end - p->bump);
	return 0;
}

void *pool_alloc(struct pool *p)
{
	void *obj = p->free_list;

	if (obj) {
		UNPOISON(obj, p->obj_size);
		p->free_list = *(void **)obj;
	} else {
		if ((size_t)(p->bump_end - p->bump) < p->obj_size &&
		    new_slab(p))
			return NULL;
		obj = p->bump;
		p->bump += p->obj_size;
		UNPOISON(obj, p->obj_size);
	}
	p->live++;
	return obj;
}

void pool_destroy(struct pool *p)
{
	struct pool_slab *s = p->slabs, *next;

	while (s) {
		next = s->next;
		UNPOISON(s, s->size);
		free(s);
		s = next;
	}
	pool_init(p, p->obj_size);
}

void pool_free(struct pool *p, void *obj)
{
	if (--p->live == 0) {
		/* Last one out: give all the memory back. */
		pool_destroy(p);
		return;
	}
	*(void **)obj = p->free_list;
	p->free_list = obj;
	POISON(obj, p->obj_size);
}
