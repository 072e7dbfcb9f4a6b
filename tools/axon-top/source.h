/* SPDX-License-Identifier: MIT */
/*
 * source.h - where axon-top's numbers come from.
 *
 * A source fills a struct top_snapshot (model.h) per sample and can open a
 * trace of one client. Two are planned:
 *
 *   axond  the daemon's stats endpoint (AXON_HELLO_STATS, JSON) and its
 *          trace connection (AXON_HELLO_TRACE); implemented here.
 *   proc   /proc/axon/clients and generic netlink from the kernel module;
 *          not wired yet (the module does not exist): selecting it fails
 *          with a clear message.
 *
 * Everything above this interface (rates, tables, the curses UI, JSON
 * output, trace formatting) is source-independent.
 */
#ifndef AXON_TOP_SOURCE_H
#define AXON_TOP_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/axon.h>

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
	void *priv;
};

/*
 * Opens the source named by kind ("auto", "axond", "proc"); addr is the
 * daemon address for axond (NULL: $AXON_ADDR, else the default socket).
 * "auto" picks proc when the module's /proc/axon/clients exists and the
 * proc source is available, else axond.
 */
int top_source_open(const char *kind, const char *addr, struct top_source **out,
		    char *err, size_t errlen);
void top_source_close(struct top_source *src);

/* The sources (source-axond.c, source-proc.c). */
extern const struct top_source_ops top_source_axond;
extern const struct top_source_ops top_source_proc;
/* The proc source is a placeholder until the kernel module exists. */
extern const int top_source_proc_available;

/* Parses a stats document (exposed for the tests). */
int top_parse_stats(const char *json, struct top_snapshot *out, char *err,
		    size_t errlen);

#endif
