// SPDX-License-Identifier: GPL-2.0
/*
 * Error paths under fault injection (failslab and fail_page_alloc, debug
 * kernel only; skipped where the kernel has no fault injection): clients
 * open, set up and map while a share of their kernel allocations fail;
 * the daemon charges and creates client fds (plain and delegates, which
 * charge too) while its own allocations fail. Only -ENOMEM-class errors may come back; KASAN, kmemleak and the
 * created/destroyed pairing in the VM harness catch bad unwinding.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define DBG	"/sys/kernel/debug"

static int fault_config(const char *attr, const char *prob)
{
	char path[128];

	snprintf(path, sizeof(path), DBG "/%s/probability", attr);
	if (write_file(path, prob))
		return -1;
	snprintf(path, sizeof(path), DBG "/%s/interval", attr);
	write_file(path, "1");
	snprintf(path, sizeof(path), DBG "/%s/times", attr);
	write_file(path, "-1");
	snprintf(path, sizeof(path), DBG "/%s/verbose", attr);
	write_file(path, "0");
	snprintf(path, sizeof(path), DBG "/%s/task-filter", attr);
	write_file(path, "Y");
	snprintf(path, sizeof(path), DBG "/%s/ignore-gfp-wait", attr);
	write_file(path, "N");
	return 0;
}

/* Opened once: turning injection off must not need an allocation. */
static int mif_fd = -1;

static int make_it_fail(int on)
{
	return pwrite(mif_fd, on ? "1" : "0", 1, 0) == 1 ? 0 : -errno;
}

FIXTURE(f) {
	pid_t daemon;
	bool skip;
};

FIXTURE_SETUP(f)
{
	self->daemon = 0;
	mif_fd = open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
	self->skip = mif_fd < 0 || access(DBG "/failslab/probability", W_OK) ||
		     access(DBG "/fail_page_alloc/probability", W_OK);
	if (self->skip)
		return;
	ASSERT_EQ(0, fault_config("failslab", "4"));
	ASSERT_EQ(0, fault_config("fail_page_alloc", "1"));
	self->daemon = fake_daemon_spawn(true);
	ASSERT_GT(self->daemon, 0);
}

FIXTURE_TEARDOWN(f)
{
	if (self->skip)
		return;
	make_it_fail(0);
	fault_config("failslab", "0");
	fault_config("fail_page_alloc", "0");
	fake_daemon_kill(self->daemon);
}

TEST_F(f, client_paths)
{
	int i, ok = 0, enomem = 0;

	if (self->skip)
		SKIP(return, "no fault injection in this kernel");
	for (i = 0; i < 100; i++) {
		struct tclient c;
		struct axon_cqe cqe;
		int ret;

		ASSERT_EQ(0, make_it_fail(1));
		ret = tclient_open(&c);
		if (!ret)
			ret = tclient_setup(&c, 16, 16 * 4096);
		if (!ret && !tclient_queue(&c, 1, 1, 0, 0) && !tclient_submit(&c, 1))
			ret = tclient_wait_cqe(&c, &cqe, 2000);
		make_it_fail(0);
		if (ret == 0)
			ok++;
		else if (ret == -ENOMEM || ret == -EFAULT || ret == -EAGAIN ||
			 ret == -ENFILE || ret == -EMFILE || ret == -ETIME)
			enomem++;
		else
			EXPECT_EQ(0, ret);
		if (c.fd >= 0 || c.cp)
			tclient_close(&c);
	}
	TH_LOG("%d set up, %d failed to allocate", ok, enomem);
}

TEST_F(f, daemon_paths)
{
	struct tdaemon d;
	struct axon_event ev;
	pid_t kids[20];
	int i, got = 0;

	if (self->skip)
		SKIP(return, "no fault injection in this kernel");
	fake_daemon_kill(self->daemon);
	self->daemon = 0;
	ASSERT_EQ(0, tdaemon_attach(&d));
	for (i = 0; i < 20; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			struct tclient c;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close_inherited_fds(-1);
			if (tclient_open(&c) || tclient_setup(&c, 4, 4096))
				_exit(1);
			pause();
			_exit(0);
		}
	}
	while (got < 20 && tdaemon_event(&d, &ev, 5000) == 1) {
		struct axon_client_fd a = { .client_id = ev.client_id };
		int j, ret;

		/* GONE records of refused clients interleave with OPENs */
		if (!(ev.events & AXON_EV_OPEN))
			continue;
		got++;
		ASSERT_EQ(0, make_it_fail(1));
		for (j = 0; j < 10; j++) {
			a.flags = j % 2 ? AXON_CLIENT_FD_DELEGATE : 0;
			ret = ioctl(d.fd, AXON_IOC_CLIENT_FD, &a);
			if (!ret && a.flags) {
				struct axon_charge ch = {
					.client_id = ev.client_id,
					.bytes = 4096,
				};

				if (ioctl(a.fd, AXON_IOC_CHARGE, &ch))
					EXPECT_EQ(ENOMEM, errno);
			}
			if (!ret)
				close(a.fd);
			else if (errno != ENOMEM && errno != EMFILE &&
				 errno != ENFILE)
				EXPECT_EQ(ENOMEM, errno);
			a.fd = 0;
			ret = tdaemon_charge(&d, ev.client_id, 4096, true);
			if (ret)
				EXPECT_EQ(-ENOMEM, ret);
		}
		make_it_fail(0);
		/* refuse: the client's SETUP fails, it exits */
		{
			struct axon_disconnect dc = {
				.client_id = ev.client_id,
				.error = -ENOMEM,
			};

			EXPECT_EQ(0, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
		}
	}
	EXPECT_EQ(20, got);
	for (i = 0; i < 20; i++)
		waitpid(kids[i], NULL, 0);
	tdaemon_close(&d);
}

TEST_HARNESS_MAIN
