// SPDX-License-Identifier: MIT
/*
 * Sending the welcome, the daemon's answer to a hello (welcome.h): with the
 * client's descriptors, or followed by the stats document. Every part of
 * the daemon that answers a hello (server.c, transport-unix.c, trace.c,
 * supervisor*.c) sends through here, which calls nothing of the daemon's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "axond.h"
#include "welcome.h"

int welcome_send(int fd, const struct axon_welcome *w, const int *fds, int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 3)] = { 0 };
	struct iovec iov = { .iov_base = (void *)w, .iov_len = sizeof(*w) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (nfds) {
		struct cmsghdr *c;

		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(*w) ? 0 : -EIO;
}

/* The welcome, then the stats document doc (NULL: out of memory). */
void welcome_send_stats(int fd, struct axon_welcome *w, const char *doc, size_t len)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	size_t off;
	int fl;

	if (!doc) {
		w->status = -ENOMEM;
		snprintf(w->message, sizeof(w->message), "out of memory");
		welcome_send(fd, w, NULL, 0);
		return;
	}
	if (welcome_send(fd, w, NULL, 0))
		return;
	/*
	 * Blocking sends bounded by a short SO_SNDTIMEO: the dispatcher waits
	 * at most that long for a reader that stopped reading, then gives up
	 * on it. Documents usually fit the socket buffer and never wait.
	 */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return;
	for (off = 0; off < len;) {
		size_t chunk = len - off > AXON_STATS_CHUNK ? AXON_STATS_CHUNK : len - off;
		ssize_t n = send(fd, doc + off, chunk, MSG_NOSIGNAL);

		if (n <= 0) {
			log_info("stats reader too slow or gone; document cut short");
			break;
		}
		off += (size_t)n;
	}
}
