// SPDX-License-Identifier: GPL-2.0
/*
 * Delegates (AXON_IOC_CLIENT_FD with AXON_CLIENT_FD_DELEGATE): the five
 * ioctls for the delegate's own client and -EPERM for any other, -ENOTTY
 * for the rest and on a plain client fd, one live delegate per client,
 * DOORBELL to the delegate and not the daemon, GONE to both, EPOLLHUP and
 * EOF, the cut-off when the daemon closes, doorbells back to the daemon
 * when the delegate closes, the fd passed by SCM_RIGHTS to another uid,
 * CHARGE refused past a cgroup limit set by netlink, and a race of
 * delegate close, client exit and daemon detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define CG	"/sys/fs/cgroup"

/* ---- a client in a child, driven through a pipe ------------------------ */

/*
 * The child opens and sets up (SETUP waits for ACCEPT), answers 0 or the
 * error, then for each command byte: 'r' rings the doorbell (ENTER with
 * to_submit 1) and answers ENTER's result; 'x' exits.
 */
struct kid {
	pid_t pid;
	int cmd;	/* parent -> child */
	int ack;	/* child -> parent */
	uint64_t id;	/* from its OPEN event */
};

static void kid_main(int cmd, int ack, const char *cg)
{
	struct tclient c;
	int ret, fd;
	char op;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (fd = 3; fd < 1024; fd++)
		if (fd != cmd && fd != ack)
			close(fd);
	if (cg) {
		char path[256], v[32];

		snprintf(path, sizeof(path), CG "%s/cgroup.procs", cg);
		snprintf(v, sizeof(v), "%d", getpid());
		if (write_file(path, v))
			_exit(1);
	}
	if (tclient_open(&c))
		_exit(1);
	ret = tclient_setup(&c, 16, 4096);
	if (write(ack, &ret, sizeof(ret)) != sizeof(ret) || ret)
		_exit(2);
	while (read(cmd, &op, 1) == 1) {
		if (op == 'x')
			break;
		ret = tclient_enter(&c, 1, 0, 0, 0);
		if (write(ack, &ret, sizeof(ret)) != sizeof(ret))
			_exit(3);
	}
	_exit(0);
}

static int kid_start_in(struct kid *k, const char *cg)
{
	int cmd[2], ack[2];

	if (pipe(cmd) || pipe(ack))
		return -1;
	k->pid = fork();
	if (k->pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		kid_main(cmd[0], ack[1], cg);
	}
	close(cmd[0]);
	close(ack[1]);
	k->cmd = cmd[1];
	k->ack = ack[0];
	return k->pid < 0 ? -1 : 0;
}

