// SPDX-License-Identifier: MIT
/*
 * sim/kernels: host twins of tests/sim-kernels/kernels.cu. See kernels.h.
 *
 * Each kernel is a body run once per thread, written like the CUDA source
 * with ld_*()/st_*() for memory accesses. A launch walks the grid twice:
 * first with memory accesses only recorded (the element index range of
 * each pointer argument), then, once every range has been translated and
 * found valid, for real. Index arithmetic that CUDA does in 32-bit
 * (blockIdx.x * blockDim.x + threadIdx.x, y * pitch + x) is done here in
 * uint32_t and converted to int32_t, which wraps as on the GPU instead of
 * being undefined behaviour in C.
 */
#include "kernels.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

/* ------------------------------------------------------------------------ */
/* The engine                                                               */
/* ------------------------------------------------------------------------ */

#define MAX_PTRS	4

struct u3 {
	uint32_t x, y, z;
};

/* What a CUDA thread sees. */
struct thr {
	struct u3 blockIdx, threadIdx, blockDim, gridDim;
};

struct ptr_arg {
	uint64_t dev;		/* device address from the arguments */
	unsigned esize;		/* element size */
	bool any;		/* accessed at all */
	int64_t lo, hi;		/* element indices accessed, inclusive */
	uint8_t *host;		/* host address of element lo */
};

struct exec {
	bool measure;		/* first pass: record, don't access */
	bool fault;		/* second pass: out of the recorded range */
	bool assert_failed;	/* second pass: a device-side assert fired */
	struct ptr_arg ptr[MAX_PTRS];
	const uint8_t *args;	/* the packed parameters */
	const struct sim_launch *l;	/* for output() */
};

typedef void (*body_fn)(struct exec *x, const struct thr *t);

/* Scalar parameters, read from the packed buffer at their offsets. */
static int32_t arg_i32(const struct exec *x, uint32_t off)
{
	int32_t v;

	memcpy(&v, x->args + off, sizeof(v));
	return v;
}

static float arg_f32(const struct exec *x, uint32_t off)
{
	float v;

	memcpy(&v, x->args + off, sizeof(v));
	return v;
}

static int64_t arg_i64(const struct exec *x, uint32_t off)
{
	int64_t v;

	memcpy(&v, x->args + off, sizeof(v));
	return v;
}

static double arg_f64(const struct exec *x, uint32_t off)
{
	double v;

	memcpy(&v, x->args + off, sizeof(v));
	return v;
}

static int16_t arg_i16(const struct exec *x, uint32_t off)
{
	int16_t v;

	memcpy(&v, x->args + off, sizeof(v));
	return v;
}

static int8_t arg_i8(const struct exec *x, uint32_t off)
{
	int8_t v;

	memcpy(&v, x->args + off, sizeof(v));
	return v;
}

/* The host address of element idx of pointer slot s, NULL while measuring. */
static void *elem(struct exec *x, unsigned s, int64_t idx)
{
	struct ptr_arg *p = &x->ptr[s];

	if (x->measure) {
		if (!p->any) {
			p->any = true;
			p->lo = p->hi = idx;
		} else if (idx < p->lo) {
			p->lo = idx;
		} else if (idx > p->hi) {
			p->hi = idx;
		}
		return NULL;
	}
	/* cannot happen while indices depend only on ids and scalars */
	if (!p->any || idx < p->lo || idx > p->hi) {
		x->fault = true;
		return NULL;
	}
	return p->host + (uint64_t)(idx - p->lo) * p->esize;
}

/* memcpy: the host copy of device memory need not be aligned for C. */
#define DEFINE_LDST(sfx, type)						\
static __attribute__((unused))					\
type ld_##sfx(struct exec *x, unsigned s, int64_t i)			\
{									\
	type v = 0;							\
	void *p = elem(x, s, i);					\
									\
	if (p)								\
		memcpy(&v, p, sizeof(v));				\
	return v;							\
}									\
static __attribute__((unused))					\
void st_##sfx(struct exec *x, unsigned s, int64_t i, type v)		\
{									\
	void *p = elem(x, s, i);					\
									\
	if (p)								\
		memcpy(p, &v, sizeof(v));				\
}

