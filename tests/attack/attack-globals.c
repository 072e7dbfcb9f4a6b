// SPDX-License-Identifier: MIT
/*
 * attack-globals: module globals are device memory like any other. They
 * were charged to the client without looking at the arena (6.5 GB charged
 * on a 4 GB device) and the sim zeroed each zero-initialised one in host
 * memory (the daemon's resident set grew by all of them: 6.3 GB).
 *
 *   arena   on a 256 MiB device, clients each loading a module with a
 *           48 MiB zero-initialised global (tests/attack/bigglobal.cu): five
 *           fit, the sixth is refused with CUDA_ERROR_OUT_OF_MEMORY, the
 *           daemon never counts more than the device has; the daemon's
 *           resident set grows by far less than the globals; once the
 *           clients are gone, all is given back and a new client loads it
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

#define DEVICE_MEM	(256ULL << 20)
#define GLOBAL_MEM	(48ULL << 20)	/* tests/attack/bigglobal.cu */
#define NCLIENTS	6

static const char *image_path(void)
{
	return h_path("tests/data/bigglobal.cubin");
}

/* Loads the image into r's context; the completion's result. */
static int32_t load(struct axon_ring *r, uint64_t ctx, uint64_t *mod)
{
	FILE *f = fopen(image_path(), "rb");
	struct axon_sqe sqe = { 0 };
	size_t len;

	ck_assert(f != NULL);
	len = fread(r->data, 1, r->data_size, f);
	fclose(f);
	ck_assert(len > 0 && len < r->data_size);
	axon_prep_obj(&sqe, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	sqe.obj.data_len = (uint32_t)len;
	return h_ring_res(r, &sqe, mod, NULL);
}

static uint64_t daemon_used(void)
{
	struct json *doc = h_stats(&h_daemon);
	uint64_t v;

	ck_assert(doc != NULL);
	v = json_u64(json_path(doc, "daemon.mem_used"), UINT64_MAX) +
	    json_u64(json_path(doc, "daemon.mem_reserved"), UINT64_MAX);
	json_free(doc);
	return v;
}

START_TEST(arena)
{
	static struct axon_ring r[NCLIENTS];
	uint64_t ctxs[NCLIENTS], ctx, stream, mod, charged;
	long rss0, rss;
	unsigned int i;
	int32_t res;

	rss0 = a_proc_rss_kb(h_daemon.pid);
	ck_assert(rss0 > 0);
	for (i = 0; i < NCLIENTS; i++) {
		ck_assert_int_eq(h_ring_connect(&r[i], &h_daemon), 0);
		ck_assert_int_eq(h_ring_ctx_create(&r[i], &ctxs[i], &stream), 0);
	}
	/* Five fit. */
	for (i = 0; i + 1 < NCLIENTS; i++) {
		res = load(&r[i], ctxs[i], &mod);
		ck_assert_msg(res == CUDA_SUCCESS, "client %u: load: %d", i, res);
	}
	rss = a_proc_rss_kb(h_daemon.pid);
	h_note("daemon RSS %ld KiB before, %ld KiB with %u globals of %llu MiB", rss0, rss,
	       NCLIENTS - 1, (unsigned long long)(GLOBAL_MEM >> 20));
	/* The sixth does not; nothing is charged past the device. */
	res = load(&r[NCLIENTS - 1], ctxs[NCLIENTS - 1], &mod);
	charged = daemon_used();
	ck_assert_msg(rss - rss0 < 32 * 1024 && res == CUDA_ERROR_OUT_OF_MEMORY &&
		      charged <= DEVICE_MEM,
		      "RSS grew by %ld KiB for %u zero globals of %llu MiB; the sixth load "
		      "gave %d (%llu MiB of globals on a %llu MiB device), %llu bytes charged",
		      rss - rss0, NCLIENTS - 1, (unsigned long long)(GLOBAL_MEM >> 20), res,
		      (unsigned long long)(NCLIENTS * GLOBAL_MEM >> 20),
		      (unsigned long long)(DEVICE_MEM >> 20), (unsigned long long)charged);
	for (i = 0; i < NCLIENTS; i++)
		axon_close(&r[i]);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);

	/* All given back: a new client loads it again. */
	ck_assert_int_eq(h_ring_connect(&r[0], &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r[0], &ctx, &stream), 0);
	ck_assert_int_eq(load(&r[0], ctx, &mod), CUDA_SUCCESS);
	axon_close(&r[0]);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, arena);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = { "--mint-credit=0", NULL };

	h_init(argc, argv);
	h_require_file(image_path());
	return h_check_main("attack-globals", "256M", extra, add, 60);
}
