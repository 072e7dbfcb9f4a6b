// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon side: attach exclusivity and permission (capabilities dropped,
 * another uid, the daemon_uid parameter), reliable coalesced events, a
 * client killed with work in flight, the daemon killed and restarted
 * (reattach sees the existing clients), DISCONNECT, NOTIFY.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

static int drop_all_caps(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	return syscall(SYS_capset, &h, d);
}

/* Runs fn in a child; returns its exit status. */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int attach_errno(void)
{
	int fd = open(AXON_DEV, O_RDWR);
	int ret;

	if (fd < 0)
		return 100;
	ret = ioctl(fd, AXON_IOC_ATTACH, 0) < 0 ? errno : 0;
	close(fd);
	return ret;
}

static int attach_nocaps(void *arg)
{
	(void)arg;
	if (drop_all_caps())
		return 101;
	return attach_errno();
}

static int attach_as_uid(void *arg)
{
	int uid = *(int *)arg;

	if (setgid(uid) || setuid(uid))
		return 102;
	return attach_errno();
}

/* Non-daemon ioctls a non-privileged client tries. */
static int unprivileged_ops(void *arg)
{
	struct axon_charge ch = { .client_id = *(uint64_t *)arg, .bytes = 1 };
	struct axon_client_fd cf = { .client_id = *(uint64_t *)arg };
	int fd;

	if (setgid(65534) || setuid(65534))
		return 102;
	fd = open(AXON_DEV, O_RDWR);
	if (fd < 0)
		return 103;
	if (ioctl(fd, AXON_IOC_CHARGE, &ch) != -1 || errno != EPERM)
		return 1;
	if (ioctl(fd, AXON_IOC_CLIENT_FD, &cf) != -1 || errno != EPERM)
		return 2;
	if (ioctl(fd, AXON_IOC_ATTACH, 0) != -1 || errno != EPERM)
		return 3;
	close(fd);
	return 0;
}

TEST(attach_exclusive)
{
	struct tdaemon d, d2;

	ASSERT_EQ(0, tdaemon_attach(&d));
	EXPECT_EQ(-EBUSY, tdaemon_attach(&d2));
	/* flags must be zero; the daemon fd is not a client */
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_ATTACH, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_ENTER, NULL));
	EXPECT_EQ(EINVAL, errno);
	tdaemon_close(&d);
	/* once it is gone another may attach */
	ASSERT_EQ(0, tdaemon_attach(&d2));
	tdaemon_close(&d2);
}

TEST(attach_permission)
{
	int uid = 1000;
	uint64_t id = 1;

	EXPECT_EQ(EPERM, in_child(attach_nocaps, NULL));
	EXPECT_EQ(EPERM, in_child(attach_as_uid, &uid));
	EXPECT_EQ(0, in_child(unprivileged_ops, &id));
	/* the daemon_uid parameter lets that uid attach without caps */
	ASSERT_EQ(0, set_param("daemon_uid", "1000"));
	EXPECT_EQ(0, in_child(attach_as_uid, &uid));
	uid = 1001;
	EXPECT_EQ(EPERM, in_child(attach_as_uid, &uid));
	ASSERT_EQ(0, set_param("daemon_uid", "-1"));
}

/* A client that runs in a child: open, SETUP, then queue n SQEs, ring. */
struct kid {
	pid_t pid;
	int ready[2];	/* child -> parent: client id once set up */
};

static void kid_start(struct kid *k, int nsqe, bool wait_cqe)
{
	if (pipe(k->ready))
		abort();
	k->pid = fork();
	if (k->pid == 0) {
		struct tclient c;
		struct axon_cqe cqe;
		int i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_inherited_fds(k->ready[1]);
		if (tclient_open(&c) || tclient_setup(&c, 16, 4096))
			_exit(1);
		for (i = 0; i < nsqe; i++)
			tclient_queue(&c, i, i, 0, 0);
		if (nsqe)
			tclient_submit(&c, nsqe);
		if (write(k->ready[1], &c.p.client_id, 8) != 8)
			_exit(2);
		if (wait_cqe) {
			int ret = tclient_wait_cqe(&c, &cqe, 30000);

			_exit(ret == -ECONNRESET ? 42 : ret ? 3 : 0);
		}
		pause();
		_exit(0);
	}
	close(k->ready[1]);
}

