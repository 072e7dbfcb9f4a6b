// SPDX-License-Identifier: GPL-2.0
/*
 * Device-memory charges through the kernel's dmem cgroup controller
 * (charge_dmem.c), on kernels with CONFIG_CGROUP_DMEM (the current
 * kernel's VM; skipped elsewhere): with the dmem_capacity parameter set,
 * a client reserves whole units in its own process, charged to its cgroup
 * of the moment against dmem.max; the daemon's charges consume them and
 * cannot pass them; uncharges and the client's end give them back to
 * dmem, so that dmem.current of every cgroup is exact.
 *
 * This process is the daemon, in the root cgroup; each client is a child
 * driven through a pipe, because dmem charges the calling process's cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#define CG	"/sys/fs/cgroup"
#define MiB	(1ULL << 20)
#define UNIT	AXON_RESERVE_UNIT

/* The "axon" line of a cgroup's dmem file (current, max), -1 if none. */
static long long dmem_value(const char *cg, const char *file)
{
	char path[256], buf[4096], *line, *save = NULL;

	snprintf(path, sizeof(path), CG "%s/dmem.%s", cg, file);
	if (read_file(path, buf, sizeof(buf)) < 0)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "axon ", 5))
			continue;
		return strcmp(line + 5, "max") ? atoll(line + 5) : -2;
	}
	return -1;
}

static int dmem_max(const char *cg, const char *v)
{
	char path[256], line[64];

	snprintf(path, sizeof(path), CG "%s/dmem.max", cg);
	snprintf(line, sizeof(line), "axon %s", v);
	return write_file(path, line);
}

/* The client's bytes charged by the module's own counters. */
static long long client_charged(uint64_t id)
{
	char buf[64];

	if (proc_field("clients", id, "id", "charged", buf, sizeof(buf)))
		return -1;
	return atoll(buf);
}

/* ---- a client in a child process, driven through a pipe ---------------- */

struct rcmd {
	char op;		/* 'r' reserve, 'f' release, 'e' bad input, 'q' */
	uint64_t bytes;
	uint32_t flags, resv;
};

struct rans {
	int ret;
	uint64_t reserved, used;
};

struct rclient {
	pid_t pid;
	int cmd, ans;
	uint64_t id;
};

static void rclient_body(int cmd, int ans, const char *cg)
{
	struct tclient c;
	struct rcmd m;
	struct rans a;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (cg_move(cg, getpid()) || tclient_open(&c) ||
	    tclient_setup(&c, 4, 4096))
		_exit(1);
	a.ret = 0;
	if (write(ans, &a, sizeof(a)) != sizeof(a))
		_exit(1);
	while (read(cmd, &m, sizeof(m)) == sizeof(m) && m.op != 'q') {
		struct axon_reserve r = {
			.bytes = m.bytes, .flags = m.flags, .resv = m.resv,
		};

		a.ret = ioctl(c.fd, AXON_IOC_RESERVE, &r) < 0 ? -errno : 0;
		a.reserved = r.reserved;
		a.used = r.used;
		if (write(ans, &a, sizeof(a)) != sizeof(a))
			_exit(1);
	}
	_exit(0);
}

/* Starts a client in cg and accepts it; 0 or -1. */
static int rclient_start(struct rclient *r, struct tdaemon *d, const char *cg)
{
	int cp[2], ap[2];
	struct axon_event ev;
	struct rans a;

	if (pipe(cp) || pipe(ap))
		return -1;
	r->pid = fork();
	if (r->pid < 0)
		return -1;
	if (r->pid == 0) {
		close(cp[1]);
		close(ap[0]);
		close(d->fd);
		rclient_body(cp[0], ap[1], cg);
	}
	close(cp[0]);
	close(ap[1]);
	r->cmd = cp[1];
	r->ans = ap[0];
	/* its SETUP waits for us */
	if (tdaemon_event(d, &ev, 5000) != 1 || tdaemon_handle(d, &ev))
		return -1;
	r->id = ev.client_id;
	if (read(r->ans, &a, sizeof(a)) != sizeof(a) || a.ret)
		return -1;
	return 0;
}

static struct rans rclient_do(struct rclient *r, char op, uint64_t bytes,
			      uint32_t flags, uint32_t resv)
{
	struct rcmd m = { .op = op, .bytes = bytes, .flags = flags, .resv = resv };
	struct rans a = { .ret = -EPIPE };

	if (write(r->cmd, &m, sizeof(m)) != sizeof(m) ||
	    read(r->ans, &a, sizeof(a)) != sizeof(a))
		a.ret = -EPIPE;
	return a;
}

