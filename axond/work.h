/* SPDX-License-Identifier: MIT */
/*
 * The work layer (work.c): stream-ordered work items on their way from an
 * op handler to the backend and back through the done queue.
 *
 * work_submit routes an item by its stream's mode (axond.h): a stream in
 * STREAM_RUN sends it straight to the backend. The op families that divert
 * work register hooks here, so this layer calls none of them by name:
 * graph capture (ops/graph.c) tags the items a capture takes, host
 * functions (ops/hostfunc.c) admit and park the items that must wait
 * behind one. A hook not registered diverts nothing.
 */
#ifndef AXOND_WORK_H
#define AXOND_WORK_H

#include <stdbool.h>
#include <stdint.h>

struct axond;
struct client;
struct ctx;
struct work;

/* Runs on the dispatcher once every earlier queued work item finished. */
typedef void (*release_fn)(struct axond *d, struct client *c, void *obj);

/* The dispatcher's done queue (dispatch_done_queue): a completion to post,
 * or a release to run, in the order the executors finished them. */
struct done_entry {
	struct client *client;
	struct ctx *ctx;	/* of the work's stream, if any */
	release_fn release;	/* NULL: post a completion */
	void *obj;
	uint64_t user_data;
	uint32_t op;
	int32_t res;
	uint64_t aux0;
	uint64_t t_start;
	struct done_entry *next;
};

/* Any thread: hands e to the dispatcher's done queue. */
void done_post(struct axond *d, struct done_entry *e);

/* Dispatcher: tags w with the capture that takes it, if any (w->capture),
 * or fails it where a capture alone gives it meaning. */
typedef void (*work_capture_fn)(struct axond *d, struct work *w);
/* Dispatcher: false refuses w (past the client's limits on parked work);
 * then, if not NULL, is the client's item that will park after w (room is
 * kept for it too). */
typedef bool (*work_admit_fn)(struct axond *d, struct work *w, const struct work *then);
/* Dispatcher: true when it kept w back (it goes to the backend later). */
typedef bool (*work_park_fn)(struct axond *d, struct work *w);
/*
 * Any thread: the driver will serve this process no more (a device fault
 * that poisons the process, not one context). error is the fault, whose
 * work it was is client_id; main.c registers the daemon's answer.
 */
typedef void (*work_fault_fn)(struct axond *d, const char *why, int32_t error,
			      uint64_t client_id);

/* Dispatcher: hands the daemon's own ordering item w (legacy.c) on,
 * through the host-function holds but no capture. It parks on behalf of
 * then, the client's item it is made for, and counts against the same
 * limits: false (w untouched, the caller frees it) when w would park past
 * them with room kept for then. then NULL: the daemon's own need (a
 * destroyed stream's last join, one per stream), never refused. */
bool work_submit_order(struct axond *d, struct work *w, const struct work *then);

/* Called by a backend's executor when a work item has finished with res
 * (any thread). */
void work_done(struct axond *d, struct work *w, int32_t res);

/* Registration, before the dispatcher starts (the op families do it from
 * constructors, so every program linking them gets their hooks). */
void work_register_capture(work_capture_fn capture);
void work_register_hold(work_admit_fn admit, work_park_fn park);
void work_register_fault(work_fault_fn fault);

/* Backends, any thread: report a fault that ends the process's use of the
 * device (above). */
void work_device_fault(struct axond *d, const char *why, int32_t error,
		       uint64_t client_id);

#endif
