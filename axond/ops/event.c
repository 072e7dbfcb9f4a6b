// SPDX-License-Identifier: MIT
/*
 * Events. A record is stream-ordered work; its completion time is stored
 * by the executor. Clients answer cuEventQuery/Synchronize from the
 * frontier without crossing; elapsed time crosses once.
 */
#include <stdlib.h>
#include <cuda.h>
#include "ops.h"

/* The event (or context) a request names. */
struct event_req {
	struct ctx *ctx;
	struct event *event;
};

int32_t op_event_create_prep(struct op_ctx *o)
{
	struct ctx *ctx = ctx_lookup(o->c, o->sqe->obj.handle);
	const uint64_t known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING |
			       CU_EVENT_INTERPROCESS;

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (o->sqe->obj.arg0 & ~known)
		return CUDA_ERROR_INVALID_VALUE;
	op_req(o, struct event_req)->ctx = ctx;
	return CUDA_SUCCESS;
}

enum op_status op_event_create_issue(struct op_ctx *o)
{
	struct event *e = calloc(1, sizeof(*e));

	if (!e) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	e->ctx = op_req(o, struct event_req)->ctx;
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

int32_t op_event_destroy_prep(struct op_ctx *o)
{
	struct event *e = event_lookup(o->c, o->sqe->obj.handle);

	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct event_req)->event = e;
	return CUDA_SUCCESS;
}

enum op_status op_event_destroy_issue(struct op_ctx *o)
{
	event_destroy_later(o->d, o->c, op_req(o, struct event_req)->event);
	return OP_COMPLETE;
}

int32_t op_event_record_prep(struct op_ctx *o)
{
	struct event *e = event_lookup(o->c, o->sqe->obj.handle);

	if (!e || e->ctx != o->stream->ctx)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct event_req)->event = e;
	return CUDA_SUCCESS;
}

enum op_status op_event_record_issue(struct op_ctx *o)
{
	struct event *e = op_req(o, struct event_req)->event;
	struct work *w;

	w = work_new(o, WORK_EVENT_RECORD);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	e->records++;
	w->event.event = e;
	return work_submit(o, w);
}

struct elapsed_req {
	struct event *start, *end;
};

int32_t op_event_elapsed_prep(struct op_ctx *o)
{
	struct elapsed_req *r = op_req(o, struct elapsed_req);
	struct event *a = event_lookup(o->c, o->sqe->obj.handle);
	struct event *b = event_lookup(o->c, o->sqe->obj.arg0);

	if (!a || !b || !a->records || !b->records ||
	    ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING))
		return CUDA_ERROR_INVALID_HANDLE;
	if (atomic_load(&a->done_records) < a->records ||
	    atomic_load(&b->done_records) < b->records)
		return CUDA_ERROR_NOT_READY;
	r->start = a;
	r->end = b;
	return CUDA_SUCCESS;
}

enum op_status op_event_elapsed_issue(struct op_ctx *o)
{
	const struct elapsed_req *r = op_req(o, struct elapsed_req);

	o->aux[0] = atomic_load(&r->end->time_ns) - atomic_load(&r->start->time_ns);
	return OP_COMPLETE;
}