static uint64_t kid_id(struct kid *k)
{
	uint64_t id = 0;

	if (read(k->ready[0], &id, 8) != 8)
		return 0;
	close(k->ready[0]);
	return id;
}

/* Reads events until one for id has all of want; accumulates bits. */
static int wait_event_bits(struct tdaemon *d, uint64_t id, uint32_t want,
			   struct axon_event *out)
{
	uint32_t seen = 0;
	struct axon_event ev;
	int i;

	for (i = 0; i < 500 && (seen & want) != want; i++) {
		int ret = tdaemon_event(d, &ev, 10);

		if (ret < 0)
			return ret;
		if (ret && ev.client_id == id) {
			seen |= ev.events;
			*out = ev;
		} else if (ret) {
			tdaemon_handle(d, &ev);
		}
	}
	return (seen & want) == want ? 0 : -ETIMEDOUT;
}

/* Identity in the OPEN event; events coalesce per client. */
TEST(events)
{
	struct tdaemon d;
	struct axon_event ev;
	struct tdclient *t;
	struct kid k;
	uint64_t id;

	ASSERT_EQ(0, tdaemon_attach(&d));
	kid_start(&k, 0, false);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	EXPECT_EQ(AXON_EV_OPEN, ev.events);
	EXPECT_EQ(AXON_KSTATE_PENDING, ev.state);
	EXPECT_EQ(k.pid, ev.pid);
	EXPECT_EQ(0, ev.uid);
	EXPECT_NE(0, ev.cgroup_id);
	EXPECT_STREQ("daemon_test", ev.comm);
	id = ev.client_id;
	t = tdaemon_map(&d, id);
	ASSERT_NE(NULL, t);
	/* accepting twice, accepting nobody */
	ASSERT_EQ(0, tdaemon_accept(&d, id));
	EXPECT_EQ(-EALREADY, tdaemon_accept(&d, id));
	EXPECT_EQ(-ENOENT, tdaemon_accept(&d, 999999));
	ASSERT_EQ(id, kid_id(&k));
	/* no more events: poll says so, a non-blocking read says EAGAIN */
	{
		struct pollfd pfd = { .fd = d.fd, .events = POLLIN };
		int fl = fcntl(d.fd, F_GETFL);

		EXPECT_EQ(0, poll(&pfd, 1, 0));
		fcntl(d.fd, F_SETFL, fl | O_NONBLOCK);
		EXPECT_EQ(-1, read(d.fd, &ev, sizeof(ev)));
		EXPECT_EQ(EAGAIN, errno);
		EXPECT_EQ(-1, read(d.fd, &ev, sizeof(ev) - 1));
		EXPECT_EQ(EINVAL, errno);
		fcntl(d.fd, F_SETFL, fl);
	}
	/* the child is killed: one GONE record, the last for that id */
	kill(k.pid, SIGKILL);
	waitpid(k.pid, NULL, 0);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	EXPECT_EQ(id, ev.client_id);
	EXPECT_EQ(AXON_EV_GONE, ev.events);
	EXPECT_EQ(AXON_KSTATE_GONE, ev.state);
	EXPECT_EQ(0, tdaemon_event(&d, &ev, 100));
	tdaemon_close(&d);
}

