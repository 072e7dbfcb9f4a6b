// SPDX-License-Identifier: MIT
/*
 * ui-trace.c - axon-top's trace view: one client's calls as they happen,
 * kept in a ring of TRACE_LINES lines that can be scrolled back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ui.h"

static void trace_add(struct ui *u, const char *s)
{
	char **slot = &u->tlines[u->tcount % TRACE_LINES];

	free(*slot);
	*slot = strdup(s);
	u->tcount++;
	if (u->tscroll)
		u->tscroll++;	/* stay on the same lines while scrolled back */
}

void trace_close(struct ui *u)
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

void trace_start(struct ui *u, const struct top_client *c)
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

void trace_pump(struct ui *u)
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

void draw_trace(struct ui *u)
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

void trace_key(struct ui *u, int ch)
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