DEFINE_LDST(f32, float)
DEFINE_LDST(u32, uint32_t)
DEFINE_LDST(u8, uint8_t)
DEFINE_LDST(f64, double)
DEFINE_LDST(i32, int32_t)

/* Declares pointer parameter slot s: at args offset off, elements esize. */
static void ptr_param(struct exec *x, unsigned s, uint32_t off,
		      unsigned esize)
{
	memcpy(&x->ptr[s].dev, x->args + off, sizeof(uint64_t));
	x->ptr[s].esize = esize;
}

static void walk(struct exec *x, const struct sim_launch *l, body_fn body)
{
	struct thr t = {
		.gridDim = { l->grid[0], l->grid[1], l->grid[2] },
		.blockDim = { l->block[0], l->block[1], l->block[2] },
	};

	for (t.blockIdx.z = 0; t.blockIdx.z < l->grid[2]; t.blockIdx.z++)
	for (t.blockIdx.y = 0; t.blockIdx.y < l->grid[1]; t.blockIdx.y++)
	for (t.blockIdx.x = 0; t.blockIdx.x < l->grid[0]; t.blockIdx.x++) {
		if (x->fault)
			return;
		for (t.threadIdx.z = 0; t.threadIdx.z < l->block[2]; t.threadIdx.z++)
		for (t.threadIdx.y = 0; t.threadIdx.y < l->block[1]; t.threadIdx.y++)
		for (t.threadIdx.x = 0; t.threadIdx.x < l->block[0]; t.threadIdx.x++)
			body(x, &t);
	}
}

/* The limits of cuLaunchKernel on compute capability 9.0. */
static bool dims_ok(const struct sim_launch *l)
{
	uint64_t threads;

	if (!l->grid[0] || !l->grid[1] || !l->grid[2] ||
	    !l->block[0] || !l->block[1] || !l->block[2])
		return false;
	if (l->grid[0] > 0x7fffffffU || l->grid[1] > 65535 ||
	    l->grid[2] > 65535)
		return false;
	if (l->block[0] > 1024 || l->block[1] > 1024 || l->block[2] > 64)
		return false;
	threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
	return threads <= 1024;
}

/*
 * Runs body over the grid of l for kernel k: checks, unpacks the pointer
 * parameters with setup, measures, translates, executes.
 */
static int launch(const struct sim_kernel *k, const struct sim_launch *l,
		  void (*setup)(struct exec *x), body_fn body)
{
	struct exec x = { .measure = true };
	uint64_t blocks, threads;
	unsigned s;

	if (!l || !l->translate || l->args_size != k->args_size ||
	    (k->args_size && !l->args) || !dims_ok(l))
		return CUDA_ERROR_INVALID_VALUE;
	blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
	if (blocks > SIM_KERNELS_MAX_THREADS / threads)
		return CUDA_ERROR_NOT_SUPPORTED;

	x.args = l->args;
	x.l = l;
	if (setup)
		setup(&x);
	walk(&x, l, body);

	for (s = 0; s < MAX_PTRS; s++) {
		struct ptr_arg *p = &x.ptr[s];
		__int128 start, len;

		if (!p->any)
			continue;
		if (p->dev % p->esize)
			return CUDA_ERROR_MISALIGNED_ADDRESS;
		/* |lo|, |hi| < 2^34 and esize <= 8; no wrap-around */
		start = (__int128)p->dev + (__int128)p->lo * p->esize;
		len = ((__int128)p->hi - p->lo + 1) * p->esize;
		if (start < 0 || start + len > ((__int128)1 << 64))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		p->host = l->translate(l->ctx, (uint64_t)start, (uint64_t)len);
		if (!p->host)
			return CUDA_ERROR_ILLEGAL_ADDRESS;
	}

	x.measure = false;
	walk(&x, l, body);
	if (x.fault)
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	return x.assert_failed ? CUDA_ERROR_ASSERT : CUDA_SUCCESS;
}

/* A device printf: formatted on the host, as CUDA does, and only in the
 * executing pass. */
static void __attribute__((format(printf, 2, 3)))
dev_printf(struct exec *x, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	if (x->measure || !x->l->output)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	x->l->output(x->l->ctx, line, (size_t)n);
}

