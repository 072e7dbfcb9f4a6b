/* SPDX-License-Identifier: MIT */
/*
 * The cuda backend's CUDA contexts (context.c). Every client's work runs in
 * a "group context": in context mode (the default) one per client and
 * device, its own; in shared mode one per device for every client on it.
 * Contexts come from a per-device pool made before clients arrive (a
 * cuCtxCreate costs ~130 ms) and refilled in the background; a context
 * that is given up is destroyed in the background too, never reused.
 */
#ifndef AXOND_CUDA_CONTEXT_H
#define AXOND_CUDA_CONTEXT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <cuda.h>

struct cu_gctx {
	CUcontext ctx;
	int dev;
	bool shared;		/* shared mode: every client of the device */
	_Atomic int refs;	/* clients using it */
	/* The first context-poisoning CUresult seen in it (0: healthy).
	 * Set by the device's executor; from then on no work of the
	 * context reaches the driver: it completes with this error. */
	_Atomic uint32_t poison;
	/* Executor only: events made in this context to track work. */
	CUevent *evpool;
	unsigned int nev, evcap;
	/* Executor only: graphs that replay runs of launches (collapse.c). */
	struct collapse_cache *collapse;
};

/* Fills each device's pool with n contexts (synchronously: they exist
 * before any client) and starts the keeper thread, which keeps n ready
 * (refill) or, in a worker process, stops at the first taken. */
int ctxpool_init(int ndev, const CUdevice *devs, unsigned int n, bool refill,
		 char *err, size_t errlen);
/* Stops the keeper; destroys what is pooled or waiting to be destroyed. */
void ctxpool_fini(void);
/* A group context for device dev with one reference (refs 1), or NULL.
 * Takes a pooled context, or creates one on the spot (slow, logged) when
 * the pool is empty. Dispatcher thread. */
struct cu_gctx *gctx_new(int dev, bool shared);
/* Drops a reference; the last one gives the context to the keeper to
 * destroy, which also frees everything made in it. Any thread. */
void gctx_put(struct cu_gctx *g);
/* CUresults that poison the context they happen in (common/cuerr.h). */
bool cu_sticky(CUresult r);

struct client;
struct cu_dev;
struct exec_prof;
struct work;

/* Makes ctx current on this thread, unless it is already (cached per
 * thread: every switch of the executors and the dispatcher goes here). */
void cu_set_current(CUcontext ctx);
/* The executor's profile, for the switches it makes (its own thread). */
void cu_thread_profile(struct exec_prof *p);
/* The context a work item runs in (NULL for device-wide items). */
struct cu_gctx *cu_gctx_of(const struct work *w);
/* Executor cd: makes g current (holding a reference), output to c's. */
void cu_exec_enter(struct cu_dev *cd, struct cu_gctx *g, struct client *c);
/* Executor cd: back to the primary context, letting go of the client's. */
void cu_exec_primary(struct cu_dev *cd);
/* The context a new client joins on device dev (a reference). Dispatcher. */
struct cu_gctx *cu_join(int dev);
/* The client's context on device dev, joined at first use. Dispatcher. */
struct cu_gctx *cu_client_gctx(struct client *c, int dev);

/*
 * For driver calls the dispatcher makes for client c on device dev (module
 * loads and lookups, graph instantiation): makes the client's context
 * current, with c as the sink of any printf output the call flushes.
 * Returns 0, or the CUresult to fail with (the context is poisoned, or
 * none could be made); cuda_leave() undoes it either way.
 */
CUresult cuda_enter(struct client *c, int dev);
void cuda_leave(void);

#endif
