// SPDX-License-Identifier: MIT
/*
 * integration-launchraw: the daemon's own checks of LAUNCH_EX,
 * FUNC_SET_ATTR, TENSOR_MAP_ENCODE and HOST_FUNC, through libaxon directly
 * (the shim checks most of this first, so only raw SQEs reach them):
 *
 *   launch_ex      a good one; headers, attribute counts, offsets and
 *                  lengths that do not fit; unknown and never-sent attribute
 *                  ids, reserved fields, non-int values, a cluster that does
 *                  not divide the grid, an access window outside the window
 *   func_set_attr  read-only attributes, values that are no int, handles
 *   tensor_map     a good request (NOT_SUPPORTED on the sim), another
 *                  client's memory, short payloads, entries past the rank,
 *                  a bad context
 *   host_func      WAIT/DONE misuse; a held stream: its STREAM_SYNC and its
 *                  later work wait for the DONE, another stream's do not
 *   held_and_gone  a client that leaves with work parked behind a WAIT: the
 *                  daemon frees everything
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "harness.h"

struct cl {
	struct axon_ring r;
	uint64_t ctx, stream, map;
};

static void cl_open(struct cl *c)
{
	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(h_ring_connect(&c->r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&c->r, &c->ctx, &c->stream), 0);
	ck_assert_int_eq(h_ring_map(&c->r, c->ctx, 0, 1 << 20, &c->map), 0);
}

static struct axon_sqe obj(unsigned int op, uint64_t h, uint64_t a0, uint64_t a1)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, op, h, a0, a1);
	return s;
}

#define RES(c, sqe_value) h_ring_res(&(c)->r, (struct axon_sqe[]){ sqe_value }, NULL, NULL)
#define EXPECT(c, sqe_value, want)					\
	do {								\
		int32_t got_ = RES(c, sqe_value);			\
		ck_assert_msg(got_ == (want), "line %d: res %d, expected %d", \
			      __LINE__, got_, (int)(want));		\
	} while (0)

/* Loads the test cubin and finds fill(float *p, float v, int n). */
static uint64_t fill_func(struct cl *c)
{
	FILE *f = fopen(h_kernel_path("cubin"), "rb");
	struct axon_sqe sqe;
	uint64_t mod = 0, fn = 0;
	size_t len;

	ck_assert(f != NULL);
	len = fread(c->r.data, 1, c->r.data_size / 2, f);
	fclose(f);
	sqe = obj(AXON_OP_MODULE_LOAD, c->ctx, 0, 0);
	sqe.obj.data_len = (uint32_t)len;
	ck_assert_int_eq(h_ring_res(&c->r, &sqe, &mod, NULL), 0);
	strcpy((char *)c->r.data, "fill");
	sqe = obj(AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
	sqe.obj.data_len = sizeof(struct axon_func_info);
	ck_assert_int_eq(h_ring_res(&c->r, &sqe, &fn, NULL), 0);
	return fn;
}

#define EX_OFF	(1u << 20)

/* A LAUNCH_EX of fill(p, v, 256) on 4 blocks of 64, payload at EX_OFF. */
static struct axon_sqe launch_ex(struct cl *c, uint64_t fn, const struct axon_launch_attr *a,
				 uint32_t n, float v)
{
	struct axon_launch_ex *x = (void *)(c->r.data + EX_OFF);
	struct axon_sqe s = obj(AXON_OP_LAUNCH_EX, fn, 0, 0);
	int cnt = 256;

	memset(x, 0, sizeof(*x));
	x->grid[0] = 4;
	x->grid[1] = x->grid[2] = 1;
	x->block[0] = 64;
	x->block[1] = x->block[2] = 1;
	x->nattrs = n;
	x->args_off = (uint32_t)(sizeof(*x) + n * sizeof(*a));
	if (n)
		memcpy(x->attrs, a, n * sizeof(*a));
	memcpy((char *)x + x->args_off, &c->map, 8);
	memcpy((char *)x + x->args_off + 8, &v, 4);
	memcpy((char *)x + x->args_off + 12, &cnt, 4);
	s.stream = c->stream;
	s.obj.data_off = EX_OFF;
	s.obj.data_len = x->args_off + 16;
	return s;
}

static struct axon_launch_attr cluster(uint32_t x, uint32_t y, uint32_t z)
{
	struct axon_launch_attr a = { .id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION };

	a.val[0] = x | (uint64_t)y << 32;
	a.val[1] = z;
	return a;
}

/* The first float of c's mapping, read back through a DTOH. */
static float first_float(struct cl *c)
{
	struct axon_sqe s = { 0 };
	float v;

	axon_prep_copy(&s, AXON_OP_MEMCPY_DTOH, c->stream, 0, c->map, 4);
	ck_assert_int_eq(h_ring_res(&c->r, &s, NULL, NULL), 0);
	memcpy(&v, c->r.data, 4);
	return v;
}

START_TEST(test_launch_ex)
{
	struct axon_launch_attr a[2];
	struct axon_sqe s;
	struct cl c;
	uint64_t fn;

	cl_open(&c);
	fn = fill_func(&c);
	a[0] = cluster(2, 1, 1);
	a[1] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_PRIORITY,
					  .val = { (uint64_t)(int64_t)-1 } };
	EXPECT(&c, launch_ex(&c, fn, a, 2, 3.0f), 0);
	ck_assert(first_float(&c) == 3.0f);

	/* Header and payload. */
	s = launch_ex(&c, fn, a, 1, 4.0f);
	((struct axon_launch_ex *)(c.r.data + EX_OFF))->resv = 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	((struct axon_launch_ex *)(c.r.data + EX_OFF))->nattrs = AXON_MAX_LAUNCH_ATTRS + 1;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	((struct axon_launch_ex *)(c.r.data + EX_OFF))->args_off -= 8;	/* into the attrs */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	((struct axon_launch_ex *)(c.r.data + EX_OFF))->args_off += 4;	/* unaligned */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	s.obj.data_len -= 1;					/* args past the end */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	s.obj.data_len = 8;					/* no whole header */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	s.obj.data_off = (uint32_t)c.r.data_size - 16;		/* past the data area */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	s.obj.arg0 = 1;						/* an unused word */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = launch_ex(&c, fn, a, 1, 4.0f);
	s.obj.handle = c.ctx;					/* not a function */
	EXPECT(&c, s, CUDA_ERROR_INVALID_HANDLE);

	/* Attributes. */
	a[0] = (struct axon_launch_attr){ .id = 99 };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_VALUE);
	a[0] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_VALUE);
	a[0] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY,
					  .val = { 1 } };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_VALUE);
	a[0] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE, .resv = 1 };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_VALUE);
	a[0] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_PRIORITY,
					  .val = { 1ULL << 40 } };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_VALUE);
	a[0] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE,
					  .val = { 1, 1 } };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_VALUE);
	a[0] = cluster(3, 1, 1);
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	a[0] = cluster(4, 4, 2);
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_CLUSTER_SIZE);
	a[0] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
					  .val = { c.r.params.va_base + c.r.params.va_size - 64,
						   128, 0, 0 } };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 4.0f), CUDA_ERROR_INVALID_VALUE);
	a[0] = (struct axon_launch_attr){ .id = CU_LAUNCH_ATTRIBUTE_IGNORE };
	EXPECT(&c, launch_ex(&c, fn, a, 1, 5.0f), 0);
	ck_assert(first_float(&c) == 5.0f);
	axon_close(&c.r);
}
END_TEST