/* int i = blockIdx.x * blockDim.x + threadIdx.x; */
static int32_t global_x(const struct thr *t)
{
	return (int32_t)(t->blockIdx.x * t->blockDim.x + t->threadIdx.x);
}

static int32_t global_y(const struct thr *t)
{
	return (int32_t)(t->blockIdx.y * t->blockDim.y + t->threadIdx.y);
}

static int32_t global_z(const struct thr *t)
{
	return (int32_t)(t->blockIdx.z * t->blockDim.z + t->threadIdx.z);
}

/* 32-bit int arithmetic as the GPU does it: wrapping. */
static int32_t wadd(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t wmul(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a * (uint32_t)b);
}

/* ------------------------------------------------------------------------ */
/* The kernels                                                              */
/* ------------------------------------------------------------------------ */

#define P(off, size)	{ (off), (size) }

/* vectorAdd / vecAdd (const float *a, const float *b, float *c, int n) */
static const struct sim_kernel_param vadd_params[] = {
	P(0, 8), P(8, 8), P(16, 8), P(24, 4),
};

static void vadd_setup(struct exec *x)
{
	ptr_param(x, 0, 0, 4);
	ptr_param(x, 1, 8, 4);
	ptr_param(x, 2, 16, 4);
}

static void vadd_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	if (i < arg_i32(x, 24))
		st_f32(x, 2, i, ld_f32(x, 0, i) + ld_f32(x, 1, i));
}

/* fill (float *p, float v, int n) */
static const struct sim_kernel_param fill_params[] = {
	P(0, 8), P(8, 4), P(12, 4),
};

static void p0_f32_setup(struct exec *x)
{
	ptr_param(x, 0, 0, 4);
}

static void fill_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	if (i < arg_i32(x, 12))
		st_f32(x, 0, i, arg_f32(x, 8));
}

/* saxpy (int n, float a, const float *x, float *y) */
static const struct sim_kernel_param saxpy_params[] = {
	P(0, 4), P(4, 4), P(8, 8), P(16, 8),
};

static void saxpy_setup(struct exec *x)
{
	ptr_param(x, 0, 8, 4);
	ptr_param(x, 1, 16, 4);
}

static void saxpy_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	/* nvcc contracts a * x + y into one fused multiply-add */
	if (i < arg_i32(x, 0))
		st_f32(x, 1, i, fmaf(arg_f32(x, 4), ld_f32(x, 0, i),
				     ld_f32(x, 1, i)));
}

/* scale (float *p, float s, int n) */
static void scale_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	if (i < arg_i32(x, 12))
		st_f32(x, 0, i, ld_f32(x, 0, i) * arg_f32(x, 8));
}

/* iota_u32 (unsigned *p, int n) */
static const struct sim_kernel_param p_n_params[] = {
	P(0, 8), P(8, 4),
};

static void p0_u32_setup(struct exec *x)
{
	ptr_param(x, 0, 0, 4);
}

static void iota_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	if (i < arg_i32(x, 8))
		st_u32(x, 0, i, (uint32_t)i);
}

/* add_one_u8 (unsigned char *p, int n) */
static void p0_u8_setup(struct exec *x)
{
	ptr_param(x, 0, 0, 1);
}

static void add_one_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	if (i < arg_i32(x, 8))
		st_u8(x, 0, i, (uint8_t)(ld_u8(x, 0, i) + 1));
}

/* add2d (const float *a, const float *b, float *c, int width, int height,
 *	  int pitch) */
static const struct sim_kernel_param add2d_params[] = {
	P(0, 8), P(8, 8), P(16, 8), P(24, 4), P(28, 4), P(32, 4),
};

static void add2d_body(struct exec *x, const struct thr *t)
{
	int32_t cx = global_x(t), cy = global_y(t);
	int32_t i = wadd(wmul(cy, arg_i32(x, 32)), cx);

	if (cx < arg_i32(x, 24) && cy < arg_i32(x, 28))
		st_f32(x, 2, i, ld_f32(x, 0, i) + ld_f32(x, 1, i));
}

