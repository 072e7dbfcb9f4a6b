// SPDX-License-Identifier: MIT
/*
 * The attack tests' shared pieces (attack.h). Every wait is bounded:
 * a daemon that stops answering fails the test, it never hangs it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <axon/protocol.h>
#include "attack.h"

int a_connect_raw(const struct h_daemon *d)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return h_fail("socket: %s", strerror(errno));
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", d->sock);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		h_fail("connect %s: %s", d->sock, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int32_t a_hello(int sock, uint32_t kind, uint64_t target_client, uint32_t target_pid,
		struct axon_welcome *w, int timeout_ms)
{
	struct axon_hello h = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
		.kind = kind,
		.target_client = target_client,
		.target_pid = target_pid,
	};
	struct axon_welcome tmp;
	struct pollfd p = { .fd = sock, .events = POLLIN };

	if (send(sock, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h))
		return INT32_MIN;
	if (!w)
		w = &tmp;
	if (poll(&p, 1, timeout_ms) != 1 ||
	    recv(sock, w, sizeof(*w), MSG_DONTWAIT) != (ssize_t)sizeof(*w))
		return INT32_MIN;
	return w->status;
}

int a_send_fd(int sock, const void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

void a_lean_sanitizer(void)
{
#if defined(__SANITIZE_ADDRESS__)
	const char *old = getenv("ASAN_OPTIONS");
	char buf[512];

	snprintf(buf, sizeof(buf), "%s%squarantine_size_mb=0:allocator_release_to_os_interval_ms=0", old ? old : "", old ? ":" : "");
	setenv("ASAN_OPTIONS", buf, 1);
#endif
}

int a_proc_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((e = readdir(dir)))
		if (e->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/*
 * RLIMIT_NOFILE bounds descriptor numbers, not their count: a descriptor
 * the daemon inherited at a high number (a test runner's pipe) takes no room
 * below the limit. Walk the numbers up to the nfree-th free one.
 */
int a_proc_fd_limit(pid_t pid, int nfree)
{
	enum { MAX_NUM = 4096 };
	static unsigned char used[MAX_NUM];
	char path[64];
	struct dirent *e;
	DIR *dir;
	int n;

	memset(used, 0, sizeof(used));
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		long num;
		char *end;

		if (e->d_name[0] == '.')
			continue;
		num = strtol(e->d_name, &end, 10);
		if (*end == '\0' && num >= 0 && num < MAX_NUM)
			used[num] = 1;
	}
	closedir(dir);
	for (n = 0; n < MAX_NUM; n++)
		if (!used[n] && --nfree == 0)
			return n + 1;
	return -1;
}

/* The state letter in /proc/pid/stat (after the parenthesised name). */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

int a_stop(pid_t pid)
{
	uint64_t end;

	if (kill(pid, SIGSTOP) < 0)
		return h_fail("SIGSTOP %d: %s", (int)pid, strerror(errno));
	end = h_now_ms() + H_MS(5000);
	while (h_now_ms() < end) {
		if (proc_state(pid) == 'T')
			return 0;
		usleep(1000);
	}
	return h_fail("process %d did not stop (state %c)", (int)pid, proc_state(pid));
}

long a_proc_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int a_proc_maps(pid_t pid)
{
	char path[64];
	int n = 0, ch;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while ((ch = fgetc(f)) != EOF)
		if (ch == '\n')
			n++;
	fclose(f);
	return n;
}