/* The child's next answer, -ETIMEDOUT after timeout_ms, -EPIPE if gone. */
static int kid_answer(struct kid *k, int timeout_ms)
{
	struct pollfd pfd = { .fd = k->ack, .events = POLLIN };
	int ret;

	if (poll(&pfd, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	if (read(k->ack, &ret, sizeof(ret)) != sizeof(ret))
		return -EPIPE;
	return ret;
}

/* Rings the child's doorbell; ENTER's result (available CQEs, or -errno). */
static int kid_ring(struct kid *k)
{
	if (write(k->cmd, "r", 1) != 1)
		return -EPIPE;
	return kid_answer(k, 5000);
}

static void kid_kill(struct kid *k)
{
	if (k->pid > 0) {
		kill(k->pid, SIGKILL);
		waitpid(k->pid, NULL, 0);
		k->pid = 0;
	}
	close(k->cmd);
	close(k->ack);
}

/* ---- ioctls ------------------------------------------------------------ */

static int delegate_fd(int fd, uint64_t id)
{
	struct axon_client_fd a = {
		.client_id = id,
		.flags = AXON_CLIENT_FD_DELEGATE,
	};

	return ioctl(fd, AXON_IOC_CLIENT_FD, &a) < 0 ? -errno : a.fd;
}

static int plain_fd(int fd, uint64_t id)
{
	struct axon_client_fd a = { .client_id = id };

	return ioctl(fd, AXON_IOC_CLIENT_FD, &a) < 0 ? -errno : a.fd;
}

static int do_accept(int fd, uint64_t id)
{
	struct axon_accept a = { .client_id = id };

	return ioctl(fd, AXON_IOC_ACCEPT, &a) < 0 ? -errno : 0;
}

static int do_charge(int fd, uint64_t id, uint64_t bytes, bool charge)
{
	struct axon_charge a = { .client_id = id, .bytes = bytes };

	return ioctl(fd, charge ? AXON_IOC_CHARGE : AXON_IOC_UNCHARGE, &a) < 0 ?
	       -errno : 0;
}

static int do_notify(int fd, const uint64_t *ids, uint32_t n)
{
	struct axon_notify a = { .count = n, .ids = (uintptr_t)ids };
	int ret = ioctl(fd, AXON_IOC_NOTIFY, &a);

	return ret < 0 ? -errno : ret;
}

static int do_disconnect(int fd, uint64_t id)
{
	struct axon_disconnect a = { .client_id = id, .error = -EPIPE };

	return ioctl(fd, AXON_IOC_DISCONNECT, &a) < 0 ? -errno : 0;
}

/* One record from fd: 1 got, 0 none within timeout_ms, -EPIPE at EOF. */
static int fd_event(int fd, struct axon_event *ev, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return -errno;
	if (!ret)
		return 0;
	n = read(fd, ev, sizeof(*ev));
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	if (n == 0)
		return -EPIPE;
	return n == sizeof(*ev) ? 1 : -EIO;
}

static short poll_now(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1 ? pfd.revents : 0;
}

static long charged(uint64_t id)
{
	char buf[64];

	if (proc_field("clients", id, "id", "charged", buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

static int kstate(uint64_t id, char *buf, size_t len)
{
	return proc_field("clients", id, "id", "state", buf, len);
}

/*
 * Starts a client child and reads its OPEN event (anything else queued
 * first is skipped); the client stays PENDING.
 */
static int kid_open_in(struct tdaemon *d, struct kid *k, const char *cg)
{
	struct axon_event ev;
	int i;

	if (kid_start_in(k, cg))
		return -1;
	for (i = 0; i < 50; i++) {
		if (tdaemon_event(d, &ev, 100) != 1)
			continue;
		if (ev.events & AXON_EV_OPEN && ev.pid == (uint32_t)k->pid) {
			k->id = ev.client_id;
			return 0;
		}
	}
	return -1;
}

static int kid_open(struct tdaemon *d, struct kid *k)
{
	return kid_open_in(d, k, NULL);
}

/* The daemon's queue is empty (a non-blocking read says EAGAIN). */
static bool daemon_quiet(struct tdaemon *d)
{
	struct axon_event ev;

	return tdaemon_event(d, &ev, 50) == 0;
}

/* ---- the rules --------------------------------------------------------- */

/*
 * Flags other than DELEGATE are refused; a plain client fd takes no ioctl;
 * a delegate takes the five and -ENOTTY for everything else.
 */
TEST(ioctls_accepted)
{
	struct axon_client_fd cf = { .flags = 2 };
	uint64_t ids[1];
	struct tdaemon d;
	struct kid k;
	int pfd, dfd;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &k));
	cf.client_id = k.id;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_CLIENT_FD, &cf));
	EXPECT_EQ(EINVAL, errno);
	cf.flags = AXON_CLIENT_FD_DELEGATE | 0x80000000U;
	EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_CLIENT_FD, &cf));
	EXPECT_EQ(EINVAL, errno);

	pfd = plain_fd(d.fd, k.id);
	ASSERT_GE(pfd, 0);
	ids[0] = k.id;
	EXPECT_EQ(-ENOTTY, do_accept(pfd, k.id));
	EXPECT_EQ(-ENOTTY, do_charge(pfd, k.id, 1, true));
	EXPECT_EQ(-ENOTTY, do_charge(pfd, k.id, 1, false));
	EXPECT_EQ(-ENOTTY, do_notify(pfd, ids, 1));
	EXPECT_EQ(-ENOTTY, do_disconnect(pfd, k.id));

	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	EXPECT_EQ(-1, ioctl(dfd, AXON_IOC_ATTACH, 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(dfd, AXON_IOC_ENTER, NULL));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(dfd, AXON_IOC_SETUP, NULL));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-ENOTTY, plain_fd(dfd, k.id));
	EXPECT_EQ(-ENOTTY, delegate_fd(dfd, k.id));
	/* the daemon's fd still works for a delegated client */
	EXPECT_EQ(0, do_accept(d.fd, k.id));
	EXPECT_EQ(0, kid_answer(&k, 5000));
	EXPECT_EQ(0, do_charge(d.fd, k.id, 100, true));
	EXPECT_EQ(100, charged(k.id));
	close(dfd);
	close(pfd);
	kid_kill(&k);
	tdaemon_close(&d);
}