/* iota3d (unsigned *p, int nx, int ny, int nz) */
static const struct sim_kernel_param iota3d_params[] = {
	P(0, 8), P(8, 4), P(12, 4), P(16, 4),
};

static void iota3d_body(struct exec *x, const struct thr *t)
{
	int32_t cx = global_x(t), cy = global_y(t), cz = global_z(t);
	int32_t nx = arg_i32(x, 8), ny = arg_i32(x, 12), nz = arg_i32(x, 16);

	if (cx < nx && cy < ny && cz < nz) {
		uint32_t i = (uint32_t)wadd(wmul(wadd(wmul(cz, ny), cy), nx),
					    cx);

		st_u32(x, 0, i, i);
	}
}

/*
 * probe_params (char c, int i, double d, struct probe24 s, short h,
 *		 const int *q, double *out)
 * struct probe24 { double d; int i; char c; float f; } at 16: d 16,
 * i 24, c 28, f 32.
 */
static const struct sim_kernel_param probe_params[] = {
	P(0, 1), P(4, 4), P(8, 8), P(16, 24), P(40, 2), P(48, 8), P(56, 8),
};

static void probe_setup(struct exec *x)
{
	ptr_param(x, 0, 48, 4);
	ptr_param(x, 1, 56, 8);
}

static void probe_body(struct exec *x, const struct thr *t)
{
	if (t->blockIdx.x || t->blockIdx.y || t->blockIdx.z ||
	    t->threadIdx.x || t->threadIdx.y || t->threadIdx.z)
		return;
	st_f64(x, 1, 0, arg_i8(x, 0));
	st_f64(x, 1, 1, arg_i32(x, 4));
	st_f64(x, 1, 2, arg_f64(x, 8));
	st_f64(x, 1, 3, arg_f64(x, 16));
	st_f64(x, 1, 4, arg_i32(x, 24));
	st_f64(x, 1, 5, arg_i8(x, 28));
	st_f64(x, 1, 6, arg_f32(x, 32));
	st_f64(x, 1, 7, arg_i16(x, 40));
	st_f64(x, 1, 8, ld_i32(x, 0, 0));
}

/* nop () */
static void nop_body(struct exec *x, const struct thr *t)
{
	(void)x;
	(void)t;
}

/* print_hello (int tag, int n) */
static const struct sim_kernel_param print_params[] = {
	P(0, 4), P(4, 4),
};

static void print_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	if (i < arg_i32(x, 4))
		dev_printf(x, "hello %d from thread %d\n", arg_i32(x, 0), i);
}

/* assert_nonzero (const int *p, int n): a zero fires the assert, which
 * on a GPU stops the kernel and poisons the context (sticky 710). */
static void p0_i32_setup(struct exec *x)
{
	ptr_param(x, 0, 0, 4);
}

static void assert_body(struct exec *x, const struct thr *t)
{
	int32_t i = global_x(t);

	if (i < arg_i32(x, 8) && ld_i32(x, 0, i) == 0 && !x->measure)
		x->assert_failed = true;
}

/* poke (int *p, long long i, int v): thread 0 of block 0 writes p[i]. */
static const struct sim_kernel_param poke_params[] = {
	P(0, 8), P(8, 8), P(16, 4),
};

static void poke_body(struct exec *x, const struct thr *t)
{
	if (t->blockIdx.x || t->threadIdx.x)
		return;
	st_i32(x, 0, arg_i64(x, 8), arg_i32(x, 16));
}

