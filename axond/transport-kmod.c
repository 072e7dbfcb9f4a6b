// SPDX-License-Identifier: MIT
/*
 * The kernel transport, daemon side: axond attaches to /dev/axon, reads the
 * kernel's client events from its fd (reliable, one coalesced record per
 * client), maps each new client's region through the fd the kernel gives
 * for it, and accepts it with the fields only the daemon knows. Identity
 * (pid, uid, cgroup) comes from the kernel, device memory is charged to the
 * client's cgroup before it is backed, and sleeping clients are woken with
 * one ioctl: the ops of kmod_transport. Documentation/kmod.rst §5, §6 and
 * §16.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "client.h"
#include "stats.h"
#include "backend.h"

static struct client *find_kmod(struct axond *d, uint64_t id)
{
	struct client *c;

	for (c = d->clients; c; c = c->next)
		if (c->xport == &kmod_transport && c->kmod_id == id)
			return c;
	return NULL;
}

int kmod_attach(struct axond *d)
{
	const char *path = d->cfg.kmod ? d->cfg.kmod : AXON_DEVICE_PATH;
	struct epoll_event ev = { .events = EPOLLIN };
	struct stat st;
	int n;

	d->kmod_fd = -1;
	if (d->cfg.kmod && !strcmp(d->cfg.kmod, "off"))
		return 0;
	if (stat(path, &st) < 0) {
		if (d->cfg.kmod) {
			log_err("--kmod=%s: %s", path, strerror(errno));
			return -errno;
		}
		return 0;	/* no module loaded: socket clients only */
	}
	d->kmod_fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (d->kmod_fd < 0) {
		log_warn("cannot open %s: %s; serving socket clients only", path,
			 strerror(errno));
		return d->cfg.kmod ? -errno : 0;
	}
	n = ioctl(d->kmod_fd, AXON_IOC_ATTACH, 0);
	if (n < 0) {
		int e = errno;

		log_warn("cannot attach to %s: %s%s", path, strerror(e),
			 e == EBUSY ? " (another axond is attached)" :
			 e == EPERM ? " (needs CAP_SYS_ADMIN or the daemon_uid parameter)" : "");
		close(d->kmod_fd);
		d->kmod_fd = -1;
		return d->cfg.kmod ? -e : 0;
	}
	/* Clients of the kernel transport read the same info page. */
	d->kmod_info_size = (sizeof(struct axon_info) + 4095) & ~4095UL;
	d->kmod_info = mmap(NULL, d->kmod_info_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    d->kmod_fd, AXON_OFF_INFO);
	if (d->kmod_info == MAP_FAILED) {
		log_err("mapping %s's info page: %s", path, strerror(errno));
		d->kmod_info = NULL;
		kmod_detach(d);
		return d->cfg.kmod ? -EIO : 0;
	}
	/* A supervisor has no device of its own: it copies its first
	 * worker's page before any client is accepted (supervisor-kmod.c). */
	if (d->info)
		memcpy(d->kmod_info, d->info, sizeof(struct axon_info));
	ev.data.u64 = EV_KMOD;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->kmod_fd, &ev) < 0) {
		kmod_detach(d);
		return -errno;
	}
	log_info("attached to %s (%d client(s) already there)", path, n);
	return 0;
}

void kmod_detach(struct axond *d)
{
	if (d->kmod_fd < 0)
		return;
	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, d->kmod_fd, NULL);
	if (d->kmod_info)
		munmap(d->kmod_info, d->kmod_info_size);
	d->kmod_info = NULL;
	close(d->kmod_fd);
	d->kmod_fd = -1;
}

/* The descriptor that acts for c in the kernel (transport.h), -1: none. */
static int actor(const struct axond *d, const struct client *c)
{
	return c->conn.kmod.delegate ? c->conn.kmod.fd : d->kmod_fd;
}

static void refuse(int fd, uint64_t id, int error)
{
	struct axon_disconnect dc = { .client_id = id, .error = error };

	if (fd >= 0)
		ioctl(fd, AXON_IOC_DISCONNECT, &dc);
}

