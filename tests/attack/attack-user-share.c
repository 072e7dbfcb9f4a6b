// SPDX-License-Identifier: MIT
/*
 * attack-user-share: one user taking every connection and client slot.
 * Connections that had not said hello were bounded only in all (256), so a
 * user who kept 256 silent connections open, re-opened as they expired,
 * locked every other user out (0 of 120 served); --max-clients was one count
 * for all users. Now each uid has a share of both (--max-pending-per-user,
 * --max-clients-per-user) and a newcomer of another uid takes a place from
 * the user holding the most.
 *
 * The attacker is uid 65534 (a child that drops root); the others connect as
 * root. With --max-clients-per-user=4:
 *   silent    the attacker opens 300 silent connections, re-opening each
 *             one that is closed, for 3 s; meanwhile root's clients connect
 *             and are served, every one; the attacker never holds more than
 *             its share (daemon.pending) and its refusals are counted;
 *   clients   the attacker's fifth client is refused with -EBUSY naming the
 *             limit; root's clients are not.
 */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define NOBODY	65534

static void become_nobody(void)
{
	gid_t g = NOBODY;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* The test's directory (mkdtemp: 0700) must let it reach the socket. */
	if (chmod(h_daemon.dir, 0711))
		_exit(2);
	if (setgroups(1, &g) || setgid(NOBODY) || setuid(NOBODY))
		_exit(3);
}

/* The attacker: keeps n silent connections open for ms milliseconds. */
static pid_t silent_flood(int n, int ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fds[512], i;
		uint64_t end;

		become_nobody();
		for (i = 0; i < n; i++)
			fds[i] = a_connect_raw(&h_daemon);
		end = h_now_ms() + (uint64_t)ms;
		while (h_now_ms() < end) {
			for (i = 0; i < n; i++) {
				struct pollfd p = { .fd = fds[i], .events = POLLIN };

				/* Closed by the daemon (a hang-up): open again. */
				if (fds[i] < 0 || (poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLIN)))) {
					if (fds[i] >= 0)
						close(fds[i]);
					fds[i] = a_connect_raw(&h_daemon);
				}
			}
			usleep(1000);
		}
		_exit(0);
	}
	return pid;
}

static uint64_t daemon_u64(const char *key)
{
	struct json *doc = h_stats(&h_daemon);
	uint64_t v;

	ck_assert_ptr_nonnull(doc);
	v = json_u64(json_path(doc, key), UINT64_MAX);
	json_free(doc);
	return v;
}

START_TEST(silent)
{
	pid_t att;
	int served = 0, tries = 0;
	uint64_t end;

	att = silent_flood(300, H_MS(3000));
	usleep(300000);	/* the flood is in place */
	end = h_now_ms() + H_MS(2000);
	while (h_now_ms() < end) {
		struct axon_ring r;
		struct axon_sqe s = { 0 };

		tries++;
		if (h_ring_connect(&r, &h_daemon) == 0) {
			axon_prep_nop(&s);
			if (h_ring_res(&r, &s, NULL, NULL) == CUDA_SUCCESS)
				served++;
			axon_close(&r);
		}
		ck_assert_uint_le(daemon_u64("daemon.pending"), 256);
	}
	ck_assert_int_eq(h_wait_child(att, H_MS(10000), "attacker"), 0);
	h_note("root: %d of %d clients served during the flood; refused for the share: %llu",
	       served, tries, (unsigned long long)daemon_u64("daemon.pending_refused"));
	ck_assert_int_eq(served, tries);
	ck_assert_uint_gt(daemon_u64("daemon.pending_refused"), 0);
}
END_TEST

START_TEST(clients)
{
	int pipefd[2];
	pid_t att;
	char msg[256] = "";
	struct axon_ring mine[4];
	int i;

	ck_assert_int_eq(pipe(pipefd), 0);
	att = fork();
	if (att == 0) {
		struct axon_ring r[5];
		char err[256];
		int ret;

		close(pipefd[0]);
		become_nobody();
		for (i = 0; i < 4; i++)
			if (h_ring_connect(&r[i], &h_daemon))
				_exit(4);
		ret = axon_connect(h_daemon.addr, NULL, &r[4], err, sizeof(err));
		(void)!write(pipefd[1], err, strlen(err) + 1);
		_exit(ret == -EBUSY ? 0 : 5);
	}
	close(pipefd[1]);
	ck_assert_int_eq(h_wait_child(att, H_MS(10000), "attacker"), 0);
	(void)!read(pipefd[0], msg, sizeof(msg) - 1);
	close(pipefd[0]);
	h_note("the attacker's fifth client: %s", msg);
	ck_assert_msg(strstr(msg, "--max-clients-per-user"), "refusal says: %s", msg);
	/* Root's four are served. */
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(h_ring_connect(&mine[i], &h_daemon), 0);
	for (i = 0; i < 4; i++)
		axon_close(&mine[i]);
	ck_assert_uint_ge(daemon_u64("daemon.clients_refused_user"), 1);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, silent);
	tcase_add_test(tc, clients);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = { "--max-clients-per-user=4", NULL };

	h_init(argc, argv);
	if (geteuid() != 0)
		h_skip("needs root to run the attacker as another uid");
	return h_check_main("attack-user-share", "1G", extra, add, 60);
}
