// SPDX-License-Identifier: MIT
/*
 * vaalloc.c - address-ordered first-fit allocator over a fixed window; see
 * vaalloc.h.
 *
 * Two AVL trees of struct va_range, both keyed by address:
 *   free_tree   free ranges, augmented with max_len (the largest len in the
 *               subtree), maximal: two free ranges never touch;
 *   alloc_tree  live allocations.
 * Together they tile the window exactly. A range node moves between the
 * trees: an exact-fit allocation takes over its free range's node and a free
 * that cannot merge with a neighbour reuses the allocation's node, so
 * vaalloc_free never allocates.
 */
#include <errno.h>
#include <stdbool.h>

#include "vaalloc.h"

struct va_range {
	uint64_t base;
	uint64_t len;
	struct avl_node node;
	uint64_t max_len;	/* free_tree only: max len in this subtree */
};

static inline struct va_range *R(const struct avl_node *n)
{
	return n ? container_of(n, struct va_range, node) : NULL;
}

static void update_max(struct avl_node *n)
{
	struct va_range *r = R(n);
	uint64_t m = r->len;

	if (n->left && R(n->left)->max_len > m)
		m = R(n->left)->max_len;
	if (n->right && R(n->right)->max_len > m)
		m = R(n->right)->max_len;
	r->max_len = m;
}

/* Link @r into @root by its base (bases are unique within a tree). */
static void insert_by_base(struct avl_root *root, struct va_range *r,
			   avl_update_fn update)
{
	struct avl_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = r->base < R(parent)->base ? &parent->left
						 : &parent->right;
	}
	avl_link(&r->node, parent, link);
	avl_insert_fixup(root, &r->node, update);
}

int vaalloc_init(struct vaalloc *va, uint64_t base, uint64_t size)
{
	struct va_range *r;

	if (size == 0 || size > INT64_MAX || size > UINT64_MAX - base ||
	    !IS_ALIGNED(base, VAALLOC_MIN_ALIGN) ||
	    !IS_ALIGNED(size, VAALLOC_MIN_ALIGN))
		return -EINVAL;
	pool_init(&va->pool, sizeof(struct va_range));
	r = pool_alloc(&va->pool);
	if (!r)
		return -ENOMEM;
	va->base = base;
	va->size = size;
	va->free_tree.node = NULL;
	va->alloc_tree.node = NULL;
	va->used = 0;
	va->nr_allocs = 0;
	va->nr_free = 1;
	r->base = base;
	r->len = size;
	insert_by_base(&va->free_tree, r, update_max);
	return 0;
}

void vaalloc_destroy(struct vaalloc *va)
{
	pool_destroy(&va->pool);
	va->free_tree.node = NULL;
	va->alloc_tree.node = NULL;
	va->used = 0;
	va->nr_allocs = 0;
	va->nr_free = 0;
}

/* Does @size fit in @r at an @align-ed address? Lowest such in *start. */
static bool fit_in(const struct va_range *r, uint64_t size, uint64_t align,
		   uint64_t *start)
{
	uint64_t s, pad;

	if (!align_up_u64_checked(r->base, align, &s))
		return false;
	pad = s - r->base;
	if (pad > r->len || r->len - pad < size)
		return false;
	*start = s;
	return true;
}

/* The lowest-addressed free range with len >= @need. O(log n). */
static struct va_range *find_lowest_ge(const struct vaalloc *va,
				       uint64_t need)
{
	struct avl_node *n = va->free_tree.node;

	if (!n || R(n)->max_len < need)
		return NULL;
	for (;;) {
		if (n->left && R(n->left)->max_len >= need)
			n = n->left;
		else if (R(n)->len >= need)
			return R(n);
		else
			n = n->right;	/* max_len says it is down there */
	}
}

/*
 * The lowest-addressed free range that can hold @size at an @align-ed
 * address: an in-order walk that skips subtrees whose max_len < size.
 * O(free ranges) worst case.
 */
