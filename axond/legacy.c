// SPDX-License-Identifier: MIT
/*
 * The legacy default stream's implicit barrier, kept by the daemon for
 * every backend. CUDA (driver API, "Stream synchronization behavior"):
 * work on the legacy stream first waits for all prior work of every
 * blocking stream of its context, and work later issued to a blocking
 * stream waits for the legacy stream's prior work; CU_STREAM_NON_BLOCKING
 * streams are exempt. The shim sends NULL and CU_STREAM_LEGACY to the
 * context's default stream, which is that legacy stream here; a thread's
 * per-thread default stream (CU_STREAM_PER_THREAD, the _ptsz/_ptds calls'
 * NULL) is a blocking stream of its own (libcuda-shim/ptstream.c).
 *
 * The barrier is made of the daemon's own event records and waits
 * (WORK_EVENT_RECORD, WORK_WAIT_EVENT on struct stream's order_ev), put in
 * front of the client's item: what every backend already orders, and what
 * the host-function holds (ops/hostfunc.c) park correctly, so a blocking
 * stream held behind a host function holds the legacy stream's later work
 * too. They are made only where work crossed over: a context whose program
 * uses only the NULL stream, or only its own streams, meets a branch per
 * item and nothing more. ctx->unjoined lists the blocking streams that took
 * work since the legacy stream last waited for them; a legacy item waits
 * for each and empties the list, and advances the legacy epoch; a blocking
 * stream whose last wait is older than the epoch waits for the legacy
 * stream's order event, recorded once per epoch. So each client item costs
 * at most two ordering items amortised.
 *
 * Capturing streams are left out both ways: their items become graph
 * nodes, and a record or wait of ours must not join a capture.
 */
#include <cuda.h>

#include "axond.h"
#include "backend.h"
#include "legacy.h"
#include "ops/ops.h"

/* Whether w is an action on its stream that the barrier orders: device
 * work, event records and waits, host functions, graph launches, and a
 * synchronisation of the legacy stream (which waits for the blocking
 * streams too, *sync_only). Failed items (WORK_ADVANCE) only keep the
 * frontier's order; device-wide items order against everything anyway. */
static bool orders(const struct work *w, bool *sync_only)
{
	*sync_only = false;
	if (w->op >= AXON_OP_LAST)
		return false;	/* the daemon's own items, ours included */
	switch (w->type) {
	case WORK_HTOD:
	case WORK_DTOH:
	case WORK_DTOD:
	case WORK_MEMSET:
	case WORK_COPY_2D:
	case WORK_LAUNCH:
	case WORK_EVENT_RECORD:
	case WORK_WAIT_EVENT:
	case WORK_GRAPH_LAUNCH:
		return true;
	case WORK_MARKER:
		if (w->op == AXON_OP_HOST_FUNC)
			return true;
		*sync_only = w->op == AXON_OP_STREAM_SYNC;
		return *sync_only;
	default:
		return false;
	}
}

/* Queues a record of from's order event on from, or a wait for it on on,
 * for the client's item then (NULL: for the daemon itself, never refused;
 * work.h). */
static int order_item(struct op_ctx *o, enum work_type type, struct stream *on,
		      struct stream *from, const struct work *then)
{
	struct op_ctx oo = {
		.d = o->d, .c = o->c, .stream = on, .deferred = true,
		.t_start = o->t_start,
	};
	struct work *w = work_new(&oo, type);

