// SPDX-License-Identifier: MIT
/*
 * unit-rangemap: common/rangemap against a byte-map reference model, its
 * edge cases (boundaries, zero length, the top of the address space) and
 * 2^20 ranges.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rangemap.h"

/* ck_assert records a mark point (a write) per call; use this in loops. */
#define REQUIRE(expr)							\
	do {								\
		if (unlikely(!(expr)))					\
			ck_abort_msg("requirement failed: %s", #expr);	\
	} while (0)

static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

/* splitmix64: deterministic for a given seed. */
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(uint64_t n)
{
	return rng() % n;
}

static void shuffle(uint32_t *a, size_t n)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rnd(i + 1);
		uint32_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

static int tree_height(const struct rangemap *m)
{
	return m->root.node ? m->root.node->height : 0;
}

static void *V(uintptr_t x)
{
	return (void *)x;
}

/* ------------------------------------------------------------------------ */

START_TEST(test_empty)
{
	struct rangemap m;
	void *v = V(1);

	rangemap_init(&m);
	ck_assert_ptr_null(rangemap_find(&m, 0));
	ck_assert_ptr_null(rangemap_find(&m, UINT64_MAX));
	ck_assert_ptr_null(rangemap_find_span(&m, 0, 0));
	ck_assert_ptr_null(rangemap_find_ge(&m, 0));
	ck_assert_ptr_null(rangemap_first(&m));
	ck_assert_uint_eq(rangemap_count(&m), 0);
	ck_assert_int_eq(rangemap_remove(&m, 0, &v), -ENOENT);
	ck_assert_ptr_eq(v, V(1));
	ck_assert_int_eq(avl_verify(&m.root, 0), 0);
	rangemap_destroy(&m, NULL, NULL);
	rangemap_init(&m);
	ck_assert_uint_eq(rangemap_count(&m), 0);
}
END_TEST

START_TEST(test_boundaries)
{
	struct rangemap m;
	struct rangemap_entry *e, *e2;
	void *v;

	rangemap_init(&m);
	ck_assert_int_eq(rangemap_insert(&m, 100, 100, V(1), &e), 0);
	ck_assert_uint_eq(e->base, 100);
	ck_assert_uint_eq(e->len, 100);
	ck_assert_ptr_eq(e->value, V(1));

	/* Overlap at and around each boundary. */
	ck_assert_int_eq(rangemap_insert(&m, 99, 2, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 0, 101, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 100, 1, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 100, 100, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 150, 1, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 199, 1, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 199, 50, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 0, 1000, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 0, UINT64_MAX, V(9), NULL),
			 -EEXIST);
	ck_assert_uint_eq(rangemap_count(&m), 1);

	/* Touching is not overlapping. */
	ck_assert_int_eq(rangemap_insert(&m, 0, 100, V(2), NULL), 0);
	ck_assert_int_eq(rangemap_insert(&m, 200, 100, V(3), &e2), 0);
	ck_assert_uint_eq(rangemap_count(&m), 3);

	/* Point lookups at each boundary. */
	ck_assert_ptr_eq(rangemap_find(&m, 0)->value, V(2));
	ck_assert_ptr_eq(rangemap_find(&m, 99)->value, V(2));
	ck_assert_ptr_eq(rangemap_find(&m, 100), e);
	ck_assert_ptr_eq(rangemap_find(&m, 199), e);
	ck_assert_ptr_eq(rangemap_find(&m, 200), e2);
	ck_assert_ptr_eq(rangemap_find(&m, 299), e2);
	ck_assert_ptr_null(rangemap_find(&m, 300));
	ck_assert_ptr_null(rangemap_find(&m, UINT64_MAX));

	/* Spans: inside one range only. */
	ck_assert_ptr_eq(rangemap_find_span(&m, 100, 100), e);
	ck_assert_ptr_eq(rangemap_find_span(&m, 150, 50), e);
	ck_assert_ptr_eq(rangemap_find_span(&m, 199, 1), e);
	ck_assert_ptr_eq(rangemap_find_span(&m, 199, 0), e);
	ck_assert_ptr_null(rangemap_find_span(&m, 100, 101));
	ck_assert_ptr_null(rangemap_find_span(&m, 150, 51));
	ck_assert_ptr_null(rangemap_find_span(&m, 150, 100)); /* 2 ranges */
	ck_assert_ptr_null(rangemap_find_span(&m, 99, 2));
	ck_assert_ptr_null(rangemap_find_span(&m, 300, 0));
	ck_assert_ptr_null(rangemap_find_span(&m, 150, UINT64_MAX));
	ck_assert_ptr_null(rangemap_find_span(&m, 150, UINT64_MAX - 149));

	/* find_ge */
	ck_assert_ptr_eq(rangemap_find_ge(&m, 0)->value, V(2));
	ck_assert_ptr_eq(rangemap_find_ge(&m, 1), e);
	ck_assert_ptr_eq(rangemap_find_ge(&m, 100), e);
	ck_assert_ptr_eq(rangemap_find_ge(&m, 101), e2);
	ck_assert_ptr_null(rangemap_find_ge(&m, 201));

	/* A hole between ranges. */
	ck_assert_int_eq(rangemap_remove(&m, 100, &v), 0);
	ck_assert_ptr_eq(v, V(1));
	ck_assert_ptr_null(rangemap_find(&m, 100));
	ck_assert_ptr_null(rangemap_find_span(&m, 50, 100));
	ck_assert_int_eq(rangemap_insert(&m, 120, 10, V(4), NULL), 0);
	ck_assert_int_eq(rangemap_insert(&m, 99, 21, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 100, 20, V(5), NULL), 0);
	ck_assert_int_eq(rangemap_insert(&m, 129, 71, V(9), NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 130, 70, V(6), NULL), 0);
	ck_assert_uint_eq(rangemap_count(&m), 5);

	/* Remove only by exact base. */
	ck_assert_int_eq(rangemap_remove(&m, 101, NULL), -ENOENT);
	ck_assert_int_eq(rangemap_remove(&m, 300, NULL), -ENOENT);
	ck_assert_int_eq(rangemap_remove(&m, 100, NULL), 0);
	ck_assert_int_eq(rangemap_remove(&m, 100, NULL), -ENOENT);
	ck_assert_int_eq(avl_verify(&m.root, 100), 4);
	rangemap_destroy(&m, NULL, NULL);
	ck_assert_uint_eq(rangemap_count(&m), 0);
}
END_TEST

START_TEST(test_invalid_and_top)
{
	struct rangemap m;
	struct rangemap_entry *e;
	const uint64_t top = UINT64_MAX;

	rangemap_init(&m);
	ck_assert_int_eq(rangemap_insert(&m, 5, 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(rangemap_insert(&m, top, 1, NULL, NULL), -EINVAL);
	ck_assert_int_eq(rangemap_insert(&m, top, 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(rangemap_insert(&m, top - 10, 11, NULL, NULL),
			 -EINVAL);
	ck_assert_int_eq(rangemap_insert(&m, 1, top, NULL, NULL), -EINVAL);
	ck_assert_int_eq(rangemap_insert(&m, top / 2, top, NULL, NULL),
			 -EINVAL);
	ck_assert_uint_eq(rangemap_count(&m), 0);

	/* Ending exactly at UINT64_MAX is allowed. */
	ck_assert_int_eq(rangemap_insert(&m, top - 10, 10, V(1), &e), 0);
	ck_assert_ptr_eq(rangemap_find(&m, top - 10), e);
	ck_assert_ptr_eq(rangemap_find(&m, top - 1), e);
	ck_assert_ptr_null(rangemap_find(&m, top));
	ck_assert_ptr_null(rangemap_find(&m, top - 11));
	ck_assert_ptr_eq(rangemap_find_span(&m, top - 5, 5), e);
	ck_assert_ptr_null(rangemap_find_span(&m, top - 5, 6));
	ck_assert_ptr_null(rangemap_find_span(&m, top - 5, top));
	ck_assert_ptr_null(rangemap_find_span(&m, top, 1));
	ck_assert_ptr_null(rangemap_find_span(&m, top, 0));
	ck_assert_ptr_eq(rangemap_find_ge(&m, top - 10), e);
	ck_assert_ptr_null(rangemap_find_ge(&m, top - 9));
	ck_assert_int_eq(rangemap_insert(&m, top - 11, 2, NULL, NULL),
			 -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, top - 1, 1, NULL, NULL),
			 -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 0, top, NULL, NULL), -EEXIST);
	ck_assert_int_eq(rangemap_insert(&m, 0, top - 10, V(2), NULL), 0);
	ck_assert_ptr_eq(rangemap_find(&m, 0)->value, V(2));
	ck_assert_ptr_eq(rangemap_find(&m, top - 11)->value, V(2));
	ck_assert_ptr_null(rangemap_find_span(&m, top - 11, 2));
	rangemap_destroy(&m, NULL, NULL);

	/* The whole representable space as one range. */
	ck_assert_int_eq(rangemap_insert(&m, 0, top, V(3), &e), 0);
	ck_assert_ptr_eq(rangemap_find(&m, 0), e);
	ck_assert_ptr_eq(rangemap_find(&m, top - 1), e);
	ck_assert_ptr_null(rangemap_find(&m, top));
	ck_assert_ptr_eq(rangemap_find_span(&m, 0, top), e);
	ck_assert_ptr_eq(rangemap_find_span(&m, 1, top - 1), e);
	ck_assert_ptr_null(rangemap_find_span(&m, 1, top));
	ck_assert_ptr_eq(rangemap_erase(&m, e), V(3));
	ck_assert_uint_eq(rangemap_count(&m), 0);
	rangemap_destroy(&m, NULL, NULL);
}
END_TEST

struct destroy_tally {
	size_t n;
	uint64_t bytes;
	uint64_t value_sum;
};

static void tally(uint64_t base, uint64_t len, void *value, void *arg)
{
	struct destroy_tally *t = arg;

	(void)base;
	t->n++;
	t->bytes += len;
	t->value_sum += (uintptr_t)value;
}

START_TEST(test_iterate_erase_destroy)
{
	struct rangemap m;
	struct rangemap_entry *e, *next;
	struct destroy_tally t = { 0, 0, 0 };
	uint64_t prev = 0;
	size_t n = 0;

	rangemap_init(&m);
	for (uint64_t i = 0; i < 1000; i++)
		ck_assert_int_eq(rangemap_insert(&m, (i * 7919) % 1000 * 10,
						 5, V(i + 1), NULL), 0);
	for (e = rangemap_first(&m); e; e = rangemap_next(&m, e)) {
		if (n)
			ck_assert_uint_gt(e->base, prev);
		prev = e->base;
		n++;
	}
	ck_assert_uint_eq(n, 1000);

	/* Erase every other entry while iterating. */
	n = 0;
	for (e = rangemap_first(&m); e; e = next) {
		next = rangemap_next(&m, e);
		if (n++ % 2 == 0)
			rangemap_erase(&m, e);
	}
	ck_assert_uint_eq(rangemap_count(&m), 500);
	ck_assert_int_eq(avl_verify(&m.root, 1000), 500);
	for (e = rangemap_first(&m); e; e = rangemap_next(&m, e))
		ck_assert_uint_eq(e->base % 20, 10);

	/* Values can be changed in place. */
	for (e = rangemap_first(&m); e; e = rangemap_next(&m, e))
		e->value = V(2);
	rangemap_destroy(&m, tally, &t);
	ck_assert_uint_eq(t.n, 500);
	ck_assert_uint_eq(t.bytes, 2500);
	ck_assert_uint_eq(t.value_sum, 1000);
	ck_assert_uint_eq(rangemap_count(&m), 0);
	ck_assert_ptr_null(rangemap_first(&m));
	/* Reusable after destroy. */
	ck_assert_int_eq(rangemap_insert(&m, 1, 1, NULL, NULL), 0);
	rangemap_destroy(&m, NULL, NULL);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Randomised operations against a byte-map model                           */
/* ------------------------------------------------------------------------ */

#define DOM		4096		/* addresses modelled */

/*
 * A range is identified by the model byte it starts at: owner[x] is the
 * start of the range holding byte x (or -1), len[s] the length of the range
 * starting at s (0: none), and &values[s] its value pointer.
 */
struct model {
	uint64_t off;			/* address of model byte 0 */
	int32_t owner[DOM];
	uint64_t len[DOM];
	int values[DOM];
	size_t count;
};

static void model_check_all(struct model *md, struct rangemap *m)
{
	struct rangemap_entry *e = rangemap_first(m);

	REQUIRE(avl_verify(&m->root, md->count) == (long)md->count);
	REQUIRE(rangemap_count(m) == md->count);
	for (uint32_t x = 0; x < DOM; x++) {
		if (!md->len[x])
			continue;
		REQUIRE(e != NULL);
		REQUIRE(e->base == md->off + x);
		REQUIRE(e->len == md->len[x]);
		REQUIRE(e->value == &md->values[x]);
		e = rangemap_next(m, e);
	}
	REQUIRE(e == NULL);
}

static void run_model(uint64_t off, uint64_t seed, int steps)
{
	static struct model md;
	struct rangemap m;
	size_t ins_ok = 0, ins_fail = 0, rm_ok = 0, hits = 0, spans = 0;

	rng_seed(seed);
	memset(&md, 0, sizeof(md));
	md.off = off;
	for (uint32_t x = 0; x < DOM; x++)
		md.owner[x] = -1;
	rangemap_init(&m);

	for (int step = 0; step < steps; step++) {
		unsigned int op = rnd(100);

		if (op < 30) {
			/* insert */
			uint32_t x = rnd(DOM);
			uint64_t len = rnd(8) ? 1 + rnd(24) : rnd(300);
			struct rangemap_entry *e = NULL;
			int expect = 0, rc;

			if (len == 0 || len > UINT64_MAX - (off + x)) {
				expect = -EINVAL;
			} else {
				/* Bytes beyond the model are always free. */
				for (uint64_t i = 0; i < len && x + i < DOM; i++) {
					if (md.owner[x + i] >= 0) {
						expect = -EEXIST;
						break;
					}
				}
			}
			/* Keep valid ranges inside the model (at the top of
			 * the address space this never triggers: those
			 * fail with -EINVAL above). */
			if (expect == 0 && len > DOM - x)
				len = DOM - x;
			rc = rangemap_insert(&m, off + x, len, &md.values[x], &e);
			REQUIRE(rc == expect);
			if (rc == 0) {
				REQUIRE(e && e->base == off + x && e->len == len);
				md.len[x] = len;
				for (uint64_t i = 0; i < len; i++)
					md.owner[x + i] = x;
				md.count++;
				ins_ok++;
			} else {
				REQUIRE(e == NULL);
				ins_fail++;
			}
		} else if (op < 60) {
			/* remove: a live base half of the time */
			uint32_t x = rnd(DOM);
			void *v = NULL;
			int rc;

			if (rnd(4) && md.owner[x] >= 0)
				x = md.owner[x];
			rc = rangemap_remove(&m, off + x, &v);
			if (!md.len[x]) {
				REQUIRE(rc == -ENOENT);
				REQUIRE(v == NULL);
			} else {
				REQUIRE(rc == 0);
				REQUIRE(v == &md.values[x]);
				for (uint64_t i = 0; i < md.len[x]; i++)
					md.owner[x + i] = -1;
				md.len[x] = 0;
				md.count--;
				rm_ok++;
			}
		} else if (op < 80) {
			/* point lookup */
			uint32_t x = rnd(DOM);
			struct rangemap_entry *e = rangemap_find(&m, off + x);
			int32_t s = md.owner[x];

			if (s < 0) {
				REQUIRE(e == NULL);
			} else {
				REQUIRE(e && e->value == &md.values[s]);
				hits++;
			}
		} else if (op < 97) {
			/* span check */
			uint32_t x = rnd(DOM);
			uint64_t len = rnd(4) ? rnd(12) : rnd(DOM);
			struct rangemap_entry *e;
			int32_t s = md.owner[x];
			bool inside = s >= 0;

			if (len > DOM - x)
				inside = false;	/* runs past the model */
			for (uint64_t i = 1; inside && i < len; i++)
				inside = md.owner[x + i] == s;
			e = rangemap_find_span(&m, off + x, len);
			if (inside) {
				REQUIRE(e && e->value == &md.values[s]);
				spans++;
			} else {
				REQUIRE(e == NULL);
			}
		} else {
			/* lower bound */
			uint32_t x = rnd(DOM), y;
			struct rangemap_entry *e = rangemap_find_ge(&m, off + x);

			for (y = x; y < DOM && !md.len[y]; y++)
				;
			if (y == DOM)
				REQUIRE(e == NULL);
			else
				REQUIRE(e && e->base == off + y);
		}
		if (step % 1024 == 0)
			model_check_all(&md, &m);
	}
	model_check_all(&md, &m);
	/* The run must have exercised every outcome. */
	REQUIRE(ins_ok > 2000 && ins_fail > 2000 && rm_ok > 2000);
	REQUIRE(hits > 2000 && spans > 500);
	rangemap_destroy(&m, NULL, NULL);
}

START_TEST(test_random_low)
{
	run_model(0, 0x5eed0001, 60000);
}
END_TEST

START_TEST(test_random_mid)
{
	run_model(0x7f0000001000ULL, 0x5eed0002, 60000);
}
END_TEST

/* The model covers the last DOM addresses: ranges ending at UINT64_MAX are
 * fine, ranges reaching past it fail with -EINVAL. */
START_TEST(test_random_top)
{
	run_model(UINT64_MAX - DOM + 1, 0x5eed0003, 60000);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2^20 ranges                                                              */
/* ------------------------------------------------------------------------ */

#define BIG_N		(1U << 20)
#define PAGE		4096ULL
#define BIG_BASE	0x200000000ULL

START_TEST(test_million_shuffled)
{
	struct rangemap m;
	uint32_t *order = malloc(BIG_N * sizeof(*order));
	int h;

	ck_assert_ptr_nonnull(order);
	rng_seed(42);
	rangemap_init(&m);
	for (uint32_t i = 0; i < BIG_N; i++)
		order[i] = i;
	shuffle(order, BIG_N);

	/* Acquire 2^20 adjacent 4 KiB ranges in random order. */
	for (uint32_t i = 0; i < BIG_N; i++) {
		uint64_t b = BIG_BASE + order[i] * PAGE;

		REQUIRE(rangemap_insert(&m, b, PAGE, V(order[i] + 1), NULL) == 0);
	}
	ck_assert_uint_eq(rangemap_count(&m), BIG_N);
	h = tree_height(&m);
	ck_assert_int_le(h, 29);	/* AVL: < 1.4405 log2(n + 2) */
	ck_assert_int_eq(avl_verify(&m.root, BIG_N), BIG_N);
	ck_assert_int_eq(rangemap_insert(&m, BIG_BASE + PAGE - 1, 2, NULL,
					 NULL), -EEXIST);

	/* Every one is found, interior and span lookups. */
	for (uint32_t i = 0; i < BIG_N; i++) {
		uint64_t b = BIG_BASE + i * PAGE;
		struct rangemap_entry *e = rangemap_find(&m, b + 123);

		REQUIRE(e && e->base == b && e->value == V(i + 1));
		REQUIRE(rangemap_find_span(&m, b, PAGE) == e);
		REQUIRE(rangemap_find_span(&m, b + 1, PAGE - 1) == e);
		REQUIRE(rangemap_find_span(&m, b + 1, PAGE) == NULL);
	}
	ck_assert_ptr_null(rangemap_find(&m, BIG_BASE - 1));
	ck_assert_ptr_null(rangemap_find(&m, BIG_BASE + BIG_N * PAGE));

	/* Release in another random order. */
	shuffle(order, BIG_N);
	for (uint32_t i = 0; i < BIG_N; i++) {
		void *v;

		REQUIRE(rangemap_remove(&m, BIG_BASE + order[i] * PAGE, &v) == 0);
		REQUIRE(v == V(order[i] + 1));
		if ((i & 0xffff) == 0)
			REQUIRE(rangemap_find(&m, BIG_BASE + order[i] * PAGE)
				== NULL);
	}
	ck_assert_uint_eq(rangemap_count(&m), 0);
	ck_assert_ptr_null(m.root.node);
	free(order);
}
END_TEST

START_TEST(test_million_sequential)
{
	struct rangemap m;
	struct rangemap_entry *e;
	struct destroy_tally t = { 0, 0, 0 };
	uint64_t expect = BIG_BASE;

	rangemap_init(&m);
	/* Ascending inserts: the degenerate case for unbalanced trees. */
	for (uint32_t i = 0; i < BIG_N; i++)
		REQUIRE(rangemap_insert(&m, BIG_BASE + i * PAGE, PAGE, V(1),
					NULL) == 0);
	ck_assert_int_le(tree_height(&m), 29);
	for (e = rangemap_first(&m); e; e = rangemap_next(&m, e)) {
		REQUIRE(e->base == expect);
		expect += PAGE;
	}
	ck_assert_uint_eq(expect, BIG_BASE + BIG_N * PAGE);
	/* Descending removal of half, then destroy the rest. */
	for (uint32_t i = BIG_N; i-- > BIG_N / 2;)
		REQUIRE(rangemap_remove(&m, BIG_BASE + i * PAGE, NULL) == 0);
	ck_assert_int_eq(avl_verify(&m.root, BIG_N), BIG_N / 2);
	rangemap_destroy(&m, tally, &t);
	ck_assert_uint_eq(t.n, BIG_N / 2);
	ck_assert_uint_eq(t.bytes, BIG_N / 2 * PAGE);
	ck_assert_uint_eq(t.value_sum, BIG_N / 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rangemap");
	TCase *tc = tcase_create("rangemap");
	SRunner *sr;
	int failed;

	/* A hang guard only; nothing depends on speed. */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_boundaries);
	tcase_add_test(tc, test_invalid_and_top);
	tcase_add_test(tc, test_iterate_erase_destroy);
	tcase_add_test(tc, test_random_low);
	tcase_add_test(tc, test_random_mid);
	tcase_add_test(tc, test_random_top);
	tcase_add_test(tc, test_million_shuffled);
	tcase_add_test(tc, test_million_sequential);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