static struct va_range *find_exact(const struct vaalloc *va, uint64_t size,
				   uint64_t align, uint64_t *start)
{
	struct avl_node *n = va->free_tree.node, *p;

	if (!n || R(n)->max_len < size)
		return NULL;
	for (;;) {
		/* Descend to the leftmost candidate of n's subtree. */
		while (n->left && R(n->left)->max_len >= size)
			n = n->left;
		for (;;) {
			if (fit_in(R(n), size, align, start))
				return R(n);
			if (n->right && R(n->right)->max_len >= size) {
				n = n->right;
				break;		/* descend again */
			}
			/* Climb until we arrive from a left child. */
			for (;;) {
				p = n->parent;
				if (!p)
					return NULL;
				if (p->left == n)
					break;
				n = p;
			}
			n = p;
		}
	}
}

int vaalloc_alloc(struct vaalloc *va, uint64_t size, uint64_t align,
		  uint64_t *addr)
{
	struct va_range *r = NULL, *a, *t = NULL;
	uint64_t need, start = 0, head, tail;

	if (size == 0)
		return -EINVAL;
	if (align < VAALLOC_MIN_ALIGN)
		align = VAALLOC_MIN_ALIGN;
	else if (!IS_POWER_OF_2(align))
		return -EINVAL;
	if (size > va->size)
		return -ENOSPC;
	size = ALIGN_UP(size, VAALLOC_MIN_ALIGN);	/* size <= 2^63 */

	/* Free ranges are 256-aligned, so at most align - 256 bytes of
	 * padding: a range of need bytes fits wherever it lies. */
	if (!__builtin_add_overflow(size, align - VAALLOC_MIN_ALIGN, &need))
		r = find_lowest_ge(va, need);
	if (!r || !fit_in(r, size, align, &start))
		r = find_exact(va, size, align, &start);
	if (!r)
		return -ENOSPC;

	head = start - r->base;
	tail = r->len - head - size;
	if (head == 0 && tail == 0) {
		/* Exact fit: the free range's node becomes the allocation. */
		avl_erase(&va->free_tree, &r->node, update_max);
		va->nr_free--;
		a = r;
	} else {
		a = pool_alloc(&va->pool);
		if (!a)
			return -ENOMEM;
		if (head && tail) {
			t = pool_alloc(&va->pool);
			if (!t) {
				pool_free(&va->pool, a);
				return -ENOMEM;
			}
		}
		/* r keeps its place in the tree: its base only moves within
		 * the gap between its neighbours. */
		if (head == 0) {
			r->base += size;
			r->len = tail;
		} else {
			r->len = head;
		}
		avl_propagate(&r->node, update_max);
		if (t) {
			t->base = start + size;
			t->len = tail;
			insert_by_base(&va->free_tree, t, update_max);
			va->nr_free++;
		}
	}
	a->base = start;
	a->len = size;
	a->max_len = 0;
	insert_by_base(&va->alloc_tree, a, NULL);
	va->used += size;
	va->nr_allocs++;
	*addr = start;
	return 0;
}

/* The live allocation containing @addr. */
static struct va_range *find_alloc(const struct vaalloc *va, uint64_t addr)
{
	const struct avl_node *n = va->alloc_tree.node;

	while (n) {
		struct va_range *r = R(n);

		if (addr < r->base)
			n = n->left;
		else if (addr - r->base < r->len)
			return r;
		else
			n = n->right;
	}
	return NULL;
}

