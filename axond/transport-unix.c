// SPDX-License-Identifier: MIT
/*
 * The socket transport's clients: a hello on a unix socket becomes a
 * client (negotiate the sizes, identity from SO_PEERCRED, a memfd region
 * mapped whole, an eventfd doorbell), the welcome carries the region, info
 * and doorbell descriptors, and from then on the socket carries only
 * descriptors of shared host memory (ops/hostmem.c) and its closing. We
 * wake a sleeping client with a futex on its CQ tail. Device memory is
 * charged to the client's cgroup by the daemon itself (sockcg.c): identity
 * here is advisory, only the kernel transport enforces it. server.c listens
 * and reads the hello.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include <linux/axon-layout.h>
#include "axond.h"
#include "pool.h"
#include "client.h"
#include "stats.h"
#include "ops/hostmem.h"
#include "welcome.h"

static int negotiate(struct axond *d, const struct axon_hello *h,
		     struct axon_params *p, struct axon_welcome *w);

/* The geometry a client asking for the defaults gets (pool.c). */
int client_default_geometry(struct axond *d, struct axon_params *p)
{
	struct axon_hello h = { .magic = AXON_MAGIC, .abi_major = AXON_ABI_MAJOR };
	struct axon_welcome w;

	return negotiate(d, &h, p, &w);
}

/* Checks the hello and fills the geometry the client will get. */
static int negotiate(struct axond *d, const struct axon_hello *h,
		     struct axon_params *p, struct axon_welcome *w)
{
	const struct axon_params *req = &h->params;
	const struct axon_layout_rules rules = {
		.page_size = AXON_PAGE_SIZE,
		.default_data_size = d->cfg.default_data_size,
		.max_data_size = AXON_MAX_DATA_SIZE,
	};
	/* The sizes asked for; the layout fills in the rest. */
	struct axon_params granted = {
		.sq_entries = req->sq_entries,
		.cq_entries = req->cq_entries,
		.data_size = req->data_size,
	};
	uint32_t bad;
	unsigned int i;

	if (h->abi_major != AXON_ABI_MAJOR) {
		char msg[128];

		snprintf(msg, sizeof(msg), "ABI %u.%u not supported (axond speaks %u.%u)",
			 h->abi_major, h->abi_minor, AXON_ABI_MAJOR, AXON_ABI_MINOR);
		return welcome_error(w, -EPROTO, msg);
	}
	if (h->flags || req->flags)
		return welcome_error(w, -EINVAL, "unknown flags in hello");
	if (h->target_client || h->target_pid || h->resv || req->resv0)
		return welcome_error(w, -EINVAL, "reserved hello fields must be zero");
	for (i = 0; i < sizeof(req->resv) / sizeof(req->resv[0]); i++)
		if (req->resv[i])
			return welcome_error(w, -EINVAL, "reserved hello fields must be zero");
	if (axon_region_layout(&granted, &rules, &bad))
		return welcome_error(w, -EINVAL, bad == AXON_LAYOUT_BAD_SQ ? "sq_entries too large" :
				   bad == AXON_LAYOUT_BAD_CQ ? "cq_entries out of range" :
				   bad == AXON_LAYOUT_BAD_DATA ? "data_size too large" :
				   "the region cannot be laid out");
	*p = granted;
	p->features = AXON_FEAT_DEFERRED | AXON_FEAT_MINT | AXON_FEAT_FRONTIER;
	return 0;
}

