// SPDX-License-Identifier: MIT
/*
 * A client's handle tables: looking a handle up (tables.h), and walking a
 * table (teardown, per-context destruction).
 */
#include "axond.h"
#include "tables.h"

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

void handle_table_for_each(struct handle_table *t, void (*fn)(void *obj, void *arg),
			   void *arg)
{
	uint32_t pos = 0;
	uint64_t h;
	void *obj;

	/* handle_iter tolerates the visited handle being freed by fn. */
	while (handle_iter(t, 0, &pos, &h, &obj))
		fn(obj, arg);
}
