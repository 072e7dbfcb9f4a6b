// SPDX-License-Identifier: MIT
/*
 * attack-charges: a client is charged what the device really spends on it
 * (issue 14). MEM_MAP used to charge the length asked for, while the
 * backend backs every 2 MiB granule a range touches and the client picks
 * the address: 256 bytes placed 2 MiB apart were charged 256 B and cost a
 * granule each, up to 8192 times a limit.
 *
 * The daemon runs with --max-client-mem=8M and no minting credit (every
 * allocation asks, so the counts are exact).
 *
 *   spread    256 B allocations 2 MiB apart are charged 2 MiB each: four
 *             fill the 8 MiB limit, a fifth is CUDA_ERROR_OUT_OF_MEMORY
 *   shared    two allocations in one granule are charged once; the granule
 *             is given back when the second goes, not the first
 *   straddle  2 MiB + 256 B from a granule's start is charged 4 MiB
 *   globals   a module's globals are charged the granules they back, and
 *             given back when it is unloaded (needs kernels.cubin)
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define MIB		(1ULL << 20)
#define GRAN		(2 * MIB)
#define CLIENT_MEM	(8 * MIB)

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
static uint64_t client_u64(const struct axon_ring *r, const char *path)
{
	struct json *doc = h_stats(&h_daemon);
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

/* Waits (bounded) for a field to read want: releases follow queued work. */
static uint64_t client_u64_becomes(const struct axon_ring *r, const char *path,
				   uint64_t want)
{
	uint64_t v = client_u64(r, path);
	unsigned int i;

	for (i = 0; i < 1000 && v != want; i++) {
		h_poll_pause();
		v = client_u64(r, path);
	}
	return v;
}

static void open_client(struct axon_ring *r, uint64_t *ctx)
{
	uint64_t stream;

	ck_assert_int_eq(h_ring_connect(r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(r, ctx, &stream), 0);
	ck_assert_uint_eq(r->params.mint_credit, 0);
}

static void close_client(struct axon_ring *r)
{
	axon_close(r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}

START_TEST(spread)
{
	struct axon_ring r;
	uint64_t ctx, i;

	open_client(&r, &ctx);
	for (i = 0; i < CLIENT_MEM / GRAN; i++) {
		ck_assert_int_eq(map(&r, ctx, i * GRAN, 256), CUDA_SUCCESS);
		ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), (i + 1) * GRAN);
	}
	/* One granule past the limit. */
	ck_assert_int_eq(map(&r, ctx, i * GRAN, 256), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), CLIENT_MEM);
	ck_assert_uint_eq(client_u64(&r, "user_mem_used"), CLIENT_MEM);
	/* ...but more in a granule already charged costs nothing. */
	ck_assert_int_eq(map(&r, ctx, 4096, GRAN - 4096), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), CLIENT_MEM);
	/* Freeing one granule's allocation makes room for one elsewhere. */
	ck_assert_int_eq(unmap(&r, ctx, 3 * GRAN), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), CLIENT_MEM - GRAN);
	ck_assert_int_eq(map(&r, ctx, 100 * GRAN + 512, 256), CUDA_SUCCESS);
	ck_assert_int_eq(map(&r, ctx, 101 * GRAN, 256), CUDA_ERROR_OUT_OF_MEMORY);
	close_client(&r);
}
END_TEST

START_TEST(shared)
{
	struct axon_ring r;
	uint64_t ctx;

	open_client(&r, &ctx);
	ck_assert_int_eq(map(&r, ctx, 0, 256), CUDA_SUCCESS);
	ck_assert_int_eq(map(&r, ctx, 256, 256), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), GRAN);
	ck_assert_int_eq(unmap(&r, ctx, 0), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), GRAN);
	ck_assert_int_eq(unmap(&r, ctx, 256), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), 0);
	/* The backing follows the work queued before the free. */
	ck_assert_uint_eq(client_u64_becomes(&r, "granules_backed", 0), 0);
	/* All of the limit is there again. */
	ck_assert_int_eq(map(&r, ctx, 0, CLIENT_MEM), CUDA_SUCCESS);
	close_client(&r);
}
END_TEST

START_TEST(straddle)
{
	struct axon_ring r;
	uint64_t ctx;

	open_client(&r, &ctx);
	ck_assert_int_eq(map(&r, ctx, 0, GRAN + 256), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), 2 * GRAN);
	ck_assert_uint_eq(client_u64(&r, "granules_backed"), 2 * GRAN);
	/* 4 MiB left: 4 MiB from the middle of a granule takes three. */
	ck_assert_int_eq(map(&r, ctx, 4 * GRAN + MIB, 2 * GRAN), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(map(&r, ctx, 4 * GRAN, 2 * GRAN), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), CLIENT_MEM);
	close_client(&r);
}
END_TEST

static int32_t module_load(struct axon_ring *r, uint64_t ctx, const char *path,
			   uint64_t *mod)
{
	struct axon_sqe sqe = { 0 };
	FILE *f = fopen(path, "rb");
	size_t len;

	ck_assert_msg(f != NULL, "%s", path);
	len = fread(r->data, 1, r->data_size, f);
	fclose(f);
	axon_prep_obj(&sqe, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	sqe.obj.data_len = (uint32_t)len;
	return h_ring_res(r, &sqe, mod, NULL);
}

START_TEST(globals)
{
	const char *path = h_kernel_path("cubin");
	struct axon_sqe sqe = { 0 };
	struct axon_ring r;
	uint64_t ctx, mod;

	if (access(path, R_OK)) {
		h_note("%s missing: not tried", path);
		return;
	}
	open_client(&r, &ctx);
	/* Its few hundred bytes of globals take a granule of the window. */
	ck_assert_int_eq(module_load(&r, ctx, path, &mod), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64(&r, "bytes_mapped"), GRAN);
	ck_assert_int_eq(map(&r, ctx, 0, 3 * GRAN), CUDA_SUCCESS);
	ck_assert_int_eq(map(&r, ctx, 3 * GRAN, 256), CUDA_ERROR_OUT_OF_MEMORY);
	axon_prep_obj(&sqe, AXON_OP_MODULE_UNLOAD, mod, 0, 0);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64_becomes(&r, "bytes_mapped", 3 * GRAN), 3 * GRAN);
	ck_assert_int_eq(map(&r, ctx, 3 * GRAN, 256), CUDA_SUCCESS);
	close_client(&r);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, spread);
	tcase_add_test(tc, shared);
	tcase_add_test(tc, straddle);
	tcase_add_test(tc, globals);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = {
		"--max-client-mem=8M", "--mint-credit=0", NULL,
	};

	h_init(argc, argv);
	return h_check_main("attack-charges", "4G", extra, add, 60);
}
