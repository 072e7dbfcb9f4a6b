// SPDX-License-Identifier: MIT
/*
 * The stats document, written with json-c: the one place that turns the
 * values of stats.h into the JSON tools read, for a daemon alone and for a
 * supervisor of worker processes alike. Field names and their order are
 * stable (Documentation/abi.md, "Stats").
 *
 * Strings are hostile bytes (a client names itself: its comm is what it
 * wrote to /proc/self/comm). json-c escapes quotes, backslashes and control
 * characters but copies other bytes as they are, so a string is first made
 * valid UTF-8: each byte that does not belong to a well-formed sequence
 * becomes U+FFFD. The document is then valid JSON whatever a client did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json_object.h>

#include <axon/libaxon.h>
#include <stats-schema.h>
#include "stats.h"

struct statsdoc {
	struct json_object *root;
	struct json_object *clients;	/* the "clients" array, owned by root */
	struct json_object *cgroups;	/* "socket_cgroups", made by the first */
	bool oom;
};

/* Adds val (taken over, also on failure) to obj as key. */
static void put(struct statsdoc *b, struct json_object *obj, const char *key,
		struct json_object *val)
{
	if (!val || json_object_object_add(obj, key, val)) {
		json_object_put(val);
		b->oom = true;
	}
}

static void push(struct statsdoc *b, struct json_object *arr, struct json_object *val)
{
	if (!val || json_object_array_add(arr, val)) {
		json_object_put(val);
		b->oom = true;
	}
}

static void put_u64(struct statsdoc *b, struct json_object *obj, const char *key, uint64_t v)
{
	put(b, obj, key, json_object_new_uint64(v));
}

static void put_i64(struct statsdoc *b, struct json_object *obj, const char *key, int64_t v)
{
	put(b, obj, key, json_object_new_int64(v));
}

/* Seconds from nanoseconds, written with three decimals as they always
 * were (json-c writes the text given with the value). */
