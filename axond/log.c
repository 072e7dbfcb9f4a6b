// SPDX-License-Identifier: MIT
/*
 * axond's log: one line per event on stderr, with level and time; or,
 * when stderr is systemd's journal, one line with the level as a syslog
 * priority prefix ("<3>" for errors, sd-daemon(3)) and no time of its own,
 * which the journal records itself, so that `journalctl -p err` finds
 * axond's errors. systemd names the stream it gives a service in
 * JOURNAL_STREAM ("device:inode"); it is the journal only while the log
 * descriptor is that very file (a redirection in between is not).
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "axond.h"

int axond_verbose = LOG_INFO;
/* Where log lines go: stderr, or (cuda backend) the original stderr once
 * fds 1 and 2 and stdio's streams carry the driver's output to clients. */
int axond_log_fd = 2;
/* "worker PID: " in a worker process (worker.c), so the supervisor's log,
 * which the workers share, says whose line each is. */
char axond_log_tag[32];

/* Whether fd is the stream JOURNAL_STREAM names. */
static bool is_journal(int fd)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char end;

	if (!v || sscanf(v, "%llu:%llu%c", &dev, &ino, &end) != 2 || fstat(fd, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void axond_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	/* syslog(3) priorities: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG */
	static const int priorities[] = { 3, 4, 6, 7 };
	/* Looked at again only when the log descriptor changes; any thread
	 * logs (journal is stored first, so a reader that sees journal_fd
	 * current sees its journal). */
	static _Atomic int journal_fd = -1;
	static _Atomic bool journal;
	struct timespec ts;
	char line[1024];
	va_list ap;

	if (level > axond_verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (journal_fd != axond_log_fd) {
		journal = is_journal(axond_log_fd);
		journal_fd = axond_log_fd;
	}
	if (journal) {
		dprintf(axond_log_fd, "<%d>%s%s\n", priorities[level], axond_log_tag, line);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	dprintf(axond_log_fd, "axond[%ld.%03ld] %s%s: %s\n", (long)ts.tv_sec,
		ts.tv_nsec / 1000000, axond_log_tag, names[level], line);
}
