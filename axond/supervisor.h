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
	uint64_t kmod_id;	/* W_BUSY with a /dev/axon client: its kernel id */
	pid_t client_pid;
	uid_t client_uid;
	uint64_t idle_ns;	/* W_ENDING: since when */
	bool told_end;		/* CTL_END sent (end_idle), counted in nquitting */
	uint64_t end_ns;	/* when */
	/* Its devices' busy time as its last stats report said. */
	uint64_t busy_seen[AXON_MAX_DEVICES];
	struct wproc *next;
};

/* A client waiting for a worker: a socket connection (fd), or a
 * /dev/axon client (fd -1) as the kernel's record kev names it. */
struct waiting {
	int fd;
	uid_t uid;
	uint64_t since;
	struct axon_event kev;
};

struct supervisor {
	struct wproc *list;
	unsigned int nstarting, nready, nbusy, nending;
	unsigned int nquitting;		/* told to end by end_idle, not yet gone */
	unsigned int target;		/* ready workers to keep */
	bool target_set;		/* by --context-pool */
	/* What one context costs on the device, as the first worker
	 * measured it (CTL_CTX_COST) alone: given to every later worker
	 * (--ctx-mem), which would count each other's contexts if they
	 * measured side by side. Until a worker is ready, one starts at a
	 * time (unless --ctx-mem was given). */
	uint64_t ctx_cost;
	bool first_ready;
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
/* A message a worker sent unasked (CTL_READY, CTL_IDLE), with the
 * descriptor it carried (-1: none; the caller closes it). */
void supervisor_ctl_note(struct axond *d, struct wproc *w, const struct ctl_msg *m, int fd);
/* Reads the hello the supervisor only peeked at. */
void supervisor_consume_hello(int fd);
/* A client to serve (supervisor.c copies *entry): within its user's
 * share, to a ready worker or to the waiting list; else refused. */
void supervisor_hand(struct axond *d, const struct waiting *entry);
/* The /dev/axon client id ended: no longer waits. True if it did. */
bool supervisor_kclient_gone(uint64_t id);
/* Whether the /dev/axon client id already waits or is served. */
bool supervisor_kclient_known(uint64_t id);

/*
 * supervisor-kmod.c: the supervisor as the daemon attached to /dev/axon.
 * It sees each client's OPEN and GONE only: a worker serves the client
 * through the delegate descriptor it is handed.
 */
void supervisor_kmod_events(struct axond *d);
/* Hands the /dev/axon client ev names to w with the id value: 0; -EPIPE
 * when w cannot be reached (take another); another -errno when the client
 * cannot be served (it is refused). */
int supervisor_kmod_give(struct axond *d, struct wproc *w, const struct axon_event *ev,
			 uint64_t value);
void supervisor_kmod_refuse(struct axond *d, uint64_t id, int error);
/* A worker's info page (a memfd, with CTL_READY): the kernel's, once. */
void supervisor_kmod_info(struct axond *d, int fd);

/* supervisor-stats.c: answers a stats connection, its hello peeked. */
void supervisor_send_stats(struct axond *d, int fd, struct axon_welcome *wel);

#endif
