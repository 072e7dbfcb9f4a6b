// SPDX-License-Identifier: MIT
/*
 * integration-vmm: the VMM API for clients.
 *  - tests/bin/vmm through the shim (reserve, create, two mappings of one
 *    handle aliasing, access, retain, errors, unmap/release in either
 *    order); afterwards the daemon holds nothing;
 *  - a client killed while it holds mapped, unmapped-but-pending and
 *    never-mapped physical memory: the daemon gives everything back;
 *  - the daemon's own checks over raw rings: MEM_CREATE sizes, MEM_MAP of
 *    a handle (granularity, window, overlap, deferred), another client's
 *    handle value, a released handle, charging in the stats.
 */
#include <check.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "harness.h"

#define MiB (1024 * 1024ULL)
#define G (2 * MiB)	/* the sim's granularity */

START_TEST(test_vmm)
{
	ck_assert_int_eq(h_run_bin(H_MS(120000), "vmm", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_vmm_disconnect_releases)
{
	const struct json *cl;
	struct json *doc;
	int out = -1;
	pid_t pid = h_spawn_bin(&out, "vmm", "hold", NULL);

	ck_assert(pid > 0);
	ck_assert_int_eq(h_wait_line(out, "vmm: holding", H_MS(30000)), 0);
	doc = h_stats(&h_daemon);
	ck_assert(doc);
	cl = h_stats_client(doc, pid);
	ck_assert_msg(cl, "the holding client is listed");
	/* 2 granules mapped twice-ish, 1 never mapped: 3 charged */
	ck_assert_uint_ge(h_client_u64(cl, "bytes_mapped"), 3 * G);
	json_free(doc);
	kill(pid, SIGKILL);
	ck_assert_int_eq(h_wait_child(pid, H_MS(10000), "vmm hold"), 128 + SIGKILL);
	h_drain(out, 100);
	close(out);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static int32_t mem_create(struct axon_ring *r, uint64_t len, uint64_t *h)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, AXON_OP_MEM_CREATE, 0, len, 0);
	return h_ring_res(r, &s, h, NULL);
}

static int32_t mem_release(struct axon_ring *r, uint64_t h)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, AXON_OP_MEM_RELEASE, h, 0, 0);
	return h_ring_res(r, &s, NULL, NULL);
}

static int32_t map_handle(struct axon_ring *r, uint64_t ctx, uint64_t addr, uint64_t len,
			  uint64_t h, uint64_t off)
{
	struct axon_sqe s = { 0 };

	axon_prep_mem(&s, AXON_OP_MEM_MAP, ctx, addr, len);
	s.mem.resv[0] = h;
	s.mem.resv[1] = off;
	return h_ring_res(r, &s, NULL, NULL);
}

static int32_t unmap(struct axon_ring *r, uint64_t ctx, uint64_t addr)
{
	struct axon_sqe s = { 0 };

	axon_prep_mem(&s, AXON_OP_MEM_UNMAP, ctx, addr, 0);
	return h_ring_res(r, &s, NULL, NULL);
}

/* Both rings are this process: the client is found by its id. */
static uint64_t bytes_mapped(const struct axon_ring *r)
{
	struct json *doc = h_stats(&h_daemon);
	const struct json *cl = doc ? h_stats_client_id(doc, r->params.client_id) : NULL;
	uint64_t v = cl ? h_client_u64(cl, "bytes_mapped") : UINT64_MAX;

	json_free(doc);
	return v;
}