/*
 * Each of the five ioctls through a delegate, for another client: -EPERM
 * and nothing done; for its own client they work.
 */
TEST(other_client_eperm)
{
	uint64_t ids[3];
	struct tdaemon d;
	struct kid a, b;
	char st[32];
	int dfd;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &a));
	ASSERT_EQ(0, kid_open(&d, &b));
	dfd = delegate_fd(d.fd, a.id);
	ASSERT_GE(dfd, 0);

	EXPECT_EQ(-EPERM, do_accept(dfd, b.id));
	EXPECT_EQ(0, kstate(b.id, st, sizeof(st)));
	EXPECT_STREQ("pending", st);
	EXPECT_EQ(-ETIMEDOUT, kid_answer(&b, 100));
	EXPECT_EQ(-EPERM, do_disconnect(dfd, b.id));
	EXPECT_EQ(0, kstate(b.id, st, sizeof(st)));
	EXPECT_STREQ("pending", st);
	EXPECT_EQ(-EPERM, do_accept(dfd, 999999));

	/* its own client */
	EXPECT_EQ(0, do_accept(dfd, a.id));
	EXPECT_EQ(0, kid_answer(&a, 5000));
	EXPECT_EQ(-EALREADY, do_accept(dfd, a.id));
	ASSERT_EQ(0, do_accept(d.fd, b.id));
	EXPECT_EQ(0, kid_answer(&b, 5000));

	EXPECT_EQ(-EPERM, do_charge(dfd, b.id, 4096, true));
	EXPECT_EQ(0, charged(b.id));
	ASSERT_EQ(0, do_charge(d.fd, b.id, 4096, true));
	EXPECT_EQ(-EPERM, do_charge(dfd, b.id, 4096, false));
	EXPECT_EQ(4096, charged(b.id));
	EXPECT_EQ(0, do_charge(dfd, a.id, 8192, true));
	EXPECT_EQ(8192, charged(a.id));
	EXPECT_EQ(0, do_charge(dfd, a.id, 4096, false));
	EXPECT_EQ(4096, charged(a.id));
	EXPECT_EQ(-EINVAL, do_charge(dfd, a.id, 4097, false));

	/* NOTIFY: any listed id but its own refuses the whole call */
	ids[0] = a.id;
	ids[1] = b.id;
	EXPECT_EQ(-EPERM, do_notify(dfd, ids, 2));
	ids[1] = a.id;
	ids[2] = a.id;
	EXPECT_EQ(3, do_notify(dfd, ids, 3));
	EXPECT_EQ(0, do_notify(dfd, ids, 0));

	EXPECT_EQ(0, do_disconnect(dfd, a.id));
	EXPECT_EQ(0, kstate(a.id, st, sizeof(st)));
	EXPECT_STREQ("dead", st);
	EXPECT_EQ(0, charged(a.id));
	EXPECT_EQ(-EALREADY, do_disconnect(dfd, a.id));
	/* a dead client woken through its delegate counts for nothing */
	EXPECT_EQ(0, do_notify(dfd, ids, 1));
	EXPECT_EQ(0, kstate(b.id, st, sizeof(st)));
	EXPECT_STREQ("active", st);
	EXPECT_EQ(4096, charged(b.id));
	close(dfd);
	kid_kill(&a);
	kid_kill(&b);
	tdaemon_close(&d);
}