static struct rans rclient_reserve(struct rclient *r, uint64_t bytes)
{
	return rclient_do(r, 'r', bytes, 0, 0);
}

static void rclient_end(struct rclient *r)
{
	if (r->pid <= 0)
		return;
	kill(r->pid, SIGKILL);
	waitpid(r->pid, NULL, 0);
	close(r->cmd);
	close(r->ans);
	r->pid = 0;
}

/* ---- the fixture ---------------------------------------------------- */

static void cg_cleanup(void)
{
	static const char *const dirs[] = { "/axd/a", "/axd/b", "/axd" };

	cg_reset(dirs, sizeof(dirs) / sizeof(dirs[0]));
}

FIXTURE(dm) {
	struct tdaemon d;
	bool on;
};

FIXTURE_SETUP(dm)
{
	char ctl[256];

	self->on = false;
	if (access(CG "/cgroup.procs", F_OK) ||
	    read_file(CG "/cgroup.controllers", ctl, sizeof(ctl)) < 0 ||
	    !strstr(ctl, "dmem"))
		SKIP(return, "no dmem cgroup controller (CONFIG_CGROUP_DMEM, 6.14+)");
	ASSERT_EQ(0, set_param("dmem_capacity", "64G"));
	self->on = true;
	cg_cleanup();
	ASSERT_EQ(0, write_file(CG "/cgroup.subtree_control", "+dmem"));
	ASSERT_EQ(0, mkdir(CG "/axd", 0755));
	ASSERT_EQ(0, write_file(CG "/axd/cgroup.subtree_control", "+dmem"));
	ASSERT_EQ(0, mkdir(CG "/axd/a", 0755));
	ASSERT_EQ(0, mkdir(CG "/axd/b", 0755));
	ASSERT_EQ(0, tdaemon_attach(&self->d));
}

/* The harness runs a test's body even after its setup skipped. */
#define NEED_DMEM()							\
	do {								\
		if (!self->on)						\
			SKIP(return, "no dmem cgroup controller");	\
	} while (0)

FIXTURE_TEARDOWN(dm)
{
	if (!self->on)
		return;
	tdaemon_close(&self->d);
	cg_cleanup();
	EXPECT_EQ(0, set_param("dmem_capacity", "0"));
}

/*
 * The region is there; reservations are whole units in the client's
 * cgroup and its ancestors; the daemon's charges consume them and stop at
 * them (nothing charged); uncharges give units back to dmem; the end of
 * the client gives back everything.
 */
TEST_F(dm, reserve_consume_give_back)
{
	char cap[256];
	struct rclient r;
	struct rans a;

	NEED_DMEM();
	ASSERT_LE(0, read_file(CG "/dmem.capacity", cap, sizeof(cap)));
	EXPECT_NE(NULL, strstr(cap, "axon 68719476736"));
	ASSERT_EQ(0, rclient_start(&r, &self->d, "/axd/a"));
	EXPECT_EQ(0, dmem_value("/axd/a", "current"));

	/* nothing reserved: nothing can be charged */
	EXPECT_EQ(-ENOBUFS, tdaemon_charge(&self->d, r.id, 1, true));
	EXPECT_EQ(0, client_charged(r.id));

	a = rclient_reserve(&r, 3 * MiB);	/* rounded up: 2 units */
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(2 * UNIT, a.reserved);
	EXPECT_EQ(0, a.used);
	EXPECT_EQ(2 * UNIT, dmem_value("/axd/a", "current"));
	EXPECT_EQ(2 * UNIT, dmem_value("/axd", "current"));
	EXPECT_EQ(0, dmem_value("/axd/b", "current"));

	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 1 * MiB, true));
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 3 * MiB, true));
	/* one byte past the reservation: refused, nothing charged */
	EXPECT_EQ(-ENOBUFS, tdaemon_charge(&self->d, r.id, 1, true));
	EXPECT_EQ(4 * MiB, client_charged(r.id));
	a = rclient_reserve(&r, 0);
	EXPECT_EQ(0, a.reserved);
	EXPECT_EQ(2 * UNIT, a.used);
	EXPECT_EQ(2 * UNIT, dmem_value("/axd/a", "current"));

	/* a unit freed goes back to dmem, not to the reservation */
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 2 * MiB, false));
	EXPECT_EQ(UNIT, dmem_value("/axd/a", "current"));
	a = rclient_reserve(&r, 0);
	EXPECT_EQ(0, a.reserved);
	EXPECT_EQ(UNIT, a.used);
	/* part of a unit freed keeps the unit */
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 1 * MiB, false));
	EXPECT_EQ(UNIT, dmem_value("/axd/a", "current"));
	EXPECT_EQ(-EINVAL, tdaemon_charge(&self->d, r.id, 2 * MiB, false));

	/* the unconsumed reservation can be given back */
	a = rclient_reserve(&r, 4 * UNIT);
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(5 * UNIT, dmem_value("/axd/a", "current"));
	a = rclient_do(&r, 'f', 3 * UNIT + 1, AXON_RESERVE_F_RELEASE, 0);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(UNIT, a.reserved);
	EXPECT_EQ(2 * UNIT, dmem_value("/axd/a", "current"));

	/* the end of the client: everything back */
	rclient_end(&r);
	tdaemon_loop(&self->d, 200);
	EXPECT_EQ(0, dmem_value("/axd/a", "current"));
	EXPECT_EQ(0, dmem_value("/axd", "current"));
}

