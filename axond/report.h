/* SPDX-License-Identifier: MIT */
/*
 * What a worker process tells its supervisor for the stats document
 * (--isolation=process): one fixed-size, versioned struct, written by the
 * worker into a memfd it passes over the control socket (CTL_STATS_REPORT,
 * ctl.h) and copied out by the supervisor, which renders the document
 * itself (statsdoc.c). Not JSON, so the supervisor parses nothing.
 *
 * Both ends are one axond build, so the layout is not an ABI; the magic,
 * version and size still say what the bytes are meant to be, and
 * report_check() validates every field before the supervisor uses one: a
 * worker serves a hostile client and may be the client's by now.
 */
#ifndef AXOND_REPORT_H
#define AXOND_REPORT_H

#include <stdint.h>

#include "stats.h"

#define WORKER_REPORT_MAGIC	0x41585250u	/* "AXRP" */
#define WORKER_REPORT_VERSION	1
/* A worker serves one client (worker.c). */
#define WORKER_REPORT_MAX_CLIENTS 1

struct worker_report {
	uint32_t magic;		/* WORKER_REPORT_MAGIC */
	uint32_t version;	/* WORKER_REPORT_VERSION */
	uint32_t size;		/* sizeof(struct worker_report) */
	uint32_t ndevices;	/* <= AXON_MAX_DEVICES */
	uint32_t nclients;	/* <= WORKER_REPORT_MAX_CLIENTS */
	uint32_t resv;		/* 0 */
	/* The worker's daemon totals the supervisor adds up. */
	uint64_t ops_total, mem_used, mem_reserved;
	uint64_t tracers, tracers_refused_limit, tracers_refused_access;
	struct stats_device device[AXON_MAX_DEVICES];
	struct stats_client client[WORKER_REPORT_MAX_CLIENTS];
};

/* report.c. The worker's side: its report, of every client it has. */
void report_fill(struct axond *d, struct worker_report *r);
/*
 * The supervisor's: 0 when r (a copy it owns) is well-formed, else -EPROTO
 * with what is wrong in why. Client ids, uids and pids are not checked
 * here: only the supervisor knows which ones the worker was given.
 */
int report_check(const struct worker_report *r, const char **why);

#endif