int64_t vaalloc_free(struct vaalloc *va, uint64_t addr)
{
	struct avl_node **link = &va->free_tree.node, *parent = NULL;
	struct va_range *a = find_alloc(va, addr), *pred = NULL, *succ = NULL;
	bool merge_pred, merge_succ;
	uint64_t len;

	if (!a || a->base != addr)
		return -ENOENT;
	len = a->len;
	avl_erase(&va->alloc_tree, &a->node, NULL);
	va->used -= len;
	va->nr_allocs--;

	/* Neighbouring free ranges, and where a new one would be linked. */
	while (*link) {
		parent = *link;
		if (R(parent)->base < addr) {
			pred = R(parent);
			link = &parent->right;
		} else {
			succ = R(parent);
			link = &parent->left;
		}
	}
	merge_pred = pred && pred->base + pred->len == addr;
	merge_succ = succ && addr + len == succ->base;

	if (merge_pred && merge_succ) {
		uint64_t extra = succ->len;

		avl_erase(&va->free_tree, &succ->node, update_max);
		pool_free(&va->pool, succ);
		va->nr_free--;
		pred->len += len + extra;
		avl_propagate(&pred->node, update_max);
		pool_free(&va->pool, a);
	} else if (merge_pred) {
		pred->len += len;
		avl_propagate(&pred->node, update_max);
		pool_free(&va->pool, a);
	} else if (merge_succ) {
		succ->base = addr;
		succ->len += len;
		avl_propagate(&succ->node, update_max);
		pool_free(&va->pool, a);
	} else {
		avl_link(&a->node, parent, link);
		avl_insert_fixup(&va->free_tree, &a->node, update_max);
		va->nr_free++;
	}
	return (int64_t)len;
}

int vaalloc_lookup(const struct vaalloc *va, uint64_t addr, uint64_t *base,
		   uint64_t *size)
{
	const struct va_range *r = find_alloc(va, addr);

	if (!r)
		return -ENOENT;
	if (base)
		*base = r->base;
	if (size)
		*size = r->len;
	return 0;
}

int vaalloc_next(const struct vaalloc *va, uint64_t addr, uint64_t *base,
		 uint64_t *size)
{
	const struct avl_node *n = va->alloc_tree.node, *best = NULL;

	while (n) {
		if (R(n)->base >= addr) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	if (!best)
		return -ENOENT;
	if (base)
		*base = R(best)->base;
	if (size)
		*size = R(best)->len;
	return 0;
}

void vaalloc_stats(const struct vaalloc *va, struct vaalloc_stats *st)
{
	st->window_size = va->size;
	st->used_bytes = va->used;
	st->free_bytes = va->size - va->used;
	st->largest_free = va->free_tree.node ? R(va->free_tree.node)->max_len
					      : 0;
	st->live_allocs = va->nr_allocs;
	st->free_ranges = va->nr_free;
}

int vaalloc_verify(const struct vaalloc *va)
{
	const struct avl_node *f, *a;
	uint64_t cursor = va->base, end = va->base + va->size, used = 0;
	size_t nf = 0, na = 0;
	bool prev_free = false;

	if (avl_verify(&va->free_tree, va->nr_free) != (long)va->nr_free)
		return -1;
	if (avl_verify(&va->alloc_tree, va->nr_allocs) != (long)va->nr_allocs)
		return -2;
	for (f = avl_first(&va->free_tree); f; f = avl_next(f)) {
		uint64_t m = R(f)->len;

		if (f->left && R(f->left)->max_len > m)
			m = R(f->left)->max_len;
		if (f->right && R(f->right)->max_len > m)
			m = R(f->right)->max_len;
		if (R(f)->max_len != m)
			return -3;
	}
	/* Free ranges and allocations, merged by address, tile the window. */
	f = avl_first(&va->free_tree);
	a = avl_first(&va->alloc_tree);
	while (f || a) {
		const struct va_range *r;
		bool is_free;

		if (f && R(f)->base == cursor) {
			r = R(f);
			is_free = true;
			f = avl_next(f);
			nf++;
		} else if (a && R(a)->base == cursor) {
			r = R(a);
			is_free = false;
			a = avl_next(a);
			na++;
			used += r->len;
		} else {
			return -4;		/* gap or overlap */
		}
		if (r->len == 0 || !IS_ALIGNED(r->len, VAALLOC_MIN_ALIGN))
			return -5;
		if (r->len > end - cursor)
			return -6;		/* past the window */
		if (is_free && prev_free)
			return -7;		/* not coalesced */
		prev_free = is_free;
		cursor += r->len;
	}
	if (cursor != end)
		return -8;
	if (nf != va->nr_free || na != va->nr_allocs || used != va->used)
		return -9;
	return 0;
}
