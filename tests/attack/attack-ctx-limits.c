// SPDX-License-Identifier: MIT
/*
 * attack-ctx-limits: the context limits that spend memory (CTX_LIMIT) are
 * charged what the driver reserves for them, before it does (issue 14).
 * cuCtxSetLimit was answered in the shim, which could only "set" a limit
 * to its fresh value: a program raising its stack or heap failed, and the
 * daemon had nothing to charge; an op that set them uncharged would let a
 * client reserve the device's memory with one call (a 65 536-byte stack
 * costs 16 GiB on an H200).
 *
 * The sim device is an H200's 132 SMs of 2048 threads, and the daemon
 * runs with --max-client-mem=792M (what raising the stack from 1024 to
 * 4096 bytes costs there: 3072 x 132 x 2048) and no minting credit.
 *
 *   stack    a raise is charged the reservation it adds, in whole 2 MiB
 *            pages; one that fills the limit is taken, 16 bytes more
 *            (the driver's step) is OUT_OF_MEMORY with the limit as it
 *            was; lowering gives back what was charged, never below the
 *            context's own stack; a client that goes gives it all back
 *   heap     a heap set is charged in full (rounded with its header into
 *            2 MiB pages): one filling the limit is taken, one byte more
 *            is refused; a huge one is clamped to the device and refused
 *   fifo     (own daemon: --max-pinned-per-client=16M, --data-size=4M) a printf FIFO
 *            larger than a fresh one is charged as pinned host memory,
 *            refused one 256-byte step past the limit
 *   runtime  a module whose code calls printf or malloc makes the driver
 *            reserve memory in the context at its first load (62 and
 *            136 MiB on the H200, malloc's holding printf's): charged
 *            once, before the load, a heap set later in full besides;
 *            kept after the unload, as the driver keeps it; a load the
 *            quota cannot hold is OUT_OF_MEMORY with nothing charged,
 *            and a module that calls neither still loads
 *   heap at launch  a client that never sets the heap: the driver
 *            reserves the default one (8 MiB, 10 with its header in
 *            2 MiB pages) at the first launch of a kernel that calls
 *            malloc; charged then, once, and not for a kernel of the same
 *            module that does not call it; a launch the quota cannot hold
 *            is OUT_OF_MEMORY with nothing charged (it was launched
 *            uncharged before)
 *   hostile  a stale context, a limit that spends nothing, unknown flags,
 *            a value on a read, a stack past 512 KiB: refused, nothing
 *            charged
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

#define MIB		(1ULL << 20)
#define THREADS		(132ULL * 2048)
#define CLIENT_MEM	(792 * MIB)

static int32_t limit_op(struct axon_ring *r, uint64_t ctx, CUlimit limit, uint32_t flags,
			uint64_t value, uint64_t *out)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_ctx_limit(&sqe, ctx, (uint32_t)limit, flags, value);
	return h_ring_res(r, &sqe, out, NULL);
}

static int32_t set(struct axon_ring *r, uint64_t ctx, CUlimit limit, uint64_t value)
{
	uint64_t got;

	return limit_op(r, ctx, limit, AXON_CTX_LIMIT_SET, value, &got);
}

static uint64_t get(struct axon_ring *r, uint64_t ctx, CUlimit limit)
{
	uint64_t v = 0;

	ck_assert_int_eq(limit_op(r, ctx, limit, 0, 0, &v), CUDA_SUCCESS);
	return v;
}

static uint64_t client_u64_of(const struct h_daemon *d, const struct axon_ring *r,
			      const char *path)
{
	struct json *doc = h_stats(d);
	const struct json *c;
	uint64_t v;

	ck_assert(doc != NULL);
	c = h_stats_client_id(doc, r->params.client_id);
	ck_assert_msg(c != NULL, "client %llu not in the stats",
		      (unsigned long long)r->params.client_id);
	v = h_client_u64(c, path);
	json_free(doc);
	return v;
}

static uint64_t client_u64(const struct axon_ring *r, const char *path)
{
	return client_u64_of(&h_daemon, r, path);
}

/* What a stack of s bytes per thread reserves on the sim's device. */
static uint64_t stack_cost(uint64_t s)
{
	uint64_t b = (s + 15) / 16 * 16 * THREADS;

	return (b + 2 * MIB - 1) / (2 * MIB) * (2 * MIB);
}

