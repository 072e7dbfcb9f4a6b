// SPDX-License-Identifier: MIT
/*
 * Host functions (cuLaunchHostFunc, cuStreamAddCallback): the function runs
 * in the client, so the daemon only keeps the order. HOST_FUNC WAIT is a
 * marker that completes (a CQE) once the stream's earlier work is done;
 * from the moment the marker is handed to the backend the stream is held:
 * its later work items are made as usual (arguments copied, checks done)
 * but kept in the client's parked list, in issue order, instead of going to
 * the backend. HOST_FUNC DONE, sent by the client after its function
 * returned, releases the hold and replays the parked list. Nothing blocks:
 * no executor waits for a client, other clients and other streams go on.
 *
 * What else must wait so that order holds as CUDA defines it:
 *  - a STREAM_WAIT_EVENT whose event has a record still parked (the wait
 *    must follow it), and everything after it on its stream;
 *  - device-wide items (no stream: unmaps, releases; and CTX_SYNC markers)
 *    while anything is parked or any stream is held: cuCtxSynchronize
 *    waits for host functions, and a stream (or the memory, the event)
 *    destroyed while a host function holds it is freed after it, as the
 *    driver does; once such an item is parked, everything issued after it
 *    waits too, so an address freed and minted again is never unmapped
 *    under newer work.
 * A marker of STREAM_SYNC on a held stream parks like any other item, so
 * cuStreamSynchronize returns after the host function.
 *
 * Parked items hold no client reference and are not in c->queued (the
 * queue limit must not stop the DONE that would release them); they are
 * plain memory of the client, handed to the backend (which drops a dead
 * client's work) when the client goes away. So they have limits of their
 * own, --max-parked items and --max-parked-bytes: past them an item that
 * would park is refused (hold_admit) with CUDA_ERROR_OUT_OF_MEMORY, as if its
 * checks had failed, and the DONE still gets through. Releases, unmaps and
 * markers are not refused: they are bounded by the objects and the
 * synchronous calls of the client, and refusing a release would leak.
 *
 * HOST_FUNC NODE is a host function issued to a capturing stream: nothing
 * runs or waits, it only cuts the graph being captured where it stands
 * (ops/graph.c); the client runs the function at each launch, between the
 * parts, through WAIT and DONE again.
 */
#include <stdlib.h>
#include <cuda.h>
#include "ops.h"
#include "../work.h"
#include "../stats.h"

static bool is_gate(const struct work *w)
{
	return w->type == WORK_MARKER && w->op == AXON_OP_HOST_FUNC;
}

/* Work that orders against everything of the client, not one stream. */
static bool is_wide(const struct work *w)
{
	return !w->stream || (w->type == WORK_MARKER && w->op == AXON_OP_CTX_SYNC);
}

/* Bookkeeping for an item that goes to the backend now. */
static void note_out(struct client *c, struct work *w)
{
	if (w->type == WORK_EVENT_RECORD)
		w->event.event->records_out++;
	if (is_gate(w)) {
		w->stream->mode |= STREAM_HELD;
		w->stream->hold_token = w->user_data;
		c->nheld++;
	}
}

static bool wait_blocked(const struct work *w)
{
	return w->type == WORK_WAIT_EVENT &&
	       w->event.event->records_out < w->event.target;
}

/* Whether w must wait in the parked list (its wait target set first). */
static bool must_park(struct work *w)
{
	struct client *c = w->client;

	if (w->type == WORK_WAIT_EVENT)
		w->event.target = w->event.event->records;
	if (!c->nparked && !c->nheld && !wait_blocked(w))
		return false;
	if (c->nparked_wide)
		return true;
	if (is_wide(w))
		return c->nparked || c->nheld;
	return (w->stream->mode & STREAM_HELD) || w->stream->parked || wait_blocked(w);
}

/* What a parked item holds of the daemon's memory. */
static uint64_t parked_size(const struct work *w)
{
	return sizeof(*w) + (w->type == WORK_LAUNCH ? w->launch.args_size : 0);
}

/* Whether items more parked items of bytes more stay within the client's
 * limits. What is parked may already be past them (markers are let by,
 * below), so each difference is taken only when it cannot wrap. */
static bool within_limits(const struct axond *d, const struct client *c, uint32_t items,
			  uint64_t bytes)
{
	return c->nparked <= d->cfg.max_parked && items <= d->cfg.max_parked - c->nparked &&
	       c->parked_bytes <= d->cfg.max_parked_bytes &&
	       bytes <= d->cfg.max_parked_bytes - c->parked_bytes;
}

/* The admit hook: false when w (and then after it, if not NULL) would park
 * beyond the client's parked limits (work_submit refuses it). Frees are
 * never refused (bounded by what the client holds), nor markers: each
 * owes a completion, so the CQ bounds them (dispatch.c's cq_owed). */
static bool hold_admit(struct axond *d, struct work *w, const struct work *then)
{
	struct client *c = w->client;
	uint64_t bytes = parked_size(w) + (then ? parked_size(then) : 0);

	if (w->type == WORK_RELEASE || w->type == WORK_UNMAP || w->type == WORK_MARKER)
		return true;
	if (within_limits(d, c, then ? 2 : 1, bytes))
		return true;
	return !must_park(w);
}

/* The park hook: parks w if a host function holds what it must follow
 * (true), else notes it as handed out (false: work_submit submits it). */
