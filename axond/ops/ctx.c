// SPDX-License-Identifier: MIT
/* Contexts: create (with their default stream), destroy, synchronise. */
#include <stdlib.h>
#include <cuda.h>
#include "ops.h"

int32_t op_ctx_create_prep(struct op_ctx *o)
{
	if (o->sqe->obj.arg0 >= o->d->info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	if (o->sqe->obj.handle || o->sqe->obj.arg2 || o->sqe->obj.data_len)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

enum op_status op_ctx_create_issue(struct op_ctx *o)
{
	struct client *c = o->c;
	struct ctx *ctx;
	int32_t res;

	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	ctx->device = (int)o->sqe->obj.arg0;
	ctx->flags = (unsigned int)o->sqe->obj.arg1;
	if (handle_alloc(&c->ctxs, AXON_HANDLE_CTX, ctx, &ctx->handle)) {
		free(ctx);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	ctx->default_stream = stream_new(c, ctx, true, &res);
	if (!ctx->default_stream) {
		handle_free(&c->ctxs, ctx->handle, AXON_HANDLE_CTX);
		free(ctx);
		o->res = res;
		return OP_COMPLETE;
	}
	o->aux[0] = ctx->handle;
	o->aux[1] = ctx->default_stream->handle;
	return OP_COMPLETE;
}

static void ctx_release(struct axond *d, struct client *c, void *obj)
{
	struct ctx *ctx = obj;

	(void)d;
	handle_free(&c->ctxs, ctx->handle, AXON_HANDLE_CTX);
	free(ctx);
}

struct destroy_arg {
	struct axond *d;
	struct client *c;
	struct ctx *ctx;
};

static void destroy_stream_of(void *obj, void *arg)
{
	struct destroy_arg *a = arg;
	struct stream *s = obj;

	if (s->ctx == a->ctx && !s->dying)
		stream_destroy_later(a->d, a->c, s);
}

static void destroy_event_of(void *obj, void *arg)
{
	struct destroy_arg *a = arg;
	struct event *e = obj;

	if (e->ctx == a->ctx && !e->dying)
		event_destroy_later(a->d, a->c, e);
}

static void destroy_module_of(void *obj, void *arg)
{
	struct destroy_arg *a = arg;
	struct module *m = obj;

	if (m->ctx == a->ctx && !m->dying)
		module_destroy_later(a->d, a->c, m);
}

/* Destroys everything a context owns, after work already queued. */
void ctx_destroy_all(struct axond *d, struct client *c, struct ctx *ctx)
{
	struct destroy_arg a = { d, c, ctx };

	handle_table_for_each(&c->modules, destroy_module_of, &a);
	handle_table_for_each(&c->events, destroy_event_of, &a);
	handle_table_for_each(&c->streams, destroy_stream_of, &a);
	mem_unmap_ctx(d, c, ctx);
}

/* CTX_DESTROY and CTX_SYNC: the context named. */
struct ctx_req {
	struct ctx *ctx;
};

static int32_t ctx_named_prep(struct op_ctx *o)
{
	struct ctx *ctx = ctx_lookup(o->c, o->sqe->obj.handle);

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	op_req(o, struct ctx_req)->ctx = ctx;
	return CUDA_SUCCESS;
}

int32_t op_ctx_destroy_prep(struct op_ctx *o)
{
	return ctx_named_prep(o);
}

enum op_status op_ctx_destroy_issue(struct op_ctx *o)
{
	struct ctx *ctx = op_req(o, struct ctx_req)->ctx;

	ctx_destroy_all(o->d, o->c, ctx);
	ctx->dying = true;
	/* The handle stays valid until queued work is done, but nothing
	 * new can reach it: its streams are dying. */
	if (work_release_later(o->d, o->c, ctx_release, ctx))
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
	return OP_COMPLETE;
}

int32_t op_ctx_sync_prep(struct op_ctx *o)
{
	return ctx_named_prep(o);
}

enum op_status op_ctx_sync_issue(struct op_ctx *o)
{
	struct work *w;

	o->stream = op_req(o, struct ctx_req)->ctx->default_stream;
	w = work_new(o, WORK_MARKER);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	return work_submit(o, w);
}
