// SPDX-License-Identifier: MIT
/*
 * model.c - source-independent work on samples: rates from the deltas
 * between two samples, user names, printable command names.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

void top_snapshot_free(struct top_snapshot *s)
{
	free(s->clients);
	s->clients = NULL;
	s->nclients = 0;
}

uint64_t top_client_op(const struct top_client *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->nby_op; i++)
		if (!strcmp(c->by_op[i].name, name))
			return c->by_op[i].n;
	return 0;
}

uint64_t top_device_used(const struct top_snapshot *s, unsigned int i)
{
	if (i >= s->ndev)
		return TOP_UNKNOWN;
	if (s->dev[i].mem_used != TOP_UNKNOWN)
		return s->dev[i].mem_used;
	/* The daemon counts memory as a whole: exact with one device. */
	if (s->ndev == 1)
		return s->daemon.mem_used;
	return TOP_UNKNOWN;
}

/* ---- names -------------------------------------------------------------- */

static struct {
	uint32_t uid;
	char name[TOP_USER_LEN];
} user_cache[64];
static unsigned int user_cached;

static void user_name(uint32_t uid, char *out, size_t len)
{
	struct passwd pw, *res = NULL;
	char buf[1024];
	unsigned int i;

	for (i = 0; i < user_cached; i++) {
		if (user_cache[i].uid == uid) {
			snprintf(out, len, "%s", user_cache[i].name);
			return;
		}
	}
	if (uid == (uint32_t)-1)
		snprintf(out, len, "?");
	else if (!getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &res) && res)
		snprintf(out, len, "%s", res->pw_name);
	else
		snprintf(out, len, "%u", (unsigned int)uid);
	i = user_cached < 64 ? user_cached++ : uid % 64;
	user_cache[i].uid = uid;
	snprintf(user_cache[i].name, sizeof(user_cache[i].name), "%s", out);
}

void top_client_finish(struct top_client *c)
{
	size_t i;

	user_name(c->uid, c->user, sizeof(c->user));
	/* Tables need one byte per cell: anything but printable ASCII is '?'. */
	for (i = 0; c->comm[i] && i < sizeof(c->comm_disp) - 1; i++) {
		unsigned char ch = (unsigned char)c->comm[i];

		c->comm_disp[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	c->comm_disp[i] = 0;
	for (i = 0; c->user[i]; i++) {
		unsigned char ch = (unsigned char)c->user[i];

		if (ch < 0x20 || ch >= 0x7f)
			c->user[i] = '?';
	}
}

/* ---- rates -------------------------------------------------------------- */

static int cmp_id(const void *a, const void *b)
{
	const struct top_client *x = *(const struct top_client *const *)a;
	const struct top_client *y = *(const struct top_client *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static double delta(uint64_t now, uint64_t before)
{
	return now > before ? (double)(now - before) : 0.0;
}

static void add_rates(struct top_rates *t, const struct top_rates *r)
{
	t->local += r->local;
	t->deferred += r->deferred;
	t->sync += r->sync;
	t->ops += r->ops;
	t->crossings += r->crossings;
	t->errors += r->errors;
	t->bytes_htod += r->bytes_htod;
	t->bytes_dtoh += r->bytes_dtoh;
	t->submits += r->submits;
	t->completions += r->completions;
}

void top_rates(const struct top_snapshot *prev, struct top_snapshot *cur)
{
	static const struct top_client zero;
	const struct top_client **idx = NULL;
	double dt = 0;
	size_t i;

	memset(&cur->total, 0, sizeof(cur->total));
	cur->have_rates = false;
	cur->interval_s = 0;
	for (i = 0; i < cur->nclients; i++)
		cur->clients[i].has_rates = false;
	if (!prev || prev->daemon.pid != cur->daemon.pid ||
	    cur->daemon.uptime_s < prev->daemon.uptime_s)
		return;		/* no previous sample, or the daemon restarted */
	/* The daemon's own clock is closest to its counters. */
	if (cur->daemon.uptime_s > 0 && prev->daemon.uptime_s > 0)
		dt = cur->daemon.uptime_s - prev->daemon.uptime_s;
	if (dt <= 0)
		dt = cur->mono_time - prev->mono_time;
	if (dt <= 1e-6)
		return;
	cur->interval_s = dt;
	cur->have_rates = true;
	for (i = 0; i < cur->ndev && i < prev->ndev; i++) {
		const struct top_device *p = &prev->dev[i];
		struct top_device *c = &cur->dev[i];

		if (c->busy_ns == TOP_UNKNOWN || p->busy_ns == TOP_UNKNOWN ||
		    c->busy_ns < p->busy_ns)
			continue;
		c->util = (double)(c->busy_ns - p->busy_ns) / (dt * 1e9);
		if (c->util > 1)
			c->util = 1;
	}
	if (prev->nclients) {
		idx = malloc(prev->nclients * sizeof(*idx));
		if (!idx)
			return;
		for (i = 0; i < prev->nclients; i++)
			idx[i] = &prev->clients[i];
		qsort(idx, prev->nclients, sizeof(*idx), cmp_id);
	}
	for (i = 0; i < cur->nclients; i++) {
		struct top_client *c = &cur->clients[i];
		const struct top_client *key = c, *p = NULL, **hit = NULL;
		struct top_rates *r = &c->rate;

		if (idx)
			hit = bsearch(&key, idx, prev->nclients, sizeof(*idx), cmp_id);
		if (hit) {
			p = *hit;
		} else if (c->connected_s <= dt * 1.5 + 0.1) {
			p = &zero;	/* connected during the interval */
		} else {
			continue;	/* first seen now, but older: unknown */
		}
		r->local = delta(c->ops_local, p->ops_local) / dt;
		r->deferred = delta(c->ops_deferred, p->ops_deferred) / dt;
		r->sync = delta(c->ops_sync, p->ops_sync) / dt;
		r->ops = r->local + r->deferred + r->sync;
		r->crossings = delta(c->crossings, p->crossings) / dt;
		r->errors = delta(c->errors, p->errors) / dt;
		r->bytes_htod = delta(c->bytes_htod, p->bytes_htod) / dt;
		r->bytes_dtoh = delta(c->bytes_dtoh, p->bytes_dtoh) / dt;
		r->submits = delta(c->submits, p->submits) / dt;
		r->completions = delta(c->completions, p->completions) / dt;
		c->has_rates = true;
		add_rates(&cur->total, r);
	}
	free(idx);
}
