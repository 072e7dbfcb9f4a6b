// SPDX-License-Identifier: MIT
/*
 * unit-vaalloc: common/vaalloc against a unit-map reference model of
 * address-ordered first fit, its edge cases (window limits, alignment,
 * exhaustion, double free, the top of the address space) and the
 * 2^20 x 4 KiB acquire/release pattern.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vaalloc.h"

/* ck_assert records a mark point (a write) per call; use this in loops. */
#define REQUIRE(expr)							\
	do {								\
		if (unlikely(!(expr)))					\
			ck_abort_msg("requirement failed: %s", #expr);	\
	} while (0)

#define KiB	1024ULL
#define MiB	(1024 * KiB)
#define GiB	(1024 * MiB)
#define U	256ULL			/* VAALLOC_MIN_ALIGN */

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

static void check_stats(const struct vaalloc *va, uint64_t used,
			size_t live, size_t free_ranges, uint64_t largest)
{
	struct vaalloc_stats st;

	vaalloc_stats(va, &st);
	ck_assert_uint_eq(st.window_size, va->size);
	ck_assert_uint_eq(st.used_bytes, used);
	ck_assert_uint_eq(st.free_bytes, va->size - used);
	ck_assert_uint_eq(st.live_allocs, live);
	ck_assert_uint_eq(st.free_ranges, free_ranges);
	ck_assert_uint_eq(st.largest_free, largest);
	ck_assert_uint_eq(vaalloc_used(va), used);
	ck_assert_uint_eq(vaalloc_count(va), live);
	ck_assert_int_eq(vaalloc_verify(va), 0);
}

/* ------------------------------------------------------------------------ */

START_TEST(test_init)
{
	struct vaalloc va;
	const uint64_t top = UINT64_MAX;

	ck_assert_int_eq(vaalloc_init(&va, 0x1000, 0), -EINVAL);
	ck_assert_int_eq(vaalloc_init(&va, 0x1001, 0x1000), -EINVAL);
	ck_assert_int_eq(vaalloc_init(&va, 0x1080, 0x1000), -EINVAL);
	ck_assert_int_eq(vaalloc_init(&va, 0x1000, 0x1001), -EINVAL);
	ck_assert_int_eq(vaalloc_init(&va, 0x1000, 0x1080), -EINVAL);
	ck_assert_int_eq(vaalloc_init(&va, 0, 1ULL << 63), -EINVAL);
	ck_assert_int_eq(vaalloc_init(&va, ALIGN_DOWN(top, U), U), -EINVAL);
	ck_assert_int_eq(vaalloc_init(&va, 1ULL << 63, 1ULL << 62), 0);
	vaalloc_destroy(&va);
	/* The last whole unit below 2^64 (its end is UINT64_MAX - 255). */
	ck_assert_int_eq(vaalloc_init(&va, ALIGN_DOWN(top, U) - U, U), 0);
	check_stats(&va, 0, 0, 1, U);
	vaalloc_destroy(&va);
	ck_assert_int_eq(vaalloc_init(&va, 0, U), 0);
	check_stats(&va, 0, 0, 1, U);
	vaalloc_destroy(&va);
}
END_TEST

START_TEST(test_basic_rounding_lookup)
{
	struct vaalloc va;
	const uint64_t base = 0x100000100ULL;	/* 256- but not 4K-aligned */
	uint64_t a, b, c, lb, ls;

	ck_assert_int_eq(vaalloc_init(&va, base, 1 * MiB), 0);
	ck_assert_int_eq(vaalloc_alloc(&va, 0, 0, &a), -EINVAL);
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 768, &a), -EINVAL);
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 3ULL << 20, &a), -EINVAL);
	ck_assert_int_eq(vaalloc_alloc(&va, 1 * MiB + 1, 0, &a), -ENOSPC);
	ck_assert_int_eq(vaalloc_alloc(&va, UINT64_MAX, 0, &a), -ENOSPC);
	check_stats(&va, 0, 0, 1, 1 * MiB);

	/* Sizes round up to 256; first fit hands out ascending addresses. */
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 0, &a), 0);
	ck_assert_uint_eq(a, base);
	ck_assert_int_eq(vaalloc_alloc(&va, 257, 1, &b), 0);
	ck_assert_uint_eq(b, base + 256);
	ck_assert_int_eq(vaalloc_lookup(&va, b + 511, &lb, &ls), 0);
	ck_assert_uint_eq(lb, b);
	ck_assert_uint_eq(ls, 512);
	ck_assert_int_eq(vaalloc_lookup(&va, b + 512, &lb, &ls), -ENOENT);
	ck_assert_int_eq(vaalloc_lookup(&va, base - 1, NULL, NULL), -ENOENT);
	ck_assert_int_eq(vaalloc_lookup(&va, a, NULL, NULL), 0);

	/* Alignment is of the absolute address. */
	ck_assert_int_eq(vaalloc_alloc(&va, 100, 4096, &c), 0);
	ck_assert_uint_eq(c, 0x100001000ULL);
	check_stats(&va, 256 + 512 + 256, 3, 2, base + 1 * MiB - c - 256);
	/* The hole before c is found first. */
	ck_assert_int_eq(vaalloc_alloc(&va, 1024, 0, &lb), 0);
	ck_assert_uint_eq(lb, base + 768);

	/* Iteration. */
	{
		uint64_t it = va.base, s, n = 0, prev = 0;

		while (vaalloc_next(&va, it, &it, &s) == 0) {
			ck_assert_uint_gt(it, prev);
			prev = it;
			it += s;
			n++;
		}
		ck_assert_uint_eq(n, 4);
	}

	/* Free: exact start only, double free detected. */
	ck_assert_int_eq(vaalloc_free(&va, b + 256), -ENOENT);
	ck_assert_int_eq(vaalloc_free(&va, b), 512);
	ck_assert_int_eq(vaalloc_free(&va, b), -ENOENT);
	ck_assert_int_eq(vaalloc_lookup(&va, b, NULL, NULL), -ENOENT);
	ck_assert_int_eq(vaalloc_free(&va, 0), -ENOENT);
	ck_assert_int_eq(vaalloc_free(&va, base + 1 * MiB), -ENOENT);
	ck_assert_int_eq(vaalloc_free(&va, a), 256);
	ck_assert_int_eq(vaalloc_free(&va, c), 256);
	ck_assert_int_eq(vaalloc_free(&va, lb), 1024);
	check_stats(&va, 0, 0, 1, 1 * MiB);
	vaalloc_destroy(&va);
}
END_TEST