/* dmem.max of the cgroup or an ancestor refuses a reservation whole. */
TEST_F(dm, dmem_max_refuses)
{
	struct rclient r, s;
	struct rans a;

	NEED_DMEM();
	ASSERT_EQ(0, dmem_max("/axd/a", "8388608"));	/* 4 units */
	ASSERT_EQ(0, dmem_max("/axd", "10485760"));	/* 5 units */
	ASSERT_EQ(0, rclient_start(&r, &self->d, "/axd/a"));
	ASSERT_EQ(0, rclient_start(&s, &self->d, "/axd/b"));

	a = rclient_reserve(&r, 3 * UNIT);
	ASSERT_EQ(0, a.ret);
	/* 2 more would pass a's 4 units: none of them is kept */
	a = rclient_reserve(&r, 5 * UNIT);
	EXPECT_EQ(-EDQUOT, a.ret);
	EXPECT_EQ(3 * UNIT, a.reserved);
	EXPECT_EQ(3 * UNIT, dmem_value("/axd/a", "current"));
	a = rclient_reserve(&r, 4 * UNIT);
	EXPECT_EQ(0, a.ret);
	/* a top-up to what is there reserves nothing more */
	a = rclient_reserve(&r, 4 * UNIT);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(4 * UNIT, dmem_value("/axd/a", "current"));
	/* the sibling runs into the parent's 5 */
	a = rclient_reserve(&s, 2 * UNIT);
	EXPECT_EQ(-EDQUOT, a.ret);
	EXPECT_EQ(0, a.reserved);
	a = rclient_reserve(&s, UNIT);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(5 * UNIT, dmem_value("/axd", "current"));
	/* so the daemon cannot charge past the limit for either */
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 4 * UNIT, true));
	EXPECT_EQ(-ENOBUFS, tdaemon_charge(&self->d, r.id, 1, true));
	EXPECT_EQ(0, tdaemon_charge(&self->d, s.id, UNIT, true));
	EXPECT_EQ(-ENOBUFS, tdaemon_charge(&self->d, s.id, 1, true));
	/* freeing in one makes room for the other */
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, UNIT, false));
	a = rclient_reserve(&s, UNIT);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(0, tdaemon_charge(&self->d, s.id, UNIT, true));
	rclient_end(&r);
	rclient_end(&s);
	tdaemon_loop(&self->d, 200);
	EXPECT_EQ(0, dmem_value("/axd", "current"));
}

/*
 * The floor: units an uncharge frees stay reserved while the reservation
 * is below it (the client allocates again without reserving), and go back
 * to dmem above it; the daemon's detach keeps them the same way; the end
 * of the client gives everything back.
 */
TEST_F(dm, floor)
{
	struct rclient r;
	struct rans a;

	NEED_DMEM();
	ASSERT_EQ(0, rclient_start(&r, &self->d, "/axd/a"));
	a = rclient_do(&r, 'f', 3 * UNIT - 1, AXON_RESERVE_F_FLOOR, 0);
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(0, a.reserved);
	a = rclient_reserve(&r, 4 * UNIT);
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 4 * UNIT, true));
	/* freed: three back to the reservation (the floor), one to dmem */
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 4 * UNIT, false));
	a = rclient_reserve(&r, 0);
	EXPECT_EQ(3 * UNIT, a.reserved);
	EXPECT_EQ(0, a.used);
	EXPECT_EQ(3 * UNIT, dmem_value("/axd/a", "current"));
	/* allocated again without a reservation */
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 3 * UNIT, true));
	EXPECT_EQ(-ENOBUFS, tdaemon_charge(&self->d, r.id, 1, true));
	/* the detach gives consumed units back to the reservation too */
	tdaemon_close(&self->d);
	a = rclient_reserve(&r, 0);
	EXPECT_EQ(3 * UNIT, a.reserved);
	EXPECT_EQ(0, a.used);
	EXPECT_EQ(3 * UNIT, dmem_value("/axd/a", "current"));
	/* a lower floor keeps what is reserved; a release gives it back */
	a = rclient_do(&r, 'f', 0, AXON_RESERVE_F_FLOOR, 0);
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(3 * UNIT, a.reserved);
	a = rclient_do(&r, 'f', ~0ULL, AXON_RESERVE_F_RELEASE, 0);
	EXPECT_EQ(0, a.reserved);
	EXPECT_EQ(0, dmem_value("/axd/a", "current"));
	rclient_end(&r);
	ASSERT_EQ(0, tdaemon_attach(&self->d));
}