/* Many clients before the daemon reads: no event is lost. */
TEST(events_reliable)
{
	struct tdaemon d;
	struct axon_event ev[8];
	struct kid k[20];
	int i, opens = 0, n;

	ASSERT_EQ(0, tdaemon_attach(&d));
	for (i = 0; i < 20; i++)
		kid_start(&k[i], 0, false);
	usleep(300000);
	while (opens < 20) {
		struct pollfd pfd = { .fd = d.fd, .events = POLLIN };

		ASSERT_EQ(1, poll(&pfd, 1, 5000));
		n = read(d.fd, ev, sizeof(ev));
		ASSERT_GT(n, 0);
		ASSERT_EQ(0, n % sizeof(ev[0]));
		for (i = 0; i < n / (int)sizeof(ev[0]); i++) {
			EXPECT_EQ(AXON_EV_OPEN, ev[i].events);
			ASSERT_NE(NULL, tdaemon_map(&d, ev[i].client_id));
			ASSERT_EQ(0, tdaemon_accept(&d, ev[i].client_id));
			opens++;
		}
	}
	for (i = 0; i < 20; i++) {
		ASSERT_NE(0, kid_id(&k[i]));
		kill(k[i].pid, SIGKILL);
		waitpid(k[i].pid, NULL, 0);
	}
	for (i = 0; i < 20;) {
		ASSERT_EQ(1, tdaemon_event(&d, ev, 5000));
		EXPECT_EQ(AXON_EV_GONE, ev[0].events);
		tdaemon_forget(&d, ev[0].client_id);
		i++;
	}
	tdaemon_close(&d);
}

/*
 * A client killed with SQEs in flight: the daemon still holds its region,
 * serves the SQEs into the dead client's rings without harm, reads GONE;
 * the client's charges were given back at once, and it disappears when the
 * daemon lets go.
 */
TEST(client_killed_in_flight)
{
	struct tdaemon d;
	struct axon_event ev;
	struct tdclient *t;
	struct kid k;
	uint64_t id;
	char buf[64];
	int i;

	ASSERT_EQ(0, tdaemon_attach(&d));
	d.consume = false;
	kid_start(&k, 10, false);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	id = ev.client_id;
	t = tdaemon_map(&d, id);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(0, tdaemon_accept(&d, id));
	ASSERT_EQ(id, kid_id(&k));
	ASSERT_EQ(0, tdaemon_charge(&d, id, 1 << 20, true));
	EXPECT_EQ(0, proc_field("clients", id, "id", "charged", buf, sizeof(buf)));
	EXPECT_STREQ("1048576", buf);
	/* the doorbell for the 10 SQEs, not served yet */
	EXPECT_EQ(0, wait_event_bits(&d, id, AXON_EV_DOORBELL, &ev));
	EXPECT_EQ(10, t->cp->sq_tail - t->dp->sq_head);
	EXPECT_EQ(0, proc_field("clients", id, "id", "depth", buf, sizeof(buf)));
	EXPECT_STREQ("10", buf);

	kill(k.pid, SIGKILL);
	waitpid(k.pid, NULL, 0);
	/* charges are back at once, whatever the daemon does */
	EXPECT_EQ(0, proc_field("clients", id, "id", "charged", buf, sizeof(buf)));
	EXPECT_STREQ("0", buf);
	EXPECT_EQ(0, proc_field("clients", id, "id", "state", buf, sizeof(buf)));
	EXPECT_STREQ("gone", buf);
	EXPECT_EQ(-ENOENT, tdaemon_charge(&d, id, 1, true));
	/* the daemon serves the dead client: CQEs land in pages it holds */
	d.consume = true;
	EXPECT_EQ(10, tdaemon_serve(&d, t));
	EXPECT_EQ(0, tdaemon_notify(&d, &id, 1));
	EXPECT_EQ(0, wait_event_bits(&d, id, AXON_EV_GONE, &ev));
	/* once the daemon lets go, the client is freed (the exit work,
	 * queued by the opener's death, may still hold it for a moment) */
	tdaemon_forget(&d, id);
	for (i = 0; i < 200 && !proc_field("clients", id, "id", "state", buf, sizeof(buf)); i++)
		usleep(10000);
	EXPECT_EQ(-ENOENT, proc_field("clients", id, "id", "state", buf, sizeof(buf)));
	tdaemon_close(&d);
}

