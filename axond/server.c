// SPDX-License-Identifier: MIT
/*
 * The unix socket's listener: listen, accept, keep the connections that
 * have not said hello yet, and read and check a hello when it comes. Where
 * a hello goes from there is its caller's (hello.c; the supervisor's loop):
 * this file calls nothing above it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "addrlock.h"
#include "axond.h"
#include "server.h"
#include "welcome.h"

/* The socket a restarting axond handed over (server_handover), or -1. */
static int inherited_socket(void)
{
	const char *v = getenv(AXOND_LISTEN_FD_ENV);
	int fd, type = 0;
	socklen_t len = sizeof(type);
	char *end;

	if (!v)
		return -1;
	fd = (int)strtol(v, &end, 10);
	unsetenv(AXOND_LISTEN_FD_ENV);
	if (*end || fd < 3 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET) {
		log_warn("%s=%s is not a listening socket; binding anew", AXOND_LISTEN_FD_ENV, v);
		return -1;
	}
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int server_listen(struct axond *d)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	const char *path = d->cfg.listen;
	struct epoll_event ev = { .events = EPOLLIN };
	char dir[sizeof(sun.sun_path)];
	char *slash;
	int fd;

	if (strncmp(path, "unix:", 5) == 0)
		path += 5;
	if (path[0] != '/' || strlen(path) >= sizeof(sun.sun_path)) {
		log_err("--listen wants unix:/absolute/path, got '%s'", d->cfg.listen);
		return -EINVAL;
	}
	strcpy(sun.sun_path, path);
	strcpy(d->sock_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		mkdir(dir, 0755);	/* /run/axon; fine if it exists */
	}
	/* Before anything at the path changes: no second axond on it. */
	if (d->addr_lock_fd < 0) {
		fd = addr_lock(path);
		if (fd < 0)
			return fd;
		d->addr_lock_fd = fd;
	}
	/* Restarting (server_handover): the socket is already listening, and
	 * clients that connected meanwhile wait in its backlog. */
	fd = inherited_socket();
	if (fd >= 0)
		goto listening;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, 128) < 0) {
		int e = errno;

		log_err("cannot listen on %s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
listening:
	d->listen_fd = fd;
	ev.data.u64 = EV_LISTEN;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	log_info("listening on unix:%s", path);
	return 0;
}

/*
 * Before axond execs itself (main.c): the listening socket stays open
 * across the exec and its number travels in AXOND_LISTEN_FD, so the path
 * never disappears and no client is refused while the new process starts.
 */
void server_handover(struct axond *d)
{
	char num[16];

	if (d->listen_fd < 0)
		return;
	if (fcntl(d->listen_fd, F_SETFD, 0) < 0) {
		server_close(d);
		return;
	}
	snprintf(num, sizeof(num), "%d", d->listen_fd);
	setenv(AXOND_LISTEN_FD_ENV, num, 1);
	addr_lock_handover(d->addr_lock_fd);
}

void server_keep_across_exec(struct axond *d)
{
	if (d->listen_fd >= 0)
		fcntl(d->listen_fd, F_SETFD, 0);
	if (d->addr_lock_fd >= 0)
		fcntl(d->addr_lock_fd, F_SETFD, 0);
}

void server_close(struct axond *d)
{
	if (d->listen_fd >= 0) {
		close(d->listen_fd);
		unlink(d->sock_path);
		d->listen_fd = -1;
	}
	/* After the unlink: a daemon starting now finds no socket to keep. */
	if (d->addr_lock_fd >= 0) {
		close(d->addr_lock_fd);
		d->addr_lock_fd = -1;
	}
}

/*
 * Connections that have not said hello yet. Each must within
 * HELLO_DEADLINE_NS or is closed, at most MAX_PENDING wait at once and at
 * most cfg.max_pending_per_user of one user, so silent connections can
 * neither eat the daemon's descriptors nor lock other users out.
 *
 * A pending connection is a slot, and its epoll event names the slot and the
 * slot's generation, never the bare descriptor: a connection closed while
 * events for it wait in the same epoll batch (shed for a new one, expired)
 * leaves a stale event behind, and the descriptor number may by then belong
 * to something else (a client's pinned-memory memfd received a moment
 * later). The generation moves on every drop, so such an event is seen to be
 * stale and ignored.
 */
#define HELLO_DEADLINE_NS	(2ULL * 1000 * 1000 * 1000)
#define MAX_PENDING		256

struct pending {
	int fd;			/* -1: the slot is free */
	uid_t uid;		/* SO_PEERCRED at accept */
	uint32_t gen;
	uint64_t deadline;
};

static struct pending pending[MAX_PENDING] = {
	[0 ... MAX_PENDING - 1] = { .fd = -1 },	/* every slot free */
};
static unsigned int npending;
static int spare_fd = -1;	/* given up to accept-and-close at EMFILE */

static uint64_t pending_tag(unsigned int slot)
{
	return EV_PENDING | (uint64_t)pending[slot].gen << 16 | slot;
}

/* The slot a pending event names, or -1 when the event is stale. */
static int pending_slot(uint64_t tag)
{
	unsigned int slot = (unsigned int)(tag & 0xffff);

	if (slot >= MAX_PENDING || pending[slot].fd < 0 ||
	    pending[slot].gen != (uint32_t)(tag >> 16))
		return -1;
	return (int)slot;
}

static void pending_drop(struct axond *d, unsigned int slot, bool close_it)
{
	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, pending[slot].fd, NULL);
	if (close_it)
		close(pending[slot].fd);
	pending[slot].fd = -1;
	pending[slot].gen++;
	npending--;
}

