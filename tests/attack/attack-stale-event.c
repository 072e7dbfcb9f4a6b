// SPDX-License-Identifier: MIT
/*
 * attack-stale-event: a stale epoll event on a reused descriptor. Once, an
 * event named a connection that had not said hello by its bare descriptor.
 * With one epoll batch holding, in this order,
 *
 *   1. a new connection while axond is at its descriptor limit (the accept
 *      path sheds the oldest silent connection, closing its descriptor X),
 *   2. an attacker's pinned-memory message (its memfd is received as X),
 *   3. bytes on that silent connection (its queued event still said "X"),
 *
 * the third event ran the hello on X and closed the attacker's stashed
 * memfd; the victim's next region memfd became X, and the attacker's
 * HOSTMEM_REGISTER mapped the victim's rings and data area.
 *
 * The batch is built exactly: axond is stopped (SIGSTOP) while the three
 * become ready, so epoll hands them over together and in that order. Then a
 * victim connects, and the attacker registers its memfd and reads the region
 * back through the device: it must get its own bytes (before the fix the
 * registration failed or showed the victim's), and the victim's data area
 * must be untouched.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define REGION		(64 * 1024)
#define NSILENT		4
#define COOKIE		0x5eed

/* The daemon's descriptor count has reached want (it accepted). */
static int wait_fds(pid_t pid, int want)
{
	uint64_t end = h_now_ms() + H_MS(3000);

	while (h_now_ms() < end) {
		if (a_proc_fds(pid) >= want)
			return 0;
		h_poll_pause();
	}
	return h_fail("axond has %d descriptors, want %d", a_proc_fds(pid), want);
}

static int set_nofile(pid_t pid, rlim_t n)
{
	struct rlimit rl = { .rlim_cur = n, .rlim_max = n > 4096 ? n : 4096 };
	struct rlimit old;

	if (prlimit(pid, RLIMIT_NOFILE, NULL, &old) == 0)
		rl.rlim_max = old.rlim_max;
	if (prlimit(pid, RLIMIT_NOFILE, &rl, NULL) < 0)
		return h_fail("prlimit: %s", strerror(errno));
	return 0;
}

/*
 * A sealed memfd of REGION bytes filled with pattern, mapped at *map. The
 * address is fixed, above the PIE and heap and far below the mmap base, so
 * that axond's own mappings (which move with ASLR) are never there and the
 * one REGISTER the attack gets is not answered ALREADY_MAPPED.
 */
static int pattern_memfd(unsigned char pattern, unsigned char **map)
{
	int fd = memfd_create("attacker", MFD_ALLOW_SEALING | MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, REGION), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	*map = mmap((void *)(uintptr_t)(0x5b0000000000ULL + (uint64_t)pattern * REGION), REGION,
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	ck_assert(*map != MAP_FAILED);
	memset(*map, pattern, REGION);
	return fd;
}

START_TEST(stale_pending_event)
{
	const struct axon_hostmem_fd msg = {
		.magic = AXON_MAGIC, .kind = AXON_HOSTMEM_FD_KIND, .cookie = COOKIE,
	};
	pid_t pid = h_daemon.pid;
	struct axon_ring a, v;
	struct axon_sqe s = { 0 };
	uint64_t ctx, stream, dev, a0 = 0;
	unsigned char *map, *back;
	int silent[NSILENT], fresh, memfd, base, limit, i;
	int32_t res;

	ck_assert_int_eq(h_ring_connect(&a, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&a, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&a, ctx, 0, REGION, &dev), 0);
	memfd = pattern_memfd(0xa5, &map);

	/* axond at its descriptor limit with NSILENT silent connections. */
	base = a_proc_fds(pid);
	ck_assert_int_gt(base, 0);
	limit = a_proc_fd_limit(pid, NSILENT);
	ck_assert_int_gt(limit, 0);
	ck_assert_int_eq(set_nofile(pid, (rlim_t)limit), 0);
	for (i = 0; i < NSILENT; i++) {
		silent[i] = a_connect_raw(&h_daemon);
		ck_assert_int_ge(silent[i], 0);
		ck_assert_int_eq(wait_fds(pid, base + i + 1), 0);
	}
	/* Exactly at the limit with nobody else waiting, nothing is shed
	 * (accept's EMFILE with an empty backlog once closed silent[0]). */
	usleep(100 * 1000);
	ck_assert_int_eq(a_proc_fds(pid), base + NSILENT);

	/* The batch, in order: listener, the attacker's memfd, the oldest
	 * silent connection. */
	ck_assert_int_eq(a_stop(pid), 0);
	fresh = a_connect_raw(&h_daemon);
	ck_assert_int_ge(fresh, 0);
	ck_assert_int_eq(a_send_fd(a.sock_fd, &msg, sizeof(msg), memfd), 0);
	ck_assert_int_eq(send(silent[0], "x", 1, MSG_NOSIGNAL), 1);
	ck_assert_int_eq(kill(pid, SIGCONT), 0);

	/* Room again; a victim connects (its region memfd takes the lowest
	 * free number) and fills its data area. */
	ck_assert_int_eq(set_nofile(pid, 4096), 0);
	ck_assert_int_eq(h_ring_connect(&v, &h_daemon), 0);
	memset(v.data, 0x3c, 4096);

	/* The attacker registers what it sent and reads it back through the
	 * device: its own bytes, nobody else's. */
	axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, COOKIE, (uint64_t)(uintptr_t)map, REGION);
	s.obj.data_off = 0;
	s.obj.data_len = sizeof(struct axon_hostmem_info);
	res = h_ring_res(&a, &s, &a0, NULL);
	ck_assert_msg(res == CUDA_SUCCESS,
		      "HOSTMEM_REGISTER of the attacker's own memfd: res %d (its descriptor was "
		      "closed under the stash by a stale event)", res);
	memset(&s, 0, sizeof(s));
	axon_prep_copy(&s, AXON_OP_MEMCPY_HTOD, stream, dev, (uint64_t)(uintptr_t)map, REGION);
	s.copy.host_flags = AXON_COPY_F_HOSTMEM;
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);
	memset(a.data, 0, REGION);
	memset(&s, 0, sizeof(s));
	axon_prep_copy(&s, AXON_OP_MEMCPY_DTOH, stream, 0, dev, REGION);
	ck_assert_int_eq(h_ring_res(&a, &s, NULL, NULL), CUDA_SUCCESS);
	back = a.data;
	for (i = 0; i < REGION; i++)
		ck_assert_msg(back[i] == 0xa5, "byte %d of the attacker's region reads %#x", i,
			      back[i]);
	for (i = 0; i < 4096; i++)
		ck_assert_msg(v.data[i] == 0x3c, "the victim's data area changed at %d", i);

	/* Both still served; the daemon lives. */
	memset(&s, 0, sizeof(s));
	axon_prep_nop(&s);
	ck_assert_int_eq(h_ring_res(&v, &s, NULL, NULL), CUDA_SUCCESS);
	for (i = 0; i < NSILENT; i++)
		close(silent[i]);
	close(fresh);
	axon_close(&v);
	axon_close(&a);
	munmap(map, REGION);
	close(memfd);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, stale_pending_event);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-stale-event", "1G", NULL, add, 60);
}
