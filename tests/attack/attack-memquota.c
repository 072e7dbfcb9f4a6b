// SPDX-License-Identifier: MIT
/*
 * attack-memquota: device-memory quotas per client and per user on the
 * socket transport. Nothing but the device's size bounded what one client
 * (or one user's many clients) could take: one could hold the whole device
 * and leave every other user out of memory.
 *
 * The daemon runs with --max-client-mem=64M --max-user-mem=96M and no
 * minting credit (every allocation asks, so the counts are exact).
 *
 *   client   MEM_MAP up to 64 MiB; a byte-granule past it is
 *            CUDA_ERROR_OUT_OF_MEMORY; freeing makes room again; the stats
 *            show the client's usage and limits
 *   user     two clients of one uid share 96 MiB: the second is refused
 *            past it although its own limit is not reached; when the first
 *            goes, its share comes back (the user's entry outlives it)
 *   vmm      cuMemCreate (MEM_CREATE) is charged against the same quota
 *   globals  a module whose 48 MiB global does not fit what is left of
 *            the client's quota is refused (needs bigglobal.cubin)
 *   credit   (own daemon: --max-client-mem=8M, default 256M credit) the
 *            credit a client is given stays within its quota, and a map
 *            past the quota is refused
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

#define MIB		(1ULL << 20)
#define CLIENT_MEM	(64 * MIB)
#define USER_MEM	(96 * MIB)

static int32_t map(struct axon_ring *r, uint64_t ctx, uint64_t off, uint64_t len)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, ctx, r->params.va_base + off, len);
	return h_ring_res(r, &sqe, NULL, NULL);
}

static int32_t unmap(struct axon_ring *r, uint64_t ctx, uint64_t off)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_mem(&sqe, AXON_OP_MEM_UNMAP, ctx, r->params.va_base + off, 0);
	return h_ring_res(r, &sqe, NULL, NULL);
}

/* A field of the client row of r's client. */
static uint64_t client_u64(const struct h_daemon *d, const struct axon_ring *r,
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

static void open_client(struct axon_ring *r, uint64_t *ctx)
{
	uint64_t stream;

	ck_assert_int_eq(h_ring_connect(r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(r, ctx, &stream), 0);
}

START_TEST(client)
{
	struct axon_ring r;
	uint64_t ctx;

	open_client(&r, &ctx);
	ck_assert_uint_eq(r.params.mint_credit, 0);
	ck_assert_int_eq(map(&r, ctx, 0, 48 * MIB), CUDA_SUCCESS);
	ck_assert_int_eq(map(&r, ctx, 64 * MIB, 16 * MIB + 256), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(map(&r, ctx, 64 * MIB, 16 * MIB), CUDA_SUCCESS);
	ck_assert_int_eq(map(&r, ctx, 128 * MIB, 256), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&h_daemon, &r, "bytes_mapped"), CLIENT_MEM);
	ck_assert_uint_eq(client_u64(&h_daemon, &r, "mem_limit"), CLIENT_MEM);
	ck_assert_uint_eq(client_u64(&h_daemon, &r, "user_mem_limit"), USER_MEM);
	ck_assert_uint_eq(client_u64(&h_daemon, &r, "user_mem_used"), CLIENT_MEM);
	/* Freed memory counts no more. */
	ck_assert_int_eq(unmap(&r, ctx, 64 * MIB), CUDA_SUCCESS);
	ck_assert_int_eq(map(&r, ctx, 128 * MIB, 16 * MIB), CUDA_SUCCESS);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(user)
{
	struct axon_ring a, b;
	uint64_t ca, cb;

	open_client(&a, &ca);
	open_client(&b, &cb);
	ck_assert_int_eq(map(&a, ca, 0, 64 * MIB), CUDA_SUCCESS);
	ck_assert_int_eq(map(&b, cb, 0, 32 * MIB), CUDA_SUCCESS);
	/* b has 32 MiB of its own 64 left, its user none. */
	ck_assert_int_eq(map(&b, cb, 32 * MIB, 256), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&h_daemon, &b, "user_mem_used"), USER_MEM);
	axon_close(&a);
	{
		unsigned int i;

		for (i = 0; i < 1000 && client_u64(&h_daemon, &b, "user_mem_used") != 32 * MIB; i++)
			h_poll_pause();
	}
	ck_assert_uint_eq(client_u64(&h_daemon, &b, "user_mem_used"), 32 * MIB);
	ck_assert_int_eq(map(&b, cb, 32 * MIB, 32 * MIB), CUDA_SUCCESS);
	ck_assert_int_eq(map(&b, cb, 64 * MIB, 256), CUDA_ERROR_OUT_OF_MEMORY);
	axon_close(&b);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static int32_t mem_create(struct axon_ring *r, uint64_t len, uint64_t *handle)
{
	struct axon_sqe sqe = { 0 };

	axon_prep_obj(&sqe, AXON_OP_MEM_CREATE, 0, len, 0);
	return h_ring_res(r, &sqe, handle, NULL);
}

START_TEST(vmm)
{
	struct axon_ring r;
	uint64_t ctx, h;

	open_client(&r, &ctx);
	ck_assert_int_eq(map(&r, ctx, 0, 32 * MIB), CUDA_SUCCESS);
	ck_assert_int_eq(mem_create(&r, 32 * MIB, &h), CUDA_SUCCESS);
	ck_assert_int_eq(mem_create(&r, 2 * MIB, &h), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&h_daemon, &r, "bytes_mapped"), CLIENT_MEM);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(globals)
{
	const char *path = h_path("tests/data/bigglobal.cubin");
	struct axon_sqe sqe = { 0 };
	struct axon_ring r;
	uint64_t ctx, mod;
	FILE *f = fopen(path, "rb");
	size_t len;

	if (!f) {
		h_note("%s missing (no nvcc): not tried", path);
		return;
	}
	open_client(&r, &ctx);
	len = fread(r.data, 1, r.data_size, f);
	fclose(f);
	ck_assert_int_eq(map(&r, ctx, 0, 32 * MIB), CUDA_SUCCESS);
	axon_prep_obj(&sqe, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	sqe.obj.data_len = (uint32_t)len;
	ck_assert_int_eq(h_ring_res(&r, &sqe, &mod, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&h_daemon, &r, "bytes_mapped"), 32 * MIB);
	/* With room for it, it loads. */
	ck_assert_int_eq(unmap(&r, ctx, 0), CUDA_SUCCESS);
	ck_assert_int_eq(h_ring_res(&r, &sqe, &mod, NULL), CUDA_SUCCESS);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(credit)
{
	static const char *const extra[] = { "--max-client-mem=8M", NULL };
	struct h_daemon small = { 0 };
	struct axon_ring r;
	uint64_t ctx, stream;
	struct axon_sqe sqe = { 0 };

	ck_assert_int_eq(h_daemon_start(&small, "4G", extra), 0);
	ck_assert_int_eq(h_ring_connect(&r, &small), 0);
	ck_assert_msg(r.params.mint_credit <= 8 * MIB, "credit %llu past the quota",
		      (unsigned long long)r.params.mint_credit);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, ctx, r.params.va_base, 8 * MIB + 256);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, ctx, r.params.va_base, 8 * MIB);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&small, &r, "mint_credit"), 0);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&small, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&small, false), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, client);
	tcase_add_test(tc, user);
	tcase_add_test(tc, vmm);
	tcase_add_test(tc, globals);
	tcase_add_test(tc, credit);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = {
		"--max-client-mem=64M", "--max-user-mem=96M", "--mint-credit=0", NULL,
	};

	h_init(argc, argv);
	return h_check_main("attack-memquota", "4G", extra, add, 60);
}