/*
 * memcg's rule: a client that moved reserves in its new cgroup; what it
 * reserved before stays where it was; consumed units go back most
 * recently reserved first.
 */
TEST_F(dm, follows_the_cgroup)
{
	struct rclient r;
	struct rans a;

	NEED_DMEM();
	ASSERT_EQ(0, rclient_start(&r, &self->d, "/axd/a"));
	a = rclient_reserve(&r, UNIT);
	ASSERT_EQ(0, a.ret);
	ASSERT_EQ(0, cg_move("/axd/b", r.pid));
	a = rclient_reserve(&r, 2 * UNIT);
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(UNIT, dmem_value("/axd/a", "current"));
	EXPECT_EQ(UNIT, dmem_value("/axd/b", "current"));
	EXPECT_EQ(2 * UNIT, dmem_value("/axd", "current"));
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 2 * UNIT, true));
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, UNIT, false));
	EXPECT_EQ(UNIT, dmem_value("/axd/a", "current"));
	EXPECT_EQ(0, dmem_value("/axd/b", "current"));
	rclient_end(&r);
	tdaemon_loop(&self->d, 200);
	EXPECT_EQ(0, dmem_value("/axd", "current"));
}

/*
 * Hostile input: bad flags or reserved bits, a size past the per-client
 * bound; a process other than the opener (dmem would charge its cgroup);
 * the daemon's detach gives back what was consumed and leaves the
 * reservation, which the client still owns.
 */
TEST_F(dm, refusals)
{
	struct rclient r;
	struct rans a;

	NEED_DMEM();
	ASSERT_EQ(0, rclient_start(&r, &self->d, "/axd/a"));
	EXPECT_EQ(-EINVAL, rclient_do(&r, 'e', UNIT, 0x4, 0).ret);
	EXPECT_EQ(-EINVAL, rclient_do(&r, 'e', UNIT, AXON_RESERVE_F_RELEASE |
				      AXON_RESERVE_F_FLOOR, 0).ret);
	EXPECT_EQ(-EINVAL, rclient_do(&r, 'e', UNIT, 0, 1).ret);
	a = rclient_reserve(&r, UINT64_MAX);
	EXPECT_EQ(-EDQUOT, a.ret);
	EXPECT_EQ(0, a.reserved);
	a = rclient_reserve(&r, (1ULL << 40) + 1);
	EXPECT_EQ(-EDQUOT, a.ret);
	EXPECT_EQ(0, dmem_value("/axd/a", "current"));

	/* an fd inherited by another process */
	{
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct tclient c;
			struct axon_reserve rv = { .bytes = UNIT };
			int fd, err;

			/* a fresh client, used from a child of its opener */
			if (tclient_open(&c))
				_exit(10);
			fd = c.fd;
			pid = fork();
			if (pid == 0) {
				err = ioctl(fd, AXON_IOC_RESERVE, &rv) < 0 ? errno : 0;
				_exit(err == EPERM ? 0 : 11);
			}
			waitpid(pid, &err, 0);
			_exit(WIFEXITED(err) ? WEXITSTATUS(err) : 12);
		}
		{
			int st;

			waitpid(pid, &st, 0);
			EXPECT_TRUE(WIFEXITED(st));
			EXPECT_EQ(0, WEXITSTATUS(st));
		}
	}

	/* the region cannot change while a client holds it */
	EXPECT_EQ(-EBUSY, set_param("dmem_capacity", "32G"));

	a = rclient_reserve(&r, 2 * UNIT);
	ASSERT_EQ(0, a.ret);
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, UNIT, true));
	tdaemon_close(&self->d);
	EXPECT_EQ(UNIT, dmem_value("/axd/a", "current"));
	a = rclient_reserve(&r, 0);
	EXPECT_EQ(UNIT, a.reserved);
	EXPECT_EQ(0, a.used);
	rclient_end(&r);
	EXPECT_EQ(0, dmem_value("/axd/a", "current"));
	ASSERT_EQ(0, tdaemon_attach(&self->d));
}

