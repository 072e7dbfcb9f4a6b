// SPDX-License-Identifier: GPL-2.0
/* Helpers for the /dev/axon selftests; see axon_test.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "axon_test.h"

#define load_acquire(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define full_barrier()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t off = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (off + 1 < len && (n = read(fd, buf + off, len - 1 - off)) > 0)
		off += n;
	buf[off] = 0;
	close(fd);
	return (int)off;
}

int cg_move(const char *cg, pid_t pid)
{
	char path[256], v[32];

	snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cgroup.procs", cg);
	snprintf(v, sizeof(v), "%d", pid);
	return write_file(path, v);
}

void cg_reset(const char *const *dirs, size_t n)
{
	size_t i;

	cg_move("", getpid());
	for (i = 0; i < n; i++) {
		char path[256];

		snprintf(path, sizeof(path), "/sys/fs/cgroup%s", dirs[i]);
		rmdir(path);
	}
}

int set_param(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/axon/parameters/%s", name);
	return write_file(path, val);
}

/*
 * Finds the row of /proc/axon/<table> whose <key_field> equals key_id and
 * copies its <field>. Returns 0, or -ENOENT.
 */
long proc_field(const char *table, uint64_t key_id, const char *key_field,
		const char *field, char *out, size_t outlen)
{
	char path[64], *buf, *line, *save = NULL;
	int kcol = -1, fcol = -1, col;
	char *tok, *s2;
	long ret = -ENOENT;

	buf = malloc(1 << 16);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/axon/%s", table);
	if (read_file(path, buf, 1 << 16) < 0)
		goto out;
	line = strtok_r(buf, "\n", &save);
	if (!line)
		goto out;
	for (col = 0, tok = strtok_r(line, " ", &s2); tok;
	     tok = strtok_r(NULL, " ", &s2), col++) {
		if (!strcmp(tok, key_field))
			kcol = col;
		if (!strcmp(tok, field))
			fcol = col;
	}
	if (kcol < 0 || fcol < 0)
		goto out;
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *f[32];
		int n = 0;

		for (tok = strtok_r(line, " ", &s2); tok && n < 32;
		     tok = strtok_r(NULL, " ", &s2))
			f[n++] = tok;
		if (n <= kcol || n <= fcol)
			continue;
		if (strtoull(f[kcol], NULL, 0) != key_id)
			continue;
		snprintf(out, outlen, "%s", f[fcol]);
		ret = 0;
		break;
	}
out:
	free(buf);
	return ret;
}

/* ---- client ------------------------------------------------------------ */

int tclient_open(struct tclient *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = open(AXON_DEV, O_RDWR | O_CLOEXEC);
	return c->fd < 0 ? -errno : 0;
}

static void *map_part(int fd, uint64_t off, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);

	return p == MAP_FAILED ? NULL : p;
}

/* The size of each part comes from the socket-style offsets. */
int tclient_map(struct tclient *c)
{
	const struct axon_params *p = &c->p;

	c->cp = map_part(c->fd, AXON_OFF_CLIENT_PAGE, p->off_daemon - p->off_client,
			 PROT_READ | PROT_WRITE);
	c->dp = map_part(c->fd, AXON_OFF_DAEMON_PAGE, p->off_frontier - p->off_daemon,
			 PROT_READ);
	c->frontier = map_part(c->fd, AXON_OFF_FRONTIER, p->off_sqes - p->off_frontier,
			       PROT_READ);
	c->sqes = map_part(c->fd, AXON_OFF_SQES, p->off_cqes - p->off_sqes,
			   PROT_READ | PROT_WRITE);
	c->cqes = map_part(c->fd, AXON_OFF_CQES, p->off_data - p->off_cqes, PROT_READ);
	c->data = map_part(c->fd, AXON_OFF_DATA, p->data_size, PROT_READ | PROT_WRITE);
	c->info = map_part(c->fd, AXON_OFF_INFO, sizeof(struct axon_info), PROT_READ);
	if (!c->cp || !c->dp || !c->frontier || !c->sqes || !c->cqes || !c->data ||
	    !c->info)
		return -errno;
	c->sq_tail = c->cp->sq_tail;
	return 0;
}

