// SPDX-License-Identifier: MIT
/*
 * Stream-ordered work items: created by op handlers on the dispatcher,
 * executed by the backend, finished by work_done() on the executor thread,
 * which advances the stream's frontier and hands completions and releases
 * back to the dispatcher through the done queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <cuda.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "client.h"
#include "backend.h"
#include "work.h"
#include "dispatch.h"
#include "legacy.h"
#include "ops/ops.h"

/* The op families' hooks (work.h); set before the dispatcher starts. */
static struct {
	work_capture_fn capture;
	work_admit_fn admit;
	work_park_fn park;
	work_fault_fn fault;
} hooks;

void work_register_capture(work_capture_fn capture)
{
	hooks.capture = capture;
}

void work_register_hold(work_admit_fn admit, work_park_fn park)
{
	hooks.admit = admit;
	hooks.park = park;
}

void work_register_fault(work_fault_fn fault)
{
	hooks.fault = fault;
}

void work_device_fault(struct axond *d, const char *why, int32_t error,
		       uint64_t client_id)
{
	if (hooks.fault)
		hooks.fault(d, why, error, client_id);
}

struct work *work_new(struct op_ctx *o, enum work_type type)
{
	struct work *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->type = type;
	w->client = o->c;
	w->stream = (type == WORK_RELEASE || type == WORK_UNMAP) ? NULL : o->stream;
	w->want_cqe = !o->deferred;
	w->user_data = o->sqe ? o->sqe->user_data : 0;
	w->op = o->sqe ? o->sqe->opcode : AXON_OP_LAST;
	w->reports_pending = w->op < AXON_OP_LAST &&
			     (op_table[w->op].flags & OPF_REPORTS_PENDING);
	w->t_start = o->t_start;
	w->counts = w->stream && w->op < AXON_OP_LAST &&
		    (op_table[w->op].flags & OPF_STREAM);
	if (w->stream && w->stream->skipped) {
		w->skip = w->stream->skipped;
		w->stream->skipped = 0;
	}
	return w;
}

/* Hands w to the backend now (hostfunc.c replays parked work through it). */
void work_submit_now(struct axond *d, struct work *w)
{
	client_get(w->client);
	atomic_fetch_add(&w->client->queued, 1);
	d->backend->submit(d, w);
}

/*
 * Whether the capture hook must see w: its stream captures; or, while the
 * client has a capture open, a wait of another stream may fork that
 * stream into it and a record take its event out of it; or w is a host
 * node, which fails outside a capture.
 */
static bool may_capture(const struct client *c, const struct work *w)
{
	return w->stream && ((w->stream->mode & STREAM_CAPTURE) || c->ncapturing ||
			     w->type == WORK_HOST_NODE);
}

/*
 * Whether the hold hooks must see w: its stream is held; or the client has
 * work parked or a stream held (device-wide items and the parked streams'
 * work wait behind them); or w orders streams against each other (event
 * records and waits, host-function gates), which the hold family counts
 * whatever is held.
 */
static bool may_hold(const struct client *c, const struct work *w)
{
	return (w->stream && (w->stream->mode & STREAM_HELD)) || c->nparked || c->nheld ||
	       w->type == WORK_EVENT_RECORD || w->type == WORK_WAIT_EVENT ||
	       (w->type == WORK_MARKER && w->op == AXON_OP_HOST_FUNC);
}

/* Answers w as if its checks had failed with res, in its place: the
 * stream's next item counts it done. */
static enum op_status refuse(struct op_ctx *o, struct work *w, int32_t res)
{
	struct ctx *ctx = w->stream ? w->stream->ctx : NULL;

	if (w->type == WORK_ADVANCE && w->res)
		res = w->res;
	if (w->stream)
		w->stream->skipped += w->skip + (w->counts ? 1 : 0);
	if (w->type == WORK_EVENT_RECORD)
		w->event.event->records--;	/* op_event_record's */
	if (w->type == WORK_LAUNCH)
		free(w->launch.args);
	if (w->want_cqe)
		dispatch_complete(o->d, o->c, ctx, w->user_data, w->op, res, 0, 0,
				  w->t_start);
	else
		client_latch_error(o->c, ctx, (uint32_t)res);
	free(w);
	return OP_QUEUED;
}

/* The legacy barrier's own records and waits (legacy.c): never captured,
 * held back like any other item of their stream, admitted against the
 * client's limits as parking on its behalf (at most two per client item,
 * amortised). */
bool work_submit_order(struct axond *d, struct work *w, const struct work *then)
{
	if (hooks.park && may_hold(w->client, w)) {
		if (then && hooks.admit && !hooks.admit(d, w, then)) {
			w->client->stats.limit_refused++;
			return false;
		}
		if (hooks.park(d, w))
			return true;
	}
	work_submit_now(d, w);
	return true;
}

enum op_status work_submit(struct op_ctx *o, struct work *w)
{
	bool hold = hooks.park && may_hold(o->c, w);

