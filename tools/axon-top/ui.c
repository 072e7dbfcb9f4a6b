// SPDX-License-Identifier: MIT
/*
 * ui.c - the interactive screen, in the manner of htop:
 *
 *   axon-top  axond pid 1234  backend sim  ABI 1.0  up 1:02:03     12:00:00
 *   GPU0 [|||||||                      64.0M/16.0G] axon sim device ...
 *   Clients 3 (12 total)  Ops/s 16.0  L/D/S 1.0/6.0/9.0  Xing/s 12.0
 *   Sort OPS/s desc  Filter -  User -                 (or an error, in red)
 *      ID     PID USER     COMMAND            MEM  OPS/s  ...  (header bar)
 *      12     660 root     topc-a           64.0M   16.0  ...
 *   h Help  </> Sort  / Filter  u User  t Trace  b Bytes  q Quit
 *
 * Everything is drawn through put(), which clips to the screen width, and
 * only ASCII reaches the screen, so no line is longer than the terminal at
 * any size. Columns that do not fit are dropped from the right. Input and
 * the trace descriptor are multiplexed with poll(); SIGWINCH arrives as
 * KEY_RESIZE.
 */
#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "top.h"

enum { VIEW_TABLE, VIEW_HELP, VIEW_TRACE };
enum { EDIT_NONE, EDIT_FILTER, EDIT_USER };

enum {
	PAIR_LABEL = 1, PAIR_BAR, PAIR_THEAD, PAIR_SEL, PAIR_ERR, PAIR_KEY,
	PAIR_WARN, PAIR_OK, PAIR_SORT,
};

#define TRACE_LINES	5000
#define TRACE_READ	512

struct ui {
	struct top_source *src;
	struct top_opts *o;
	struct top_snapshot prev, cur;
	bool have_cur;
	char err[400];
	double next_sample;
	long samples;

	uint64_t sel_id;	/* the selected client, kept across samples */
	int sel;		/* its row among the visible ones */
	int scroll;
	int view;
	int edit;
	bool color;

	/* trace view */
	int tfd;
	bool tended;
	uint64_t tclient;
	char ttitle[160];
	struct top_trace_fmt tst;
	char *tlines[TRACE_LINES];
	size_t tcount;		/* lines ever added */
	int tscroll;		/* lines back from the newest */
	struct axon_trace_event *tev;
	unsigned long long trecords;
};

static volatile sig_atomic_t quit_signal;

static void on_quit(int sig)
{
	(void)sig;
	quit_signal = 1;
}

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- drawing primitives --------------------------------------------------- */

static attr_t pair(struct ui *u, int p, attr_t mono)
{
	return u->color ? (attr_t)COLOR_PAIR(p) : mono;
}

