// SPDX-License-Identifier: MIT
/*
 * unit-handles: common/handles against a reference model; stale, forged and
 * wrong-type handles; FIFO reuse; generation wrap; growth; iteration during
 * teardown; 2^20 handles.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"

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

static int objs[1 << 20];	/* object pointers point in here */

/* ------------------------------------------------------------------------ */

START_TEST(test_init_and_idle)
{
	struct handle_table t;
	uint64_t h = 0;

	ck_assert_int_eq(handle_table_init(&t, 0), -EINVAL);
	ck_assert_int_eq(handle_table_init(&t, 2048), 0);
	/* An idle table owns no storage. */
	ck_assert_ptr_null(t.slots);
	ck_assert_uint_eq(t.cap, 0);
	ck_assert_uint_eq(handle_count(&t, 0), 0);
	ck_assert_ptr_null(handle_lookup(&t, 0, AXON_HANDLE_CTX));
	ck_assert_ptr_null(handle_lookup(&t,
		AXON_HANDLE_MAKE(AXON_HANDLE_CTX, 1, 0), AXON_HANDLE_CTX));
	ck_assert_ptr_null(handle_free(&t,
		AXON_HANDLE_MAKE(AXON_HANDLE_CTX, 1, 0), AXON_HANDLE_CTX));
	{
		uint32_t pos = 0;

		ck_assert(!handle_iter(&t, 0, &pos, &h, NULL));
	}
	/* Bad arguments. */
	ck_assert_int_eq(handle_alloc(&t, 0, &objs[0], &h), -EINVAL);
	ck_assert_int_eq(handle_alloc(&t, 256, &objs[0], &h), -EINVAL);
	ck_assert_int_eq(handle_alloc(&t, AXON_HANDLE_CTX, NULL, &h), -EINVAL);
	ck_assert_uint_eq(h, 0);
	/* The first allocation takes a small block, not max_entries. */
	ck_assert_int_eq(handle_alloc(&t, AXON_HANDLE_CTX, &objs[0], &h), 0);
	ck_assert_uint_eq(t.cap, HANDLE_TABLE_MIN_SLOTS);
	handle_table_destroy(&t);
	ck_assert_ptr_null(t.slots);
}
END_TEST

