// SPDX-License-Identifier: GPL-2.0
/*
 * Races: client processes open, set up, submit, wait and close in a loop
 * while the daemon is killed and restarted underneath them, and the /proc
 * and netlink readers walk the client table. Meant for the debug kernel
 * (KASAN, lockdep, kmemleak); on any kernel it checks that only the
 * documented errors come back and nothing hangs.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define RUN_NS		(3 * NSEC_PER_SEC)
#define NCLIENTS	6

/* Returns 0, or the unexpected error that ended it. */
static int client_loop(unsigned int seed)
{
	uint64_t end = now_ns() + RUN_NS;
	struct axon_cqe cqe;
	struct tclient c;
	int ret;

	srand(seed);
	while (now_ns() < end) {
		int i, n = 1 + rand() % 8;

		if (tclient_open(&c))
			return 100;
		ret = tclient_setup(&c, 8, 4096);
		if (ret == -ECONNRESET || ret == -EINTR) {
			tclient_close(&c);
			continue;
		}
		if (ret)
			return 101;
		for (i = 0; i < n && !tclient_queue(&c, i, i, 0, 0); i++)
			;
		ret = tclient_submit(&c, i);
		while (!ret && n-- > 0)
			ret = tclient_wait_cqe(&c, &cqe, 500);
		if (ret && ret != -ECONNRESET && ret != -ETIME)
			return 102;
		/*
		 * Sometimes close the fd while still mapped: the mappings keep
		 * the client alive (Documentation/kmod.rst §7) and the last
		 * munmap releases it. They must go now, not at exit: every
		 * client left mapped stays alive for the rest of the run and
		 * each restarted daemon adopts it again.
		 */
		if (rand() % 4) {
			tclient_close(&c);
		} else {
			close(c.fd);
			c.fd = -1;
			tclient_close(&c);
		}
	}
	return 0;
}

static void reader_loop(void)
{
	uint64_t end = now_ns() + RUN_NS;
	char *buf = malloc(1 << 16);

	while (now_ns() < end) {
		read_file("/proc/axon/clients", buf, 1 << 16);
		read_file("/proc/axon/stats", buf, 1 << 16);
		read_file("/proc/axon/cgroups", buf, 1 << 16);
	}
	free(buf);
}

TEST(daemon_churn)
{
	pid_t kids[NCLIENTS + 1], d = 0;
	uint64_t end;
	int i, st;

	ASSERT_EQ(0, set_param("wait_for_daemon", "1"));
	for (i = 0; i < NCLIENTS; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			_exit(client_loop(i + 1));
		}
	}
	kids[NCLIENTS] = fork();
	if (kids[NCLIENTS] == 0) {
		reader_loop();
		_exit(0);
	}
	end = now_ns() + RUN_NS + NSEC_PER_SEC / 2;
	while (now_ns() < end) {
		d = fake_daemon_spawn(true);
		ASSERT_GT(d, 0);
		usleep(150000 + rand() % 200000);
		fake_daemon_kill(d);
		usleep(rand() % 50000);
	}
	/* a last daemon lets everyone finish */
	d = fake_daemon_spawn(true);
	ASSERT_GT(d, 0);
	for (i = 0; i <= NCLIENTS; i++) {
		ASSERT_EQ(kids[i], waitpid(kids[i], &st, 0));
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
	fake_daemon_kill(d);
	set_param("wait_for_daemon", "0");
}

/* Clients killed at random points of their life. */
TEST(client_kills)
{
	pid_t d = fake_daemon_spawn(true);
	int i;

	ASSERT_GT(d, 0);
	for (i = 0; i < 30; i++) {
		pid_t k = fork();

		if (k == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			client_loop(100 + i);
			_exit(0);
		}
		usleep(rand() % 30000);
		kill(k, SIGKILL);
		waitpid(k, NULL, 0);
	}
	fake_daemon_kill(d);
}

TEST_HARNESS_MAIN