/* Writes s at (y, x), clipped to the screen and to maxw cells. */
static void put(int y, int x, attr_t a, const char *s, int maxw)
{
	int room = COLS - x;
	char buf[1024];
	int i;

	if (y < 0 || y >= LINES || x < 0 || room <= 0)
		return;
	if (maxw >= 0 && maxw < room)
		room = maxw;
	/* The bottom-right cell would scroll the screen: leave it. */
	if (y == LINES - 1 && x + room >= COLS)
		room = COLS - 1 - x;
	if (room <= 0)
		return;
	for (i = 0; s[i] && i < room && i < (int)sizeof(buf) - 1; i++) {
		unsigned char ch = (unsigned char)s[i];

		buf[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	buf[i] = 0;
	attrset(a);
	mvaddstr(y, x, buf);
	attrset(A_NORMAL);
}

/* A whole line in one attribute, padded to the width. */
static void put_bar(int y, attr_t a, const char *s)
{
	char buf[1024];
	int w = COLS < (int)sizeof(buf) - 1 ? COLS : (int)sizeof(buf) - 1;

	snprintf(buf, sizeof(buf), "%-*.*s", w, w, s);
	put(y, 0, a, buf, -1);
}

/* ---- sampling ------------------------------------------------------------- */

static void sample(struct ui *u)
{
	struct top_snapshot s = { 0 };
	char err[256] = "";

	if (u->src->ops->sample(u->src, &s, err, sizeof(err))) {
		top_snapshot_free(&s);
		snprintf(u->err, sizeof(u->err), "%s (retrying)", err);
		return;
	}
	u->err[0] = 0;
	top_rates(u->have_cur ? &u->cur : NULL, &s);
	top_snapshot_free(&u->prev);
	u->prev = u->cur;
	u->cur = s;
	u->have_cur = true;
	u->samples++;
}

/* Visible rows, sorted; returns the count (rows is malloc'd). */
static int visible_rows(struct ui *u, struct top_client ***rows)
{
	size_t i;
	int n = 0;

	*rows = NULL;
	if (!u->have_cur)
		return 0;
	top_sort(&u->cur, u->o);
	if (!u->cur.nclients)
		return 0;
	*rows = calloc(u->cur.nclients, sizeof(**rows));
	if (!*rows)
		return 0;
	for (i = 0; i < u->cur.nclients; i++)
		if (top_visible(&u->cur.clients[i], u->o))
			(*rows)[n++] = &u->cur.clients[i];
	return n;
}

/* ---- the table view ------------------------------------------------------- */

static void draw_meter(struct ui *u, int y, const struct top_device *d, uint64_t used)
{
	char label[16], text[64], a[32], b[32], name[160], bar[256];
	int bw, fill = 0, tl, x, i;

	snprintf(label, sizeof(label), "GPU%u", d->index);
	if (u->o->bytes) {
		snprintf(a, sizeof(a), used == TOP_UNKNOWN ? "?" : "%llu",
			 (unsigned long long)used);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)d->total_mem);
	} else {
		if (used == TOP_UNKNOWN)
			snprintf(a, sizeof(a), "?");
		else
			top_human_bytes(used, a, sizeof(a));
		top_human_bytes(d->total_mem, b, sizeof(b));
	}
	snprintf(text, sizeof(text), "%s/%s", a, b);
	tl = (int)strlen(text);
	/* "GPU0 [" + bar + "] " + name */
	bw = COLS >= 120 ? 60 : COLS - 8 - 24;
	if (bw < tl + 2)
		bw = tl + 2;
	if (bw > (int)sizeof(bar) - 1)
		bw = (int)sizeof(bar) - 1;
	if (used != TOP_UNKNOWN && d->total_mem) {
		double frac = (double)used / (double)d->total_mem;

		fill = (int)(frac * bw + 0.5);
		if (fill > bw)
			fill = bw;
		if (used && !fill)
			fill = 1;
	}
	for (i = 0; i < bw; i++)
		bar[i] = i < fill ? '|' : ' ';
	bar[bw] = 0;
	put(y, 0, pair(u, PAIR_LABEL, A_BOLD), label, -1);
	x = (int)strlen(label) + 1;
	put(y, x, A_BOLD, "[", -1);
	put(y, x + 1, pair(u, PAIR_BAR, A_NORMAL) | A_BOLD, bar, -1);
	put(y, x + 1 + bw - tl, A_BOLD, text, -1);
	put(y, x + 1 + bw, A_BOLD, "]", -1);
	if (d->util >= 0)
		snprintf(name, sizeof(name), "util %3.0f%%  %s%s%s", d->util * 100, d->name,
			 d->isolation[0] ? "  isolation " : "", d->isolation);
	else
		snprintf(name, sizeof(name), "%s", d->name);
	put(y, x + bw + 3, A_NORMAL, name, -1);
}

