// SPDX-License-Identifier: MIT
/*
 * Streams. A stream's handle index is its frontier slot; the slot is
 * reused only after the stream's queued work finished, so a frontier value
 * always belongs to one stream.
 */
#include <stdlib.h>
#include <cuda.h>
#include <axon/libaxon.h>
#include "ops.h"
#include "../legacy.h"

struct stream *stream_new(struct client *c, struct ctx *ctx, bool is_default,
			  int32_t *res)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (!s) {
		*res = CUDA_ERROR_OUT_OF_MEMORY;
		return NULL;
	}
	s->ctx = ctx;
	s->is_default = is_default;
	if (handle_alloc(&c->streams, AXON_HANDLE_STREAM, s, &s->handle)) {
		free(s);
		*res = CUDA_ERROR_OUT_OF_MEMORY;
		return NULL;
	}
	s->slot = AXON_HANDLE_INDEX(s->handle);
	axon_store_release(&c->frontier[s->slot], 0);
	return s;
}

static void stream_release(struct axond *d, struct client *c, void *obj)
{
	struct stream *s = obj;

	if (d->backend->stream_fini)
		d->backend->stream_fini(d, s);
	legacy_stream_fini(d, s);
	handle_free(&c->streams, s->handle, AXON_HANDLE_STREAM);
	free(s);
}

static void stream_release_if_due(struct axond *d, struct client *c, struct stream *s)
{
	if (s->release_due && !s->order_waits)
		stream_release(d, c, s);
}

/* Dispatcher: a destroyed stream's own work is done. */
static void stream_own_work_done(struct axond *d, struct client *c, void *obj)
{
	struct stream *s = obj;

	s->release_due = true;
	stream_release_if_due(d, c, s);
}

void stream_order_wait_done(struct axond *d, struct client *c, void *obj)
{
	struct stream *s = obj;

	s->order_waits--;
	stream_release_if_due(d, c, s);
}

/*
 * A marker on s itself, after its work, that releases it once done: only
 * s's own work (and the legacy stream's waits for it) comes first, as
 * cuStreamDestroy asks. A device-wide release would wait for all of the
 * client's work instead, and while any stream was held by a host function
 * everything queued after it would park behind that function too: the
 * exit of a thread, destroying its per-thread stream, stalled every other
 * thread's stream until an unrelated callback returned. False when out of
 * memory (then it is released the device-wide way).
 */
static bool release_after_own_work(struct axond *d, struct client *c, struct stream *s)
{
	struct op_ctx o = { .d = d, .c = c, .stream = s, .deferred = true };
	struct work *w = work_new(&o, WORK_MARKER);

	if (!w)
		return false;
	w->done_fn = stream_own_work_done;
	w->done_obj = s;
	return work_submit_order(d, w, NULL);	/* never refused without then */
}

void stream_destroy_later(struct axond *d, struct client *c, struct stream *s)
{
	s->dying = true;
	legacy_stream_destroy(d, c, s);
	/* A capture's items are nodes, and a context's own release must
	 * come after its streams': those keep the device-wide way. */
	if (!s->is_default && !(s->mode & STREAM_CAPTURE) && !s->ctx->dying &&
	    release_after_own_work(d, c, s))
		return;
	if (work_release_later(d, c, stream_release, s))
		log_err("client %llu: out of memory queueing a stream release",
			(unsigned long long)c->id);
}

/* The context, stream or event a request names. */
struct stream_req {
	struct ctx *ctx;
	struct stream *stream;
	struct event *event;
};

int32_t op_stream_create_prep(struct op_ctx *o)
{
	struct ctx *ctx = ctx_lookup(o->c, o->sqe->obj.handle);

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (o->sqe->obj.arg0 & ~(uint64_t)CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	op_req(o, struct stream_req)->ctx = ctx;
	return CUDA_SUCCESS;
}

enum op_status op_stream_create_issue(struct op_ctx *o)
{
	struct stream *s;
	int64_t prio;

	s = stream_new(o->c, op_req(o, struct stream_req)->ctx, false, &o->res);
	if (!s)
		return OP_COMPLETE;
	s->nonblocking = o->sqe->obj.arg0 & CU_STREAM_NON_BLOCKING;
	/* Clamped as CUDA does (older shims sent the caller's value). */
	prio = (int64_t)o->sqe->obj.arg1;
	s->priority = prio > 0 ? 0 : prio < AXON_STREAM_PRIORITY_GREATEST ?
		      AXON_STREAM_PRIORITY_GREATEST : (int)prio;
	o->aux[0] = s->handle;
	o->aux[1] = s->slot;
	return OP_COMPLETE;
}

int32_t op_stream_destroy_prep(struct op_ctx *o)
{
	struct stream *s = stream_lookup(o->c, o->sqe->obj.handle);

	if (!s || s->is_default)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct stream_req)->stream = s;
	return CUDA_SUCCESS;
}

enum op_status op_stream_destroy_issue(struct op_ctx *o)
{
	stream_destroy_later(o->d, o->c, op_req(o, struct stream_req)->stream);
	return OP_COMPLETE;
}

/*
 * Completes once every operation submitted to the stream before it is
 * done; for the legacy stream, also the blocking streams' work it has not
 * waited for (legacy.c). Not OPF_STREAM (it takes no place in the sequence), so the stream
 * it names is resolved here, and becomes o->stream only in issue: a
 * refused request keeps no sequence.
 */
int32_t op_stream_sync_prep(struct op_ctx *o)
{
	struct stream *s = stream_lookup(o->c, o->sqe->stream);

	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct stream_req)->stream = s;
	return CUDA_SUCCESS;
}

enum op_status op_stream_sync_issue(struct op_ctx *o)
{
	struct work *w;

	o->stream = op_req(o, struct stream_req)->stream;
	/* An idle stream completes at once, without the executor's round
	 * trip (errors of its work were latched before it was counted). */
	if (__atomic_load_n(&o->stream->completed, __ATOMIC_ACQUIRE) ==
	    o->stream->submitted && !(o->stream->mode & STREAM_HELD) &&
	    !(o->stream->is_default && o->stream->ctx->unjoined))
		return OP_COMPLETE;
	w = work_new(o, WORK_MARKER);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	return work_submit(o, w);
}

int32_t op_stream_wait_event_prep(struct op_ctx *o)
{
	struct event *e = event_lookup(o->c, o->sqe->obj.handle);

	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct stream_req)->event = e;
	return CUDA_SUCCESS;
}

enum op_status op_stream_wait_event_issue(struct op_ctx *o)
{
	struct work *w;

	w = work_new(o, WORK_WAIT_EVENT);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->event.event = op_req(o, struct stream_req)->event;
	return work_submit(o, w);
}
