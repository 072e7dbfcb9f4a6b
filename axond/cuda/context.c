// SPDX-License-Identifier: MIT
/*
 * The pool of CUDA contexts (see context.h). A keeper thread per daemon
 * makes contexts until each device has its pool size ready and destroys
 * the contexts given back: clients disconnecting (context mode), a shared
 * context whose last client left. Neither costs the dispatcher or an
 * executor anything but a queue operation. A context made by cuCtxCreate
 * becomes current on the thread that made it; the keeper pops it again,
 * so it only ever has a context current while it makes or destroys one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../axond.h"
#include "../backend.h"
#include "collapse.h"
#include "context.h"
#include "cuerr.h"
#include "devout.h"
#include "state.h"
#include "vendor.h"

#define POOL_MAX	64

static struct {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ndev;
	unsigned int target;		/* contexts kept ready per device */
	bool once;			/* a worker process: no refill */
	CUdevice dev[AXON_MAX_DEVICES];
	CUcontext ready[AXON_MAX_DEVICES][POOL_MAX];
	unsigned int nready[AXON_MAX_DEVICES];
	struct retire { CUcontext ctx; struct retire *next; } *retire;
	bool stop;
} pool = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

bool cu_sticky(CUresult r)
{
	return axon_cu_sticky(r);
}

/*
 * A worker process's context is its client's: the first module a process
 * loads costs the driver ~100 ms (seen on the H200 through a worker, where
 * every client is a process's first: drvbench start.modload 103 ms against
 * 1.5 ms in a process that had loaded one), so the worker loads a trivial
 * one before it says it is ready (which brought it to ~40 ms). Since the
 * driver loads a function's code only when it is first asked for (lazy
 * loading, CUDA 12's default), the worker also gets the function and
 * launches it once, so that its client's first kernel finds the context's
 * code memory and launch path made; not yet measured on a GPU. Best
 * effort: any failure only leaves the cost to the client.
 */
static void warm(void)
{
	static const char ptx[] =
		".version 7.0\n.target sm_50\n.address_size 64\n"
		".visible .entry axond_warm()\n{\n\tret;\n}\n";
	CUfunction f;
	CUmodule m;

	if (vd.cuModuleLoadData(&m, ptx) != CUDA_SUCCESS)
		return;
	if (vd.cuModuleGetFunction(&f, m, "axond_warm") == CUDA_SUCCESS &&
	    vd.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS)
		vd.cuCtxSynchronize();
	vd.cuModuleUnload(m);
}

/* A new context for device i, not current on this thread. */
static CUresult create(int i, CUcontext *out)
{
	CUcontext ctx = NULL, popped;
	CUresult r;

	/* No creation parameters (no execution affinity, no CIG); default
	 * scheduling: axond's executors poll and never wait in the driver. */
	r = vd.cuCtxCreate(&ctx, NULL, 0, pool.dev[i]);
	if (r)
		return r;
	if (pool.once)
		warm();
	vd.cuCtxPopCurrent(&popped);
	*out = ctx;
	return CUDA_SUCCESS;
}

static void destroy(CUcontext ctx)
{
	CUresult r;

	/* Destroying flushes the context's printf buffer: nobody is left
	 * to read it. */
	cu_devout_discard(true);
	r = vd.cuCtxDestroy(ctx);
	cu_devout_discard(false);
	/* A poisoned context may report its error here as well. */
	if (r && !cu_sticky(r))
		log_warn("cuda: destroying a context: %s (%d)", vendor_err(r), (int)r);
}

/* The device most in need of a context, or -1; lock held. */
static int neediest(void)
{
	int i, best = -1;

	for (i = 0; i < pool.ndev; i++)
		if (pool.nready[i] < pool.target &&
		    (best < 0 || pool.nready[i] < pool.nready[best]))
			best = i;
	return best;
}