/* One live delegate per client; PENDING or ACTIVE only; maps the region. */
TEST(one_delegate)
{
	struct tdaemon d;
	struct kid k;
	int d1, d2, pfd;
	void *p;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &k));
	d1 = delegate_fd(d.fd, k.id);
	ASSERT_GE(d1, 0);
	EXPECT_EQ(-EBUSY, delegate_fd(d.fd, k.id));
	/* a plain fd is no delegate */
	pfd = plain_fd(d.fd, k.id);
	EXPECT_GE(pfd, 0);
	close(pfd);
	/* maps with the daemon's permissions, as a plain client fd */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, d1,
		 AXON_OFF_DAEMON_PAGE);
	EXPECT_NE(MAP_FAILED, p);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, d1,
		 AXON_OFF_CLIENT_PAGE);
	EXPECT_EQ(MAP_FAILED, p);
	close(d1);
	/* closed, another may be made */
	d2 = delegate_fd(d.fd, k.id);
	ASSERT_GE(d2, 0);
	EXPECT_EQ(-EBUSY, delegate_fd(d.fd, k.id));
	close(d2);
	/* a dead client has none */
	EXPECT_EQ(0, do_disconnect(d.fd, k.id));
	EXPECT_EQ(-ENOENT, delegate_fd(d.fd, k.id));
	EXPECT_EQ(-ENOENT, delegate_fd(d.fd, 999999));
	kid_kill(&k);
	tdaemon_close(&d);
}

/*
 * From delegation on, the client's doorbells go to the delegate (one
 * coalesced record with the client's identity) and not to the daemon; a
 * doorbell the daemon had not read yet moves over with the delegation.
 */
TEST(doorbell_to_delegate)
{
	struct axon_event ev, evs[2];
	struct tdaemon d;
	struct kid k;
	int dfd, fl;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &k));
	ASSERT_EQ(0, do_accept(d.fd, k.id));
	ASSERT_EQ(0, kid_answer(&k, 5000));
	/* rung before delegation, not read by the daemon */
	ASSERT_EQ(0, kid_ring(&k));
	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	EXPECT_TRUE(daemon_quiet(&d));
	EXPECT_EQ(POLLIN, poll_now(dfd));
	ASSERT_EQ(1, fd_event(dfd, &ev, 1000));
	EXPECT_EQ(AXON_EV_DOORBELL, ev.events);

	/* two rings, one record, for the delegate alone */
	ASSERT_EQ(0, kid_ring(&k));
	ASSERT_EQ(0, kid_ring(&k));
	ASSERT_EQ(1, fd_event(dfd, &ev, 1000));
	EXPECT_EQ(k.id, ev.client_id);
	EXPECT_EQ(AXON_EV_DOORBELL, ev.events);
	EXPECT_EQ(AXON_KSTATE_ACTIVE, ev.state);
	EXPECT_EQ(k.pid, ev.pid);
	EXPECT_EQ(0, ev.uid);
	EXPECT_NE(0, ev.cgroup_id);
	EXPECT_STREQ("delegate_test", ev.comm);
	EXPECT_TRUE(daemon_quiet(&d));
	EXPECT_EQ(0, poll_now(dfd));
	fl = fcntl(dfd, F_GETFL);
	ASSERT_EQ(0, fcntl(dfd, F_SETFL, fl | O_NONBLOCK));
	EXPECT_EQ(-1, read(dfd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, kid_ring(&k));
	EXPECT_EQ(-1, read(dfd, &ev, sizeof(ev) - 1));
	EXPECT_EQ(EINVAL, errno);
	/* the short read took nothing; a long one takes exactly one record */
	EXPECT_EQ(sizeof(evs[0]), read(dfd, evs, sizeof(evs)));
	EXPECT_EQ(AXON_EV_DOORBELL, evs[0].events);
	EXPECT_TRUE(daemon_quiet(&d));
	close(dfd);
	kid_kill(&k);
	tdaemon_close(&d);
}