START_TEST(test_encoding_and_rejection)
{
	struct handle_table t;
	uint64_t c, s, e, bad;

	ck_assert_int_eq(handle_table_init(&t, 64), 0);
	ck_assert_int_eq(handle_alloc(&t, AXON_HANDLE_CTX, &objs[1], &c), 0);
	ck_assert_int_eq(handle_alloc(&t, AXON_HANDLE_STREAM, &objs[2], &s), 0);
	ck_assert_int_eq(handle_alloc(&t, 255, &objs[3], &e), 0);

	ck_assert_uint_eq(AXON_HANDLE_TYPE(c), AXON_HANDLE_CTX);
	ck_assert_uint_eq(AXON_HANDLE_GEN(c), 1);
	ck_assert_uint_eq(handle_index(c), 0);
	ck_assert_uint_eq(handle_type(s), AXON_HANDLE_STREAM);
	ck_assert_uint_eq(handle_index(s), 1);
	ck_assert_uint_eq(handle_index(e), 2);
	ck_assert_uint_ne(c, 0);

	ck_assert_ptr_eq(handle_lookup(&t, c, AXON_HANDLE_CTX), &objs[1]);
	ck_assert_ptr_eq(handle_lookup(&t, s, AXON_HANDLE_STREAM), &objs[2]);
	ck_assert_ptr_eq(handle_lookup(&t, e, 255), &objs[3]);

	/* Zero, wrong type, type 0 or out of range as the expected type. */
	ck_assert_ptr_null(handle_lookup(&t, 0, AXON_HANDLE_CTX));
	ck_assert_ptr_null(handle_lookup(&t, 0, 0));
	ck_assert_ptr_null(handle_lookup(&t, c, AXON_HANDLE_STREAM));
	ck_assert_ptr_null(handle_lookup(&t, s, AXON_HANDLE_CTX));
	ck_assert_ptr_null(handle_lookup(&t, c, 0));
	ck_assert_ptr_null(handle_lookup(&t, c, AXON_HANDLE_CTX + 256));
	ck_assert_ptr_null(handle_free(&t, c, AXON_HANDLE_STREAM));
	/* Forged: right slot, another type in the handle. */
	bad = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, 1, 0);
	ck_assert_ptr_null(handle_lookup(&t, bad, AXON_HANDLE_STREAM));
	/* Forged generations: 0, next, all ones. */
	ck_assert_ptr_null(handle_lookup(&t, AXON_HANDLE_MAKE(1, 0, 0), 1));
	ck_assert_ptr_null(handle_lookup(&t, AXON_HANDLE_MAKE(1, 2, 0), 1));
	ck_assert_ptr_null(handle_lookup(&t,
		AXON_HANDLE_MAKE(1, 0xffffff, 0), 1));
	/* Forged indices: allocated storage but never used, beyond it,
	 * beyond max_entries, all ones. */
	ck_assert_ptr_null(handle_lookup(&t, AXON_HANDLE_MAKE(1, 1, 3), 1));
	ck_assert_ptr_null(handle_lookup(&t, AXON_HANDLE_MAKE(1, 1, 20), 1));
	ck_assert_ptr_null(handle_lookup(&t, AXON_HANDLE_MAKE(1, 1, 64), 1));
	ck_assert_ptr_null(handle_lookup(&t,
		AXON_HANDLE_MAKE(1, 1, 0xffffffff), 1));
	ck_assert_ptr_null(handle_lookup(&t, UINT64_MAX, 255));
	ck_assert_ptr_null(handle_free(&t, UINT64_MAX, 255));

	/* Counts per type. */
	ck_assert_uint_eq(handle_count(&t, 0), 3);
	ck_assert_uint_eq(handle_count(&t, AXON_HANDLE_CTX), 1);
	ck_assert_uint_eq(handle_count(&t, AXON_HANDLE_EVENT), 0);
	ck_assert_uint_eq(handle_count(&t, 255), 1);
	ck_assert_uint_eq(handle_count(&t, 256), 0);

	/* Free: object back once, then the handle is stale. */
	ck_assert_ptr_eq(handle_free(&t, s, AXON_HANDLE_STREAM), &objs[2]);
	ck_assert_ptr_null(handle_lookup(&t, s, AXON_HANDLE_STREAM));
	ck_assert_ptr_null(handle_free(&t, s, AXON_HANDLE_STREAM));
	ck_assert_uint_eq(handle_count(&t, AXON_HANDLE_STREAM), 0);
	ck_assert_uint_eq(handle_count(&t, 0), 2);
	/* A freed slot's next generation is not live either. */
	ck_assert_ptr_null(handle_lookup(&t,
		AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, 2, 1), AXON_HANDLE_STREAM));
	ck_assert_ptr_null(handle_lookup(&t, AXON_HANDLE_MAKE(0, 2, 1), 0));
	handle_table_destroy(&t);
}
END_TEST

START_TEST(test_fifo_reuse)
{
	struct handle_table t;
	uint64_t h[4], n;

	ck_assert_int_eq(handle_table_init(&t, 4), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(handle_alloc(&t, 1, &objs[i], &h[i]), 0);
		ck_assert_uint_eq(handle_index(h[i]), i);
	}
	ck_assert_uint_eq(t.cap, 4);		/* clamped to max_entries */
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[9], &n), -ENOSPC);
	handle_free(&t, h[2], 1);
	handle_free(&t, h[0], 1);
	handle_free(&t, h[3], 1);
	/* Oldest freed first, with the next generation. */
	ck_assert_int_eq(handle_alloc(&t, 2, &objs[5], &n), 0);
	ck_assert_uint_eq(handle_index(n), 2);
	ck_assert_uint_eq(AXON_HANDLE_GEN(n), 2);
	ck_assert_ptr_null(handle_lookup(&t, h[2], 1));
	ck_assert_ptr_null(handle_lookup(&t, (h[2] & ~(0xffULL << 56)) |
					 (2ULL << 56), 2));
	ck_assert_ptr_eq(handle_lookup(&t, n, 2), &objs[5]);
	handle_free(&t, n, 2);			/* queued behind 0 and 3 */
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[6], &n), 0);
	ck_assert_uint_eq(handle_index(n), 0);
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[7], &n), 0);
	ck_assert_uint_eq(handle_index(n), 3);
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[8], &n), 0);
	ck_assert_uint_eq(handle_index(n), 2);
	ck_assert_uint_eq(AXON_HANDLE_GEN(n), 3);
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[9], &n), -ENOSPC);
	handle_table_destroy(&t);

	/* Never-used slots in the current storage come before reuse. */
	ck_assert_int_eq(handle_table_init(&t, 100), 0);
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[0], &h[0]), 0);
	handle_free(&t, h[0], 1);
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[0], &h[1]), 0);
	ck_assert_uint_eq(handle_index(h[1]), 1);
	handle_table_destroy(&t);
}
END_TEST

