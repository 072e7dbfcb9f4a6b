/* SPDX-License-Identifier: MIT */
/*
 * model.h - axon-top's normalised view of one sample: the daemon, its
 * devices and its clients, whatever source produced them (the daemon's
 * stats endpoint or /proc/axon from the kernel module). Every
 * source fills the same structures; fields a source cannot supply keep
 * their "unknown" value (TOP_UNKNOWN, an empty string, has_* false), and
 * the columns that show them are hidden when no client has them.
 */
#ifndef AXON_TOP_MODEL_H
#define AXON_TOP_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TOP_UNKNOWN	UINT64_MAX
#define TOP_MAX_DEVICES	16
#define TOP_MAX_OPS	64		/* distinct op names kept per client */
#define TOP_COMM_LEN	64
#define TOP_USER_LEN	32

struct top_opcount {
	char name[24];
	uint64_t n;
};

/* Per-second rates between two samples. */
struct top_rates {
	double local, deferred, sync, ops;	/* ops = local + deferred + sync */
	double crossings, errors;
	double bytes_htod, bytes_dtoh;
	double submits, completions;		/* SQEs / CQEs (proc source) */
};

struct top_client {
	uint64_t id;
	pid_t pid;
	uint32_t uid, gid;
	char comm[TOP_COMM_LEN];	/* as the source gave it */
	char comm_disp[TOP_COMM_LEN];	/* printable ASCII only, for tables */
	char user[TOP_USER_LEN];	/* from uid, or the uid in decimal */
	char transport[16];
	double connected_s;

	uint64_t bytes_mapped;
	uint64_t mint_credit;
	uint64_t mem_limit;		/* TOP_UNKNOWN: no limit known */
	int device;			/* -1: unknown */
	char cgroup[128];		/* "": unknown */
	uint64_t allocations;
	uint32_t contexts, streams, events, modules, functions;

	uint64_t ops_local, ops_sync, ops_deferred;
	struct top_opcount by_op[TOP_MAX_OPS];
	unsigned int nby_op;

	uint64_t crossings, errors;
	uint64_t bytes_htod, bytes_dtoh;
	uint32_t sq_depth;
	uint64_t p50_us, p99_us;
	uint32_t tracers;

	/* The kernel module's view (proc source; TOP_CAP_RING). */
	char state[16];			/* "new" ... "gone"; "": unknown */
	uint64_t submits, completions;	/* ring positions, unwrapped to 64 bits */
	uint64_t enters;		/* AXON_IOC_ENTER calls */

	bool has_rates;			/* false on a client's first sample */
	struct top_rates rate;
};

struct top_device {
	unsigned int index;
	char name[128];
	uint64_t total_mem;
	uint64_t mem_used;		/* TOP_UNKNOWN when the source has no split */
	uint64_t busy_ns;		/* TOP_UNKNOWN when the source has none */
	double util;			/* busy fraction over the interval, -1: unknown */
	char isolation[16];		/* "shared", "window", or "" */
};

struct top_daemon {
	pid_t pid;
	char backend[32];
	char abi[16];
	double uptime_s;
	unsigned int clients;
	uint64_t clients_total;
	uint64_t ops_total;
	uint64_t mem_used, mem_reserved;
};

/* Columns whose data only some sources supply. */
enum {
	TOP_CAP_DEVICE	= 1U << 0,
	TOP_CAP_LIMIT	= 1U << 1,
	TOP_CAP_CGROUP	= 1U << 2,
	TOP_CAP_RING	= 1U << 3,	/* state, submits, completions */
	/*
	 * The source has no per-call classes, latencies, errors or copies
	 * (the kernel module alone): the columns showing them are hidden.
	 */
	TOP_CAP_NOCALLS	= 1U << 4,
};

struct top_snapshot {
	char source[16];		/* "axond", "proc" */
	unsigned int caps;		/* TOP_CAP_* */
	double wall_time;		/* CLOCK_REALTIME at the sample */
	double mono_time;		/* CLOCK_MONOTONIC at the sample */
	double interval_s;		/* since the previous sample, 0 if none */
	struct top_daemon daemon;
	struct top_device dev[TOP_MAX_DEVICES];
	unsigned int ndev;
	struct top_client *clients;
	size_t nclients;
	/* Totals of the clients' rates (valid when have_rates). */
	bool have_rates;
	struct top_rates total;
};

void top_snapshot_free(struct top_snapshot *s);
/* Rates of cur against prev (NULL: none); also fills cur->total. */
void top_rates(const struct top_snapshot *prev, struct top_snapshot *cur);
/* Sum of one op's count, 0 if absent. */
uint64_t top_client_op(const struct top_client *c, const char *name);
/* Fills user (getpwuid, cached) and comm_disp. */
void top_client_finish(struct top_client *c);
/* Memory used on device i, TOP_UNKNOWN if unknown. */
uint64_t top_device_used(const struct top_snapshot *s, unsigned int i);

#endif