static void open_client(const struct h_daemon *d, struct axon_ring *r, uint64_t *ctx)
{
	uint64_t stream;

	ck_assert_int_eq(h_ring_connect(r, d), 0);
	ck_assert_int_eq(h_ring_ctx_create(r, ctx, &stream), 0);
	ck_assert_uint_eq(r->params.mint_credit, 0);
}

START_TEST(stack)
{
	struct axon_ring r, s;
	uint64_t ctx, ctx2;

	open_client(&h_daemon, &r, &ctx);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_STACK_SIZE), 1024);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, 2048), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), 264 * MIB);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), 264 * MIB);
	/* Up to the limit, then one driver step past it. */
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, 4096), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), CLIENT_MEM);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, 4097), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_STACK_SIZE), 4096);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), CLIENT_MEM);
	/* Nothing else fits beside it. */
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, 256, NULL), -1);
	/* Rounded as the driver rounds: 1100 bytes are 1104. */
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, 1100), CUDA_SUCCESS);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_STACK_SIZE), 1104);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), stack_cost(1104) - stack_cost(1024));
	/* Below the context's own stack nothing is given back twice. */
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, 512), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), 0);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), 0);
	/* ...and raising it again pays only what is above that stack. */
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, 4096), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), CLIENT_MEM);
	/* Its user's share goes with it: another client has the limit. */
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	open_client(&h_daemon, &s, &ctx2);
	ck_assert_uint_eq(client_u64(&s, "user_mem_used"), 0);
	ck_assert_int_eq(set(&s, ctx2, CU_LIMIT_STACK_SIZE, 4096), CUDA_SUCCESS);
	axon_close(&s);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(heap)
{
	struct axon_ring r;
	uint64_t ctx, fill = CLIENT_MEM - (64 << 10);

	open_client(&h_daemon, &r, &ctx);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE), 8 * MIB);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), 0);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE, 64 * MIB), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), 66 * MIB);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE, fill + 1),
			 CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE), 64 * MIB);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), 66 * MIB);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE, fill), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), CLIENT_MEM);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE, UINT64_MAX),
			 CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE), fill);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE, 8 * MIB), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), 10 * MIB);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(fifo)
{
	static const char *const extra[] = {
		"--data-size=4M", "--max-pinned-per-client=16M", "--mint-credit=0", NULL,
	};
	struct h_daemon own = { 0 };
	uint64_t ctx, base, held, room;
	struct axon_ring r;

	ck_assert_int_eq(h_daemon_start(&own, "4G", extra), 0);
	open_client(&own, &r, &ctx);
	base = get(&r, ctx, CU_LIMIT_PRINTF_FIFO_SIZE);
	ck_assert_uint_gt(base, 0);
	held = client_u64_of(&own, &r, "host_pinned");
	ck_assert_uint_lt(held, 16 * MIB);
	room = (16 * MIB - held) / 256 * 256;
	/* Smaller than a fresh FIFO: nothing more pinned. */
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_PRINTF_FIFO_SIZE, base / 2), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64_of(&own, &r, "host_pinned"), held);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_PRINTF_FIFO_SIZE, base + room + 1),
			 CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_PRINTF_FIFO_SIZE), base / 2);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_PRINTF_FIFO_SIZE, base + room), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64_of(&own, &r, "host_pinned"), held + room);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_PRINTF_FIFO_SIZE, base), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64_of(&own, &r, "host_pinned"), held);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&own, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&own, false), 0);
}
END_TEST

/* PTX that declares a call out of the image (NULL: none) and an entry. */
static size_t ptx_calling(char *buf, size_t size, const char *callee)
{
	int n = snprintf(buf, size,
			 ".version 8.0\n.target sm_90\n.address_size 64\n%s%s%s"
			 ".visible .entry k(.param .u64 k_param_0)\n{\n\tret;\n}\n",
			 callee ? ".extern .func (.param .b64 func_retval0) " : "",
			 callee ? callee : "",
			 callee ? "\n(\n\t.param .b64 p0\n)\n;\n" : "");

	ck_assert(n > 0 && (size_t)n < size);
	return (size_t)n + 1;
}

