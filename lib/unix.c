// SPDX-License-Identifier: MIT
/*
 * The socket transport: a SOCK_SEQPACKET unix socket to axond. The hello
 * and welcome cross it, then the region, info and doorbell descriptors
 * (SCM_RIGHTS); afterwards the socket carries only descriptors of shared
 * host memory, and its closing is how each side learns the other is gone.
 * The doorbell is an eventfd axond polls; the client sleeps on a futex on
 * the CQ tail, which works because the region is one memfd both map.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "transport.h"

int axon_open_socket(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval io_timeout = { .tv_sec = 10 };
	const char *path;
	int fd;

	if (!addr)
		addr = axon_default_addr();
	if (strncmp(addr, "unix:", 5) == 0) {
		path = addr + 5;
	} else if (addr[0] == '/') {
		path = addr;
	} else {
		axon_set_err(err, errlen, "unsupported axon address '%s' (want unix:PATH)", addr);
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		axon_set_err(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;

		axon_set_err(err, errlen, "socket: %s", strerror(e));
		return -e;
	}
	/* A daemon that accepts and never answers must not hang us. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &io_timeout, sizeof(io_timeout));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &io_timeout, sizeof(io_timeout));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		axon_set_err(err, errlen, "cannot reach axond at %s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

int axon_send_hello(int fd, uint32_t kind, const struct axon_params *req)
{
	struct axon_hello hello = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
		.kind = kind,
	};
	ssize_t n;

	if (req)
		hello.params = *req;
	do {
		n = send(fd, &hello, sizeof(hello), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == sizeof(hello) ? 0 : -EIO;
}

/* Receives the welcome and up to nfds descriptors; returns how many came. */
static int recv_welcome(int fd, struct axon_welcome *w, int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = w, .iov_len = sizeof(*w) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int got = 0;
	ssize_t n;

	do {
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		int i, count;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < count; i++) {
			int d;

			memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (got < nfds)
				fds[got++] = d;
			else
				close(d);
		}
	}
	if (n == 0)
		return -ECONNRESET;
	if ((size_t)n != sizeof(*w) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		while (got)
			close(fds[--got]);
		return -EPROTO;
	}
	return got;
}

int axon_recv_welcome(int fd, struct axon_welcome *w, int *fds, int nfds,
		      char *err, size_t errlen)
{
	int got = recv_welcome(fd, w, fds, nfds);

	if (got < 0) {
		axon_set_err(err, errlen, "no answer from axond: %s", strerror(-got));
		return got;
	}
	if (w->magic != AXON_MAGIC) {
		axon_set_err(err, errlen, "peer is not axond (bad magic)");
		goto fail;
	}
	if (w->status) {
		w->message[sizeof(w->message) - 1] = 0;
		axon_set_err(err, errlen, "axond refused: %s", w->message);
		while (got)
			close(fds[--got]);
		return w->status < 0 ? w->status : -EPROTO;
	}
	if (w->abi_major != AXON_ABI_MAJOR) {
		axon_set_err(err, errlen, "axond speaks ABI %u.%u, this library %u.%u",
			w->abi_major, w->abi_minor, AXON_ABI_MAJOR, AXON_ABI_MINOR);
		goto fail;
	}
	return got;
fail:
	while (got)
		close(fds[--got]);
	return -EPROTO;
}

/* One attempt of unix_connect. */
static int unix_connect_once(const char *addr, const struct axon_params *req,
			     struct axon_ring *r, char *err, size_t errlen)
{
	struct axon_welcome w;
	struct stat st;
	int fds[3], ret, fd;

	if (!addr)
		addr = "unix:" AXON_DEFAULT_SOCKET;
	fd = axon_open_socket(addr, err, errlen);
	if (fd < 0)
		return fd;
	ret = axon_send_hello(fd, AXON_HELLO_CLIENT, req);
	if (ret) {
		axon_set_err(err, errlen, "sending hello: %s", strerror(-ret));
		goto err_sock;
	}
	{
		/* With process isolation axond may queue a client while a
		 * worker process starts for it, up to 100 s before it answers
		 * with an error (axond/supervisor.c): wait longer than that. */
		struct timeval welcome_timeout = { .tv_sec = 120 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &welcome_timeout,
			   sizeof(welcome_timeout));
	}
	ret = axon_recv_welcome(fd, &w, fds, 3, err, errlen);
	if (ret < 0)
		goto err_sock;
	if (ret != 3) {
		axon_set_err(err, errlen, "axond sent %d descriptors, expected 3", ret);
		while (ret)
			close(fds[--ret]);
		ret = -EPROTO;
		goto err_sock;
	}
	if (fstat(fds[0], &st) < 0) {
		ret = -errno;
		axon_set_err(err, errlen, "the ring region: %s", strerror(-ret));
		goto err_fds;
	}
	ret = axon_check_layout(&w.params, AXON_PAGE_SIZE, "axond", err, errlen);
	if (ret)
		goto err_fds;
	if (w.params.region_size != (uint64_t)st.st_size) {
		ret = -EPROTO;
		axon_set_err(err, errlen, "axond sent a region of %llu bytes for a layout of %llu",
			(unsigned long long)st.st_size,
			(unsigned long long)w.params.region_size);
		goto err_fds;
	}
	r->region_size = (size_t)st.st_size;
	r->region = mmap(NULL, r->region_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fds[0], 0);
	if (r->region == MAP_FAILED) {
		ret = -errno;
		axon_set_err(err, errlen, "mapping the ring region: %s", strerror(-ret));
		goto err_fds;
	}
	if (fstat(fds[1], &st) < 0 || (size_t)st.st_size < sizeof(struct axon_info)) {
		ret = -EPROTO;
		axon_set_err(err, errlen, "axond sent a short info page");
		goto err_region;
	}
	r->info_size = (size_t)st.st_size;
	r->info = mmap(NULL, r->info_size, PROT_READ, MAP_SHARED, fds[1], 0);
	if (r->info == MAP_FAILED) {
		ret = -errno;
		axon_set_err(err, errlen, "mapping the info page: %s", strerror(-ret));
		goto err_region;
	}
	close(fds[0]);
	close(fds[1]);

