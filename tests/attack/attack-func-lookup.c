// SPDX-License-Identifier: MIT
/*
 * attack-func-lookup: a client with very many functions must not slow the
 * daemon for others. MODULE_GET_FUNC walked every function the client had
 * got so far (131 072 functions: 2.2 ms per lookup), on the dispatcher, so
 * a client keeping its ring full of lookups held every other client back
 * by a batch of them at a time. Functions are now found by hash.
 *
 * The attacker loads two PTX modules of 65 536 kernels each, gets every
 * function, then keeps its ring full of lookups of them; a bystander's
 * synchronous NOPs are measured meanwhile: their median stays under 20 ms
 * (the median: a loaded 2-core machine delays single NOPs by scheduling
 * alone; with the fix it is 0-1 ms under ASan, without it each NOP waits
 * for a batch of linear lookups). Without the fix getting the functions
 * alone takes minutes: that fails first, after 60 s.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

#define MODULES		2
#define KERNELS		65536
#define NAME_OFF	(40u << 20)	/* names and answers, after the image */
#define SLOT		(sizeof(struct axon_func_info) + 64)
#define ATTACK_MS	3000
#define MAX_MEDIAN_MS	20

static atomic_bool ready, stop;
static atomic_int attack_failed;
static atomic_ullong lookups;

static uint32_t make_ptx(char *p, size_t room, unsigned int m)
{
	size_t n = (size_t)snprintf(p, room, ".version 8.0\n.target sm_90\n.address_size 64\n");
	unsigned int k;

	for (k = 0; k < KERNELS && n < room; k++)
		n += (size_t)snprintf(p + n, room - n,
				      ".visible .entry m%uk%05u(.param .u64 a)\n{\n\tret;\n}\n", m, k);
	return (uint32_t)n + 1;
}

/* Posts a GET_FUNC of kernel k of module m, answer slot s; 0 or -errno. */
static int post_get(struct axon_ring *r, uint64_t mod, unsigned int m, unsigned int k,
		    unsigned int s)
{
	struct axon_sqe q = { 0 };
	uint32_t off = NAME_OFF + s * (uint32_t)SLOT;

	snprintf((char *)r->data + off, SLOT, "m%uk%05u", m, k);
	axon_prep_obj(&q, AXON_OP_MODULE_GET_FUNC, mod, 0, 0);
	q.obj.data_off = off;
	q.obj.data_len = (uint32_t)SLOT;
	q.user_data = (uint64_t)s + 1;
	{
		struct axon_sqe *sqe = axon_get_sqe(r);

		if (!sqe)
			return -EBUSY;
		*sqe = q;
	}
	return 0;
}

/* Keeps up to depth lookups in flight until told to stop (or, with all
 * set, until every kernel of every module was asked once). */
static int lookup_loop(struct axon_ring *r, const uint64_t *mods, unsigned int depth, bool all)
{
	uint64_t next = 0, total = (uint64_t)MODULES * KERNELS, inflight = 0;
	unsigned int s;

	for (;;) {
		const struct axon_cqe *cqe;

		while (inflight < depth && !(all && next >= total) && !atomic_load(&stop)) {
			unsigned int m = (unsigned int)((next / KERNELS) % MODULES);
			unsigned int k = (unsigned int)(next % KERNELS);

			s = (unsigned int)(next % depth);
			if (post_get(r, mods[m], m, k, s))
				break;
			next++;
			inflight++;
		}
		if (axon_submit(r) < 0)
			return -1;
		if (!inflight)
			return 0;
		if (axon_wait_cqe(r, &cqe, H_MS(60000) * 1000000ull))
			return h_fail("attacker: no completion");
		if (cqe->res != CUDA_SUCCESS)
			return h_fail("attacker: GET_FUNC res %d", cqe->res);
		axon_cqe_seen(r);
		inflight--;
		atomic_fetch_add(&lookups, 1);
	}
}

static void *attacker(void *arg)
{
	struct axon_params p = { .data_size = 64ull << 20 };
	struct axon_ring r;
	uint64_t ctx, mods[MODULES];
	char err[256];
	unsigned int m;

	(void)arg;
	if (axon_connect(h_daemon.addr, &p, &r, err, sizeof(err))) {
		h_fail("attacker: connect: %s", err);
		atomic_store(&attack_failed, 1);
		goto out;
	}
	if (h_ring_ctx_create(&r, &ctx, NULL)) {
		atomic_store(&attack_failed, 2);
		goto close;
	}
	for (m = 0; m < MODULES; m++) {
		struct axon_sqe s = { 0 };
		struct axon_cqe cqe;

		axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
		s.obj.data_len = make_ptx((char *)r.data, NAME_OFF - 1, m);
		if (h_ring_sync(&r, &s, &cqe, H_MS(60000)) || cqe.res) {
			h_fail("attacker: module %u: res %d", m, cqe.res);
			atomic_store(&attack_failed, 3);
			goto close;
		}
		mods[m] = cqe.aux[0];
	}
	/* Every function, once: the client's table fills. */
	if (lookup_loop(&r, mods, r.params.sq_entries, true)) {
		atomic_store(&attack_failed, 4);
		goto close;
	}
	h_note("attacker: %u functions", MODULES * KERNELS);
	atomic_store(&ready, true);
	if (lookup_loop(&r, mods, r.params.sq_entries, false))
		atomic_store(&attack_failed, 5);
close:
	axon_close(&r);
out:
	atomic_store(&ready, true);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(many_functions)
{
	static uint64_t lat[1 << 16];
	struct axon_ring r;
	pthread_t t;
	uint64_t start, n = 0, before;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, attacker, NULL), 0);
	/* Getting 131 072 functions took minutes without the fix. */
	start = h_now_ms();
	while (!atomic_load(&ready) && h_now_ms() - start < (uint64_t)H_MS(60000))
		h_poll_pause();
	if (!atomic_load(&ready)) {
		atomic_store(&stop, true);
		ck_abort_msg("the attacker's 131072 functions not ready after %d ms", H_MS(60000));
	}
	ck_assert_msg(!atomic_load(&attack_failed), "the attacker failed (%d)",
		      atomic_load(&attack_failed));
	h_note("the attacker's functions took %llu ms", (unsigned long long)(h_now_ms() - start));
	before = atomic_load(&lookups);
	start = h_now_ms();
	while (h_now_ms() - start < ATTACK_MS && n < sizeof(lat) / sizeof(lat[0])) {
		struct axon_sqe s = { .opcode = AXON_OP_NOP };
		uint64_t t0 = h_now_ms();

		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_SUCCESS);
		lat[n++] = h_now_ms() - t0;
	}
	atomic_store(&stop, true);
	pthread_join(t, NULL);
	ck_assert_msg(!atomic_load(&attack_failed), "the attacker failed (%d)",
		      atomic_load(&attack_failed));
	qsort(lat, n, sizeof(lat[0]), cmp_u64);
	h_note("bystander: %llu NOPs against %llu lookups: median %llu ms, slowest %llu ms",
	       (unsigned long long)n, (unsigned long long)(atomic_load(&lookups) - before),
	       (unsigned long long)lat[n / 2], (unsigned long long)lat[n - 1]);
	ck_assert_msg(atomic_load(&lookups) - before >= 1000,
		      "the attacker made only %llu lookups",
		      (unsigned long long)(atomic_load(&lookups) - before));
	ck_assert_msg(lat[n / 2] < MAX_MEDIAN_MS, "bystander's median NOP %llu ms",
		      (unsigned long long)lat[n / 2]);
	axon_close(&r);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(20000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, many_functions);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-func-lookup", "1G", NULL, add, 150);
}