static int draw_header(struct ui *u)
{
	const struct top_snapshot *s = &u->cur;
	char line[512], up[32], t[32], a[32], b[32], c[32], d[32], e[32];
	time_t now = time(NULL);
	struct tm tm;
	unsigned int i, maxdev;
	int y = 0, x;

	localtime_r(&now, &tm);
	strftime(t, sizeof(t), "%H:%M:%S", &tm);
	if (u->have_cur) {
		top_duration(s->daemon.uptime_s, up, sizeof(up));
		snprintf(line, sizeof(line), "  %s pid %d  backend %s  ABI %s  up %s",
			 s->source, (int)s->daemon.pid, s->daemon.backend, s->daemon.abi, up);
	} else {
		snprintf(line, sizeof(line), "  waiting for the first sample");
	}
	put(y, 0, pair(u, PAIR_LABEL, A_BOLD) | A_BOLD, "axon-top", -1);
	put(y, 8, A_NORMAL, line, COLS - 8 - 10);
	x = COLS - (int)strlen(t) - 1;
	if (x > 8 + (int)strlen(line))
		put(y, x, A_BOLD, t, -1);
	y++;
	if (!u->have_cur)
		return y;
	/* Device meters: at most a quarter of the screen. */
	maxdev = LINES / 4 > 1 ? (unsigned int)(LINES / 4) : 1;
	for (i = 0; i < s->ndev && i < maxdev; i++)
		draw_meter(u, y++, &s->dev[i], top_device_used(s, i));
	if (i < s->ndev) {
		snprintf(line, sizeof(line), "  ... %u more devices", s->ndev - i);
		put(y++, 0, A_NORMAL, line, -1);
	}
	top_human_count(s->have_rates ? s->total.ops : -1, a, sizeof(a));
	top_human_count(s->have_rates ? s->total.local : -1, b, sizeof(b));
	top_human_count(s->have_rates ? s->total.deferred : -1, c, sizeof(c));
	top_human_count(s->have_rates ? s->total.sync : -1, d, sizeof(d));
	top_human_count(s->have_rates ? s->total.crossings : -1, e, sizeof(e));
	x = 0;
	put(y, x, pair(u, PAIR_LABEL, A_BOLD), "Clients:", -1);
	snprintf(line, sizeof(line), " %u (%llu total)  ", s->daemon.clients,
		 (unsigned long long)s->daemon.clients_total);
	put(y, x += 8, A_BOLD, line, -1);
	x += (int)strlen(line);
	if (s->caps & TOP_CAP_NOCALLS) {
		/* The kernel module counts SQEs and CQEs, not calls. */
		top_human_count(s->have_rates ? s->total.submits : -1, a, sizeof(a));
		top_human_count(s->have_rates ? s->total.completions : -1, b, sizeof(b));
		put(y, x, pair(u, PAIR_LABEL, A_BOLD), "Sub/s:", -1);
		snprintf(line, sizeof(line), " %s  ", a);
		put(y, x += 6, A_BOLD, line, -1);
		x += (int)strlen(line);
		put(y, x, pair(u, PAIR_LABEL, A_BOLD), "Cmp/s:", -1);
		snprintf(line, sizeof(line), " %s", b);
		put(y, x + 6, A_BOLD, line, -1);
		y++;
		return y;
	}
	put(y, x, pair(u, PAIR_LABEL, A_BOLD), "Ops/s:", -1);
	snprintf(line, sizeof(line), " %s (L %s D %s S %s)  ", a, b, c, d);
	put(y, x += 6, A_BOLD, line, -1);
	x += (int)strlen(line);
	put(y, x, pair(u, PAIR_LABEL, A_BOLD), "Xing/s:", -1);
	snprintf(line, sizeof(line), " %s", e);
	put(y, x + 7, A_BOLD, line, -1);
	y++;
	return y;
}

static void draw_status(struct ui *u, int y)
{
	char line[256];

	if (u->err[0]) {
		put_bar(y, pair(u, PAIR_ERR, A_BOLD) | A_BOLD, u->err);
		return;
	}
	snprintf(line, sizeof(line), "Sort: %s %s  Filter: %s  User: %s%s",
		 top_columns[u->o->sort].title,
		 (top_columns[u->o->sort].desc != u->o->reverse) ? "desc" : "asc",
		 u->o->filter[0] ? u->o->filter : "-", u->o->user[0] ? u->o->user : "-",
		 u->o->bytes ? "  (bytes)" : "");
	put(y, 0, A_NORMAL, line, -1);
}

static void draw_keys(struct ui *u)
{
	static const char *const keys[][2] = {
		{ "h", "Help" }, { "<>", "Sort" }, { "/", "Filter" }, { "u", "User" },
		{ "t", "Trace" }, { "b", "Bytes" }, { "q", "Quit" },
	};
	int y = LINES - 1, x = 0;
	size_t i;

	if (u->edit != EDIT_NONE) {
		char line[160];

		snprintf(line, sizeof(line), "%s: %s_   (Enter: keep, Esc: clear)",
			 u->edit == EDIT_FILTER ? "Filter (user or command)" : "User",
			 u->edit == EDIT_FILTER ? u->o->filter : u->o->user);
		put_bar(y, pair(u, PAIR_KEY, A_REVERSE), line);
		return;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		put(y, x, A_BOLD, keys[i][0], -1);
		x += (int)strlen(keys[i][0]);
		put(y, x, pair(u, PAIR_KEY, A_REVERSE), keys[i][1], -1);
		x += (int)strlen(keys[i][1]) + 1;
	}
}

