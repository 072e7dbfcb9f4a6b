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

int ctl_send(int sock, uint32_t type, uint64_t value, int fd)
{
	struct ctl_msg m = { .type = type, .value = value };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
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
	return n == (ssize_t)sizeof(m) ? 0 : -EIO;
}

ssize_t ctl_recv(int sock, struct ctl_msg *m, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
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
	if (n > 0 && (n != (ssize_t)sizeof(*m) || (msg.msg_flags & MSG_CTRUNC))) {
		log_warn("%s: malformed control message (%zd bytes)",
			 axond_log_tag[0] ? "worker" : "supervisor", n);
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EAGAIN;
	}
	return n;
}