START_TEST(test_func_set_attr)
{
	struct axon_sqe s;
	struct cl c;
	uint64_t fn, v = 0;

	cl_open(&c);
	fn = fill_func(&c);
	EXPECT(&c, obj(AXON_OP_FUNC_SET_ATTR, fn, CU_FUNC_ATTRIBUTE_NUM_REGS, 8),
	       CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_FUNC_SET_ATTR, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		       1ULL << 32), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_FUNC_SET_ATTR, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		       (uint64_t)(int64_t)-1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_FUNC_SET_ATTR, fn, 1000, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_FUNC_SET_ATTR, c.ctx, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
		       1), CUDA_ERROR_INVALID_HANDLE);
	/* The function's limit, enforced at launch: 48 KiB until raised. */
	s = launch_ex(&c, fn, NULL, 0, 1.0f);
	((struct axon_launch_ex *)(c.r.data + EX_OFF))->shared_bytes = 65536;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	EXPECT(&c, obj(AXON_OP_FUNC_SET_ATTR, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
		       65536), 0);
	s = launch_ex(&c, fn, NULL, 0, 1.0f);
	((struct axon_launch_ex *)(c.r.data + EX_OFF))->shared_bytes = 65536;
	EXPECT(&c, s, 0);
	ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){ obj(AXON_OP_FUNC_GET_ATTR, fn,
		CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 0) }, &v, NULL), 0);
	ck_assert_uint_eq(v, 65536);
	axon_close(&c.r);
}
END_TEST

