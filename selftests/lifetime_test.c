// SPDX-License-Identifier: GPL-2.0
/*
 * A client is one process: its mappings are never inherited, even after
 * madvise(MADV_DOFORK), and it ends when the opener exits, whoever still
 * holds a copy of its fd (a fork child, a descriptor passed on, a
 * CLONE_VM child sharing its address space): the daemon is told GONE and
 * the client's charges go back at the exit.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

/* 0 if reading *p faults, 1 if it reads. */
static int readable(const volatile unsigned char *p)
{
	struct sigaction sa = { .sa_handler = on_fault };

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	if (sigsetjmp(fault_jmp, 1) == 0) {
		(void)*p;
		return 1;
	}
	return 0;
}

/*
 * MADV_DOFORK clears VM_DONTCOPY, but the child still gets no pages of
 * the parent's rings or data area: touching them faults. Newer kernels
 * (7.2) refuse MADV_DOFORK on the mapping outright (EINVAL: a VM_MIXEDMAP
 * vma is VM_SPECIAL), which keeps it out of children too.
 */
static int dofork(void *p, size_t len)
{
	if (!madvise(p, len, MADV_DOFORK))
		return 0;
	return errno == EINVAL ? 0 : -errno;
}

TEST(dofork_not_inherited)
{
	pid_t d = fake_daemon_spawn(true);
	struct tclient c;
	size_t sq_len;
	pid_t pid;
	int st;

	ASSERT_GT(d, 0);
	ASSERT_EQ(0, tclient_open(&c));
	ASSERT_EQ(0, tclient_setup(&c, 8, 4096));
	sq_len = c.p.off_cqes - c.p.off_sqes;
	c.data[0] = 7;
	EXPECT_EQ(0, dofork(c.data, c.p.data_size));
	EXPECT_EQ(0, dofork(c.sqes, sq_len));
	EXPECT_EQ(0, dofork(c.cp, 4096));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (readable(c.data))
			_exit(10);
		if (readable((unsigned char *)c.sqes))
			_exit(11);
		if (readable((unsigned char *)c.cp))
			_exit(12);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* the parent's mappings are untouched */
	EXPECT_EQ(7, c.data[0]);
	EXPECT_EQ(0, tclient_enter(&c, 0, 0, 0, 0));
	tclient_close(&c);
	fake_daemon_kill(d);
}

/* Waits for an event with @bits for @id; other records are handled. */
static int wait_event_for(struct tdaemon *d, uint64_t id, uint32_t bits,
			  int timeout_ms)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct axon_event ev;

	while (now_ns() < end) {
		int ret = tdaemon_event(d, &ev, 20);

		if (ret < 0)
			return ret;
		if (!ret)
			continue;
		if (ev.client_id == id && (ev.events & bits))
			return 1;
		tdaemon_handle(d, &ev);
	}
	return 0;
}

/*
 * The opener forks a child that keeps the fd, charges 1 MiB through the
 * daemon and is killed: the daemon gets GONE at once (the child still
 * holds the file), the charge is gone with the opener and the id cannot
 * be charged again.
 */
