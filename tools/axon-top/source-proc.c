// SPDX-License-Identifier: MIT
/*
 * source-proc.c - the kernel module as axon-top's source: /proc/axon/
 * {stats,clients,cgroups} (format: kmod/proc.c, Documentation/kmod.rst §11).
 *
 * Each file is one header line naming the fields, then rows of exactly that
 * many whitespace-separated fields; strings are escaped as \ooo octal. Rows
 * are read by the header's names, so fields the module appends later are
 * ignored, and a field axon-top knows but the header lacks reads as
 * unknown (only clients' id and pid, and stats' name and value, are
 * required).
 *
 * Mapping onto the model: charged bytes are MEM, depth is SQ, the ring
 * positions (submits, completions: 32-bit, wrapping) are unwrapped to 64
 * bits across samples here and become SUB/s and CMP/s; LIMIT is the lowest
 * limit of the client's cgroup and its ancestors in /proc/axon/cgroups (the
 * module charges hierarchically); STATE and CGROUP come from the row. The
 * module knows nothing of call classes, latencies, errors or copies, so
 * the snapshot carries TOP_CAP_NOCALLS and those columns are hidden.
 *
 * The module has no trace interface: --trace with this source uses the
 * daemon's trace connection (source-axond.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "source.h"
#include "top.h"

const int top_source_proc_available = 1;

#define PROC_MAX_FILE	(64u << 20)	/* refuse anything larger */
#define PROC_MAX_COLS	64
#define PROC_FORMAT	1

/* ---- reading and splitting ------------------------------------------------ */

