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
 *   globals   (own daemon: --max-client-mem=70M) a module's globals are
 *             charged the granules they back, and given back when it is
 *             unloaded; kernels.cubin calls printf, whose reserve in the
 *             context (62 MiB on an H200) is charged at its load and kept
 *             after the unload, as the driver keeps it (needs the cubin)
 *   credit    (own daemon: a 64 MiB device, --mint-credit=16M, four
 *             clients holding it all as credit) a module's globals are
 *             drawn from its client's credit and their unload refills it:
 *             after 40 loads and unloads of a module, and a newcomer
 *             taking the free arena as its credit, the client's 16 MiB
 *             are there; its credit ran dry after 8 loads, and then
 *             every allocation it made failed
 *   contexts  (own daemons: --ctx-mem) a client's context is charged
 *             from its welcome, in whole granules, within its limit (one
 *             that does not fit is refused), and given back when it goes
 *   pinned    (own daemon: --data-size=4M --max-pinned-per-client=16M
 *             --max-pinned-per-user=24M) pinned host memory registered
 *             through the daemon (and each client's rings and data area)
 *             fills a client's limit and is refused one byte past it, and
 *             past its user's limit although its own is not reached;
 *             unregistering gives it back. Nothing bounded it: a client
 *             could make axond pin the host's memory.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
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


/* A field of r's client row in d's stats. */
static uint64_t client_u64_of(const struct h_daemon *d, const struct axon_ring *r,
			      const char *path)
{
	struct json *doc = h_stats(d);
	const struct json *c;
	uint64_t v;

	ck_assert(doc != NULL);
	c = h_stats_client_id(doc, r->params.client_id);
	ck_assert(c != NULL);
	v = h_client_u64(c, path);
	json_free(doc);
	return v;
}

#define PRINTF_RESERVE	(62 * MIB)

START_TEST(credit)
{
	static const char *const extra[] = { "--mint-credit=16M", NULL };
	static const char ptx[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .global .align 4 .b8 g[256];\n"
		".visible .entry k(.param .u64 k_param_0)\n{\n\tret;\n}\n";
	struct h_daemon own = { 0 };
	struct axon_ring r[5];
	uint64_t ctx[4], stream, mod;
	struct axon_sqe sqe = { 0 };
	int i;

	ck_assert_int_eq(h_daemon_start(&own, "64M", extra), 0);
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(h_ring_connect(&r[i], &own), 0);
		ck_assert_int_eq(h_ring_ctx_create(&r[i], &ctx[i], &stream), 0);
		ck_assert_uint_eq(r[i].params.mint_credit, 16 * MIB);
	}
	for (i = 0; i < 40; i++) {
		memcpy(r[0].data, ptx, sizeof(ptx));
		sqe = (struct axon_sqe){ 0 };
		axon_prep_obj(&sqe, AXON_OP_MODULE_LOAD, ctx[0], 0, 0);
		sqe.obj.data_len = sizeof(ptx);
		ck_assert_msg(h_ring_res(&r[0], &sqe, &mod, NULL) == CUDA_SUCCESS,
			      "load %d of a module with globals failed", i + 1);
		sqe = (struct axon_sqe){ 0 };
		axon_prep_obj(&sqe, AXON_OP_MODULE_UNLOAD, mod, 0, 0);
		ck_assert_int_eq(h_ring_res(&r[0], &sqe, NULL, NULL), CUDA_SUCCESS);
	}
	/* A newcomer takes what the arena has as its credit... */
	ck_assert_int_eq(h_ring_connect(&r[4], &own), 0);
	/* ...and the first client's credit is all there for an allocation
	 * (a module's globals go after the work queued before its unload:
	 * the last one's refill may be a moment behind). */
	for (i = 0; i < 1000 && client_u64_of(&own, &r[0], "mint_credit") != 16 * MIB; i++)
		h_poll_pause();
	ck_assert_uint_eq(client_u64_of(&own, &r[0], "mint_credit"), 16 * MIB);
	sqe = (struct axon_sqe){ 0 };
	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, ctx[0], r[0].params.va_base, 16 * MIB);
	ck_assert_int_eq(h_ring_res(&r[0], &sqe, NULL, NULL), CUDA_SUCCESS);
	for (i = 0; i < 5; i++)
		axon_close(&r[i]);
	ck_assert_int_eq(h_wait_idle(&own, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&own, false), 0);
}
END_TEST