static int32_t load_ptx(struct axon_ring *r, uint64_t ctx, const char *callee, uint64_t *mod)
{
	struct axon_sqe s = { 0 };
	struct axon_cqe cqe;
	char ptx[512];
	size_t len = ptx_calling(ptx, sizeof(ptx), callee);

	memcpy(r->data, ptx, len);
	axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	s.obj.data_len = (uint32_t)len;
	ck_assert_int_eq(h_ring_sync(r, &s, &cqe, H_MS(30000)), 0);
	if (mod)
		*mod = cqe.aux[0];
	return cqe.res;
}

static void unload(struct axon_ring *r, uint64_t mod)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, AXON_OP_MODULE_UNLOAD, mod, 0, 0);
	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
}

#define PRINTF_RESERVE	(62 * MIB)
#define MALLOC_RESERVE	(136 * MIB)

START_TEST(runtime)
{
	struct axon_ring r, s;
	uint64_t ctx, ctx2, m1, m2, m3, m4;
	uint64_t left = 100 * MIB, heap = CLIENT_MEM - left - (64 << 10);

	open_client(&h_daemon, &r, &ctx);
	/* printf's reserve, once; then malloc's adds the rest and the heap */
	ck_assert_int_eq(load_ptx(&r, ctx, "vprintf", &m1), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), PRINTF_RESERVE);
	ck_assert_int_eq(load_ptx(&r, ctx, "vprintf", &m2), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), PRINTF_RESERVE);
	ck_assert_int_eq(load_ptx(&r, ctx, "malloc", &m3), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), MALLOC_RESERVE);
	/* a call the runtime does not reserve for: nothing */
	ck_assert_int_eq(load_ptx(&r, ctx, "not_a_runtime_call", &m4), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE);
	/* the driver keeps it after the unload: so does the charge */
	unload(&r, m1);
	unload(&r, m2);
	unload(&r, m3);
	unload(&r, m4);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE);
	/* a heap set later is charged in full besides */
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_MALLOC_HEAP_SIZE, 64 * MIB), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE + 66 * MIB);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);

	/* 100 MiB left under the quota: malloc's reserve does not fit,
	 * printf's does, then the rest of malloc's does not */
	open_client(&h_daemon, &s, &ctx2);
	ck_assert_int_eq(set(&s, ctx2, CU_LIMIT_MALLOC_HEAP_SIZE, heap), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&s, "local_mem"), CLIENT_MEM - left);
	ck_assert_int_eq(load_ptx(&s, ctx2, "malloc", NULL), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&s, "local_mem"), CLIENT_MEM - left);
	ck_assert_int_eq(load_ptx(&s, ctx2, "free", NULL), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(load_ptx(&s, ctx2, "vprintf", &m1), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&s, "local_mem"), CLIENT_MEM - left + PRINTF_RESERVE);
	ck_assert_int_eq(load_ptx(&s, ctx2, "malloc", NULL), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&s, "local_mem"), CLIENT_MEM - left + PRINTF_RESERVE);
	ck_assert_uint_eq(client_u64(&s, "handles.modules"), 1);
	/* a module that calls neither still loads */
	ck_assert_int_eq(load_ptx(&s, ctx2, NULL, &m2), CUDA_SUCCESS);
	ck_assert_int_eq(load_ptx(&s, ctx2, "__assertfail", &m3), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&s, "local_mem"), CLIENT_MEM - left + PRINTF_RESERVE);
	axon_close(&s);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

/* A module with kernels m (calls malloc) and p (calls nothing). */
static const char heap_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".extern .func (.param .b64 func_retval0) malloc\n(\n\t.param .b64 p0\n)\n;\n"
	".visible .entry m(.param .u64 m_param_0)\n{\n"
	"\t.reg .b64 %rd<2>;\n\t{\n\t.param .b64 p0;\n\t.param .b64 r0;\n"
	"\tcall.uni (r0), malloc, (p0);\n\t}\n\tret;\n}\n"
	".visible .entry p(.param .u64 p_param_0)\n{\n\tret;\n}\n";