START_TEST(test_growth)
{
	struct handle_table t;
	static uint64_t h[1000];
	static uint8_t seen[1000];
	uint64_t x;

	memset(seen, 0, sizeof(seen));
	ck_assert_int_eq(handle_table_init(&t, 1000), 0);
	for (int i = 0; i < 1000; i++) {
		REQUIRE(handle_alloc(&t, 1 + i % 5, &objs[i], &h[i]) == 0);
		REQUIRE(handle_index(h[i]) < 1000);
		REQUIRE(!seen[handle_index(h[i])]);
		seen[handle_index(h[i])] = 1;
		REQUIRE(t.cap <= 1000);
	}
	ck_assert_uint_eq(t.cap, 1000);
	ck_assert_int_eq(handle_alloc(&t, 1, &objs[0], &x), -ENOSPC);
	/* Storage moved while growing; every handle still resolves. */
	for (int i = 0; i < 1000; i++)
		REQUIRE(handle_lookup(&t, h[i], 1 + i % 5) == &objs[i]);
	for (unsigned int ty = 1; ty <= 5; ty++)
		ck_assert_uint_eq(handle_count(&t, ty), 200);
	handle_table_destroy(&t);
}
END_TEST

/* Teardown of a dead client: walk the live handles of one type, then all,
 * freeing as we go. */
START_TEST(test_iterate_teardown)
{
	struct handle_table t;
	uint64_t h[300], v;
	uint32_t pos;
	void *obj;
	size_t n;

	ck_assert_int_eq(handle_table_init(&t, 300), 0);
	for (int i = 0; i < 300; i++)
		ck_assert_int_eq(handle_alloc(&t, 1 + i % 3, &objs[i], &h[i]),
				 0);
	for (int i = 0; i < 300; i += 4)
		ck_assert_ptr_eq(handle_free(&t, h[i], 1 + i % 3), &objs[i]);

	/* Type 2 only, in index order. */
	n = 0;
	pos = 0;
	while (handle_iter(&t, 2, &pos, &v, &obj)) {
		int i = (int *)obj - objs;

		ck_assert_int_eq(i % 3, 1);
		ck_assert_int_ne(i % 4, 0);
		ck_assert_uint_eq(v, h[i]);
		ck_assert_ptr_eq(handle_free(&t, v, 2), obj);
		n++;
	}
	ck_assert_uint_eq(n, 100 - 25);
	ck_assert_uint_eq(handle_count(&t, 2), 0);
	/* Everything else. */
	n = 0;
	pos = 0;
	while (handle_iter(&t, 0, &pos, &v, NULL)) {
		unsigned int ty = handle_type(v);

		ck_assert(ty == 1 || ty == 3);
		ck_assert_ptr_nonnull(handle_free(&t, v, ty));
		n++;
	}
	ck_assert_uint_eq(n, 300 - 75 - 75);
	ck_assert_uint_eq(handle_count(&t, 0), 0);
	pos = 0;
	ck_assert(!handle_iter(&t, 0, &pos, &v, NULL));
	handle_table_destroy(&t);
}
END_TEST

