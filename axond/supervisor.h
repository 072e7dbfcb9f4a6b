/* SPDX-License-Identifier: MIT */
/*
 * The supervisor of process isolation (--isolation=process), shared by
 * its parts: supervisor.c starts, hands clients to and ends the worker
 * processes; supervisor-stats.c answers stats requests from the workers'
 * reports. One thread runs both (the supervisor's loop).
 */
#ifndef AXOND_SUPERVISOR_H
#define AXOND_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "axond.h"
#include "ctl.h"

/* Clients waiting for a ready worker, at most. */
#define MAX_WAITING		256

/* W_ENDING: its client has gone; it ends when told (end_idle).
 * W_RETIRING: told to end (SIGHUP, end_idle), so never given a client. */
enum wstate { W_STARTING, W_READY, W_BUSY, W_ENDING, W_RETIRING, W_GONE };

/*
 * A worker. Its end is seen twice, in either order: its socket hangs up
 * (worker_lost: ctl -1, W_GONE) and its process is reaped (reaped). It is
 * freed only after both, and only between event batches (sweep), since an
 * event of the current batch may still name it.
 */
struct wproc {
	pid_t pid;
	bool reaped;
	int ctl;		/* our end of its socketpair; -1 once gone */
	enum wstate state;
	uint64_t client_id;	/* W_BUSY */
	pid_t client_pid;
	uid_t client_uid;
	uint64_t idle_ns;	/* W_ENDING: since when */
	bool told_end;		/* CTL_END sent (end_idle), counted in nquitting */
	uint64_t end_ns;	/* when */
	/* Its devices' busy time as its last stats report said. */
	uint64_t busy_seen[AXON_MAX_DEVICES];
	struct wproc *next;
};

struct waiting {
	int fd;
	uid_t uid;
	uint64_t since;
};

struct supervisor {
	struct wproc *list;
	unsigned int nstarting, nready, nbusy, nending;
	unsigned int nquitting;		/* told to end by end_idle, not yet gone */
	unsigned int target;		/* ready workers to keep */
	bool target_set;		/* by --context-pool */
	char **argv;
	struct waiting wait[MAX_WAITING];
	unsigned int nwait;
	unsigned int early_deaths;	/* died before ready, in a row */
	uint64_t next_spawn_ns;
	uint64_t last_give_ns;
	uint64_t last_ready_ns;		/* a worker last became ready */
	uint64_t next_client_id;
	uint64_t total_clients;
	uint64_t start_ns;
	/* Busy time of workers gone, as last seen: the merged busy_ns stays
	 * a counter that only grows, as axon-top's deltas want. */
	uint64_t busy_retired[AXON_MAX_DEVICES];
};

extern struct supervisor sv;

/* supervisor.c */
/* Its socket hung up or its process was reaped: no longer counted. */
void supervisor_worker_lost(struct axond *d, struct wproc *w);
/* A message a worker sent unasked (CTL_READY, CTL_IDLE). */
void supervisor_ctl_note(struct axond *d, struct wproc *w, const struct ctl_msg *m);
/* Reads the hello the supervisor only peeked at. */
void supervisor_consume_hello(int fd);

/* supervisor-stats.c: answers a stats connection, its hello peeked. */
void supervisor_send_stats(struct axond *d, int fd, struct axon_welcome *wel);

#endif
