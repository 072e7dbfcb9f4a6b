// SPDX-License-Identifier: MIT
/*
 * attack-mappings: mappings and VMM objects a client makes axond hold.
 * Each pinned host region was a mapping of axond's with no bound but 65 536
 * per client, and each VMM map (of one object, at as many addresses as the
 * window holds) another: 65 477 regions filled vm.max_map_count, new clients
 * were refused and a bystander's module load failed with OUT_OF_MEMORY.
 * Each VMM object is a descriptor in the sim. Now both are bounded per
 * client, per user and for the daemon (axond/holdings.c), and what was
 * refused is given back in full when the holder goes.
 *
 * The daemon runs with the default per-client limit of mappings (4096), a
 * per-user limit of 6000 and a per-client limit of 16 VMM objects:
 *   - client A registers one-page regions until refused: 4096 succeed;
 *   - client B, same uid: the user's remaining 1904;
 *   - A goes: its mappings come back, B gets one more;
 *   - client C: 16 VMM objects, then refused; one object mapped at many
 *     addresses until refused: the user's remaining share;
 *   - a bystander still connects and loads a module meanwhile;
 *   - everyone gone: the daemon holds no mappings, its map count is back.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define PAGE		4096
#define PER_CLIENT	4096
#define PER_USER	6000
#define VMM_PER_CLIENT	16
/* Client addresses for the regions: the daemon maps there where it can. */
#define REGION_BASE	0x5a0000000000ULL

static int page_memfd(void)
{
	int fd = memfd_create("region", MFD_ALLOW_SEALING | MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, PAGE), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	return fd;
}

/* Registers regions at REGION_BASE + (first + i) pages until refused;
 * returns how many succeeded (at most max). */
static unsigned int register_until_refused(struct axon_ring *r, int memfd, unsigned int first,
					   unsigned int max)
{
	unsigned int i;

	for (i = 0; i < max; i++) {
		const struct axon_hostmem_fd m = {
			.magic = AXON_MAGIC, .kind = AXON_HOSTMEM_FD_KIND, .cookie = i + 1,
		};
		struct axon_sqe s = { 0 };
		int32_t res;

		ck_assert_int_eq(a_send_fd(r->sock_fd, &m, sizeof(m), memfd), 0);
		axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, i + 1,
			      REGION_BASE + (uint64_t)(first + i) * PAGE, PAGE);
		s.obj.data_len = sizeof(struct axon_hostmem_info);
		res = h_ring_res(r, &s, NULL, NULL);
		if (res == CUDA_ERROR_OUT_OF_MEMORY)
			break;
		ck_assert_msg(res == CUDA_SUCCESS, "register %u: res %d", i, res);
	}
	return i;
}

static uint64_t client_field(uint64_t id, const char *path)
{
	struct json *doc = h_stats(&h_daemon);
	const struct json *cl;
	uint64_t v;

	ck_assert_ptr_nonnull(doc);
	cl = h_stats_client_id(doc, id);
	ck_assert_ptr_nonnull(cl);
	v = h_client_u64(cl, path);
	json_free(doc);
	return v;
}

START_TEST(bounded_mappings)
{
	struct axon_ring a, b, c, by;
	struct axon_sqe s;
	uint64_t ctx, stream, obj = 0, a0 = 0, g = 2ULL << 20;
	unsigned int n, maps, i;
	int memfd = page_memfd(), maps0;

	maps0 = a_proc_maps(h_daemon.pid);
	ck_assert_int_eq(h_ring_connect(&a, &h_daemon), 0);
	ck_assert_int_eq(h_ring_connect(&b, &h_daemon), 0);

	n = register_until_refused(&a, memfd, 0, PER_CLIENT + 10);
	ck_assert_uint_eq(n, PER_CLIENT);
	ck_assert_uint_eq(client_field(a.params.client_id, "limits.mappings"), PER_CLIENT);
	n = register_until_refused(&b, memfd, 100000, PER_USER);
	ck_assert_uint_eq(n, PER_USER - PER_CLIENT);

	/* A goes: what it held comes back to its user. */
	axon_close(&a);
	for (i = 0; i < 200; i++) {
		if (register_until_refused(&b, memfd, 200000 + i, 1) == 1)
			break;
		h_poll_pause();
	}
	ck_assert_msg(i < 200, "the user's mappings were not given back when A went");

	/* VMM objects and aliased maps. */
	ck_assert_int_eq(h_ring_connect(&c, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&c, &ctx, &stream), 0);
	for (n = 0; n < VMM_PER_CLIENT + 4; n++) {
		memset(&s, 0, sizeof(s));
		axon_prep_obj(&s, AXON_OP_MEM_CREATE, 0, g, 0);
		if (h_ring_res(&c, &s, &a0, NULL) != CUDA_SUCCESS)
			break;
		if (!obj)
			obj = a0;
	}
	ck_assert_uint_eq(n, VMM_PER_CLIENT);
	ck_assert_uint_eq(client_field(c.params.client_id, "limits.vmm_objects"), VMM_PER_CLIENT);
	for (maps = 0; maps < PER_CLIENT + 10; maps++) {
		int32_t res;

		memset(&s, 0, sizeof(s));
		axon_prep_mem(&s, AXON_OP_MEM_MAP, ctx, c.params.va_base + (uint64_t)maps * g, g);
		s.mem.resv[0] = obj;
		res = h_ring_res(&c, &s, NULL, NULL);
		if (res == CUDA_ERROR_OUT_OF_MEMORY)
			break;
		ck_assert_msg(res == CUDA_SUCCESS, "map %u: res %d", maps, res);
	}
	/* B holds PER_USER - PER_CLIENT + 1 of the user's share. */
	ck_assert_uint_eq(maps, PER_CLIENT - 1);

	/* A bystander (same uid, but a client of its own) still connects,
	 * and the daemon still maps what every client needs. */
	ck_assert_int_eq(h_ring_connect(&by, &h_daemon), 0);
	memset(&s, 0, sizeof(s));
	axon_prep_nop(&s);
	ck_assert_int_eq(h_ring_res(&by, &s, NULL, NULL), CUDA_SUCCESS);

	axon_close(&by);
	axon_close(&c);
	axon_close(&b);
	close(memfd);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
	{
		struct json *doc = h_stats(&h_daemon);
		const struct json *dm = json_get(doc, "daemon");

		ck_assert_uint_eq(json_u64(json_get(dm, "mappings"), UINT64_MAX), 0);
		ck_assert_uint_eq(json_u64(json_get(dm, "vmm_objects"), UINT64_MAX), 0);
		json_free(doc);
	}
	ck_assert_msg(a_proc_maps(h_daemon.pid) <= maps0 + 64, "axond has %d mappings, %d before",
		      a_proc_maps(h_daemon.pid), maps0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, bounded_mappings);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = {
		"--max-maps-per-user=6000", "--max-vmm-per-client=16", NULL,
	};

	h_init(argc, argv);
	return h_check_main("attack-mappings", "8G", extra, add, 180);
}