static unsigned int pending_of_user(uid_t uid)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAX_PENDING; i++)
		if (pending[i].fd >= 0 && pending[i].uid == uid)
			n++;
	return n;
}

/* The oldest pending connection, of uid only when only_uid; -1: none. */
static int pending_oldest(bool only_uid, uid_t uid)
{
	int i, oldest = -1;

	for (i = 0; i < MAX_PENDING; i++) {
		if (pending[i].fd < 0 || (only_uid && pending[i].uid != uid))
			continue;
		if (oldest < 0 || pending[i].deadline < pending[oldest].deadline)
			oldest = i;
	}
	return oldest;
}

/* The user with the most pending connections (they give way first). */
static uid_t pending_top_user(unsigned int *count)
{
	unsigned int i, best = 0;
	uid_t top = 0;

	for (i = 0; i < MAX_PENDING; i++) {
		unsigned int n;

		if (pending[i].fd < 0)
			continue;
		n = pending_of_user(pending[i].uid);
		if (n > best) {
			best = n;
			top = pending[i].uid;
		}
	}
	*count = best;
	return top;
}

/*
 * Out of descriptors. A silent connection is worth less than a new one: close
 * the oldest that has not said hello, and the next accept succeeds. With none,
 * take the newest connection off the backlog and close it, so the
 * level-triggered listener does not spin the dispatcher.
 */
static void shed_one(struct axond *d)
{
	static uint64_t last_log;
	uint64_t now = axond_now_ns();
	int oldest = pending_oldest(false, 0);
	int fd;

	if (oldest >= 0) {
		pending_drop(d, (unsigned int)oldest, true);
		return;
	}

	if (spare_fd >= 0) {
		close(spare_fd);
		spare_fd = -1;
	}
	fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd >= 0)
		close(fd);
	spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (now - last_log > 1000000000ULL) {
		log_warn("out of file descriptors: refusing new connections");
		last_log = now;
	}
}

/*
 * Room for one more pending connection of uid: 0, or -EBUSY when uid has
 * its share already. When all slots are taken, the user holding the most
 * gives up its oldest, so one user's silent connections never keep another
 * user out.
 */
static int pending_make_room(struct axond *d, uid_t uid)
{
	unsigned int mine = pending_of_user(uid), top_count;
	uid_t top;
	int victim;

	if (mine >= d->cfg.max_pending_per_user)
		return -EBUSY;
	if (npending < MAX_PENDING)
		return 0;
	top = pending_top_user(&top_count);
	if (top_count <= mine + 1 && top != uid)
		return -EBUSY;	/* shares are even: the newcomer waits */
	victim = pending_oldest(true, top);
	if (victim < 0)
		return -EBUSY;
	pending_drop(d, (unsigned int)victim, true);
	return 0;
}

/*
 * A connection whose hello is still to be read joins the pending ones;
 * takes fd (closes it on failure). Accepted here, or handed over by the
 * supervisor to a worker process (worker.c).
 */
