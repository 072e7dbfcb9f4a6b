// SPDX-License-Identifier: MIT
/*
 * batch.c - batch mode: N snapshots as plain text tables (the UI's
 * columns) or as JSON lines (one object per snapshot, axon-top's
 * normalised schema, documented in Documentation/tools.md).
 *
 * Every snapshot printed has rates: batch mode takes one sample first and
 * prints from the second on, so "-b -n 2 -d 0.2" samples three times over
 * 0.4 s.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"

/* ---- text ----------------------------------------------------------------- */

static void mem_text(uint64_t v, const struct top_opts *o, char *buf, size_t len)
{
	top_bytes_text(v, o, "?", buf, len);
}

static void rate_text(const struct top_snapshot *s, double v, char *buf, size_t len)
{
	top_human_count(s->have_rates ? v : -1, buf, len);
}

void top_print_text(FILE *f, const struct top_snapshot *s, const struct top_opts *o)
{
	char when[64], up[32], a[32], b[32], c[32], d[32], e[32];
	int cols[C_NCOLS], n;
	unsigned int i;
	size_t k, shown = 0;
	time_t t = (time_t)s->wall_time;
	struct tm tm;
	char line[1024];

	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	top_duration(s->daemon.uptime_s, up, sizeof(up));
	if (s->caps & TOP_CAP_NOCALLS)	/* the module does not know the uptime */
		fprintf(f, "axon-top %s  source %s  axond pid %d  backend %s  ABI %s\n",
			when, s->source, (int)s->daemon.pid, s->daemon.backend,
			s->daemon.abi);
	else
		fprintf(f, "axon-top %s  source %s  axond pid %d  backend %s  ABI %s  up %s\n",
			when, s->source, (int)s->daemon.pid, s->daemon.backend,
			s->daemon.abi, up);
	if (s->caps & TOP_CAP_NOCALLS) {
		/* The kernel module counts SQEs and CQEs, not calls. */
		rate_text(s, s->total.submits, a, sizeof(a));
		rate_text(s, s->total.completions, b, sizeof(b));
		mem_text(s->daemon.mem_used, o, c, sizeof(c));
		fprintf(f, "clients %u (%llu since start)  submits/s %s  completions/s %s  "
			"charged %s  interval %.2fs\n", s->daemon.clients,
			(unsigned long long)s->daemon.clients_total, a, b, c,
			s->interval_s);
		goto devices;
	}
	rate_text(s, s->total.ops, a, sizeof(a));
	rate_text(s, s->total.local, b, sizeof(b));
	rate_text(s, s->total.deferred, c, sizeof(c));
	rate_text(s, s->total.sync, d, sizeof(d));
	rate_text(s, s->total.crossings, e, sizeof(e));
	fprintf(f, "clients %u (%llu since start)  ops/s %s (local %s, deferred %s, "
		"sync %s)  crossings/s %s  interval %.2fs\n",
		s->daemon.clients, (unsigned long long)s->daemon.clients_total,
		a, b, c, d, e, s->interval_s);
devices:
	for (i = 0; i < s->ndev; i++) {
		mem_text(top_device_used(s, i), o, a, sizeof(a));
		mem_text(s->dev[i].total_mem, o, b, sizeof(b));
		fprintf(f, "GPU%u %s  mem %s used / %s total", s->dev[i].index,
			s->dev[i].name, a, b);
		if (s->dev[i].util >= 0)
			fprintf(f, "  util %.0f%%", s->dev[i].util * 100);
		if (s->dev[i].isolation[0])
			fprintf(f, "  isolation %s", s->dev[i].isolation);
		fputc('\n', f);
	}
	if (s->daemon.mem_reserved != TOP_UNKNOWN && s->daemon.mem_reserved) {
		mem_text(s->daemon.mem_reserved, o, a, sizeof(a));
		fprintf(f, "reserved for clients' allocation credit: %s\n", a);
	}
	fputc('\n', f);
	n = top_layout(s, o, -1, cols);
	top_header_row(cols, n, o, line, sizeof(line));
	fprintf(f, "%s\n", line);
	for (k = 0; k < s->nclients; k++) {
		if (!top_visible(&s->clients[k], o))
			continue;
		top_row(&s->clients[k], cols, n, o, line, sizeof(line));
		fprintf(f, "%s\n", line);
		shown++;
	}
	if (!shown)
		fprintf(f, "(no clients)\n");
	fputc('\n', f);
}

