// SPDX-License-Identifier: MIT
/*
 * Context-local storage: the store behind the export table c693336e
 * ("CONTEXT_LOCAL_STORAGE_INTERFACE_V0301", exporttable.c). cudart keeps its
 * per-context state here: it asks with get, and on a miss builds the state
 * and puts it, so a miss must be an error (CUDA_ERROR_INVALID_HANDLE), never
 * a made-up value (research note remoting-anchors §13.2 (4), §13.6 (3)).
 *
 * One entry per (context, key); a NULL context means the calling thread's
 * current one. When a context goes away (cuCtxDestroy, cuDevicePrimaryCtx
 * Reset, or the last cuDevicePrimaryCtxRelease) ctx.c calls
 * shim_ctx_storage_drop, which runs each entry's destructor callback, as
 * the driver does, so cudart can free what it hung on the context. An
 * explicit delete does not run it: callers free their value themselves.
 *
 * The callbacks are cudart code that may call back into the driver, so they
 * run with no lock held. The store has its own mutex, never taken together
 * with shim.lock.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "forkreg.h"

typedef void (*cls_dtor)(CUcontext ctx, void *key, void *value);

struct cls_entry {
	uint64_t ctx;
	void *key;
	void *value;
	cls_dtor dtor;
};

static pthread_mutex_t cls_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cls_entry *cls;
static size_t ncls, cls_cap;

static struct cls_entry *find(uint64_t ctx, void *key)
{
	size_t i;

	for (i = 0; i < ncls; i++)
		if (cls[i].ctx == ctx && cls[i].key == key)
			return &cls[i];
	return NULL;
}

/* NULL -> current context; otherwise it must be one of ours. */
static CUresult resolve(CUcontext c, uint64_t *ctx)
{
	struct shim_ctx *sc;

	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	sc = c ? shim_ctx_of(c) : shim_current_ctx();
	if (!sc)
		return CUDA_ERROR_INVALID_CONTEXT;
	*ctx = sc->handle;
	return CUDA_SUCCESS;
}

/* A new entry for key in ctx (cls_lock held); NULL when out of memory. */
static struct cls_entry *add(uint64_t ctx, void *key)
{
	struct cls_entry *e;

	if (ncls == cls_cap) {
		size_t n = cls_cap ? cls_cap * 2 : 16;
		struct cls_entry *ne = realloc(cls, n * sizeof(*ne));

		if (!ne)
			return NULL;
		cls = ne;
		cls_cap = n;
	}
	e = &cls[ncls++];
	e->ctx = ctx;
	e->key = key;
	return e;
}

enum cls_op { CLS_PUT, CLS_DELETE, CLS_GET };

/* One call of the table on key's entry in context c: a put makes the entry
 * if there is none; a delete or get of none is INVALID_HANDLE. */
static CUresult cls_do(enum cls_op op, CUcontext c, void *key, void **value, cls_dtor dtor)
{
	struct cls_entry *e;
	uint64_t ctx;
	CUresult r = resolve(c, &ctx);

	if (r)
		return r;
	pthread_mutex_lock(&cls_lock);
	e = find(ctx, key);
	if (!e && op == CLS_PUT)
		e = add(ctx, key);
	if (e) {
		switch (op) {
		case CLS_PUT:
			e->value = *value;
			e->dtor = dtor;
			break;
		case CLS_DELETE:
			*e = cls[--ncls];
			break;
		case CLS_GET:
			*value = e->value;
			break;
		}
	}
	pthread_mutex_unlock(&cls_lock);
	if (!e && op == CLS_PUT)
		return CUDA_ERROR_OUT_OF_MEMORY;
	SHIM_LOCAL();
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult shim_cls_put(CUcontext c, void *key, void *value, void *dtor)
{
	return cls_do(CLS_PUT, c, key, &value, (cls_dtor)dtor);
}

CUresult shim_cls_delete(CUcontext c, void *key)
{
	return cls_do(CLS_DELETE, c, key, NULL, NULL);
}

CUresult shim_cls_get(void **value, CUcontext c, void *key)
{
	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	return cls_do(CLS_GET, c, key, value, NULL);
}

void shim_ctx_storage_drop(uint64_t ctx)
{
	for (;;) {
		struct cls_entry e = { 0 };
		size_t i;

		/* One at a time: a destructor may put or delete entries. */
		pthread_mutex_lock(&cls_lock);
		for (i = 0; i < ncls; i++) {
			if (cls[i].ctx == ctx) {
				e = cls[i];
				cls[i] = cls[--ncls];
				break;
			}
		}
		pthread_mutex_unlock(&cls_lock);
		if (!e.ctx)
			return;
		if (e.dtor)
			e.dtor((CUcontext)(uintptr_t)ctx, e.key, e.value);
	}
}

/* After fork: the child's contexts are gone and so is their storage. */
static void ctx_storage_forget(void)
{
	pthread_mutex_init(&cls_lock, NULL);
	free(cls);
	cls = NULL;
	ncls = cls_cap = 0;
}

__attribute__((constructor)) static void register_ctx_storage_forget(void)
{
	shim_fork_register(ctx_storage_forget);
}