START_TEST(test_coalesce)
{
	struct vaalloc va;
	uint64_t x[5];

	ck_assert_int_eq(vaalloc_init(&va, 1 * MiB, 5 * 4 * KiB), 0);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(vaalloc_alloc(&va, 4 * KiB, 0, &x[i]), 0);
		ck_assert_uint_eq(x[i], 1 * MiB + i * 4 * KiB);
	}
	check_stats(&va, 20 * KiB, 5, 0, 0);
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 0, &x[0]), -ENOSPC);
	ck_assert_int_eq(vaalloc_free(&va, x[1]), 4 * KiB);	/* alone */
	check_stats(&va, 16 * KiB, 4, 1, 4 * KiB);
	ck_assert_int_eq(vaalloc_free(&va, x[3]), 4 * KiB);	/* alone */
	check_stats(&va, 12 * KiB, 3, 2, 4 * KiB);
	ck_assert_int_eq(vaalloc_free(&va, x[2]), 4 * KiB);	/* both */
	check_stats(&va, 8 * KiB, 2, 1, 12 * KiB);
	ck_assert_int_eq(vaalloc_free(&va, x[0]), 4 * KiB);	/* succ */
	check_stats(&va, 4 * KiB, 1, 1, 16 * KiB);
	ck_assert_int_eq(vaalloc_free(&va, x[4]), 4 * KiB);	/* pred */
	check_stats(&va, 0, 0, 1, 20 * KiB);
	/* Split in the middle: alignment leaves a head and a tail. */
	ck_assert_int_eq(vaalloc_alloc(&va, 256, 8 * KiB, &x[0]), 0);
	ck_assert_uint_eq(x[0], 1 * MiB);
	ck_assert_int_eq(vaalloc_alloc(&va, 256, 8 * KiB, &x[1]), 0);
	ck_assert_uint_eq(x[1], 1 * MiB + 8 * KiB);
	check_stats(&va, 512, 2, 2, 12 * KiB - 256);
	ck_assert_int_eq(vaalloc_free(&va, x[0]), 256);
	ck_assert_int_eq(vaalloc_free(&va, x[1]), 256);
	check_stats(&va, 0, 0, 1, 20 * KiB);
	vaalloc_destroy(&va);
}
END_TEST

