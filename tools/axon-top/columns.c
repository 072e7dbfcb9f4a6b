// SPDX-License-Identifier: MIT
/*
 * columns.c - the client table shared by the curses UI and batch mode:
 * which columns exist, how each cell is written, how rows sort and filter,
 * and how many columns fit a width (the rest are dropped from the right).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "top.h"

const struct top_column top_columns[C_NCOLS] = {
	[C_ID]     = { "ID", "id", 5, 0, false, false, 0,
		       "axon client id (the daemon's; also in /proc and netlink)" },
	[C_PID]    = { "PID", "pid", 7, 0, false, false, 0,
		       "process id of the client" },
	[C_USER]   = { "USER", "user", 8, 0, true, false, 0,
		       "owner of the client process (from its uid)" },
	[C_COMM]   = { "COMMAND", "command", 15, 0, true, false, 0,
		       "process name (comm) at connect time" },
	[C_DEV]    = { "DEV", "dev", 3, 0, false, false, TOP_CAP_DEVICE,
		       "device the client uses (kernel-module source only)" },
	[C_MEM]    = { "MEM", "mem", 6, 13, false, true, 0,
		       "device memory the client has mapped (proc: bytes charged)" },
	[C_LIMIT]  = { "LIMIT", "limit", 6, 13, false, true, TOP_CAP_LIMIT,
		       "memory limit of its cgroup (kernel-module source only)" },
	[C_OPS]    = { "OPS/s", "ops", 6, 0, false, true, 0,
		       "driver calls per second, all classes (LOC+DEF+SYNC)",
		       TOP_CAP_NOCALLS },
	[C_LOCAL]  = { "LOC/s", "local", 6, 0, false, true, 0,
		       "calls/s answered inside the client without crossing (Local)",
		       TOP_CAP_NOCALLS },
	[C_DEFER]  = { "DEF/s", "deferred", 6, 0, false, true, 0,
		       "calls/s queued without waiting for an answer (Deferred)",
		       TOP_CAP_NOCALLS },
	[C_SYNC]   = { "SYNC/s", "sync", 6, 0, false, true, 0,
		       "calls/s that waited for the daemon's answer (Sync)",
		       TOP_CAP_NOCALLS },
	[C_XING]   = { "XING/s", "xing", 6, 0, false, true, 0,
		       "crossings/s: batches of SQEs the daemon took from the ring",
		       TOP_CAP_NOCALLS },
	[C_P50]    = { "P50us", "p50", 6, 0, false, true, 0,
		       "median completion latency since connect, us (log2 bucket)",
		       TOP_CAP_NOCALLS },
	[C_P99]    = { "P99us", "p99", 6, 0, false, true, 0,
		       "99th percentile completion latency, us (log2 bucket)",
		       TOP_CAP_NOCALLS },
	[C_SQ]     = { "SQ", "sq", 4, 0, false, true, 0,
		       "submission-queue depth: SQEs published, not yet taken" },
	[C_ERR]    = { "ERR", "err", 5, 0, false, true, 0,
		       "operations that failed since connect",
		       TOP_CAP_NOCALLS },
	[C_H2D]    = { "H2D/s", "htod", 6, 13, false, true, 0,
		       "bytes/s copied host to device",
		       TOP_CAP_NOCALLS },
	[C_D2H]    = { "D2H/s", "dtoh", 6, 13, false, true, 0,
		       "bytes/s copied device to host",
		       TOP_CAP_NOCALLS },
	[C_ALLOCS] = { "ALLOCS", "allocs", 6, 0, false, true, 0,
		       "live device allocations",
		       TOP_CAP_NOCALLS },
	[C_TIME]   = { "TIME", "time", 9, 0, false, true, 0,
		       "time since the client connected",
		       TOP_CAP_NOCALLS },
	[C_SUB]    = { "SUB/s", "submits", 6, 0, false, true, TOP_CAP_RING,
		       "SQEs/s the client submitted (kernel-module source only)" },
	[C_CMP]    = { "CMP/s", "completions", 6, 0, false, true, TOP_CAP_RING,
		       "CQEs/s the client received (kernel-module source only)" },
	[C_STATE]  = { "STATE", "state", 7, 0, true, false, TOP_CAP_RING,
		       "client state in the kernel: new pending active orphan dead gone" },
	[C_CGROUP] = { "CGROUP", "cgroup", 24, 0, true, false, TOP_CAP_CGROUP,
		       "cgroup of the client (kernel-module source only)" },
};

int top_col_width(int col, const struct top_opts *o)
{
	const struct top_column *c = &top_columns[col];

	return o->bytes && c->width_bytes ? c->width_bytes : c->width;
}

int top_col_by_key(const char *key)
{
	int i;

	for (i = 0; i < C_NCOLS; i++)
		if (!strcasecmp(key, top_columns[i].key) ||
		    !strcasecmp(key, top_columns[i].title))
			return i;
	return -1;
}

int top_layout(const struct top_snapshot *s, const struct top_opts *o, int width,
	       int *cols)
{
	int i, n = 0, used = 0;

	for (i = 0; i < C_NCOLS; i++) {
		int w = top_col_width(i, o) + (n ? 1 : 0);

		if (top_columns[i].cap && !(s->caps & top_columns[i].cap))
			continue;
		if (s->caps & top_columns[i].hide)
			continue;
		if (width >= 0 && used + w > width)
			break;
		used += w;
		cols[n++] = i;
	}
	return n;
}

/* ---- human-readable numbers --------------------------------------------- */