/* Maps the parts of a client's region with the daemon's permissions. */
static int map_parts(struct client *c)
{
	struct client_kmod *k = &c->conn.kmod;
	const struct axon_params *p = &c->params;
	const struct {
		uint64_t off, len;
		int prot;
	} parts[6] = {
		{ AXON_OFF_CLIENT_PAGE, p->off_daemon - p->off_client, PROT_READ },
		{ AXON_OFF_DAEMON_PAGE, p->off_frontier - p->off_daemon, PROT_READ | PROT_WRITE },
		{ AXON_OFF_FRONTIER, p->off_sqes - p->off_frontier, PROT_READ | PROT_WRITE },
		{ AXON_OFF_SQES, p->off_cqes - p->off_sqes, PROT_READ },
		{ AXON_OFF_CQES, p->off_data - p->off_cqes, PROT_READ | PROT_WRITE },
		{ AXON_OFF_DATA, p->data_size, PROT_READ | PROT_WRITE },
	};
	unsigned int i;

	for (i = 0; i < 6; i++) {
		void *m = mmap(NULL, parts[i].len, parts[i].prot, MAP_SHARED, k->fd,
			       (off_t)parts[i].off);

		if (m == MAP_FAILED)
			return -errno;
		k->maps[i] = m;
		k->map_len[i] = parts[i].len;
	}
	c->region_size = p->region_size;
	c->cpage = k->maps[0];
	c->dpage = k->maps[1];
	c->frontier = k->maps[2];
	c->sqes = k->maps[3];
	c->cqes = k->maps[4];
	c->data = k->maps[5];
	/* The kernel wrote the ring constants; we keep private copies. */
	c->sq_entries = p->sq_entries;
	c->sq_mask = p->sq_entries - 1;
	c->cq_entries = p->cq_entries;
	c->cq_mask = p->cq_entries - 1;
	return 0;
}

/*
 * Serves c, whose fd (and, for a delegate, geometry) is set: identity from
 * the kernel's record ev, never from the client; the region mapped; the
 * client activated and accepted through the fd that acts for it. 0, or
 * -errno with c not yet on the daemon's list (the caller refuses and frees
 * it); 1: accepted too late (the client went away), c disconnected.
 */
static int serve(struct axond *d, struct client *c, const struct axon_event *ev)
{
	struct axon_welcome w = { 0 };
	struct axon_accept acc;
	int ret;

	c->pid = (pid_t)ev->pid;
	c->uid = ev->uid;
	c->gid = ev->gid;
	c->cgroup_id = ev->cgroup_id;
	memcpy(c->comm, ev->comm, sizeof(ev->comm));
	c->comm[sizeof(ev->comm) - 1] = 0;
	ret = map_parts(c);
	if (ret)
		return ret;
	c->params.client_id = c->kmod_id;
	if (client_activate(d, c, &w))
		return w.status ? w.status : -EIO;
	memset(&acc, 0, sizeof(acc));
	acc.client_id = c->kmod_id;
	acc.features = c->params.features;
	acc.va_base = c->params.va_base;
	acc.va_size = c->params.va_size;
	acc.mint_credit = c->params.mint_credit;
	if (ioctl(actor(d, c), AXON_IOC_ACCEPT, &acc) < 0) {
		log_info("kmod client %llu went away before it was accepted",
			 (unsigned long long)c->kmod_id);
		client_disconnect(d, c);
		return 1;
	}
	return 0;
}