	if (!w)
		return CUDA_ERROR_OUT_OF_MEMORY;
	from->order_ev.ctx = from->ctx;
	if (type == WORK_EVENT_RECORD)
		from->order_ev.records++;
	w->event.event = &from->order_ev;
	/* A blocking stream destroyed goes only after the waits of others
	 * for its event (the legacy stream's); the default stream goes
	 * with its context, after everything. */
	if (type == WORK_WAIT_EVENT && !from->is_default) {
		w->done_fn = stream_order_wait_done;
		w->done_obj = from;
		from->order_waits++;
	}
	if (!work_submit_order(o->d, w, then)) {
		/* Past the client's limits: undone as if never made. */
		if (type == WORK_EVENT_RECORD)
			from->order_ev.records--;
		if (w->done_fn)
			from->order_waits--;
		on->skipped += w->skip;
		free(w);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

/* Makes on's later work wait for from's work queued so far (for then). */
static int join(struct op_ctx *o, struct stream *on, struct stream *from,
		const struct work *then)
{
	int r = order_item(o, WORK_EVENT_RECORD, from, from, then);

	return r ? r : order_item(o, WORK_WAIT_EVENT, on, from, then);
}

static void unlist(struct stream **link)
{
	struct stream *s = *link;

	*link = s->next_unjoined;
	s->next_unjoined = NULL;
	s->listed_unjoined = false;
}

/* Puts s back at the head of its context's list. */
static void relist(struct stream *s)
{
	s->listed_unjoined = true;
	s->next_unjoined = s->ctx->unjoined;
	s->ctx->unjoined = s;
}

/* A legacy item w: wait for every blocking stream's work not waited for. */
static int legacy_waits(struct op_ctx *o, struct stream *l, const struct work *w)
{
	struct stream **link = &l->ctx->unjoined;
	int r;

	while (*link) {
		struct stream *b = *link;

		if (b->mode & STREAM_CAPTURE) {
			link = &b->next_unjoined;
			continue;
		}
		r = join(o, l, b, w);
		if (r)
			return r;
		unlist(link);
	}
	return CUDA_SUCCESS;
}

int legacy_order_slow(struct op_ctx *o, struct work *w)
{
	struct stream *s = w->stream, *l = s->ctx->default_stream;
	struct ctx *ctx = s->ctx;
	bool sync_only;
	int r;

	if (!orders(w, &sync_only) || s->nonblocking || !l || l->dying || ctx->dying ||
	    ((s->mode | l->mode) & STREAM_CAPTURE))
		return CUDA_SUCCESS;
	if (s == l) {
		r = legacy_waits(o, l, w);
		if (!r && !sync_only)
			ctx->legacy_epoch++;
		return r;
	}
	/* A synchronisation of a blocking stream waits for its own work. */
	if (sync_only)
		return CUDA_SUCCESS;
	if (s->legacy_seen != ctx->legacy_epoch) {
		if (ctx->legacy_recorded != ctx->legacy_epoch) {
			r = order_item(o, WORK_EVENT_RECORD, l, l, w);
			if (r)
				return r;
			ctx->legacy_recorded = ctx->legacy_epoch;
		}
		r = order_item(o, WORK_WAIT_EVENT, s, l, w);
		if (r)
			return r;
		s->legacy_seen = ctx->legacy_epoch;
	}
	if (!s->listed_unjoined)
		relist(s);
	return CUDA_SUCCESS;
}

/*
 * Takes the listed stream s off its context's list and makes the legacy
 * stream's later work wait for s's work so far, now rather than at the
 * legacy stream's next item. For the daemon's own need (then NULL, never
 * refused: one per stream destroyed or capture begun). False when out of
 * memory; s is then listed again if keep.
 */
static bool join_now(struct axond *d, struct client *c, struct stream *s, bool keep)
{
	struct stream *l = s->ctx->default_stream, **link;
	struct op_ctx o = { .d = d, .c = c };

	for (link = &s->ctx->unjoined; *link != s; link = &(*link)->next_unjoined)
		;
	unlist(link);
	if (!l || l->dying || s->ctx->dying || ((s->mode | l->mode) & STREAM_CAPTURE) ||
	    !join(&o, l, s, NULL))
		return true;
	if (keep)
		relist(s);
	return false;
}

void legacy_stream_destroy(struct axond *d, struct client *c, struct stream *s)
{
	if (s == s->ctx->default_stream) {
		/* Its context is going: nothing waits for it any more. */
		while (s->ctx->unjoined)
			unlist(&s->ctx->unjoined);
		return;
	}
	/* Its work still counts: the legacy stream's later work waits for
	 * it. Queued now, before the stream's release, which frees its
	 * order event after them. */
	if (s->listed_unjoined && !join_now(d, c, s, false))
		log_err("client %llu: out of memory ordering a destroyed stream's work",
			(unsigned long long)c->id);
}

void legacy_capture_begin(struct axond *d, struct client *c, struct stream *s)
{
	/* Out of memory: it stays listed, and legacy_waits passes over it
	 * until the capture ends, as before. */
	if (s->listed_unjoined)
		(void)join_now(d, c, s, true);
}