void top_human_bytes(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	if (v == TOP_UNKNOWN) {
		snprintf(buf, len, "-");
		return;
	}
	if (v < 1000) {
		snprintf(buf, len, v ? "%lluB" : "0", (unsigned long long)v);
		return;
	}
	while (d >= 1000 && u < 5) {
		d /= 1024;
		u++;
	}
	snprintf(buf, len, d < 99.95 ? "%.1f%c" : "%.0f%c", d, units[u]);
}

void top_bytes_text(uint64_t v, const struct top_opts *o, const char *unknown, char *buf,
		    size_t len)
{
	if (v == TOP_UNKNOWN)
		snprintf(buf, len, "%s", unknown);
	else if (o->bytes)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		top_human_bytes(v, buf, len);
}

void top_human_count(double v, char *buf, size_t len)
{
	static const char units[] = "kMGTPE";
	int u = -1;

	if (v < 0) {
		snprintf(buf, len, "-");
		return;
	}
	if (v < 9.95) {
		snprintf(buf, len, "%.1f", v);
		return;
	}
	if (v < 999.5) {
		snprintf(buf, len, "%.0f", v);
		return;
	}
	while (v >= 999.5 && u < 5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, v < 9.995 ? "%.2f%c" : v < 99.95 ? "%.1f%c" : "%.0f%c",
		 v, units[u]);
}

static void human_int(uint64_t v, char *buf, size_t len)
{
	if (v < 100000)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		top_human_count((double)v, buf, len);
}