/* ---- JSON ----------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p, 0 if invalid. */
static size_t utf8_len(const unsigned char *p)
{
	size_t n, i;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		return 0;
	return n;
}

/* A JSON string; invalid UTF-8 bytes become U+FFFD. */
void top_json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		size_t l;

		if (*p == '"' || *p == '\\') {
			fprintf(f, "\\%c", *p++);
			continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p++);
			continue;
		}
		l = utf8_len(p);
		if (!l) {
			fputs("\\ufffd", f);
			p++;
			continue;
		}
		fwrite(p, 1, l, f);
		p += l;
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("null", f);
	else
		fprintf(f, "%.3f", v);
}

static void json_u64_or_null(FILE *f, uint64_t v)
{
	if (v == TOP_UNKNOWN)
		fputs("null", f);
	else
		fprintf(f, "%llu", (unsigned long long)v);
}

static void json_rates(FILE *f, const struct top_rates *r)
{
	fputs("{\"ops\":", f);
	json_num(f, r->ops);
	fputs(",\"local\":", f);
	json_num(f, r->local);
	fputs(",\"deferred\":", f);
	json_num(f, r->deferred);
	fputs(",\"sync\":", f);
	json_num(f, r->sync);
	fputs(",\"crossings\":", f);
	json_num(f, r->crossings);
	fputs(",\"errors\":", f);
	json_num(f, r->errors);
	fputs(",\"bytes_htod\":", f);
	json_num(f, r->bytes_htod);
	fputs(",\"bytes_dtoh\":", f);
	json_num(f, r->bytes_dtoh);
	fputs(",\"submits\":", f);
	json_num(f, r->submits);
	fputs(",\"completions\":", f);
	json_num(f, r->completions);
	fputc('}', f);
}

static void json_client(FILE *f, const struct top_client *c)
{
	unsigned int i;

	fprintf(f, "{\"id\":%llu,\"pid\":%d,\"uid\":%u,\"gid\":%u,\"user\":",
		(unsigned long long)c->id, (int)c->pid, (unsigned int)c->uid,
		(unsigned int)c->gid);
	top_json_string(f, c->user);
	fputs(",\"comm\":", f);
	top_json_string(f, c->comm);
	fputs(",\"transport\":", f);
	top_json_string(f, c->transport);
	fputs(",\"connected_s\":", f);
	json_num(f, c->connected_s);
	fputs(",\"device\":", f);
	if (c->device < 0)
		fputs("null", f);
	else
		fprintf(f, "%d", c->device);
	fputs(",\"cgroup\":", f);
	if (c->cgroup[0])
		top_json_string(f, c->cgroup);
	else
		fputs("null", f);
	fprintf(f, ",\"mem\":{\"mapped\":%llu,\"credit\":%llu,\"limit\":",
		(unsigned long long)c->bytes_mapped, (unsigned long long)c->mint_credit);
	json_u64_or_null(f, c->mem_limit);
	fprintf(f, ",\"allocations\":%llu}", (unsigned long long)c->allocations);
	fprintf(f, ",\"handles\":{\"contexts\":%u,\"streams\":%u,\"events\":%u,"
		"\"modules\":%u,\"functions\":%u}", c->contexts, c->streams, c->events,
		c->modules, c->functions);
	fprintf(f, ",\"ops\":{\"total\":%llu,\"local\":%llu,\"deferred\":%llu,"
		"\"sync\":%llu,\"by_op\":{",
		(unsigned long long)(c->ops_local + c->ops_deferred + c->ops_sync),
		(unsigned long long)c->ops_local, (unsigned long long)c->ops_deferred,
		(unsigned long long)c->ops_sync);
	for (i = 0; i < c->nby_op; i++) {
		if (i)
			fputc(',', f);
		top_json_string(f, c->by_op[i].name);
		fprintf(f, ":%llu", (unsigned long long)c->by_op[i].n);
	}
	fprintf(f, "}},\"crossings\":%llu,\"errors\":%llu,\"bytes_htod\":%llu,"
		"\"bytes_dtoh\":%llu,\"sq_depth\":%u,\"latency_us\":{\"p50\":%llu,"
		"\"p99\":%llu},\"tracers\":%u,",
		(unsigned long long)c->crossings, (unsigned long long)c->errors,
		(unsigned long long)c->bytes_htod, (unsigned long long)c->bytes_dtoh,
		c->sq_depth, (unsigned long long)c->p50_us, (unsigned long long)c->p99_us,
		c->tracers);
	/* The kernel module's view (proc source), null from the daemon. */
	if (c->state[0]) {
		fputs("\"state\":", f);
		top_json_string(f, c->state);
		fprintf(f, ",\"ring\":{\"submits\":%llu,\"completions\":%llu,"
			"\"enters\":%llu},\"rates\":",
			(unsigned long long)c->submits,
			(unsigned long long)c->completions,
			(unsigned long long)c->enters);
	} else {
		fputs("\"state\":null,\"ring\":null,\"rates\":", f);
	}
	if (c->has_rates)
		json_rates(f, &c->rate);
	else
		fputs("null", f);
	fputc('}', f);
}