/* GONE reaches both; the delegate then reports EPOLLHUP and EOF. */
TEST(gone_to_both)
{
	struct axon_event ev;
	struct tdaemon d;
	struct kid k;
	int dfd;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &k));
	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(0, do_accept(dfd, k.id));
	ASSERT_EQ(0, kid_answer(&k, 5000));
	ASSERT_EQ(0, kid_ring(&k));
	kid_kill(&k);

	ASSERT_EQ(1, tdaemon_event(&d, &ev, 5000));
	EXPECT_EQ(k.id, ev.client_id);
	EXPECT_EQ(AXON_EV_GONE, ev.events);
	EXPECT_TRUE(daemon_quiet(&d));
	/* before GONE is read: readable, not hung up */
	EXPECT_EQ(POLLIN, poll_now(dfd));
	ASSERT_EQ(1, fd_event(dfd, &ev, 1000));
	EXPECT_EQ(AXON_EV_DOORBELL | AXON_EV_GONE, ev.events);
	EXPECT_EQ(AXON_KSTATE_GONE, ev.state);
	EXPECT_EQ(k.id, ev.client_id);
	EXPECT_EQ(POLLHUP, poll_now(dfd));
	EXPECT_EQ(0, read(dfd, &ev, sizeof(ev)));
	/* the ioctls on a gone client answer as the daemon's do */
	EXPECT_EQ(-ENOENT, do_accept(dfd, k.id));
	EXPECT_EQ(-ENOENT, do_charge(dfd, k.id, 1, true));
	close(dfd);
	tdaemon_close(&d);
}

/*
 * The daemon closes: the client is an orphan, the delegate is cut off
 * (-ENOTCONN, EPOLLHUP, EOF after what was pending). A new daemon may
 * delegate the client again once it has accepted it.
 */