static uint64_t heap_func(struct axon_ring *r, uint64_t mod, const char *name)
{
	struct axon_sqe s = { 0 };
	uint64_t fn = 0;

	strcpy((char *)r->data, name);
	axon_prep_obj(&s, AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
	s.obj.data_len = sizeof(struct axon_func_info);
	ck_assert_int_eq(h_ring_res(r, &s, &fn, NULL), CUDA_SUCCESS);
	return fn;
}

#define EX_OFF	(1u << 20)

/* LAUNCH_EX of fn(0) on one thread; the CQE's res. */
static int32_t heap_launch(struct axon_ring *r, uint64_t stream, uint64_t fn)
{
	struct axon_launch_ex *x = (void *)(r->data + EX_OFF);
	struct axon_sqe s = { 0 };

	memset(x, 0, sizeof(*x) + 8);
	x->grid[0] = x->grid[1] = x->grid[2] = 1;
	x->block[0] = x->block[1] = x->block[2] = 1;
	x->args_off = sizeof(*x);
	axon_prep_obj(&s, AXON_OP_LAUNCH_EX, fn, 0, 0);
	s.stream = stream;
	s.obj.data_off = EX_OFF;
	s.obj.data_len = x->args_off + 8;
	return h_ring_res(r, &s, NULL, NULL);
}

START_TEST(heap_at_launch)
{
	struct axon_ring r;
	uint64_t ctx, stream, mod, m, p;
	struct axon_sqe s = { 0 };

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	memcpy(r.data, heap_ptx, sizeof(heap_ptx));
	axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	s.obj.data_len = sizeof(heap_ptx);
	ck_assert_int_eq(h_ring_res(&r, &s, &mod, NULL), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE);
	m = heap_func(&r, mod, "m");
	p = heap_func(&r, mod, "p");
	/* p does not call malloc: nothing */
	heap_launch(&r, stream, p);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE);
	/* Room for 8 MiB more only: m's first launch needs 10. */
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, CLIENT_MEM - MALLOC_RESERVE - 8 * MIB, NULL), 0);
	ck_assert_int_eq(heap_launch(&r, stream, m), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), CLIENT_MEM - 8 * MIB);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);

	/* With room: charged at the first launch, once. */
	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	memcpy(r.data, heap_ptx, sizeof(heap_ptx));
	axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	s.obj.data_len = sizeof(heap_ptx);
	ck_assert_int_eq(h_ring_res(&r, &s, &mod, NULL), CUDA_SUCCESS);
	m = heap_func(&r, mod, "m");
	ck_assert_int_ne(heap_launch(&r, stream, m), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE + 10 * MIB);
	ck_assert_int_ne(heap_launch(&r, stream, m), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), MALLOC_RESERVE + 10 * MIB);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(hostile)
{
	struct axon_ring r;
	uint64_t ctx, v;

	open_client(&h_daemon, &r, &ctx);
	ck_assert_int_eq(limit_op(&r, ctx + 1, CU_LIMIT_STACK_SIZE, 0, 0, &v),
			 CUDA_ERROR_INVALID_CONTEXT);
	ck_assert_int_eq(limit_op(&r, ctx, CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH, AXON_CTX_LIMIT_SET, 4, &v),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(limit_op(&r, ctx, (CUlimit)0x7fffffff, 0, 0, &v),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(limit_op(&r, ctx, CU_LIMIT_STACK_SIZE, 2, 4096, &v),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(limit_op(&r, ctx, CU_LIMIT_STACK_SIZE, 0, 4096, &v),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, 512 << 10), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(set(&r, ctx, CU_LIMIT_STACK_SIZE, UINT64_MAX), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(get(&r, ctx, CU_LIMIT_STACK_SIZE), 1024);
	ck_assert_uint_eq(client_u64(&r, "local_mem"), 0);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, stack);
	tcase_add_test(tc, heap);
	tcase_add_test(tc, fifo);
	tcase_add_test(tc, runtime);
	tcase_add_test(tc, heap_at_launch);
	tcase_add_test(tc, hostile);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = {
		"--max-client-mem=792M", "--mint-credit=0", NULL,
	};

	h_init(argc, argv);
	return h_check_main("attack-ctx-limits", "4G", extra, add, 60);
}