START_TEST(test_exhaustion_and_big_alignment)
{
	struct vaalloc va;
	uint64_t a, b;

	/* Window [1 MiB, 2 MiB). */
	ck_assert_int_eq(vaalloc_init(&va, 1 * MiB, 1 * MiB), 0);
	ck_assert_int_eq(vaalloc_alloc(&va, 1 * MiB, 0, &a), 0);
	ck_assert_uint_eq(a, 1 * MiB);
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 0, &b), -ENOSPC);
	check_stats(&va, 1 * MiB, 1, 0, 0);
	ck_assert_int_eq(vaalloc_free(&va, a), 1 * MiB);
	/* Aligned exactly like the window: only the exact fallback finds
	 * it (size + align - 256 exceeds the window). */
	ck_assert_int_eq(vaalloc_alloc(&va, 1 * MiB, 1 * MiB, &a), 0);
	ck_assert_uint_eq(a, 1 * MiB);
	ck_assert_int_eq(vaalloc_free(&va, a), 1 * MiB);
	ck_assert_int_eq(vaalloc_alloc(&va, 1 * MiB, 2 * MiB, &a), -ENOSPC);
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 1ULL << 63, &a), -ENOSPC);
	/* Fill with 512 KiB-aligned 256 B pieces: two fit. */
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 512 * KiB, &a), 0);
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 512 * KiB, &b), 0);
	ck_assert_uint_eq(a, 1 * MiB);
	ck_assert_uint_eq(b, 1 * MiB + 512 * KiB);
	ck_assert_int_eq(vaalloc_alloc(&va, 1, 512 * KiB, &b), -ENOSPC);
	/* Free: [1M + 256, 1.5M) and [1.5M + 256, 2M), 512K - 256 each. */
	ck_assert_int_eq(vaalloc_alloc(&va, 256 * KiB, 256 * KiB, &b), 0);
	ck_assert_uint_eq(b, 1 * MiB + 256 * KiB);
	ck_assert_int_eq(vaalloc_alloc(&va, 256 * KiB - 256, 256 * KiB, &b), 0);
	ck_assert_uint_eq(b, 1 * MiB + 768 * KiB);
	/* Free: [1M + 256, 1.25M), [1.5M + 256, 1.75M), [2M - 256, 2M):
	 * two candidates by size, neither aligned suitably. */
	check_stats(&va, 512 * KiB + 256, 4, 3, 256 * KiB - 256);
	ck_assert_int_eq(vaalloc_alloc(&va, 256 * KiB - 512, 256 * KiB, &b),
			 -ENOSPC);
	ck_assert_int_eq(vaalloc_alloc(&va, 256 * KiB - 512, 256, &b), 0);
	ck_assert_uint_eq(b, 1 * MiB + 256);
	ck_assert_int_eq(vaalloc_verify(&va), 0);
	vaalloc_destroy(&va);

	/* Alignment 2^63 inside a window that contains 2^63. */
	ck_assert_int_eq(vaalloc_init(&va, (1ULL << 63) - 4096, 8192), 0);
	ck_assert_int_eq(vaalloc_alloc(&va, 4096, 1ULL << 63, &a), 0);
	ck_assert_uint_eq(a, 1ULL << 63);
	ck_assert_int_eq(vaalloc_alloc(&va, 4096, 1ULL << 63, &b), -ENOSPC);
	ck_assert_int_eq(vaalloc_alloc(&va, 4096, 4096, &b), 0);
	ck_assert_uint_eq(b, (1ULL << 63) - 4096);
	check_stats(&va, 8192, 2, 0, 0);
	vaalloc_destroy(&va);
}
END_TEST