static void client_opened(struct axond *d, const struct axon_event *ev)
{
	struct axon_client_fd cf = { .client_id = ev->client_id };
	struct client *c;
	int ret;

	if (find_kmod(d, ev->client_id))
		return;	/* already ours (a coalesced record) */
	if (d->nclients >= d->cfg.max_clients) {
		refuse(d->kmod_fd, ev->client_id, -EBUSY);
		return;
	}
	c = client_alloc(d, &kmod_transport);
	if (!c) {
		refuse(d->kmod_fd, ev->client_id, -ENOMEM);
		return;
	}
	c->kmod_id = ev->client_id;
	cf.params = (uint64_t)(uintptr_t)&c->params;
	if (ioctl(d->kmod_fd, AXON_IOC_CLIENT_FD, &cf) < 0) {
		ret = -errno;
		goto err;
	}
	c->conn.kmod.fd = cf.fd;
	ret = serve(d, c, ev);
	if (ret >= 0)
		return;
err:
	log_warn("refusing kmod client %llu: %s", (unsigned long long)ev->client_id,
		 strerror(-ret));
	refuse(d->kmod_fd, ev->client_id, ret);
	client_free(c);
}

int kmod_adopt(struct axond *d, int fd, const struct axon_event *ev,
	       const struct axon_params *params)
{
	struct epoll_event eev = { .events = EPOLLIN };
	struct client *c;
	int ret;

	/* Its events are read without blocking the loop. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		ret = -errno;
		refuse(fd, ev->client_id, ret);
		close(fd);
		return ret;
	}
	c = client_alloc(d, &kmod_transport);
	if (!c) {
		refuse(fd, ev->client_id, -ENOMEM);
		close(fd);
		return -ENOMEM;
	}
	c->kmod_id = ev->client_id;
	c->conn.kmod.fd = fd;
	c->conn.kmod.delegate = true;
	c->params = *params;
	ret = serve(d, c, ev);
	if (ret > 0)
		return 0;	/* gone already: the worker is done */
	if (ret)
		goto err;
	/* Its doorbells and its end come on the delegate. */
	eev.data.u64 = (uint64_t)(uintptr_t)c | EV_DOORBELL_BIT;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &eev) < 0) {
		ret = -errno;
		log_warn("kmod client %llu: cannot watch its delegate: %s",
			 (unsigned long long)c->kmod_id, strerror(-ret));
		kmod_transport.disconnect(d, c, -ECONNRESET);
		client_disconnect(d, c);
		return ret;
	}
	return 0;
err:
	log_warn("refusing kmod client %llu: %s", (unsigned long long)ev->client_id,
		 strerror(-ret));
	refuse(fd, ev->client_id, ret);
	client_free(c);		/* closes fd */
	return ret;
}

/* Reads every queued client event. */
void kmod_events(struct axond *d)
{
	struct axon_event evs[32];

	for (;;) {
		ssize_t n = read(d->kmod_fd, evs, sizeof(evs));
		size_t i;

		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				log_err("/dev/axon: %s; detaching",
					n == 0 ? "end of events" : strerror(errno));
				kmod_detach(d);
			}
			return;
		}
		for (i = 0; i < (size_t)n / sizeof(evs[0]); i++) {
			const struct axon_event *ev = &evs[i];
			struct client *c = find_kmod(d, ev->client_id);

			if (ev->events & AXON_EV_GONE) {
				if (c)
					client_disconnect(d, c);
				continue;
			}
			if (ev->events & AXON_EV_EXISTING && ev->state == AXON_KSTATE_ORPHAN) {
				/* A previous daemon served it; its device state
				 * died with that daemon. */
				refuse(d->kmod_fd, ev->client_id, -ECONNRESET);
				continue;
			}
			if (ev->events & (AXON_EV_OPEN | AXON_EV_EXISTING) &&
			    ev->state == AXON_KSTATE_PENDING)
				client_opened(d, ev);
			/* DOORBELL: the loop drains every ring anyway. */
		}
	}
}

static void kmod_init(struct client *c)
{
	c->conn.kmod.fd = -1;
	c->conn.kmod.delegate = false;
}

static void kmod_wake(struct axond *d, struct client *c)
{
	struct axon_notify n = {
		.count = 1,
		.ids = (uint64_t)(uintptr_t)&c->kmod_id,
	};
	int fd = actor(d, c);

	if (fd >= 0)
		ioctl(fd, AXON_IOC_NOTIFY, &n);
}