static attr_t cell_attr(struct ui *u, const struct top_client *c, int col)
{
	switch (col) {
	case C_ERR:
		return c->errors ? pair(u, PAIR_ERR, A_BOLD) | A_BOLD : A_NORMAL;
	case C_SQ:
		return c->sq_depth ? pair(u, PAIR_WARN, A_BOLD) : A_NORMAL;
	case C_COMM:
		return c->tracers ? pair(u, PAIR_OK, A_BOLD) | A_BOLD : A_BOLD;
	case C_MEM:
		return c->bytes_mapped ? pair(u, PAIR_OK, A_NORMAL) : A_NORMAL;
	default:
		return A_NORMAL;
	}
}

static void draw_table(struct ui *u, int y0)
{
	int cols[C_NCOLS], n, nrows, rows_room, i, k, x;
	struct top_client **rows;
	char line[1024];

	n = top_layout(&u->cur, u->o, COLS, cols);
	/* Header bar; the sort column stands out. */
	top_header_row(cols, n, u->o, line, sizeof(line));
	put_bar(y0, pair(u, PAIR_THEAD, A_REVERSE), line);
	for (i = 0, x = 0; i < n; i++) {
		int w = top_col_width(cols[i], u->o);

		if (cols[i] == u->o->sort) {
			char cell[64];

			snprintf(cell, sizeof(cell), top_columns[cols[i]].left ? "%-*s" : "%*s",
				 w, top_columns[cols[i]].title);
			put(y0, x, pair(u, PAIR_SORT, A_REVERSE | A_BOLD) | A_BOLD, cell, -1);
		}
		x += w + 1;
	}
	nrows = visible_rows(u, &rows);
	rows_room = LINES - 1 - (y0 + 1);
	if (rows_room < 1)
		rows_room = 0;
	/* Keep the selected client selected when rows move. */
	for (i = 0; i < nrows; i++)
		if (rows[i]->id == u->sel_id)
			u->sel = i;
	if (u->sel >= nrows)
		u->sel = nrows - 1;
	if (u->sel < 0)
		u->sel = 0;
	if (nrows)
		u->sel_id = rows[u->sel]->id;
	if (u->sel < u->scroll)
		u->scroll = u->sel;
	if (rows_room && u->sel >= u->scroll + rows_room)
		u->scroll = u->sel - rows_room + 1;
	if (u->scroll > nrows - rows_room)
		u->scroll = nrows - rows_room > 0 ? nrows - rows_room : 0;
	for (k = 0; k < rows_room && u->scroll + k < nrows; k++) {
		const struct top_client *c = rows[u->scroll + k];
		int y = y0 + 1 + k;

		if (u->scroll + k == u->sel) {
			top_row(c, cols, n, u->o, line, sizeof(line));
			put_bar(y, pair(u, PAIR_SEL, A_REVERSE), line);
			continue;
		}
		for (i = 0, x = 0; i < n; i++) {
			char cell[160], padded[192];
			int w = top_col_width(cols[i], u->o);

			top_cell(c, cols[i], u->o, cell, sizeof(cell));
			snprintf(padded, sizeof(padded),
				 top_columns[cols[i]].left ? "%-*.*s" : "%*.*s", w, w, cell);
			put(y, x, cell_attr(u, c, cols[i]), padded, -1);
			x += w + 1;
		}
	}
	if (!nrows && rows_room)
		put(y0 + 1, 0, A_NORMAL,
		    u->have_cur ? (u->cur.nclients ? "(no client matches the filter)"
						   : "(no clients)") : "", -1);
	free(rows);
}

static void draw_help(struct ui *u)
{
	static const char *const keys[] = {
		"Keys",
		"  h ?  F1    this help (any key returns)",
		"  q    F10   quit",
		"  < >  F6    sort by the previous / next column",
		"  M P I      sort by memory / ops per second / id (again: reverse)",
		"  R          reverse the sort",
		"  /          filter: clients whose user or command contains the text",
		"  u          user: clients of that user only (name or uid)",
		"  t          trace the selected client's calls (q returns)",
		"  b          human sizes <-> raw bytes",
		"  arrows PgUp PgDn Home End   select a client",
		"",
		"Columns",
	};
	char line[256];
	int y = 0, i;

	put_bar(y++, pair(u, PAIR_THEAD, A_REVERSE),
		" axon-top " TOP_VERSION " help - rates are per second over the last interval");
	for (i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])) && y < LINES - 1; i++)
		put(y++, 0, i == 0 || keys[i][0] == 'C' ? A_BOLD : A_NORMAL, keys[i], -1);
	for (i = 0; i < C_NCOLS && y < LINES - 1; i++) {
		if (y == LINES - 2 && i < C_NCOLS - 1) {
			put(y++, 0, A_NORMAL, "  ... (axon-top --help lists every column)", -1);
			break;
		}
		snprintf(line, sizeof(line), "  %-8s %s", top_columns[i].title,
			 top_columns[i].help);
		put(y++, 0, A_NORMAL, line, -1);
	}
	if (y < LINES - 1)
		put(y++, 0, A_NORMAL,
		    "Source: the axond stats endpoint; /proc/axon (kernel module) not wired yet.",
		    -1);
	put_bar(LINES - 1, pair(u, PAIR_KEY, A_REVERSE), "Press any key to return");
}