int server_adopt(struct axond *d, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t clen = sizeof(cred);
	unsigned int slot;
	int ret;

	/* A peer whose credentials cannot be read counts as one user. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0)
		cred.uid = (uid_t)-1;
	ret = pending_make_room(d, cred.uid);
	if (ret) {
		static uint64_t last_log;
		uint64_t now = axond_now_ns();

		if (now - last_log > 1000000000ULL) {
			log_warn("uid %u has %u connections that have not said hello: refusing more",
				 (unsigned int)cred.uid, pending_of_user(cred.uid));
			last_log = now;
		}
		d->pending_refused++;
		close(fd);
		return ret;
	}
	for (slot = 0; pending[slot].fd >= 0; slot++)
		;
	pending[slot].fd = fd;
	ev.data.u64 = pending_tag(slot);
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		pending[slot].fd = -1;
		close(fd);
		return -e;
	}
	pending[slot].uid = cred.uid;
	pending[slot].deadline = axond_now_ns() + HELLO_DEADLINE_NS;
	npending++;
	return 0;
}

/*
 * A connection waits on the listener. accept() takes a descriptor before it
 * looks at the backlog, so at the limit it fails with EMFILE even when the
 * backlog is empty; only a connection really waiting is worth a shed one.
 */
static bool connection_waiting(const struct axond *d)
{
	struct pollfd p = { .fd = d->listen_fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

void server_accept(struct axond *d)
{
	if (spare_fd < 0)
		spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (;;) {
		int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0) {
			if ((errno == EMFILE || errno == ENFILE) && connection_waiting(d))
				shed_one(d);
			return;
		}
		server_adopt(d, fd);
	}
}

/* Connections that have not said hello yet (a worker waits for them). */
unsigned int server_npending(void)
{
	return npending;
}

/* Closes connections past their hello deadline; returns ms to the next
 * deadline (-1: none), for the dispatcher's sleep. */
int server_expire(struct axond *d)
{
	uint64_t now = axond_now_ns(), next = UINT64_MAX;
	unsigned int i;

	for (i = 0; npending && i < MAX_PENDING; i++) {
		if (pending[i].fd < 0)
			continue;
		if (pending[i].deadline <= now) {
			pending_drop(d, i, true);
			continue;
		}
		if (pending[i].deadline < next)
			next = pending[i].deadline;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now) / 1000000 + 1);
}

/*
 * The checks a first message of n bytes (recv's MSG_TRUNC length; h holds
 * its first bytes) passes before anything looks at its kind: a whole hello,
 * our magic, our ABI. 0, or a negative errno with w's status and message
 * set. Only the bytes are looked at, so the hello fuzzer (tests/fuzz/)
 * calls it without a socket.
 */
int server_hello_check(const struct axon_hello *h, ssize_t n, struct axon_welcome *w)
{
	if (n != (ssize_t)sizeof(*h) || h->magic != AXON_MAGIC) {
		w->status = -EINVAL;
		snprintf(w->message, sizeof(w->message),
			 "bad hello (%zd bytes, want %zu with magic 0x%08x)",
			 n, sizeof(*h), AXON_MAGIC);
		return w->status;
	}
	if (h->abi_major != AXON_ABI_MAJOR) {
		w->status = -EPROTO;
		snprintf(w->message, sizeof(w->message),
			 "ABI %u.%u not supported (axond speaks %u.%u)",
			 h->abi_major, h->abi_minor, AXON_ABI_MAJOR, AXON_ABI_MINOR);
		return w->status;
	}
	return 0;
}

/*
 * A pending connection sent its first message (or hung up); tag is its
 * epoll event's. Returns the connection, which the caller owns from here,
 * with its hello in h once that passed server_hello_check and w ready for
 * the answer; or -1, the connection answered and closed or the event stale
 * (its connection already dropped). The supervisor only peeks: the worker
 * it hands the connection to reads the hello itself.
 */
/*
 * The hello, and a descriptor sent with it into *passed (NULL: none is
 * kept; any sent is closed). The supervisor only peeks.
 */
static ssize_t recv_hello(int fd, struct axon_hello *h, bool peek, int *passed)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = h, .iov_len = sizeof(*h) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	if (passed)
		*passed = -1;
	n = recvmsg(fd, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC | (peek ? MSG_PEEK : 0));
	if (n < 0)
		return n;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		int got;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len != CMSG_LEN(sizeof(int)))
			continue;
		memcpy(&got, CMSG_DATA(cm), sizeof(got));
		if (passed && *passed < 0)
			*passed = got;
		else
			close(got);
	}
	if (msg.msg_flags & MSG_CTRUNC)
		n = -1;	/* more descriptors than one: refused (the rest closed) */
	return n;
}

int server_hello_read(struct axond *d, uint64_t tag, struct axon_hello *h,
		      struct axon_welcome *w, int *passed)
{
	int slot = pending_slot(tag), fd;
	ssize_t n;

	*w = (struct axon_welcome){
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
	};
	if (slot < 0)
		return -1;
	fd = pending[slot].fd;
	pending_drop(d, (unsigned int)slot, false);
	n = recv_hello(fd, h, axond_is_supervisor(d), passed);
	if (server_hello_check(h, n, w)) {
		if (n > 0)	/* a peer that sent nothing hears nothing */
			welcome_send(fd, w, NULL, 0);
		if (passed && *passed >= 0) {
			close(*passed);
			*passed = -1;
		}
		close(fd);
		return -1;
	}
	return fd;
}
