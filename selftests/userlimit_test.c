// SPDX-License-Identifier: GPL-2.0
/*
 * What one user can make the kernel hold: at most max_user_clients open
 * clients and max_user_region_bytes of region memory (CAP_SYS_RESOURCE
 * is exempt), and a client the daemon refused or disconnected gives its
 * region back at once, not at close; but its bytes count against the user
 * for as long as a mapping still holds its pages.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define NOBODY	65534

static int as_nobody(void)
{
	return setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY);
}

static uint64_t region_bytes(void)
{
	char all[4096], *p;

	if (read_file("/proc/axon/stats", all, sizeof(all)) <= 0)
		return ~0ULL;
	p = strstr(all, "\nregion_bytes ");
	return p ? strtoull(p + 14, NULL, 10) : ~0ULL;
}

/* An unprivileged user gets max_user_clients fds, then EMFILE. */
TEST(clients_per_user)
{
	pid_t pid;
	int st;

	ASSERT_EQ(0, set_param("max_user_clients", "4"));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct tclient c[5];
		int i;

		if (as_nobody())
			_exit(100);
		for (i = 0; i < 4; i++)
			if (tclient_open(&c[i]))
				_exit(10 + i);
		if (tclient_open(&c[4]) != -EMFILE)
			_exit(20);
		/* a closed one makes room */
		tclient_close(&c[0]);
		if (tclient_open(&c[0]))
			_exit(21);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* root (CAP_SYS_RESOURCE) is not limited */
	{
		struct tclient c[5];
		int i;

		for (i = 0; i < 5; i++)
			EXPECT_EQ(0, tclient_open(&c[i]));
		for (i = 0; i < 5; i++)
			tclient_close(&c[i]);
	}
	set_param("max_user_clients", "64");
}

/* Region memory per user: the client that would pass it gets EDQUOT. */
TEST(region_bytes_per_user)
{
	pid_t d = fake_daemon_spawn(true);
	pid_t pid;
	int st;

	ASSERT_GT(d, 0);
	ASSERT_EQ(0, set_param("max_user_region_bytes", "3145728"));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct tclient c[3];
		int i;

		if (as_nobody())
			_exit(100);
		if (tclient_open(&c[0]) || tclient_setup(&c[0], 4, 1 << 20))
			_exit(10);
		if (tclient_open(&c[1]) || tclient_setup(&c[1], 4, 1 << 20))
			_exit(11);
		if (tclient_open(&c[2]))
			_exit(12);
		if (tclient_setup(&c[2], 4, 1 << 20) != -EDQUOT)
			_exit(13);
		/*
		 * The room comes back with a closed client, once the daemon
		 * has read its GONE and unmapped it too: its mappings held
		 * the pages until then.
		 */
		tclient_close(&c[0]);
		for (i = 0; i < 200; i++) {
			int ret = tclient_setup(&c[2], 4, 1 << 20);

			if (!ret)
				break;
			if (ret != -EDQUOT)
				_exit(14);
			usleep(10000);
		}
		if (i == 200)
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	set_param("max_user_region_bytes", "268435456");
	fake_daemon_kill(d);
}

/*
 * A client the daemon refuses keeps its fd but not its region: the
 * kernel's region bytes go back to what they were before its SETUP.
 */