/* 2^24 - 1 frees of one slot walk every generation once and skip 0. */
START_TEST(test_generation_wrap)
{
	struct handle_table t;
	uint64_t first, h, prev = 0;
	uint32_t gen = 1;

	ck_assert_int_eq(handle_table_init(&t, 1), 0);
	ck_assert_int_eq(handle_alloc(&t, 4, &objs[0], &first), 0);
	ck_assert_uint_eq(AXON_HANDLE_GEN(first), 1);
	ck_assert_ptr_eq(handle_free(&t, first, 4), &objs[0]);
	for (uint32_t i = 1; i < HANDLE_GEN_MASK; i++) {
		gen++;
		REQUIRE(handle_alloc(&t, 4, &objs[1], &h) == 0);
		REQUIRE(AXON_HANDLE_GEN(h) == gen);
		REQUIRE(handle_index(h) == 0);
		REQUIRE(handle_lookup(&t, first, 4) == NULL);
		if (prev)
			REQUIRE(handle_lookup(&t, prev, 4) == NULL);
		REQUIRE(handle_free(&t, h, 4) == &objs[1]);
		prev = h;
	}
	ck_assert_uint_eq(gen, HANDLE_GEN_MASK);
	/* Wrapped: generation 1 again (never 0), and the first handle,
	 * 2^24 - 1 generations old, aliases it (documented limit). */
	ck_assert_int_eq(handle_alloc(&t, 4, &objs[2], &h), 0);
	ck_assert_uint_eq(AXON_HANDLE_GEN(h), 1);
	ck_assert_uint_eq(h, first);
	ck_assert_ptr_null(handle_lookup(&t, prev, 4));
	ck_assert_ptr_eq(handle_lookup(&t, first, 4), &objs[2]);
	ck_assert_ptr_eq(handle_free(&t, h, 4), &objs[2]);
	ck_assert_int_eq(handle_alloc(&t, 4, &objs[2], &h), 0);
	ck_assert_uint_eq(AXON_HANDLE_GEN(h), 2);
	handle_table_destroy(&t);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Randomised operations against a model                                    */
/* ------------------------------------------------------------------------ */

#define MAXE	512
#define NSTALE	4096

struct model {
	uint64_t handle[MAXE];		/* live handle per index, 0 if free */
	void *obj[MAXE];
	uint32_t fifo[MAXE];		/* freed indices, oldest first */
	uint32_t fifo_head, fifo_len;
	uint32_t used;			/* indices ever handed out */
	uint32_t live, live_by_type[8];
	uint64_t stale[NSTALE];		/* recently freed handles */
	uint32_t nstale;
};

static uint64_t random_forgery(const struct model *md)
{
	switch (rnd(4)) {
	case 0:
		return rng();
	case 1:
		return AXON_HANDLE_MAKE(1 + rnd(6), rnd(4), rnd(MAXE + 8));
	case 2:
		return AXON_HANDLE_MAKE(0, 1 + rnd(3), rnd(md->used + 1));
	default:
		return AXON_HANDLE_MAKE(1 + rnd(6), 1 + rnd(3), MAXE + rnd(9));
	}
}

/* The model's answer to a lookup of @h as @type. */
static void *model_lookup(const struct model *md, uint64_t h,
			  unsigned int type)
{
	uint32_t i = AXON_HANDLE_INDEX(h);

	if (h == 0 || type == 0 || i >= MAXE || md->handle[i] != h ||
	    AXON_HANDLE_TYPE(h) != type)
		return NULL;
	return md->obj[i];
}

START_TEST(test_random_model)
{
	static struct model md;
	struct handle_table t;
	size_t n_alloc = 0, n_reuse = 0, n_free = 0, n_reject = 0, n_full = 0;

	rng_seed(0x4a4d1e5);
	memset(&md, 0, sizeof(md));
	ck_assert_int_eq(handle_table_init(&t, MAXE), 0);

	for (int step = 0; step < 100000; step++) {
		unsigned int op = rnd(100);

		if (op < 35) {
			unsigned int type = 1 + rnd(5);
			void *obj = &objs[rnd(1 << 20)];
			uint32_t cap0 = t.cap, i;
			uint64_t h = 0;
			int rc = handle_alloc(&t, type, obj, &h);

			if (md.live == MAXE) {
				REQUIRE(rc == -ENOSPC);
				n_full++;
				continue;
			}
			REQUIRE(rc == 0);
			i = handle_index(h);
			REQUIRE(i < MAXE && md.handle[i] == 0);
			REQUIRE(AXON_HANDLE_TYPE(h) == type);
			REQUIRE(AXON_HANDLE_GEN(h) != 0);
			if (i >= md.used) {
				/* A never-used slot: the next one; storage
				 * grows only when no freed slot waits. */
				REQUIRE(i == md.used);
				REQUIRE(i < cap0 || md.fifo_len == 0);
				md.used++;
			} else {
				/* Reuse, only once the storage has no
				 * never-used slot: the slot freed longest
				 * ago. */
				REQUIRE(md.used == cap0);
				REQUIRE(md.fifo_len > 0);
				REQUIRE(md.fifo[md.fifo_head] == i);
				md.fifo_head = (md.fifo_head + 1) % MAXE;
				md.fifo_len--;
				n_reuse++;
			}
			md.handle[i] = h;
			md.obj[i] = obj;
			md.live++;
			md.live_by_type[type]++;
			n_alloc++;
		} else if (op < 65) {
			uint64_t h;
			unsigned int type;
			void *expect, *got;

			switch (rnd(6)) {
			case 0:
				h = md.nstale ? md.stale[rnd(md.nstale)] : 0;
				break;
			case 1:
				h = random_forgery(&md);
				break;
			default:
				h = md.handle[rnd(MAXE)];
				break;
			}
			type = rnd(8) ? handle_type(h) : rnd(7);
			expect = model_lookup(&md, h, type);
			got = handle_free(&t, h, type);
			REQUIRE(got == expect);
			if (expect) {
				uint32_t i = handle_index(h);

				md.handle[i] = 0;
				md.fifo[(md.fifo_head + md.fifo_len) % MAXE] = i;
				md.fifo_len++;
				md.live--;
				md.live_by_type[type]--;
				if (md.nstale < NSTALE)
					md.stale[md.nstale++] = h;
				else
					md.stale[rnd(NSTALE)] = h;
				n_free++;
			} else {
				n_reject++;
			}
		} else {
			uint64_t h;
			unsigned int type;

			switch (rnd(4)) {
			case 0:
				h = md.nstale ? md.stale[rnd(md.nstale)] : 0;
				break;
			case 1:
				h = random_forgery(&md);
				break;
			default:
				h = md.handle[rnd(MAXE)];
				break;
			}
			type = rnd(8) ? handle_type(h) : rnd(7);
			REQUIRE(handle_lookup(&t, h, type) ==
				model_lookup(&md, h, type));
		}
		if (step % 1000 == 0) {
			uint32_t pos = 0, n = 0;
			uint64_t h;
			void *obj;

			REQUIRE(handle_count(&t, 0) == md.live);
			for (unsigned int ty = 1; ty < 8; ty++)
				REQUIRE(handle_count(&t, ty) ==
					md.live_by_type[ty]);
			while (handle_iter(&t, 0, &pos, &h, &obj)) {
				uint32_t i = handle_index(h);

				REQUIRE(md.handle[i] == h && md.obj[i] == obj);
				n++;
			}
			REQUIRE(n == md.live);
		}
	}
	ck_assert_msg(n_alloc > 10000 && n_reuse > 10000 && n_free > 10000 &&
		      n_reject > 10000 && n_full > 100,
		      "alloc %zu reuse %zu free %zu reject %zu full %zu",
		      n_alloc, n_reuse, n_free, n_reject, n_full);
	handle_table_destroy(&t);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2^20 handles                                                             */
/* ------------------------------------------------------------------------ */

#define BIG_N	(1U << 20)

START_TEST(test_million)
{
	struct handle_table t;
	uint64_t *h = malloc(BIG_N * sizeof(*h)), x;
	uint32_t *order = malloc(BIG_N * sizeof(*order));

	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_nonnull(order);
	rng_seed(11);
	ck_assert_int_eq(handle_table_init(&t, BIG_N), 0);
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < BIG_N; i++) {
			REQUIRE(handle_alloc(&t, AXON_HANDLE_EVENT, &objs[i],
					     &h[i]) == 0);
			REQUIRE(AXON_HANDLE_GEN(h[i]) == (uint32_t)round + 1);
			order[i] = i;
		}
		ck_assert_int_eq(handle_alloc(&t, AXON_HANDLE_EVENT, &objs[0],
					      &x), -ENOSPC);
		ck_assert_uint_eq(handle_count(&t, AXON_HANDLE_EVENT), BIG_N);
		for (uint32_t i = BIG_N - 1; i > 0; i--) {
			uint32_t j = rnd(i + 1), tmp = order[i];

			order[i] = order[j];
			order[j] = tmp;
		}
		for (uint32_t i = 0; i < BIG_N; i++) {
			uint32_t k = order[i];

			REQUIRE(handle_lookup(&t, h[k], AXON_HANDLE_EVENT) ==
				&objs[k]);
			REQUIRE(handle_free(&t, h[k], AXON_HANDLE_EVENT) ==
				&objs[k]);
			REQUIRE(handle_lookup(&t, h[k], AXON_HANDLE_EVENT) ==
				NULL);
		}
		ck_assert_uint_eq(handle_count(&t, 0), 0);
	}
	handle_table_destroy(&t);
	free(h);
	free(order);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("handles");
	TCase *tc = tcase_create("handles");
	SRunner *sr;
	int failed;

	/* A hang guard only; nothing depends on speed. */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_init_and_idle);
	tcase_add_test(tc, test_encoding_and_rejection);
	tcase_add_test(tc, test_fifo_reuse);
	tcase_add_test(tc, test_growth);
	tcase_add_test(tc, test_iterate_teardown);
	tcase_add_test(tc, test_generation_wrap);
	tcase_add_test(tc, test_random_model);
	tcase_add_test(tc, test_million);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
