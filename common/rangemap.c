// SPDX-License-Identifier: MIT
/*
 * rangemap.c - disjoint ranges in an AVL tree keyed by base; see rangemap.h.
 *
 * Because the ranges are disjoint, ordering by base also orders them by end,
 * so a point lookup is a plain BST descent: at a node whose base is above the
 * address go left, if the address falls inside the node's range stop, else go
 * right.
 */
#include <errno.h>

#include "rangemap.h"

_Static_assert(sizeof(struct rangemap_entry) <= 64, "one cache line");

static inline struct rangemap_entry *to_entry(const struct avl_node *n)
{
	return n ? container_of(n, struct rangemap_entry, node) : NULL;
}

void rangemap_init(struct rangemap *m)
{
	m->root.node = NULL;
	m->count = 0;
	pool_init(&m->pool, sizeof(struct rangemap_entry));
}

int rangemap_insert(struct rangemap *m, uint64_t base, uint64_t len,
		    void *value, struct rangemap_entry **out)
{
	struct avl_node **link = &m->root.node, *parent = NULL;
	struct rangemap_entry *e;

	if (len == 0 || len > UINT64_MAX - base)
		return -EINVAL;
	/*
	 * The new range's in-order neighbours are both on the search path, so
	 * checking every node on the path against the new range is enough.
	 */
	while (*link) {
		struct rangemap_entry *cur = to_entry(*link);

		parent = *link;
		if (base < cur->base) {
			if (len > cur->base - base)	/* runs into cur */
				return -EEXIST;
			link = &parent->left;
		} else {
			if (base - cur->base < cur->len) /* starts in cur */
				return -EEXIST;
			link = &parent->right;
		}
	}
	e = pool_alloc(&m->pool);
	if (!e)
		return -ENOMEM;
	e->base = base;
	e->len = len;
	e->value = value;
	avl_link(&e->node, parent, link);
	avl_insert_fixup(&m->root, &e->node, NULL);
	m->count++;
	if (out)
		*out = e;
	return 0;
}

void *rangemap_erase(struct rangemap *m, struct rangemap_entry *e)
{
	void *value = e->value;

	avl_erase(&m->root, &e->node, NULL);
	m->count--;
	pool_free(&m->pool, e);
	return value;
}

int rangemap_remove(struct rangemap *m, uint64_t base, void **value)
{
	struct rangemap_entry *e = rangemap_find(m, base);
	void *v;

	if (!e || e->base != base)
		return -ENOENT;
	v = rangemap_erase(m, e);
	if (value)
		*value = v;
	return 0;
}

struct rangemap_entry *rangemap_find(const struct rangemap *m, uint64_t addr)
{
	const struct avl_node *n = m->root.node;

	while (n) {
		struct rangemap_entry *e = to_entry(n);

		if (addr < e->base)
			n = n->left;
		else if (addr - e->base < e->len)
			return e;
		else
			n = n->right;
	}
	return NULL;
}

struct rangemap_entry *rangemap_find_span(const struct rangemap *m,
					  uint64_t addr, uint64_t len)
{
	struct rangemap_entry *e = rangemap_find(m, addr);

	/* addr - base < e->len, so the subtraction cannot wrap; comparing
	 * against the room left in e also rejects addr + len wrapping. */
	if (e && len > e->len - (addr - e->base))
		return NULL;
	return e;
}

struct rangemap_entry *rangemap_find_ge(const struct rangemap *m,
					uint64_t addr)
{
	const struct avl_node *n = m->root.node, *best = NULL;

	while (n) {
		if (to_entry(n)->base >= addr) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return to_entry(best);
}

struct rangemap_entry *rangemap_first(const struct rangemap *m)
{
	return to_entry(avl_first(&m->root));
}

struct rangemap_entry *rangemap_next(const struct rangemap *m,
				     const struct rangemap_entry *e)
{
	(void)m;
	return to_entry(avl_next(&e->node));
}

struct destroy_ctx {
	void (*fn)(uint64_t base, uint64_t len, void *value, void *arg);
	void *arg;
};

static void destroy_one(struct avl_node *n, void *arg)
{
	struct destroy_ctx *ctx = arg;
	struct rangemap_entry *e = to_entry(n);

	if (ctx->fn)
		ctx->fn(e->base, e->len, e->value, ctx->arg);
}

void rangemap_destroy(struct rangemap *m,
		      void (*fn)(uint64_t base, uint64_t len, void *value,
				 void *arg),
		      void *arg)
{
	struct destroy_ctx ctx = { fn, arg };

	if (fn)
		avl_destroy(&m->root, destroy_one, &ctx);
	m->root.node = NULL;
	m->count = 0;
	pool_destroy(&m->pool);
}