START_TEST(test_vmm_raw_checks)
{
	struct axon_ring a, b;
	uint64_t ctx_a, ctx_b, st, h, h2, base_a, base_b, win_end;
	struct axon_sqe s = { 0 };

	ck_assert_int_eq(h_ring_connect(&a, &h_daemon), 0);
	ck_assert_int_eq(h_ring_connect(&b, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&a, &ctx_a, &st), 0);
	ck_assert_int_eq(h_ring_ctx_create(&b, &ctx_b, &st), 0);
	base_a = a.params.va_base;
	base_b = b.params.va_base;
	win_end = base_a + a.params.va_size - a.params.va_size / 16;

	/* Sizes: whole granules only; device must exist. */
	ck_assert_int_eq(mem_create(&a, 0, &h), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(mem_create(&a, G + 4096, &h), CUDA_ERROR_INVALID_VALUE);
	axon_prep_obj(&s, AXON_OP_MEM_CREATE, 0, G, 7);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_ERROR_INVALID_DEVICE);
	ck_assert_int_eq(mem_create(&a, 2 * G, &h), 0);
	ck_assert_uint_eq(bytes_mapped(&a), 2 * G);	/* charged at create */

	/* Mapping: granularity, the window, overlap, the handle's extent. */
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a + 4096, G, h, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a, G / 2, h, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a, G, h, 4096), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a, 3 * G, h, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a, G, h, 2 * G), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a - G, G, h, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, win_end, G, h, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a, G, h, 0), 0);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a, G, h, G), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(h_ring_map(&a, ctx_a, G, 4096, NULL), 0);	/* minted */
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a + G, G, h, G), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a + 2 * G, G, h, G), 0);
	/* mapping: no charge; the minted 4 KiB is charged its granule */
	ck_assert_uint_eq(bytes_mapped(&a), 2 * G + G);

	/* Another client's handle value names nothing of its own. */
	ck_assert_int_eq(map_handle(&b, ctx_b, base_b, G, h, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(mem_release(&b, h), CUDA_ERROR_INVALID_VALUE);
	axon_prep_obj(&s, AXON_OP_MEM_CREATE, h, 0, 0);	/* retain */
	ck_assert_int_eq(h_ring_res(&b, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	/* Nor can b reach a's window with a handle of its own. */
	ck_assert_int_eq(mem_create(&b, G, &h2), 0);
	ck_assert_int_eq(map_handle(&b, ctx_b, base_a + 4 * G, G, h2, 0),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(mem_release(&b, h2), 0);
	ck_assert_int_eq(mem_release(&b, h2), CUDA_ERROR_INVALID_VALUE);

	/* Retain and release; a released handle does not map any more. */
	axon_prep_obj(&s, AXON_OP_MEM_CREATE, h, 0, 0);
	ck_assert_int_eq(h_ring_res(&a, &s, &h2, NULL), 0);
	ck_assert_uint_eq(h2, h);
	ck_assert_int_eq(mem_release(&a, h), 0);
	ck_assert_int_eq(mem_release(&a, h), 0);
	ck_assert_int_eq(mem_release(&a, h), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(map_handle(&a, ctx_a, base_a + 6 * G, G, h, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(bytes_mapped(&a), 2 * G + G);	/* still mapped */
	/* A mapping is not freed as minted memory, nor twice. */
	ck_assert_int_eq(unmap(&a, ctx_a, base_a), 0);
	ck_assert_int_eq(unmap(&a, ctx_a, base_a), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(unmap(&a, ctx_a, base_a + 2 * G), 0);
	ck_assert_int_eq(unmap(&a, ctx_a, base_a + G), 0);
	/* Once both unmaps reached the device, nothing is left. */
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_CTX_SYNC, ctx_a, 0, 0);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), 0);
	ck_assert_uint_eq(bytes_mapped(&a), 0);

	/* Deferred MEM_MAP of a handle is refused: the error is latched and
	 * the next synchronising op reports it. */
	ck_assert_int_eq(mem_create(&a, G, &h), 0);
	memset(&s, 0, sizeof(s));
	axon_prep_mem(&s, AXON_OP_MEM_MAP, ctx_a, base_a, G);
	s.mem.resv[0] = h;
	s.flags = AXON_SQE_F_DEFERRED;
	ck_assert_int_eq(h_ring_post(&a, &s), 0);
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_CTX_SYNC, ctx_a, 0, 0);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	/* Left for the disconnect to free. */
	axon_close(&b);
	axon_close(&a);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_vmm);
	tcase_add_test(tc, test_vmm_disconnect_releases);
	tcase_add_test(tc, test_vmm_raw_checks);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-vmm", "4G", NULL, add_tests, 300);
}
