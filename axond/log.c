// SPDX-License-Identifier: MIT
/* axond's log: one line per event on stderr, with level and time. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "axond.h"

int axond_verbose = LOG_INFO;
/* Where log lines go: stderr, or (cuda backend) the original stderr once
 * fds 1 and 2 and stdio's streams carry the driver's output to clients. */
int axond_log_fd = 2;
/* "worker PID: " in a worker process (worker.c), so the supervisor's log,
 * which the workers share, says whose line each is. */
char axond_log_tag[32];

void axond_log(int level, const char *fmt, ...)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	struct timespec ts;
	char line[1024];
	va_list ap;

	if (level > axond_verbose)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	dprintf(axond_log_fd, "axond[%ld.%03ld] %s%s: %s\n", (long)ts.tv_sec,
		ts.tv_nsec / 1000000, axond_log_tag, names[level], line);
}
