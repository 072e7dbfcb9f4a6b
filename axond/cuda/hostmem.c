// SPDX-License-Identifier: MIT
/*
 * The cuda backend's half of shared host regions (axond/ops/hostmem.c):
 * registering the daemon's mapping of a client's memfd with the driver, so
 * that copies from and to it are DMA (pinned bandwidth) and kernels can
 * reach it through its device pointer (zero-copy).
 *
 * cuMemHostRegister costs ~0.6 ms per MiB on the H200, far too long for the
 * dispatcher, so a registrar thread of its own does it (the data areas'
 * registrar in registrar.c serves connects; a large pinned allocation must not
 * queue behind them or hold them up). The client's HOSTMEM_REGISTER
 * completes when the registration has finished, as cuMemHostAlloc returns
 * only once the memory is pinned natively. PORTABLE makes the registration
 * good in every context of the process, whichever context the client's
 * work runs in; DEVICEMAP gives every region a device pointer (under
 * unified addressing CUDA maps all pinned memory, whatever the flags).
 *
 * A region is unregistered once no queued work can use it (on the
 * dispatcher, or wherever a client's last reference drops), with the
 * registrar's context pushed; one still queued is taken off and its
 * registration answered with an error, one in progress is waited for.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "../axond.h"
#include "../backend.h"
#include "../hostregion.h"
#include "vendor.h"
#include "hostmem.h"

struct hreg {
	enum { HR_QUEUED, HR_RUNNING, HR_DONE, HR_FAILED, HR_CANCELLED } state;
	struct hostmem *h;
	struct work *w;		/* completed once registered */
	struct hreg *next;
};

static struct {
	pthread_once_t once;
	bool started;
	pthread_t thread;
	pthread_mutex_t lock;	/* protects everything below */
	pthread_cond_t cond;
	struct hreg *head, *tail;
	bool stop;
	struct axond *d;
	CUcontext ctx;		/* the registrar's, set before any region is done */
} hr = { .once = PTHREAD_ONCE_INIT, .lock = PTHREAD_MUTEX_INITIALIZER,
	 .cond = PTHREAD_COND_INITIALIZER };

static void *registrar(void *arg)
{
	CUcontext ctx = NULL;
	CUdevice dev;
	CUresult r;

	(void)arg;
	/* Any context will do for a PORTABLE registration: device 0's
	 * primary one, which exists from start-up. */
	r = vd.cuDeviceGet(&dev, 0);
	if (!r)
		r = vd.cuDevicePrimaryCtxRetain(&ctx, dev);
	if (!r)
		r = vd.cuCtxSetCurrent(ctx);
	pthread_mutex_lock(&hr.lock);
	hr.ctx = r ? NULL : ctx;
	for (;;) {
		struct hreg *g;
		CUdeviceptr dp = 0;
		CUresult rr = r;

		while (!hr.head && !hr.stop)
			pthread_cond_wait(&hr.cond, &hr.lock);
		g = hr.head;
		if (!g)
			break;
		hr.head = g->next;
		if (!hr.head)
			hr.tail = NULL;
		g->state = HR_RUNNING;
		pthread_mutex_unlock(&hr.lock);
		/* Whole pages (the driver registers no less); READ_ONLY as
		 * the client asked: the device then cannot write it. */
		if (!rr)
			rr = vd.cuMemHostRegister(hostmem_map_start(g->h), g->h->map_len,
						  CU_MEMHOSTREGISTER_PORTABLE |
						  CU_MEMHOSTREGISTER_DEVICEMAP |
						  ((g->h->flags & AXON_HOSTMEM_F_READ_ONLY) ?
						   CU_MEMHOSTREGISTER_READ_ONLY : 0));
		if (!rr) {
			rr = vd.cuMemHostGetDevicePointer(&dp, g->h->map, 0);
			if (rr)
				vd.cuMemHostUnregister(hostmem_map_start(g->h));
		}
		if (rr)
			log_err("cuda: registering a shared host region of %zu bytes: %s",
				g->h->map_len, vendor_err(rr));
		/* Read by the dispatcher and executors (hostmem_client_devptr). */
		__atomic_store_n(&g->h->devptr, (uint64_t)dp, __ATOMIC_RELEASE);
		/* Completes the client's REGISTER; h stays ours until the
		 * state below says so (unregister waits for it). */
		hostmem_register_done(hr.d, g->h, g->w, (int32_t)rr);
		pthread_mutex_lock(&hr.lock);
		g->w = NULL;
		g->state = rr ? HR_FAILED : HR_DONE;
		pthread_cond_broadcast(&hr.cond);
	}
	pthread_mutex_unlock(&hr.lock);
	if (ctx)
		vd.cuDevicePrimaryCtxRelease(dev);
	return NULL;
}

static void start(void)
{
	hr.started = pthread_create(&hr.thread, NULL, registrar, NULL) == 0;
}

void cuda_hostmem_register(struct axond *d, struct hostmem *h, struct work *w)
{
	struct hreg *g = calloc(1, sizeof(*g));

	hr.d = d;
	pthread_once(&hr.once, start);
	if (!g || !hr.started) {
		free(g);
		hostmem_register_done(d, h, w, CUDA_ERROR_OUT_OF_MEMORY);
		return;
	}
	g->h = h;
	g->w = w;
	g->state = HR_QUEUED;
	h->backend_priv = g;
	pthread_mutex_lock(&hr.lock);
	if (hr.tail)
		hr.tail->next = g;
	else
		hr.head = g;
	hr.tail = g;
	pthread_cond_signal(&hr.cond);
	pthread_mutex_unlock(&hr.lock);
}

void cuda_hostmem_unregister(struct axond *d, struct hostmem *h)
{
	struct hreg *g = h->backend_priv, **pp;
	struct work *cancelled = NULL;

	if (!g)
		return;
	pthread_mutex_lock(&hr.lock);
	if (g->state == HR_QUEUED) {
		for (pp = &hr.head; *pp; pp = &(*pp)->next) {
			if (*pp == g) {
				*pp = g->next;
				break;
			}
		}
		hr.tail = NULL;
		for (pp = &hr.head; *pp; pp = &(*pp)->next)
			hr.tail = *pp;
		cancelled = g->w;
		g->state = HR_CANCELLED;
	}
	while (g->state == HR_RUNNING)
		pthread_cond_wait(&hr.cond, &hr.lock);
	pthread_mutex_unlock(&hr.lock);
	/* Freed before it was registered: the client asked for both at once. */
	if (cancelled)
		hostmem_register_done(d, h, cancelled, CUDA_ERROR_INVALID_VALUE);
	if (g->state == HR_DONE) {
		/* In the context it was registered in, whatever this thread
		 * has current (the last reference to a client may drop on an
		 * executor, in the client's own context, maybe poisoned). */
		CUcontext prev;
		bool pushed = hr.ctx && vd.cuCtxPushCurrent(hr.ctx) == CUDA_SUCCESS;
		CUresult r = vd.cuMemHostUnregister(hostmem_map_start(h));

		if (pushed)
			vd.cuCtxPopCurrent(&prev);
		if (r)
			log_err("cuda: unregistering a shared host region: %s", vendor_err(r));
	}
	free(g);
	h->backend_priv = NULL;
}

void cuda_hostmem_fini(void)
{
	if (!hr.started)
		return;
	pthread_mutex_lock(&hr.lock);
	hr.stop = true;
	pthread_cond_broadcast(&hr.cond);
	pthread_mutex_unlock(&hr.lock);
	pthread_join(hr.thread, NULL);
	hr.started = false;
}
