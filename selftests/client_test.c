// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/axon client side: open, SETUP, mmap, ENTER, poll, ring full, the
 * data area both ways, a full round trip through the fake daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

FIXTURE(served) {
	pid_t daemon;
	struct tclient c;
};

FIXTURE_SETUP(served)
{
	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	ASSERT_EQ(0, tclient_open(&self->c));
	ASSERT_EQ(0, tclient_setup(&self->c, 8, 1 << 16));
}

FIXTURE_TEARDOWN(served)
{
	tclient_close(&self->c);
	fake_daemon_kill(self->daemon);
}

/* SETUP returns the socket transport's geometry and the daemon's answer. */
TEST_F(served, setup_geometry)
{
	struct axon_params *p = &self->c.p;

	EXPECT_EQ(8, p->sq_entries);
	EXPECT_EQ(16, p->cq_entries);
	EXPECT_EQ(1 << 16, p->data_size);
	EXPECT_NE(0, p->client_id);
	EXPECT_EQ(0, p->off_client);
	EXPECT_EQ(4096, p->off_daemon);
	EXPECT_EQ(8192, p->off_frontier);
	EXPECT_EQ(AXON_MAX_FRONTIER, p->frontier_entries);
	EXPECT_EQ(8192 + AXON_MAX_FRONTIER * 8, p->off_sqes);
	EXPECT_EQ(p->off_sqes + 4096, p->off_cqes);
	EXPECT_EQ(p->off_cqes + 4096, p->off_data);
	EXPECT_EQ(p->off_data + p->data_size, p->region_size);
	EXPECT_EQ(AXON_FEAT_DEFERRED, p->features);
	EXPECT_EQ(0x7f0000000000ULL, p->va_base);
	EXPECT_EQ(1ULL << 30, p->va_size);
	EXPECT_EQ(1ULL << 20, p->mint_credit);
	/* the daemon page constants were set by the kernel */
	EXPECT_EQ(8, self->c.dp->sq_entries);
	EXPECT_EQ(7, self->c.dp->sq_mask);
	EXPECT_EQ(16, self->c.dp->cq_entries);
	EXPECT_EQ(15, self->c.dp->cq_mask);
	/* a second SETUP is refused */
	EXPECT_EQ(-1, ioctl(self->c.fd, AXON_IOC_SETUP, p));
	EXPECT_EQ(EBUSY, errno);
}

/* SQE -> daemon -> CQE, with a payload in the data area going both ways. */
TEST_F(served, round_trip)
{
	struct tclient *c = &self->c;
	struct axon_cqe cqe;
	unsigned int i, sum = 0;

	for (i = 0; i < 100; i++) {
		c->data[1000 + i] = (unsigned char)i;
		sum += i;
	}
	ASSERT_EQ(0, tclient_queue(c, 0x1234, 41, 1000, 100));
	ASSERT_EQ(0, tclient_submit(c, 1));
	ASSERT_EQ(0, tclient_wait_cqe(c, &cqe, 5000));
	EXPECT_EQ(0x1234, cqe.user_data);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(42, cqe.aux[0]);
	EXPECT_EQ(sum, cqe.aux[1]);
	for (i = 0; i < 100; i++)
		EXPECT_EQ((unsigned char)~i, c->data[1000 + i]);
}

/* 500 round trips, batched, every CQE accounted for. */
TEST_F(served, many)
{
	struct tclient *c = &self->c;
	struct axon_cqe cqe;
	unsigned int done = 0, sent = 0;

	while (done < 500) {
		unsigned int n = 0;

		while (sent < 500 && !tclient_queue(c, sent, sent, 0, 0)) {
			sent++;
			n++;
		}
		if (n)
			ASSERT_EQ(0, tclient_submit(c, n));
		ASSERT_EQ(0, tclient_wait_cqe(c, &cqe, 5000));
		EXPECT_EQ(cqe.user_data + 1, cqe.aux[0]);
		done++;
		while (tclient_peek_cqe(c, &cqe))
			done++;
	}
	EXPECT_EQ(500, sent);
}

