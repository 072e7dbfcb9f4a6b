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

/*
 *     x              y
 *    / \            / \
 *   a   y    =>    x   c
 *      / \        / \
 *     b   c      a   b
 */
static struct avl_node *rotate_left(struct avl_root *root, struct avl_node *x,
				    avl_update_fn update)
{
	struct avl_node *y = x->right, *p = x->parent;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	y->left = x;
	x->parent = y;
	y->parent = p;
	replace_child(root, p, x, y);
	update_node(x, update);
	update_node(y, update);
	return y;
}

static struct avl_node *rotate_right(struct avl_root *root, struct avl_node *x,
				     avl_update_fn update)
{
	struct avl_node *y = x->left, *p = x->parent;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	y->right = x;
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

	if (bal > 1) {
		if (h(n->left->left) < h(n->left->right))
			rotate_left(root, n->left, update);
		return rotate_right(root, n, update);
	}
	if (bal < -1) {
		if (h(n->right->right) < h(n->right->left))
			rotate_right(root, n->right, update);
		return rotate_left(root, n, update);
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

struct avl_node *avl_first(const struct avl_root *root)
{
	struct avl_node *n = root->node;

	if (n)
		while (n->left)
			n = n->left;
	return n;
}

struct avl_node *avl_last(const struct avl_root *root)
{
	struct avl_node *n = root->node;

	if (n)
		while (n->right)
			n = n->right;
	return n;
}

struct avl_node *avl_next(const struct avl_node *n)
{
	const struct avl_node *p;

	if (n->right) {
		n = n->right;
		while (n->left)
			n = n->left;
		return (struct avl_node *)n;
	}
	while ((p = n->parent) && p->right == n)
		n = p;
	return (struct avl_node *)p;
}

struct avl_node *avl_prev(const struct avl_node *n)
{
	const struct avl_node *p;

	if (n->left) {
		n = n->left;
		while (n->right)
			n = n->right;
		return (struct avl_node *)n;
	}
	while ((p = n->parent) && p->left == n)
		n = p;
	return (struct avl_node *)p;
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
