/* SPDX-License-Identifier: MIT */
/*
 * loader: heavy per-client work off the dispatcher (module loads: the copy
 * of the image out of the data area, decompression, parsing, the driver's
 * load). A small pool of loader threads, started as they are needed, runs
 * jobs; one job of a client runs at a time, clients taking turns, so one
 * client's gigabyte image holds up only its own next load. A client has at
 * most --max-module-loads jobs queued or running.
 *
 * A job's life, exactly one owner at each step:
 *   dispatcher   loader_submit(): the job joins its client's list
 *   loader       run(): any thread; touches only the job and what the job
 *                says it may (never daemon tables, minting or stats)
 *   dispatcher   finish(): from the done queue, if the client still lives;
 *                the job leaves the list and finish() frees it
 *   client_free  drop(): for each job still on the list (its client left
 *                before finish()); run() has ended by then, as every job
 *                holds a client reference until the done queue drops it
 * A job queued when its client leaves is not run (cancelled is set).
 */
#ifndef AXOND_LOADER_H
#define AXOND_LOADER_H

#include <stdbool.h>
#include "axond.h"

/* Threads of the pool, at most. */
#define LOADER_MAX_THREADS	4
/* --max-module-loads default. */
#define AXOND_MAX_MODULE_LOADS_DEFAULT	4

struct loader_job {
	/* Set by the submitter. */
	void (*run)(struct axond *d, struct loader_job *j);
	void (*finish)(struct axond *d, struct client *c, struct loader_job *j);
	void (*drop)(struct axond *d, struct client *c, struct loader_job *j);
	/* Set by the loader: run() was not called (the client left). */
	bool cancelled;
	/* Private. */
	struct client *c;
	struct done_entry *done;
	struct loader_job *next;		/* the client's queue */
	struct loader_job *all_next, *all_prev;	/* the client's jobs */
};

/*
 * Queues j for c (dispatcher). 0; -EBUSY: c has --max-module-loads jobs
 * already; -ENOMEM, or -EAGAIN when no loader thread can start. On failure
 * j stays the caller's.
 */
int loader_submit(struct axond *d, struct client *c, struct loader_job *j);
/* Dispatcher: c's jobs submitted and not yet finished. */
unsigned int loader_pending(const struct client *c);
/* Shutdown, before the backend's fini: jobs running end, queued ones are
 * cancelled (their clients are gone), threads are joined. */
void loader_stop(struct axond *d);

#endif
