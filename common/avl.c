// SPDX-License-Identifier: MIT
/*
 * avl.c - intrusive AVL tree; see avl.h.
 *
 * Rebalancing walks up from the lowest changed node, recomputing height (and
 * augmented data) at each step: at most ~1.45 log2(n) steps, each O(1), and
 * O(1) amortised for unaugmented insertions, which stop early.
 */
#include "avl.h"

static inline int h(const struct avl_node *n)
{
	return n ? n->height : 0;
}

static inline void update_node(struct avl_node *n, avl_update_fn update)
{
	int hl = h(n->left), hr = h(n->right);

	n->height = 1 + (hl > hr ? hl : hr);
	if (update)
		update(n);
}

/* Make @parent (or the root) point at @new where it pointed at @old. */
static inline void replace_child(struct avl_root *root,
				 struct avl_node *parent,
				 struct avl_node *old, struct avl_node *new)
{
	if (!parent)
		root->node = new;
	else if (parent->left == old)
		parent->left = new;
	else
		parent->right = new;
}

/* @n's child on side @dir (AVL_LEFT or AVL_RIGHT; !dir is the other side):
 * rotations, rebalancing and the walks are written once, for both mirror
 * images. */
enum { AVL_LEFT, AVL_RIGHT };

static inline struct avl_node **child(const struct avl_node *n, int dir)
{
	return (struct avl_node **)(dir == AVL_LEFT ? &n->left : &n->right);
}

/*
 * Rotate at @x towards @dir; for AVL_LEFT (AVL_RIGHT is the mirror image):
 *
 *     x              y
 *    / \            / \
 *   a   y    =>    x   c
 *      / \        / \
 *     b   c      a   b
 */
static struct avl_node *rotate(struct avl_root *root, struct avl_node *x, int dir,
			       avl_update_fn update)
{
	struct avl_node *y = *child(x, !dir), *p = x->parent;
	struct avl_node *b = *child(y, dir);

	*child(x, !dir) = b;
	if (b)
		b->parent = x;
	*child(y, dir) = x;
	x->parent = y;
	y->parent = p;
	replace_child(root, p, x, y);
	update_node(x, update);
	update_node(y, update);
	return y;
}

/*
 * @n's subtrees are valid AVL trees whose heights differ by at most 2.
 * Restore balance at @n; return the node now at @n's position.
 */
static struct avl_node *rebalance(struct avl_root *root, struct avl_node *n,
				  avl_update_fn update)
{
	int bal = h(n->left) - h(n->right);

	if (bal > 1 || bal < -1) {
		int tall = bal > 1 ? AVL_LEFT : AVL_RIGHT;
		struct avl_node *c = *child(n, tall);

		/* c leaning away from the tall side: straighten it first. */
		if (h(*child(c, tall)) < h(*child(c, !tall)))
			rotate(root, c, tall, update);
		return rotate(root, n, !tall, update);
	}
	update_node(n, update);
	return n;
}

/*
 * Rebalance from @n up to the root. Without augmentation the walk stops at
 * the first node whose subtree height came out unchanged (nothing above it
 * can change); with augmentation it always reaches the root, since the
 * augmented data of every ancestor may depend on what changed below.
 */
static void fixup(struct avl_root *root, struct avl_node *n,
		  avl_update_fn update)
{
	while (n) {
		int old = n->height;

		n = rebalance(root, n, update);
		if (!update && n->height == old)
			break;
		n = n->parent;
	}
}

void avl_insert_fixup(struct avl_root *root, struct avl_node *n,
		      avl_update_fn update)
{
	/* The new leaf is balanced (height 1 from avl_link); its parent is
	 * the first node whose height may change. */
	if (update)
		update(n);
	fixup(root, n->parent, update);
}

void avl_erase(struct avl_root *root, struct avl_node *n,
	       avl_update_fn update)
{
	struct avl_node *from;		/* lowest node whose subtree changed */

	if (!n->left || !n->right) {
		struct avl_node *child = n->left ? n->left : n->right;

		from = n->parent;
		if (child)
			child->parent = from;
		replace_child(root, from, n, child);
	} else {
		/* Splice in the successor s (leftmost of the right subtree,
		 * so s has no left child) in n's place. */
		struct avl_node *s = n->right;

		while (s->left)
			s = s->left;
		if (s == n->right) {
			from = s;
		} else {
			from = s->parent;
			from->left = s->right;
			if (s->right)
				s->right->parent = from;
			s->right = n->right;
			n->right->parent = s;
		}
		s->left = n->left;
		n->left->parent = s;
		s->parent = n->parent;
		s->height = n->height;
		replace_child(root, n->parent, n, s);
	}
	fixup(root, from, update);
}

void avl_propagate(struct avl_node *n, avl_update_fn update)
{
	for (; n; n = n->parent)
		update_node(n, update);
}

/* The last node on side @dir of the subtree at @n (NULL for none). */
static inline struct avl_node *outermost(const struct avl_node *n, int dir)
{
	if (n)
		while (*child(n, dir))
			n = *child(n, dir);
	return (struct avl_node *)n;
}

/* In-order neighbour of @n on side @dir (AVL_RIGHT: the next). */
static inline struct avl_node *neighbour(const struct avl_node *n, int dir)
{
	const struct avl_node *p;

	if (*child(n, dir))
		return outermost(*child(n, dir), !dir);
	while ((p = n->parent) && *child(p, dir) == n)
		n = p;
	return (struct avl_node *)p;
}

struct avl_node *avl_first(const struct avl_root *root)
{
	return outermost(root->node, AVL_LEFT);
}

struct avl_node *avl_last(const struct avl_root *root)
{
	return outermost(root->node, AVL_RIGHT);
}

struct avl_node *avl_next(const struct avl_node *n)
{
	return neighbour(n, AVL_RIGHT);
}

struct avl_node *avl_prev(const struct avl_node *n)
{
	return neighbour(n, AVL_LEFT);
}

void avl_destroy(struct avl_root *root,
		 void (*fn)(struct avl_node *n, void *arg), void *arg)
{
	struct avl_node *n = root->node, *p;

	root->node = NULL;
	while (n) {
		if (n->left) {
			n = n->left;
		} else if (n->right) {
			n = n->right;
		} else {
			/* A leaf: detach it from its parent, hand it out. */
			p = n->parent;
			if (p) {
				if (p->left == n)
					p->left = NULL;
				else
					p->right = NULL;
			}
			if (fn)
				fn(n, arg);
			n = p;
		}
	}
}

long avl_verify(const struct avl_root *root, size_t max_nodes)
{
	const struct avl_node *n;
	size_t count = 0;

	if (root->node && root->node->parent)
		return -1;
	for (n = avl_first(root); n; n = avl_next(n)) {
		int hl = h(n->left), hr = h(n->right);

		if (++count > max_nodes)
			return -1;
		if (n->left && n->left->parent != n)
			return -1;
		if (n->right && n->right->parent != n)
			return -1;
		if (n->height != 1 + (hl > hr ? hl : hr))
			return -1;
		if (hl - hr > 1 || hr - hl > 1)
			return -1;
	}
	return (long)count;
}
