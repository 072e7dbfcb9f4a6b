// SPDX-License-Identifier: MIT
/*
 * A worker's stats report to its supervisor (report.h): filled from the
 * worker's own state by stats.c's collectors, checked on the supervisor's
 * side before any of it is used.
 */
#include <errno.h>
#include <string.h>

#include "axond.h"
#include "report.h"

void report_fill(struct axond *d, struct worker_report *r)
{
	struct stats_daemon dm;
	struct client *c;

	memset(r, 0, sizeof(*r));
	r->magic = WORKER_REPORT_MAGIC;
	r->version = WORKER_REPORT_VERSION;
	r->size = sizeof(*r);
	stats_collect_daemon(d, &dm);
	r->ops_total = dm.ops_total;
	r->mem_used = dm.mem_used;
	r->mem_reserved = dm.mem_reserved;
	r->tracers = dm.tracers;
	r->tracers_refused_limit = dm.tracers_refused_limit;
	r->tracers_refused_access = dm.tracers_refused_access;
	r->ndevices = stats_collect_devices(d, r->device);
	for (c = d->clients; c && r->nclients < WORKER_REPORT_MAX_CLIENTS; c = c->next)
		stats_collect_client(d, c, &r->client[r->nclients++]);
}

static bool terminated(const char *s, size_t size)
{
	return memchr(s, 0, size) != NULL;
}

#define TERMINATED(arr) terminated((arr), sizeof(arr))

int report_check(const struct worker_report *r, const char **why)
{
	unsigned int i;

	if (r->magic != WORKER_REPORT_MAGIC || r->size != sizeof(*r)) {
		*why = "not a worker report";
		return -EPROTO;
	}
	if (r->version != WORKER_REPORT_VERSION) {
		*why = "a report of another version";
		return -EPROTO;
	}
	if (r->ndevices > AXON_MAX_DEVICES || r->nclients > WORKER_REPORT_MAX_CLIENTS ||
	    r->resv) {
		*why = "counts out of range";
		return -EPROTO;
	}
	for (i = 0; i < r->ndevices; i++) {
		if (!TERMINATED(r->device[i].name) || !TERMINATED(r->device[i].isolation)) {
			*why = "an unterminated device string";
			return -EPROTO;
		}
	}
	for (i = 0; i < r->nclients; i++) {
		const struct stats_client *c = &r->client[i];

		if (!TERMINATED(c->comm)) {
			*why = "an unterminated comm";
			return -EPROTO;
		}
		if (c->transport > STATS_TRANSPORT_KMOD || c->device < -1 ||
		    c->device >= (int32_t)r->ndevices || c->has_mem_limit > 1 ||
		    c->limits.resv || c->resv) {
			*why = "a client field out of range";
			return -EPROTO;
		}
	}
	return 0;
}
