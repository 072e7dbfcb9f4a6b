// SPDX-License-Identifier: MIT
/*
 * One message each way between the supervisor and a worker process
 * (ctl.h), with at most one descriptor attached. Both ends are
 * non-blocking: neither may stall the other's loop.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "axond.h"
#include "ctl.h"

static int send_parts(int sock, const struct ctl_msg *m, const void *extra,
		      size_t extra_len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov[2] = {
		{ .iov_base = (void *)m, .iov_len = sizeof(*m) },
		{ .iov_base = (void *)extra, .iov_len = extra_len },
	};
	struct msghdr msg = { .msg_iov = iov, .msg_iovlen = extra_len ? 2 : 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do {
		n = sendmsg(sock, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)(sizeof(*m) + extra_len) ? 0 : -EIO;
}

int ctl_send(int sock, uint32_t type, uint64_t value, int fd)
{
	struct ctl_msg m = { .type = type, .value = value };

	return send_parts(sock, &m, NULL, 0, fd);
}

int ctl_send_kclient(int sock, uint64_t value, const struct ctl_kclient *kc, int fd)
{
	struct ctl_msg m = { .type = CTL_KCLIENT, .value = value };

	return send_parts(sock, &m, kc, sizeof(*kc), fd);
}

ssize_t ctl_recv(int sock, struct ctl_msg *m, struct ctl_kclient *kc, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct ctl_kclient scratch;
	struct iovec iov[2] = {
		{ .iov_base = m, .iov_len = sizeof(*m) },
		{ .iov_base = kc ? kc : &scratch, .iov_len = sizeof(scratch) },
	};
	struct msghdr msg = {
		.msg_iov = iov, .msg_iovlen = 2,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	size_t want;
	ssize_t n;

	*fd = -1;
	do {
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -EAGAIN : 0;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n == 0)
		return 0;
	want = sizeof(*m);
	if (n >= (ssize_t)sizeof(*m) && m->type == CTL_KCLIENT)
		want += kc ? sizeof(*kc) : 1;	/* without kc: never well formed */
	if (n != (ssize_t)want || (msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC))) {
		log_warn("%s: malformed control message (%zd bytes)",
			 axond_log_tag[0] ? "worker" : "supervisor", n);
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EAGAIN;
	}
	return n;
}