static struct axon_sqe tmap(struct cl *c, uint64_t ctx, uint64_t addr)
{
	struct axon_tensor_map_req *q = (void *)(c->r.data + EX_OFF);
	struct axon_sqe s = obj(AXON_OP_TENSOR_MAP_ENCODE, ctx, 0, 0);

	memset(q, 0, sizeof(*q));
	q->kind = AXON_TENSOR_MAP_TILED;
	q->data_type = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
	q->rank = 2;
	q->global_addr = addr;
	q->global_dim[0] = 64;
	q->global_dim[1] = 64;
	q->global_strides[0] = 256;
	q->box_dim[0] = 32;
	q->box_dim[1] = 32;
	q->elem_strides[0] = q->elem_strides[1] = 1;
	s.obj.data_off = EX_OFF;
	s.obj.data_len = sizeof(*q);
	return s;
}

START_TEST(test_tensor_map)
{
	struct axon_tensor_map_req *q;
	struct axon_sqe s;
	struct cl a, b;

	cl_open(&a);
	cl_open(&b);
	q = (void *)(a.r.data + EX_OFF);
	EXPECT(&a, tmap(&a, a.ctx, a.map), CUDA_ERROR_NOT_SUPPORTED);
	EXPECT(&a, tmap(&a, a.ctx, b.map), CUDA_ERROR_INVALID_VALUE);	/* b's memory */
	EXPECT(&a, tmap(&a, a.ctx, a.map + (1 << 20) - 4096), CUDA_ERROR_INVALID_VALUE);
	EXPECT(&a, tmap(&a, a.stream, a.map), CUDA_ERROR_INVALID_CONTEXT);
	s = tmap(&a, a.ctx, a.map);
	s.obj.data_len = sizeof(*q) - 8;
	EXPECT(&a, s, CUDA_ERROR_INVALID_VALUE);
	s = tmap(&a, a.ctx, a.map);
	q->global_dim[3] = 1;					/* past the rank */
	EXPECT(&a, s, CUDA_ERROR_INVALID_VALUE);
	s = tmap(&a, a.ctx, a.map);
	q->kind = 7;
	EXPECT(&a, s, CUDA_ERROR_INVALID_VALUE);
	s = tmap(&a, a.ctx, a.map);
	q->global_strides[0] = 1ULL << 40;
	EXPECT(&a, s, CUDA_ERROR_INVALID_VALUE);
	s = tmap(&a, a.ctx, a.map);
	q->global_dim[1] = 1ULL << 33;
	EXPECT(&a, s, CUDA_ERROR_INVALID_VALUE);
	axon_close(&a.r);
	axon_close(&b.r);
}
END_TEST

/* Posts a synchronous SQE without waiting; its completion comes later. */
static void post_sync(struct cl *c, struct axon_sqe s, uint64_t user_data)
{
	struct axon_sqe *sqe = axon_get_sqe(&c->r);

	ck_assert(sqe != NULL);
	*sqe = s;
	sqe->user_data = user_data;
	ck_assert_int_ge(axon_submit(&c->r), 0);
}

/* The next completion within ms, or -1 if none came. */
static int next_cqe(struct cl *c, struct axon_cqe *out, int ms)
{
	const struct axon_cqe *cqe;
	uint64_t deadline = h_now_ms() + (uint64_t)ms;

	for (;;) {
		if (axon_peek_cqe(&c->r, &cqe) == 0) {
			*out = *cqe;
			axon_cqe_seen(&c->r);
			return 0;
		}
		if (h_now_ms() >= deadline)
			return -1;
		h_poll_pause();
	}
}

