// SPDX-License-Identifier: MIT
/*
 * Connecting to axond: choose the transport an address names (unix.c,
 * kmod.c), let it set the ring up, check the layout it was sent and fill
 * in the ring's private state; closing; the stats document.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include <linux/axon-layout.h>
#include "transport.h"

void axon_set_err(char *err, size_t errlen, const char *fmt, ...)
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
		axon_set_err(err, errlen, "%s sent an inconsistent ring layout", sender);
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

/*
 * The transport an address names: the kernel module's device for
 * "kmod:PATH" and paths under /dev/, else the socket, which parses (and
 * refuses) the rest itself. *path is what the transport is given.
 */
static const struct axon_transport_ops *transport_of(const char *addr,
						      const char **path)
{
	if (!strncmp(addr, "kmod:", 5)) {
		*path = addr + 5;
		return &axon_transport_kmod;
	}
	*path = addr;
	if (!strncmp(addr, "/dev/", 5))
		return &axon_transport_kmod;
	return &axon_transport_unix;
}

/* Why a connection went to the socket rather than /dev/axon, on stderr
 * (AXON_LOG=0 silences it, as the shim's own messages). */
static void fallback_note(const char *why)
{
	const char *lvl = getenv("AXON_LOG");

	if (lvl && !strcmp(lvl, "0"))
		return;
	fprintf(stderr, "axon: %s; connecting through the socket instead\n", why);
}

static void ring_reset(struct axon_ring *r)
{
	memset(r, 0, sizeof(*r));
	r->sock_fd = r->doorbell_fd = r->dev_fd = -1;
}

/* Connects r over t; on failure r is left closed (ring_reset). */
static int connect_over(const struct axon_transport_ops *t, const char *path,
			const struct axon_params *req, struct axon_ring *r,
			char *err, size_t errlen)
{
	int ret = t->connect(path, req, r, err, errlen);

	if (ret) {
		ring_reset(r);
		return ret;
	}
	r->ops = t;
	r->transport = t->id;
	ring_defaults(r);
	return 0;
}

int axon_connect(const char *addr, const struct axon_params *req,
		 struct axon_ring *r, char *err, size_t errlen)
{
	const char *env = getenv("AXON_ADDR"), *path;
	const struct axon_transport_ops *t;
	int ret;

	ring_reset(r);
	if (!addr && env && *env)
		addr = env;
	if (addr) {
		t = transport_of(addr, &path);
		return connect_over(t, path, req, r, err, errlen);
	}
	/* No address given: the kernel transport when a daemon serves it
	 * (identity and accounting then cannot be bypassed), else the socket. */
	if (access(AXON_DEVICE_PATH, R_OK | W_OK) == 0) {
		char why[256] = "";

		ret = connect_over(&axon_transport_kmod, AXON_DEVICE_PATH, req, r,
				   why, sizeof(why));
		if (ret == -EMFILE || ret == -EDQUOT)
			/* The module's per-user limits (max_user_clients,
			 * max_user_region_bytes): said, as the socket is
			 * the daemon's to refuse or not (--transport). */
			fallback_note(why);
		else if (ret != -ECONNREFUSED && ret != -ENOENT && ret != -ENODEV) {
			axon_set_err(err, errlen, "%s", why);
			return ret;
		}
	}
	return connect_over(&axon_transport_unix, NULL, req, r, err, errlen);
}

void axon_close(struct axon_ring *r)
{
	/* A ring that never connected, or was closed, has no transport. */
	if (r->ops)
		r->ops->close(r);
	ring_reset(r);
}

int axon_send_fd(struct axon_ring *r, const void *msg, size_t len, int fd)
{
	if (!r->ops || !r->ops->send_fd)
		return -EOPNOTSUPP;
	return r->ops->send_fd(r, msg, len, fd);
}

int axon_read_stats(const char *addr, char **json, char *err, size_t errlen)
{
	struct axon_welcome w;
	size_t len = 0, cap = AXON_STATS_CHUNK + 1;
	const char *path;
	char *buf;
	int fd, ret;

	*json = NULL;
	/* The stats endpoint is the daemon's socket, whatever the client
	 * transport: a kernel-transport address means the default socket. */
	if (!addr)
		addr = axon_default_addr();
	if (transport_of(addr, &path) != &axon_transport_unix)
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
		axon_set_err(err, errlen, "reading stats: %s", strerror(-ret));
		return ret;
	}
	buf[len] = 0;
	*json = buf;
	return 0;
}

int axon_daemon_limit(const char *addr, int cgroup_fd, int set, uint64_t limit,
		      struct axon_dlimit *out, char *err, size_t errlen)
{
	struct axon_hello hello = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
		.kind = AXON_HELLO_LIMIT,
		.target_pid = set ? AXON_LIMIT_OP_SET : AXON_LIMIT_OP_GET,
		.target_client = set ? limit : 0,
	};
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = &hello, .iov_len = sizeof(hello) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	struct axon_welcome w;
	const char *path;
	ssize_t n;
	int fd, ret;

	if (!addr)
		addr = axon_default_addr();
	if (transport_of(addr, &path) != &axon_transport_unix)
		addr = "unix:" AXON_DEFAULT_SOCKET;
	fd = axon_open_socket(addr, err, errlen);
	if (fd < 0)
		return fd;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &cgroup_fd, sizeof(int));
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : n == sizeof(hello) ? 0 : -EIO;
	if (!ret)
		ret = axon_recv_welcome(fd, &w, NULL, 0, err, errlen);
	close(fd);
	if (ret < 0)
		return ret;
	out->limit = w.params.resv[0];
	out->usage = w.params.resv[1];
	out->peak = w.params.resv[2];
	out->failcnt = w.params.resv[3];
	return 0;
}