TEST(opener_exit_ends_client)
{
	struct tdaemon d;
	struct axon_event ev;
	struct tclient c;
	int pfd[2], st;
	pid_t opener, kid = 0;
	uint64_t id;
	char buf[32];

	ASSERT_GE(tdaemon_attach(&d), 0);
	ASSERT_EQ(0, pipe(pfd));
	opener = fork();
	ASSERT_GE(opener, 0);
	if (opener == 0) {
		pid_t k;

		close(d.fd);
		if (tclient_open(&c) || tclient_setup(&c, 4, 4096))
			_exit(1);
		k = fork();
		if (k == 0) {
			/* the fd and nothing else: the rings are not ours */
			close(pfd[1]);
			pause();
			_exit(0);
		}
		if (write(pfd[1], &k, sizeof(k)) != sizeof(k))
			_exit(2);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	ASSERT_EQ(AXON_EV_OPEN, ev.events);
	id = ev.client_id;
	ASSERT_EQ(0, tdaemon_handle(&d, &ev));
	ASSERT_EQ(sizeof(kid), read(pfd[0], &kid, sizeof(kid)));
	close(pfd[0]);
	ASSERT_EQ(0, tdaemon_charge(&d, id, 1 << 20, true));
	ASSERT_EQ(0, proc_field("clients", id, "id", "charged", buf, sizeof(buf)));
	EXPECT_STREQ("1048576", buf);

	kill(opener, SIGKILL);
	ASSERT_EQ(opener, waitpid(opener, &st, 0));
	/* the child is alive and holds the fd */
	EXPECT_EQ(0, kill(kid, 0));
	EXPECT_EQ(1, wait_event_for(&d, id, AXON_EV_GONE, 3000));
	EXPECT_EQ(-ENOENT, tdaemon_charge(&d, id, 1, true));
	if (!proc_field("clients", id, "id", "charged", buf, sizeof(buf)))
		EXPECT_STREQ("0", buf);
	if (!proc_field("clients", id, "id", "state", buf, sizeof(buf)))
		EXPECT_STREQ("gone", buf);
	tdaemon_forget(&d, id);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	tdaemon_close(&d);
}

struct vm_child {
	pid_t opener;
	int fd;		/* the client fd, the same number in the child */
	int res;	/* pipe to the test: the child's ENTER result */
};

/*
 * Shares the opener's mm (CLONE_VM without CLONE_THREAD: its own process)
 * and a copy of its fds; once the opener is gone it tries to drive the
 * client. Raw system calls only: it shares the opener's libc state.
 */
static int vm_child_fn(void *arg)
{
	struct vm_child *v = arg;
	struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };
	struct axon_enter e = { 0 };
	int i;
	long ret;
	char x;

	while (syscall(SYS_getppid) == v->opener)
		syscall(SYS_nanosleep, &ts, NULL);
	/* ENTER keeps working as long as the client lives */
	for (i = 0; i < 300; i++) {
		ret = syscall(SYS_ioctl, v->fd, AXON_IOC_ENTER, &e);
		if (ret < 0)
			break;
		syscall(SYS_nanosleep, &ts, NULL);
	}
	x = ret < 0 ? 'e' : 'w';
	syscall(SYS_write, v->res, &x, 1);
	for (;;)
		syscall(SYS_pause);
	return 0;
}

/*
 * The opener clones a CLONE_VM child (another process, the same mm) and
 * is killed: the mm lives on in the child, but the client ends with the
 * opener's thread group (GONE, state gone), and the child cannot use the
 * fd.
 */
TEST(clone_vm_child_ends_with_opener)
{
	struct tdaemon d;
	struct axon_event ev;
	struct tclient c;
	int pfd[2], res[2], st;
	pid_t opener, kid = 0;
	uint64_t id;
	char buf[32], x = 0;

	ASSERT_EQ(0, prctl(PR_SET_CHILD_SUBREAPER, 1));
	ASSERT_GE(tdaemon_attach(&d), 0);
	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, pipe(res));
	opener = fork();
	ASSERT_GE(opener, 0);
	if (opener == 0) {
		static struct vm_child v;
		size_t stack_size = 1 << 16;
		char *stack = malloc(stack_size);
		pid_t k;

		close(d.fd);
		close(res[0]);
		if (!stack || tclient_open(&c) || tclient_setup(&c, 4, 4096))
			_exit(1);
		v.opener = getpid();
		v.fd = c.fd;
		v.res = res[1];
		k = clone(vm_child_fn, stack + stack_size, CLONE_VM | SIGCHLD, &v);
		if (k < 0 || write(pfd[1], &k, sizeof(k)) != sizeof(k))
			_exit(2);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	close(res[1]);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	ASSERT_EQ(AXON_EV_OPEN, ev.events);
	id = ev.client_id;
	ASSERT_EQ(0, tdaemon_handle(&d, &ev));
	ASSERT_EQ(sizeof(kid), read(pfd[0], &kid, sizeof(kid)));
	close(pfd[0]);
	ASSERT_EQ(0, tdaemon_charge(&d, id, 1 << 20, true));

	kill(opener, SIGKILL);
	ASSERT_EQ(opener, waitpid(opener, &st, 0));
	/* the child is alive, holds the fd and the mm */
	EXPECT_EQ(0, kill(kid, 0));
	/* main: no GONE, the mm did not go */
	EXPECT_EQ(1, wait_event_for(&d, id, AXON_EV_GONE, 3000));
	EXPECT_EQ(-ENOENT, tdaemon_charge(&d, id, 1, true));
	if (!proc_field("clients", id, "id", "state", buf, sizeof(buf)))
		EXPECT_STREQ("gone", buf);
	EXPECT_EQ(1, read(res[0], &x, 1));
	EXPECT_EQ('e', x);
	close(res[0]);
	tdaemon_forget(&d, id);
	kill(kid, SIGKILL);
	waitpid(kid, NULL, 0);
	tdaemon_close(&d);
}

TEST_HARNESS_MAIN