TEST(daemon_close_cuts_off)
{
	uint64_t ids[1];
	struct axon_event ev;
	struct tdaemon d;
	struct kid k;
	char st[32];
	int dfd, d2;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &k));
	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(0, do_accept(dfd, k.id));
	ASSERT_EQ(0, kid_answer(&k, 5000));
	ASSERT_EQ(0, do_charge(dfd, k.id, 4096, true));
	ASSERT_EQ(0, kid_ring(&k));
	tdaemon_close(&d);

	EXPECT_EQ(0, kstate(k.id, st, sizeof(st)));
	EXPECT_STREQ("orphan", st);
	EXPECT_EQ(0, charged(k.id));
	ids[0] = k.id;
	EXPECT_EQ(-ENOTCONN, do_accept(dfd, k.id));
	EXPECT_EQ(-ENOTCONN, do_charge(dfd, k.id, 1, true));
	EXPECT_EQ(-ENOTCONN, do_charge(dfd, k.id, 1, false));
	EXPECT_EQ(-ENOTCONN, do_notify(dfd, ids, 1));
	EXPECT_EQ(-ENOTCONN, do_disconnect(dfd, k.id));
	EXPECT_EQ(0, kstate(k.id, st, sizeof(st)));
	EXPECT_STREQ("orphan", st);
	EXPECT_EQ(0, charged(k.id));
	/* what was pending is still read, then EOF */
	EXPECT_EQ(POLLIN | POLLHUP, poll_now(dfd));
	ASSERT_EQ(1, fd_event(dfd, &ev, 1000));
	EXPECT_EQ(AXON_EV_DOORBELL, ev.events);
	EXPECT_EQ(AXON_KSTATE_ORPHAN, ev.state);
	EXPECT_EQ(POLLHUP, poll_now(dfd));
	EXPECT_EQ(0, read(dfd, &ev, sizeof(ev)));
	/* the client rings an absent daemon: nothing reaches the delegate */
	EXPECT_EQ(-ECONNRESET, kid_ring(&k));
	EXPECT_EQ(0, read(dfd, &ev, sizeof(ev)));

	/* a new daemon: no delegate of an orphan, then one once accepted */
	ASSERT_EQ(1, tdaemon_attach(&d));
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 1000));
	EXPECT_EQ(AXON_EV_EXISTING, ev.events);
	EXPECT_EQ(-ENOENT, delegate_fd(d.fd, k.id));
	ASSERT_EQ(0, do_accept(d.fd, k.id));
	d2 = delegate_fd(d.fd, k.id);
	EXPECT_GE(d2, 0);
	EXPECT_EQ(-ENOTCONN, do_charge(dfd, k.id, 1, true));
	EXPECT_EQ(0, do_charge(d2, k.id, 1, true));
	close(d2);
	close(dfd);
	kid_kill(&k);
	tdaemon_close(&d);
}

/*
 * The delegate closes while its client lives: the daemon gets one DOORBELL
 * at once (for what was rung and never read) and every doorbell after.
 */
TEST(close_returns_doorbells)
{
	struct axon_event ev;
	struct tdaemon d;
	struct kid k;
	int dfd;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &k));
	ASSERT_EQ(0, do_accept(d.fd, k.id));
	ASSERT_EQ(0, kid_answer(&k, 5000));
	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(0, kid_ring(&k));
	EXPECT_TRUE(daemon_quiet(&d));
	close(dfd);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 1000));
	EXPECT_EQ(k.id, ev.client_id);
	EXPECT_EQ(AXON_EV_DOORBELL, ev.events);
	EXPECT_TRUE(daemon_quiet(&d));
	ASSERT_EQ(0, kid_ring(&k));
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 1000));
	EXPECT_EQ(AXON_EV_DOORBELL, ev.events);
	/* a closed delegate that had read everything: one DOORBELL still */
	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(0, kid_ring(&k));
	ASSERT_EQ(1, fd_event(dfd, &ev, 1000));
	close(dfd);
	ASSERT_EQ(1, tdaemon_event(&d, &ev, 1000));
	EXPECT_EQ(AXON_EV_DOORBELL, ev.events);
	kid_kill(&k);
	tdaemon_close(&d);
}

/* ---- SCM_RIGHTS to another uid ----------------------------------------- */

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b = 'd';
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * The worker: uid 65534, no capabilities, no daemon fd; it is handed the
 * delegate and accepts, maps, charges and reads doorbells through it.
 */
static int worker(int sock, uint64_t id)
{
	struct axon_daemon_page *dp;
	struct axon_event ev;
	uint64_t other = id + 1000;
	int dfd;

	if (setgid(65534) || setuid(65534))
		return 10;
	dfd = recv_fd(sock);
	if (dfd < 0)
		return 11;
	if (do_accept(dfd, other) != -EPERM)
		return 12;
	if (do_accept(dfd, id))
		return 13;
	dp = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, dfd,
		  AXON_OFF_DAEMON_PAGE);
	if (dp == MAP_FAILED)
		return 14;
	if (do_charge(dfd, id, 4096, true))
		return 15;
	/* tell the parent, wait for the ring */
	if (write(sock, "a", 1) != 1)
		return 16;
	if (fd_event(dfd, &ev, 5000) != 1 || ev.client_id != id ||
	    ev.events != AXON_EV_DOORBELL || ev.uid != 0)
		return 17;
	munmap(dp, 4096);
	return 0;
}