/* The whole file, NUL-terminated. 0, -ENOENT quietly, or -errno + err. */
static int read_all(const char *dir, const char *name, char **out, char *err,
		    size_t errlen)
{
	char path[PATH_MAX];
	size_t len = 0, cap = 4096;
	char *buf = NULL, *nb;
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	for (;;) {
		if (!buf || len + 1 >= cap) {
			if (buf)
				cap *= 2;
			if (cap > PROC_MAX_FILE + 1) {
				snprintf(err, errlen, "%s: larger than %u MiB", path,
					 PROC_MAX_FILE >> 20);
				e = EFBIG;
				goto fail;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				e = ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			snprintf(err, errlen, "reading %s: %s", path, strerror(e));
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	if (strlen(buf) != len) {
		snprintf(err, errlen, "%s: not text (a NUL byte at offset %zu)", path,
			 strlen(buf));
		free(buf);
		return -EPROTO;
	}
	*out = buf;
	return 0;
fail:
	close(fd);
	free(buf);
	return -e;
}

struct table {
	const char *file;	/* for messages: "DIR/NAME" */
	char *next;		/* the rest of the text */
	unsigned int line;	/* of the row last returned */
	char *names[PROC_MAX_COLS];
	unsigned int ncol;
};

/* Splits one line in place; returns the number of fields (max + 1 if more). */
static unsigned int split(char *line, char **f, unsigned int max)
{
	unsigned int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			return n;
		if (n == max)
			return max + 1;
		f[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p)
			*p++ = 0;
	}
}

static char *next_line(struct table *t)
{
	char *l = t->next, *nl;

	if (!l || !*l)
		return NULL;
	nl = strchr(l, '\n');
	if (nl) {
		*nl = 0;
		t->next = nl + 1;
	} else {
		t->next = l + strlen(l);
	}
	t->line++;
	return l;
}

static int table_open(struct table *t, const char *file, char *text, char *err,
		      size_t errlen)
{
	char *l;
	unsigned int i, k;

	memset(t, 0, sizeof(*t));
	t->file = file;
	t->next = text;
	l = next_line(t);
	if (!l) {
		snprintf(err, errlen, "%s: empty (no header line)", file);
		return -EPROTO;
	}
	t->ncol = split(l, t->names, PROC_MAX_COLS);
	if (!t->ncol || t->ncol > PROC_MAX_COLS) {
		snprintf(err, errlen, "%s: bad header line (%s fields)", file,
			 t->ncol ? "too many" : "no");
		return -EPROTO;
	}
	for (i = 0; i < t->ncol; i++) {
		for (k = 0; t->names[i][k]; k++) {
			char c = t->names[i][k];

			if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
				snprintf(err, errlen, "%s: header field %u is not a name",
					 file, i + 1);
				return -EPROTO;
			}
		}
	}
	return 0;
}

static int table_col(const struct table *t, const char *name)
{
	unsigned int i;

	for (i = 0; i < t->ncol; i++)
		if (!strcmp(t->names[i], name))
			return (int)i;
	return -1;
}

/* The next row's fields in f[t->ncol]; 1, 0 at the end, or -EPROTO + err. */
static int table_row(struct table *t, char **f, char *err, size_t errlen)
{
	unsigned int n;
	char *l;

	while ((l = next_line(t))) {
		n = split(l, f, t->ncol);
		if (!n)
			continue;	/* a blank line */
		if (n != t->ncol) {
			snprintf(err, errlen, "%s line %u: %s%u fields, the header names %u",
				 t->file, t->line, n > t->ncol ? "more than " : "",
				 n > t->ncol ? t->ncol : n, t->ncol);
			return -EPROTO;
		}
		return 1;
	}
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

/* Field col of row f as a number <= max; a missing column gives def. */
static int field_u64(const struct table *t, char **f, int col, uint64_t max,
		     uint64_t def, uint64_t *out, char *err, size_t errlen)
{
	if (col < 0) {
		*out = def;
		return 0;
	}
	if (parse_u64(f[col], out) || *out > max) {
		snprintf(err, errlen, "%s line %u: field '%s' is not a number%s: '%.40s'",
			 t->file, t->line, t->names[col],
			 max < UINT64_MAX ? " in range" : "", f[col]);
		return -EPROTO;
	}
	return 0;
}

char *top_proc_unescape(char *s)
{
	char *r = s, *w = s;

	while (*r) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
		    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			int v = (r[1] - '0') << 6 | (r[2] - '0') << 3 | (r[3] - '0');

			*w++ = v ? (char)v : '?';	/* no NUL inside a string */
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
	return s;
}

/* ---- the three files -------------------------------------------------------- */

struct stats {
	uint64_t format, clients, opens, daemon_attached, daemon_pid;
	uint64_t charged_bytes;
	bool have_format;
};

static int read_stats(const char *dir, struct stats *st, char *err, size_t errlen)
{
	char file[PATH_MAX], *text = NULL, *f[PROC_MAX_COLS];
	struct table t;
	int ret, cname, cval;

	memset(st, 0, sizeof(*st));
	ret = read_all(dir, "stats", &text, err, errlen);
	if (ret)
		return ret;
	snprintf(file, sizeof(file), "%s/stats", dir);
	ret = table_open(&t, file, text, err, errlen);
	if (ret)
		goto out;
	cname = table_col(&t, "name");
	cval = table_col(&t, "value");
	if (cname < 0 || cval < 0) {
		snprintf(err, errlen, "%s: the header has no '%s' field", file,
			 cname < 0 ? "name" : "value");
		ret = -EPROTO;
		goto out;
	}
	while ((ret = table_row(&t, f, err, errlen)) > 0) {
		static const struct { const char *name; size_t off; } known[] = {
			{ "format", offsetof(struct stats, format) },
			{ "clients", offsetof(struct stats, clients) },
			{ "opens", offsetof(struct stats, opens) },
			{ "daemon_attached", offsetof(struct stats, daemon_attached) },
			{ "daemon_pid", offsetof(struct stats, daemon_pid) },
			{ "charged_bytes", offsetof(struct stats, charged_bytes) },
		};
		uint64_t v;
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (!strcmp(f[cname], known[i].name))
				break;
		if (i == sizeof(known) / sizeof(known[0]))
			continue;	/* a counter axon-top does not show */
		ret = field_u64(&t, f, cval, UINT64_MAX, 0, &v, err, errlen);
		if (ret)
			goto out;
		*(uint64_t *)((char *)st + known[i].off) = v;
		if (!i)
			st->have_format = true;
	}
	if (ret < 0)
		goto out;
	if (!st->have_format) {
		snprintf(err, errlen, "%s: no 'format' line", file);
		ret = -EPROTO;
	} else if (st->format != PROC_FORMAT) {
		snprintf(err, errlen, "%s: format %llu, axon-top reads format %d", file,
			 (unsigned long long)st->format, PROC_FORMAT);
		ret = -EPROTO;
	}
out:
	free(text);
	return ret;
}

struct cglimit {
	char *path;		/* unescaped, points into the file's text */
	uint64_t limit;		/* TOP_UNKNOWN: max */
};

struct cgroups {
	char *text;
	struct cglimit *v;
	size_t n;
	bool have;		/* the file exists */
};

static void cgroups_free(struct cgroups *cg)
{
	free(cg->text);
	free(cg->v);
	memset(cg, 0, sizeof(*cg));
}

static size_t count_lines(const char *s)
{
	size_t n = 1;

	while ((s = strchr(s, '\n'))) {
		n++;
		s++;
	}
	return n;
}

static int read_cgroups(const char *dir, struct cgroups *cg, char *err,
			size_t errlen)
{
	char file[PATH_MAX], *f[PROC_MAX_COLS];
	struct table t;
	int ret, cpath, ckind, climit;

	memset(cg, 0, sizeof(*cg));
	ret = read_all(dir, "cgroups", &cg->text, err, errlen);
	if (ret == -ENOENT) {
		err[0] = 0;
		return 0;	/* an older module: no limits shown */
	}
	if (ret)
		return ret;
	cg->have = true;
	snprintf(file, sizeof(file), "%s/cgroups", dir);
	cg->v = calloc(count_lines(cg->text), sizeof(*cg->v));
	if (!cg->v) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = table_open(&t, file, cg->text, err, errlen);
	if (ret)
		return ret;
	cpath = table_col(&t, "cgroup");
	ckind = table_col(&t, "kind");
	climit = table_col(&t, "limit");
	if (cpath < 0 || climit < 0) {
		snprintf(err, errlen, "%s: the header has no '%s' field", file,
			 cpath < 0 ? "cgroup" : "limit");
		return -EPROTO;
	}
	while ((ret = table_row(&t, f, err, errlen)) > 0) {
		struct cglimit *l = &cg->v[cg->n];

		if (ckind >= 0 && strcmp(f[ckind], "devmem"))
			continue;	/* another kind of limit */
		l->path = top_proc_unescape(f[cpath]);
		if (!strcmp(f[climit], "max"))
			l->limit = TOP_UNKNOWN;
		else if (field_u64(&t, f, climit, UINT64_MAX - 1, 0, &l->limit, err,
				   errlen))
			return -EPROTO;
		cg->n++;
	}
	return ret;
}

/* The lowest limit on path or an ancestor; TOP_UNKNOWN if none. */
static uint64_t cgroup_limit(const struct cgroups *cg, const char *path)
{
	uint64_t lim = TOP_UNKNOWN;
	size_t i, l;

	for (i = 0; i < cg->n; i++) {
		const char *p = cg->v[i].path;

		l = strlen(p);
		if (l && p[l - 1] == '/')
			l--;		/* "/" is every cgroup's ancestor */
		if (strncmp(path, p, l) || (path[l] && path[l] != '/'))
			continue;
		if (cg->v[i].limit < lim)
			lim = cg->v[i].limit;
	}
	return lim;
}

static void copy_trunc(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

static int read_clients(const char *dir, const struct cgroups *cg,
			struct top_snapshot *s, char *err, size_t errlen)
{
	enum { F_ID, F_PID, F_UID, F_GID, F_CGROUP, F_COMM, F_CHARGED, F_SUBMITS,
	       F_COMPLETIONS, F_DEPTH, F_STATE, F_ENTERS, F_N };
	static const char *const names[F_N] = {
		"id", "pid", "uid", "gid", "cgroup", "comm", "charged", "submits",
		"completions", "depth", "state", "enters",
	};
	char file[PATH_MAX], *text = NULL, *f[PROC_MAX_COLS];
	struct table t;
	int col[F_N], ret, i;
	size_t max;

	ret = read_all(dir, "clients", &text, err, errlen);
	if (ret)
		return ret;
	snprintf(file, sizeof(file), "%s/clients", dir);
	ret = table_open(&t, file, text, err, errlen);
	if (ret)
		goto out;
	for (i = 0; i < F_N; i++)
		col[i] = table_col(&t, names[i]);
	if (col[F_ID] < 0 || col[F_PID] < 0) {
		snprintf(err, errlen, "%s: the header has no '%s' field", file,
			 col[F_ID] < 0 ? "id" : "pid");
		ret = -EPROTO;
		goto out;
	}
	max = count_lines(t.next);
	s->clients = calloc(max, sizeof(*s->clients));
	if (!s->clients) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	while ((ret = table_row(&t, f, err, errlen)) > 0) {
		struct top_client *c = &s->clients[s->nclients];
		uint64_t v[F_N] = { 0 };

		if (field_u64(&t, f, col[F_ID], UINT64_MAX, 0, &v[F_ID], err, errlen) ||
		    field_u64(&t, f, col[F_PID], INT_MAX, 0, &v[F_PID], err, errlen) ||
		    field_u64(&t, f, col[F_UID], UINT32_MAX, UINT32_MAX, &v[F_UID], err,
			      errlen) ||
		    field_u64(&t, f, col[F_GID], UINT32_MAX, UINT32_MAX, &v[F_GID], err,
			      errlen) ||
		    field_u64(&t, f, col[F_CHARGED], UINT64_MAX, 0, &v[F_CHARGED], err,
			      errlen) ||
		    field_u64(&t, f, col[F_SUBMITS], UINT32_MAX, 0, &v[F_SUBMITS], err,
			      errlen) ||
		    field_u64(&t, f, col[F_COMPLETIONS], UINT32_MAX, 0, &v[F_COMPLETIONS],
			      err, errlen) ||
		    field_u64(&t, f, col[F_DEPTH], UINT32_MAX, 0, &v[F_DEPTH], err,
			      errlen) ||
		    field_u64(&t, f, col[F_ENTERS], INT64_MAX, 0, &v[F_ENTERS], err,
			      errlen)) {
			ret = -EPROTO;
			goto out;
		}
		c->id = v[F_ID];
		c->pid = (pid_t)v[F_PID];
		c->uid = (uint32_t)v[F_UID];
		c->gid = (uint32_t)v[F_GID];
		c->bytes_mapped = v[F_CHARGED];
		c->submits = v[F_SUBMITS];
		c->completions = v[F_COMPLETIONS];
		c->sq_depth = (uint32_t)v[F_DEPTH];
		c->enters = v[F_ENTERS];
		c->device = -1;
		c->mem_limit = TOP_UNKNOWN;
		if (col[F_COMM] >= 0)
			copy_trunc(c->comm, sizeof(c->comm), top_proc_unescape(f[col[F_COMM]]));
		if (col[F_CGROUP] >= 0) {
			const char *path = top_proc_unescape(f[col[F_CGROUP]]);

			copy_trunc(c->cgroup, sizeof(c->cgroup), path);
			c->mem_limit = cgroup_limit(cg, path);
		}
		copy_trunc(c->state, sizeof(c->state),
			   col[F_STATE] >= 0 ? top_proc_unescape(f[col[F_STATE]]) : "?");
		top_client_finish(c);
		s->nclients++;
	}
out:
	free(text);
	return ret;
}

int top_proc_read(const char *dir, struct top_snapshot *s, char *err,
		  size_t errlen)
{
	struct cgroups cg;
	struct stats st;
	struct timespec ts;
	bool have_limits;
	int ret;

	ret = read_stats(dir, &st, err, errlen);
	if (ret)
		return ret;
	ret = read_cgroups(dir, &cg, err, errlen);
	if (!ret)
		ret = read_clients(dir, &cg, s, err, errlen);
	have_limits = cg.have;
	cgroups_free(&cg);
	if (ret) {
		top_snapshot_free(s);
		return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->mono_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->wall_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	snprintf(s->source, sizeof(s->source), "proc");
	s->caps = TOP_CAP_CGROUP | TOP_CAP_RING | TOP_CAP_NOCALLS |
		  (have_limits ? TOP_CAP_LIMIT : 0);
	s->daemon.pid = st.daemon_attached ? (pid_t)st.daemon_pid : 0;
	snprintf(s->daemon.backend, sizeof(s->daemon.backend), "kmod");
	snprintf(s->daemon.abi, sizeof(s->daemon.abi), "proc/%llu",
		 (unsigned long long)st.format);
	s->daemon.clients = (unsigned int)s->nclients;
	s->daemon.clients_total = st.opens;
	s->daemon.mem_used = st.charged_bytes;
	s->daemon.mem_reserved = TOP_UNKNOWN;
	return 0;
}

/* ---- the source ------------------------------------------------------------- */

/* Ring positions seen last time, to unwrap the 32-bit counters. */
struct ring_seen {
	uint64_t id;
	uint32_t sq, cq;		/* raw */
	uint64_t sq64, cq64;		/* unwrapped */
};

struct proc_priv {
	struct ring_seen *v;
	size_t n;
};

static int cmp_seen(const void *a, const void *b)
{
	const struct ring_seen *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int proc_sample(struct top_source *src, struct top_snapshot *s, char *err,
		       size_t errlen)
{
	struct proc_priv *p = src->priv;
	struct ring_seen *now = NULL;
	size_t i;
	int ret;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		src->priv = p;
	}
	ret = top_proc_read(src->proc_dir, s, err, errlen);
	if (ret)
		return ret;
	if (s->nclients) {
		now = calloc(s->nclients, sizeof(*now));
		if (!now) {
			snprintf(err, errlen, "out of memory");
			top_snapshot_free(s);
			return -ENOMEM;
		}
	}
	for (i = 0; i < s->nclients; i++) {
		struct top_client *c = &s->clients[i];
		struct ring_seen key = { .id = c->id }, *old = NULL;

		if (p->n)
			old = bsearch(&key, p->v, p->n, sizeof(*p->v), cmp_seen);
		now[i].id = c->id;
		now[i].sq = (uint32_t)c->submits;
		now[i].cq = (uint32_t)c->completions;
		now[i].sq64 = old ? old->sq64 + (uint32_t)(now[i].sq - old->sq) : now[i].sq;
		now[i].cq64 = old ? old->cq64 + (uint32_t)(now[i].cq - old->cq) : now[i].cq;
		c->submits = now[i].sq64;
		c->completions = now[i].cq64;
	}
	if (s->nclients)
		qsort(now, s->nclients, sizeof(*now), cmp_seen);
	free(p->v);
	p->v = now;
	p->n = s->nclients;
	return 0;
}

/* The module has no trace interface: follow the client through axond. */
static int proc_trace_open(struct top_source *src, struct top_trace_target *t,
			   char *err, size_t errlen)
{
	return top_trace_connect(src->addr[0] ? src->addr : NULL, t, err, errlen);
}

static int proc_trace_read(struct top_source *src, int fd,
			   struct axon_trace_event *ev, size_t max, char *err,
			   size_t errlen)
{
	(void)src;
	return top_trace_recv(fd, ev, max, err, errlen);
}

static void proc_destroy(struct top_source *src)
{
	struct proc_priv *p = src->priv;

	if (p)
		free(p->v);
	free(p);
	src->priv = NULL;
}

const struct top_source_ops top_source_proc = {
	.name = "proc",
	.sample = proc_sample,
	.trace_open = proc_trace_open,
	.trace_read = proc_trace_read,
	.destroy = proc_destroy,
};
