// SPDX-License-Identifier: MIT
/*
 * events.c - the events command: the kernel module's "events" multicast
 * group, one line per event, until --count events, --wait seconds or a
 * signal.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

#include "axonctl.h"

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void print_event(const struct ctl *ctl, const struct axon_kevent *ev)
{
	char ts[32], a[32], b[32], c[32];
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	printf("%s.%03ld %s", ts, (long)tv.tv_usec / 1000, axon_nl_event_name(ev->event));
	switch (ev->event) {
	case AXON_NLEV_CLIENT_OPEN:
	case AXON_NLEV_CLIENT_EXIT:
		printf(" client=%" PRIu64 " pid=%u uid=%u comm=%s cgroup_id=%" PRIu64,
		       ev->client_id, ev->pid, ev->uid, ev->comm, ev->cgroup_id);
		break;
	case AXON_NLEV_LIMIT_HIT:
		printf(" client=%" PRIu64 " cgroup_id=%" PRIu64 " kind=%s bytes=%s usage=%s "
		       "limit=%s", ev->client_id, ev->cgroup_id,
		       ev->kind == AXON_CHARGE_DEVICE_MEM ? "devmem" : "?",
		       fmt_size(ctl, ev->bytes, a, sizeof(a)),
		       fmt_size(ctl, ev->usage, b, sizeof(b)),
		       fmt_limit(ctl, ev->limit, c, sizeof(c)));
		break;
	default:
		printf(" pid=%u", ev->pid);
		break;
	}
	putchar('\n');
	fflush(stdout);
}

int cmd_events(struct ctl *ctl, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_interrupt };
	struct timespec t0, now;
	struct axon_kevent ev;
	struct axon_nl *nl;
	struct kargs ka;
	char err[512];
	long seen = 0;
	int ret;

	ret = kparse(ctl, "events", "[--count N] [--wait S]", KA_COUNT | KA_WAIT, 0, 0, argc,
		     argv, &ka);
	if (ret)
		return ret;
	nl = kopen(err, sizeof(err), &ret);
	if (!nl)
		return 1;
	ret = axon_nl_events_subscribe(nl);
	if (ret) {
		errmsg("%s", err);
		axon_nl_close(nl);
		return 1;
	}
	/* no SA_RESTART: poll() returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	errmsg("following kernel events%s", ka.count > 0 ? "" : " (Ctrl-C to stop)");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!interrupted && (ka.count < 0 || seen < ka.count)) {
		int wait_ms = 500;

		if (ka.wait_s >= 0) {
			double left;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left = ka.wait_s - ((double)(now.tv_sec - t0.tv_sec) +
					    (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
			if (left <= 0)
				break;
			if (left * 1000 < wait_ms)
				wait_ms = (int)(left * 1000) + 1;
		}
		ret = axon_nl_event_next(nl, &ev, wait_ms);
		if (ret == -ETIMEDOUT || ret == -EINTR)
			continue;
		if (ret == -ENOBUFS) {
			errmsg("%s", err);
			continue;
		}
		if (ret) {
			errmsg("%s", err);
			axon_nl_close(nl);
			return 1;
		}
		print_event(ctl, &ev);
		seen++;
	}
	axon_nl_close(nl);
	if (ka.count > 0 && seen < ka.count && !interrupted) {
		errmsg("events: %ld of %ld events within %g s", seen, ka.count, ka.wait_s);
		return 1;
	}
	return 0;
}