void top_duration(double secs, char *buf, size_t len)
{
	unsigned long long s = secs > 0 && secs < 1e15 ? (unsigned long long)secs
						      : secs >= 1e15 ? 999999999999999ULL : 0;

	if (s < 3600)
		snprintf(buf, len, "%llu:%02llu", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%llu:%02llu:%02llu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%llud%02lluh", s / 86400, s / 3600 % 24);
}

/* ---- cells -------------------------------------------------------------- */

static void bytes_cell(uint64_t v, const struct top_opts *o, char *buf, size_t len)
{
	top_bytes_text(v, o, "-", buf, len);
}

static uint64_t rate_bytes(double v)
{
	return v < 1.8e19 ? (uint64_t)(v + 0.5) : UINT64_MAX - 1;
}

static void rate_cell(const struct top_client *c, double v, char *buf, size_t len)
{
	top_human_count(c->has_rates ? v : -1, buf, len);
}

void top_cell(const struct top_client *c, int col, const struct top_opts *o,
	      char *buf, size_t len)
{
	switch (col) {
	case C_ID: snprintf(buf, len, "%llu", (unsigned long long)c->id); break;
	case C_PID: snprintf(buf, len, "%d", (int)c->pid); break;
	case C_USER: snprintf(buf, len, "%s", c->user); break;
	case C_COMM: snprintf(buf, len, "%s", c->comm_disp); break;
	case C_DEV:
		if (c->device < 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%d", c->device);
		break;
	case C_MEM: bytes_cell(c->bytes_mapped, o, buf, len); break;
	case C_LIMIT: bytes_cell(c->mem_limit, o, buf, len); break;
	case C_OPS: rate_cell(c, c->rate.ops, buf, len); break;
	case C_LOCAL: rate_cell(c, c->rate.local, buf, len); break;
	case C_DEFER: rate_cell(c, c->rate.deferred, buf, len); break;
	case C_SYNC: rate_cell(c, c->rate.sync, buf, len); break;
	case C_XING: rate_cell(c, c->rate.crossings, buf, len); break;
	case C_P50: human_int(c->p50_us, buf, len); break;
	case C_P99: human_int(c->p99_us, buf, len); break;
	case C_SQ: human_int(c->sq_depth, buf, len); break;
	case C_ERR: human_int(c->errors, buf, len); break;
	case C_H2D:
		if (!c->has_rates)
			snprintf(buf, len, "-");
		else
			bytes_cell(rate_bytes(c->rate.bytes_htod), o, buf, len);
		break;
	case C_D2H:
		if (!c->has_rates)
			snprintf(buf, len, "-");
		else
			bytes_cell(rate_bytes(c->rate.bytes_dtoh), o, buf, len);
		break;
	case C_ALLOCS: human_int(c->allocations, buf, len); break;
	case C_TIME: top_duration(c->connected_s, buf, len); break;
	case C_SUB: rate_cell(c, c->rate.submits, buf, len); break;
	case C_CMP: rate_cell(c, c->rate.completions, buf, len); break;
	case C_STATE: snprintf(buf, len, "%s", c->state[0] ? c->state : "-"); break;
	case C_CGROUP:
		snprintf(buf, len, "%s", c->cgroup[0] ? c->cgroup : "-");
		for (; *buf; buf++)	/* one byte per cell, as comm_disp */
			if ((unsigned char)*buf < 0x20 || (unsigned char)*buf >= 0x7f)
				*buf = '?';
		break;
	default: snprintf(buf, len, "?"); break;
	}
}

/* Appends text padded (or cut) to exactly w cells. */
static size_t pad(char *buf, size_t len, size_t at, const char *text, int w, bool left)
{
	int tl = (int)strlen(text);
	int n;

	if (at >= len)
		return at;
	if (tl > w)
		tl = w;
	if (left)
		n = snprintf(buf + at, len - at, "%-*.*s", w, tl, text);
	else
		n = snprintf(buf + at, len - at, "%*.*s", w, tl, text);
	if (n < 0)
		return at;
	at += (size_t)n;
	return at < len ? at : len - 1;
}

void top_row(const struct top_client *c, const int *cols, int n,
	     const struct top_opts *o, char *buf, size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n; i++) {
		char cell[160];

		top_cell(c, cols[i], o, cell, sizeof(cell));
		if (i)
			at = pad(buf, len, at, "", 1, true);
		at = pad(buf, len, at, cell, top_col_width(cols[i], o),
			 top_columns[cols[i]].left);
	}
}

void top_header_row(const int *cols, int n, const struct top_opts *o, char *buf,
		    size_t len)
{
	size_t at = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < n; i++) {
		if (i)
			at = pad(buf, len, at, "", 1, true);
		at = pad(buf, len, at, top_columns[cols[i]].title,
			 top_col_width(cols[i], o), top_columns[cols[i]].left);
	}
}

/* ---- sort and filter ---------------------------------------------------- */

static const struct top_opts *sort_opts;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_dbl(double a, double b)
{
	return a < b ? -1 : a > b;
}