/*
 * Charges the client's cgroup; -EDQUOT past a limit. With nothing to
 * charge through (the daemon detached from the module) the memory is
 * refused, never backed uncharged: the kernel is this client's only
 * accounting.
 */
static int kmod_charge(struct axond *d, struct client *c, uint64_t bytes)
{
	struct axon_charge ch = {
		.client_id = c->kmod_id,
		.bytes = bytes,
		.kind = AXON_CHARGE_DEVICE_MEM,
	};
	int fd = actor(d, c);

	if (fd < 0)
		return -ENOTCONN;
	return ioctl(fd, AXON_IOC_CHARGE, &ch) < 0 ? -errno : 0;
}

/* A dead client's charges went with its file: the kernel released them. */
static void kmod_uncharge(struct axond *d, struct client *c, uint64_t bytes)
{
	struct axon_charge ch = {
		.client_id = c->kmod_id,
		.bytes = bytes,
		.kind = AXON_CHARGE_DEVICE_MEM,
	};
	int fd = actor(d, c);

	if (fd < 0 || c->dead)
		return;
	ioctl(fd, AXON_IOC_UNCHARGE, &ch);
}

/* The kernel ends the client's file: its calls fail with error, and an
 * AXON_EV_GONE comes back to us. */
static void kmod_disconnect(struct axond *d, struct client *c, int error)
{
	refuse(actor(d, c), c->kmod_id, error);
}

/*
 * A delegate's events (a worker's client): its doorbells, which only wake
 * the loop (it drains every ring anyway), and its end. The end is
 * AXON_EV_GONE, or the delegate cut off (its supervisor detached: read
 * returns 0, or a hang-up with nothing to read): the client is then an
 * ORPHAN the kernel answers -ECONNRESET, and its device state goes.
 */
static void kmod_event(struct axond *d, struct client *c, uint64_t tag, uint32_t events)
{
	struct axon_event ev;
	bool gone = false;
	ssize_t n;

	(void)tag;
	for (;;) {
		n = read(c->conn.kmod.fd, &ev, sizeof(ev));
		if (n < 0 && errno == EINTR)
			continue;
		if (n == (ssize_t)sizeof(ev)) {
			if (ev.client_id == c->kmod_id && (ev.events & AXON_EV_GONE))
				gone = true;
			continue;
		}
		break;
	}
	if (n == 0 || (n < 0 && errno != EAGAIN) ||
	    (n < 0 && (events & (EPOLLHUP | EPOLLERR)))) {
		if (!gone)
			log_info("kmod client %llu: its delegate was cut off (the supervisor "
				 "detached); ending it", (unsigned long long)c->kmod_id);
		gone = true;
	}
	if (gone)
		client_disconnect(d, c);
}

/* The client is going away on our side: its delegate's events stop. The
 * kernel releases its charges itself when the file goes. */
static void kmod_close(struct axond *d, struct client *c)
{
	if (c->conn.kmod.delegate && c->conn.kmod.fd >= 0)
		epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->conn.kmod.fd, NULL);
}

static void kmod_fini(struct axond *d, struct client *c)
{
	struct client_kmod *k = &c->conn.kmod;
	unsigned int i;

	(void)d;
	for (i = 0; i < 6; i++)
		if (k->maps[i])
			munmap(k->maps[i], k->map_len[i]);
	if (k->fd >= 0)
		close(k->fd);
	k->fd = -1;
}

/*
 * Nothing but the rings crosses after SETUP: no recvmsg. A client served
 * through the daemon's fd has no descriptor in our epoll set (its events
 * come on that fd, kmod_events); a delegate's do (kmod_event).
 */
const struct client_transport kmod_transport = {
	.name		= "kmod",
	.stats_id	= STATS_TRANSPORT_KMOD,
	.init		= kmod_init,
	.wake		= kmod_wake,
	.charge		= kmod_charge,
	.uncharge	= kmod_uncharge,
	.event		= kmod_event,
	.disconnect	= kmod_disconnect,
	.close		= kmod_close,
	.fini		= kmod_fini,
};
