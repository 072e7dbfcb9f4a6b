// SPDX-License-Identifier: MIT
/*
 * sim-kernels: the host twins of tests/sim-kernels/kernels.cu in
 * axond/sim/kernels.c, run on host buffers behind a small translate()
 * that maps fake device addresses: every number checked, partial and
 * oversized grids, multi-dimensional grids, invalid and misaligned pointer
 * ranges, bad arguments and launch dimensions, lookup by name. The
 * parameter layouts are also compared with what axond/sim/image.c reads
 * from the nvcc-made cubin; without it (no nvcc) that part is skipped and
 * the program exits 77 after the rest passed.
 */
#include <check.h>
#include <cuda.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image.h"
#include "kernels.h"

/* ------------------------------------------------------------------------ */
/* Fake device memory                                                       */
/* ------------------------------------------------------------------------ */

#define DEV_BASE	0x7f0000000000ULL
#define DEV_STRIDE	0x10000000ULL
#define MAX_REGIONS	8

struct region {
	uint64_t dev;
	size_t len;
	uint8_t *host;
};

static struct arena {
	struct region r[MAX_REGIONS];
	int n;
	unsigned calls;
	uint64_t last_addr, last_len;
} A;

static void *xlate(void *ctx, uint64_t addr, uint64_t len)
{
	struct arena *a = ctx;
	int i;

	a->calls++;
	a->last_addr = addr;
	a->last_len = len;
	for (i = 0; i < a->n; i++) {
		const struct region *r = &a->r[i];

		if (addr >= r->dev && addr - r->dev <= r->len &&
		    len <= r->len - (addr - r->dev))
			return r->host + (addr - r->dev);
	}
	return NULL;
}

/* A zero-filled device buffer of len bytes; returns its device address. */
static uint64_t dev_alloc(size_t len)
{
	struct region *r;

	ck_assert_int_lt(A.n, MAX_REGIONS);
	r = &A.r[A.n];
	r->dev = DEV_BASE + (uint64_t)A.n * DEV_STRIDE;
	r->len = len;
	r->host = calloc(1, len ? len : 1);
	A.n++;
	return r->dev;
}

static void *host(uint64_t dev)
{
	int i;

	for (i = 0; i < A.n; i++)
		if (dev >= A.r[i].dev && dev - A.r[i].dev < A.r[i].len + 1)
			return A.r[i].host + (dev - A.r[i].dev);
	ck_abort_msg("no region for %#llx", (unsigned long long)dev);
	return NULL;
}

static void arena_reset(void)
{
	int i;

	for (i = 0; i < A.n; i++)
		free(A.r[i].host);
	memset(&A, 0, sizeof(A));
}

static void setup(void)
{
	memset(&A, 0, sizeof(A));
}

static void teardown(void)
{
	arena_reset();
}

/* ------------------------------------------------------------------------ */
/* Launch helpers                                                           */
/* ------------------------------------------------------------------------ */

struct args {
	uint8_t b[128];
	size_t n;
};

static void put(struct args *a, size_t off, const void *v, size_t size)
{
	memcpy(a->b + off, v, size);
	if (off + size > a->n)
		a->n = off + size;
}

static void put_u64(struct args *a, size_t off, uint64_t v)
{
	put(a, off, &v, 8);
}

static void put_i32(struct args *a, size_t off, int32_t v)
{
	put(a, off, &v, 4);
}

static void put_f32(struct args *a, size_t off, float v)
{
	put(a, off, &v, 4);
}

struct dims {
	uint32_t g[3], b[3];
};

#define D1(gx, bx)	((struct dims){ { (gx), 1, 1 }, { (bx), 1, 1 } })

static int run_k(const char *sym, struct dims d, const struct args *a)
{
	const struct sim_kernel *k = sim_kernels_find(sym);
	struct sim_launch l = {
		.grid = { d.g[0], d.g[1], d.g[2] },
		.block = { d.b[0], d.b[1], d.b[2] },
		.args = a ? a->b : NULL, .args_size = a ? a->n : 0,
		.translate = xlate, .ctx = &A,
	};

	ck_assert_msg(k, "no kernel for %s", sym);
	return k->run(&l);
}

/* vectorAdd-style arguments: 3 pointers and n */
static struct args args_ppp_n(uint64_t a, uint64_t b, uint64_t c, int32_t n)
{
	struct args g = { .n = 0 };