START_TEST(test_top_of_address_space)
{
	struct vaalloc va;
	/* The window's end is 2^64 - 256: nothing may wrap. */
	const uint64_t size = 1 * MiB, base = 0 - size - U;
	uint64_t a, b, lb, ls;

	ck_assert_int_eq(vaalloc_init(&va, base, size), 0);
	/* Aligning up past the last 1 MiB boundary would wrap. */
	ck_assert_int_eq(vaalloc_alloc(&va, 256, 2 * MiB, &a), -ENOSPC);
	ck_assert_int_eq(vaalloc_alloc(&va, 256, 1ULL << 63, &a), -ENOSPC);
	ck_assert_int_eq(vaalloc_alloc(&va, 256, 1 * MiB, &a), 0);
	ck_assert_uint_eq(a, 0 - 1 * MiB);
	ck_assert_int_eq(vaalloc_alloc(&va, size - 512, 0, &b), 0);
	ck_assert_uint_eq(b, a + 256);
	ck_assert_uint_eq(b + size - 512, 0 - U);
	check_stats(&va, size - 256, 2, 1, 256);
	ck_assert_int_eq(vaalloc_lookup(&va, UINT64_MAX - U, &lb, &ls), 0);
	ck_assert_uint_eq(lb, b);
	ck_assert_int_eq(vaalloc_lookup(&va, UINT64_MAX, &lb, &ls), -ENOENT);
	ck_assert_int_eq(vaalloc_lookup(&va, 0 - U, &lb, &ls), -ENOENT);
	ck_assert_int_eq(vaalloc_free(&va, UINT64_MAX), -ENOENT);
	ck_assert_int_eq(vaalloc_free(&va, b), (int64_t)(size - 512));
	ck_assert_int_eq(vaalloc_free(&va, a), 256);
	check_stats(&va, 0, 0, 1, size);
	vaalloc_destroy(&va);
}
END_TEST

/* The exact fallback finds a suitably aligned range that is not the first
 * one large enough. */