static double r(const struct top_client *c, double v)
{
	return c->has_rates ? v : -1;
}

static int cmp_col(const struct top_client *a, const struct top_client *b, int col)
{
	switch (col) {
	case C_ID: return cmp_u64(a->id, b->id);
	case C_PID: return cmp_u64((uint64_t)a->pid, (uint64_t)b->pid);
	case C_USER: return strcmp(a->user, b->user);
	case C_COMM: return strcmp(a->comm, b->comm);
	case C_DEV: return a->device - b->device;
	case C_MEM: return cmp_u64(a->bytes_mapped, b->bytes_mapped);
	case C_LIMIT: return cmp_u64(a->mem_limit, b->mem_limit);
	case C_OPS: return cmp_dbl(r(a, a->rate.ops), r(b, b->rate.ops));
	case C_LOCAL: return cmp_dbl(r(a, a->rate.local), r(b, b->rate.local));
	case C_DEFER: return cmp_dbl(r(a, a->rate.deferred), r(b, b->rate.deferred));
	case C_SYNC: return cmp_dbl(r(a, a->rate.sync), r(b, b->rate.sync));
	case C_XING: return cmp_dbl(r(a, a->rate.crossings), r(b, b->rate.crossings));
	case C_P50: return cmp_u64(a->p50_us, b->p50_us);
	case C_P99: return cmp_u64(a->p99_us, b->p99_us);
	case C_SQ: return cmp_u64(a->sq_depth, b->sq_depth);
	case C_ERR: return cmp_u64(a->errors, b->errors);
	case C_H2D: return cmp_dbl(r(a, a->rate.bytes_htod), r(b, b->rate.bytes_htod));
	case C_D2H: return cmp_dbl(r(a, a->rate.bytes_dtoh), r(b, b->rate.bytes_dtoh));
	case C_ALLOCS: return cmp_u64(a->allocations, b->allocations);
	case C_TIME: return cmp_dbl(a->connected_s, b->connected_s);
	case C_SUB: return cmp_dbl(r(a, a->rate.submits), r(b, b->rate.submits));
	case C_CMP: return cmp_dbl(r(a, a->rate.completions), r(b, b->rate.completions));
	case C_STATE: return strcmp(a->state, b->state);
	case C_CGROUP: return strcmp(a->cgroup, b->cgroup);
	}
	return 0;
}

static int cmp_clients(const void *pa, const void *pb)
{
	const struct top_client *a = pa, *b = pb;
	int col = sort_opts->sort >= 0 && sort_opts->sort < C_NCOLS ? sort_opts->sort : C_ID;
	int c = cmp_col(a, b, col);

	if (top_columns[col].desc)
		c = -c;
	if (sort_opts->reverse)
		c = -c;
	if (!c)
		c = cmp_u64(a->id, b->id);
	return c;
}

void top_sort(struct top_snapshot *s, const struct top_opts *o)
{
	if (s->nclients < 2)
		return;
	sort_opts = o;
	qsort(s->clients, s->nclients, sizeof(*s->clients), cmp_clients);
	sort_opts = NULL;
}

bool top_visible(const struct top_client *c, const struct top_opts *o)
{
	if (o->pid && c->pid != o->pid)
		return false;
	if (o->client_id && c->id != o->client_id)
		return false;
	if (o->user[0]) {
		char uid[16];

		snprintf(uid, sizeof(uid), "%u", (unsigned int)c->uid);
		if (strcmp(o->user, c->user) && strcmp(o->user, uid))
			return false;
	}
	if (o->filter[0] && !strcasestr(c->user, o->filter) &&
	    !strcasestr(c->comm, o->filter) && !strcasestr(c->cgroup, o->filter))
		return false;
	if (o->cgroup[0]) {
		size_t n = strlen(o->cgroup);

		/* The cgroup itself or one below it ("/a" matches "/a/b"). */
		if (strncmp(c->cgroup, o->cgroup, n) ||
		    (c->cgroup[n] && c->cgroup[n] != '/' && o->cgroup[n - 1] != '/'))
			return false;
	}
	return true;
}
