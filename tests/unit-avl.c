// SPDX-License-Identifier: MIT
/*
 * unit-avl: common/avl directly, against a presence array: random inserts
 * and erases, with and without augmentation; after each batch the
 * structure (avl_verify), both in-order walks (avl_first/avl_next and
 * avl_last/avl_prev) and the augmented sum at the root. rangemap and
 * vaalloc use the tree too, but walk it in one direction only.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "avl.h"

/* ck_assert records a mark point (a write) per call; use this in loops. */
#define REQUIRE(expr)							\
	do {								\
		if (!(expr))						\
			ck_abort_msg("requirement failed: %s", #expr);	\
	} while (0)

#define NKEYS	4096

struct item {
	struct avl_node node;	/* first: the casts below rely on it */
	uint32_t key;
	uint64_t sum;		/* of the keys in the subtree (augmented) */
};

static struct item items[NKEYS];
static bool present[NKEYS];

static struct item *item_of(const struct avl_node *n)
{
	return (struct item *)n;
}

static void update_sum(struct avl_node *n)
{
	item_of(n)->sum = item_of(n)->key +
			  (n->left ? item_of(n->left)->sum : 0) +
			  (n->right ? item_of(n->right)->sum : 0);
}

static void insert(struct avl_root *root, struct item *it, avl_update_fn update)
{
	struct avl_node **link = &root->node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = it->key < item_of(parent)->key ? &parent->left : &parent->right;
	}
	avl_link(&it->node, parent, link);
	avl_insert_fixup(root, &it->node, update);
}

static uint64_t rng_state;

/* splitmix64: deterministic for a given seed. */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The tree holds exactly the present keys, in order both ways. */
static void check_tree(const struct avl_root *root, long count, bool augmented)
{
	const struct avl_node *n;
	uint64_t sum = 0, want_sum = 0;
	long seen = 0;
	uint32_t k;

	REQUIRE(avl_verify(root, NKEYS) == count);
	k = 0;
	for (n = avl_first(root); n; n = avl_next(n), seen++) {
		while (k < NKEYS && !present[k])
			k++;
		REQUIRE(k < NKEYS && item_of(n)->key == k);
		sum += k++;
	}
	REQUIRE(seen == count);
	k = NKEYS;
	seen = 0;
	for (n = avl_last(root); n; n = avl_prev(n), seen++) {
		while (k > 0 && !present[k - 1])
			k--;
		REQUIRE(k > 0 && item_of(n)->key == k - 1);
		want_sum += --k;
	}
	REQUIRE(seen == count);
	REQUIRE(sum == want_sum);
	if (augmented && root->node)
		REQUIRE(item_of(root->node)->sum == sum);
}

static void random_run(avl_update_fn update, uint64_t seed, unsigned long steps)
{
	struct avl_root root = { 0 };
	long count = 0;
	unsigned long i;
	uint32_t k;

	rng_state = seed;
	for (k = 0; k < NKEYS; k++) {
		items[k].key = k;
		present[k] = false;
	}
	for (i = 0; i < steps; i++) {
		k = (uint32_t)(rng() % NKEYS);
		if (present[k]) {
			avl_erase(&root, &items[k].node, update);
			count--;
		} else {
			insert(&root, &items[k], update);
			count++;
		}
		present[k] = !present[k];
		if (i % 257 == 0)
			check_tree(&root, count, update != NULL);
	}
	check_tree(&root, count, update != NULL);
}

START_TEST(test_empty)
{
	struct avl_root root = { 0 };

	ck_assert_ptr_null(avl_first(&root));
	ck_assert_ptr_null(avl_last(&root));
	ck_assert_int_eq(avl_verify(&root, 0), 0);
}
END_TEST

/* Ascending and descending runs: every insertion rotates the same way. */
START_TEST(test_sequential)
{
	struct avl_root root = { 0 };
	uint32_t k;

	for (k = 0; k < NKEYS; k++) {
		items[k].key = k;
		present[k] = true;
	}
	for (k = 0; k < NKEYS / 2; k++)
		insert(&root, &items[k], update_sum);
	for (k = NKEYS; k-- > NKEYS / 2;)
		insert(&root, &items[k], update_sum);
	check_tree(&root, NKEYS, true);
	/* Height of a 4096-node AVL tree: at most 1.44 log2(n + 2). */
	ck_assert_int_le(root.node->height, 17);
	for (k = 0; k < NKEYS; k += 2) {
		avl_erase(&root, &items[k].node, update_sum);
		present[k] = false;
	}
	check_tree(&root, NKEYS / 2, true);
}
END_TEST

START_TEST(test_random_plain)
{
	random_run(NULL, 1, 200000);
}
END_TEST

START_TEST(test_random_augmented)
{
	random_run(update_sum, 2, 200000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("avl");
	TCase *tc = tcase_create("avl");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_sequential);
	tcase_add_test(tc, test_random_plain);
	tcase_add_test(tc, test_random_augmented);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