/* ENTER: timeout (absolute CLOCK_MONOTONIC), bad arguments, return value. */
TEST_F(served, enter)
{
	struct tclient *c = &self->c;
	struct axon_enter e = { 0 };
	uint64_t t0 = now_ns();

	EXPECT_EQ(-ETIME, tclient_enter(c, 0, 1, AXON_ENTER_GETEVENTS,
					t0 + 50000000ULL));
	EXPECT_GE(now_ns() - t0, 50000000ULL);
	/* deadline already past */
	EXPECT_EQ(-ETIME, tclient_enter(c, 0, 1, AXON_ENTER_GETEVENTS, 1));
	/* min_complete 0 returns at once */
	EXPECT_EQ(0, tclient_enter(c, 0, 0, AXON_ENTER_GETEVENTS, 0));
	EXPECT_EQ(-EINVAL, tclient_enter(c, 0, 17, AXON_ENTER_GETEVENTS, 0));
	EXPECT_EQ(-EINVAL, tclient_enter(c, 9, 0, 0, 0));
	EXPECT_EQ(-EINVAL, tclient_enter(c, 0, 0, 0x80, 0));
	e.resv = 1;
	EXPECT_EQ(-1, ioctl(c->fd, AXON_IOC_ENTER, &e));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(c->fd, AXON_IOC_ENTER, (void *)16));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(c->fd, _IO(AXON_IOC_MAGIC, 0x7f), 0));
	EXPECT_EQ(ENOTTY, errno);
	/* daemon-only ioctls from a client */
	EXPECT_EQ(-1, ioctl(c->fd, AXON_IOC_NOTIFY, &e));
	EXPECT_EQ(EPERM, errno);
	/* with work queued, ENTER returns the CQEs available */
	ASSERT_EQ(0, tclient_queue(c, 1, 1, 0, 0));
	ASSERT_EQ(0, tclient_queue(c, 2, 2, 0, 0));
	ASSERT_EQ(0, tclient_submit(c, 2));
	EXPECT_EQ(2, tclient_enter(c, 0, 2, AXON_ENTER_GETEVENTS,
				   now_ns() + 5 * NSEC_PER_SEC));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal interrupts a waiting ENTER with EINTR. */
TEST_F(served, enter_signal)
{
	struct sigaction sa = { .sa_handler = on_alarm };

	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	EXPECT_EQ(-EINTR, tclient_enter(&self->c, 0, 1, AXON_ENTER_GETEVENTS, 0));
}

/* poll(): nothing, then POLLIN once a CQE is posted. */
TEST_F(served, poll)
{
	struct tclient *c = &self->c;
	struct pollfd pfd = { .fd = c->fd, .events = POLLIN | POLLOUT };
	struct axon_cqe cqe;

	ASSERT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_EQ(POLLOUT, pfd.revents);
	pfd.events = POLLIN;
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	ASSERT_EQ(0, tclient_queue(c, 7, 7, 0, 0));
	ASSERT_EQ(0, tclient_submit(c, 1));
	/* the fake daemon notifies only WAITING clients; poll sleepers set it */
	c->cp->cq_flags |= AXON_CQ_F_WAITING;
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	EXPECT_EQ(POLLIN, pfd.revents);
	c->cp->cq_flags = 0;
	ASSERT_EQ(1, tclient_peek_cqe(c, &cqe));
	EXPECT_EQ(7, cqe.user_data);
}

/*
 * Ring full: with the daemon not consuming, the SQ fills (no POLLOUT, the
 * next SQE does not fit); once it consumes, everything completes; the CQ
 * can be filled to the brim and ENTER(min = cq_entries) returns at once.
 */
