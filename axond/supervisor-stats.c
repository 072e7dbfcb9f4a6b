// SPDX-License-Identifier: MIT
/*
 * The supervisor's stats (--isolation=process): a stats request is
 * answered with one document made of its workers' reports (report.h),
 * rendered by statsdoc.c as a daemon's own is.
 *
 * The daemon section is the supervisor's, with the workers' totals added
 * up; the devices are the first answering worker's, with busy_ns summed
 * over every worker (those gone as last seen); the clients are the
 * workers' clients the asker may see (access.c: its own, every one for an
 * administrator; a worker serves one client, of client_uid).
 *
 * A report is the worker's word, and a worker serves a hostile client: it
 * is copied out of the memfd once, checked whole (report_check), and its
 * client must be the one the supervisor gave that worker.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "axond.h"
#include "access.h"
#include "ctl.h"
#include "report.h"
#include "stats.h"
#include "supervisor.h"
#include "welcome.h"

/* How long a stats request waits for the workers' reports, at most. */
#define STATS_WAIT_MS		500

/* a + b, or UINT64_MAX: a worker's numbers are not to wrap the totals. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The report a CTL_STATS_REPORT carries in fd, copied and checked; NULL
 * (logged) when there is none fit to use. */
static struct worker_report *read_report(const struct wproc *w, const struct ctl_msg *m, int fd)
{
	struct worker_report *r;
	const char *why = "unreadable";

	if (fd < 0 || m->value != sizeof(*r)) {
		log_warn("supervisor: worker %d sent a stats report of %llu bytes; ignored",
			 (int)w->pid, (unsigned long long)m->value);
		return NULL;
	}
	r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	/* One copy: the worker may still write the memfd, so nothing is
	 * read from it twice (or mapped). */
	if (pread(fd, r, sizeof(*r), 0) != (ssize_t)sizeof(*r) || report_check(r, &why))
		goto bad;
	/* Its client is the one it was given, or none yet. */
	if (r->nclients && (w->state != W_BUSY || r->client[0].id != w->client_id ||
			    r->client[0].uid != (uint32_t)w->client_uid)) {
		why = "a client it was not given";
		goto bad;
	}
	return r;
bad:
	log_warn("supervisor: worker %d sent a bad stats report (%s); ignored", (int)w->pid, why);
	free(r);
	return NULL;
}

/*
 * The reports of workers ws[0..n) into reps[] (NULL where none came):
 * every worker is asked at once, and all are waited for together,
 * STATS_WAIT_MS at most, so a slow worker delays the answer once, not
 * once per worker. The supervisor hands no client over meanwhile.
 */
static void worker_reports(struct axond *d, struct wproc **ws, struct worker_report **reps,
			   unsigned int n)
{
	uint64_t deadline = axond_now_ns() + STATS_WAIT_MS * 1000000ULL;
	struct pollfd *p = calloc(n ? n : 1, sizeof(*p));
	unsigned int i, left = 0;

	for (i = 0; i < n; i++) {
		reps[i] = NULL;
		if (p && ctl_send(ws[i]->ctl, CTL_STATS, 0, -1) == 0) {
			p[i].fd = ws[i]->ctl;
			p[i].events = POLLIN;
			left++;
		} else if (p) {
			p[i].fd = -1;
		}
	}
	while (left) {
		uint64_t now = axond_now_ns();

		if (now >= deadline || poll(p, n, (int)((deadline - now) / 1000000 + 1)) < 0)
			break;
		for (i = 0; i < n; i++) {
			struct ctl_msg m;
			ssize_t got;
			int fd;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			got = ctl_recv(ws[i]->ctl, &m, NULL, &fd);
			if (got == -EAGAIN)
				continue;
			if (got == 0) {
				supervisor_worker_lost(d, ws[i]);	/* freed after the batch */
			} else if (m.type == CTL_STATS_REPORT) {
				reps[i] = read_report(ws[i], &m, fd);
			} else {
				supervisor_ctl_note(d, ws[i], &m, fd);
				if (fd >= 0)
					close(fd);
				continue;	/* not the answer: keep waiting */
			}
			if (fd >= 0)
				close(fd);
			p[i].fd = -1;
			left--;
		}
	}
	free(p);
}

