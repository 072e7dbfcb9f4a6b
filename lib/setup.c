// SPDX-License-Identifier: MIT
/*
 * Connecting to axond: parse the address, exchange hello/welcome over a
 * SOCK_SEQPACKET unix socket, receive the region, info and doorbell
 * descriptors and map them. The only file of libaxon that sets up state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <stdbool.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include <linux/axon-layout.h>
#include "transport.h"

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *axon_default_addr(void)
{
	const char *env = getenv("AXON_ADDR");

	return env && *env ? env : "unix:" AXON_DEFAULT_SOCKET;
}

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
		set_err(err, errlen, "unsupported axon address '%s' (want unix:PATH)", addr);
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		set_err(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int e = errno;

		set_err(err, errlen, "socket: %s", strerror(e));
		return -e;
	}
	/* A daemon that accepts and never answers must not hang us. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &io_timeout, sizeof(io_timeout));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &io_timeout, sizeof(io_timeout));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		set_err(err, errlen, "cannot reach axond at %s: %s", path, strerror(e));
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
		set_err(err, errlen, "no answer from axond: %s", strerror(-got));
		return got;
	}
	if (w->magic != AXON_MAGIC) {
		set_err(err, errlen, "peer is not axond (bad magic)");
		goto fail;
	}
	if (w->status) {
		w->message[sizeof(w->message) - 1] = 0;
		set_err(err, errlen, "axond refused: %s", w->message);
		while (got)
			close(fds[--got]);
		return w->status < 0 ? w->status : -EPROTO;
	}
	if (w->abi_major != AXON_ABI_MAJOR) {
		set_err(err, errlen, "axond speaks ABI %u.%u, this library %u.%u",
			w->abi_major, w->abi_minor, AXON_ABI_MAJOR, AXON_ABI_MINOR);
		goto fail;
	}
	return got;
fail:
	while (got)
		close(fds[--got]);
	return -EPROTO;
}

/*
 * The layout we were sent must be the one its sizes give
 * (linux/axon-layout.h: axond and the module compute it the same way), so
 * every part lies inside the region and where the other side thinks it is.
 */
int axon_check_layout(const struct axon_params *p, uint64_t page_size,
		      const char *sender, char *err, size_t errlen)
{
	const struct axon_layout_rules rules = {
		.page_size = page_size,
		.max_data_size = AXON_MAX_DATA_SIZE,
	};
	struct axon_params want = {
		.sq_entries = p->sq_entries,
		.cq_entries = p->cq_entries,
		.data_size = p->data_size,
	};

	if (!p->sq_entries || !p->cq_entries || !p->data_size ||
	    axon_region_layout(&want, &rules, NULL) ||
	    want.sq_entries != p->sq_entries || want.cq_entries != p->cq_entries ||
	    want.data_size != p->data_size ||
	    want.frontier_entries != p->frontier_entries ||
	    want.off_client != p->off_client || want.off_daemon != p->off_daemon ||
	    want.off_frontier != p->off_frontier || want.off_sqes != p->off_sqes ||
	    want.off_cqes != p->off_cqes || want.off_data != p->off_data ||
	    want.region_size != p->region_size) {
		set_err(err, errlen, "%s sent an inconsistent ring layout", sender);
		return -EPROTO;
	}
	return 0;
}

static void ring_defaults(struct axon_ring *r)
{
	const char *spin = getenv("AXON_SPIN_NS");

	r->sq_entries = r->params.sq_entries;
	r->sq_mask = r->params.sq_entries - 1;
	r->cq_entries = r->params.cq_entries;
	r->cq_mask = r->params.cq_entries - 1;
	r->sq_tail = axon_read_once(&r->cpage->sq_tail);
	r->cq_head = axon_read_once(&r->cpage->cq_head);
	r->spin_ns = spin ? (unsigned int)strtoul(spin, NULL, 10) : 50000;
}

static bool is_kmod_addr(const char *addr, const char **path)
{
	if (!strncmp(addr, "kmod:", 5)) {
		*path = addr + 5;
		return true;
	}
	if (!strncmp(addr, "/dev/", 5)) {
		*path = addr;
		return true;
	}
	return false;
}

static int connect_unix(const char *addr, const struct axon_params *req,
			struct axon_ring *r, char *err, size_t errlen);

int axon_connect(const char *addr, const struct axon_params *req,
		 struct axon_ring *r, char *err, size_t errlen)
{
	const char *env = getenv("AXON_ADDR"), *path;
	int ret;