static void put_seconds(struct statsdoc *b, struct json_object *obj, const char *key, uint64_t ns)
{
	double s = (double)ns / 1e9;
	char text[32];

	snprintf(text, sizeof(text), "%.3f", s);
	put(b, obj, key, json_object_new_double_s(s, text));
}

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if there is none. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	for (i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			return 0;	/* also stops at the NUL */
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/* A JSON string of the first max bytes of s (up to a NUL), valid UTF-8. */
static struct json_object *new_text(const char *s, size_t max)
{
	size_t len = strnlen(s, max), i = 0, o = 0;
	char *clean = malloc(len * 3 + 1);
	struct json_object *v;

	if (!clean)
		return NULL;
	while (i < len) {
		size_t n = utf8_seq((const unsigned char *)s + i);

		if (n && i + n <= len) {
			memcpy(clean + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(clean + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
			i++;
		}
	}
	v = json_object_new_string_len(clean, (int)o);
	free(clean);
	return v;
}

#define put_text(b, obj, key, arr) put((b), (obj), (key), new_text((arr), sizeof(arr)))

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

static struct json_object *daemon_section(struct statsdoc *b, const struct stats_daemon *dm)
{
	struct json_object *o = json_object_new_object();
	char abi[16];

	if (!o) {
		b->oom = true;
		return NULL;
	}
	snprintf(abi, sizeof(abi), "%u.%u", AXON_ABI_MAJOR, AXON_ABI_MINOR);
	put_i64(b, o, "pid", dm->pid);
	put_text(b, o, "backend", dm->backend);
	put(b, o, "abi", json_object_new_string(abi));
	put_seconds(b, o, "uptime_s", dm->uptime_ns);
	put_u64(b, o, "clients", dm->clients);
	put_u64(b, o, "clients_total", dm->clients_total);
	put_u64(b, o, "ops_total", dm->ops_total);
	put_u64(b, o, "mem_used", dm->mem_used);
	put_u64(b, o, "mem_reserved", dm->mem_reserved);
	if (dm->supervised) {
		put(b, o, "isolation", json_object_new_string("process"));
		put_u64(b, o, "workers_ready", dm->workers_ready);
		put_u64(b, o, "workers_starting", dm->workers_starting);
		put_u64(b, o, "workers_target", dm->workers_target);
		put_u64(b, o, "workers_ending", dm->workers_ending);
		put_u64(b, o, "clients_waiting", dm->clients_waiting);
	} else {
		/* Connections and hellos refused for a user's share (server.c,
		 * client.c), mappings and VMM objects of all clients and their
		 * ceilings (holdings.c). */
		put_u64(b, o, "pending", dm->pending);
		put_u64(b, o, "pending_refused", dm->pending_refused);
		put_u64(b, o, "clients_refused_user", dm->clients_refused_user);
		put_u64(b, o, "mappings", dm->mappings);
		put_u64(b, o, "mappings_max", dm->mappings_max);
		put_u64(b, o, "vmm_objects", dm->vmm_objects);
		put_u64(b, o, "vmm_objects_max", dm->vmm_objects_max);
	}
	/* The tracer limits and what they refused (trace.c). */
	put_u64(b, o, "tracers", dm->tracers);
	put_u64(b, o, "max_tracers_per_client", dm->max_tracers_per_client);
	put_u64(b, o, "max_tracers_per_user", dm->max_tracers_per_user);
	put_u64(b, o, "tracers_refused_limit", dm->tracers_refused_limit);
	put_u64(b, o, "tracers_refused_access", dm->tracers_refused_access);
	return o;
}

static struct json_object *device_entry(struct statsdoc *b, const struct stats_device *dv,
					unsigned int index)
{
	struct json_object *o = json_object_new_object();

	if (!o) {
		b->oom = true;
		return NULL;
	}
	put_u64(b, o, "index", index);
	put_text(b, o, "name", dv->name);
	put_u64(b, o, "total_mem", dv->total_mem);
	put_u64(b, o, "busy_ns", dv->busy_ns);
	put_text(b, o, "isolation", dv->isolation);
	return o;
}

struct statsdoc *statsdoc_begin(const struct stats_daemon *dm, const struct stats_device *dev,
				unsigned int ndev)
{
	struct statsdoc *b = calloc(1, sizeof(*b));
	struct json_object *devices;
	unsigned int i;

	if (!b)
		return NULL;
	b->root = json_object_new_object();
	if (!b->root) {
		free(b);
		return NULL;
	}
	put_u64(b, b->root, "schema", AXON_STATS_SCHEMA);
	put(b, b->root, "daemon", daemon_section(b, dm));
	devices = json_object_new_array();
	for (i = 0; devices && i < ndev; i++)
		push(b, devices, device_entry(b, &dev[i], i));
	put(b, b->root, "devices", devices);
	if (dm->has_windows) {
		/* Client windows held (vaslot.c) and how many there are. */
		struct json_object *w = json_object_new_object();

		if (w) {
			put_u64(b, w, "used", dm->windows_used);
			put_u64(b, w, "max", dm->windows_max);
		}
		put(b, b->root, "windows", w);
	}
	b->clients = json_object_new_array();
	put(b, b->root, "clients", b->clients);
	if (b->oom) {
		json_object_put(b->root);
		free(b);
		return NULL;
	}
	return b;
}

static void client_counts(struct statsdoc *b, struct json_object *o, const struct stats_client *c)
{
	struct json_object *h = json_object_new_object(), *l = json_object_new_object();
	struct json_object *ops = json_object_new_object(), *by_op = json_object_new_object();
	struct json_object *lat = json_object_new_object(), *hist = json_object_new_array();
	unsigned int i;

	if (h) {
		put_u64(b, h, "contexts", c->handles.contexts);
		put_u64(b, h, "streams", c->handles.streams);
		put_u64(b, h, "events", c->handles.events);
		put_u64(b, h, "modules", c->handles.modules);
		put_u64(b, h, "functions", c->handles.functions);
		put_u64(b, h, "graphs", c->handles.graphs);
		put_u64(b, h, "graph_execs", c->handles.graph_execs);
	}
	put(b, o, "handles", h);
	/* What the client holds against its per-client limits, and how many
	 * of its items a limit refused (admin.md, "Limits"). */
	if (l) {
		put_u64(b, l, "parked", c->limits.parked);
		put_u64(b, l, "parked_bytes", c->limits.parked_bytes);
		put_u64(b, l, "graph_nodes", c->limits.graph_nodes);
		put_u64(b, l, "mappings", c->limits.mappings);
		put_u64(b, l, "vmm_objects", c->limits.vmm_objects);
		put_u64(b, l, "refused", c->limits.refused);
	}
	put(b, o, "limits", l);
	if (ops) {
		put_u64(b, ops, "local", c->ops_local);
		put_u64(b, ops, "sync", c->ops_sync);
		put_u64(b, ops, "deferred", c->ops_deferred);
		for (i = 0; by_op && i < AXON_OP_LAST; i++)
			if (c->by_op[i])
				put_u64(b, by_op, axon_op_name(i), c->by_op[i]);
		put(b, ops, "by_op", by_op);
		by_op = NULL;
	}
	json_object_put(by_op);
	put(b, o, "ops", ops);
	put_u64(b, o, "crossings", c->crossings);
	put_u64(b, o, "errors", c->errors);
	put_u64(b, o, "bytes_htod", c->bytes_htod);
	put_u64(b, o, "bytes_dtoh", c->bytes_dtoh);
	put_u64(b, o, "sq_depth", c->sq_depth);
	if (lat) {
		put_u64(b, lat, "p50", percentile(c->lat_hist, 0.50));
		put_u64(b, lat, "p99", percentile(c->lat_hist, 0.99));
		for (i = 0; hist && i < LAT_BUCKETS; i++)
			push(b, hist, json_object_new_uint64(c->lat_hist[i]));
		put(b, lat, "log2_hist", hist);
		hist = NULL;
	}
	json_object_put(hist);
	put(b, o, "latency_us", lat);
}

void statsdoc_add_client(struct statsdoc *b, const struct stats_client *c)
{
	struct json_object *o;

	if (!b)
		return;
	o = json_object_new_object();
	if (!o) {
		b->oom = true;
		return;
	}
	put_u64(b, o, "id", c->id);
	put_i64(b, o, "pid", c->pid);
	put_u64(b, o, "uid", c->uid);
	put_u64(b, o, "gid", c->gid);
	put_text(b, o, "comm", c->comm);
	put_i64(b, o, "device", c->device);
	put_seconds(b, o, "connected_s", c->connected_ns);
	put(b, o, "transport",
	    json_object_new_string(c->transport == STATS_TRANSPORT_KMOD ? "kmod" : "unix"));
	put_u64(b, o, "kmod_id", c->kmod_id);
	put_u64(b, o, "cgroup_id", c->cgroup_id);
	put_u64(b, o, "tracers", c->tracers);
	put_i64(b, o, "server_pid", c->server_pid);
	put_u64(b, o, "bytes_mapped", c->bytes_mapped);
	put_u64(b, o, "mint_credit", c->mint_credit);
	put_u64(b, o, "allocations", c->allocations);
	put_u64(b, o, "granules_charged", c->granules_charged);
	put_u64(b, o, "granules_backed", c->granules_backed);
	put_u64(b, o, "ctx_mem", c->ctx_mem);
	put_u64(b, o, "module_mem", c->module_mem);
	put_u64(b, o, "local_mem", c->local_mem);
	put_u64(b, o, "host_pinned", c->host_pinned);
	put_u64(b, o, "user_host_pinned", c->user_host_pinned);
	/* Device-memory quotas (memquota.c): the client's limit only when
	 * one is set (axon-top shows a LIMIT column for clients that have
	 * one), its user's usage (every client of the uid, credit included)
	 * and limit. */
	if (c->has_mem_limit)
		put_u64(b, o, "mem_limit", c->mem_limit);
	put_u64(b, o, "user_mem_used", c->user_mem_used);
	put_u64(b, o, "user_mem_reserved", c->user_mem_reserved);
	put_u64(b, o, "user_mem_limit", c->user_mem_limit);
	put_u64(b, o, "va_base", c->va_base);
	client_counts(b, o, c);
	push(b, b->clients, o);
}

void statsdoc_add_cgroup(struct statsdoc *b, const char *path, uint64_t limit,
			 uint64_t usage, uint64_t peak, uint64_t failcnt)
{
	struct json_object *o;

	if (!b)
		return;
	if (!b->cgroups) {
		b->cgroups = json_object_new_array();
		put(b, b->root, "socket_cgroups", b->cgroups);
		if (b->oom)
			return;
	}
	o = json_object_new_object();
	if (o) {
		put(b, o, "path", json_object_new_string(path));
		if (limit != UINT64_MAX)
			put_u64(b, o, "limit", limit);
		put_u64(b, o, "usage", usage);
		put_u64(b, o, "peak", peak);
		put_u64(b, o, "failcnt", failcnt);
	}
	push(b, b->cgroups, o);
}

int statsdoc_end(struct statsdoc *b, char **out, size_t *len)
{
	const char *text;
	size_t n = 0;
	int ret = -ENOMEM;

	if (!b)
		return -ENOMEM;
	text = b->oom ? NULL : json_object_to_json_string_length(b->root,
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (text) {
		char *doc = malloc(n + 2);

		if (doc) {
			memcpy(doc, text, n);
			doc[n] = '\n';
			doc[n + 1] = 0;
			*out = doc;
			*len = n + 1;
			ret = 0;
		}
	}
	json_object_put(b->root);
	free(b);
	return ret;
}
