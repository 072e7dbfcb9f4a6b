/* SPDX-License-Identifier: MIT */
/*
 * ui.h - what the files of axon-top's interactive screen share: its state
 * and the calls between them.
 *
 *   ui.c         the loop: sampling, poll() over the keyboard and the
 *                trace descriptor, the view to draw, colours, curses
 *   ui-input.c   the table view's keys and the filter/user line editor
 *   ui-trace.c   the trace view: its ring of lines, reading, drawing, keys
 *   ui-draw.c    the drawing primitives, the table view and the help view
 *
 * Each calls only the files below it in this list, so they form no cycle.
 *
 * Needs <curses.h> (included here) and top.h.
 */
#ifndef AXON_TOP_UI_H
#define AXON_TOP_UI_H

#include <curses.h>

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

/* ---- ui-input.c ----------------------------------------------------------- */

void edit_key(struct ui *u, int ch);
/* Returns false to quit. */
bool table_key(struct ui *u, int ch, int page);

/* ---- ui-trace.c ----------------------------------------------------------- */

/* Opens the trace of c and switches to the trace view (u->err on failure). */
void trace_start(struct ui *u, const struct top_client *c);
/* Reads what the trace descriptor has; notes its end. */
void trace_pump(struct ui *u);
void trace_close(struct ui *u);
void draw_trace(struct ui *u);
void trace_key(struct ui *u, int ch);

/* ---- ui-draw.c ------------------------------------------------------------ */

/* The colour pair p, or the monochrome attribute without colours. */
attr_t pair(struct ui *u, int p, attr_t mono);
/* Writes s at (y, x), clipped to the screen and to maxw cells (-1: none). */
void put(int y, int x, attr_t a, const char *s, int maxw);
/* A whole line in one attribute, padded to the width. */
void put_bar(int y, attr_t a, const char *s);
/* Visible rows, sorted; returns the count (rows is malloc'd). */
int visible_rows(struct ui *u, struct top_client ***rows);
void draw_table_view(struct ui *u);
void draw_help(struct ui *u);

#endif
