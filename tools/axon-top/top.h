/* SPDX-License-Identifier: MIT */
/* top.h - axon-top's internal interfaces (everything above source.h). */
#ifndef AXON_TOP_TOP_H
#define AXON_TOP_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <axon/protocol.h>

#include "model.h"
#include "source.h"

#define TOP_VERSION "0.1"

/* ---- options ------------------------------------------------------------- */

struct top_opts {
	double delay;		/* -d: seconds between samples */
	long iterations;	/* -n: snapshots (batch) or refreshes (UI); 0: forever */
	bool batch;		/* -b */
	bool json;		/* --json */
	bool bytes;		/* --bytes: raw byte counts */
	bool color;		/* not --no-color */
	bool reverse;		/* -r: reverse the sort */
	bool trace;		/* --trace */
	const char *addr;	/* --addr */
	const char *source;	/* --source */
	const char *proc_dir;	/* --proc-dir (NULL: TOP_PROC_DIR) */
	char user[64];		/* -u: user name or uid */
	char filter[64];	/* '/': substring of user or command */
	char cgroup[128];	/* -g: this cgroup and those below it */
	pid_t pid;		/* -p: only that process (and the trace target) */
	uint64_t client_id;	/* --client */
	int sort;		/* enum top_col */
};

/* ---- columns (columns.c) ------------------------------------------------- */

enum top_col {
	C_ID, C_PID, C_USER, C_COMM, C_DEV, C_MEM, C_LIMIT,
	C_OPS, C_LOCAL, C_DEFER, C_SYNC, C_XING, C_P50, C_P99, C_SQ, C_ERR,
	C_H2D, C_D2H, C_ALLOCS, C_TIME, C_SUB, C_CMP, C_STATE, C_CGROUP,
	C_NCOLS
};

struct top_column {
	const char *title;	/* table header */
	const char *key;	/* --sort name */
	int width;		/* cells */
	int width_bytes;	/* with --bytes (0: same) */
	bool left;		/* left-aligned text */
	bool desc;		/* sorts descending by default */
	unsigned int cap;	/* TOP_CAP_* the source must have, 0: always */
	const char *help;	/* what it means (help screen, --help-columns) */
	unsigned int hide;	/* TOP_CAP_* that hide it (TOP_CAP_NOCALLS) */
};

extern const struct top_column top_columns[C_NCOLS];

/* Columns to show, left to right, in cols[]; stops at the first column
 * that does not fit in width (width < 0: no limit). Returns the count. */
int top_layout(const struct top_snapshot *s, const struct top_opts *o, int width,
	       int *cols);
int top_col_width(int col, const struct top_opts *o);
/* One cell's text, unpadded. */
void top_cell(const struct top_client *c, int col, const struct top_opts *o,
	      char *buf, size_t len);
/* A whole row / the header, padded, one space between cells. */
void top_row(const struct top_client *c, const int *cols, int n,
	     const struct top_opts *o, char *buf, size_t len);
void top_header_row(const int *cols, int n, const struct top_opts *o,
		    char *buf, size_t len);
int top_col_by_key(const char *key);	/* -1 if unknown */
/* Sorts s->clients by o->sort (then id). */
void top_sort(struct top_snapshot *s, const struct top_opts *o);
bool top_visible(const struct top_client *c, const struct top_opts *o);

void top_human_bytes(uint64_t v, char *buf, size_t len);
/* v as a byte count under --bytes, else as top_human_bytes; the text
 * unknown where v is TOP_UNKNOWN. */
void top_bytes_text(uint64_t v, const struct top_opts *o, const char *unknown, char *buf,
		    size_t len);
void top_human_count(double v, char *buf, size_t len);
void top_duration(double secs, char *buf, size_t len);

/* ---- output ------------------------------------------------------------- */

/* batch.c */
void top_print_text(FILE *f, const struct top_snapshot *s, const struct top_opts *o);
void top_print_json(FILE *f, const struct top_snapshot *s, const struct top_opts *o);
void top_json_string(FILE *f, const char *s);
int top_run_batch(struct top_source *src, struct top_opts *o);

/* ui.c */
int top_run_ui(struct top_source *src, struct top_opts *o);

/* trace.c */
struct top_trace_fmt {
	uint64_t t0;		/* time of the first record */
	bool started;
	bool bytes;		/* raw sizes */
};
/* One record as one line (no newline). */
void top_trace_line(struct top_trace_fmt *st, const struct axon_trace_event *e,
		    char *buf, size_t len);
const char *top_curesult_name(int res, char *buf, size_t len);
const char *top_handle(uint64_t h, char *buf, size_t len);
int top_run_trace(struct top_source *src, struct top_opts *o);

/* source-axond.c: the trace connection (candidates for libaxon). */
int top_trace_connect(const char *addr, struct top_trace_target *t, char *err,
		      size_t errlen);
int top_trace_recv(int fd, struct axon_trace_event *ev, size_t max, char *err,
		   size_t errlen);

#endif