	/* Behind a host function that does not return, a client could park
	 * work without end: past its limits the item is refused, as if its
	 * checks had failed (ops/hostfunc.c), and answered here. */
	if (hold && hooks.admit && !hooks.admit(o->d, w, NULL)) {
		o->c->stats.limit_refused++;
		return refuse(o, w, CUDA_ERROR_OUT_OF_MEMORY);
	}
	/* Then what it must wait for on other streams (only for an item
	 * admitted, so that refused ones park nothing): those items may
	 * park, and then so must w. */
	if (legacy_order(o, w))
		return refuse(o, w, CUDA_ERROR_OUT_OF_MEMORY);
	hold = hooks.park && may_hold(o->c, w);
	/* In submission order: which capture, if any, takes the item. */
	if (hooks.capture && may_capture(o->c, w))
		hooks.capture(o->d, w);
	/* Work behind a host function still running waits in the daemon
	 * (ops/hostfunc.c); it does not count against the queue limit. */
	if (!hold || !hooks.park(o->d, w))
		work_submit_now(o->d, w);
	return OP_QUEUED;
}

static void done_push(struct axond *d, struct done_entry *e)
{
	uint64_t one = 1;

	pthread_mutex_lock(&d->done_lock);
	if (d->done_tail)
		d->done_tail->next = e;
	else
		d->done_head = e;
	d->done_tail = e;
	pthread_mutex_unlock(&d->done_lock);
	/* The dispatcher sets sleeping, then re-checks the queue before it
	 * waits, so a push it misses comes with this wake-up. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&d->sleeping))
		(void)!write(d->worker_fd, &one, sizeof(one));
}

/* Any thread: e runs on the dispatcher (loader.c's jobs come back so). */
void done_post(struct axond *d, struct done_entry *e)
{
	done_push(d, e);
}

void work_done(struct axond *d, struct work *w, int32_t res)
{
	struct client *c = w->client;
	struct done_entry *e = NULL;

	/* A client held back at its queue limit may go on: tell a sleeping
	 * dispatcher (it re-checks the limit before it sleeps). */
	if (atomic_fetch_sub(&c->queued, 1) == AXOND_MAX_QUEUED &&
	    atomic_load(&d->sleeping)) {
		uint64_t one = 1;

		(void)!write(d->worker_fd, &one, sizeof(one));
	}

	/* Latch a deferred failure before the frontier says the op is done:
	 * a synchronising call that sees the frontier must see the error. */
	if (res && !w->want_cqe && w->type != WORK_RELEASE &&
	    !atomic_load(&c->dead_for_worker)) {
		client_latch_error(c, w->stream ? w->stream->ctx : NULL, (uint32_t)res);
		res = 0;
	}
	if ((w->counts || w->skip) && !atomic_load(&c->dead_for_worker)) {
		uint64_t done = w->stream->completed + w->counts + w->skip;

		/* Pairs with the acquire in op_stream_sync (dispatcher). */
		__atomic_store_n(&w->stream->completed, done, __ATOMIC_RELEASE);
		/* Pairs with the client's acquire in axon_frontier(). */
		axon_store_release(&c->frontier[w->stream->slot], done);
	}
	if (w->type == WORK_LAUNCH)
		free(w->launch.args);
	if (w->type == WORK_RELEASE || w->want_cqe) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			/* Cannot happen in practice; the client would hang on
			 * this completion, so take it down instead. */
			log_err("client %llu: out of memory posting a completion",
				(unsigned long long)c->id);
			atomic_store(&c->dead_for_worker, true);
		}
	}
	if (e) {
		e->client = c;	/* our reference moves to the entry */
		e->ctx = w->stream ? w->stream->ctx : NULL;
		e->user_data = w->user_data;
		e->op = w->op;
		e->res = res;
		e->aux0 = w->aux0;
		e->t_start = w->t_start;
		if (w->type == WORK_RELEASE) {
			e->release = w->release.fn;
			e->obj = w->release.obj;
		}
		/* Before the completion, on the dispatcher: done_fn (the
		 * queue keeps the order). Without memory it does not run:
		 * its object waits for the client's teardown. */
		if (w->done_fn) {
			struct done_entry *pre = calloc(1, sizeof(*pre));

			if (pre) {
				client_get(c);
				pre->client = c;
				pre->release = w->done_fn;
				pre->obj = w->done_obj;
				done_push(d, pre);
			}
		}
		free(w);
		done_push(d, e);
		return;
	}
	if (w->done_fn) {
		e = calloc(1, sizeof(*e));
		if (e) {
			e->client = c;	/* our reference moves to the entry */
			e->release = w->done_fn;
			e->obj = w->done_obj;
			free(w);
			done_push(d, e);
			return;
		}
		/* Its object waits for the client's teardown. */
		log_err("client %llu: out of memory after a work item",
			(unsigned long long)c->id);
	}
	free(w);
	client_put(d, c);
}

/* Queues fn(obj) to run after all work queued so far. */
int work_release_later(struct axond *d, struct client *c, release_fn fn, void *obj)
{
	struct op_ctx o = { .d = d, .c = c, .deferred = true };
	struct work *w = work_new(&o, WORK_RELEASE);

	if (!w)
		return -ENOMEM;
	w->release.fn = fn;
	w->release.obj = obj;
	work_submit(&o, w);
	return 0;
}
