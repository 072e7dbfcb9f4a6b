// SPDX-License-Identifier: MIT
/*
 * Events. A record is stream-ordered work; its completion time is stored
 * by the executor. Clients answer cuEventQuery/Synchronize from the
 * frontier without crossing; elapsed time crosses once.
 */
#include <stdlib.h>
#include <cuda.h>
#include "ops.h"

enum op_status op_event_create(struct op_ctx *o)
{
	struct ctx *ctx = ctx_lookup(o->c, o->sqe->obj.handle);
	const uint64_t known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
			       CU_EVENT_INTERPROCESS;
	struct event *e;

	if (!ctx) {
		o->res = CUDA_ERROR_INVALID_CONTEXT;
		return OP_COMPLETE;
	}
	if (o->sqe->obj.arg0 & ~known) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	e->ctx = ctx;
	e->flags = (unsigned int)o->sqe->obj.arg0;
	if (handle_alloc(&o->c->events, AXON_HANDLE_EVENT, e, &e->handle)) {
		free(e);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	o->aux[0] = e->handle;
	return OP_COMPLETE;
}

static void event_release(struct axond *d, struct client *c, void *obj)
{
	struct event *e = obj;

	if (d->backend->event_fini)
		d->backend->event_fini(d, e);
	handle_free(&c->events, e->handle, AXON_HANDLE_EVENT);
	free(e);
}

void event_destroy_later(struct axond *d, struct client *c, struct event *e)
{
	e->dying = true;
	if (work_release_later(d, c, event_release, e))
		log_err("client %llu: out of memory queueing an event release",
			(unsigned long long)c->id);
}

enum op_status op_event_destroy(struct op_ctx *o)
{
	struct event *e = event_lookup(o->c, o->sqe->obj.handle);

	if (!e) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	event_destroy_later(o->d, o->c, e);
	return OP_COMPLETE;
}

enum op_status op_event_record(struct op_ctx *o)
{
	struct event *e = event_lookup(o->c, o->sqe->obj.handle);
	struct work *w;

	if (!e || e->ctx != o->stream->ctx) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	w = work_new(o, WORK_EVENT_RECORD);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	e->records++;
	w->event.event = e;
	return work_submit(o, w);
}

enum op_status op_event_elapsed(struct op_ctx *o)
{
	struct event *a = event_lookup(o->c, o->sqe->obj.handle);
	struct event *b = event_lookup(o->c, o->sqe->obj.arg0);

	if (!a || !b || !a->records || !b->records ||
	    ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING)) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	if (atomic_load(&a->done_records) < a->records ||
	    atomic_load(&b->done_records) < b->records) {
		o->res = CUDA_ERROR_NOT_READY;
		return OP_COMPLETE;
	}
	o->aux[0] = atomic_load(&b->time_ns) - atomic_load(&a->time_ns);
	return OP_COMPLETE;
}