	put_u64(&g, 0, a);
	put_u64(&g, 8, b);
	put_u64(&g, 16, c);
	put_i32(&g, 24, n);
	return g;
}

static const float SENT = -12345.0f;

/*
 * Element checks inside loops: Check sends its parent a message for every
 * assertion passed, so these go through Check only when they fail.
 */
#define EQ_F(have, want)						\
	do {								\
		float h_ = (have), w_ = (want);				\
									\
		if (memcmp(&h_, &w_, sizeof(h_)))			\
			ck_abort_msg("line %d: %s = %a, expected %a",	\
				     __LINE__, #have, h_, w_);		\
	} while (0)
#define EQ_U(have, want)						\
	do {								\
		unsigned long long h_ = (have), w_ = (want);		\
									\
		if (h_ != w_)						\
			ck_abort_msg("line %d: %s = %#llx, expected %#llx", \
				     __LINE__, #have, h_, w_);		\
	} while (0)

static void fill_sent(float *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = SENT;
}

/* ------------------------------------------------------------------------ */
/* Lookup                                                                   */
/* ------------------------------------------------------------------------ */

START_TEST(test_find)
{
	static const struct { const char *sym, *name; } ok[] = {
		{ "_Z9vectorAddPKfS0_Pfi", "vectorAdd" },
		{ "vectorAdd", "vectorAdd" },
		{ "_Z6vecAddPKfS0_Pfi", "vecAdd" },
		{ "fill", "fill" },
		{ "_Z4fillPffi", "fill" },
		{ "saxpy", "saxpy" },
		{ "_Z5scalePffi", "scale" },
		{ "_ZL5scalePffi", "scale" },
		{ "iota_u32", "iota_u32" },
		{ "add_one_u8", "add_one_u8" },
		{ "_Z5add2dPKfS0_Pfiii", "add2d" },
		{ "iota3d", "iota3d" },
		{ "probe_params", "probe_params" },
		{ "nop", "nop" },
		{ "_Z3nopv", "nop" },
	};
	static const char *const bad[] = {
		"", "g_touch", "unknown", "fil", "fillx", "Fill", "_Z", "_Z0fill",
		"_Z99fill", "_Z4fil", "_ZN2ns4fillEPfi", "_Z4fil\0l", "_ZL",
		"_Z1234567fill", "_Z5fillx", "__Z4fill",
	};
	size_t i, n;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		const struct sim_kernel *k = sim_kernels_find(ok[i].sym);

		ck_assert_msg(k, "%s not found", ok[i].sym);
		ck_assert_str_eq(k->name, ok[i].name);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!sim_kernels_find(bad[i]), "%s found", bad[i]);
	ck_assert_ptr_null(sim_kernels_find(NULL));

	for (n = 0; sim_kernels_get(n); n++) {
		const struct sim_kernel *k = sim_kernels_get(n);
		uint32_t j, end = 0;

		ck_assert_ptr_nonnull(k->run);
		ck_assert_ptr_nonnull(k->proto);
		ck_assert_ptr_eq(sim_kernels_find(k->name), k);
		for (j = 0; j < k->nparams; j++)
			end = k->params[j].offset + k->params[j].size;
		EQ_U(end, k->args_size);
	}
	ck_assert_uint_eq(n, 14);
}
END_TEST

START_TEST(test_base_name)
{
	const char *b;

	ck_assert_uint_eq(sim_kernels_base_name("_Z9vectorAddPKfS0_Pfi", &b), 9);
	ck_assert_int_eq(strncmp(b, "vectorAdd", 9), 0);
	ck_assert_uint_eq(sim_kernels_base_name("plain", &b), 5);
	ck_assert_str_eq(b, "plain");
	ck_assert_uint_eq(sim_kernels_base_name("_Z99x", &b), 5);
	ck_assert_str_eq(b, "_Z99x");
	ck_assert_uint_eq(sim_kernels_base_name(NULL, &b), 0);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 1-D kernels                                                              */
/* ------------------------------------------------------------------------ */

static void vadd_case(const char *sym)
{
	const int n = 1000;
	uint64_t a = dev_alloc(n * 4), b = dev_alloc(n * 4),
		 c = dev_alloc(n * 4);
	float *ha = host(a), *hb = host(b), *hc = host(c);
	struct args g = args_ppp_n(a, b, c, n);
	int i;

	for (i = 0; i < n; i++) {
		ha[i] = (float)i * 0.5f;
		hb[i] = 1000.0f - (float)i * 0.25f;
	}

	/* full grid, last block partly out of range */
	fill_sent(hc, n);
	ck_assert_int_eq(run_k(sym, D1(8, 128), &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_F(hc[i], ha[i] + hb[i]);
	/* exactly the n elements were asked for */
	ck_assert_uint_eq(A.last_addr, c);
	ck_assert_uint_eq(A.last_len, n * 4);

	/* too small a grid: the rest stays */
	fill_sent(hc, n);
	ck_assert_int_eq(run_k(sym, D1(3, 100), &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_F(hc[i], i < 300 ? ha[i] + hb[i] : SENT);

	/* much too large a grid: still only n */
	fill_sent(hc, n);
	ck_assert_int_eq(run_k(sym, D1(1000, 1000), &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_F(hc[i], ha[i] + hb[i]);

	/* in place: c = a + c */
	g = args_ppp_n(a, c, c, n);
	ck_assert_int_eq(run_k(sym, D1(4, 256), &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_F(hc[i], ha[i] + (ha[i] + hb[i]));
}

START_TEST(test_vector_add)
{
	vadd_case("_Z9vectorAddPKfS0_Pfi");
}
END_TEST

START_TEST(test_vec_add)
{
	vadd_case("_Z6vecAddPKfS0_Pfi");
}
END_TEST

START_TEST(test_bad_pointers)
{
	const int n = 1000;
	uint64_t a = dev_alloc(n * 4), b = dev_alloc(n * 4),
		 c = dev_alloc(500 * 4);
	float *hc = host(c);
	struct args g;
	int i;

	/* c holds 500 floats: the launch touches 1000 -> nothing written */
	fill_sent(hc, 500);
	g = args_ppp_n(a, b, c, n);
	ck_assert_int_eq(run_k("vecAdd", D1(8, 128), &g),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	for (i = 0; i < 500; i++)
		EQ_F(hc[i], SENT);
	/* but a grid that only reaches 500 is fine, as on a GPU */
	ck_assert_int_eq(run_k("vecAdd", D1(5, 100), &g), CUDA_SUCCESS);
	ck_assert_float_eq(hc[499], 0.0f);

	/* unmapped, NULL, wrapping, past the end, before the start */
	g = args_ppp_n(a, 0xdead0000ULL, c, 10);
	ck_assert_int_eq(run_k("vecAdd", D1(1, 32), &g),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	g = args_ppp_n(0, b, c, 10);
	ck_assert_int_eq(run_k("vecAdd", D1(1, 32), &g),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	g = args_ppp_n(a, b, ~0ULL - 15, 10);
	ck_assert_int_eq(run_k("vecAdd", D1(1, 32), &g),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	g = args_ppp_n(a, b, c + 4, 500);
	ck_assert_int_eq(run_k("vecAdd", D1(1, 512), &g),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	g = args_ppp_n(a, b, c - 4, 10);
	ck_assert_int_eq(run_k("vecAdd", D1(1, 32), &g),
			 CUDA_ERROR_ILLEGAL_ADDRESS);

	/* misaligned float pointer */
	g = args_ppp_n(a, b, c + 2, 10);
	ck_assert_int_eq(run_k("vecAdd", D1(1, 32), &g),
			 CUDA_ERROR_MISALIGNED_ADDRESS);

	/* n = 0 (or negative): nothing touched, garbage pointers are fine */
	A.calls = 0;
	g = args_ppp_n(0, 0xdead0001ULL, 3, 0);
	ck_assert_int_eq(run_k("vecAdd", D1(4, 64), &g), CUDA_SUCCESS);
	g = args_ppp_n(0, 0xdead0001ULL, 3, -5);
	ck_assert_int_eq(run_k("vecAdd", D1(4, 64), &g), CUDA_SUCCESS);
	ck_assert_uint_eq(A.calls, 0);
}
END_TEST

START_TEST(test_bad_launch)
{
	uint64_t a = dev_alloc(64);
	struct args g = args_ppp_n(a, a, a, 16);
	static const struct dims bad[] = {
		{ { 0, 1, 1 }, { 1, 1, 1 } },
		{ { 1, 0, 1 }, { 1, 1, 1 } },
		{ { 1, 1, 0 }, { 1, 1, 1 } },
		{ { 1, 1, 1 }, { 0, 1, 1 } },
		{ { 1, 1, 1 }, { 1025, 1, 1 } },
		{ { 1, 1, 1 }, { 1, 1025, 1 } },
		{ { 1, 1, 1 }, { 1, 1, 65 } },
		{ { 1, 1, 1 }, { 32, 32, 2 } },
		{ { 0x80000000U, 1, 1 }, { 1, 1, 1 } },
		{ { 1, 65536, 1 }, { 1, 1, 1 } },
		{ { 1, 1, 65536 }, { 1, 1, 1 } },
	};
	const struct sim_kernel *k = sim_kernels_find("vecAdd");
	struct sim_launch l = {
		.grid = { 1, 1, 1 }, .block = { 16, 1, 1 }, .args = g.b,
		.args_size = g.n, .translate = xlate, .ctx = &A,
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(run_k("vecAdd", bad[i], &g) ==
			      CUDA_ERROR_INVALID_VALUE, "dims %zu", i);
	/* the limits themselves are fine */
	ck_assert_int_eq(run_k("vecAdd", ((struct dims){ { 1, 1, 1 },
						{ 1024, 1, 1 } }), &g), 0);
	ck_assert_int_eq(run_k("vecAdd", ((struct dims){ { 1, 65535, 1 },
						{ 1, 1, 1 } }), &g), 0);
	ck_assert_int_eq(run_k("vecAdd", ((struct dims){ { 1, 1, 65535 },
						{ 1, 1, 1 } }), &g), 0);
	ck_assert_int_eq(run_k("vecAdd", ((struct dims){ { 1, 1, 1 },
						{ 1, 16, 64 } }), &g), 0);
	/* too much for the sim */
	ck_assert_int_eq(run_k("vecAdd", D1(0x7fffffffU, 1024), &g),
			 CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(run_k("vecAdd", ((struct dims){ { 65535, 65535,
				65535 }, { 1024, 1, 1 } }), &g),
			 CUDA_ERROR_NOT_SUPPORTED);

	/* argument buffer */
	l.args_size = 27;
	ck_assert_int_eq(k->run(&l), CUDA_ERROR_INVALID_VALUE);
	l.args_size = 32;
	ck_assert_int_eq(k->run(&l), CUDA_ERROR_INVALID_VALUE);
	l.args_size = 28;
	l.args = NULL;
	ck_assert_int_eq(k->run(&l), CUDA_ERROR_INVALID_VALUE);
	l.args = g.b;
	l.translate = NULL;
	ck_assert_int_eq(k->run(&l), CUDA_ERROR_INVALID_VALUE);
	l.translate = xlate;
	ck_assert_int_eq(k->run(&l), CUDA_SUCCESS);
	ck_assert_int_eq(k->run(NULL), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(test_fill_scale)
{
	const int n = 777;
	uint64_t p = dev_alloc(n * 4);
	float *hp = host(p);
	struct args g = { .n = 0 };
	int i;

	put_u64(&g, 0, p);
	put_f32(&g, 8, 2.5f);
	put_i32(&g, 12, n);
	ck_assert_int_eq(run_k("fill", D1(7, 128), &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_F(hp[i], 2.5f);

	put_f32(&g, 8, -3.0f);
	put_i32(&g, 12, 500);
	ck_assert_int_eq(run_k("_Z5scalePffi", D1(4, 128), &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_F(hp[i], i < 500 ? -7.5f : 2.5f);

	/*
	 * Threads along y repeat the same i; the sim runs them one after
	 * the other, so each element is scaled twice (on a GPU the two
	 * read-modify-writes race).
	 */
	put_f32(&g, 8, 0.5f);
	put_i32(&g, 12, 100);
	ck_assert_int_eq(run_k("_Z5scalePffi",
			       ((struct dims){ { 1, 1, 1 }, { 128, 2, 1 } }),
			       &g), CUDA_SUCCESS);
	ck_assert_float_eq(hp[0], -7.5f * 0.25f);
	ck_assert_float_eq(hp[100], -7.5f);
}
END_TEST

START_TEST(test_saxpy)
{
	const int n = 4099;
	uint64_t x = dev_alloc(n * 4), y = dev_alloc(n * 4);
	float *hx = host(x), *hy = host(y), *y0 = malloc(n * 4);
	const float a = 1.0f + 0x1p-12f;
	volatile float prod;
	struct args g = { .n = 0 };
	int i;

	for (i = 0; i < n; i++) {
		hx[i] = 1.0f / (float)(i + 1);
		hy[i] = y0[i] = (float)i * 0.3f - 7.0f;
	}
	/* a * x + y: 2^-24 fused, 0 with the product rounded first */
	hx[0] = 1.0f + 0x1p-12f;
	hy[0] = y0[0] = -(1.0f + 0x1p-11f);
	prod = a * hx[0];
	ck_assert_float_ne(prod + y0[0], fmaf(a, hx[0], y0[0]));
	put_i32(&g, 0, n);
	put_f32(&g, 4, a);
	put_u64(&g, 8, x);
	put_u64(&g, 16, y);
	ck_assert_int_eq(run_k("saxpy", D1((n + 255) / 256, 256), &g),
			 CUDA_SUCCESS);
	/* bit-exact: one rounding, as the GPU's fused multiply-add */
	for (i = 0; i < n; i++)
		EQ_F(hy[i], fmaf(a, hx[i], y0[i]));
	free(y0);
}
END_TEST

START_TEST(test_iota_add_one)
{
	const int n = 1500;
	uint64_t p = dev_alloc(n * 4), q = dev_alloc(n);
	uint32_t *hp = host(p);
	uint8_t *hq = host(q);
	struct args g = { .n = 0 };
	int i;

	memset(hp, 0xee, n * 4);
	put_u64(&g, 0, p);
	put_i32(&g, 8, 1200);
	ck_assert_int_eq(run_k("iota_u32", D1(3, 512), &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_U(hp[i], i < 1200 ? (uint32_t)i : 0xeeeeeeeeU);

	for (i = 0; i < n; i++)
		hq[i] = (uint8_t)(i * 7);
	put_u64(&g, 0, q);
	put_i32(&g, 8, n);
	/* three blocks along y: each element incremented three times */
	ck_assert_int_eq(run_k("add_one_u8",
			       ((struct dims){ { 6, 3, 1 }, { 256, 1, 1 } }),
			       &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_U(hq[i], (uint8_t)(i * 7 + 3));
	/* byte-sized elements: any alignment is fine */
	put_u64(&g, 0, q + 1);
	put_i32(&g, 8, n - 1);
	ck_assert_int_eq(run_k("add_one_u8", D1(2, 1024), &g), CUDA_SUCCESS);
	ck_assert_uint_eq(hq[0], 3);
	ck_assert_uint_eq(hq[1], (uint8_t)(7 + 4));
	ck_assert_uint_eq(hq[n - 1], (uint8_t)((n - 1) * 7 + 4));
}
END_TEST

/* ------------------------------------------------------------------------ */
/* 2-D and 3-D                                                              */
/* ------------------------------------------------------------------------ */

static struct args args_add2d(uint64_t a, uint64_t b, uint64_t c, int w,
			      int h, int pitch)
{
	struct args g = args_ppp_n(a, b, c, w);

	put_i32(&g, 28, h);
	put_i32(&g, 32, pitch);
	return g;
}

START_TEST(test_add2d)
{
	const int w = 37, h = 19, pitch = 40, n = pitch * h;
	uint64_t a = dev_alloc(n * 4), b = dev_alloc(n * 4),
		 c = dev_alloc(n * 4);
	float *ha = host(a), *hb = host(b), *hc = host(c);
	struct args g = args_add2d(a, b, c, w, h, pitch);
	int x, y;

	for (x = 0; x < n; x++) {
		ha[x] = (float)x;
		hb[x] = (float)(x % 13) * 0.125f;
	}
	fill_sent(hc, n);
	ck_assert_int_eq(run_k("_Z5add2dPKfS0_Pfiii",
			       ((struct dims){ { 3, 3, 1 }, { 16, 8, 1 } }),
			       &g), CUDA_SUCCESS);
	for (y = 0; y < h; y++)
		for (x = 0; x < pitch; x++)
			EQ_F(hc[y * pitch + x],
					   x < w ? ha[y * pitch + x] +
						   hb[y * pitch + x] : SENT);

	/* partial grid: 32 x 16 */
	fill_sent(hc, n);
	ck_assert_int_eq(run_k("_Z5add2dPKfS0_Pfiii",
			       ((struct dims){ { 2, 2, 1 }, { 16, 8, 1 } }),
			       &g), CUDA_SUCCESS);
	for (y = 0; y < h; y++)
		for (x = 0; x < pitch; x++)
			EQ_F(hc[y * pitch + x],
					   x < 32 && y < 16 ?
					   ha[y * pitch + x] + hb[y * pitch + x] :
					   SENT);

	/* negative pitch from the last row: rows upside down, indices < 0 */
	{
		uint64_t last = (uint64_t)(h - 1) * pitch * 4;

		g = args_add2d(a + last, b + last, c + last, w, h, -pitch);
		fill_sent(hc, n);
		ck_assert_int_eq(run_k("_Z5add2dPKfS0_Pfiii",
				       ((struct dims){ { 3, 3, 1 },
						       { 16, 8, 1 } }), &g),
				 CUDA_SUCCESS);
		for (y = 0; y < h; y++)
			for (x = 0; x < w; x++)
				EQ_F(hc[y * pitch + x],
						   ha[y * pitch + x] +
						   hb[y * pitch + x]);
		/* the same from the first row reaches before the buffers */
		g = args_add2d(a, b, c, w, h, -pitch);
		ck_assert_int_eq(run_k("_Z5add2dPKfS0_Pfiii",
				       ((struct dims){ { 3, 3, 1 },
						       { 16, 8, 1 } }), &g),
				 CUDA_ERROR_ILLEGAL_ADDRESS);
	}

	/* y * pitch overflows int: wraps as on the GPU, and is refused */
	g = args_add2d(a, b, c, w, h, 0x40000000);
	ck_assert_int_eq(run_k("_Z5add2dPKfS0_Pfiii",
			       ((struct dims){ { 3, 3, 1 }, { 16, 8, 1 } }),
			       &g), CUDA_ERROR_ILLEGAL_ADDRESS);
}
END_TEST

START_TEST(test_iota3d)
{
	const int nx = 10, ny = 7, nz = 5, n = nx * ny * nz;
	uint64_t p = dev_alloc((n + 16) * 4);
	uint32_t *hp = host(p);
	struct args g = { .n = 0 };
	int i;

	memset(hp, 0xab, (n + 16) * 4);
	put_u64(&g, 0, p);
	put_i32(&g, 8, nx);
	put_i32(&g, 12, ny);
	put_i32(&g, 16, nz);
	ck_assert_int_eq(run_k("iota3d",
			       ((struct dims){ { 3, 2, 3 }, { 4, 4, 2 } }),
			       &g), CUDA_SUCCESS);
	for (i = 0; i < n + 16; i++)
		EQ_U(hp[i], i < n ? (uint32_t)i : 0xababababU);

	/* z only up to 2 */
	memset(hp, 0, (n + 16) * 4);
	ck_assert_int_eq(run_k("iota3d",
			       ((struct dims){ { 3, 2, 1 }, { 4, 4, 2 } }),
			       &g), CUDA_SUCCESS);
	for (i = 0; i < n; i++)
		EQ_U(hp[i], i < 2 * nx * ny ? (uint32_t)i : 0);

	/* a buffer one element short */
	put_i32(&g, 16, nz + 3);
	ck_assert_int_eq(run_k("iota3d",
			       ((struct dims){ { 3, 2, 8 }, { 4, 4, 1 } }),
			       &g), CUDA_ERROR_ILLEGAL_ADDRESS);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Parameters of every size                                                 */
/* ------------------------------------------------------------------------ */

START_TEST(test_probe_params)
{
	uint64_t q = dev_alloc(4), out = dev_alloc(9 * 8), out8 = dev_alloc(64);
	double *ho = host(out);
	struct args g = { .n = 0 };
	int8_t c = -5, sc = 'x';
	int16_t h = -300;
	int32_t i = 123456, si = 42, qv = 77;
	double d = 3.25, sd = -1.5;
	float sf = 2.5f;

	memcpy(host(q), &qv, 4);
	put(&g, 0, &c, 1);
	put(&g, 4, &i, 4);
	put(&g, 8, &d, 8);
	put(&g, 16, &sd, 8);		/* struct probe24 */
	put(&g, 24, &si, 4);
	put(&g, 28, &sc, 1);
	put(&g, 32, &sf, 4);
	put(&g, 40, &h, 2);
	put_u64(&g, 48, q);
	put_u64(&g, 56, out);
	ck_assert_uint_eq(g.n, 64);
	ck_assert_int_eq(run_k("probe_params",
			       ((struct dims){ { 2, 2, 1 }, { 3, 1, 2 } }),
			       &g), CUDA_SUCCESS);
	ck_assert_double_eq(ho[0], -5.0);
	ck_assert_double_eq(ho[1], 123456.0);
	ck_assert_double_eq(ho[2], 3.25);
	ck_assert_double_eq(ho[3], -1.5);
	ck_assert_double_eq(ho[4], 42.0);
	ck_assert_double_eq(ho[5], (double)'x');
	ck_assert_double_eq(ho[6], 2.5);
	ck_assert_double_eq(ho[7], -300.0);
	ck_assert_double_eq(ho[8], 77.0);

	/* room for 8 doubles only */
	put_u64(&g, 56, out8);
	ck_assert_int_eq(run_k("probe_params", D1(1, 1), &g),
			 CUDA_ERROR_ILLEGAL_ADDRESS);
	/* misaligned double pointer */
	put_u64(&g, 56, out + 4);
	ck_assert_int_eq(run_k("probe_params", D1(1, 1), &g),
			 CUDA_ERROR_MISALIGNED_ADDRESS);
}
END_TEST

START_TEST(test_nop)
{
	struct args g = { .n = 4 };

	ck_assert_int_eq(run_k("nop", D1(100, 100), NULL), CUDA_SUCCESS);
	ck_assert_int_eq(run_k("nop", D1(100, 100), &g),
			 CUDA_ERROR_INVALID_VALUE);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Against the cubin                                                        */
/* ------------------------------------------------------------------------ */

static char cubin_path[PATH_MAX + 64];

static void find_cubin(void)
{
	const char *b = getenv("AXON_BUILD");
	char exe[PATH_MAX];
	ssize_t n;

	if (b && *b) {
		snprintf(cubin_path, sizeof(cubin_path),
			 "%s/tests/data/kernels.cubin", b);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(cubin_path, sizeof(cubin_path),
			 "%s/data/kernels.cubin", exe);
	}
}

START_TEST(test_layout_matches_cubin)
{
	FILE *f = fopen(cubin_path, "rb");
	static uint8_t buf[1 << 20];
	struct sim_image *img;
	char err[256];
	size_t len, i, matched = 0;

	ck_assert_msg(f, "cannot open %s", cubin_path);
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	ck_assert_int_eq(sim_image_parse(buf, len, &img, err, sizeof(err)), 0);
	for (i = 0; i < img->nkernels; i++) {
		const struct sim_kernel_desc *d = &img->kernels[i];
		const struct sim_kernel *k = sim_kernels_find(d->name);
		uint32_t j;

		if (!k) {
			ck_assert_str_eq(d->name, "g_touch");	/* image only */
			continue;
		}
		matched++;
		ck_assert_msg(k->nparams == d->nparams &&
			      k->args_size == d->args_size,
			      "%s: %u params %u bytes, image %u %u", d->name,
			      k->nparams, k->args_size, d->nparams,
			      d->args_size);
		for (j = 0; j < d->nparams; j++)
			ck_assert_msg(k->params[j].offset ==
				      d->params[j].offset &&
				      k->params[j].size == d->params[j].size,
				      "%s param %u", d->name, j);
	}
	ck_assert_uint_eq(matched, 14);
	sim_image_free(img);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim-kernels");
	TCase *tc = tcase_create("kernels");
	SRunner *sr;
	bool have_cubin;
	int failed;

	find_cubin();
	have_cubin = access(cubin_path, R_OK) == 0;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_base_name);
	tcase_add_test(tc, test_vector_add);
	tcase_add_test(tc, test_vec_add);
	tcase_add_test(tc, test_bad_pointers);
	tcase_add_test(tc, test_bad_launch);
	tcase_add_test(tc, test_fill_scale);
	tcase_add_test(tc, test_saxpy);
	tcase_add_test(tc, test_iota_add_one);
	tcase_add_test(tc, test_add2d);
	tcase_add_test(tc, test_iota3d);
	tcase_add_test(tc, test_probe_params);
	tcase_add_test(tc, test_nop);
	if (have_cubin)
		tcase_add_test(tc, test_layout_matches_cubin);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return 1;
	if (!have_cubin) {
		fprintf(stderr, "sim-kernels: %s missing (no nvcc at build time?): layout check skipped\n",
			cubin_path);
		return 77;
	}
	return 0;
}