void top_print_json(FILE *f, const struct top_snapshot *s, const struct top_opts *o)
{
	unsigned int i;
	size_t k;
	bool first = true;

	fputs("{\"time\":", f);
	json_num(f, s->wall_time);
	fputs(",\"interval_s\":", f);
	json_num(f, s->interval_s);
	fputs(",\"source\":", f);
	top_json_string(f, s->source);
	fprintf(f, ",\"daemon\":{\"pid\":%d,\"backend\":", (int)s->daemon.pid);
	top_json_string(f, s->daemon.backend);
	fputs(",\"abi\":", f);
	top_json_string(f, s->daemon.abi);
	fputs(",\"uptime_s\":", f);
	json_num(f, s->daemon.uptime_s);
	fprintf(f, ",\"clients\":%u,\"clients_total\":%llu,\"ops_total\":%llu,"
		"\"mem_used\":", s->daemon.clients,
		(unsigned long long)s->daemon.clients_total,
		(unsigned long long)s->daemon.ops_total);
	json_u64_or_null(f, s->daemon.mem_used);
	fputs(",\"mem_reserved\":", f);
	json_u64_or_null(f, s->daemon.mem_reserved);
	fputs(",\"rates\":", f);
	if (s->have_rates)
		json_rates(f, &s->total);
	else
		fputs("null", f);
	fputs("},\"devices\":[", f);
	for (i = 0; i < s->ndev; i++) {
		fprintf(f, "%s{\"index\":%u,\"name\":", i ? "," : "", s->dev[i].index);
		top_json_string(f, s->dev[i].name);
		fprintf(f, ",\"total_mem\":%llu,\"mem_used\":",
			(unsigned long long)s->dev[i].total_mem);
		json_u64_or_null(f, top_device_used(s, i));
		if (s->dev[i].util >= 0)
			fprintf(f, ",\"util\":%.4f", s->dev[i].util);
		else
			fputs(",\"util\":null", f);
		fputs(",\"isolation\":", f);
		if (s->dev[i].isolation[0])
			top_json_string(f, s->dev[i].isolation);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("],\"clients\":[", f);
	for (k = 0; k < s->nclients; k++) {
		if (!top_visible(&s->clients[k], o))
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		json_client(f, &s->clients[k]);
	}
	fputs("]}\n", f);
}

/* ---- the loop ------------------------------------------------------------- */

static void sleep_until(struct timespec *next, double delay)
{
	long long ns = (long long)(delay * 1e9);

	next->tv_sec += (time_t)(ns / 1000000000LL);
	next->tv_nsec += (long)(ns % 1000000000LL);
	if (next->tv_nsec >= 1000000000L) {
		next->tv_sec++;
		next->tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL) == EINTR)
		;
}

int top_run_batch(struct top_source *src, struct top_opts *o)
{
	struct top_snapshot prev = { 0 }, cur;
	struct timespec next;
	char err[512] = "";
	long i;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &next);
	ret = src->ops->sample(src, &prev, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "axon-top: %s\n", err);
		return 1;
	}
	for (i = 0; !o->iterations || i < o->iterations; i++) {
		sleep_until(&next, o->delay);
		memset(&cur, 0, sizeof(cur));
		ret = src->ops->sample(src, &cur, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "axon-top: %s\n", err);
			top_snapshot_free(&cur);
			top_snapshot_free(&prev);
			return 1;
		}
		top_rates(&prev, &cur);
		top_sort(&cur, o);
		if (o->json)
			top_print_json(stdout, &cur, o);
		else
			top_print_text(stdout, &cur, o);
		fflush(stdout);
		top_snapshot_free(&prev);
		prev = cur;
		if (ferror(stdout)) {
			top_snapshot_free(&prev);
			return 1;
		}
	}
	top_snapshot_free(&prev);
	return 0;
}