	memset(r, 0, sizeof(*r));
	r->sock_fd = r->doorbell_fd = r->dev_fd = -1;
	if (!addr && env && *env)
		addr = env;
	if (addr) {
		if (is_kmod_addr(addr, &path)) {
			ret = axon_kmod_connect(path, req, r, err, errlen);
			if (!ret)
				ring_defaults(r);
			return ret;
		}
		return connect_unix(addr, req, r, err, errlen);
	}
	/* No address given: the kernel transport when a daemon serves it
	 * (identity and accounting then cannot be bypassed), else the socket. */
	if (access(AXON_DEVICE_PATH, R_OK | W_OK) == 0) {
		ret = axon_kmod_connect(AXON_DEVICE_PATH, req, r, err, errlen);
		if (!ret) {
			ring_defaults(r);
			return 0;
		}
		if (ret != -ECONNREFUSED && ret != -ENOENT && ret != -ENODEV)
			return ret;
		r->dev_fd = -1;
	}
	return connect_unix(NULL, req, r, err, errlen);
}

static int connect_unix(const char *addr, const struct axon_params *req,
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
		set_err(err, errlen, "sending hello: %s", strerror(-ret));
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
		set_err(err, errlen, "axond sent %d descriptors, expected 3", ret);
		while (ret)
			close(fds[--ret]);
		ret = -EPROTO;
		goto err_sock;
	}
	if (fstat(fds[0], &st) < 0) {
		ret = -errno;
		set_err(err, errlen, "the ring region: %s", strerror(-ret));
		goto err_fds;
	}
	ret = axon_check_layout(&w.params, AXON_PAGE_SIZE, "axond", err, errlen);
	if (ret)
		goto err_fds;
	if (w.params.region_size != (uint64_t)st.st_size) {
		ret = -EPROTO;
		set_err(err, errlen, "axond sent a region of %llu bytes for a layout of %llu",
			(unsigned long long)st.st_size,
			(unsigned long long)w.params.region_size);
		goto err_fds;
	}
	r->region_size = (size_t)st.st_size;
	r->region = mmap(NULL, r->region_size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fds[0], 0);
	if (r->region == MAP_FAILED) {
		ret = -errno;
		set_err(err, errlen, "mapping the ring region: %s", strerror(-ret));
		goto err_fds;
	}
	if (fstat(fds[1], &st) < 0 || (size_t)st.st_size < sizeof(struct axon_info)) {
		ret = -EPROTO;
		set_err(err, errlen, "axond sent a short info page");
		goto err_region;
	}
	r->info_size = (size_t)st.st_size;
	r->info = mmap(NULL, r->info_size, PROT_READ, MAP_SHARED, fds[1], 0);
	if (r->info == MAP_FAILED) {
		ret = -errno;
		set_err(err, errlen, "mapping the info page: %s", strerror(-ret));
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
	r->transport = AXON_TRANSPORT_UNIX;
	ring_defaults(r);
	return 0;

err_region:
	munmap(r->region, r->region_size);
err_fds:
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
err_sock:
	close(fd);
	memset(r, 0, sizeof(*r));
	r->sock_fd = r->doorbell_fd = r->dev_fd = -1;
	return ret;
}

void axon_close(struct axon_ring *r)
{
	if (r->transport == AXON_TRANSPORT_KMOD) {
		axon_kmod_unmap(r);
		if (r->dev_fd >= 0)
			close(r->dev_fd);
	} else {
		if (r->info && r->info != MAP_FAILED)
			munmap((void *)r->info, r->info_size);
		if (r->region)
			munmap(r->region, r->region_size);
	}
	if (r->doorbell_fd >= 0)
		close(r->doorbell_fd);
	if (r->sock_fd >= 0)
		close(r->sock_fd);
	memset(r, 0, sizeof(*r));
	r->sock_fd = r->doorbell_fd = r->dev_fd = -1;
}

int axon_read_stats(const char *addr, char **json, char *err, size_t errlen)
{
	struct axon_welcome w;
	size_t len = 0, cap = AXON_STATS_CHUNK + 1;
	char *buf;
	int fd, ret;

	*json = NULL;
	/* The stats endpoint is the daemon's socket, whatever the client
	 * transport: a kernel-transport address means the default socket. */
	if (!addr)
		addr = axon_default_addr();
	if (!strncmp(addr, "kmod:", 5) || !strncmp(addr, "/dev/", 5))
		addr = "unix:" AXON_DEFAULT_SOCKET;
	fd = axon_open_socket(addr, err, errlen);
	if (fd < 0)
		return fd;
	ret = axon_send_hello(fd, AXON_HELLO_STATS, NULL);
	if (!ret)
		ret = axon_recv_welcome(fd, &w, NULL, 0, err, errlen);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < AXON_STATS_CHUNK + 1) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				ret = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + len, AXON_STATS_CHUNK, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (ret < 0) {
		free(buf);
		set_err(err, errlen, "reading stats: %s", strerror(-ret));
		return ret;
	}
	buf[len] = 0;
	*json = buf;
	return 0;
}
