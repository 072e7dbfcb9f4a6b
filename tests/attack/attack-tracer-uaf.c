// SPDX-License-Identifier: MIT
/*
 * attack-tracer-uaf: a traced client and its tracers hanging up in one
 * epoll batch. The client's hang-up ended its tracers (client_disconnect ->
 * trace_client_gone -> tracer_free), then the tracers' own hang-ups, already
 * in the batch, named the freed tracers by address and freed them again
 * (heap use-after-free and double free in axond/trace.c; the stale struct
 * was used for close() and a counter): the plain daemon died after two
 * rounds. Here one process holds a client and tracers of it and is
 * SIGKILLed, so all of its sockets close at once, round after round; the
 * daemon must survive every round (ASan: no report), be left with no
 * client and no tracer, keep serving, and exit 0.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack.h"

#define ROUNDS		40
#define TRACERS		3	/* per round, on the one client */

/* The child: a client, then TRACERS tracers of it; says ready, waits to
 * be killed. Its exit closes the client's socket first (lowest number),
 * then the tracers'. */
static void __attribute__((noreturn)) holder(int ready)
{
	struct axon_ring r;
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (h_ring_connect(&r, &h_daemon))
		_exit(10);
	for (i = 0; i < TRACERS; i++) {
		int t = a_connect_raw(&h_daemon);

		if (t < 0 || a_hello(t, AXON_HELLO_TRACE, r.params.client_id, 0, NULL,
				     H_MS(5000)) != 0)
			_exit(11);
	}
	if (write(ready, "k", 1) != 1)
		_exit(12);
	for (;;)
		pause();
}

static bool no_tracers(const struct json *doc, void *arg)
{
	(void)arg;
	return json_u64(json_path(doc, "daemon.tracers"), UINT64_MAX) == 0 &&
	       h_stats_nclients(doc) == 0;
}

START_TEST(hangups_in_one_batch)
{
	int round;

	for (round = 0; round < ROUNDS; round++) {
		int p[2], status;
		char c;
		pid_t pid;

		ck_assert_int_eq(pipe(p), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			close(p[0]);
			holder(p[1]);
		}
		close(p[1]);
		ck_assert_msg(read(p[0], &c, 1) == 1, "round %d: the holder did not get ready",
			      round);
		close(p[0]);
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status), "round %d: holder exited %d", round,
			      WEXITSTATUS(status));
		ck_assert_msg(h_daemon_running(&h_daemon), "round %d: axond died", round);
	}
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_stats(&h_daemon, no_tracers, NULL, H_MS(10000),
				      "no client and no tracer left"), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	/* And it still serves: a client and a tracer of it. */
	{
		struct axon_ring r;
		int t;

		ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
		t = a_connect_raw(&h_daemon);
		ck_assert_int_ge(t, 0);
		ck_assert_int_eq(a_hello(t, AXON_HELLO_TRACE, r.params.client_id, 0, NULL,
					 H_MS(5000)), 0);
		close(t);
		axon_close(&r);
	}
	ck_assert_int_eq(h_wait_stats(&h_daemon, no_tracers, NULL, H_MS(10000),
				      "no client and no tracer left"), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, hangups_in_one_batch);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-tracer-uaf", "1G", NULL, add, 120);
}
