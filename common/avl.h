/* SPDX-License-Identifier: MIT */
/*
 * avl.h - an intrusive AVL tree with parent pointers and optional
 * augmentation, the balanced-tree core under rangemap and vaalloc.
 *
 * Like the Linux rbtree, the tree knows nothing about keys: the caller embeds
 * a struct avl_node in its own structure, searches for the insertion point
 * itself, links the node there with avl_link() and then calls
 * avl_insert_fixup() to rebalance. All operations are iterative (no
 * recursion); the height of a tree of n nodes is below 1.45 log2(n + 2), so
 * every O(log n) bound below is at most ~45 steps for any realistic n.
 *
 * Augmentation: a caller that keeps per-subtree data in its nodes (e.g. the
 * largest free block below a node) passes an avl_update_fn. The tree calls it
 * on every node whose children changed, children before parents, so that the
 * function may read its children's (already updated) data. After changing a
 * node's own data in place without moving it, call avl_propagate().
 *
 * Node addresses are stable: erasing a node never moves another node's
 * contents, so pointers to the other nodes stay valid.
 *
 * Not thread-safe: callers serialise writers; concurrent readers are fine as
 * long as nobody writes.
 */
#ifndef AXON_COMMON_AVL_H
#define AXON_COMMON_AVL_H

#include <stddef.h>

struct avl_node {
	struct avl_node *left;		/* the search path reads these first */
	struct avl_node *right;
	struct avl_node *parent;
	int height;			/* 1 for a leaf */
};

struct avl_root {
	struct avl_node *node;		/* NULL when empty */
};

#define AVL_ROOT_INIT	{ NULL }

/*
 * Recompute @n's augmented data from @n itself and its children (which are
 * already up to date). Must not change the tree's shape.
 */
typedef void (*avl_update_fn)(struct avl_node *n);

/*
 * avl_link - place @n as a new leaf at @link (a NULL child pointer of
 * @parent, or &root->node for an empty tree), found by the caller's search.
 * The tree is unbalanced until avl_insert_fixup(). O(1).
 */
static inline void avl_link(struct avl_node *n, struct avl_node *parent,
			    struct avl_node **link)
{
	n->parent = parent;
	n->left = NULL;
	n->right = NULL;
	n->height = 1;
	*link = n;
}

/*
 * avl_insert_fixup - rebalance after avl_link(@n) and update augmented data
 * (@update may be NULL) on the path to the root. O(log n).
 */
void avl_insert_fixup(struct avl_root *root, struct avl_node *n,
		      avl_update_fn update);

/*
 * avl_erase - unlink @n (which must be in the tree) and rebalance. @n's own
 * fields are left stale; the caller owns its memory again. O(log n).
 */
void avl_erase(struct avl_root *root, struct avl_node *n,
	       avl_update_fn update);

/*
 * avl_propagate - after changing @n's own augmented inputs in place (the
 * node did not move and its order is unchanged), recompute @update on @n
 * and each of its ancestors. O(log n).
 */
void avl_propagate(struct avl_node *n, avl_update_fn update);

/* In-order navigation; NULL at either end / for an empty tree. O(log n)
 * worst case, O(1) amortised over a full walk. */
struct avl_node *avl_first(const struct avl_root *root);
struct avl_node *avl_last(const struct avl_root *root);
struct avl_node *avl_next(const struct avl_node *n);
struct avl_node *avl_prev(const struct avl_node *n);

/*
 * avl_destroy - empty the tree, calling @fn(node, @arg) once per node in
 * post-order (children before parents) after the node has been detached;
 * @fn typically frees the node and must not touch the tree. O(n), no
 * rebalancing, no recursion. The tree is empty afterwards.
 */
void avl_destroy(struct avl_root *root,
		 void (*fn)(struct avl_node *n, void *arg), void *arg);

/*
 * avl_verify - check the structure (parent links, heights, balance) of the
 * whole tree; for tests and debugging. Visits at most @max_nodes nodes.
 * Returns the number of nodes, or -1 on any inconsistency (including more
 * than @max_nodes nodes). O(n).
 */
long avl_verify(const struct avl_root *root, size_t max_nodes);

#endif /* AXON_COMMON_AVL_H */
