// SPDX-License-Identifier: MIT
/*
 * Routing the driver's printf output to clients (see devout.h).
 *
 * stdio: axond's stdout becomes an unbuffered fopencookie stream. glibc
 * calls its write function on the thread that writes, inside the driver
 * call that flushed, so the bytes go to that thread's sink (a thread-local
 * client pointer the executor and the dispatcher set before each driver
 * call made for a client): exact attribution, no system call. Set before
 * the driver is opened, in case it keeps the FILE pointer.
 *
 * fd 1: if the driver wrote to file descriptor 1 directly instead, the
 * bytes would land in a pipe that replaces fd 1 (non-blocking, so a full
 * pipe can never stall a driver call), read after the calls that flush for
 * a client (cu_devout_collect). Attribution is then exact as long as no
 * other thread flushes another client's output at the same moment.
 *
 * stderr is replaced the same way (the driver prints a failed assert's
 * message there, fd 2 included); it reaches the client's stderr. axond's
 * own log is written to the original stderr (axond_log_fd), never through
 * these.
 *
 * A worker process (--isolation=process) serves one client: output no
 * sink claims (the driver may print from a thread of its own) is that
 * client's (cu_devout_fallback). Otherwise output of no client goes to the
 * original stdout or stderr, kept as real_fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../axond.h"
#include "../devout.h"
#include "devout.h"

static __thread struct client *sink;
static __thread bool discard;
static int real_fd[2] = { 1, 2 };	/* AXON_DEVOUT_STDOUT, _STDERR */
static int pipe_rd[2] = { -1, -1 };
static pthread_mutex_t collect_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fallback_lock = PTHREAD_MUTEX_INITIALIZER;
static struct client *fallback;

static void deliver(unsigned int which, const char *buf, size_t len)
{
	if (discard)
		return;
	if (sink) {
		devout_append_to(sink, which, buf, len);
		return;
	}
	pthread_mutex_lock(&fallback_lock);
	if (fallback) {
		devout_append_to(fallback, which, buf, len);
		pthread_mutex_unlock(&fallback_lock);
		return;
	}
	pthread_mutex_unlock(&fallback_lock);
	while (len) {
		ssize_t n = write(real_fd[which], buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t len)
{
	deliver(cookie == &real_fd[1] ? AXON_DEVOUT_STDERR : AXON_DEVOUT_STDOUT, buf, len);
	return (ssize_t)len;
}

/* An unbuffered stream whose writes reach cookie_write within the call
 * that made them, on that thread. */
static FILE *cookie_stream(int *which)
{
	cookie_io_functions_t io = { .write = cookie_write };
	FILE *f = fopencookie(which, "w", io);

	if (f)
		setvbuf(f, NULL, _IONBF, 0);
	return f;
}

int cu_devout_init(char *err, size_t errlen)
{
	int p[2], i;
	FILE *f[2];

	fflush(stdout);
	fflush(stderr);
	for (i = 0; i < 2; i++) {
		int fd = fcntl(i + 1, F_DUPFD_CLOEXEC, 3);

		if (fd < 0) {
			snprintf(err, errlen, "device output: dup of fd %d: %s", i + 1,
				 strerror(errno));
			return -EIO;
		}
		real_fd[i] = fd;
		f[i] = cookie_stream(&real_fd[i]);
		if (!f[i]) {
			snprintf(err, errlen, "device output: fopencookie failed");
			return -ENOMEM;
		}
	}
	/* stderr too: the driver prints a failed assert's message there.
	 * axond's own log lines go through it to the real stderr (its
	 * threads have no sink while they log). */
	stdout = f[0];
	stderr = f[1];
	axond_log_fd = real_fd[1];
	for (i = 0; i < 2; i++) {
		if (pipe2(p, O_CLOEXEC | O_NONBLOCK))
			continue;
		if (dup2(p[1], i + 1) == i + 1)
			pipe_rd[i] = p[0];
		else
			close(p[0]);
		close(p[1]);
		/* fds 1 and 2 themselves must not block a driver call: the
		 * pipes' write ends are non-blocking (shared by the dup). */
	}
	return 0;
}

void cu_devout_fallback(struct client *c)
{
	pthread_mutex_lock(&fallback_lock);
	fallback = c;
	pthread_mutex_unlock(&fallback_lock);
}

/*
 * Give fd 1 back to what it was, so that a process axond starts (its own
 * restart after a device fault, main.c) writes to the real
 * stdout, not to a pipe nobody reads.
 */
void cu_devout_restore(void)
{
	fflush(stdout);
	if (pipe_rd[0] >= 0 && real_fd[0] != 1)
		dup2(real_fd[0], 1);
	if (pipe_rd[1] >= 0 && real_fd[1] != 2)
		dup2(real_fd[1], 2);
}

void cu_devout_sink(struct client *c)
{
	sink = c;
}

void cu_devout_discard(bool on)
{
	discard = on;
}

void cu_devout_collect(void)
{
	char buf[4096];
	ssize_t n;
	int i;

	pthread_mutex_lock(&collect_lock);
	for (i = 0; i < 2; i++)
		while (pipe_rd[i] >= 0 && (n = read(pipe_rd[i], buf, sizeof(buf))) > 0)
			deliver(i ? AXON_DEVOUT_STDERR : AXON_DEVOUT_STDOUT, buf, (size_t)n);
	pthread_mutex_unlock(&collect_lock);
}

bool cu_image_may_print(const void *image, size_t len)
{
	const unsigned char *p = image;

	/* An ELF (cubin) or PTX text names what it calls in plain text; a
	 * fatbin may hold them compressed: assume it prints. */
	if (len >= 4 && !(p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') &&
	    memchr(image, 0, len < 256 ? len : 256))
		return true;	/* binary, not ELF: a fatbin */
	return memmem(image, len, "vprintf", 7) || memmem(image, len, "__assertfail", 12);
}
