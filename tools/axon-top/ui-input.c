// SPDX-License-Identifier: MIT
/*
 * ui-input.c - the keys of axon-top's table view (sort, filter, select,
 * trace, quit) and the one-line editor of the filter and the user.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

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

void edit_key(struct ui *u, int ch)
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
bool table_key(struct ui *u, int ch, int page)
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