	r->params = w.params;
	r->sock_fd = fd;
	r->doorbell_fd = fds[2];
	r->cpage = (void *)((char *)r->region + w.params.off_client);
	r->dpage = (const void *)((char *)r->region + w.params.off_daemon);
	r->frontier = (const void *)((char *)r->region + w.params.off_frontier);
	r->sqes = (void *)((char *)r->region + w.params.off_sqes);
	r->cqes = (const void *)((char *)r->region + w.params.off_cqes);
	r->data = (unsigned char *)r->region + w.params.off_data;
	r->data_size = w.params.data_size;
	return 0;

err_region:
	munmap(r->region, r->region_size);
err_fds:
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
err_sock:
	close(fd);
	return ret;
}

/*
 * Attempts before a connection that axond closed unanswered is an error.
 * A restarting axond (SIGHUP, a device fault) keeps its listening socket
 * across the exec, so connections waiting in its backlog reach the new
 * process; but one it had accepted and not yet answered is closed with it
 * (ECONNRESET, or EOF, before any welcome). Nothing of the client's has
 * been taken then, so connecting again is safe: up to RESET_RETRIES more
 * times, 10 ms apart at first and doubling (0.63 s in all). A refusal is
 * a welcome with an error, never retried.
 */
#define RESET_RETRIES	6

/* addr: "unix:PATH" or "/PATH"; NULL: the default socket. */
static int unix_connect(const char *addr, const struct axon_params *req,
			struct axon_ring *r, char *err, size_t errlen)
{
	struct timespec delay = { .tv_nsec = 10 * 1000 * 1000 };
	unsigned int i;
	int ret;

	for (i = 0;; i++) {
		ret = unix_connect_once(addr, req, r, err, errlen);
		if ((ret != -ECONNRESET && ret != -EPIPE) || i == RESET_RETRIES)
			return ret;
		nanosleep(&delay, NULL);
		delay.tv_nsec *= 2;
	}
}


static int unix_doorbell(struct axon_ring *r, uint32_t n)
{
	uint64_t one = 1;

	(void)n;	/* axond drains every ring it is woken for */
	if (write(r->doorbell_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

/* A futex on the CQ tail: axond wakes it after publishing (FUTEX_WAKE). */
static int unix_wait(struct axon_ring *r, uint32_t seen_tail, uint64_t slice_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(slice_ns / 1000000000ull),
		.tv_nsec = (long)(slice_ns % 1000000000ull),
	};

	/* Any return (woken, timed out, the tail already moved, a signal)
	 * is the caller's to re-check. */
	syscall(SYS_futex, &r->dpage->cq_tail, FUTEX_WAIT, seen_tail, &ts, NULL, 0);
	return 0;
}

static int unix_alive(struct axon_ring *r)
{
	struct pollfd pfd = { .fd = r->sock_fd, .events = POLLIN };

	/* axond never writes to the socket after the welcome: any readiness
	 * means it closed its end. */
	if (poll(&pfd, 1, 0) > 0)
		return -EPIPE;
	return 0;
}

static int unix_send_fd(struct axon_ring *r, const void *msg, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	do {
		n = sendmsg(r->sock_fd, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE || errno == ECONNRESET ? -EPIPE : -errno;
	return (size_t)n == len ? 0 : -EIO;
}

static void unix_close(struct axon_ring *r)
{
	if (r->info && r->info != MAP_FAILED)
		munmap((void *)r->info, r->info_size);
	if (r->region)
		munmap(r->region, r->region_size);
	if (r->doorbell_fd >= 0)
		close(r->doorbell_fd);
	if (r->sock_fd >= 0)
		close(r->sock_fd);
}

const struct axon_transport_ops axon_transport_unix = {
	.name		= "unix",
	.id		= AXON_TRANSPORT_UNIX,
	.connect	= unix_connect,
	.doorbell	= unix_doorbell,
	.wait		= unix_wait,
	.alive		= unix_alive,
	.send_fd	= unix_send_fd,
	.close		= unix_close,
};