START_TEST(globals)
{
	static const char *const extra[] = { "--max-client-mem=70M", "--mint-credit=0", NULL };
	const char *path = h_kernel_path("cubin");
	struct h_daemon own = { 0 };
	struct axon_sqe sqe = { 0 };
	struct axon_ring r;
	uint64_t ctx, mod, stream;
	unsigned int i;

	if (access(path, R_OK)) {
		h_note("%s missing: not tried", path);
		return;
	}
	ck_assert_int_eq(h_daemon_start(&own, "4G", extra), 0);
	ck_assert_int_eq(h_ring_connect(&r, &own), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	/* Its few hundred bytes of globals take a granule of the window;
	 * the printf reserve is charged with them. */
	ck_assert_int_eq(module_load(&r, ctx, path, &mod), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64_of(&own, &r, "local_mem"), PRINTF_RESERVE);
	ck_assert_uint_eq(client_u64_of(&own, &r, "bytes_mapped"), PRINTF_RESERVE + GRAN);
	ck_assert_int_eq(map(&r, ctx, 0, 3 * GRAN), CUDA_SUCCESS);
	ck_assert_int_eq(map(&r, ctx, 3 * GRAN, 256), CUDA_ERROR_OUT_OF_MEMORY);
	axon_prep_obj(&sqe, AXON_OP_MODULE_UNLOAD, mod, 0, 0);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), CUDA_SUCCESS);
	for (i = 0; i < 1000 && client_u64_of(&own, &r, "bytes_mapped") !=
				 PRINTF_RESERVE + 3 * GRAN; i++)
		h_poll_pause();
	ck_assert_uint_eq(client_u64_of(&own, &r, "bytes_mapped"), PRINTF_RESERVE + 3 * GRAN);
	ck_assert_int_eq(map(&r, ctx, 3 * GRAN, 256), CUDA_SUCCESS);
	/* Loaded again: the reserve is not charged twice. */
	ck_assert_int_eq(module_load(&r, ctx, path, &mod), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(unmap(&r, ctx, 3 * GRAN), CUDA_SUCCESS);
	ck_assert_int_eq(module_load(&r, ctx, path, &mod), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64_of(&own, &r, "bytes_mapped"), PRINTF_RESERVE + 4 * GRAN);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&own, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&own, false), 0);
}
END_TEST

/*
 * Registers len bytes of a fresh sealed memfd, mapped here at an address
 * free in the daemon as well (tried from a high base up); the result, with
 * the address in *base.
 */
static int32_t pin(struct axon_ring *r, uint64_t len, uint64_t *base)
{
	static uint64_t cookie = 1;
	const uint64_t map_len = (len + 4095) & ~4095ULL;
	struct axon_hostmem_fd msg = { .magic = AXON_MAGIC, .kind = AXON_HOSTMEM_FD_KIND };
	int32_t res = CUDA_ERROR_ALREADY_MAPPED;
	unsigned int i;
	int fd;

	for (i = 0; i < 64 && res == CUDA_ERROR_ALREADY_MAPPED; i++) {
		uint64_t at = 0x500000000000ULL + (uint64_t)i * (1ULL << 32) + cookie * (1ULL << 26);
		struct axon_hostmem_info info = { 0 };
		struct axon_sqe s = { 0 };
		void *p;

		fd = memfd_create("charges-pin", MFD_ALLOW_SEALING | MFD_CLOEXEC);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(ftruncate(fd, (off_t)map_len), 0);
		ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
		p = mmap((void *)(uintptr_t)at, map_len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
		if (p != (void *)(uintptr_t)at) {
			if (p != MAP_FAILED)
				munmap(p, map_len);
			close(fd);
			continue;
		}
		msg.cookie = cookie++;
		ck_assert_int_eq(a_send_fd(r->sock_fd, &msg, sizeof(msg), fd), 0);
		close(fd);
		memcpy(r->data, &info, sizeof(info));
		axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, msg.cookie, at, len);
		s.obj.data_len = sizeof(info);
		res = h_ring_res(r, &s, NULL, NULL);
		if (res)
			munmap(p, map_len);
		*base = at;
	}
	return res;
}

static int32_t unpin(struct axon_ring *r, uint64_t base)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, AXON_OP_HOSTMEM_UNREGISTER, 0, base, 0);
	return h_ring_res(r, &s, NULL, NULL);
}