TEST_F(served, ring_full)
{
	struct tclient *c = &self->c;
	struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
	struct axon_cqe cqe;
	unsigned int i;

	ASSERT_EQ(0, kill(self->daemon, SIGUSR1));	/* stop consuming */
	usleep(50000);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, tclient_queue(c, i, i, 0, 0));
	EXPECT_EQ(-EBUSY, tclient_queue(c, 8, 8, 0, 0));
	ASSERT_EQ(0, tclient_submit(c, 8));
	EXPECT_EQ(0, poll(&pfd, 1, 50));
	ASSERT_EQ(0, kill(self->daemon, SIGUSR1));	/* consume again */
	ASSERT_EQ(0, tclient_wait_cqe(c, &cqe, 5000));
	/* the rest, without reaping: 7 left, then 8 more fill the 16-entry CQ */
	EXPECT_EQ(7, tclient_enter(c, 0, 7, AXON_ENTER_GETEVENTS,
				   now_ns() + 5 * NSEC_PER_SEC));
	c->cp->cq_flags |= AXON_CQ_F_WAITING;
	pfd.events = POLLOUT;
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, tclient_queue(c, 100 + i, i, 0, 0));
	ASSERT_EQ(0, tclient_submit(c, 8));
	EXPECT_EQ(15, tclient_enter(c, 0, 15, AXON_ENTER_GETEVENTS,
				    now_ns() + 5 * NSEC_PER_SEC));
	/* CQ has 15, one more SQE fills it; the next stays queued (admission) */
	ASSERT_EQ(0, tclient_queue(c, 200, 0, 0, 0));
	ASSERT_EQ(0, tclient_queue(c, 201, 0, 0, 0));
	ASSERT_EQ(0, tclient_submit(c, 2));
	EXPECT_EQ(16, tclient_enter(c, 0, 16, AXON_ENTER_GETEVENTS,
				    now_ns() + 5 * NSEC_PER_SEC));
	usleep(50000);
	EXPECT_EQ(16, tclient_cq_ready(c));
	EXPECT_EQ(1, c->cp->sq_tail - c->dp->sq_head);
	EXPECT_EQ(0, c->dp->cq_overflow);
	c->cp->cq_flags = 0;
	for (i = 0; i < 17; i++)
		ASSERT_EQ(0, tclient_wait_cqe(c, &cqe, 5000));
	EXPECT_EQ(201, cqe.user_data);
}

/* The fd's fdinfo reports the client. */
TEST_F(served, fdinfo)
{
	char path[64], buf[1024], want[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", self->c.fd);
	ASSERT_GT(read_file(path, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want), "axon-client-id:\t%llu\n",
		 (unsigned long long)self->c.p.client_id);
	EXPECT_NE(NULL, strstr(buf, want));
	EXPECT_NE(NULL, strstr(buf, "axon-state:\tactive\n"));
}

/* SETUP argument checking. */
TEST(setup_args)
{
	pid_t d = fake_daemon_spawn(true);
	struct axon_params p;
	struct tclient c;

	ASSERT_GT(d, 0);
	ASSERT_EQ(0, tclient_open(&c));
	memset(&p, 0, sizeof(p));
	p.flags = 1;
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.resv[5] = 1;
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.sq_entries = AXON_MAX_SQ_ENTRIES + 1;
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.data_size = AXON_KMOD_MAX_DATA_SIZE + 4096;
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	memset(&p, 0, sizeof(p));
	p.sq_entries = 16;
	p.cq_entries = 8;
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &p));
	EXPECT_EQ(EINVAL, errno);
	/* ENTER before SETUP */
	EXPECT_EQ(-EINVAL, tclient_enter(&c, 0, 0, 0, 0));
	/* defaults: 256 SQEs, 512 CQEs, 8 MiB of data */
	memset(&p, 0, sizeof(p));
	p.sq_entries = 100;
	ASSERT_EQ(0, ioctl(c.fd, AXON_IOC_SETUP, &p));
	EXPECT_EQ(128, p.sq_entries);
	EXPECT_EQ(256, p.cq_entries);
	EXPECT_EQ(8 << 20, p.data_size);
	close(c.fd);
	fake_daemon_kill(d);
}

/*
 * SETUP refuses what only the kernel writes: every output field must be
 * zero on input (a stale or forged geometry is not silently ignored).
 */