TEST(scm_rights_other_uid)
{
	struct tdaemon d;
	struct kid k;
	int sv[2], st, dfd;
	pid_t w;
	char b;

	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open(&d, &k));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	w = fork();
	ASSERT_GE(w, 0);
	if (w == 0) {
		close(sv[0]);
		close(d.fd);
		_exit(worker(sv[1], k.id));
	}
	close(sv[1]);
	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(0, send_fd(sv[0], dfd));
	close(dfd);	/* the worker's copy is the delegate now */
	/* the PENDING client's SETUP returns: the worker accepted it */
	EXPECT_EQ(0, kid_answer(&k, 5000));
	ASSERT_EQ(1, read(sv[0], &b, 1));
	EXPECT_EQ(4096, charged(k.id));
	EXPECT_EQ(0, kid_ring(&k));
	ASSERT_EQ(w, waitpid(w, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* the worker is gone, so is the delegate: doorbells are ours again */
	{
		struct axon_event ev;

		ASSERT_EQ(1, tdaemon_event(&d, &ev, 1000));
		EXPECT_EQ(AXON_EV_DOORBELL, ev.events);
	}
	close(sv[0]);
	kid_kill(&k);
	tdaemon_close(&d);
}

/* ---- the cgroup limit -------------------------------------------------- */

TEST(charge_past_limit)
{
	struct tdaemon d;
	struct kid k;
	int dfd;

	ASSERT_EQ(0, access(CG "/cgroup.procs", F_OK));
	rmdir(CG "/axdel");
	ASSERT_EQ(0, mkdir(CG "/axdel", 0755));
	ASSERT_EQ(0, genl_set_limit("/axdel", 3 * 4096));
	ASSERT_EQ(0, tdaemon_attach(&d));
	ASSERT_EQ(0, kid_open_in(&d, &k, "/axdel"));
	dfd = delegate_fd(d.fd, k.id);
	ASSERT_GE(dfd, 0);
	ASSERT_EQ(0, do_accept(dfd, k.id));
	ASSERT_EQ(0, kid_answer(&k, 5000));
	EXPECT_EQ(0, do_charge(dfd, k.id, 2 * 4096, true));
	EXPECT_EQ(-EDQUOT, do_charge(dfd, k.id, 2 * 4096, true));
	EXPECT_EQ(2 * 4096, charged(k.id));
	EXPECT_EQ(0, do_charge(dfd, k.id, 4096, true));
	EXPECT_EQ(-EDQUOT, do_charge(dfd, k.id, 1, true));
	EXPECT_EQ(0, do_charge(dfd, k.id, 4096, false));
	EXPECT_EQ(0, do_charge(dfd, k.id, 1, true));
	EXPECT_EQ(2 * 4096 + 1, charged(k.id));
	close(dfd);
	kid_kill(&k);
	tdaemon_close(&d);
	genl_set_limit("/axdel", AXON_LIMIT_NONE);
	EXPECT_EQ(0, rmdir(CG "/axdel"));
}

/* ---- the race ---------------------------------------------------------- */

#define RACE_NS		(3 * NSEC_PER_SEC)
#define RACE_CLIENTS	6

/* A client that rings until it is killed or its daemon goes away. */
static pid_t ringer(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct tclient c;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_inherited_fds(-1);
		srand(getpid());
		if (tclient_open(&c) || tclient_setup(&c, 8, 4096))
			_exit(0);
		for (;;) {
			int ret = tclient_enter(&c, 1, 0, 0, 0);

			if (ret < 0)
				_exit(ret == -ECONNRESET || ret == -EPIPE ? 0 : 1);
			usleep(rand() % 500);
		}
	}
	return pid;
}

struct racer {
	int fd;
	uint64_t id;
	unsigned int seed;
	int bad;	/* an undocumented error */
	pthread_t t;
};

