// SPDX-License-Identifier: MIT
/*
 * The stats document (JSON) served to tools on an AXON_HELLO_STATS
 * connection: the daemon, each device, each client. Field names are stable;
 * Documentation/abi.md lists them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "backend.h"
#include "graph.h"
#include "holdings.h"
#include "access.h"
#include "memquota.h"
#include "vaslot.h"

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap + (size_t)n + 1) * 2;
			char *np = realloc(b->p, cap);

			if (!np) {
				b->oom = true;
				return;
			}
			b->p = np;
			b->cap = cap;
		}
	}
}

/* JSON string: escapes quotes, backslashes and control characters. */
static void put_str(struct buf *b, const char *s)
{
	put(b, "\"");
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			put(b, "\\%c", ch);
		else if (ch < 0x20)
			put(b, "\\u%04x", ch);
		else
			put(b, "%c", ch);
	}
	put(b, "\"");
}

/* Percentile from the log2 histogram: the bucket's upper bound in us. */
static uint64_t percentile(const uint64_t *hist, double p)
{
	uint64_t total = 0, acc = 0;
	int i;

	for (i = 0; i < LAT_BUCKETS; i++)
		total += hist[i];
	if (!total)
		return 0;
	for (i = 0; i < LAT_BUCKETS; i++) {
		acc += hist[i];
		if ((double)acc >= p * (double)total)
			return 1ULL << i;
	}
	return 1ULL << (LAT_BUCKETS - 1);
}

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

static void put_client(struct buf *b, struct axond *d, struct client *c)
{
	const struct client_stats *s = &c->stats;
	uint32_t sq_depth = axon_read_once(&c->cpage->sq_tail) - c->sq_head;
	unsigned int i;
	uint32_t ngraphs, nexecs;
	bool first = true;

	put(b, "{\"id\":%llu,\"pid\":%d,\"uid\":%u,\"gid\":%u,\"comm\":",
	    (unsigned long long)c->id, (int)c->pid, (unsigned int)c->uid,
	    (unsigned int)c->gid);
	put_str(b, c->comm);
	put(b, ",\"device\":%d", client_device(c));
	put(b, ",\"connected_s\":%.3f,\"transport\":\"%s\",\"kmod_id\":%llu,"
	    "\"cgroup_id\":%llu,\"tracers\":%u,\"server_pid\":%d",
	    (double)(axond_now_ns() - c->connect_ns) / 1e9,
	    c->transport == CLIENT_KMOD ? "kmod" : "unix",
	    (unsigned long long)c->kmod_id, (unsigned long long)c->cgroup_id,
	    c->ntracers, (int)getpid());
	put(b, ",\"bytes_mapped\":%llu,\"mint_credit\":%llu,\"allocations\":%zu",
	    (unsigned long long)c->bytes_mapped, (unsigned long long)c->mint_credit,
	    rangemap_count(&c->allocs));
	/* Device-memory quotas (memquota.c): the client's limit (only when
	 * one is set: axon-top shows a LIMIT column for clients that have
	 * one), its user's usage (every client of the uid, credit included)
	 * and limit. */
	if (mq_client_limit(d) != UINT64_MAX)
		put(b, ",\"mem_limit\":%llu", (unsigned long long)quota_shown(d, mq_client_limit(d)));
	put(b, ",\"user_mem_used\":%llu,\"user_mem_reserved\":%llu,"
	    "\"user_mem_limit\":%llu,\"va_base\":%llu",
	    (unsigned long long)(c->quser ? c->quser->used : 0),
	    (unsigned long long)(c->quser ? c->quser->reserved : 0),
	    (unsigned long long)quota_shown(d, mq_user_limit(d)),
	    (unsigned long long)c->params.va_base);
	graph_client_counts(c, &ngraphs, &nexecs);
	put(b, ",\"handles\":{\"contexts\":%u,\"streams\":%u,\"events\":%u,"
	    "\"modules\":%u,\"functions\":%u,\"graphs\":%u,\"graph_execs\":%u}",
	    handle_count(&c->ctxs, 0), handle_count(&c->streams, 0),
	    handle_count(&c->events, 0), handle_count(&c->modules, 0),
	    handle_count(&c->funcs, 0), ngraphs, nexecs);
	/* What the client holds against its per-client limits, and how many
	 * of its items a limit refused (admin.md, "Limits"). */
	put(b, ",\"limits\":{\"parked\":%u,\"parked_bytes\":%llu,\"graph_nodes\":%llu,"
	    "\"mappings\":%u,\"vmm_objects\":%u,\"refused\":%llu}",
	    c->nparked, (unsigned long long)c->parked_bytes,
	    (unsigned long long)graph_client_nodes(c), c->held[HOLD_MAPPING],
	    c->held[HOLD_VMM_OBJECT], (unsigned long long)s->limit_refused);
	put(b, ",\"ops\":{\"local\":%llu,\"sync\":%llu,\"deferred\":%llu,\"by_op\":{",
	    (unsigned long long)axon_read_once(&c->cpage->local_ops),
	    (unsigned long long)s->by_class[OP_CLASS_SYNC],
	    (unsigned long long)s->by_class[OP_CLASS_DEFERRED]);
	for (i = 0; i < AXON_OP_LAST; i++) {
		if (!s->ops[i])
			continue;
		put(b, "%s\"%s\":%llu", first ? "" : ",", axon_op_name(i),
		    (unsigned long long)s->ops[i]);
		first = false;
	}
	put(b, "}},\"crossings\":%llu,\"errors\":%llu,\"bytes_htod\":%llu,"
	    "\"bytes_dtoh\":%llu,\"sq_depth\":%u,",
	    (unsigned long long)s->crossings, (unsigned long long)s->errors,
	    (unsigned long long)s->bytes_htod, (unsigned long long)s->bytes_dtoh,
	    sq_depth > c->sq_entries ? c->sq_entries : sq_depth);
	put(b, "\"latency_us\":{\"p50\":%llu,\"p99\":%llu,\"log2_hist\":[",
	    (unsigned long long)percentile(s->lat_hist, 0.50),
	    (unsigned long long)percentile(s->lat_hist, 0.99));
	for (i = 0; i < LAT_BUCKETS; i++)
		put(b, "%s%llu", i ? "," : "", (unsigned long long)s->lat_hist[i]);
	put(b, "]}}");
	(void)d;
}