/*
 * Races: a client's threads reserve and give back while the daemon
 * charges and uncharges it, and the client is killed in the middle; no
 * unit may be lost or left: dmem.current is 0 once it is gone. (The
 * kernel's own checks, KASAN and lockdep, are the debug kernel's; this one
 * counts.)
 */
struct racer {
	int fd;
	unsigned int seed;
};

static void *race_reserve(void *arg)
{
	struct racer *r = arg;

	for (;;) {
		struct axon_reserve rv = {
			.bytes = (uint64_t)(rand_r(&r->seed) % 5) * UNIT +
				 rand_r(&r->seed) % 3,
			.flags = rand_r(&r->seed) % 3 ? 0 : AXON_RESERVE_F_RELEASE,
		};

		if (ioctl(r->fd, AXON_IOC_RESERVE, &rv) < 0 &&
		    errno != EDQUOT && errno != ENOENT)
			_exit(20);
	}
	return NULL;
}

TEST_F(dm, races)
{
	struct axon_event ev;
	uint64_t charged = 0, id;
	unsigned int seed = 1;
	int round;

	NEED_DMEM();
	ASSERT_EQ(0, dmem_max("/axd", "67108864"));	/* 32 units */
	for (round = 0; round < 6; round++) {
		uint64_t end = now_ns() + 300000000ULL;
		pid_t pid = fork();

		ASSERT_LE(0, pid);
		if (pid == 0) {
			static struct racer rs[3];
			struct tclient c;
			pthread_t th;
			int i;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			close(self->d.fd);
			if (cg_move(round % 2 ? "/axd/a" : "/axd/b", getpid()) ||
			    tclient_open(&c) || tclient_setup(&c, 4, 4096))
				_exit(1);
			for (i = 0; i < 3; i++) {
				rs[i].fd = c.fd;
				rs[i].seed = i + 1;
				if (pthread_create(&th, NULL, race_reserve, &rs[i]))
					_exit(2);
			}
			/* moves between the two while they run */
			for (;;) {
				usleep(20000);
				cg_move(i++ % 2 ? "/axd/a" : "/axd/b", getpid());
			}
		}
		ASSERT_EQ(1, tdaemon_event(&self->d, &ev, 5000));
		ASSERT_EQ(0, tdaemon_handle(&self->d, &ev));
		id = ev.client_id;
		charged = 0;
		while (now_ns() < end) {
			uint64_t n = (rand_r(&seed) % 3) * MiB + rand_r(&seed) % 4096;
			int ret;

			if (rand_r(&seed) % 2 && n <= charged) {
				ret = tdaemon_charge(&self->d, id, n, false);
				EXPECT_EQ(0, ret);
				if (!ret)
					charged -= n;
			} else {
				ret = tdaemon_charge(&self->d, id, n, true);
				if (!ret)
					charged += n;
				else
					EXPECT_EQ(-ENOBUFS, ret);
			}
			if (round == 5 && now_ns() > end - 150000000ULL)
				break;	/* killed with charges held */
		}
		EXPECT_LE(dmem_value("/axd", "current"), 32 * UNIT);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		tdaemon_loop(&self->d, 100);
		EXPECT_EQ(0, dmem_value("/axd", "current"));
		EXPECT_EQ(0, dmem_value("/axd/a", "current"));
		EXPECT_EQ(0, dmem_value("/axd/b", "current"));
	}
}

/* A client opened before dmem was on keeps the module's counters alone. */
TEST_F(dm, off_before_open)
{
	struct rclient r;
	struct rans a;

	NEED_DMEM();
	ASSERT_EQ(0, set_param("dmem_capacity", "0"));
	ASSERT_EQ(0, rclient_start(&r, &self->d, "/axd/a"));
	ASSERT_EQ(0, set_param("dmem_capacity", "64G"));
	a = rclient_reserve(&r, UNIT);
	EXPECT_EQ(-EOPNOTSUPP, a.ret);
	EXPECT_EQ(0, tdaemon_charge(&self->d, r.id, 3 * UNIT, true));
	EXPECT_EQ(0, dmem_value("/axd/a", "current"));
	rclient_end(&r);
	tdaemon_loop(&self->d, 200);
}

TEST_HARNESS_MAIN