static void *keeper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pool.lock);
	for (;;) {
		struct retire *t;
		int i;

		while (!pool.stop && !(pool.retire && !pool.once) && neediest() < 0)
			pthread_cond_wait(&pool.cond, &pool.lock);
		/*
		 * Destroying first: it gives memory back for the next one. A
		 * worker process's one client context is left to
		 * ctxpool_fini, when the supervisor has told the worker to end
		 * (worker.c): destroying a context takes the driver's locks
		 * for milliseconds, and the next client starting in another
		 * worker needs them (its first module load).
		 */
		if (!pool.once && (t = pool.retire)) {
			pool.retire = t->next;
			pthread_mutex_unlock(&pool.lock);
			destroy(t->ctx);
			free(t);
			pthread_mutex_lock(&pool.lock);
			continue;
		}
		if (pool.stop)
			break;
		i = neediest();
		pthread_mutex_unlock(&pool.lock);
		{
			CUcontext ctx;
			CUresult r = create(i, &ctx);

			pthread_mutex_lock(&pool.lock);
			if (r) {
				log_err("cuda: device %d: refilling the context pool: %s (%d); "
					"clients will wait for a context to be made",
					i, vendor_err(r), (int)r);
				/* Do not spin on a device that cannot make one:
				 * the next take makes its own. */
				pool.target = pool.nready[i];
				continue;
			}
			if (pool.stop || pool.nready[i] >= POOL_MAX) {
				pthread_mutex_unlock(&pool.lock);
				destroy(ctx);
				pthread_mutex_lock(&pool.lock);
				continue;
			}
			pool.ready[i][pool.nready[i]++] = ctx;
		}
	}
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

int ctxpool_init(int ndev, const CUdevice *devs, unsigned int n, bool refill,
		 char *err, size_t errlen)
{
	int i;
	unsigned int k;

	if (n > POOL_MAX)
		n = POOL_MAX;
	pool.ndev = ndev;
	pool.target = n;
	pool.once = !refill;
	for (i = 0; i < ndev; i++)
		pool.dev[i] = devs[i];
	for (i = 0; i < ndev; i++) {
		for (k = 0; k < n; k++) {
			CUresult r = create(i, &pool.ready[i][k]);

			if (r) {
				snprintf(err, errlen, "device %d: creating context %u of the pool: %s",
					 i, k + 1, vendor_err(r));
				return -EIO;
			}
			pool.nready[i]++;
		}
	}
	if (pthread_create(&pool.thread, NULL, keeper, NULL)) {
		snprintf(err, errlen, "cannot start the context keeper thread");
		return -EAGAIN;
	}
	pool.started = true;
	return 0;
}

void ctxpool_fini(void)
{
	int i;

	pthread_mutex_lock(&pool.lock);
	pool.stop = true;
	pthread_cond_broadcast(&pool.cond);
	pthread_mutex_unlock(&pool.lock);
	if (pool.started)
		pthread_join(pool.thread, NULL);
	pool.started = false;
	while (pool.retire) {
		struct retire *t = pool.retire;

		pool.retire = t->next;
		destroy(t->ctx);
		free(t);
	}
	for (i = 0; i < pool.ndev; i++)
		while (pool.nready[i])
			destroy(pool.ready[i][--pool.nready[i]]);
}

struct cu_gctx *gctx_new(int dev, bool shared)
{
	struct cu_gctx *g;
	CUcontext ctx = NULL;
	CUresult r;

	if (dev < 0 || dev >= pool.ndev)
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	pthread_mutex_lock(&pool.lock);
	if (pool.nready[dev])
		ctx = pool.ready[dev][--pool.nready[dev]];
	if (pool.once)
		pool.target = 0;
	pthread_cond_signal(&pool.cond);	/* refill */
	pthread_mutex_unlock(&pool.lock);
	if (!ctx) {
		uint64_t t0 = axond_now_ns();

		r = create(dev, &ctx);
		if (r) {
			log_err("cuda: device %d: creating a context: %s (%d)", dev,
				vendor_err(r), (int)r);
			free(g);
			return NULL;
		}
		log_warn("cuda: device %d: the context pool was empty; made one in %.0f ms "
			 "(a larger --context-pool avoids the wait)", dev,
			 (double)(axond_now_ns() - t0) / 1e6);
	}
	g->ctx = ctx;
	g->dev = dev;
	g->shared = shared;
	atomic_init(&g->refs, 1);
	return g;
}

void gctx_put(struct cu_gctx *g)
{
	struct retire *t;

	if (!g || atomic_fetch_sub(&g->refs, 1) != 1)
		return;
	/* Its events go with the context; its graphs do not. */
	free(g->evpool);
	collapse_free(g);
	t = malloc(sizeof(*t));
	if (!t) {
		destroy(g->ctx);	/* rare: do it here */
	} else {
		t->ctx = g->ctx;
		pthread_mutex_lock(&pool.lock);
		t->next = pool.retire;
		pool.retire = t;
		pthread_cond_signal(&pool.cond);
		pthread_mutex_unlock(&pool.lock);
	}
	free(g);
}