/*
 * The daemon dies: a client sleeping in ENTER wakes with ECONNRESET, poll
 * says HUP, the daemon page says DAEMON_GONE, charges are back. A new
 * daemon attaches, is told the client exists (ORPHAN), accepts it, and the
 * client is served again.
 */
TEST(daemon_restart)
{
	struct pollfd pfd;
	struct tclient c;
	struct axon_event ev;
	struct axon_cqe cqe;
	struct tdaemon d;
	pid_t fake;
	char buf[64];
	int pfd2[2], st;
	pid_t waiter;

	fake = fake_daemon_spawn(true);
	ASSERT_GT(fake, 0);
	ASSERT_EQ(0, tclient_open(&c));
	ASSERT_EQ(0, tclient_setup(&c, 8, 4096));
	ASSERT_EQ(0, tclient_queue(&c, 1, 1, 0, 0));
	ASSERT_EQ(0, tclient_submit(&c, 1));
	ASSERT_EQ(0, tclient_wait_cqe(&c, &cqe, 5000));

	/* a thread of the client (here: a child sharing nothing) cannot use
	 * the fd, so wait in this process: sleep in ENTER, kill the daemon
	 * from a helper child */
	ASSERT_EQ(0, pipe(pfd2));
	waiter = fork();
	ASSERT_GE(waiter, 0);
	if (waiter == 0) {
		usleep(200000);
		kill(fake, SIGKILL);
		_exit(0);
	}
	EXPECT_EQ(-ECONNRESET, tclient_enter(&c, 0, 1, AXON_ENTER_GETEVENTS,
					     now_ns() + 10 * NSEC_PER_SEC));
	waitpid(waiter, &st, 0);
	waitpid(fake, &st, 0);
	EXPECT_TRUE(c.dp->sq_flags & AXON_SQ_F_DAEMON_GONE);
	pfd.fd = c.fd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, 0));
	EXPECT_TRUE(pfd.revents & POLLHUP);
	EXPECT_EQ(-ECONNRESET, tclient_enter(&c, 1, 0, 0, 0));
	EXPECT_EQ(0, proc_field("clients", c.p.client_id, "id", "state", buf,
				sizeof(buf)));
	EXPECT_STREQ("orphan", buf);

	/* restart: the new daemon learns about the client */
	ASSERT_EQ(1, tdaemon_attach(&d));
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	EXPECT_EQ(c.p.client_id, ev.client_id);
	EXPECT_EQ(AXON_EV_EXISTING, ev.events);
	EXPECT_EQ(AXON_KSTATE_ORPHAN, ev.state);
	ASSERT_EQ(0, tdaemon_handle(&d, &ev));
	EXPECT_FALSE(c.dp->sq_flags & AXON_SQ_F_DAEMON_GONE);
	ASSERT_EQ(1, poll(&pfd, 1, 0) >= 0);
	EXPECT_FALSE(pfd.revents & POLLHUP);
	/* served again: submit, and let the daemon loop in a child */
	ASSERT_EQ(0, tclient_queue(&c, 2, 2, 0, 0));
	ASSERT_EQ(0, tclient_submit(&c, 1));
	ASSERT_EQ(1, tdaemon_loop(&d, 300) >= 1);
	ASSERT_EQ(1, tclient_peek_cqe(&c, &cqe));
	EXPECT_EQ(2, cqe.user_data);
	tclient_close(&c);
	tdaemon_close(&d);
}

/* A SETUP waiting while the daemon dies fails with ECONNRESET. */
TEST(daemon_dies_during_setup)
{
	struct tdaemon d;
	struct axon_event ev;
	struct kid k;
	int st;

	ASSERT_EQ(0, tdaemon_attach(&d));
	kid_start(&k, 0, false);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	tdaemon_close(&d);
	ASSERT_EQ(k.pid, waitpid(k.pid, &st, 0));
	EXPECT_EQ(1, WEXITSTATUS(st));	/* tclient_setup failed */
}

