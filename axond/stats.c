// SPDX-License-Identifier: MIT
/*
 * The stats document's values as this daemon has them (stats.h): the
 * daemon, each device, each client. statsdoc.c writes them out; a worker
 * process sends them to its supervisor instead (report.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "trace.h"
#include "server.h"
#include "backend.h"
#include "holdings.h"
#include "access.h"
#include "client.h"
#include "memquota.h"
#include "vaslot.h"
#include "stats.h"

/* The device of the client's first live context, -1 before it has one. */
static int client_device(struct client *c)
{
	uint32_t pos = 0;
	uint64_t h;
	void *obj;

	while (handle_iter(&c->ctxs, AXON_HANDLE_CTX, &pos, &h, &obj))
		if (!((struct ctx *)obj)->dying)
			return ((struct ctx *)obj)->device;
	return -1;
}

/* A limit as the stats show it: none is the device's memory. */
static uint64_t quota_shown(const struct axond *d, uint64_t limit)
{
	uint64_t total = d->info->device[0].total_mem;

	return limit < total ? limit : total;
}

void stats_collect_client(struct axond *d, struct client *c, struct stats_client *out)
{
	const struct client_stats *s = &c->stats;
	uint32_t sq_depth = axon_read_once(&c->cpage->sq_tail) - c->sq_head;

	memset(out, 0, sizeof(*out));
	out->id = c->id;
	out->pid = (int32_t)c->pid;
	out->uid = (uint32_t)c->uid;
	out->gid = (uint32_t)c->gid;
	snprintf(out->comm, sizeof(out->comm), "%s", c->comm);
	out->device = client_device(c);
	out->connected_ns = axond_now_ns() - c->connect_ns;
	out->transport = c->xport->stats_id;
	out->kmod_id = c->kmod_id;
	out->cgroup_id = c->cgroup_id;
	out->server_pid = (int32_t)getpid();
	out->bytes_mapped = c->bytes_mapped;
	out->ctx_mem = c->ctx_mem;
	out->module_mem = c->module_mem;
	out->local_mem = c->local_mem;
	out->host_pinned = c->host_pinned;
	out->user_host_pinned = c->quser ? c->quser->pinned : 0;
	out->mint_credit = c->mint_credit;
	out->allocations = rangemap_count(&c->allocs);
	if (c->granules.refs) {
		pthread_mutex_lock(&c->granules.lock);
		out->granules_charged = c->granules.charged;
		out->granules_backed = c->granules.backed;
		pthread_mutex_unlock(&c->granules.lock);
	}
	if (mq_client_limit(d) != UINT64_MAX) {
		out->has_mem_limit = 1;
		out->mem_limit = quota_shown(d, mq_client_limit(d));
	}
	out->user_mem_used = c->quser ? c->quser->used : 0;
	out->user_mem_reserved = c->quser ? c->quser->reserved : 0;
	out->user_mem_limit = quota_shown(d, mq_user_limit(d));
	out->va_base = c->params.va_base;
	out->handles.contexts = handle_count(&c->ctxs, 0);
	out->handles.streams = handle_count(&c->streams, 0);
	out->handles.events = handle_count(&c->events, 0);
	out->handles.modules = handle_count(&c->modules, 0);
	out->handles.functions = handle_count(&c->funcs, 0);
	out->limits.mappings = c->held[HOLD_MAPPING];
	out->limits.vmm_objects = c->held[HOLD_VMM_OBJECT];
	out->limits.refused = s->limit_refused;
	/* Graphs, parked work, tracers: their families fill those in. */
	client_family_stats(c, out);
	out->ops_local = axon_read_once(&c->cpage->local_ops);
	out->ops_sync = s->by_class[OP_CLASS_SYNC];
	out->ops_deferred = s->by_class[OP_CLASS_DEFERRED];
	memcpy(out->by_op, s->ops, sizeof(out->by_op));
	out->crossings = s->crossings;
	out->errors = s->errors;
	out->bytes_htod = s->bytes_htod;
	out->bytes_dtoh = s->bytes_dtoh;
	out->sq_depth = sq_depth > c->sq_entries ? c->sq_entries : sq_depth;
	memcpy(out->lat_hist, s->lat_hist, sizeof(out->lat_hist));
}