static int map_region(struct axond *d, struct client *c)
{
	const struct axon_params *p = &c->params;
	unsigned char *base;
	void *map;
	int ret;

	/* A region made ahead of time when the client asked for the default
	 * sizes (pool.c), else a new one. */
	if (region_pool_take(d, p, &c->conn.sock.region_fd, &map) == 0) {
		c->conn.sock.pooled = true;
		/*
		 * A worker serves this one client: another region would only
		 * cost it start-up. Making one (a 64 MiB fallocate here, then
		 * its pinning, which the driver serialises with this client's
		 * first module load) put ~30 ms into cuInit and ~50 ms into
		 * the first load on the H200.
		 */
		if (!axond_is_worker(d))
			region_pool_refill(d);
	} else {
		ret = region_create(p->region_size, &c->conn.sock.region_fd, &map);
		if (ret)
			return ret;
	}
	c->conn.sock.region = map;
	c->region_size = p->region_size;
	base = map;
	c->cpage = (void *)(base + p->off_client);
	c->dpage = (void *)(base + p->off_daemon);
	c->frontier = (void *)(base + p->off_frontier);
	c->sqes = (const void *)(base + p->off_sqes);
	c->cqes = (void *)(base + p->off_cqes);
	c->data = base + p->off_data;
	c->sq_entries = p->sq_entries;
	c->sq_mask = p->sq_entries - 1;
	c->cq_entries = p->cq_entries;
	c->cq_mask = p->cq_entries - 1;
	c->dpage->sq_mask = c->sq_mask;
	c->dpage->sq_entries = c->sq_entries;
	c->dpage->cq_mask = c->cq_mask;
	c->dpage->cq_entries = c->cq_entries;
	return 0;
}

static void read_identity(struct client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64];
	FILE *f;

	if (getsockopt(c->conn.sock.fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->gid = cred.gid;
	}
	snprintf(c->comm, sizeof(c->comm), "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(c->comm, sizeof(c->comm), f))
			c->comm[strcspn(c->comm, "\n")] = 0;
		fclose(f);
	}
}

/*
 * A client from the hello on sock_fd: the geometry it asked for, its
 * identity from SO_PEERCRED, its region (a memfd) and doorbell, then what
 * every transport does (client_activate). NULL and w filled on refusal; the
 * caller keeps sock_fd then. The fuzzers call it with no socket (-1).
 */
struct client *client_create(struct axond *d, int sock_fd,
			     const struct axon_hello *hello,
			     struct axon_welcome *w)
{
	struct client *c;
	int ret;

	if (d->nclients >= d->cfg.max_clients) {
		welcome_error(w, -EBUSY, "too many clients");
		return NULL;
	}
	c = client_alloc(d, &unix_transport);
	if (!c) {
		welcome_error(w, -ENOMEM, "out of memory");
		return NULL;
	}
	c->conn.sock.fd = sock_fd;
	if (negotiate(d, hello, &c->params, w))
		goto err_free;
	c->params.client_id = c->id;
	read_identity(c);
	sockcg_attach(d, c);
	ret = map_region(d, c);
	if (ret) {
		welcome_error(w, ret, "cannot set up the client's rings");
		goto err_free;
	}
	c->conn.sock.doorbell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->conn.sock.doorbell_fd < 0) {
		welcome_error(w, -errno, "cannot create the doorbell");
		goto err_free;
	}
	if (client_activate(d, c, w))
		goto err_free;
	return c;

err_free:
	c->conn.sock.fd = -1;	/* the caller owns it on failure */
	sockcg_detach(d, c);
	client_free(c);
	return NULL;
}


/*
 * Answers a client's hello on fd (which it then owns): the welcome with
 * the region, the info page and the doorbell, then the socket and the
 * doorbell into the event loop; or a refusal.
 */
void unix_client_hello(struct axond *d, int fd, const struct axon_hello *hello,
		       struct axon_welcome *w)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct client *c = client_create(d, fd, hello, w);
	int fds[3];

	if (!c) {
		log_info("refused a client: %s", w->message);
		welcome_send(fd, w, NULL, 0);
		close(fd);
		return;
	}
	fds[0] = c->conn.sock.region_fd;
	fds[1] = d->info_fd;
	fds[2] = c->conn.sock.doorbell_fd;
	if (welcome_send(fd, w, fds, 3)) {
		client_disconnect(d, c);
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		client_disconnect(d, c);
		return;
	}
	ev.events = EPOLLIN;
	ev.data.u64 = (uint64_t)(uintptr_t)c | EV_DOORBELL_BIT;
	epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, c->conn.sock.doorbell_fd, &ev);
}

