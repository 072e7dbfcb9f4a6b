/* SPDX-License-Identifier: MIT */
/*
 * source.h - where axon-top's numbers come from.
 *
 * A source fills a struct top_snapshot (model.h) per sample and can open a
 * trace of one client. Two exist:
 *
 *   axond  the daemon's stats endpoint (AXON_HELLO_STATS, JSON) and its
 *          trace connection (AXON_HELLO_TRACE).
 *   proc   the kernel module's /proc/axon/{clients,stats,cgroups}
 *          (source-proc.c); traces still go through the daemon's trace
 *          connection (the module has no trace interface).
 *
 * Everything above this interface (rates, tables, the curses UI, JSON
 * output, trace formatting) is source-independent.
 */
#ifndef AXON_TOP_SOURCE_H
#define AXON_TOP_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <axon/protocol.h>

#include "model.h"

struct top_source;

/* What a trace connection is following. */
struct top_trace_target {
	uint64_t client_id;	/* in: 0 to pick by pid; out: the client traced */
	pid_t pid;		/* in: with client_id 0, the newest client of pid */
};

struct top_source_ops {
	const char *name;
	/* One sample into *out (zeroed by the caller). 0 or -errno + err. */
	int (*sample)(struct top_source *src, struct top_snapshot *out,
		      char *err, size_t errlen);
	/*
	 * Starts following one client. Returns a descriptor to poll for
	 * POLLIN and read with ->trace_read, or -errno + err.
	 */
	int (*trace_open)(struct top_source *src, struct top_trace_target *t,
			  char *err, size_t errlen);
	/*
	 * Reads the records that are ready (blocking if none are) into ev.
	 * Returns how many, 0 when the trace ended (the client exited or the
	 * daemon went away), or -errno + err.
	 */
	int (*trace_read)(struct top_source *src, int fd,
			  struct axon_trace_event *ev, size_t max,
			  char *err, size_t errlen);
	void (*destroy)(struct top_source *src);
};

struct top_source {
	const struct top_source_ops *ops;
	char addr[256];		/* axond: "unix:PATH"; "" for the default */
	char proc_dir[256];	/* proc: the /proc/axon directory */
	void *priv;
};

#define TOP_PROC_DIR	"/proc/axon"

/*
 * Opens the source named by kind ("auto", "axond", "proc"); addr is the
 * daemon address for axond and for traces (NULL: $AXON_ADDR, else the
 * default socket); proc_dir the module's directory (NULL: TOP_PROC_DIR).
 * "auto" picks axond when addr or $AXON_ADDR names a daemon, else proc
 * when proc_dir/clients and proc_dir/stats are readable, else axond.
 */
int top_source_open(const char *kind, const char *addr, const char *proc_dir,
		    struct top_source **out, char *err, size_t errlen);
void top_source_close(struct top_source *src);

/* The sources (source-axond.c, source-proc.c). */
extern const struct top_source_ops top_source_axond;
extern const struct top_source_ops top_source_proc;
/* 1: the proc source is built in ("auto" may pick it). */
extern const int top_source_proc_available;

/* Parses a stats document (exposed for the tests). */
int top_parse_stats(const char *json, struct top_snapshot *out, char *err,
		    size_t errlen);
/*
 * Reads dir/{stats,clients,cgroups} into *out (zeroed by the caller; free
 * with top_snapshot_free). Ring positions are the raw 32-bit values; the
 * proc source's sample() unwraps them across samples. 0 or -errno + err
 * (naming the file and line). Exposed for the tests.
 */
int top_proc_read(const char *dir, struct top_snapshot *out, char *err,
		  size_t errlen);
/* Undoes the kernel's \ooo escapes in place; returns s. */
char *top_proc_unescape(char *s);

#endif