START_TEST(test_host_func)
{
	struct axon_sqe s, wait = obj(AXON_OP_HOST_FUNC, 0, AXON_HOST_FUNC_WAIT, 0);
	struct axon_cqe cqe;
	uint64_t other = 0, slot;
	struct cl c;
	uint64_t fn;

	cl_open(&c);
	fn = fill_func(&c);
	wait.stream = c.stream;
	/* Misuse. */
	s = wait;
	s.obj.handle = 5;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = wait;
	s.obj.arg0 = 3;
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = wait;
	s.obj.arg1 = 1;					/* only a NODE has a number */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = wait;
	s.obj.arg0 = AXON_HOST_FUNC_NODE;			/* not in a capture */
	EXPECT(&c, s, CUDA_ERROR_ILLEGAL_STATE);
	s = wait;
	s.obj.arg0 = AXON_HOST_FUNC_DONE;			/* DONE must be deferred */
	EXPECT(&c, s, CUDA_ERROR_INVALID_VALUE);
	s = wait;
	s.stream = c.ctx;					/* not a stream */
	EXPECT(&c, s, CUDA_ERROR_INVALID_HANDLE);
	s = wait;
	s.obj.arg0 = AXON_HOST_FUNC_DONE;
	s.obj.handle = 12345;					/* matches nothing */
	s.flags = AXON_SQE_F_DEFERRED;
	ck_assert_int_eq(h_ring_post(&c.r, &s), 0);
	EXPECT(&c, obj(AXON_OP_CTX_SYNC, c.ctx, 0, 0), 0);

	/* A held stream. */
	ck_assert_int_eq(h_ring_res(&c.r, (struct axon_sqe[]){ obj(AXON_OP_STREAM_CREATE, c.ctx,
		CU_STREAM_NON_BLOCKING, 0) }, &other, &slot), 0);
	post_sync(&c, wait, 0xabc);
	ck_assert_int_eq(next_cqe(&c, &cqe, H_MS(5000)), 0);
	ck_assert_uint_eq(cqe.user_data, 0xabc);
	ck_assert_int_eq(cqe.res, 0);
	s = launch_ex(&c, fn, NULL, 0, 7.0f);			/* parked behind the WAIT */
	s.flags = AXON_SQE_F_DEFERRED;
	ck_assert_int_eq(h_ring_post(&c.r, &s), 0);
	s = obj(AXON_OP_STREAM_SYNC, 0, 0, 0);
	s.stream = c.stream;
	post_sync(&c, s, 0xdef);
	ck_assert_int_eq(next_cqe(&c, &cqe, H_MS(100)), -1);	/* held */
	/* Another stream is not held. */
	s = obj(AXON_OP_STREAM_SYNC, 0, 0, 0);
	s.stream = other;
	post_sync(&c, s, 0x123);
	ck_assert_int_eq(next_cqe(&c, &cqe, H_MS(5000)), 0);
	ck_assert_uint_eq(cqe.user_data, 0x123);
	/* DONE releases the launch and the sync. */
	s = wait;
	s.obj.arg0 = AXON_HOST_FUNC_DONE;
	s.obj.handle = 0xabc;
	s.flags = AXON_SQE_F_DEFERRED;
	ck_assert_int_eq(h_ring_post(&c.r, &s), 0);
	ck_assert_int_eq(next_cqe(&c, &cqe, H_MS(5000)), 0);
	ck_assert_uint_eq(cqe.user_data, 0xdef);
	ck_assert_int_eq(cqe.res, 0);
	ck_assert(first_float(&c) == 7.0f);
	axon_close(&c.r);
}
END_TEST

START_TEST(test_held_and_gone)
{
	struct axon_sqe s, wait = obj(AXON_OP_HOST_FUNC, 0, AXON_HOST_FUNC_WAIT, 0);
	struct axon_cqe cqe;
	struct cl c;
	uint64_t fn;
	int i;

	cl_open(&c);
	fn = fill_func(&c);
	wait.stream = c.stream;
	post_sync(&c, wait, 0x77);
	ck_assert_int_eq(next_cqe(&c, &cqe, H_MS(5000)), 0);
	for (i = 0; i < 20; i++) {
		s = launch_ex(&c, fn, NULL, 0, (float)i);
		s.flags = AXON_SQE_F_DEFERRED;
		ck_assert_int_eq(h_ring_post(&c.r, &s), 0);
	}
	s = (struct axon_sqe){ 0 };
	axon_prep_mem(&s, AXON_OP_MEM_UNMAP, c.ctx, c.map, 0);
	s.flags = AXON_SQE_F_DEFERRED;
	ck_assert_int_eq(h_ring_post(&c.r, &s), 0);
	axon_close(&c.r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_launch_ex);
	tcase_add_test(tc, test_func_set_attr);
	tcase_add_test(tc, test_tensor_map);
	tcase_add_test(tc, test_host_func);
	tcase_add_test(tc, test_held_and_gone);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-launchraw", "4G", NULL, add_tests, 120);
}