void stats_collect_daemon(struct axond *d, struct stats_daemon *out)
{
	unsigned int ntracers;

	memset(out, 0, sizeof(*out));
	out->pid = (int32_t)getpid();
	snprintf(out->backend, sizeof(out->backend), "%s", d->backend->name);
	out->uptime_ns = axond_now_ns() - d->start_ns;
	out->clients = d->nclients;
	out->clients_total = d->total_clients;
	out->ops_total = d->total_ops;
	out->mem_used = d->mem_used;
	out->mem_reserved = d->mem_reserved;
	out->pending = server_npending();
	out->pending_refused = d->pending_refused;
	out->clients_refused_user = d->clients_refused_user;
	out->mappings = d->held[HOLD_MAPPING];
	out->mappings_max = d->held_max[HOLD_MAPPING];
	out->vmm_objects = d->held[HOLD_VMM_OBJECT];
	out->vmm_objects_max = d->held_max[HOLD_VMM_OBJECT];
	trace_counts(&ntracers, &out->tracers_refused_limit, &out->tracers_refused_access);
	out->tracers = ntracers;
	out->max_tracers_per_client = d->cfg.max_tracers_client;
	out->max_tracers_per_user = d->cfg.max_tracers_user;
	out->has_windows = true;
	out->windows_used = vaslot_used();
	out->windows_max = vaslot_count(d);
}

unsigned int stats_collect_devices(struct axond *d, struct stats_device *out)
{
	unsigned int i, n = d->info->ndevices < AXON_MAX_DEVICES ? d->info->ndevices
								 : AXON_MAX_DEVICES;

	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		snprintf(out[i].name, sizeof(out[i].name), "%s", d->info->device[i].name);
		out[i].total_mem = d->info->device[i].total_mem;
		out[i].busy_ns = atomic_load(&d->busy_ns[i]);
		/* sim: each client its own memory window; cuda: a context per
		 * client ("context") or per device ("shared") */
		snprintf(out[i].isolation, sizeof(out[i].isolation), "%s",
			 !strcmp(d->backend->name, "cuda") ? d->cfg.isolation : "window");
	}
	return n;
}

/*
 * The document as viewer may see it: the daemon-wide totals and the
 * devices for anyone, the clients of other uids only for administrators
 * (access.h). NULL viewer: everything.
 */
static void add_cgroup(const char *path, uint64_t limit, uint64_t usage, uint64_t peak,
		       uint64_t failcnt, void *arg)
{
	statsdoc_add_cgroup(arg, path, limit, usage, peak, failcnt);
}

int stats_render(struct axond *d, const struct access_peer *viewer, char **out, size_t *len)
{
	struct stats_device dev[AXON_MAX_DEVICES];
	struct stats_daemon dm;
	struct stats_client *sc = malloc(sizeof(*sc));
	struct statsdoc *doc;
	unsigned int ndev;
	struct client *c;

	if (!sc)
		return -1;
	stats_collect_daemon(d, &dm);
	ndev = stats_collect_devices(d, dev);
	doc = statsdoc_begin(&dm, dev, ndev);
	for (c = d->clients; doc && c; c = c->next) {
		if (viewer && !access_may_see(viewer, c->uid))
			continue;
		stats_collect_client(d, c, sc);
		statsdoc_add_client(doc, sc);
	}
	/* Cgroup paths say nothing of whose clients are in them beyond what
	 * /proc shows anyone; the limits are every viewer's. */
	if (doc)
		sockcg_for_each(add_cgroup, doc);
	free(sc);
	return statsdoc_end(doc, out, len) ? -1 : 0;
}