TEST(refused_region_freed)
{
	struct tdaemon d;
	struct axon_event ev;
	struct axon_disconnect dc = { 0 };
	uint64_t before, during = 0, after;
	int pfd[2], st, i;
	pid_t kid;
	char x;

	ASSERT_GE(tdaemon_attach(&d), 0);
	before = region_bytes();
	ASSERT_NE(~0ULL, before);
	ASSERT_EQ(0, pipe(pfd));
	kid = fork();
	ASSERT_GE(kid, 0);
	if (kid == 0) {
		struct tclient c;
		int ret;

		close(d.fd);
		close(pfd[0]);
		if (tclient_open(&c))
			_exit(1);
		ret = tclient_setup(&c, 4, 8 << 20);
		x = ret == -EACCES ? 'r' : 'x';
		if (write(pfd[1], &x, 1) != 1)
			_exit(2);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	ASSERT_EQ(AXON_EV_OPEN, ev.events);
	during = region_bytes();
	EXPECT_LE(before + (8 << 20), during);
	dc.client_id = ev.client_id;
	dc.error = -EACCES;
	ASSERT_EQ(0, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
	ASSERT_EQ(1, read(pfd[0], &x, 1));
	EXPECT_EQ('r', x);
	/* the client still has its fd open */
	EXPECT_EQ(0, waitpid(kid, &st, WNOHANG));
	for (i = 0; i < 100 && region_bytes() > before + 16384; i++)
		usleep(10000);
	after = region_bytes();
	/* at most its two header pages stay, for poll and fdinfo */
	EXPECT_GE(before + 2 * 4096, after);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	close(pfd[0]);
	tdaemon_close(&d);
}

/*
 * Waits for the next byte the child writes on @rfd, accepting every client
 * that asks meanwhile; *last gets the id of the last one. 0 on timeout.
 */
static char next_msg(struct tdaemon *d, int rfd, uint64_t *last)
{
	struct pollfd pfd[2] = {
		{ .fd = d->fd, .events = POLLIN },
		{ .fd = rfd, .events = POLLIN },
	};
	struct axon_event ev;
	char x;
	int i;

	for (i = 0; i < 100; i++) {
		if (poll(pfd, 2, 100) < 0)
			return 0;
		if (pfd[1].revents)
			return read(rfd, &x, 1) == 1 ? x : 0;
		if (pfd[0].revents && tdaemon_event(d, &ev, 0) == 1 &&
		    (ev.events & AXON_EV_OPEN) && !(ev.events & AXON_EV_GONE)) {
			*last = ev.client_id;
			if (tdaemon_accept(d, ev.client_id))
				return 0;
		}
	}
	return 0;
}

/*
 * A disconnected client is retired, but a mapping it keeps (its fd closed,
 * the vmas left) still holds its pages: those bytes keep counting against
 * the user, so that disconnects cannot pile up unbounded region memory.
 * Once unmapped they come back.
 */
TEST(disconnected_mapping_counts)
{
	struct axon_disconnect dc = { .error = -ECONNABORTED };
	struct tdaemon d;
	uint64_t id = 0;
	int down[2], up[2], st, i;
	pid_t kid;
	char x;

	ASSERT_GE(tdaemon_attach(&d), 0);
	ASSERT_EQ(0, set_param("max_user_region_bytes", "3145728"));
	ASSERT_EQ(0, pipe(down));
	ASSERT_EQ(0, pipe(up));
	kid = fork();
	ASSERT_GE(kid, 0);
	if (kid == 0) {
		struct tclient c[3];
		int ret;

		close(d.fd);
		close(down[1]);
		close(up[0]);
		if (as_nobody())
			_exit(100);
		for (i = 0; i < 2; i++) {
			if (tclient_open(&c[i]) || tclient_setup(&c[i], 4, 1 << 20))
				_exit(10 + i);
			x = 'm';
			if (write(up[1], &x, 1) != 1 || read(down[0], &x, 1) != 1)
				_exit(20);
			/* disconnected: close the fd, keep the mappings */
			close(c[i].fd);
			c[i].fd = -1;
		}
		if (tclient_open(&c[2]))
			_exit(12);
		ret = tclient_setup(&c[2], 4, 1 << 20);
		x = ret == -EDQUOT ? 'q' : ret ? 'e' : 'm';
		if (write(up[1], &x, 1) != 1)
			_exit(21);
		if (x != 'q')
			_exit(22);
		/* unmapped, the two dead regions give their room back */
		tclient_close(&c[0]);
		tclient_close(&c[1]);
		ret = tclient_setup(&c[2], 4, 1 << 20);
		x = ret ? 'e' : 'm';
		if (write(up[1], &x, 1) != 1)
			_exit(23);
		pause();
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ('m', next_msg(&d, up[0], &id));
		dc.client_id = id;
		ASSERT_EQ(0, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
		x = 'd';
		ASSERT_EQ(1, write(down[1], &x, 1));
	}
	/* main: 'm' here, the two still-mapped regions no longer counted */
	EXPECT_EQ('q', next_msg(&d, up[0], &id));
	EXPECT_EQ('m', next_msg(&d, up[0], &id));
	kill(kid, SIGKILL);
	ASSERT_EQ(kid, waitpid(kid, &st, 0));
	close(down[1]);
	close(up[0]);
	set_param("max_user_region_bytes", "268435456");
	tdaemon_close(&d);
}

TEST_HARNESS_MAIN
