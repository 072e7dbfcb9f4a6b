// SPDX-License-Identifier: MIT
/*
 * ui-draw.c - what axon-top's screen shows: the drawing primitives (every
 * character goes through put(), which clips and keeps to ASCII), the table
 * view (header, device meters, status line, the clients, the key bar) and
 * the help view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ui.h"

/* ---- drawing primitives --------------------------------------------------- */

attr_t pair(struct ui *u, int p, attr_t mono)
{
	return u->color ? (attr_t)COLOR_PAIR(p) : mono;
}

/* Writes s at (y, x), clipped to the screen and to maxw cells. */
void put(int y, int x, attr_t a, const char *s, int maxw)
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
void put_bar(int y, attr_t a, const char *s)
{
	char buf[1024];
	int w = COLS < (int)sizeof(buf) - 1 ? COLS : (int)sizeof(buf) - 1;

	snprintf(buf, sizeof(buf), "%-*.*s", w, w, s);
	put(y, 0, a, buf, -1);
}

/* ---- the table view ------------------------------------------------------- */

/* Visible rows, sorted; returns the count (rows is malloc'd). */
int visible_rows(struct ui *u, struct top_client ***rows)
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

void draw_help(struct ui *u)
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

/* The table view: header, status line, the clients, the key bar. */
void draw_table_view(struct ui *u)
{
	int y;

	y = draw_header(u);
	draw_status(u, y++);
	draw_table(u, y);
	draw_keys(u);
}