TEST(setup_output_fields)
{
	pid_t d = fake_daemon_spawn(true);
	struct axon_params p;
	struct tclient c;
	unsigned int i;
	static const size_t outs[] = {
		offsetof(struct axon_params, features),
		offsetof(struct axon_params, client_id),
		offsetof(struct axon_params, region_size),
		offsetof(struct axon_params, off_client),
		offsetof(struct axon_params, off_data),
		offsetof(struct axon_params, frontier_entries),
		offsetof(struct axon_params, va_base),
		offsetof(struct axon_params, va_size),
		offsetof(struct axon_params, mint_credit),
	};

	ASSERT_GT(d, 0);
	ASSERT_EQ(0, tclient_open(&c));
	for (i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
		memset(&p, 0, sizeof(p));
		((unsigned char *)&p)[outs[i]] = 1;
		EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &p)) {
			TH_LOG("output field at %zu accepted", outs[i]);
		}
		EXPECT_EQ(EINVAL, errno);
	}
	/* and a clean request still works */
	memset(&p, 0, sizeof(p));
	p.data_size = 4096;
	EXPECT_EQ(0, ioctl(c.fd, AXON_IOC_SETUP, &p));
	close(c.fd);
	fake_daemon_kill(d);
}

/* No daemon: SETUP fails at once, or waits for one with wait_for_daemon. */
TEST(no_daemon)
{
	struct tclient c;
	struct axon_params p;
	int pfd[2];
	pid_t child, d;
	int st;

	ASSERT_EQ(0, tclient_open(&c));
	memset(&p, 0, sizeof(p));
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &p));
	EXPECT_EQ(ECONNREFUSED, errno);
	close(c.fd);

	ASSERT_EQ(0, set_param("wait_for_daemon", "1"));
	ASSERT_EQ(0, pipe(pfd));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		int ret;

		close(pfd[0]);
		if (tclient_open(&c))
			_exit(2);
		ret = tclient_setup(&c, 4, 4096);
		_exit(ret ? 3 : 0);
	}
	close(pfd[1]);
	usleep(200000);
	/* still waiting */
	EXPECT_EQ(0, waitpid(child, &st, WNOHANG));
	d = fake_daemon_spawn(true);
	ASSERT_GT(d, 0);
	ASSERT_EQ(child, waitpid(child, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	fake_daemon_kill(d);
	set_param("wait_for_daemon", "0");
}

#define MEMCG	"/sys/fs/cgroup/axmem"

/*
 * The rings and data area are kernel memory allocated for the client:
 * its memory cgroup pays for them. In a memcg of 16 MiB a 64 MiB data
 * area fails with ENOMEM (not the OOM killer: the allocation may fail),
 * a small one is set up, and the memcg's usage shows it.
 */
TEST(setup_memcg_charged)
{
	pid_t d = fake_daemon_spawn(true);
	char v[64];
	pid_t pid;
	int st;

	ASSERT_GT(d, 0);
	if (write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory"))
		SKIP(fake_daemon_kill(d); return, "no memory controller");
	rmdir(MEMCG);
	ASSERT_EQ(0, mkdir(MEMCG, 0755));
	ASSERT_EQ(0, write_file(MEMCG "/memory.max", "16777216"));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct tclient big, small;
		long before, after;

		close_inherited_fds(-1);
		snprintf(v, sizeof(v), "%d", getpid());
		if (write_file(MEMCG "/cgroup.procs", v))
			_exit(100);
		if (tclient_open(&big) || tclient_open(&small))
			_exit(101);
		if (tclient_setup(&big, 4, 64 << 20) != -ENOMEM)
			_exit(10);
		if (read_file(MEMCG "/memory.current", v, sizeof(v)) <= 0)
			_exit(102);
		before = atol(v);
		if (tclient_setup(&small, 4, 4 << 20))
			_exit(11);
		if (read_file(MEMCG "/memory.current", v, sizeof(v)) <= 0)
			_exit(103);
		after = atol(v);
		/*
		 * The 4 MiB data area is in the memcg's usage, less what the
		 * memcg had charged ahead in its per-CPU stock (a batch of 64
		 * pages) when the big setup's pages went back: seen on the
		 * debug kernel, a delta just under 4 MiB.
		 */
		if (after - before < (4 << 20) - 64 * sysconf(_SC_PAGESIZE))
			_exit(12);
		tclient_close(&small);
		tclient_close(&big);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	fake_daemon_kill(d);
	/* main: SIGKILL from the memcg's OOM killer */
	EXPECT_TRUE(WIFEXITED(st));
	if (WIFEXITED(st))
		EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, rmdir(MEMCG));
}

TEST_HARNESS_MAIN
