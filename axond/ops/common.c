// SPDX-License-Identifier: MIT
/* Lookups and range checks every op family uses. */
#include <cuda.h>
#include "ops.h"

struct ctx *ctx_lookup(struct client *c, uint64_t handle)
{
	struct ctx *ctx = handle_lookup(&c->ctxs, handle, AXON_HANDLE_CTX);

	return ctx && !ctx->dying ? ctx : NULL;
}

struct stream *stream_lookup(struct client *c, uint64_t handle)
{
	struct stream *s = handle_lookup(&c->streams, handle, AXON_HANDLE_STREAM);

	return s && !s->dying ? s : NULL;
}

struct event *event_lookup(struct client *c, uint64_t handle)
{
	struct event *e = handle_lookup(&c->events, handle, AXON_HANDLE_EVENT);

	return e && !e->dying ? e : NULL;
}

struct module *module_lookup(struct client *c, uint64_t handle)
{
	struct module *m = handle_lookup(&c->modules, handle, AXON_HANDLE_MODULE);

	return m && !m->dying ? m : NULL;
}

struct func *func_lookup(struct client *c, uint64_t handle)
{
	struct func *f = handle_lookup(&c->funcs, handle, AXON_HANDLE_FUNC);

	return f && !f->module->dying ? f : NULL;
}

void *data_range(struct client *c, uint64_t off, uint64_t len)
{
	if (off > c->params.data_size || len > c->params.data_size - off)
		return NULL;
	return c->data + off;
}

bool client_range_valid(struct client *c, uint64_t addr, uint64_t len)
{
	bool ok;

	if (!len)
		len = 1;
	if (addr + len < addr)
		return false;
	pthread_mutex_lock(&c->alloc_lock);
	ok = rangemap_find_span(&c->allocs, addr, len) ||
	     vmm_span_valid(&c->allocs, addr, len);
	pthread_mutex_unlock(&c->alloc_lock);
	return ok;
}

bool client_range_valid_exec(struct client *c, uint64_t addr, uint64_t len)
{
	bool ok;

	if (!len)
		len = 1;
	if (addr + len < addr)
		return false;
	pthread_mutex_lock(&c->alloc_lock);
	ok = rangemap_find_span(&c->allocs, addr, len) ||
	     rangemap_find_span(&c->pending_free, addr, len) ||
	     vmm_span_valid(&c->allocs, addr, len);
	pthread_mutex_unlock(&c->alloc_lock);
	return ok;
}

void client_unmap_done(struct client *c, uint64_t addr)
{
	pthread_mutex_lock(&c->alloc_lock);
	rangemap_remove(&c->pending_free, addr, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
}
