// SPDX-License-Identifier: GPL-2.0
/*
 * mmap abuse: wrong offsets and sizes, private mappings, writable or
 * executable mappings of read-only parts, mprotect upgrades, mremap, fork
 * of a client mapping, mapping before SETUP, the daemon-side permissions.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define PG	4096

FIXTURE(m) {
	pid_t daemon;
	struct tclient c;
};

FIXTURE_SETUP(m)
{
	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
	ASSERT_EQ(0, tclient_open(&self->c));
	ASSERT_EQ(0, tclient_setup(&self->c, 8, 4 * PG));
}

FIXTURE_TEARDOWN(m)
{
	tclient_close(&self->c);
	fake_daemon_kill(self->daemon);
}

static int try_map(int fd, off_t off, size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

TEST_F(m, offsets_and_sizes)
{
	int fd = self->c.fd, rw = PROT_READ | PROT_WRITE;

	/* between parts, past the info page, unaligned */
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_CLIENT_PAGE + PG, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(fd, 0x05000000, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_INFO + 64 * PG, PG, PROT_READ, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(fd, 0x7ffff000, PG, PROT_READ, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_DATA + 1, PG, rw, MAP_SHARED));
	/* larger than the part */
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_CLIENT_PAGE, 2 * PG, rw, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_DATA, 5 * PG, rw, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_DATA + 3 * PG, 2 * PG, rw, MAP_SHARED));
	/* a sub-range of the data area is fine */
	EXPECT_EQ(0, try_map(fd, AXON_OFF_DATA + 2 * PG, 2 * PG, rw, MAP_SHARED));
	/* private mappings are refused */
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_DATA, PG, rw, MAP_PRIVATE));
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_DAEMON_PAGE, PG, PROT_READ, MAP_PRIVATE));
}

