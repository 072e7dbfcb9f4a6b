// SPDX-License-Identifier: MIT
/*
 * attack-modload-stall: one client's module loads must not stall the
 * others. axond copied, decompressed and parsed each image on its single
 * dispatcher thread, so while a client loaded a large image every other
 * client waited: a bystander's NOP took as long as the whole load (58 s for
 * a 1 GiB image). Loads now run on loader threads and complete later.
 *
 * The attacker loads a legal 48 MiB PTX image that takes the parser long
 * (module-scope words it skips one by one), three times; meanwhile a
 * bystander's synchronous NOPs, measured round trip by round trip, stay
 * under 200 ms, or a quarter of the shortest load when loads take longer
 * than 800 ms (sanitizers, a loaded 2-core machine). Without the fix a
 * NOP waits for about a whole load (a second plain on a busy machine).
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

#define IMAGE_BYTES	(48u << 20)
#define LOADS		3
#define MAX_NOP_MS	200

static atomic_bool attack_done;
static atomic_int attack_failed;
static uint64_t load_ms[LOADS], load_end[LOADS], t_begin;

/* PTX text the parser walks token by token: legal, no kernels. */
static uint32_t make_slow_ptx(unsigned char *p, uint32_t len)
{
	static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
	uint32_t i, n = len - 1;

	memcpy(p, head, sizeof(head) - 1);
	for (i = sizeof(head) - 1; i + 2 <= n; i += 2) {
		p[i] = 'x';
		p[i + 1] = ' ';
	}
	for (; i < n; i++)
		p[i] = '\n';
	p[n] = 0;
	return len;
}

static void *attacker(void *arg)
{
	struct axon_ring r;
	uint64_t ctx;
	char err[256];
	int i;

	(void)arg;
	if (axon_connect(h_daemon.addr, NULL, &r, err, sizeof(err))) {
		h_fail("attacker: connect: %s", err);
		atomic_store(&attack_failed, 1);
		goto out;
	}
	if (h_ring_ctx_create(&r, &ctx, NULL) || r.data_size < IMAGE_BYTES) {
		atomic_store(&attack_failed, 2);
		goto close;
	}
	for (i = 0; i < LOADS; i++) {
		struct axon_sqe s = { 0 };
		struct axon_cqe cqe;
		uint64_t t0;
		int ret;

		axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
		s.obj.data_off = 0;
		s.obj.data_len = make_slow_ptx(r.data, IMAGE_BYTES);
		t0 = h_now_ms();
		ret = h_ring_sync(&r, &s, &cqe, H_MS(60000));
		load_ms[i] = h_now_ms() - t0;
		load_end[i] = h_now_ms() - t_begin;
		if (ret || cqe.res) {
			h_fail("attacker: load %d: %s, res %d", i, strerror(-ret), cqe.res);
			atomic_store(&attack_failed, 3);
			break;
		}
		memset(&s, 0, sizeof(s));
		axon_prep_obj(&s, AXON_OP_MODULE_UNLOAD, cqe.aux[0], 0, 0);
		if (h_ring_res(&r, &s, NULL, NULL) != CUDA_SUCCESS)
			atomic_store(&attack_failed, 4);
	}
close:
	axon_close(&r);
out:
	atomic_store(&attack_done, true);
	return NULL;
}

/*
 * The slowest bystander NOP allowed: 200 ms, or a quarter of the shortest
 * load where loads are slower than 800 ms (sanitizers, a machine loaded by
 * other work, whose scheduling delays then grow too). A dispatcher that
 * loads makes a NOP wait for about a whole load, so this still fails it.
 */
static uint64_t worst_allowed(void)
{
	uint64_t shortest = UINT64_MAX;
	int i;

	for (i = 0; i < LOADS; i++)
		if (load_ms[i] && load_ms[i] < shortest)
			shortest = load_ms[i];
	if (shortest == UINT64_MAX)
		return MAX_NOP_MS;
	return shortest / 4 > MAX_NOP_MS ? shortest / 4 : MAX_NOP_MS;
}

START_TEST(bystander_not_stalled)
{
	struct axon_ring r;
	pthread_t t;
	uint64_t worst = 0, n = 0;
	int i;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	t_begin = h_now_ms();
	ck_assert_int_eq(pthread_create(&t, NULL, attacker, NULL), 0);
	while (!atomic_load(&attack_done)) {
		struct axon_sqe s = { .opcode = AXON_OP_NOP };
		uint64_t t0 = h_now_ms(), dt;
		int32_t res = h_ring_res(&r, &s, NULL, NULL);

		dt = h_now_ms() - t0;
		ck_assert_msg(res == CUDA_SUCCESS, "bystander NOP: res %d", res);
		if (dt > worst)
			worst = dt;
		if (dt >= MAX_NOP_MS / 2)
			h_note("a slow bystander NOP: %llu ms, ending at %llu ms",
			       (unsigned long long)dt, (unsigned long long)(h_now_ms() - t_begin));
		n++;
		h_poll_pause();
	}
	pthread_join(t, NULL);
	ck_assert_msg(!atomic_load(&attack_failed), "the attacker failed (%d)",
		      atomic_load(&attack_failed));
	for (i = 0; i < LOADS; i++)
		h_note("attacker's load %d: %llu ms, ending at %llu ms", i,
		       (unsigned long long)load_ms[i], (unsigned long long)load_end[i]);
	h_note("bystander: %llu NOPs during the loads, the slowest %llu ms",
	       (unsigned long long)n, (unsigned long long)worst);
	ck_assert_msg(n >= LOADS, "only %llu bystander NOPs", (unsigned long long)n);
	ck_assert_msg(worst < worst_allowed(),
		      "a bystander's NOP took %llu ms while another client loaded modules (bound %llu ms)",
		      (unsigned long long)worst, (unsigned long long)worst_allowed());
	axon_close(&r);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, bystander_not_stalled);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-modload-stall", "1G", NULL, add, 120);
}