/* The supervisor's own daemon section, before the workers' totals. */
static void supervisor_daemon(struct axond *d, struct stats_daemon *dm)
{
	memset(dm, 0, sizeof(*dm));
	dm->pid = (int32_t)getpid();
	snprintf(dm->backend, sizeof(dm->backend), "%s", d->cfg.backend);
	dm->uptime_ns = axond_now_ns() - sv.start_ns;
	dm->clients = sv.nbusy;
	dm->clients_total = sv.total_clients;
	dm->supervised = true;
	dm->workers_ready = sv.nready;
	dm->workers_starting = sv.nstarting;
	dm->workers_target = sv.target;
	dm->workers_ending = sv.nending;
	dm->clients_waiting = sv.nwait;
	dm->max_tracers_per_client = d->cfg.max_tracers_client;
	dm->max_tracers_per_user = d->cfg.max_tracers_user;
}

/* The document from the reports of ws[0..n) (NULL where none came). */
static int render(struct axond *d, const struct access_peer *viewer, struct wproc **ws,
		  struct worker_report **reps, unsigned int n, char **out, size_t *len)
{
	struct stats_device dev[AXON_MAX_DEVICES];
	const struct worker_report *first = NULL;
	struct stats_daemon dm;
	struct statsdoc *doc;
	unsigned int i, j, ndev = 0;
	struct wproc *w;

	supervisor_daemon(d, &dm);
	for (i = 0; i < n; i++) {
		const struct worker_report *r = reps[i];

		if (!r)
			continue;
		if (!first)
			first = r;
		for (j = 0; j < AXON_MAX_DEVICES; j++)
			ws[i]->busy_seen[j] = j < r->ndevices ? r->device[j].busy_ns : 0;
		dm.ops_total = add_sat(dm.ops_total, r->ops_total);
		dm.mem_used = add_sat(dm.mem_used, r->mem_used);
		dm.mem_reserved = add_sat(dm.mem_reserved, r->mem_reserved);
		dm.tracers = add_sat(dm.tracers, r->tracers);
		dm.tracers_refused_limit = add_sat(dm.tracers_refused_limit,
						   r->tracers_refused_limit);
		dm.tracers_refused_access = add_sat(dm.tracers_refused_access,
						    r->tracers_refused_access);
	}
	/* The devices' busy time: every worker's, gone ones' included, a
	 * counter that only grows (axon-top takes deltas). */
	if (first) {
		ndev = first->ndevices;
		memcpy(dev, first->device, ndev * sizeof(dev[0]));
		for (j = 0; j < ndev; j++) {
			dev[j].busy_ns = sv.busy_retired[j];
			for (w = sv.list; w; w = w->next)
				dev[j].busy_ns = add_sat(dev[j].busy_ns, w->busy_seen[j]);
		}
	}
	doc = statsdoc_begin(&dm, dev, ndev);
	for (i = 0; i < n; i++) {
		struct stats_client c;

		if (!reps[i] || !reps[i]->nclients || !access_may_see(viewer, ws[i]->client_uid))
			continue;
		c = reps[i]->client[0];
		c.server_pid = (int32_t)ws[i]->pid;	/* the supervisor knows */
		statsdoc_add_client(doc, &c);
	}
	return statsdoc_end(doc, out, len);
}

void supervisor_send_stats(struct axond *d, int fd, struct axon_welcome *wel)
{
	struct access_peer viewer;
	struct worker_report **reps;
	struct wproc *w, **ws;
	unsigned int nws = 0, ready_asked = 0, i;
	char *doc = NULL;
	size_t len = 0;

	access_peer_of(fd, &viewer);
	supervisor_consume_hello(fd);
	/* Every busy worker, and one ready worker for the devices. */
	for (w = sv.list; w; w = w->next)
		if (w->state == W_BUSY || w->state == W_READY)
			nws++;
	ws = calloc(nws ? nws : 1, sizeof(*ws));
	reps = calloc(nws ? nws : 1, sizeof(*reps));
	nws = 0;
	for (w = sv.list; ws && reps && w; w = w->next)
		if (w->state == W_BUSY || (w->state == W_READY && !ready_asked++))
			ws[nws++] = w;
	if (ws && reps) {
		worker_reports(d, ws, reps, nws);
		if (render(d, &viewer, ws, reps, nws, &doc, &len)) {
			doc = NULL;
			len = 0;
		}
		for (i = 0; i < nws; i++)
			free(reps[i]);
	}
	free(ws);
	free(reps);
	welcome_send_stats(fd, wel, doc, len);
	free(doc);
	close(fd);
}