START_TEST(pinned)
{
	static const char *const extra[] = {
		"--data-size=4M", "--max-pinned-per-client=16M", "--max-pinned-per-user=24M", NULL,
	};
	struct h_daemon own = { 0 };
	struct axon_ring a, b;
	uint64_t held, room, base, base_b;
	unsigned int i;

	ck_assert_int_eq(h_daemon_start(&own, "4G", extra), 0);
	ck_assert_int_eq(h_ring_connect(&a, &own), 0);
	/* Its rings and data area count from the start. */
	held = client_u64_of(&own, &a, "host_pinned");
	ck_assert_uint_ge(held, 4 * MIB);
	ck_assert_uint_lt(held, 16 * MIB);
	room = 16 * MIB - held;
	ck_assert_int_eq(pin(&a, room + 1, &base), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(pin(&a, room, &base), CUDA_SUCCESS);
	ck_assert_uint_eq(client_u64_of(&own, &a, "host_pinned"), 16 * MIB);
	ck_assert_int_eq(pin(&a, 1, &base_b), CUDA_ERROR_OUT_OF_MEMORY);
	/* Another client of the uid: within its own limit, past the user's. */
	ck_assert_int_eq(h_ring_connect(&b, &own), 0);
	held = client_u64_of(&own, &b, "user_host_pinned");
	ck_assert_uint_eq(held, 16 * MIB + client_u64_of(&own, &b, "host_pinned"));
	room = 24 * MIB - held;
	ck_assert_int_eq(pin(&b, room + 1, &base_b), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(pin(&b, room, &base_b), CUDA_SUCCESS);
	ck_assert_uint_lt(client_u64_of(&own, &b, "host_pinned"), 16 * MIB);
	/* Given back when unregistered (after the work queued before). */
	ck_assert_int_eq(unpin(&a, base), CUDA_SUCCESS);
	for (i = 0; i < 1000 && client_u64_of(&own, &a, "host_pinned") == 16 * MIB; i++)
		h_poll_pause();
	room = 16 * MIB - client_u64_of(&own, &a, "host_pinned");
	ck_assert_uint_gt(room, 4 * MIB);
	ck_assert_int_eq(pin(&b, 4096, &base_b), CUDA_SUCCESS);
	axon_close(&a);
	axon_close(&b);
	ck_assert_int_eq(h_wait_idle(&own, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&own, false), 0);
}
END_TEST

START_TEST(contexts)
{
	static const char *const fits[] = {
		"--ctx-mem=5M", "--max-client-mem=8M", "--mint-credit=0", NULL,
	};
	static const char *const too_big[] = {
		"--ctx-mem=7M", "--max-client-mem=6M", "--mint-credit=0", NULL,
	};
	struct h_daemon own = { 0 };
	struct axon_ring r;
	struct axon_sqe sqe = { 0 };
	char err[256];
	uint64_t ctx, stream;

	ck_assert_int_eq(h_daemon_start(&own, "4G", fits), 0);
	ck_assert_int_eq(h_ring_connect(&r, &own), 0);
	ck_assert_uint_eq(client_u64_of(&own, &r, "ctx_mem"), 3 * GRAN);
	ck_assert_uint_eq(client_u64_of(&own, &r, "bytes_mapped"), 3 * GRAN);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	/* One granule is left of the 8 MiB. */
	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, ctx, r.params.va_base + GRAN, 256);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), CUDA_SUCCESS);
	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, ctx, r.params.va_base, 256);
	ck_assert_int_eq(h_ring_res(&r, &sqe, NULL, NULL), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_uint_eq(client_u64_of(&own, &r, "bytes_mapped"), CLIENT_MEM);
	axon_close(&r);
	/* Its context's share comes back with it (mem_used 0). */
	ck_assert_int_eq(h_wait_idle(&own, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&own, false), 0);

	memset(&own, 0, sizeof(own));
	ck_assert_int_eq(h_daemon_start(&own, "4G", too_big), 0);
	ck_assert_int_ne(axon_connect(own.addr, NULL, &r, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "context"), "refused for: %s", err);
	ck_assert_int_eq(h_wait_idle(&own, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&own, false), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, spread);
	tcase_add_test(tc, shared);
	tcase_add_test(tc, straddle);
	tcase_add_test(tc, globals);
	tcase_add_test(tc, credit);
	tcase_add_test(tc, pinned);
	tcase_add_test(tc, contexts);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = {
		"--max-client-mem=8M", "--mint-credit=0", NULL,
	};

	h_init(argc, argv);
	return h_check_main("attack-charges", "4G", extra, add, 60);
}
