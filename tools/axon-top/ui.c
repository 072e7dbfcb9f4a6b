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
 * KEY_RESIZE. This file is the loop; ui.h says where the rest is.
 */
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ui.h"

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

/* The whole screen for the current view. */
static void draw(struct ui *u)
{
	erase();
	if (u->view == VIEW_HELP)
		draw_help(u);
	else if (u->view == VIEW_TRACE)
		draw_trace(u);
	else
		draw_table_view(u);
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