/* ---- the trace view --------------------------------------------------------- */

static void trace_add(struct ui *u, const char *s)
{
	char **slot = &u->tlines[u->tcount % TRACE_LINES];

	free(*slot);
	*slot = strdup(s);
	u->tcount++;
	if (u->tscroll)
		u->tscroll++;	/* stay on the same lines while scrolled back */
}

static void trace_close(struct ui *u)
{
	size_t i;

	if (u->tfd >= 0)
		close(u->tfd);
	u->tfd = -1;
	for (i = 0; i < TRACE_LINES; i++) {
		free(u->tlines[i]);
		u->tlines[i] = NULL;
	}
	u->tcount = 0;
	u->tscroll = 0;
	free(u->tev);
	u->tev = NULL;
}

static void trace_start(struct ui *u, const struct top_client *c)
{
	struct top_trace_target t = { .client_id = c->id, .pid = c->pid };
	char err[256] = "";
	int fd;

	u->tev = calloc(TRACE_READ, sizeof(*u->tev));
	if (!u->tev) {
		snprintf(u->err, sizeof(u->err), "out of memory");
		return;
	}
	fd = u->src->ops->trace_open(u->src, &t, err, sizeof(err));
	if (fd < 0) {
		snprintf(u->err, sizeof(u->err), "trace: %s", err);
		free(u->tev);
		u->tev = NULL;
		return;
	}
	u->tfd = fd;
	u->tended = false;
	u->tclient = t.client_id;
	u->trecords = 0;
	memset(&u->tst, 0, sizeof(u->tst));
	u->tst.bytes = u->o->bytes;
	snprintf(u->ttitle, sizeof(u->ttitle), "client %llu, pid %d, %s",
		 (unsigned long long)t.client_id, (int)c->pid, c->comm_disp);
	u->view = VIEW_TRACE;
	trace_add(u, "     TIME_US EVENT    OP(ARGS) [STREAM] [deferred] [= RESULT <LATENCY>]  #USER_DATA");
}

static void trace_pump(struct ui *u)
{
	char err[256] = "", line[512];
	int n, i;

	n = u->src->ops->trace_read(u->src, u->tfd, u->tev, TRACE_READ, err, sizeof(err));
	if (n <= 0) {
		snprintf(line, sizeof(line), "--- trace ended: %s (%llu records) ---",
			 n < 0 ? err : "the client exited", u->trecords);
		trace_add(u, line);
		close(u->tfd);
		u->tfd = -1;
		u->tended = true;
		return;
	}
	for (i = 0; i < n; i++) {
		if (u->tev[i].dropped) {
			snprintf(line, sizeof(line), "%12s (%u dropped)", "...",
				 u->tev[i].dropped);
			trace_add(u, line);
		}
		top_trace_line(&u->tst, &u->tev[i], line, sizeof(line));
		trace_add(u, line);
		u->trecords++;
	}
}