/* ---- the context current on each thread --------------------------------- */

/*
 * A context switch costs the driver more than the store it looks like, so
 * none when the context is current already. Every switch of the threads
 * that use it (executors, dispatcher) goes through here, or the cache
 * would lie; others (the registrars, the keeper) switch for themselves.
 */
static __thread CUcontext thread_ctx;
/* The executor's profile, on its own thread (NULL elsewhere). */
static __thread struct exec_prof *thread_prof;

void cu_thread_profile(struct exec_prof *p)
{
	thread_prof = p;
}

void cu_set_current(CUcontext ctx)
{
	if (thread_ctx != ctx) {
		uint64_t t0 = prof_start();

		vd.cuCtxSetCurrent(ctx);
		thread_ctx = ctx;
		prof_end(thread_prof, PROF_CTX_SWITCH, t0);
	}
}

/* The context a work item runs in (NULL for device-wide items). */
struct cu_gctx *cu_gctx_of(const struct work *w)
{
	struct cu_client *cc = w->client->backend_priv;

	if (!w->stream || !cc)
		return NULL;
	return cc->g[w->stream->ctx->device];
}

/*
 * Makes g current on executor cd. The executor holds a reference on the
 * context it has current, so the context cannot be destroyed under it (a
 * destroyed current context fails every later call, and one made at the
 * same address would fool cu_set_current's cache) and it need not switch back
 * to the primary context after every batch: with one client, as in a
 * worker process, it never switches at all. It lets go before it sleeps.
 */
void cu_exec_enter(struct cu_dev *cd, struct cu_gctx *g, struct client *c)
{
	if (cd->cur != g) {
		struct cu_gctx *old = cd->cur;

		atomic_fetch_add(&g->refs, 1);
		cu_set_current(g->ctx);
		cd->cur = g;
		gctx_put(old);	/* no longer current here */
	} else {
		/* A module unloaded on this thread may have switched
		 * (cuda_module_unload); a no-op otherwise. */
		cu_set_current(g->ctx);
	}
	cu_devout_sink(c);	/* what a launch flushes is c's */
}

/* Back to the primary context, letting go of the client's (executor). */
void cu_exec_primary(struct cu_dev *cd)
{
	struct cu_gctx *old = cd->cur;

	cu_set_current(cd->ctx);
	cd->cur = NULL;
	gctx_put(old);
}

/* The group context a client joins on device dev: its own (context mode)
 * or the device's shared one, replaced once poisoned. Dispatcher. */
struct cu_gctx *cu_join(int dev)
{
	struct cu_dev *cd = &cu.dev[dev];
	struct cu_gctx *g, *old = NULL;

	if (!cu.shared_mode)
		return gctx_new(dev, false);
	g = cd->shared;
	if (g && atomic_load(&g->poison)) {
		/* Its clients keep it (and its error) until they leave. */
		old = g;
		g = cd->shared = NULL;
		log_warn("cuda: device %d: new clients get a new shared context", dev);
	}
	if (!g)
		g = cd->shared = gctx_new(dev, true);	/* the device's reference */
	if (g)
		atomic_fetch_add(&g->refs, 1);
	gctx_put(old);
	return g;
}

/* The client's context on device dev, joined at first use. Dispatcher. */
struct cu_gctx *cu_client_gctx(struct client *c, int dev)
{
	struct cu_client *cc = c->backend_priv;

	if (!cc || dev < 0 || dev >= cu.ndev)
		return NULL;
	if (!cc->g[dev])
		cc->g[dev] = cu_join(dev);
	return cc->g[dev];
}

CUresult cuda_enter(struct client *c, int dev)
{
	struct cu_gctx *g = cu_client_gctx(c, dev);

	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (atomic_load(&g->poison))
		return (CUresult)atomic_load(&g->poison);
	cu_set_current(g->ctx);
	cu_devout_sink(c);
	return CUDA_SUCCESS;
}

void cuda_leave(void)
{
	cu_devout_collect();
	cu_devout_sink(NULL);
	/* The dispatcher's own calls (VMM, registrations) are per process:
	 * device 0's primary context serves them. */
	cu_set_current(cu.dev[0].ctx);
}
