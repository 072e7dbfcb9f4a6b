// SPDX-License-Identifier: MIT
/*
 * One axond per listening address. Binding a unix socket means removing
 * whatever file is at its path first, so a second axond started on a live
 * address used to take it over: the first kept its clients, new clients
 * reached the second. Before it touches the path, axond now takes an
 * exclusive flock(2) on "<path>.lock" (mode 0600, so that no other user
 * can open it and hold the lock to keep axond from starting) and holds it
 * for its life; the kernel drops it when the process ends, however it
 * ends, so a daemon killed with SIGKILL leaves no stale lock, only a stale
 * socket, which the next one then replaces safely. The lock file stays:
 * removing it would let two daemons lock two different files.
 *
 * A restart (main.c) execs axond in place: the descriptor stays open across
 * the exec, named in AXOND_LOCK_FD, so the address is never unlocked
 * between the two processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addrlock.h"
#include "log.h"

/* The lock a restarting axond handed over, or -1. */
static int inherited_lock(void)
{
	const char *v = getenv(AXOND_LOCK_FD_ENV);
	struct stat st;
	char *end;
	long fd;

	if (!v)
		return -1;
	errno = 0;
	fd = strtol(v, &end, 10);
	unsetenv(AXOND_LOCK_FD_ENV);
	if (errno || *end || fd < 3 || fd > 65535 || fstat((int)fd, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return -1;
	/* Ours already (the same open file): this only re-asserts it. */
	if (flock((int)fd, LOCK_EX | LOCK_NB) < 0 ||
	    fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0)
		return -1;
	return (int)fd;
}

/* Who holds it, as the holder wrote it, for the message. */
static void holder(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);
	size_t i;

	if (n <= 0) {
		snprintf(buf, len, "unknown");
		return;
	}
	buf[n] = 0;
	for (i = 0; buf[i]; i++)
		if (buf[i] < '0' || buf[i] > '9') {
			buf[i] = 0;
			break;
		}
	if (!buf[0])
		snprintf(buf, len, "unknown");
}

int addr_lock(const char *sock_path)
{
	char path[256], pid[24];
	int fd, e, n;

	fd = inherited_lock();
	if (fd >= 0)
		return fd;
	n = snprintf(path, sizeof(path), "%s.lock", sock_path);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		log_err("the socket path %s is too long for its lock file", sock_path);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		e = errno;
		log_err("cannot open the address lock %s: %s", path, strerror(e));
		return -e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		e = errno;
		if (e == EWOULDBLOCK) {
			holder(fd, pid, sizeof(pid));
			log_err("another axond (pid %s) serves unix:%s; not starting a second "
				"one on its address", pid, sock_path);
			e = EADDRINUSE;
		} else {
			log_err("cannot lock %s: %s", path, strerror(e));
		}
		close(fd);
		return -e;
	}
	/* For the message a second daemon prints: our pid. */
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
		log_warn("cannot write our pid into %s: %s", path, strerror(errno));
	return fd;
}

void addr_lock_handover(int fd)
{
	char num[16];

	if (fd < 0 || fcntl(fd, F_SETFD, 0) < 0)
		return;
	snprintf(num, sizeof(num), "%d", fd);
	setenv(AXOND_LOCK_FD_ENV, num, 1);
}