/* One run() per kernel, as struct sim_kernel wants. */
#define KERNEL(id, nm, pr, prm, size, setup, body)			\
	static int id##_run(const struct sim_launch *l);		\
	static const struct sim_kernel id##_kernel = {			\
		.name = nm, .proto = pr,				\
		.nparams = sizeof(prm) / sizeof(prm[0]),		\
		.args_size = size, .params = prm, .run = id##_run,	\
	};								\
	static int id##_run(const struct sim_launch *l)			\
	{								\
		return launch(&id##_kernel, l, setup, body);		\
	}

KERNEL(vectorAdd, "vectorAdd",
       "vectorAdd(const float *a, const float *b, float *c, int n)",
       vadd_params, 28, vadd_setup, vadd_body)
KERNEL(vecAdd, "vecAdd",
       "vecAdd(const float *a, const float *b, float *c, int n)",
       vadd_params, 28, vadd_setup, vadd_body)
KERNEL(fill, "fill", "fill(float *p, float v, int n)",
       fill_params, 16, p0_f32_setup, fill_body)
KERNEL(saxpy, "saxpy", "saxpy(int n, float a, const float *x, float *y)",
       saxpy_params, 24, saxpy_setup, saxpy_body)
KERNEL(scale, "scale", "scale(float *p, float s, int n)",
       fill_params, 16, p0_f32_setup, scale_body)
KERNEL(iota_u32, "iota_u32", "iota_u32(unsigned int *p, int n)",
       p_n_params, 12, p0_u32_setup, iota_body)
KERNEL(add_one_u8, "add_one_u8", "add_one_u8(unsigned char *p, int n)",
       p_n_params, 12, p0_u8_setup, add_one_body)
KERNEL(add2d, "add2d",
       "add2d(const float *a, const float *b, float *c, int width, int height, int pitch)",
       add2d_params, 36, vadd_setup, add2d_body)
KERNEL(iota3d, "iota3d", "iota3d(unsigned int *p, int nx, int ny, int nz)",
       iota3d_params, 20, p0_u32_setup, iota3d_body)
KERNEL(probe, "probe_params",
       "probe_params(char c, int i, double d, struct probe24 s, short h, const int *q, double *out)",
       probe_params, 64, probe_setup, probe_body)
KERNEL(print_hello, "print_hello", "print_hello(int tag, int n)",
       print_params, 8, NULL, print_body)
KERNEL(assert_nonzero, "assert_nonzero", "assert_nonzero(const int *p, int n)",
       p_n_params, 12, p0_i32_setup, assert_body)
KERNEL(poke, "poke", "poke(int *p, long long i, int v)",
       poke_params, 20, p0_i32_setup, poke_body)

static int nop_run(const struct sim_launch *l);
static const struct sim_kernel nop_kernel = {
	.name = "nop", .proto = "nop(void)", .nparams = 0, .args_size = 0,
	.params = NULL, .run = nop_run,
};

static int nop_run(const struct sim_launch *l)
{
	return launch(&nop_kernel, l, NULL, nop_body);
}

static const struct sim_kernel *const kernels[] = {
	&vectorAdd_kernel, &vecAdd_kernel, &fill_kernel, &saxpy_kernel,
	&scale_kernel, &iota_u32_kernel, &add_one_u8_kernel, &add2d_kernel,
	&iota3d_kernel, &probe_kernel, &nop_kernel, &print_hello_kernel,
	&assert_nonzero_kernel, &poke_kernel,
};

/* ------------------------------------------------------------------------ */
/* Lookup                                                                   */
/* ------------------------------------------------------------------------ */

size_t sim_kernels_base_name(const char *sym, const char **base)
{
	const char *p = sym;
	size_t len = 0, n;

	*base = sym;
	if (!sym)
		return 0;
	if (p[0] != '_' || p[1] != 'Z')
		return strlen(sym);
	p += 2;
	if (*p == 'L')		/* internal linkage */
		p++;
	if (*p < '1' || *p > '9')
		return strlen(sym);	/* nested, operator, ...: as is */
	for (n = 0; *p >= '0' && *p <= '9' && n < 6; p++, n++)
		len = len * 10 + (size_t)(*p - '0');
	if ((*p >= '0' && *p <= '9') || strnlen(p, len) < len)
		return strlen(sym);
	*base = p;
	return len;
}

const struct sim_kernel *sim_kernels_find(const char *symbol)
{
	const char *base;
	size_t len = sim_kernels_base_name(symbol, &base), i;

	if (!len)
		return NULL;
	for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (strlen(kernels[i]->name) == len &&
		    !memcmp(kernels[i]->name, base, len))
			return kernels[i];
	return NULL;
}

const struct sim_kernel *sim_kernels_get(size_t i)
{
	return i < sizeof(kernels) / sizeof(kernels[0]) ? kernels[i] : NULL;
}