static void race_ops(struct racer *r)
{
	struct axon_event ev;
	uint64_t ids[2] = { r->id, r->id };
	int i, ret;

	for (i = 0; i < 200; i++) {
		switch (rand_r(&r->seed) % 5) {
		case 0:
			ret = do_accept(r->fd, r->id);
			if (ret && ret != -EALREADY && ret != -ENOENT &&
			    ret != -ENOTCONN && ret != -EINVAL)
				r->bad = ret;
			break;
		case 1:
			ret = do_charge(r->fd, r->id, 4096, true);
			if (ret && ret != -ENOENT && ret != -ENOTCONN)
				r->bad = ret;
			break;
		case 2:
			ret = do_notify(r->fd, ids, 2);
			if (ret < 0 && ret != -ENOTCONN)
				r->bad = ret;
			break;
		case 3:
			ret = fd_event(r->fd, &ev, 1);
			if (ret < 0 && ret != -EPIPE)
				r->bad = ret;
			if (ret == -EPIPE)
				return;
			break;
		default:
			if (rand_r(&r->seed) % 8 == 0)
				return;
			usleep(rand_r(&r->seed) % 300);
		}
	}
}

/*
 * Drives one delegate until it is cut off, its client is gone, or a coin
 * says stop, then closes it: before, during or after the detach.
 */
static void *race_delegate(void *arg)
{
	struct racer *r = arg;

	race_ops(r);
	close(r->fd);
	return NULL;
}

TEST(race_close_exit_detach)
{
	uint64_t end = now_ns() + RACE_NS;
	unsigned int seed = 1;
	int rounds = 0, delegated = 0;

	while (now_ns() < end) {
		struct racer r[RACE_CLIENTS];
		pid_t kids[RACE_CLIENTS];
		struct axon_event ev;
		struct tdaemon d;
		int i, n = 0, ret;

		ASSERT_LE(0, tdaemon_attach(&d));
		for (i = 0; i < RACE_CLIENTS; i++)
			kids[i] = ringer();
		/* delegate each client as it opens, some of them accepted */
		while (n < RACE_CLIENTS && (ret = tdaemon_event(&d, &ev, 500)) > 0) {
			if (!(ev.events & (AXON_EV_OPEN | AXON_EV_EXISTING)) ||
			    ev.state != AXON_KSTATE_PENDING)
				continue;
			r[n].id = ev.client_id;
			r[n].fd = delegate_fd(d.fd, ev.client_id);
			r[n].seed = seed++;
			r[n].bad = 0;
			if (r[n].fd < 0) {
				/* only a client that died meanwhile has none */
				EXPECT_EQ(-ENOENT, r[n].fd);
				continue;
			}
			if (rand_r(&seed) % 2)
				do_accept(d.fd, ev.client_id);
			ASSERT_EQ(0, pthread_create(&r[n].t, NULL,
						    race_delegate, &r[n]));
			n++;
		}
		delegated += n;
		/* meanwhile: clients killed, the daemon detached */
		usleep(rand_r(&seed) % 2000);
		for (i = 0; i < RACE_CLIENTS; i++)
			if (rand_r(&seed) % 2)
				kill(kids[i], SIGKILL);
		usleep(rand_r(&seed) % 2000);
		tdaemon_close(&d);
		for (i = 0; i < n; i++) {
			pthread_join(r[i].t, NULL);
			EXPECT_EQ(0, r[i].bad);
		}
		for (i = 0; i < RACE_CLIENTS; i++) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
		}
		rounds++;
	}
	EXPECT_GT(rounds, 0);
	EXPECT_GT(delegated, rounds);
	/* nothing is left behind: a fresh daemon finds no client */
	{
		struct tdaemon d;

		EXPECT_EQ(0, tdaemon_attach(&d));
		tdaemon_close(&d);
	}
}

TEST_HARNESS_MAIN