static void draw_trace(struct ui *u)
{
	char title[256];
	int room = LINES - 2, k;
	size_t kept = u->tcount < TRACE_LINES ? u->tcount : TRACE_LINES;
	long first;

	snprintf(title, sizeof(title), " Trace of %s  [%s, %llu records]", u->ttitle,
		 u->tended ? "ended" : u->tscroll ? "scrolled back" : "following",
		 u->trecords);
	put_bar(0, pair(u, PAIR_THEAD, A_REVERSE), title);
	if (u->tscroll > (int)kept - room)
		u->tscroll = (int)kept - room > 0 ? (int)kept - room : 0;
	first = (long)u->tcount - u->tscroll - room;
	if (first < (long)(u->tcount - kept))
		first = (long)(u->tcount - kept);
	for (k = 0; k < room; k++) {
		long idx = first + k;
		const char *s;
		attr_t a = A_NORMAL;

		if (idx < 0 || idx >= (long)u->tcount - u->tscroll)
			break;
		s = u->tlines[idx % TRACE_LINES];
		if (!s)
			continue;
		if (strstr(s, " COMPLETE "))
			a = strstr(s, "= CUDA_SUCCESS") ? pair(u, PAIR_OK, A_NORMAL)
							 : pair(u, PAIR_ERR, A_BOLD) | A_BOLD;
		else if (strstr(s, "dropped") || !strncmp(s, "---", 3))
			a = pair(u, PAIR_WARN, A_BOLD) | A_BOLD;
		put(1 + k, 0, a, s, -1);
	}
	put_bar(LINES - 1, pair(u, PAIR_KEY, A_REVERSE),
		"q/Esc back to the table   PgUp/PgDn/arrows scroll   End follow");
}

/* ---- input ------------------------------------------------------------------- */

static void set_sort(struct ui *u, int col)
{
	if (u->o->sort == col)
		u->o->reverse = !u->o->reverse;
	else {
		u->o->sort = col;
		u->o->reverse = false;
	}
}

static void cycle_sort(struct ui *u, int dir)
{
	int cols[C_NCOLS], n, i, at = 0;

	n = top_layout(&u->cur, u->o, -1, cols);
	for (i = 0; i < n; i++)
		if (cols[i] == u->o->sort)
			at = i;
	at = (at + dir + n) % n;
	u->o->sort = cols[at];
	u->o->reverse = false;
}

static void edit_key(struct ui *u, int ch)
{
	char *buf = u->edit == EDIT_FILTER ? u->o->filter : u->o->user;
	size_t cap = u->edit == EDIT_FILTER ? sizeof(u->o->filter) : sizeof(u->o->user);
	size_t l = strlen(buf);

	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		u->edit = EDIT_NONE;
	} else if (ch == 27) {
		buf[0] = 0;
		u->edit = EDIT_NONE;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (l)
			buf[l - 1] = 0;
	} else if (ch >= 0x20 && ch < 0x7f && l + 1 < cap) {
		buf[l] = (char)ch;
		buf[l + 1] = 0;
	}
}

/* Returns false to quit. */
static bool table_key(struct ui *u, int ch, int page)
{
	struct top_client **rows;
	int n;

	switch (ch) {
	case 'q': case 'Q': case KEY_F(10):
		return false;
	case 'h': case '?': case KEY_F(1):
		u->view = VIEW_HELP;
		break;
	case '<': case ',':
		cycle_sort(u, -1);
		break;
	case '>': case '.': case KEY_F(6):
		cycle_sort(u, 1);
		break;
	case 'M': set_sort(u, C_MEM); break;
	case 'P': set_sort(u, C_OPS); break;
	case 'I': set_sort(u, C_ID); break;
	case 'R': case 'r': u->o->reverse = !u->o->reverse; break;
	case '/': u->edit = EDIT_FILTER; break;
	case 'u': u->edit = EDIT_USER; break;
	case 'b': u->o->bytes = !u->o->bytes; break;
	case KEY_UP: case 'k': u->sel--; u->sel_id = 0; break;
	case KEY_DOWN: case 'j': u->sel++; u->sel_id = 0; break;
	case KEY_PPAGE: u->sel -= page; u->sel_id = 0; break;
	case KEY_NPAGE: u->sel += page; u->sel_id = 0; break;
	case KEY_HOME: u->sel = 0; u->sel_id = 0; break;
	case KEY_END: u->sel = 1 << 30; u->sel_id = 0; break;
	case 't': case 'T':
		n = visible_rows(u, &rows);
		if (n && u->sel >= 0 && u->sel < n)
			trace_start(u, rows[u->sel]);
		else
			snprintf(u->err, sizeof(u->err), "no client selected to trace");
		free(rows);
		break;
	default:
		break;
	}
	/* A selection by row: pick up its id at the next draw. */
	if (!u->sel_id && u->have_cur) {
		n = visible_rows(u, &rows);
		if (u->sel >= n)
			u->sel = n - 1;
		if (u->sel < 0)
			u->sel = 0;
		if (n)
			u->sel_id = rows[u->sel]->id;
		free(rows);
	}
	return true;
}