static bool hold_park(struct axond *d, struct work *w)
{
	struct client *c = w->client;

	(void)d;
	if (!must_park(w)) {
		note_out(c, w);
		return false;
	}
	w->next = NULL;
	if (c->parked_tail)
		c->parked_tail->next = w;
	else
		c->parked_head = w;
	c->parked_tail = w;
	c->nparked++;
	c->parked_bytes += parked_size(w);
	if (is_wide(w))
		c->nparked_wide++;
	if (w->stream)
		w->stream->parked++;
	return true;
}

static void unpark(struct client *c, struct work *w)
{
	c->nparked--;
	c->parked_bytes -= parked_size(w);
	if (is_wide(w))
		c->nparked_wide--;
	if (w->stream)
		w->stream->parked--;
}

/*
 * One pass over the parked list in order: an item goes to the backend if
 * nothing it must follow is still held or parked (items kept earlier in
 * this pass included).
 */
static void replay(struct axond *d, struct client *c)
{
	struct work *w, *next, *keep_head = NULL, *keep_tail = NULL;
	uint64_t pass = ++c->hold_passes;
	bool kept_any = false, kept_wide = false;

	w = c->parked_head;
	c->parked_head = c->parked_tail = NULL;
	for (; w; w = next) {
		bool keep;

		next = w->next;
		w->next = NULL;
		if (kept_wide)
			keep = true;
		else if (is_wide(w))
			keep = kept_any || c->nheld;
		else
			keep = (w->stream->mode & STREAM_HELD) ||
			       w->stream->hold_pass == pass ||
			       wait_blocked(w);
		if (keep) {
			kept_any = true;
			if (is_wide(w))
				kept_wide = true;
			if (w->stream)
				w->stream->hold_pass = pass;
			if (keep_tail)
				keep_tail->next = w;
			else
				keep_head = w;
			keep_tail = w;
			continue;
		}
		unpark(c, w);
		note_out(c, w);
		work_submit_now(d, w);
	}
	c->parked_head = keep_head;
	c->parked_tail = keep_tail;
}

/* The client is gone: hand every parked item to the backend (which drops
 * a dead client's work). */
static void hold_client_gone(struct axond *d, struct client *c)
{
	struct work *w, *next;

	w = c->parked_head;
	c->parked_head = c->parked_tail = NULL;
	for (; w; w = next) {
		next = w->next;
		unpark(c, w);
		work_submit_now(d, w);
	}
}

static void hold_client_stats(const struct client *c, struct stats_client *out)
{
	out->limits.parked = c->nparked;
	out->limits.parked_bytes = c->parked_bytes;
}

static const struct client_family_ops hold_family = {
	.family = CLIENT_FAMILY_HOSTFUNC,
	.gone = hold_client_gone,
	.stats = hold_client_stats,
};

/* The hold hooks (work.h): work_submit asks before it hands an item on;
 * and the client's end (client.h). */
static void __attribute__((constructor)) hold_register_hooks(void)
{
	work_register_hold(hold_admit, hold_park);
	client_family_register(&hold_family);
}

/* The stream named; it becomes o->stream only in issue (no sequence is
 * kept for a refused request). */
struct host_func_req {
	struct stream *stream;
};

int32_t op_host_func_prep(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	struct stream *s = handle_lookup(&o->c->streams, o->sqe->stream,
					 AXON_HANDLE_STREAM);

	/* A DONE may name a stream destroyed since its WAIT: the stream is
	 * freed only after the hold ends, so it is still there. */
	if (!s || (s->dying && a->arg0 != AXON_HOST_FUNC_DONE))
		return CUDA_ERROR_INVALID_HANDLE;
	/* Only a NODE has a number. */
	if (a->arg1 && a->arg0 != AXON_HOST_FUNC_NODE)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a->arg0) {
	case AXON_HOST_FUNC_NODE:
		/* In a capture, as its node (checked by graph_capture_track,
		 * which refuses it anywhere else). */
		if (a->handle || a->arg1 > UINT32_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case AXON_HOST_FUNC_WAIT:
		/* Its completion is the point of it. */
		if (o->deferred || a->handle)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case AXON_HOST_FUNC_DONE:
		if (!o->deferred)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	op_req(o, struct host_func_req)->stream = s;
	return CUDA_SUCCESS;
}

enum op_status op_host_func_issue(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	struct stream *s = op_req(o, struct host_func_req)->stream;
	struct work *w;

	switch (a->arg0) {
	case AXON_HOST_FUNC_NODE:
		o->stream = s;
		w = work_new(o, WORK_HOST_NODE);
		if (!w) {
			o->stream = NULL;
			o->res = CUDA_ERROR_OUT_OF_MEMORY;
			return OP_COMPLETE;
		}
		w->counts = false;
		w->host_node.index = (uint32_t)a->arg1;
		return work_submit(o, w);
	case AXON_HOST_FUNC_WAIT:
		o->stream = s;
		w = work_new(o, WORK_MARKER);
		if (!w) {
			o->stream = NULL;	/* no sequence to keep */
			o->res = CUDA_ERROR_OUT_OF_MEMORY;
			return OP_COMPLETE;
		}
		w->counts = false;
		return work_submit(o, w);
	default:	/* AXON_HOST_FUNC_DONE, the only other kind prepare lets by */
		/* A DONE for a WAIT that never held (it failed) is harmless. */
		if ((s->mode & STREAM_HELD) && s->hold_token == a->handle) {
			s->mode &= ~STREAM_HELD;
			o->c->nheld--;
			replay(o->d, o->c);
		}
		return OP_COMPLETE;
	}
}