START_TEST(test_exact_fallback)
{
	struct vaalloc va;
	uint64_t x[256], a;

	ck_assert_int_eq(vaalloc_init(&va, 0, 64 * KiB), 0);
	for (int i = 0; i < 256; i++) {
		ck_assert_int_eq(vaalloc_alloc(&va, 256, 0, &x[i]), 0);
		ck_assert_uint_eq(x[i], i * 256);
	}
	/* Free [256, 2304), [4096 + 256, 6144 + 256), [8192, 10240). */
	for (int i = 1; i <= 8; i++)
		ck_assert_int_eq(vaalloc_free(&va, x[i]), 256);
	for (int i = 17; i <= 24; i++)
		ck_assert_int_eq(vaalloc_free(&va, x[i]), 256);
	for (int i = 32; i < 40; i++)
		ck_assert_int_eq(vaalloc_free(&va, x[i]), 256);
	check_stats(&va, 64 * KiB - 6 * KiB, 232, 3, 2 * KiB);
	/* 2 KiB at 2 KiB alignment: only [8192, 10240) works. */
	ck_assert_int_eq(vaalloc_alloc(&va, 2 * KiB, 2 * KiB, &a), 0);
	ck_assert_uint_eq(a, 8192);
	ck_assert_int_eq(vaalloc_alloc(&va, 2 * KiB, 2 * KiB, &a), -ENOSPC);
	/* 1 KiB at 1 KiB alignment: the first range, at 1024. */
	ck_assert_int_eq(vaalloc_alloc(&va, 1 * KiB, 1 * KiB, &a), 0);
	ck_assert_uint_eq(a, 1024);
	check_stats(&va, 64 * KiB - 3 * KiB, 234, 3, 2 * KiB);
	vaalloc_destroy(&va);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Randomised operations against a unit-map model                           */
/* ------------------------------------------------------------------------ */

#define NU	2048			/* 256-byte units in the window */

struct model {
	uint64_t base;
	int32_t owner[NU];		/* start unit of the allocation, or -1 */
	uint32_t units[NU];		/* allocation size at its start unit */
	uint64_t used;
	size_t live;
};

static uint64_t unit_addr(const struct model *md, uint64_t u)
{
	return md->base + u * U;
}

/*
 * The model of the allocator's policy: the lowest free run of at least
 * size + align - 256 bytes, at its first aligned address; failing that, the
 * lowest run in which an aligned placement fits.
 */
static int model_alloc(struct model *md, uint64_t size, uint64_t align,
		       uint64_t *start_unit)
{
	uint64_t s, need_units;
	int pass;

	if (size == 0)
		return -EINVAL;
	if (align < U)
		align = U;
	else if (align & (align - 1))
		return -EINVAL;
	if (size > NU * U)
		return -ENOSPC;
	s = (size + U - 1) / U;
	need_units = s + align / U - 1;
	for (pass = 0; pass < 2; pass++) {
		uint64_t u = 0;

		while (u < NU) {
			uint64_t rs, re, aligned, au;

			if (md->owner[u] >= 0) {
				u++;
				continue;
			}
			rs = u;
			while (u < NU && md->owner[u] < 0)
				u++;
			re = u;
			aligned = ALIGN_UP(unit_addr(md, rs), align);
			au = (aligned - md->base) / U;
			if (pass == 0 && re - rs < need_units)
				continue;
			if (au >= re || re - au < s)
				continue;
			*start_unit = au;
			return 0;
		}
	}
	return -ENOSPC;
}

static void model_verify(const struct model *md, const struct vaalloc *va)
{
	struct vaalloc_stats st;
	size_t runs = 0;
	uint64_t largest = 0, run = 0;

	for (uint32_t u = 0; u < NU; u++) {
		if (md->owner[u] < 0) {
			if (run++ == 0)
				runs++;
			if (run > largest)
				largest = run;
		} else {
			run = 0;
		}
	}
	vaalloc_stats(va, &st);
	REQUIRE(vaalloc_verify(va) == 0);
	REQUIRE(st.used_bytes == md->used);
	REQUIRE(st.live_allocs == md->live);
	REQUIRE(st.free_ranges == runs);
	REQUIRE(st.largest_free == largest * U);
	/* Iteration visits exactly the model's allocations. */
	{
		uint64_t it = va->base, b, s;
		uint32_t u = 0;

		while (vaalloc_next(va, it, &b, &s) == 0) {
			while (u < NU && !md->units[u])
				u++;
			REQUIRE(u < NU);
			REQUIRE(b == unit_addr(md, u));
			REQUIRE(s == md->units[u] * U);
			it = b + s;
			u++;
		}
		while (u < NU && !md->units[u])
			u++;
		REQUIRE(u == NU);
	}
}

static void run_model(uint64_t base, uint64_t seed, int steps)
{
	static const uint64_t aligns[] = {
		0, 1, 16, 255, 256, 256, 256, 512, 1024, 4096, 4096, 65536,
		256 * KiB, 3, 768, 1ULL << 40,
	};
	static struct model md;
	struct vaalloc va;
	size_t n_alloc = 0, n_nospc = 0, n_free = 0, n_badfree = 0;
	size_t n_hit = 0;

	rng_seed(seed);
	memset(&md, 0, sizeof(md));
	md.base = base;
	for (uint32_t u = 0; u < NU; u++)
		md.owner[u] = -1;
	ck_assert_int_eq(vaalloc_init(&va, base, NU * U), 0);

	for (int step = 0; step < steps; step++) {
		unsigned int op = rnd(100);

		if (op < 45) {
			uint64_t size, align = aligns[rnd(ARRAY_SIZE(aligns))];
			uint64_t su = 0, addr = 0;
			int expect, rc;

			switch (rnd(8)) {
			case 0:
				size = rnd(2) ? 0 : rnd(64 * KiB);
				break;
			case 1:
				size = (1 + rnd(16)) * U;
				break;
			case 2:
				size = rnd(NU * U + 1024);
				break;
			default:
				size = 1 + rnd(6 * KiB);
				break;
			}
			expect = model_alloc(&md, size, align, &su);
			rc = vaalloc_alloc(&va, size, align, &addr);
			REQUIRE(rc == expect);
			if (rc == 0) {
				uint32_t n = (size + U - 1) / U;

				REQUIRE(addr == unit_addr(&md, su));
				md.units[su] = n;
				for (uint32_t i = 0; i < n; i++)
					md.owner[su + i] = su;
				md.used += n * U;
				md.live++;
				n_alloc++;
			} else if (rc == -ENOSPC) {
				n_nospc++;
			}
		} else if (op < 80) {
			uint32_t u = rnd(NU);
			uint64_t addr;
			int64_t rc;

			switch (rnd(8)) {
			case 0:		/* anywhere, maybe misaligned */
				addr = unit_addr(&md, u) + rnd(2) * rnd(U);
				break;
			case 1:		/* outside the window */
				addr = rnd(2) ? base - U * (1 + rnd(4))
					      : base + NU * U + U * rnd(4);
				break;
			default:	/* the start of a live allocation */
				if (md.owner[u] >= 0)
					u = md.owner[u];
				addr = unit_addr(&md, u);
				break;
			}
			rc = vaalloc_free(&va, addr);
			if (addr >= base && addr < base + NU * U &&
			    (addr - base) % U == 0 && md.units[(addr - base) / U]) {
				uint32_t s = (addr - base) / U;
				uint32_t n = md.units[s];

				REQUIRE(rc == (int64_t)(n * U));
				for (uint32_t i = 0; i < n; i++)
					md.owner[s + i] = -1;
				md.units[s] = 0;
				md.used -= n * U;
				md.live--;
				n_free++;
			} else {
				REQUIRE(rc == -ENOENT);
				n_badfree++;
			}
		} else {
			uint64_t addr = base - 2 * U + rnd(NU * U + 4 * U);
			uint64_t lb = 0, ls = 0;
			int rc = vaalloc_lookup(&va, addr, &lb, &ls);

			if (addr >= base && addr < base + NU * U &&
			    md.owner[(addr - base) / U] >= 0) {
				uint32_t s = md.owner[(addr - base) / U];

				REQUIRE(rc == 0);
				REQUIRE(lb == unit_addr(&md, s));
				REQUIRE(ls == md.units[s] * U);
				n_hit++;
			} else {
				REQUIRE(rc == -ENOENT);
			}
		}
		if (step % 512 == 0)
			model_verify(&md, &va);
	}
	model_verify(&md, &va);
	ck_assert_msg(n_alloc > 2000 && n_nospc > 500 && n_free > 2000 &&
		      n_badfree > 500 && n_hit > 1000,
		      "alloc %zu nospc %zu free %zu badfree %zu hit %zu",
		      n_alloc, n_nospc, n_free, n_badfree, n_hit);
	vaalloc_destroy(&va);
}

START_TEST(test_random_aligned_base)
{
	run_model(0x7f0000000000ULL, 0xa110c001, 60000);
}
END_TEST

/* A base that is 256- but not 4 KiB-aligned shifts every alignment. */
START_TEST(test_random_odd_base)
{
	run_model(0x7f0000000300ULL, 0xa110c002, 60000);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2^20 x 4 KiB                                                             */
/* ------------------------------------------------------------------------ */

#define BIG_N	(1U << 20)

START_TEST(test_million_pages)
{
	const uint64_t base = 0x7f0000000000ULL, page = 4 * KiB;
	uint32_t *order = malloc(BIG_N * sizeof(*order));
	struct vaalloc va;
	uint64_t a;

	ck_assert_ptr_nonnull(order);
	rng_seed(7);
	/* The window holds exactly 2^20 pages. */
	ck_assert_int_eq(vaalloc_init(&va, base, BIG_N * page), 0);

	for (int round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < BIG_N; i++) {
			REQUIRE(vaalloc_alloc(&va, page, 0, &a) == 0);
			REQUIRE(a == base + i * page);
		}
		ck_assert_int_eq(vaalloc_alloc(&va, 1, 0, &a), -ENOSPC);
		check_stats(&va, BIG_N * page, BIG_N, 0, 0);

		for (uint32_t i = 0; i < BIG_N; i++)
			order[i] = round == 0 ? i : round == 1 ? BIG_N - 1 - i
							      : i;
		if (round == 2)
			shuffle(order, BIG_N);
		for (uint32_t i = 0; i < BIG_N; i++) {
			uint64_t p = base + order[i] * page, lb, ls;

			if ((i & 0x3fff) == 0) {
				REQUIRE(vaalloc_lookup(&va, p + 100, &lb, &ls) == 0);
				REQUIRE(lb == p && ls == page);
			}
			REQUIRE(vaalloc_free(&va, p) == (int64_t)page);
			if ((i & 0x3fff) == 0) {
				REQUIRE(vaalloc_free(&va, p) == -ENOENT);
				REQUIRE(vaalloc_lookup(&va, p, NULL, NULL) ==
					-ENOENT);
			}
			if (i == BIG_N / 2)
				REQUIRE(vaalloc_verify(&va) == 0);
		}
		/* Everything coalesced back into one range. */
		check_stats(&va, 0, 0, 1, BIG_N * page);
	}
	ck_assert_int_eq(vaalloc_alloc(&va, BIG_N * page, 0, &a), 0);
	ck_assert_uint_eq(a, base);
	ck_assert_int_eq(vaalloc_free(&va, a), (int64_t)(BIG_N * page));
	vaalloc_destroy(&va);
	free(order);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("vaalloc");
	TCase *tc = tcase_create("vaalloc");
	SRunner *sr;
	int failed;

	/* A hang guard only; nothing depends on speed. */
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_basic_rounding_lookup);
	tcase_add_test(tc, test_coalesce);
	tcase_add_test(tc, test_exhaustion_and_big_alignment);
	tcase_add_test(tc, test_exact_fallback);
	tcase_add_test(tc, test_top_of_address_space);
	tcase_add_test(tc, test_random_aligned_base);
	tcase_add_test(tc, test_random_odd_base);
	tcase_add_test(tc, test_million_pages);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