static void sock_init(struct client *c)
{
	c->conn.sock.fd = c->conn.sock.doorbell_fd = c->conn.sock.region_fd = -1;
}

/* Pairs with the client's futex wait on cq_tail (libaxon's unix.c). */
static void sock_wake(struct axond *d, struct client *c)
{
	(void)d;
	syscall(SYS_futex, &c->dpage->cq_tail, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Advisory identity: the daemon's own per-cgroup limits (sockcg.c). */
static int sock_charge(struct axond *d, struct client *c, uint64_t bytes)
{
	return sockcg_charge(d, c, bytes);
}

static void sock_uncharge(struct axond *d, struct client *c, uint64_t bytes)
{
	sockcg_uncharge(d, c, bytes);
}

static ssize_t sock_recvmsg(struct client *c, struct msghdr *msg, int flags)
{
	ssize_t n;

	/* A client made without a socket (the fuzzers') is sent nothing. */
	if (c->conn.sock.fd < 0)
		return -EAGAIN;
	do {
		n = recvmsg(c->conn.sock.fd, msg, flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	return n;
}

static void drain_doorbell(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0)
		;
}

static void sock_event(struct axond *d, struct client *c, uint64_t tag, uint32_t events)
{
	/* The doorbell only wakes the loop, which drains every ring. */
	if (tag & EV_DOORBELL_BIT) {
		drain_doorbell(c->conn.sock.doorbell_fd);
		return;
	}
	/* After the hello clients send only descriptors of shared host
	 * memory (ops/hostmem.c); anything else, or a hang-up, means gone
	 * (or misbehaving, which ends the same way). */
	if (events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR) || hostmem_sock_readable(d, c) < 0)
		client_disconnect(d, c);
}

/*
 * The socket has no way to carry an error: the client learns from the
 * daemon page (DAEMON_GONE) and the socket's end. Shutting our reading
 * side makes the event loop see a hang-up and disconnect.
 */
static void sock_disconnect(struct axond *d, struct client *c, int error)
{
	(void)d;
	(void)error;
	if (c->conn.sock.fd >= 0)
		shutdown(c->conn.sock.fd, SHUT_RD);
}

/* Closing the socket is what tells the client we are gone. */
static void sock_close(struct axond *d, struct client *c)
{
	struct client_sock *s = &c->conn.sock;

	if (s->fd >= 0) {
		epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
		close(s->fd);
	}
	if (s->doorbell_fd >= 0) {
		epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, s->doorbell_fd, NULL);
		close(s->doorbell_fd);
	}
	s->fd = s->doorbell_fd = -1;
	sockcg_detach(d, c);	/* its charges go with it, as a file's */
}

static void sock_fini(struct axond *d, struct client *c)
{
	struct client_sock *s = &c->conn.sock;

	/* A worker's client's region stays mapped until the worker ends:
	 * the cuda backend unregisters its data area only then (leftover). */
	if (s->region && !axond_is_worker(d))
		munmap(s->region, c->region_size);
	if (s->region_fd >= 0)
		close(s->region_fd);
	if (s->doorbell_fd >= 0)
		close(s->doorbell_fd);
}

const struct client_transport unix_transport = {
	.name		= "unix",
	.stats_id	= STATS_TRANSPORT_UNIX,
	/* Shared host memory needs the socket to pass descriptors on. */
	.features	= AXON_FEAT_HOSTMEM,
	.init		= sock_init,
	.wake		= sock_wake,
	.charge		= sock_charge,
	.uncharge	= sock_uncharge,
	.recvmsg	= sock_recvmsg,
	.event		= sock_event,
	.disconnect	= sock_disconnect,
	.close		= sock_close,
	.fini		= sock_fini,
};