static void trace_key(struct ui *u, int ch)
{
	int page = LINES - 3 > 1 ? LINES - 3 : 1;

	switch (ch) {
	case 'q': case 'Q': case 27: case KEY_F(10): case 't':
		trace_close(u);
		u->view = VIEW_TABLE;
		break;
	case KEY_UP: case 'k': u->tscroll++; break;
	case KEY_DOWN: case 'j': if (u->tscroll) u->tscroll--; break;
	case KEY_PPAGE: u->tscroll += page; break;
	case KEY_NPAGE: u->tscroll = u->tscroll > page ? u->tscroll - page : 0; break;
	case KEY_HOME: u->tscroll = TRACE_LINES; break;
	case KEY_END: u->tscroll = 0; break;
	default: break;
	}
}

/* ---- the loop ----------------------------------------------------------------- */

static void draw(struct ui *u)
{
	int y;

	erase();
	if (u->view == VIEW_HELP) {
		draw_help(u);
	} else if (u->view == VIEW_TRACE) {
		draw_trace(u);
	} else {
		y = draw_header(u);
		draw_status(u, y++);
		draw_table(u, y);
		draw_keys(u);
	}
	refresh();
}

static void init_colors(struct ui *u)
{
	const char *term = getenv("TERM");

	u->color = u->o->color && has_colors() && !(term && !strcmp(term, "dumb"));
	if (!u->color)
		return;
	start_color();
	use_default_colors();
	init_pair(PAIR_LABEL, COLOR_CYAN, -1);
	init_pair(PAIR_BAR, COLOR_GREEN, -1);
	init_pair(PAIR_THEAD, COLOR_BLACK, COLOR_GREEN);
	init_pair(PAIR_SEL, COLOR_BLACK, COLOR_CYAN);
	init_pair(PAIR_ERR, COLOR_RED, -1);
	init_pair(PAIR_KEY, COLOR_BLACK, COLOR_CYAN);
	init_pair(PAIR_WARN, COLOR_YELLOW, -1);
	init_pair(PAIR_OK, COLOR_GREEN, -1);
	init_pair(PAIR_SORT, COLOR_BLACK, COLOR_CYAN);
}

int top_run_ui(struct top_source *src, struct top_opts *o)
{
	struct ui *u = calloc(1, sizeof(*u));
	struct sigaction sa;
	bool running = true;

	if (!u) {
		fprintf(stderr, "axon-top: out of memory\n");
		return 1;
	}
	u->src = src;
	u->o = o;
	u->tfd = -1;
	u->sel_id = o->client_id;

	/* Only the character type follows the locale: numbers stay "C". */
	setlocale(LC_CTYPE, "");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_quit;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	if (!initscr()) {
		fprintf(stderr, "axon-top: cannot initialise the terminal\n");
		free(u);
		return 1;
	}
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	init_colors(u);

	sample(u);
	u->next_sample = now_mono() + o->delay;
	while (running && !quit_signal) {
		struct pollfd pfd[2] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = u->tfd, .events = POLLIN },
		};
		double now = now_mono();
		int ms, ch;

		if (now >= u->next_sample) {
			sample(u);
			u->next_sample = now + o->delay;
			if (o->iterations && u->samples >= o->iterations)
				running = false;
		}
		draw(u);
		if (!running)
			break;
		ms = (int)((u->next_sample - now_mono()) * 1000) + 1;
		if (ms < 0)
			ms = 0;
		if (poll(pfd, u->tfd >= 0 ? 2 : 1, ms) < 0 && errno != EINTR)
			break;
		if (u->tfd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
			trace_pump(u);
		while ((ch = getch()) != ERR) {
			if (ch == KEY_RESIZE)
				continue;	/* the redraw below uses the new size */
			if (u->view == VIEW_HELP) {
				u->view = VIEW_TABLE;
			} else if (u->view == VIEW_TRACE) {
				trace_key(u, ch);
			} else if (u->edit != EDIT_NONE) {
				edit_key(u, ch);
			} else {
				/* A key clears a message, not a sampling error. */
				if (!strstr(u->err, "retrying"))
					u->err[0] = 0;
				if (!table_key(u, ch, LINES / 2 > 1 ? LINES / 2 : 1)) {
					running = false;
					break;
				}
			}
		}
	}
	endwin();
	trace_close(u);
	top_snapshot_free(&u->prev);
	top_snapshot_free(&u->cur);
	free(u);
	return 0;
}