TEST_F(m, permissions)
{
	int fd = self->c.fd, rw = PROT_READ | PROT_WRITE;
	void *p;

	EXPECT_EQ(-EPERM, try_map(fd, AXON_OFF_DAEMON_PAGE, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EPERM, try_map(fd, AXON_OFF_CQES, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EPERM, try_map(fd, AXON_OFF_FRONTIER, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EPERM, try_map(fd, AXON_OFF_INFO, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EPERM, try_map(fd, AXON_OFF_DATA, PG, PROT_READ | PROT_EXEC, MAP_SHARED));
	/* a read-only part cannot be made writable (or executable) later */
	p = mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, AXON_OFF_DAEMON_PAGE);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, PG, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect(p, PG, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	munmap(p, PG);
	/* a writable part can go read-only and back */
	p = mmap(NULL, PG, rw, MAP_SHARED, fd, AXON_OFF_DATA);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, mprotect(p, PG, PROT_READ));
	EXPECT_EQ(0, mprotect(p, PG, rw));
	munmap(p, PG);
}

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	siglongjmp(segv_jmp, sig);
}

/* Writing through a read-only mapping faults; the page is unchanged. */
TEST_F(m, write_fault)
{
	struct sigaction sa = { .sa_handler = on_segv };
	volatile uint32_t *dp = (volatile uint32_t *)self->c.dp;
	uint32_t before = dp[0];

	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(segv_jmp, 1) == 0) {
		dp[0] = 0xdeadbeef;
		ASSERT_TRUE(0);	/* not reached */
	}
	EXPECT_EQ(before, dp[0]);
}

/* mremap cannot grow a mapping; it can move one, contents intact. */
TEST_F(m, mremap)
{
	int fd = self->c.fd, rw = PROT_READ | PROT_WRITE;
	unsigned char *p, *q;

	p = mmap(NULL, 2 * PG, rw, MAP_SHARED, fd, AXON_OFF_DATA);
	ASSERT_NE(MAP_FAILED, p);
	p[100] = 0x5a;
	EXPECT_EQ(MAP_FAILED, mremap(p, 2 * PG, 4 * PG, MREMAP_MAYMOVE));
	q = mremap(p, 2 * PG, 2 * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
		   (char *)self->c.data + 0x100000000ULL);
	ASSERT_NE(MAP_FAILED, q);
	EXPECT_EQ(0x5a, q[100]);
	EXPECT_EQ(0x5a, self->c.data[100]);
	/* shrinking is fine */
	EXPECT_NE(MAP_FAILED, mremap(q, 2 * PG, PG, 0));
	munmap(q, PG);
}

/*
 * fork(): the child gets no copy of the mappings (touching one faults) and
 * its ENTER/mmap on the inherited fd are refused: a client is one process.
 */
TEST_F(m, fork)
{
	int st;
	pid_t pid;

	self->c.data[0] = 1;
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct sigaction sa = { .sa_handler = on_segv };

		if (tclient_enter(&self->c, 0, 0, 0, 0) != -EPERM)
			_exit(10);
		if (try_map(self->c.fd, AXON_OFF_DATA, PG, PROT_READ, MAP_SHARED) != -EPERM)
			_exit(11);
		sigaction(SIGSEGV, &sa, NULL);
		if (sigsetjmp(segv_jmp, 1) == 0) {
			volatile unsigned char v = self->c.data[0];

			(void)v;
			_exit(12);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* the parent's mapping and fd still work */
	EXPECT_EQ(1, self->c.data[0]);
	EXPECT_EQ(0, tclient_enter(&self->c, 0, 0, 0, 0));
}

/*
 * The mappings hold the file: closing the fd does not end the client; the
 * last munmap does, and the daemon (told GONE) lets the client go.
 */
TEST_F(m, close_then_unmap)
{
	struct tclient *c = &self->c;
	uint64_t id = c->p.client_id;
	char st[32];
	int i;

	close(c->fd);
	c->fd = -1;
	c->data[5] = 9;
	EXPECT_EQ(9, c->data[5]);
	EXPECT_EQ(0, proc_field("clients", id, "id", "state", st, sizeof(st)));
	EXPECT_STREQ("active", st);
	tclient_close(c);
	for (i = 0; i < 200; i++) {
		if (proc_field("clients", id, "id", "state", st, sizeof(st)))
			break;
		usleep(10000);
	}
	EXPECT_EQ(-ENOENT, proc_field("clients", id, "id", "state", st, sizeof(st)));
}

TEST(before_setup)
{
	int fd = open(AXON_DEV, O_RDWR);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_DATA, PG, PROT_READ, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(fd, AXON_OFF_INFO, PG, PROT_READ, MAP_SHARED));
	close(fd);
}

/* The daemon's view: the client's pages read-only, its own writable. */
TEST(daemon_view)
{
	struct tdaemon d;
	struct tclient c;
	struct axon_client_fd a = { 0 };
	struct axon_event ev;
	struct axon_params p;
	int rw = PROT_READ | PROT_WRITE;
	pid_t child;
	int st;

	ASSERT_GE(tdaemon_attach(&d), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		close_inherited_fds(-1);
		if (tclient_open(&c) || tclient_setup(&c, 8, PG))
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	ASSERT_EQ(AXON_EV_OPEN, ev.events);
	a.client_id = ev.client_id;
	a.params = (uintptr_t)&p;
	ASSERT_EQ(0, ioctl(d.fd, AXON_IOC_CLIENT_FD, &a));
	EXPECT_EQ(PG, p.data_size);
	EXPECT_EQ(ev.client_id, p.client_id);
	EXPECT_EQ(-EPERM, try_map(a.fd, AXON_OFF_CLIENT_PAGE, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EPERM, try_map(a.fd, AXON_OFF_SQES, PG, rw, MAP_SHARED));
	EXPECT_EQ(0, try_map(a.fd, AXON_OFF_CLIENT_PAGE, PG, PROT_READ, MAP_SHARED));
	EXPECT_EQ(0, try_map(a.fd, AXON_OFF_DAEMON_PAGE, PG, rw, MAP_SHARED));
	EXPECT_EQ(0, try_map(a.fd, AXON_OFF_CQES, PG, rw, MAP_SHARED));
	EXPECT_EQ(0, try_map(a.fd, AXON_OFF_FRONTIER, 4 * PG, rw, MAP_SHARED));
	EXPECT_EQ(0, try_map(a.fd, AXON_OFF_DATA, PG, rw, MAP_SHARED));
	/* the info page: writable through the daemon's own fd only */
	EXPECT_EQ(-EINVAL, try_map(a.fd, AXON_OFF_INFO, PG, PROT_READ, MAP_SHARED));
	EXPECT_EQ(0, try_map(d.fd, AXON_OFF_INFO, PG, rw, MAP_SHARED));
	EXPECT_EQ(-EINVAL, try_map(d.fd, AXON_OFF_DATA, PG, rw, MAP_SHARED));
	close(a.fd);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);
	tdaemon_close(&d);
}

/* What the daemon writes in the info page, clients read. */
TEST_F(m, info_page)
{
	struct tdaemon d2;
	struct axon_info *info;

	/* the fake daemon holds the attachment: peek through a second one
	 * after it is gone */
	fake_daemon_kill(self->daemon);
	self->daemon = 0;
	ASSERT_GE(tdaemon_attach(&d2), 0);
	info = mmap(NULL, sizeof(*info), PROT_READ | PROT_WRITE, MAP_SHARED,
		    d2.fd, AXON_OFF_INFO);
	ASSERT_NE(MAP_FAILED, info);
	info->magic = AXON_MAGIC;
	info->ndevices = 3;
	EXPECT_EQ(AXON_MAGIC, self->c.info->magic);
	EXPECT_EQ(3, self->c.info->ndevices);
	munmap(info, sizeof(*info));
	tdaemon_close(&d2);
}

TEST_HARNESS_MAIN