int tclient_setup(struct tclient *c, uint32_t sq_entries, uint64_t data_size)
{
	memset(&c->p, 0, sizeof(c->p));
	c->p.sq_entries = sq_entries;
	c->p.data_size = data_size;
	if (ioctl(c->fd, AXON_IOC_SETUP, &c->p) < 0)
		return -errno;
	return tclient_map(c);
}

void tclient_close(struct tclient *c)
{
	const struct axon_params *p = &c->p;

	if (c->cp)
		munmap(c->cp, p->off_daemon - p->off_client);
	if (c->dp)
		munmap((void *)c->dp, p->off_frontier - p->off_daemon);
	if (c->frontier)
		munmap((void *)c->frontier, p->off_sqes - p->off_frontier);
	if (c->sqes)
		munmap(c->sqes, p->off_cqes - p->off_sqes);
	if (c->cqes)
		munmap((void *)c->cqes, p->off_data - p->off_cqes);
	if (c->data)
		munmap(c->data, p->data_size);
	if (c->info)
		munmap((void *)c->info, sizeof(struct axon_info));
	if (c->fd >= 0)
		close(c->fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

int tclient_queue(struct tclient *c, uint64_t user_data, uint64_t arg0,
		  uint32_t data_off, uint32_t data_len)
{
	uint32_t head = load_acquire(&c->dp->sq_head);
	struct axon_sqe *sqe;

	if (c->sq_tail - head >= c->p.sq_entries)
		return -EBUSY;
	sqe = &c->sqes[c->sq_tail & (c->p.sq_entries - 1)];
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = FAKE_OP;
	sqe->user_data = user_data;
	sqe->obj.arg0 = arg0;
	sqe->obj.data_off = data_off;
	sqe->obj.data_len = data_len;
	c->sq_tail++;
	return 0;
}

int tclient_enter(struct tclient *c, uint32_t to_submit, uint32_t min_complete,
		  uint32_t flags, uint64_t timeout_ns)
{
	struct axon_enter e = {
		.to_submit = to_submit,
		.min_complete = min_complete,
		.flags = flags,
		.timeout_ns = timeout_ns,
	};
	int ret = ioctl(c->fd, AXON_IOC_ENTER, &e);

	return ret < 0 ? -errno : ret;
}

int tclient_submit(struct tclient *c, uint32_t n)
{
	store_release(&c->cp->sq_tail, c->sq_tail);
	full_barrier();	/* tail store before the NEED_WAKEUP load */
	if (load_acquire(&c->dp->sq_flags) & AXON_SQ_F_NEED_WAKEUP) {
		int ret = tclient_enter(c, n, 0, 0, 0);

		if (ret < 0)
			return ret;
	}
	return 0;
}

uint32_t tclient_cq_ready(struct tclient *c)
{
	return load_acquire(&c->dp->cq_tail) - c->cp->cq_head;
}

int tclient_peek_cqe(struct tclient *c, struct axon_cqe *out)
{
	uint32_t head = c->cp->cq_head;

	if (load_acquire(&c->dp->cq_tail) == head)
		return 0;
	*out = c->cqes[head & (c->p.cq_entries - 1)];
	store_release(&c->cp->cq_head, head + 1);
	return 1;
}

int tclient_wait_cqe(struct tclient *c, struct axon_cqe *out, int timeout_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	int ret;

	for (;;) {
		if (tclient_peek_cqe(c, out))
			return 0;
		__atomic_or_fetch(&c->cp->cq_flags, AXON_CQ_F_WAITING,
				  __ATOMIC_SEQ_CST);
		full_barrier();
		if (tclient_cq_ready(c)) {
			__atomic_and_fetch(&c->cp->cq_flags, ~AXON_CQ_F_WAITING,
					   __ATOMIC_SEQ_CST);
			continue;
		}
		ret = tclient_enter(c, 0, 1, AXON_ENTER_GETEVENTS, deadline);
		__atomic_and_fetch(&c->cp->cq_flags, ~AXON_CQ_F_WAITING,
				   __ATOMIC_SEQ_CST);
		if (ret < 0)
			return ret;
	}
}

/* ---- daemon ------------------------------------------------------------ */

int tdaemon_attach(struct tdaemon *d)
{
	memset(d, 0, sizeof(*d));
	d->consume = true;
	d->fd = open(AXON_DEV, O_RDWR | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	d->attach_ret = ioctl(d->fd, AXON_IOC_ATTACH, 0);
	if (d->attach_ret < 0) {
		int err = -errno;

		close(d->fd);
		d->fd = -1;
		return err;
	}
	return d->attach_ret;
}

struct tdclient *tdaemon_find(struct tdaemon *d, uint64_t id)
{
	int i;

	for (i = 0; i < TD_MAX_CLIENTS; i++)
		if (d->c[i].id == id && d->c[i].fd > 0)
			return &d->c[i];
	return NULL;
}

static void tdclient_unmap(struct tdclient *t)
{
	const struct axon_params *p = &t->p;

	if (t->cp)
		munmap((void *)t->cp, p->off_daemon - p->off_client);
	if (t->dp)
		munmap(t->dp, p->off_frontier - p->off_daemon);
	if (t->sqes)
		munmap((void *)t->sqes, p->off_cqes - p->off_sqes);
	if (t->cqes)
		munmap(t->cqes, p->off_data - p->off_cqes);
	if (t->data)
		munmap(t->data, p->data_size);
	if (t->fd > 0)
		close(t->fd);
	memset(t, 0, sizeof(*t));
}

void tdaemon_forget(struct tdaemon *d, uint64_t id)
{
	struct tdclient *t = tdaemon_find(d, id);

	if (t)
		tdclient_unmap(t);
}

void tdaemon_close(struct tdaemon *d)
{
	int i;

	for (i = 0; i < TD_MAX_CLIENTS; i++)
		if (d->c[i].fd > 0)
			tdclient_unmap(&d->c[i]);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int tdaemon_event(struct tdaemon *d, struct axon_event *ev, int timeout_ms)
{
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	ssize_t n;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return -errno;
	if (!ret)
		return 0;
	n = read(d->fd, ev, sizeof(*ev));
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n == sizeof(*ev) ? 1 : -EIO;
}

struct tdclient *tdaemon_map(struct tdaemon *d, uint64_t id)
{
	struct axon_client_fd a = { .client_id = id };
	struct tdclient *t = NULL;
	const struct axon_params *p;
	int i;

	for (i = 0; i < TD_MAX_CLIENTS && !t; i++)
		if (d->c[i].fd <= 0)
			t = &d->c[i];
	if (!t) {
		errno = ENOSPC;
		return NULL;
	}
	a.params = (uintptr_t)&t->p;
	if (ioctl(d->fd, AXON_IOC_CLIENT_FD, &a) < 0)
		return NULL;
	t->fd = a.fd;
	t->id = id;
	p = &t->p;
	t->cp = map_part(t->fd, AXON_OFF_CLIENT_PAGE, p->off_daemon - p->off_client,
			 PROT_READ);
	t->dp = map_part(t->fd, AXON_OFF_DAEMON_PAGE, p->off_frontier - p->off_daemon,
			 PROT_READ | PROT_WRITE);
	t->sqes = map_part(t->fd, AXON_OFF_SQES, p->off_cqes - p->off_sqes, PROT_READ);
	t->cqes = map_part(t->fd, AXON_OFF_CQES, p->off_data - p->off_cqes,
			   PROT_READ | PROT_WRITE);
	t->data = map_part(t->fd, AXON_OFF_DATA, p->data_size, PROT_READ | PROT_WRITE);
	if (!t->cp || !t->dp || !t->sqes || !t->cqes || !t->data) {
		tdclient_unmap(t);
		return NULL;
	}
	t->sq_head = t->dp->sq_head;
	t->cq_tail = t->dp->cq_tail;
	return t;
}

int tdaemon_accept(struct tdaemon *d, uint64_t id)
{
	struct axon_accept a = {
		.client_id = id,
		.features = AXON_FEAT_DEFERRED,
		.va_base = 0x7f0000000000ULL,
		.va_size = 1ULL << 30,
		.mint_credit = 1ULL << 20,
	};
	struct tdclient *t = tdaemon_find(d, id);

	if (t) {
		/* This daemon sleeps between events: clients must ring. */
		store_release(&t->dp->sq_flags,
			      t->dp->sq_flags | AXON_SQ_F_NEED_WAKEUP);
		t->accepted = true;
	}
	return ioctl(d->fd, AXON_IOC_ACCEPT, &a) < 0 ? -errno : 0;
}

int tdaemon_notify(struct tdaemon *d, const uint64_t *ids, uint32_t n)
{
	struct axon_notify a = { .count = n, .ids = (uintptr_t)ids };
	int ret = ioctl(d->fd, AXON_IOC_NOTIFY, &a);

	return ret < 0 ? -errno : ret;
}

int tdaemon_charge(struct tdaemon *d, uint64_t id, uint64_t bytes, bool charge)
{
	struct axon_charge a = {
		.client_id = id,
		.bytes = bytes,
		.kind = AXON_CHARGE_DEVICE_MEM,
	};

	return ioctl(d->fd, charge ? AXON_IOC_CHARGE : AXON_IOC_UNCHARGE, &a) < 0 ?
	       -errno : 0;
}

int tdaemon_serve(struct tdaemon *d, struct tdclient *t)
{
	uint32_t tail, mask = t->p.sq_entries - 1, cmask = t->p.cq_entries - 1;
	int n = 0;

	if (!d->consume || !t->accepted)
		return 0;
	tail = load_acquire(&t->cp->sq_tail);
	if (tail - t->sq_head > t->p.sq_entries)
		return -EINVAL;	/* garbage from the client */
	while (t->sq_head != tail) {
		struct axon_sqe sqe = t->sqes[t->sq_head & mask];
		struct axon_cqe cqe = { .user_data = sqe.user_data };
		uint32_t cq_head = load_acquire(&t->cp->cq_head);

		/* Admission: take an SQE only with room for its CQE. */
		if (t->cq_tail - cq_head >= t->p.cq_entries)
			break;
		if (sqe.opcode != FAKE_OP || sqe.resv0 || sqe.resv1) {
			cqe.res = 1;	/* CUDA_ERROR_INVALID_VALUE */
		} else {
			uint64_t sum = 0, off = sqe.obj.data_off;
			uint64_t len = sqe.obj.data_len, i;

			if (off + len > t->p.data_size) {
				cqe.res = 1;
			} else {
				for (i = 0; i < len; i++) {
					sum += t->data[off + i];
					t->data[off + i] ^= 0xff;
				}
				cqe.aux[0] = sqe.obj.arg0 + 1;
				cqe.aux[1] = sum;
			}
		}
		t->cqes[t->cq_tail & cmask] = cqe;
		t->cq_tail++;
		t->sq_head++;
		store_release(&t->dp->sq_head, t->sq_head);
		store_release(&t->dp->cq_tail, t->cq_tail);
		n++;
	}
	if (n) {
		d->served += n;
		full_barrier();	/* cq_tail store before the WAITING load */
		if (load_acquire(&t->cp->cq_flags) & AXON_CQ_F_WAITING)
			tdaemon_notify(d, &t->id, 1);
	}
	return n;
}

int tdaemon_handle(struct tdaemon *d, const struct axon_event *ev)
{
	struct tdclient *t = tdaemon_find(d, ev->client_id);

	if (ev->events & AXON_EV_GONE) {
		tdaemon_forget(d, ev->client_id);
		return 0;
	}
	if ((ev->events & (AXON_EV_OPEN | AXON_EV_EXISTING)) && !t) {
		t = tdaemon_map(d, ev->client_id);
		if (!t) {
			struct axon_disconnect dc = {
				.client_id = ev->client_id,
				.error = errno ? -errno : -EIO,
			};

			/* ENOENT: it is gone already, a GONE record follows */
			if (dc.error == -ENOENT)
				return dc.error;
			/*
			 * Every client must be answered: refuse one that
			 * cannot be served (e.g. the table is full), or its
			 * SETUP waits for this daemon forever.
			 */
			fprintf(stderr, "fake daemon: cannot serve client %llu: %s\n",
				(unsigned long long)ev->client_id,
				strerror(-dc.error));
			ioctl(d->fd, AXON_IOC_DISCONNECT, &dc);
			return dc.error;
		}
		if (ev->state == AXON_KSTATE_PENDING ||
		    ev->state == AXON_KSTATE_ORPHAN) {
			int ret = tdaemon_accept(d, ev->client_id);

			if (ret)
				return ret;
		}
	}
	if (t)
		tdaemon_serve(d, t);
	return 0;
}

int tdaemon_loop(struct tdaemon *d, int timeout_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct axon_event ev;
	int n = 0, ret;

	while (now_ns() < deadline) {
		ret = tdaemon_event(d, &ev, 10);
		if (ret < 0)
			return ret;
		if (ret) {
			tdaemon_handle(d, &ev);
			n++;
		}
	}
	return n;
}

static volatile sig_atomic_t fake_consume = 1;

static void fake_toggle(int sig)
{
	(void)sig;
	fake_consume = !fake_consume;
}

/*
 * Forks a daemon that serves every client until killed. SIGUSR1 toggles
 * whether it consumes SQEs. Returns its pid once it has attached.
 */
pid_t fake_daemon_spawn(bool consume)
{
	int pfd[2];
	pid_t pid;
	int ret = 0;

	if (pipe(pfd))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct tdaemon d;
		struct axon_event ev;
		int i;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close_inherited_fds(pfd[1]);
		fake_consume = consume;
		signal(SIGUSR1, fake_toggle);
		ret = tdaemon_attach(&d);
		if (write(pfd[1], &ret, sizeof(ret)) != sizeof(ret) || ret < 0)
			_exit(1);
		close(pfd[1]);
		for (;;) {
			d.consume = fake_consume;
			ret = tdaemon_event(&d, &ev, 100);
			if (ret > 0)
				tdaemon_handle(&d, &ev);
			for (i = 0; i < TD_MAX_CLIENTS; i++)
				if (d.c[i].fd > 0)
					tdaemon_serve(&d, &d.c[i]);
		}
	}
	close(pfd[1]);
	if (read(pfd[0], &ret, sizeof(ret)) != sizeof(ret))
		ret = -EIO;
	close(pfd[0]);
	if (ret < 0) {
		waitpid(pid, NULL, 0);
		return ret;
	}
	return pid;
}

void close_inherited_fds(int keep)
{
	int fd;

	for (fd = 3; fd < 1024; fd++)
		if (fd != keep)
			close(fd);
}

void fake_daemon_kill(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* ---- a minimal genetlink client (no libnl here) ------------------------ */

struct nlreq {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[512];
};

static void nla_add(struct nlreq *r, int type, const void *data, int len)
{
	struct nlattr *a = (void *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Sends one request, returns the ACK's error (0 or -errno). */
static int genl_req(struct nlreq *r)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char buf[4096];
	struct nlmsghdr *h;
	int fd, ret = -EIO, fam = 0;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	if (sendto(fd, r, r->n.nlmsg_len, 0, (void *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (h = (void *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				ret = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
				if (!ret && fam)
					ret = fam;
				goto out;
			}
			if (h->nlmsg_type == GENL_ID_CTRL) {
				struct genlmsghdr *g = NLMSG_DATA(h);
				struct nlattr *a = (void *)((char *)g + GENL_HDRLEN);
				int len = h->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;

				while (len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN) {
					if (a->nla_type == CTRL_ATTR_FAMILY_ID)
						fam = *(uint16_t *)((char *)a + NLA_HDRLEN);
					len -= NLA_ALIGN(a->nla_len);
					a = (void *)((char *)a + NLA_ALIGN(a->nla_len));
				}
			}
		}
	}
out:
	close(fd);
	return ret;
}

static int family_id(void)
{
	struct nlreq r = { 0 };

	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.n.nlmsg_type = GENL_ID_CTRL;
	r.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r.g.cmd = CTRL_CMD_GETFAMILY;
	r.g.version = 1;
	nla_add(&r, CTRL_ATTR_FAMILY_NAME, AXON_GENL_NAME, sizeof(AXON_GENL_NAME));
	return genl_req(&r);
}

int genl_set_limit(const char *path, uint64_t limit)
{
	struct nlreq r = { 0 };
	int fam = family_id();

	if (fam <= 0)
		return fam ? fam : -ENOENT;
	r.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r.n.nlmsg_type = fam;
	r.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r.g.cmd = AXON_CMD_SET_LIMIT;
	r.g.version = AXON_GENL_VERSION;
	nla_add(&r, AXON_A_CGROUP_PATH, path, strlen(path) + 1);
	nla_add(&r, AXON_A_LIMIT, &limit, sizeof(limit));
	return genl_req(&r);
}