/*
 * The document as viewer may see it: the daemon-wide totals and the
 * devices for anyone, the clients of other uids only for administrators
 * (access.h). NULL viewer: everything (a worker answering its supervisor,
 * which filters for its own viewer).
 */
int stats_render(struct axond *d, const struct access_peer *viewer, char **out, size_t *len)
{
	struct buf b = { 0 };
	struct client *c;
	unsigned int i, ntracers;
	uint64_t refused_limit, refused_access;
	bool first = true;

	put(&b, "{\"daemon\":{\"pid\":%d,\"backend\":\"%s\",\"abi\":\"%u.%u\","
	    "\"uptime_s\":%.3f,\"clients\":%u,\"clients_total\":%llu,\"ops_total\":%llu,"
	    "\"mem_used\":%llu,\"mem_reserved\":%llu",
	    (int)getpid(), d->backend->name, AXON_ABI_MAJOR, AXON_ABI_MINOR,
	    (double)(axond_now_ns() - d->start_ns) / 1e9, d->nclients,
	    (unsigned long long)d->total_clients, (unsigned long long)d->total_ops,
	    (unsigned long long)d->mem_used, (unsigned long long)d->mem_reserved);
	/* Connections and hellos refused for a user's share (server.c,
	 * client.c; supervisor.c counts its own). */
	put(&b, ",\"pending\":%u,\"pending_refused\":%llu,\"clients_refused_user\":%llu",
	    server_npending(), (unsigned long long)d->pending_refused,
	    (unsigned long long)d->clients_refused_user);
	/* Mappings and VMM objects held for all clients, and the ceilings
	 * taken from the system (holdings.c). */
	put(&b, ",\"mappings\":%u,\"mappings_max\":%u,\"vmm_objects\":%u,\"vmm_objects_max\":%u",
	    d->held[HOLD_MAPPING], d->held_max[HOLD_MAPPING], d->held[HOLD_VMM_OBJECT],
	    d->held_max[HOLD_VMM_OBJECT]);
	/* The tracer limits and what they refused (trace.c). The daemon
	 * section's keys are found by name (supervisor.c). */
	trace_counts(&ntracers, &refused_limit, &refused_access);
	put(&b, ",\"tracers\":%u,\"max_tracers_per_client\":%u,\"max_tracers_per_user\":%u,"
	    "\"tracers_refused_limit\":%llu,\"tracers_refused_access\":%llu}",
	    ntracers, d->cfg.max_tracers_client, d->cfg.max_tracers_user,
	    (unsigned long long)refused_limit, (unsigned long long)refused_access);
	put(&b, ",\"devices\":[");
	for (i = 0; i < d->info->ndevices; i++) {
		put(&b, "%s{\"index\":%u,\"name\":", i ? "," : "", i);
		put_str(&b, d->info->device[i].name);
		put(&b, ",\"total_mem\":%llu,\"busy_ns\":%llu,\"isolation\":\"%s\"}",
		    (unsigned long long)d->info->device[i].total_mem,
		    (unsigned long long)atomic_load(&d->busy_ns[i]),
		    /* sim: each client its own memory window; cuda: a context
		     * per client ("context") or per device ("shared") */
		    !strcmp(d->backend->name, "cuda") ? d->cfg.isolation : "window");
	}
	/* Client windows held (vaslot.c) and how many there are. */
	put(&b, "],\"windows\":{\"used\":%llu,\"max\":%llu},\"clients\":[",
	    (unsigned long long)vaslot_used(), (unsigned long long)vaslot_count(d));
	for (c = d->clients; c; c = c->next) {
		if (viewer && !access_may_see(viewer, c->uid))
			continue;
		if (!first)
			put(&b, ",");
		put_client(&b, d, c);
		first = false;
	}
	put(&b, "]}\n");
	if (b.oom) {
		free(b.p);
		return -1;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}
