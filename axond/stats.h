/* SPDX-License-Identifier: MIT */
/*
 * The stats document (Documentation/abi.md, "Stats") as plain values,
 * between where they come from and the one place that writes the JSON:
 *
 *   stats.c         collects them from this daemon's own state;
 *   report.c        carries a worker's to its supervisor (process
 *                   isolation), as a binary report;
 *   supervisor-stats.c  gathers the workers' reports;
 *   statsdoc.c      renders any of them as the document (json-c).
 *
 * Every field is an integer or a NUL-terminated array of chars, so that a
 * struct crosses a process boundary whole and is checked field by field
 * on the other side (report.c).
 */
#ifndef AXOND_STATS_H
#define AXOND_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "axond.h"

struct stats_device {
	char name[256];
	uint64_t total_mem;
	uint64_t busy_ns;
	char isolation[16];	/* "window", "context", "shared" */
};

enum stats_transport {
	STATS_TRANSPORT_UNIX,
	STATS_TRANSPORT_KMOD,
};

struct stats_client {
	uint64_t id;
	int32_t pid;
	uint32_t uid, gid;
	char comm[32];
	int32_t device;		/* of its first live context; -1 before one */
	uint64_t connected_ns;	/* how long it has been connected */
	uint32_t transport;	/* STATS_TRANSPORT_* */
	uint32_t tracers;
	uint64_t kmod_id, cgroup_id;
	int32_t server_pid;	/* the process serving it */
	uint32_t has_mem_limit;	/* a per-client limit is set: mem_limit */
	uint64_t bytes_mapped, mint_credit, allocations;
	/* Of bytes_mapped: its granules (granules.h), and their backing,
	 * which lags the charge until the work queued before a free is done;
	 * its device context; its modules' driver-placed memory. */
	uint64_t granules_charged, granules_backed, ctx_mem, module_mem, local_mem;
	/* Host memory pinned for it (not device memory), and for its user. */
	uint64_t host_pinned, user_host_pinned;
	uint64_t mem_limit;
	uint64_t user_mem_used, user_mem_reserved, user_mem_limit;
	uint64_t va_base;
	struct {
		uint32_t contexts, streams, events, modules, functions;
		uint32_t graphs, graph_execs;
	} handles;
	struct {
		uint32_t parked, mappings, vmm_objects, resv;
		uint64_t parked_bytes, graph_nodes, refused;
	} limits;
	uint64_t ops_local, ops_sync, ops_deferred;
	uint64_t by_op[AXON_OP_LAST];
	uint64_t crossings, errors, bytes_htod, bytes_dtoh;
	uint32_t sq_depth, resv;
	uint64_t lat_hist[LAT_BUCKETS];	/* log2 us buckets of sync ops */
};

/* The daemon section: what both modes show, then a group of each. */
struct stats_daemon {
	int32_t pid;
	char backend[16];
	uint64_t uptime_ns;
	uint32_t clients;
	uint64_t clients_total, ops_total, mem_used, mem_reserved;
	bool supervised;	/* process isolation: the supervisor's group */
	/* One process (!supervised): waiting connections and holdings. */
	uint32_t pending;
	uint64_t pending_refused, clients_refused_user;
	uint32_t mappings, mappings_max, vmm_objects, vmm_objects_max;
	/* The supervisor: its workers. */
	uint32_t workers_ready, workers_starting, workers_target, workers_ending;
	uint32_t clients_waiting;
	/* Tracers, both modes. */
	uint64_t tracers;
	uint32_t max_tracers_per_client, max_tracers_per_user;
	uint64_t tracers_refused_limit, tracers_refused_access;
	/* Client windows (vaslot.c), one process only. */
	bool has_windows;
	uint64_t windows_used, windows_max;
};

/* stats.c: the document as viewer may see it (access.h; NULL: all of
 * it, for a supervisor that filters itself): 0, or -1 without memory. */
struct access_peer;
int stats_render(struct axond *d, const struct access_peer *viewer, char **out, size_t *len);

/* stats.c: this daemon's own values. */
void stats_collect_daemon(struct axond *d, struct stats_daemon *out);
unsigned int stats_collect_devices(struct axond *d, struct stats_device *out);
void stats_collect_client(struct axond *d, struct client *c, struct stats_client *out);

/*
 * statsdoc.c: the document. statsdoc_begin() takes the daemon section
 * and the devices, statsdoc_add_client() each client in order,
 * statsdoc_end() gives the text (malloc'd, '\n'-terminated) in *out and
 * frees the builder: 0, or -ENOMEM (nothing in *out). A builder whose
 * begin failed is NULL, which the other two take.
 */
struct statsdoc;
struct statsdoc *statsdoc_begin(const struct stats_daemon *dm, const struct stats_device *dev,
				unsigned int ndev);
void statsdoc_add_client(struct statsdoc *doc, const struct stats_client *c);
/* One cgroup of the daemon's own limits for socket clients (sockcg.c):
 * limit UINT64_MAX is none. */
void statsdoc_add_cgroup(struct statsdoc *doc, const char *path, uint64_t limit,
			 uint64_t usage, uint64_t peak, uint64_t failcnt);
int statsdoc_end(struct statsdoc *doc, char **out, size_t *len);

#endif