/* DISCONNECT: the pending SETUP (refusal) or a served client gets the error. */
TEST(disconnect)
{
	struct axon_disconnect dc = { .error = -EDQUOT };
	struct tdaemon d;
	struct axon_event ev;
	struct kid k;
	int st;

	ASSERT_EQ(0, tdaemon_attach(&d));
	/* refusal */
	kid_start(&k, 0, false);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	dc.client_id = ev.client_id;
	dc.error = 0;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
	EXPECT_EQ(EINVAL, errno);
	/*
	 * Stopped, the refused client cannot exit between the two
	 * DISCONNECTs: its exit ends it at once (the opener's thread group
	 * is watched), and a second DISCONNECT would then find no client
	 * (ENOENT) rather than one already disconnected.
	 */
	ASSERT_EQ(0, kill(k.pid, SIGSTOP));
	dc.error = -EDQUOT;
	ASSERT_EQ(0, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_EQ(0, kill(k.pid, SIGCONT));
	ASSERT_EQ(k.pid, waitpid(k.pid, &st, 0));
	EXPECT_EQ(1, WEXITSTATUS(st));
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	EXPECT_EQ(AXON_EV_GONE, ev.events);

	/* a served client sleeping for a CQE */
	kid_start(&k, 0, true);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	ASSERT_NE(NULL, tdaemon_map(&d, ev.client_id));
	ASSERT_EQ(0, tdaemon_accept(&d, ev.client_id));
	ASSERT_EQ(ev.client_id, kid_id(&k));
	usleep(100000);
	dc.client_id = ev.client_id;
	dc.error = -ENOEXEC;
	ASSERT_EQ(0, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
	ASSERT_EQ(k.pid, waitpid(k.pid, &st, 0));
	EXPECT_EQ(3, WEXITSTATUS(st));	/* wait_cqe failed (ENOEXEC) */
	tdaemon_close(&d);
}

/*
 * ACCEPT validates what it hands to the client: a minting window that
 * wraps past 2^64 is refused, and the client stays PENDING for a correct
 * answer.
 */
TEST(accept_args)
{
	struct axon_accept a = { 0 };
	struct tdaemon d;
	struct axon_event ev;
	struct kid k;

	ASSERT_EQ(0, tdaemon_attach(&d));
	kid_start(&k, 0, false);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	ASSERT_NE(NULL, tdaemon_map(&d, ev.client_id));
	a.client_id = ev.client_id;
	a.va_base = ~0ULL - 4095;
	a.va_size = 1ULL << 30;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_ACCEPT, &a));
	EXPECT_EQ(EINVAL, errno);
	a.va_base = 1;
	a.va_size = ~0ULL;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_ACCEPT, &a));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, tdaemon_accept(&d, ev.client_id));
	ASSERT_EQ(ev.client_id, kid_id(&k));
	kill(k.pid, SIGKILL);
	waitpid(k.pid, NULL, 0);
	tdaemon_close(&d);
}

/* NOTIFY checks its arguments and counts the served clients it woke. */
TEST(notify)
{
	struct axon_notify n = { 0 };
	struct tdaemon d;
	uint64_t ids[3] = { 0, 12345678, 0 };

	ASSERT_EQ(0, tdaemon_attach(&d));
	EXPECT_EQ(0, tdaemon_notify(&d, ids, 3));
	n.count = AXON_NOTIFY_MAX + 1;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_NOTIFY, &n));
	EXPECT_EQ(EINVAL, errno);
	n.count = 2;
	n.ids = 8;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_NOTIFY, &n));
	EXPECT_EQ(EFAULT, errno);
	n.ids = (uintptr_t)ids;
	n.flags = 1;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_NOTIFY, &n));
	EXPECT_EQ(EINVAL, errno);
	tdaemon_close(&d);
}

TEST_HARNESS_MAIN
