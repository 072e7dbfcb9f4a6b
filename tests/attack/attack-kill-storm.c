// SPDX-License-Identifier: MIT
/*
 * attack-kill-storm: 600 clients SIGKILLed under load. Eight libaxon
 * clients at a time create a context and streams, map device memory and
 * flood deferred memsets, device copies and event records; each is killed
 * at a random moment of its life (before its hello is answered, in the
 * middle of its set-up, while its ring is full) and replaced at once. A
 * bystander checks a round trip of data all along. Afterwards the daemon
 * holds nothing (no client, no memory used or reserved), its descriptors
 * are back to the baseline taken after a warm-up and its resident memory
 * within a small margin of it, and it still serves and exits 0.
 * AXON_TEST_SEED repeats a run's random choices.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define KILLS		600
#define AT_ONCE		8
/* Plain builds: back to the baseline but for a little. ASan's allocator
 * keeps what was freed in its own caches whatever the daemon does; there
 * LeakSanitizer's check at axond's exit is what says nothing is held. */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_SLACK_KB	(256 * 1024)
#else
#define RSS_SLACK_KB	(8 * 1024)
#endif

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	uint64_t x = rnd_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rnd_state = x;
}

/* A client's whole life: set up, then flood until killed. */
static void __attribute__((noreturn)) victim(void)
{
	struct axon_ring r;
	struct axon_sqe s;
	uint64_t ctx, stream, buf, ev = 0, a0 = 0, n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (h_ring_connect(&r, &h_daemon))
		_exit(1);
	if (h_ring_ctx_create(&r, &ctx, &stream) || h_ring_map(&r, ctx, 0, 4 << 20, &buf))
		_exit(1);
	memset(&s, 0, sizeof(s));
	axon_prep_obj(&s, AXON_OP_EVENT_CREATE, ctx, 0, 0);
	if (h_ring_res(&r, &s, &a0, NULL) == CUDA_SUCCESS)
		ev = a0;
	for (n = 0;; n++) {
		memset(&s, 0, sizeof(s));
		s.flags = AXON_SQE_F_DEFERRED;
		s.stream = stream;
		switch (n % 3) {
		case 0:
			s.opcode = AXON_OP_MEMSET;
			s.memset.dst = buf;
			s.memset.width = 1 << 20;
			s.memset.height = 1;
			s.memset.value = (uint32_t)n & 0xff;
			s.memset.elem_size = 1;
			break;
		case 1:
			axon_prep_copy(&s, AXON_OP_MEMCPY_DTOD, stream, buf + (2 << 20), buf,
				       1 << 20);
			s.flags = AXON_SQE_F_DEFERRED;
			break;
		default:
			if (!ev)
				continue;
			s.opcode = AXON_OP_EVENT_RECORD;
			s.obj.handle = ev;
			break;
		}
		while (h_ring_post(&r, &s) == -EBUSY)
			axon_submit(&r);
		/* Reap completions now and then so the ring keeps moving. */
		if (n % 64 == 63) {
			memset(&s, 0, sizeof(s));
			axon_prep_nop(&s);
			h_ring_res(&r, &s, NULL, NULL);
		}
	}
}

static pid_t start_victim(void)
{
	pid_t pid = fork();

	if (pid == 0)
		victim();
	return pid;
}

/* A round trip of data through the device for the bystander. */
static void bystander_check(struct axon_ring *r, uint64_t stream, uint64_t buf, unsigned int round)
{
	struct axon_sqe s;
	unsigned int i;

	for (i = 0; i < 4096; i++)
		r->data[i] = (unsigned char)(i + round);
	memset(&s, 0, sizeof(s));
	axon_prep_copy(&s, AXON_OP_MEMCPY_HTOD, stream, buf, 0, 4096);
	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
	memset(r->data, 0, 4096);
	memset(&s, 0, sizeof(s));
	axon_prep_copy(&s, AXON_OP_MEMCPY_DTOH, stream, 0, buf, 4096);
	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
	for (i = 0; i < 4096; i++)
		ck_assert_msg(r->data[i] == (unsigned char)(i + round),
			      "bystander: byte %u wrong in round %u", i, round);
}

START_TEST(kill_storm)
{
	pid_t pid = h_daemon.pid, kids[AT_ONCE];
	struct axon_ring by;
	uint64_t ctx, stream, buf;
	int fds0, fds1, i, k;
	long rss0, rss1;

	rnd_state = getenv("AXON_TEST_SEED") ? strtoull(getenv("AXON_TEST_SEED"), NULL, 0)
					     : (uint64_t)time(NULL) | 1;
	h_note("seed %llu", (unsigned long long)rnd_state);

	/* Warm-up: a few lives and deaths, so the baseline has the region
	 * pool and the allocator at their steady state. */
	for (i = 0; i < AT_ONCE; i++) {
		pid_t p = start_victim();

		usleep(20000);
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
	fds0 = a_proc_fds(pid);
	rss0 = a_proc_rss_kb(pid);

	ck_assert_int_eq(h_ring_connect(&by, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&by, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&by, ctx, 0, 1 << 20, &buf), 0);

	for (i = 0; i < AT_ONCE; i++)
		kids[i] = start_victim();
	for (k = 0; k < KILLS; k++) {
		i = (int)(rnd() % AT_ONCE);
		/* From before its hello to deep in its flood. */
		usleep((useconds_t)(rnd() % (k % 4 ? 3000 : 30000)));
		ck_assert_int_eq(kill(kids[i], SIGKILL), 0);
		ck_assert_int_eq(waitpid(kids[i], NULL, 0), kids[i]);
		kids[i] = start_victim();
		if (k % 50 == 0)
			bystander_check(&by, stream, buf, (unsigned int)k);
		ck_assert_msg(h_daemon_running(&h_daemon), "axond died after %d kills", k);
	}
	for (i = 0; i < AT_ONCE; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	bystander_check(&by, stream, buf, KILLS);
	axon_close(&by);

	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(20000)), 0);
	/* Clients gone from the list are freed once the executor has dropped
	 * their queued work (slow under ASan), and the region pool refills in
	 * the background: wait, bounded. */
	{
		uint64_t end = h_now_ms() + H_MS(30000);

		while (a_proc_fds(pid) > fds0 && h_now_ms() < end)
			usleep(50000);
		/* The last client's memory goes back to the system (trimmed)
		 * when the dispatcher frees it, which may be after its
		 * descriptors closed: wait for that too, with the same bound. */
		while (a_proc_rss_kb(pid) - rss0 >= RSS_SLACK_KB && h_now_ms() < end)
			usleep(50000);
	}
	fds1 = a_proc_fds(pid);
	rss1 = a_proc_rss_kb(pid);
	h_note("%d kills: descriptors %d -> %d, RSS %ld -> %ld KiB", KILLS, fds0, fds1, rss0, rss1);
	ck_assert_msg(fds1 <= fds0, "axond holds %d descriptors, %d before the storm", fds1, fds0);
	ck_assert_msg(rss1 - rss0 < RSS_SLACK_KB, "axond's RSS grew by %ld KiB", rss1 - rss0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, kill_storm);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	a_lean_sanitizer();	/* RSS is compared with a baseline */
	return h_check_main("attack-kill-storm", "4G", NULL, add, 240);
}
