// SPDX-License-Identifier: MIT
/*
 * The cuda backend: NVIDIA's driver, opened privately (vendor.c).
 *
 * Isolation (--isolation, context.c): in "context" mode (the default) each
 * client's work runs in a CUDA context of its own, taken from a pool made
 * before clients arrive: a kernel can reach only its own context's memory
 * and a device fault poisons only that client. In "shared" mode every
 * client of a device runs in one context (MPS-like, a trusted group); a
 * fault there poisons every client in it and the daemon moves new clients
 * to a fresh context. A poisoned context never sees another driver call for
 * work: the executor completes that work with the context's error. Module
 * loads and lookups run in the client's context; memory (VMM, below) and
 * data-area registrations are per process and so reach every context.
 *
 * Device printf (devout.c): the driver's output is routed to the client
 * whose context flushed it; the executor flushes after each launch of a
 * module that may print.
 *
 * Memory: each client gets a device-address window reserved with
 * cuMemAddressReserve; a minted range is backed by mapping physical pages
 * of the allocation granularity (2 MiB on current GPUs) under it on demand,
 * shared by every allocation that touches the page (refcounted), so small
 * allocations cost one mapping per page, not one driver allocation each.
 *
 * Execution: one executor thread per device, with the context current,
 * turns work items into asynchronous driver calls on per-stream CUDA
 * streams and tracks their completion by polling an event recorded after
 * each (the brief's measured 0.7 us, against 10 us for host callbacks).
 * Device-wide items (unmap, release, context sync) wait for all in-flight
 * work first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sched.h>
#include <sys/prctl.h>
#include <axon/libaxon.h>
#include "../axond.h"
#include "../backend.h"
#include "context.h"
#include "devout.h"
#include "cugraph.h"
#include "vendor.h"
#include "launch.h"
#include "vmm.h"
#include "hostmem.h"
#include "profile.h"
#include "collapse.h"

struct inflight {
	struct work *w;
	/* Earlier work of the same stream issued without an event of its own
	 * (run_one: held), linked by w->next, done when this is. */
	struct work *before;
	CUevent ev;		/* recorded after the work on its stream */
	struct cu_gctx *g;	/* the context the work and ev are in */
	uint64_t t_tracked;	/* AXOND_PROFILE: when its event was recorded */
	struct inflight *next;
};

struct cu_dev {
	int ordinal;
	CUdevice dev;
	CUcontext ctx;
	size_t gran;
	pthread_t thread;
	pthread_mutex_t lock;	/* protects head/tail/stop */
	pthread_cond_t cond;
	struct work *head, *tail;
	bool stop;
	/* executor-private */
	uint64_t last_poll;	/* 0: nothing was in flight at the last look */
	struct inflight *inflight, *spare;
	/* Issued, not yet tracked: waits for the next item of its stream to
	 * carry its completion (run_one). */
	struct work *held, *held_tail;
	struct cu_gctx *held_g;
	CUstream held_cs;
	struct exec_prof prof;	/* AXOND_PROFILE=1 (profile.h) */
	/* The client context current on the executor, referenced (enter);
	 * NULL: the primary one. */
	struct cu_gctx *cur;
	/* shared mode: the context new clients join (dispatcher; replaced
	 * once poisoned) */
	struct cu_gctx *shared;
};

/*
 * What a worker process's client left for the worker's end (cuda_fini)
 * rather than undoing when it went: its VA range and its data area's
 * registration. Freeing a range and unpinning 64 MiB take the driver's
 * locks, and the next client, starting in another worker at that moment,
 * needs them (supervisor.c, end_idle). Its device memory is given back at
 * once.
 */
struct leftover {
	CUdeviceptr base;
	uint64_t size;
	struct dma_reg *reg;
	struct leftover *next;
};

struct cu_client {
	pthread_mutex_t lock;	/* protects the page table */
	CUdeviceptr base;
	uint64_t size;
	size_t gran;
	uint64_t npages;
	uint32_t *refs;		/* per page: allocations touching it */
	CUmemGenericAllocationHandle *phys;
	struct dma_reg *reg;	/* its data area's registration */
	/* Its context per device (taken at first use, on the dispatcher;
	 * read by executors after the queue lock). */
	struct cu_gctx *g[AXON_MAX_DEVICES];
};

/*
 * A data area's registration for DMA, done by the registrar thread
 * (cu.reg_lock): it costs ~0.7 ms per MiB, too long for a client to wait at
 * connect. Copies before it finishes still work: the driver stages
 * unregistered memory itself. Pooled regions are registered before any
 * client has them (cu.prepared), and a client that gets one adopts it.
 */
struct dma_reg {
	enum { REG_QUEUED, REG_RUNNING, REG_DONE, REG_FAILED, REG_CANCELLED } state;
	void *ptr;
	size_t len;
	struct dma_reg *next;		/* the registrar's queue */
	struct dma_reg *next_prepared;	/* cu.prepared */
};

struct cu_module {
	CUmodule mod;
	struct cu_gctx *g;	/* the client's context it is loaded in */
	bool loaded;		/* mod is the driver's */
	bool prints;		/* may printf: flush after its launches */
	uint64_t *globals;	/* registered global addresses */
	unsigned int nglobals, capglobals;
};

static struct {
	struct cu_dev dev[AXON_MAX_DEVICES];
	int ndev;
	struct axond *d;
	/* The registrar: registers client data areas in the background. */
	pthread_t reg_thread;
	pthread_mutex_t reg_lock;
	pthread_cond_t reg_cond;
	struct dma_reg *reg_head, *reg_tail;
	struct dma_reg *prepared;	/* pooled regions, not yet adopted */
	struct leftover *leftover;	/* a worker's, undone at its end */
	bool reg_stop;
	bool shared_mode;		/* --isolation=shared */
	pthread_mutex_t shared_lock;	/* dev[].shared against client_fini */
} cu;

/*
 * A context switch costs the driver more than the store it looks like, so
 * none when the context is current already. Every switch of the threads
 * that use it (executors, dispatcher) goes through here, or the cache
 * would lie; others (the registrars, the keeper) switch for themselves.
 */
static __thread CUcontext thread_ctx;
/* The executor's profile, on its own thread (NULL elsewhere). */
static __thread struct exec_prof *thread_prof;

static void set_current(CUcontext ctx)
{
	if (thread_ctx != ctx) {
		uint64_t t0 = prof_start();

		vd.cuCtxSetCurrent(ctx);
		thread_ctx = ctx;
		prof_end(thread_prof, PROF_CTX_SWITCH, t0);
	}
}

static void log_cu(const char *what, CUresult r)
{
	log_err("cuda: %s failed: %s (%d)", what, vendor_err(r), (int)r);
}

static void *registrar(void *arg)
{
	(void)arg;
	set_current(cu.dev[0].ctx);
	pthread_mutex_lock(&cu.reg_lock);
	for (;;) {
		struct dma_reg *g;
		CUresult r;

		while (!cu.reg_head && !cu.reg_stop)
			pthread_cond_wait(&cu.reg_cond, &cu.reg_lock);
		g = cu.reg_head;
		if (!g)
			break;
		cu.reg_head = g->next;
		if (!cu.reg_head)
			cu.reg_tail = NULL;
		g->state = REG_RUNNING;
		pthread_mutex_unlock(&cu.reg_lock);
		r = vd.cuMemHostRegister(g->ptr, g->len, CU_MEMHOSTREGISTER_PORTABLE);
		if (r)
			log_cu("registering a client's data area (copies stay staged)", r);
		pthread_mutex_lock(&cu.reg_lock);
		g->state = r ? REG_FAILED : REG_DONE;
		pthread_cond_broadcast(&cu.reg_cond);
	}
	pthread_mutex_unlock(&cu.reg_lock);
	return NULL;
}

/* Queues a registration; reg_lock held. */
static void queue_locked(struct dma_reg *g)
{
	g->state = REG_QUEUED;
	g->next = NULL;
	if (cu.reg_tail)
		cu.reg_tail->next = g;
	else
		cu.reg_head = g;
	cu.reg_tail = g;
	pthread_cond_signal(&cu.reg_cond);
}

/* The registration of [ptr, ptr+len): a prepared one, or a new one queued. */
static struct dma_reg *register_later(void *ptr, size_t len)
{
	struct dma_reg **pp, *g;

	pthread_mutex_lock(&cu.reg_lock);
	for (pp = &cu.prepared; *pp; pp = &(*pp)->next_prepared) {
		if ((*pp)->ptr == ptr && (*pp)->len == len) {
			g = *pp;
			*pp = g->next_prepared;
			pthread_mutex_unlock(&cu.reg_lock);
			return g;
		}
	}
	g = calloc(1, sizeof(*g));
	if (g) {
		g->ptr = ptr;
		g->len = len;
		queue_locked(g);
	}
	pthread_mutex_unlock(&cu.reg_lock);
	return g;
}

/* Before the memory goes: take it off the queue, or wait for the
 * registration in progress, and undo a finished one. */
static void unregister(struct dma_reg *g)
{
	struct dma_reg **pp;

	if (!g)
		return;
	pthread_mutex_lock(&cu.reg_lock);
	if (g->state == REG_QUEUED) {
		for (pp = &cu.reg_head; *pp; pp = &(*pp)->next) {
			if (*pp == g) {
				*pp = g->next;
				break;
			}
		}
		cu.reg_tail = NULL;
		for (pp = &cu.reg_head; *pp; pp = &(*pp)->next)
			cu.reg_tail = *pp;
		g->state = REG_CANCELLED;
	}
	while (g->state == REG_RUNNING)
		pthread_cond_wait(&cu.reg_cond, &cu.reg_lock);
	pthread_mutex_unlock(&cu.reg_lock);
	if (g->state == REG_DONE)
		vd.cuMemHostUnregister(g->ptr);
	free(g);
}

/* Until every queued registration is done (a worker, before it is
 * ready: its client's region then is registered when it comes). */
static void cuda_region_pool_wait(struct axond *d)
{
	(void)d;
	struct dma_reg *g;

	pthread_mutex_lock(&cu.reg_lock);
	for (g = cu.prepared; g; g = g->next_prepared)
		while (g->state == REG_QUEUED || g->state == REG_RUNNING)
			pthread_cond_wait(&cu.reg_cond, &cu.reg_lock);
	pthread_mutex_unlock(&cu.reg_lock);
}

/* A pooled region: register its data area before a client has it. */
static void cuda_region_prepare(struct axond *d, void *data, size_t len)
{
	struct dma_reg *g = calloc(1, sizeof(*g));

	(void)d;
	if (!g)
		return;
	g->ptr = data;
	g->len = len;
	pthread_mutex_lock(&cu.reg_lock);
	queue_locked(g);
	g->next_prepared = cu.prepared;
	cu.prepared = g;
	pthread_mutex_unlock(&cu.reg_lock);
}

static void cuda_region_unprepare(struct axond *d, void *data)
{
	struct dma_reg **pp, *g = NULL;

	(void)d;
	pthread_mutex_lock(&cu.reg_lock);
	for (pp = &cu.prepared; *pp; pp = &(*pp)->next_prepared) {
		if ((*pp)->ptr == data) {
			g = *pp;
			*pp = g->next_prepared;
			break;
		}
	}
	pthread_mutex_unlock(&cu.reg_lock);
	unregister(g);
}

/* ---- info page ----------------------------------------------------------- */

static int fill_info(struct axond *d, char *err, size_t errlen)
{
	int n = 0, i, a, drv = 0;
	CUresult r;

	r = vd.cuDeviceGetCount(&n);
	if (r || n <= 0) {
		snprintf(err, errlen, "no CUDA device (%s)", r ? vendor_err(r) : "count 0");
		return -ENODEV;
	}
	if (n > AXON_MAX_DEVICES)
		n = AXON_MAX_DEVICES;
	vd.cuDriverGetVersion(&drv);
	/* Never report more than the cuda.h we serve (cuGetProcAddress). */
	d->info->driver_version = drv > CUDA_VERSION ? CUDA_VERSION : (uint32_t)drv;
	d->info->ndevices = (uint32_t)n;
	strcpy(d->info->backend, "cuda");
	for (i = 0; i < n; i++) {
		struct axon_device_info *di = &d->info->device[i];
		CUmemAllocationProp prop = {
			.type = CU_MEM_ALLOCATION_TYPE_PINNED,
			.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = i },
		};
		CUdevice dev;
		size_t mem = 0, g = 0;

		vd.cuDeviceGet(&dev, i);
		vd.cuDeviceGetName(di->name, sizeof(di->name) - 1, dev);
		vd.cuDeviceTotalMem(&mem, dev);
		di->total_mem = mem;
		vd.cuDeviceGetUuid((CUuuid *)di->uuid, dev);
		for (a = 1; a < CU_DEVICE_ATTRIBUTE_MAX && a < AXON_MAX_ATTRIBUTES; a++) {
			int v = 0;

			if (vd.cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev) == CUDA_SUCCESS)
				di->attr[a] = v;
		}
		/* Memory pools and VMM are served (libcuda-shim/mempool.c,
		 * vmm.c); sharing them between processes is not: say so, so
		 * runtimes do not ask for exportable memory. */
		di->attr[CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED] = 0;
		di->attr[CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES] = 0;
		di->cc_major = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
		di->cc_minor = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
		di->pci_domain = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID];
		di->pci_bus = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID];
		di->pci_device = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID];
		vd.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
		di->vmm_granularity = g;
		vd.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
		di->vmm_granularity_recommended = g;
		cu.dev[i].ordinal = i;
		cu.dev[i].dev = dev;
		cu.dev[i].gran = di->vmm_granularity ? di->vmm_granularity : (2 << 20);
	}
	cu.ndev = n;
	return 0;
}

/* ---- executor ------------------------------------------------------------ */

/* The context a work item runs in (NULL for device-wide items). */
static struct cu_gctx *gctx_of(const struct work *w)
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
 * same address would fool set_current's cache) and it need not switch back
 * to the primary context after every batch: with one client, as in a
 * worker process, it never switches at all. It lets go before it sleeps.
 */
static void enter(struct cu_dev *cd, struct cu_gctx *g, struct client *c)
{
	if (cd->cur != g) {
		struct cu_gctx *old = cd->cur;

		atomic_fetch_add(&g->refs, 1);
		set_current(g->ctx);
		cd->cur = g;
		gctx_put(old);	/* no longer current here */
	} else {
		/* A module unloaded on this thread may have switched
		 * (cuda_module_unload); a no-op otherwise. */
		set_current(g->ctx);
	}
	cu_devout_sink(c);	/* what a launch flushes is c's */
}

/* Back to the primary context, letting go of the client's (executor). */
static void enter_primary(struct cu_dev *cd)
{
	struct cu_gctx *old = cd->cur;

	set_current(cd->ctx);
	cd->cur = NULL;
	gctx_put(old);
}

/* A tracking event of context g (current). */
static CUresult ev_get(struct cu_gctx *g, CUevent *ev)
{
	if (g->nev) {
		*ev = g->evpool[--g->nev];
		return CUDA_SUCCESS;
	}
	return vd.cuEventCreate(ev, CU_EVENT_DISABLE_TIMING);
}

static void ev_put(struct cu_gctx *g, CUevent ev)
{
	if (g->nev == g->evcap) {
		unsigned int cap = g->evcap ? g->evcap * 2 : 64;
		CUevent *p = realloc(g->evpool, cap * sizeof(*p));

		if (!p) {
			vd.cuEventDestroy(ev);
			return;
		}
		g->evpool = p;
		g->evcap = cap;
	}
	g->evpool[g->nev++] = ev;
}

static CUstream stream_of(struct stream *s, CUresult *r)
{
	CUstream cs = s->backend_priv;

	*r = CUDA_SUCCESS;
	if (!cs) {
		*r = vd.cuStreamCreateWithPriority(&cs, CU_STREAM_NON_BLOCKING, s->priority);
		if (*r)
			return NULL;
		s->backend_priv = cs;
	}
	return cs;
}

static CUdeviceptr dev_ptr(uint64_t a)
{
	return (CUdeviceptr)a;
}

/* Enqueues the work asynchronously on its stream. */
static CUresult issue(struct work *w, CUstream cs)
{
	switch (w->type) {
	case WORK_ADVANCE:
		return (CUresult)w->res;
	case WORK_HTOD:
		return vd.cuMemcpyHtoDAsync(dev_ptr(w->copy.dst), w->copy.host,
					    w->copy.len, cs);
	case WORK_DTOH:
		return vd.cuMemcpyDtoHAsync(w->copy.host, dev_ptr(w->copy.src),
					    w->copy.len, cs);
	case WORK_DTOD:
		return vd.cuMemcpyDtoDAsync(dev_ptr(w->copy.dst), dev_ptr(w->copy.src),
					    w->copy.len, cs);
	case WORK_MEMSET: {
		const typeof(w->memset) *m = &w->memset;

		if (m->height <= 1) {
			if (m->elem_size == 1)
				return vd.cuMemsetD8Async(m->dst, (unsigned char)m->value, m->width, cs);
			if (m->elem_size == 2)
				return vd.cuMemsetD16Async(m->dst, (unsigned short)m->value, m->width, cs);
			return vd.cuMemsetD32Async(m->dst, m->value, m->width, cs);
		}
		if (m->elem_size == 1)
			return vd.cuMemsetD2D8Async(m->dst, m->pitch, (unsigned char)m->value,
						    m->width, m->height, cs);
		if (m->elem_size == 2)
			return vd.cuMemsetD2D16Async(m->dst, m->pitch, (unsigned short)m->value,
						     m->width, m->height, cs);
		return vd.cuMemsetD2D32Async(m->dst, m->pitch, m->value, m->width,
					     m->height, cs);
	}
	case WORK_LAUNCH: {
		size_t size = w->launch.args_size;

		if (w->launch.nattrs)	/* cuLaunchKernelEx (launch.c) */
			return cuda_launch_ex(w, cs);
		void *extra[] = {
			CU_LAUNCH_PARAM_BUFFER_POINTER, w->launch.args,
			CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			CU_LAUNCH_PARAM_END,
		};

		return vd.cuLaunchKernel((CUfunction)w->launch.func->backend_priv,
					 w->launch.grid[0], w->launch.grid[1], w->launch.grid[2],
					 w->launch.block[0], w->launch.block[1],
					 w->launch.block[2], w->launch.shared_bytes, cs,
					 NULL, size ? extra : NULL);
	}
	case WORK_EVENT_RECORD: {
		struct event *e = w->event.event;
		CUresult r = CUDA_SUCCESS;

		if (!e->backend_priv) {
			CUevent ev;

			r = vd.cuEventCreate(&ev, CU_EVENT_DEFAULT);
			if (r)
				return r;
			e->backend_priv = ev;
		}
		return vd.cuEventRecord((CUevent)e->backend_priv, cs);
	}
	case WORK_WAIT_EVENT:
		if (!w->event.event->backend_priv)
			return CUDA_SUCCESS;	/* never recorded: nothing to wait for */
		return vd.cuStreamWaitEvent(cs, (CUevent)w->event.event->backend_priv, 0);
	case WORK_MARKER:
		return CUDA_SUCCESS;
	case WORK_UNMAP:
	case WORK_RELEASE:
		return CUDA_SUCCESS;	/* device-wide: handled by the caller */
	case WORK_CAPTURE_BEGIN:
	case WORK_CAPTURE_END:
	case WORK_GRAPH_LAUNCH:
	case WORK_GRAPH_UPDATE:
	case WORK_HOST_NODE:
		return cuda_graph_issue(w, cs);
	}
	return CUDA_ERROR_UNKNOWN;
}

static void unmap_pages(struct client *c, uint64_t addr, uint64_t len);

/*
 * The first context-poisoning error in g: from now on its work completes
 * with it without reaching the driver. Executor.
 */
static void poison(struct cu_gctx *g, struct client *c, CUresult r)
{
	uint32_t none = 0;

	if (!atomic_compare_exchange_strong(&g->poison, &none, (uint32_t)r))
		return;
	log_warn("cuda: device %d: client %llu (%s) hit %s (%d) in its %s context",
		 g->dev, (unsigned long long)c->id, c->comm, vendor_err(r), (int)r,
		 g->shared ? "shared" : "own");
	/* The driver now fails every context of this process, not only g:
	 * start again (the daemon's answer, work.h). */
	work_device_fault(cu.d, "device fault", (int32_t)r, c->id);
}

static void finish(struct cu_dev *cd, struct work *w, int32_t res)
{
	struct cu_gctx *g = gctx_of(w);
	uint64_t t0 = prof_start();

	if (g && cu_sticky((CUresult)res))
		poison(g, w->client, (CUresult)res);
	if (w->type == WORK_EVENT_RECORD && !res) {
		atomic_store(&w->event.event->time_ns, axond_now_ns());
		atomic_fetch_add(&w->event.event->done_records, 1);
	}
	work_done(cu.d, w, res);
	prof_end(&cd->prof, PROF_FINISH, t0);
}

/*
 * A finished launch of a module that may print: flush its context's printf
 * buffer now, into its client's output, before the launch's completion is
 * posted (so whatever synchronisation sees the launch done sees its
 * output). The event is complete: synchronising on it does not wait, it
 * only flushes, as every CUDA synchronisation does.
 */
static bool may_print(const struct work *w)
{
	const struct cu_module *cm;

	if (w->type != WORK_LAUNCH || !w->launch.func || !w->launch.func->module)
		return false;
	cm = w->launch.func->module->backend_priv;
	return cm && cm->prints;
}

static void flush_output(struct inflight *f)
{
	struct work *w = f->w, *b;
	bool prints = may_print(w);

	/* Shared mode: one printf buffer for everyone, left to axond's
	 * stdout; nothing to attribute. */
	if (cu.shared_mode || atomic_load(&w->client->dead_for_worker) ||
	    atomic_load(&f->g->poison))
		return;
	/* One flush covers every launch the event completes: those held
	 * before it too (the same stream, context and client). */
	for (b = f->before; b && !prints; b = b->next)
		prints = may_print(b);
	if (!prints)
		return;
	enter(&cu.dev[f->g->dev], f->g, w->client);
	vd.cuEventSynchronize(f->ev);
	/* (fd 1 is read at context synchronisations and module loads,
	 * not here: no system call per launch) */
	cu_devout_sink(NULL);
}

/* Polls in-flight work; returns how many completed. */
static int poll_inflight(struct cu_dev *cd)
{
	struct inflight **pp = &cd->inflight, *f;
	const struct stream *busy[16];
	unsigned int nbusy = 0, i;
	int n = 0;

	while ((f = *pp)) {
		uint64_t t0;
		CUresult r;

		/* Work completes in its stream's order: one item still
		 * running holds the later ones of its stream back (their
		 * events may turn complete between two queries). */
		for (i = 0; i < nbusy && busy[i] != f->w->stream; i++)
			;
		if (i < nbusy) {
			pp = &f->next;
			continue;
		}
		/* The driver may report a fault here, and print what goes
		 * with it (a failed assert's message): that is this client's. */
		cu_devout_sink(f->w->client);
		t0 = prof_start();
		r = vd.cuEventQuery(f->ev);
		prof_end(&cd->prof, PROF_EV_QUERY, t0);
		cu_devout_sink(NULL);
		if (r == CUDA_ERROR_NOT_READY) {
			cd->prof.ev_not_ready += axond_profiling;
			if (nbusy == sizeof(busy) / sizeof(busy[0]))
				break;
			busy[nbusy++] = f->w->stream;
			pp = &f->next;
			continue;
		}
		*pp = f->next;
		if (axond_profiling && f->t_tracked &&
		    (f->w->type == WORK_HTOD || f->w->type == WORK_DTOH)) {
			/* A copy's time from its issue to the poll that saw it
			 * done: the DMA as the executor sees it. */
			cd->prof.copies++;
			cd->prof.copy_bytes += f->w->copy.len;
			cd->prof.copy_ns += axond_now_ns() - f->t_tracked;
		}
		flush_output(f);
		ev_put(f->g, f->ev);
		while (f->before) {
			struct work *b = f->before;

			f->before = b->next;
			b->next = NULL;
			finish(cd, b, r);
		}
		finish(cd, f->w, r);
		f->next = cd->spare;
		cd->spare = f;
		n++;
	}
	return n;
}

static bool device_wide(const struct work *w)
{
	return w->type == WORK_UNMAP || w->type == WORK_RELEASE ||
	       (w->type == WORK_MARKER && w->op == AXON_OP_CTX_SYNC);
}

/* Whether work of stream s is still tracked as in flight. */
static bool stream_in_flight(struct cu_dev *cd, const struct stream *s)
{
	const struct inflight *f;

	for (f = cd->inflight; f; f = f->next)
		if (f->w->stream == s)
			return true;
	return false;
}

/*
 * An item whose completion may be learnt from a later one of its stream:
 * plain asynchronous work, no event record (its time is taken when it
 * completes). A launch that may print is one too: the flush when the
 * later one completes (flush_output) takes its output as well, before
 * either is reported done. (Once, a module whose image names vprintf, and
 * every fatbin, cost an event, a poll and a flush per launch: on the H200
 * that was ~4 us of the executor's ~10 us per launch.)
 */
static bool coalescible(const struct work *w)
{
	if (w->capture || !w->stream)
		return false;
	switch (w->type) {
	case WORK_HTOD:
	case WORK_DTOH:
	case WORK_DTOD:
	case WORK_MEMSET:
		return true;
	case WORK_LAUNCH:
		return w->launch.func && w->launch.func->module &&
		       w->launch.func->module->backend_priv;
	default:
		return false;
	}
}

/* Appends f to the in-flight list, keeping submission order. */
static void track(struct cu_dev *cd, struct inflight *f)
{
	struct inflight **pp = &cd->inflight;

	f->t_tracked = prof_start();
	f->next = NULL;
	while (*pp)
		pp = &(*pp)->next;
	*pp = f;
}

/* One event for the held items, after the last of them; without one they
 * are waited for the slow way. */
static void flush_held(struct cu_dev *cd)
{
	struct work *last = cd->held_tail, *b;
	struct inflight *f;
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;

	if (!cd->held)
		return;
	/* In the items' context: an event is made in the current one. */
	enter(cd, cd->held_g, last->client);
	f = cd->spare;
	if (f)
		cd->spare = f->next;
	else
		f = malloc(sizeof(*f));
	if (f) {
		f->g = cd->held_g;
		r = ev_get(f->g, &f->ev);
		if (!r) {
			uint64_t t0 = prof_start();

			r = vd.cuEventRecord(f->ev, cd->held_cs);
			prof_end(&cd->prof, PROF_EV_RECORD, t0);
			if (r)
				ev_put(f->g, f->ev);
		}
	}
	cu_devout_sink(NULL);
	if (!r) {
		f->w = last;
		f->before = cd->held == last ? NULL : cd->held;
		for (b = cd->held; b && b->next != last; b = b->next)
			;
		if (b)
			b->next = NULL;
		cd->held = cd->held_tail = NULL;
		track(cd, f);
		return;
	}
	free(f);
	/* No event: wait for the stream itself, after what is in flight
	 * before them, so that none is reported done before it is. */
	while (cd->inflight)
		if (!poll_inflight(cd))
			sched_yield();
	enter(cd, cd->held_g, last->client);
	if (!cu_sticky(r))
		r = vd.cuStreamSynchronize(cd->held_cs);
	cu_devout_sink(NULL);
	while ((b = cd->held)) {
		cd->held = b->next;
		b->next = NULL;
		finish(cd, b, r);
	}
	cd->held_tail = NULL;
}

static void run_one(struct cu_dev *cd, struct work *w, const struct work *next)
{
	struct cu_gctx *g = gctx_of(w);
	struct inflight *f;
	CUresult r;
	CUstream cs;

	if (cd->held && (w->stream != cd->held_tail->stream || g != cd->held_g ||
			 !coalescible(w)))
		flush_held(cd);
	if (atomic_load(&w->client->dead_for_worker)) {
		flush_held(cd);
		work_done(cu.d, w, 0);
		return;
	}
	if (w->stream && !g) {
		/* No context could be made for the client on this device. */
		finish(cd, w, CUDA_ERROR_OUT_OF_MEMORY);
		return;
	}
	if (device_wide(w)) {
		/* Wait for everything queued before it. */
		while (cd->inflight)
			if (!poll_inflight(cd))
				sched_yield();
		if (w->type == WORK_UNMAP) {
			if (w->unmap.phys)	/* cuMemMap'd (vmm.c) */
				cuda_phys_unmap(cu.d, w->client, w->unmap.addr,
						w->unmap.len, w->unmap.phys);
			else
				unmap_pages(w->client, w->unmap.addr, w->unmap.len);
			/* Only now may the dispatcher map these addresses
			 * again (ops/vmm.c): earlier, its cuMemMap met the
			 * pages still mapped (INVALID_VALUE, seen on the H200
			 * in tests/gpu/drv-mem). */
			client_unmap_done(w->client, w->unmap.addr);
		}
		if (w->type == WORK_MARKER) {
			/* Anything the driver wrote to fd 1 itself (not
			 * through stdio) is taken as this client's. */
			cu_devout_sink(w->client);
			cu_devout_collect();
			cu_devout_sink(NULL);
		}
		/* A context synchronisation reports a poisoned context (in
		 * shared mode also to clients whose own work did not fault). */
		finish(cd, w, g ? (int32_t)atomic_load(&g->poison) : 0);
		return;
	}
	if (g && atomic_load(&g->poison)) {
		/* As CUDA fails every later call in a poisoned context with
		 * its error: completed at once, the driver never sees it. */
		flush_held(cd);
		finish(cd, w, (int32_t)atomic_load(&g->poison));
		return;
	}
	if (g)
		enter(cd, g, w->client);
	cs = stream_of(w->stream, &r);
	if (!r && cuda_graph_immediate(w)) {
		/* A captured item is a node, not work: done once issued, with
		 * no tracking event (it would join the client's graph), after
		 * the stream's earlier work so that its frontier stays in
		 * order (graph.c). */
		if (w->capture)
			while (stream_in_flight(cd, w->stream))
				if (!poll_inflight(cd))
					sched_yield();
		if (g)
			enter(cd, g, w->client);	/* polling may have switched */
		finish(cd, w, issue(w, cs));
		return;
	}
	if (!r) {
		uint64_t t0 = prof_start();

		r = issue(w, cs);
		prof_end(&cd->prof, PROF_ISSUE, t0);
	}
	cu_devout_sink(NULL);
	if (r)
		flush_held(cd);	/* they were issued before it */
	if (!r && next && next->stream == w->stream && gctx_of(next) == g &&
	    coalescible(w) && coalescible(next) && !atomic_load(&g->poison)) {
		/*
		 * The next item of the same stream will say when this one is
		 * done: no event here (an event per item costs a driver call
		 * to record and one per poll to query). Only within a batch:
		 * holding the last one for the next batch cost more than it
		 * saved (measured on the H200: batches are mostly one item).
		 */
		w->next = NULL;
		if (cd->held)
			cd->held_tail->next = w;
		else
			cd->held = w;
		cd->held_tail = w;
		cd->held_g = g;
		cd->held_cs = cs;
		return;
	}
	if (r) {
		if (w->type == WORK_LAUNCH || w->type >= WORK_HTOD)
			log_info("client %llu: %s failed: %s",
				 (unsigned long long)w->client->id,
				 axon_op_name(w->op), vendor_err(r));
		finish(cd, w, r);
		return;
	}
	f = cd->spare;
	if (f)
		cd->spare = f->next;
	else
		f = malloc(sizeof(*f));
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if (f) {
		f->g = g;
		r = ev_get(g, &f->ev);
		if (!r) {
			uint64_t t0 = prof_start();

			r = vd.cuEventRecord(f->ev, cs);
			prof_end(&cd->prof, PROF_EV_RECORD, t0);
			if (r)
				ev_put(g, f->ev);
		}
	}
	cu_devout_sink(NULL);
	if (r) {
		free(f);
		flush_held(cd);
		/* The context was poisoned under us: that is the answer. */
		if (cu_sticky(r)) {
			finish(cd, w, r);
			return;
		}
		/* Cannot track it: wait for it the slow way, so that it is
		 * never reported done before it is. */
		while (cd->inflight)
			poll_inflight(cd);
		enter(cd, g, w->client);
		r = vd.cuStreamSynchronize(cs);
		cu_devout_sink(NULL);
		finish(cd, w, r);
		return;
	}
	f->w = w;
	/* The held items, issued before w on its stream, complete with it. */
	f->before = cd->held;
	cd->held = cd->held_tail = NULL;
	track(cd, f);
}

/* A plain launch that a graph node can stand for (collapse.h): no launch
 * attributes (cuLaunchKernelEx), and coalescible (not captured; its output,
 * if it prints, is flushed with its run's). */
static bool collapsible(const struct work *w)
{
	return w->type == WORK_LAUNCH && !w->launch.nattrs &&
	       w->launch.func && w->launch.func->backend_priv && coalescible(w);
}

/*
 * Issues the run of collapsible launches that starts at w (the batch, in
 * order) as one graph replay, when it is long enough. Returns the rest of
 * the batch after the items it issued (which wait, held, for one event
 * after them: run_one, flush_held), or w itself when it issued none;
 * *issued gets how many it issued, and *direct, when it issued none, how
 * many items from w on are to be launched one by one without asking again
 * (a declined run is not offered again from each of its later items,
 * which would cost a walk and a hash per item: quadratic in the run).
 */
static struct work *run_collapsed(struct cu_dev *cd, struct work *w, unsigned int *issued,
				  unsigned int *direct)
{
	struct work *items[COLLAPSE_MAX], *x, *rest;
	struct cu_gctx *g;
	unsigned int len = 0, n, i;
	uint64_t t0;
	CUstream cs;
	CUresult r;

	*issued = 0;
	*direct = 1;
	if (!collapse_min || !collapsible(w))
		return w;
	g = gctx_of(w);
	if (!g || atomic_load(&g->poison) || atomic_load(&w->client->dead_for_worker))
		return w;
	for (x = w; x && len < COLLAPSE_MAX && x->stream == w->stream &&
	     gctx_of(x) == g && collapsible(x); x = x->next)
		items[len++] = x;
	/* Powers of two: a loop of one kernel meets a handful of shapes. */
	for (n = 1; n * 2 <= len; n *= 2)
		;
	if (n < collapse_min || n < 2) {
		*direct = len;
		return w;
	}
	if (cd->held && (cd->held_tail->stream != w->stream || cd->held_g != g))
		flush_held(cd);
	enter(cd, g, w->client);
	cs = stream_of(w->stream, &r);
	if (r)
		return w;
	t0 = prof_start();
	r = collapse_issue(g, cs, items, n);
	prof_end(&cd->prof, PROF_COLLAPSE, t0);
	if (r) {
		*direct = n;	/* launched one by one, as before */
		return w;
	}
	rest = items[n - 1]->next;
	for (i = 0; i < n; i++) {
		items[i]->next = NULL;
		if (cd->held)
			cd->held_tail->next = items[i];
		else
			cd->held = items[i];
		cd->held_tail = items[i];
	}
	cd->held_g = g;
	cd->held_cs = cs;
	cd->prof.collapsed_items += axond_profiling ? n : 0;
	*issued = n;
	*direct = 0;
	return rest;
}

#define EXEC_SPIN_NS	(50ULL * 1000)
/* Timer slack of the executor's back-off sleeps (--poll-us). */
#define EXEC_TIMER_SLACK_NS	1000UL

/* Back-off between polls of work in flight (--poll-us; 0: none). */
static uint64_t poll_backoff_ns = 20000;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void *executor(void *arg)
{
	struct cu_dev *cd = arg;
	uint64_t idle_since = 0;

	thread_prof = &cd->prof;
	/* The back-off between polls is a short sleep (--poll-us); the
	 * default 50 us of timer slack would stretch it by up to that much,
	 * and a client waiting on a sync sees its work done that late. */
	prctl(PR_SET_TIMERSLACK, EXEC_TIMER_SLACK_NS, 0, 0, 0);
	set_current(cd->ctx);
	for (;;) {
		struct work *batch;
		uint64_t t_idle = prof_start(), t_take;
		unsigned int nbatch = 0, direct = 0;

		/*
		 * Nothing queued and nothing in flight: look again for a
		 * while before sleeping. The dispatcher hands work over one
		 * item at a time; waking a sleeping executor for each costs
		 * a futex round trip (launch-bound clients were
		 * handoff-bound on the H200).
		 */
		if (!cd->inflight) {
			uint64_t t0 = axond_now_ns();

			while (!__atomic_load_n(&cd->head, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&cd->stop, __ATOMIC_RELAXED) &&
			       axond_now_ns() - t0 < EXEC_SPIN_NS)
				cpu_relax();
		}
		t_take = prof_start();
		pthread_mutex_lock(&cd->lock);
		if (!cd->head && !cd->inflight && !cd->stop) {
			/* Asleep, it holds no client's context (enter). */
			if (cd->cur) {
				pthread_mutex_unlock(&cd->lock);
				enter_primary(cd);
				continue;
			}
			while (!cd->head && !cd->inflight && !cd->stop)
				pthread_cond_wait(&cd->cond, &cd->lock);
			t_take = prof_start();
		}
		if (cd->stop && !cd->head && !cd->inflight) {
			pthread_mutex_unlock(&cd->lock);
			enter_primary(cd);
			return NULL;
		}
		batch = cd->head;
		cd->head = cd->tail = NULL;
		pthread_mutex_unlock(&cd->lock);
		if (axond_profiling && batch) {
			/* idle: from the top of the loop to the batch, when
			 * nothing was in flight to poll meanwhile */
			if (!cd->inflight)
				prof_end(&cd->prof, PROF_IDLE, t_idle);
			prof_end(&cd->prof, PROF_HANDOFF, t_take);
		}
		if (!cd->inflight)
			cd->last_poll = 0;

		while (batch) {
			struct work *w = batch;

			if (!direct) {
				unsigned int issued;
				struct work *rest = run_collapsed(cd, batch, &issued, &direct);

				if (issued) {
					nbatch += issued;
					batch = rest;
					continue;
				}
			}
			direct--;
			batch = w->next;
			w->next = NULL;
			nbatch++;
			run_one(cd, w, batch);
			/* Nothing this thread flushes later is that client's
			 * (it may be gone by then). Its context stays current:
			 * the executor holds it (enter). */
			cu_devout_sink(NULL);
		}
		if (axond_profiling && nbatch) {
			uint64_t now = axond_now_ns();

			cd->prof.batches++;
			cd->prof.items += nbatch;
			if (nbatch > cd->prof.max_batch)
				cd->prof.max_batch = nbatch;
			if (!cd->prof.t_first)
				cd->prof.t_first = now;
			cd->prof.t_last = now;
		}
		/* Held items wait for a next one only within a batch. */
		flush_held(cd);
		if (cd->inflight) {
			uint64_t t0 = axond_now_ns();

			/* Busy while work is in flight: time between polls. */
			if (cd->last_poll && t0 > cd->last_poll)
				atomic_fetch_add(&cu.d->busy_ns[cd->ordinal], t0 - cd->last_poll);
			cd->last_poll = t0;
			if (poll_inflight(cd)) {
				idle_since = 0;
			} else {
				uint64_t now = axond_now_ns();

				/* Spin briefly for sub-microsecond completion,
				 * then back off so a long kernel costs no core. */
				if (!idle_since)
					idle_since = now;
				if (now - idle_since > 50000 && poll_backoff_ns) {
					struct timespec ts = { 0, (long)poll_backoff_ns };

					nanosleep(&ts, NULL);
					prof_end(&cd->prof, PROF_BACKOFF, now);
				} else {
					cpu_relax();
				}
			}
		}
	}
}

/* The group context a client joins on device dev: its own (context mode)
 * or the device's shared one, replaced once poisoned. Dispatcher. */
static struct cu_gctx *join(int dev)
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
static struct cu_gctx *client_gctx(struct client *c, int dev)
{
	struct cu_client *cc = c->backend_priv;

	if (!cc || dev < 0 || dev >= cu.ndev)
		return NULL;
	if (!cc->g[dev])
		cc->g[dev] = join(dev);
	return cc->g[dev];
}

CUresult cuda_enter(struct client *c, int dev)
{
	struct cu_gctx *g = client_gctx(c, dev);

	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (atomic_load(&g->poison))
		return (CUresult)atomic_load(&g->poison);
	set_current(g->ctx);
	cu_devout_sink(c);
	return CUDA_SUCCESS;
}

void cuda_leave(void)
{
	cu_devout_collect();
	cu_devout_sink(NULL);
	/* The dispatcher's own calls (VMM, registrations) are per process:
	 * device 0's primary context serves them. */
	set_current(cu.dev[0].ctx);
}

static void cuda_submit(struct axond *d, struct work *w)
{
	int dev = 0;
	struct cu_dev *cd;

	(void)d;
	if (w->stream) {
		dev = w->stream->ctx->device;
		/* Before the executor sees the work (the queue lock orders it);
		 * NULL fails the work there. */
		client_gctx(w->client, dev);
	}
	cd = &cu.dev[dev];
	w->next = NULL;
	pthread_mutex_lock(&cd->lock);
	if (cd->tail)
		cd->tail->next = w;
	else
		cd->head = w;
	cd->tail = w;
	pthread_cond_signal(&cd->cond);
	pthread_mutex_unlock(&cd->lock);
}

/* ---- lifecycle ------------------------------------------------------------ */

static int cuda_init(struct axond *d, char *err, size_t errlen)
{
	CUresult r;
	int i, ret;

	cu.d = d;
	axond_profiling = getenv("AXOND_PROFILE") && *getenv("AXOND_PROFILE") == '1';
	collapse_min = d->cfg.collapse_min;
	poll_backoff_ns = d->cfg.poll_us * 1000ULL;
	cu.shared_mode = d->cfg.isolation && !strcmp(d->cfg.isolation, "shared");
	/* Context mode: each client's printf output goes to it. Before the
	 * driver is opened, in case it keeps stdout's FILE. (Shared mode has
	 * one printf buffer for every client: it stays axond's stdout.) */
	if (!cu.shared_mode && (ret = cu_devout_init(err, errlen)))
		return ret;
	if (vendor_open(d->cfg.vendor_lib, err, errlen))
		return -ENOENT;
	r = vd.cuInit(0);
	if (r) {
		snprintf(err, errlen, "cuInit: %s", vendor_err(r));
		return -EIO;
	}
	ret = fill_info(d, err, errlen);
	if (ret)
		return ret;
	/* Contexts exist before any client arrives: start-up is instant. */
	for (i = 0; i < cu.ndev; i++) {
		struct cu_dev *cd = &cu.dev[i];

		r = vd.cuDevicePrimaryCtxRetain(&cd->ctx, cd->dev);
		if (r) {
			snprintf(err, errlen, "device %d: context: %s", i, vendor_err(r));
			return -EIO;
		}
		pthread_mutex_init(&cd->lock, NULL);
		pthread_cond_init(&cd->cond, NULL);
		if (pthread_create(&cd->thread, NULL, executor, cd)) {
			snprintf(err, errlen, "cannot start executor %d", i);
			return -EAGAIN;
		}
	}
	/* What a client's context starts with (cuCtxGetLimit answers it). */
	for (i = 0; i < cu.ndev; i++) {
		size_t fifo = 0;

		set_current(cu.dev[i].ctx);
		if (vd.cuCtxGetLimit(&fifo, CU_LIMIT_PRINTF_FIFO_SIZE) == CUDA_SUCCESS &&
		    fifo <= UINT32_MAX)
			d->info->device[i].printf_fifo_size = (uint32_t)fifo;
	}
	/* The dispatcher thread maps memory with device 0's primary context
	 * current (VMM mappings and host registrations are per process) and
	 * switches to a client's context for its modules (cuda_enter). */
	set_current(cu.dev[0].ctx);
	/* Clients' contexts: made now, so that connecting stays instant.
	 * Shared mode needs one per device, and one spare for a restart. */
	{
		CUdevice devs[AXON_MAX_DEVICES];
		unsigned int n = d->cfg.context_pool;

		/*
		 * Context mode: a client that finds the pool empty waits for a
		 * cuCtxCreate (~130 ms) and the keeper makes one at a time, so
		 * back-to-back starts drain a small pool. On the H200
		 * (2026-11-29, drvbench start rows): pool 2 -> 228 ms p50 from
		 * fork to first kernel, pool 8 -> 45 ms. A context holds device
		 * memory (local memory for every resident thread, printf and
		 * heap buffers), so keep one per 16 GiB, 2 to 8.
		 */
		/* A worker process (--isolation=process) serves one client:
		 * its context, made now, and no refill. */
		if (axond_is_worker(d))
			n = 1;
		if (n == ~0U) {
			uint64_t per = d->info->device[0].total_mem >> 34;

			n = cu.shared_mode ? 1 : per < 2 ? 2 : per > 8 ? 8 : (unsigned int)per;
		}
		for (i = 0; i < cu.ndev; i++)
			devs[i] = cu.dev[i].dev;
		ret = ctxpool_init(cu.ndev, devs, n, !axond_is_worker(d), err, errlen);
		if (ret)
			return ret;
		set_current(cu.dev[0].ctx);
	}
	pthread_mutex_init(&cu.reg_lock, NULL);
	pthread_cond_init(&cu.reg_cond, NULL);
	if (pthread_create(&cu.reg_thread, NULL, registrar, NULL)) {
		snprintf(err, errlen, "cannot start the registrar thread");
		return -EAGAIN;
	}
	return 0;
}

static void cuda_fini(struct axond *d)
{
	int i;

	(void)d;
	pthread_mutex_lock(&cu.reg_lock);
	cu.reg_stop = true;
	pthread_cond_broadcast(&cu.reg_cond);
	pthread_mutex_unlock(&cu.reg_lock);
	pthread_join(cu.reg_thread, NULL);
	cuda_hostmem_fini();
	for (i = 0; i < cu.ndev; i++) {
		struct cu_dev *cd = &cu.dev[i];

		pthread_mutex_lock(&cd->lock);
		cd->stop = true;
		pthread_cond_signal(&cd->cond);
		pthread_mutex_unlock(&cd->lock);
		pthread_join(cd->thread, NULL);
	}
	/* The executors gone, nothing adds to the leftovers; the primary
	 * context is still there to undo them in. */
	if (cu.leftover)
		set_current(cu.dev[0].ctx);
	while (cu.leftover) {
		struct leftover *lo = cu.leftover;

		cu.leftover = lo->next;
		vd.cuMemAddressFree(lo->base, lo->size);
		unregister(lo->reg);
		free(lo);
	}
	for (i = 0; i < cu.ndev; i++) {
		struct cu_dev *cd = &cu.dev[i];

		exec_prof_log(i, &cd->prof);
		gctx_put(cd->shared);
		cd->shared = NULL;
		while (cd->spare) {
			struct inflight *f = cd->spare;

			cd->spare = f->next;
			free(f);
		}
		vd.cuDevicePrimaryCtxRelease(cd->dev);
	}
	/* Clients still connected keep their contexts to the end. */
	ctxpool_fini();
	/* Last: what the driver printed while shutting down stays ours. */
	cu_devout_restore();
}

static int cuda_client_init(struct axond *d, struct client *c)
{
	struct cu_client *cc = calloc(1, sizeof(*cc));
	CUresult r;

	if (!cc)
		return -ENOMEM;
	pthread_mutex_init(&cc->lock, NULL);
	/* Its context on device 0, from the pool (context mode), or the
	 * shared one. */
	cc->g[0] = join(0);
	if (!cc->g[0]) {
		free(cc);
		return -ENOMEM;
	}
	cc->gran = cu.dev[0].gran;
	cc->size = c->params.va_size;
	cc->npages = cc->size / cc->gran;
	cc->refs = calloc(cc->npages, sizeof(*cc->refs));
	cc->phys = calloc(cc->npages, sizeof(*cc->phys));
	if (!cc->refs || !cc->phys)
		goto err;
	r = vd.cuMemAddressReserve(&cc->base, cc->size, cc->gran, 0, 0);
	if (r) {
		log_cu("reserving a client window", r);
		goto err;
	}
	/* The client mints inside what we reserved. */
	c->params.va_base = cc->base;
	/* Pageable copies go through the data area: make it DMA-able, in
	 * the background so that connecting stays instant. */
	cc->reg = register_later(c->data, c->params.data_size);
	c->backend_priv = cc;
	/* A worker's only client: whatever the driver prints is its. */
	if (axond_is_worker(d) && !cu.shared_mode)
		cu_devout_fallback(c);
	return 0;
err:
	gctx_put(cc->g[0]);
	free(cc->refs);
	free(cc->phys);
	free(cc);
	return -ENOMEM;
}

static void unmap_pages(struct client *c, uint64_t addr, uint64_t len)
{
	struct cu_client *cc = c->backend_priv;
	uint64_t p, first, last;

	if (!len || addr < cc->base || addr - cc->base >= cc->size)
		return;
	first = (addr - cc->base) / cc->gran;
	last = (addr - cc->base + len - 1) / cc->gran;
	pthread_mutex_lock(&cc->lock);
	for (p = first; p <= last && p < cc->npages; p++) {
		if (!cc->refs[p] || --cc->refs[p])
			continue;
		vd.cuMemUnmap(cc->base + p * cc->gran, cc->gran);
		vd.cuMemRelease(cc->phys[p]);
		cc->phys[p] = 0;
	}
	pthread_mutex_unlock(&cc->lock);
}

static void cuda_client_fini(struct axond *d, struct client *c)
{
	struct cu_client *cc = c->backend_priv;
	struct leftover *lo;
	uint64_t p;
	int i;

	if (axond_is_worker(d) && !cu.shared_mode)
		cu_devout_fallback(NULL);
	/* Context mode: its context goes, with every module, stream and
	 * event made in it, destroyed by the keeper thread; never reused. */
	for (i = 0; i < AXON_MAX_DEVICES; i++)
		gctx_put(cc->g[i]);
	for (p = 0; p < cc->npages; p++) {
		if (!cc->refs[p])
			continue;
		vd.cuMemUnmap(cc->base + p * cc->gran, cc->gran);
		vd.cuMemRelease(cc->phys[p]);
	}
	lo = axond_is_worker(d) && !cu.shared_mode ? malloc(sizeof(*lo)) : NULL;
	if (lo) {
		lo->base = cc->base;
		lo->size = cc->size;
		lo->reg = cc->reg;
		pthread_mutex_lock(&cu.reg_lock);
		lo->next = cu.leftover;
		cu.leftover = lo;
		pthread_mutex_unlock(&cu.reg_lock);
	} else {
		vd.cuMemAddressFree(cc->base, cc->size);
		unregister(cc->reg);
	}
	free(cc->refs);
	free(cc->phys);
	free(cc);
	c->backend_priv = NULL;
}

static int cuda_mem_map(struct axond *d, struct client *c, uint64_t addr, uint64_t len)
{
	struct cu_client *cc = c->backend_priv;
	uint64_t p, first, last;
	int dev = 0;
	CUresult r = CUDA_SUCCESS;

	(void)d;
	if (addr < cc->base || len > cc->size || addr - cc->base > cc->size - len)
		return CUDA_ERROR_INVALID_VALUE;
	first = (addr - cc->base) / cc->gran;
	last = (addr - cc->base + len - 1) / cc->gran;
	pthread_mutex_lock(&cc->lock);
	for (p = first; p <= last; p++) {
		CUmemAllocationProp prop = {
			.type = CU_MEM_ALLOCATION_TYPE_PINNED,
			.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
		};
		CUmemAccessDesc acc = {
			.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
			.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
		};
		CUdeviceptr va = cc->base + p * cc->gran;

		if (cc->refs[p]++)
			continue;
		r = vd.cuMemCreate(&cc->phys[p], cc->gran, &prop, 0);
		if (!r) {
			r = vd.cuMemMap(va, cc->gran, 0, cc->phys[p], 0);
			if (r)
				vd.cuMemRelease(cc->phys[p]);
		}
		if (!r) {
			r = vd.cuMemSetAccess(va, cc->gran, &acc, 1);
			if (r) {
				vd.cuMemUnmap(va, cc->gran);
				vd.cuMemRelease(cc->phys[p]);
			}
		}
		if (r) {
			cc->refs[p] = 0;
			cc->phys[p] = 0;
			break;
		}
	}
	pthread_mutex_unlock(&cc->lock);
	if (r) {
		/* Undo the pages this call took. */
		if (p > first)
			unmap_pages(c, addr, (p - first) * cc->gran -
				    (addr - cc->base - first * cc->gran));
		return r == CUDA_ERROR_OUT_OF_MEMORY ? r : CUDA_ERROR_OUT_OF_MEMORY;
	}
	return 0;
}

static int cuda_module_prepare(struct axond *d, struct client *c, int dev, void **priv)
{
	struct cu_module *cm = calloc(1, sizeof(*cm));

	(void)d;
	if (!cm)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* The client's context, joined on the dispatcher (client_gctx
	 * changes the client's and the device's state); it lives as long
	 * as the client, which the load holds. */
	cm->g = client_gctx(c, dev);
	if (!cm->g) {
		free(cm);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*priv = cm;
	return 0;
}

/*
 * A loader thread, with the client's context made current here and given
 * back after (as cuda_enter/cuda_leave do on the dispatcher, without the
 * join). The image is the loader's private NUL-terminated copy.
 */
static int cuda_module_parse(struct axond *d, struct client *c, void *priv,
			     const void *image, size_t len, char *err, size_t errlen)
{
	struct cu_module *cm = priv;
	uint64_t t[3];
	CUresult r;

	(void)d;
	cm->prints = cu_image_may_print(image, len);
	r = (CUresult)atomic_load(&cm->g->poison);
	if (r) {
		snprintf(err, errlen, "the client's context is poisoned: %s", vendor_err(r));
		return r;
	}
	t[0] = prof_start();
	/* In the client's context: loading flushes its printf output. */
	set_current(cm->g->ctx);
	cu_devout_sink(c);
	t[1] = prof_start();
	r = vd.cuModuleLoadData(&cm->mod, image);
	t[2] = prof_start();
	cuda_leave();
	if (axond_profiling)
		log_info("profile: module load, %zu bytes: enter %.1f us, driver %.1f us, leave %.1f us",
			 len, (double)(t[1] - t[0]) / 1e3, (double)(t[2] - t[1]) / 1e3,
			 (double)(prof_start() - t[2]) / 1e3);
	if (r) {
		snprintf(err, errlen, "cuModuleLoadData: %s", vendor_err(r));
		return r;
	}
	cm->loaded = true;
	return 0;
}

static int cuda_module_commit(struct axond *d, struct client *c, struct module *m,
			      void *priv, char *err, size_t errlen)
{
	(void)d;
	(void)c;
	(void)err;
	(void)errlen;
	m->backend_priv = priv;
	return 0;
}

/* A load never committed: unloaded as cuda_module_unload would. */
static void cuda_module_discard(struct axond *d, struct client *c, void *priv)
{
	struct cu_module *cm = priv;

	(void)d;
	if (!cm)
		return;
	/* A client gone in context mode: its context's destruction unloads
	 * it; a poisoned context refuses calls. */
	if (cm->loaded && !atomic_load(&cm->g->poison) && !(c->dead && !cm->g->shared)) {
		set_current(cm->g->ctx);
		cu_devout_sink(c->dead ? NULL : c);
		vd.cuModuleUnload(cm->mod);
		cuda_leave();
	}
	free(cm);
}

static void cuda_module_unload(struct axond *d, struct client *c, struct module *m)
{
	struct cu_module *cm = m->backend_priv;
	unsigned int i;

	if (!cm)
		return;
	/* Its functions' handles may come back for another module. */
	collapse_invalidate();
	for (i = 0; i < cm->nglobals; i++)
		client_unmint_daemon(d, c, cm->globals[i]);
	free(cm->globals);
	{
		struct cu_client *cc = c->backend_priv;
		struct cu_gctx *g = cc ? cc->g[m->ctx->device] : NULL;

		/*
		 * A client going away in context mode: its context's
		 * destruction unloads everything at once. A poisoned
		 * context refuses calls: it goes when its clients have.
		 * Otherwise unload in the module's context (any thread:
		 * the last reference may drop on an executor).
		 */
		if (g && !atomic_load(&g->poison) && !(c->dead && !g->shared)) {
			uint64_t t0;

			set_current(g->ctx);
			cu_devout_sink(c->dead ? NULL : c);
			t0 = prof_start();
			vd.cuModuleUnload(cm->mod);
			if (axond_profiling)
				log_info("profile: module unload: driver %.1f us",
					 (double)(prof_start() - t0) / 1e3);
			cuda_leave();
		}
	}
	free(cm);
	m->backend_priv = NULL;
}

static int cuda_module_get_func(struct axond *d, struct client *c, struct module *m,
				const char *name, struct func *f)
{
	struct cu_module *cm = m->backend_priv;
	CUfunction fn;
	size_t i, off, size;
	CUresult r;

	(void)d;
	r = cuda_enter(c, m->ctx->device);
	if (!r)
		r = vd.cuModuleGetFunction(&fn, cm->mod, name);
	if (r) {
		cuda_leave();
		return r;
	}
	f->info.nparams = 0;
	f->info.args_size = 0;
	for (i = 0; i < AXON_MAX_KERNEL_PARAMS; i++) {
		if (vd.cuFuncGetParamInfo(fn, i, &off, &size))
			break;
		f->info.param[i] = AXON_PARAM_MAKE(off, size);
		f->info.nparams++;
		if (off + size > f->info.args_size)
			f->info.args_size = (uint32_t)(off + size);
	}
	cuda_leave();
	f->backend_priv = fn;
	return 0;
}

int client_register_global(struct axond *d, struct client *c, struct ctx *ctx,
			   uint64_t addr, uint64_t len);

static int cuda_module_func_names(struct axond *d, struct client *c, struct module *m,
				  char *buf, size_t len, uint32_t *count, size_t *need)
{
	struct cu_module *cm = m->backend_priv;
	CUfunction *fns = NULL;
	unsigned int n = 0, i;
	size_t used = 0;
	CUresult r;

	(void)d;
	r = cuda_enter(c, m->ctx->device);
	if (!r)
		r = vd.cuModuleGetFunctionCount(&n, cm->mod);
	if (!r && n) {
		fns = calloc(n, sizeof(*fns));
		r = fns ? vd.cuModuleEnumerateFunctions(fns, n, cm->mod) : CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (i = 0; !r && i < n; i++) {
		const char *name = NULL;
		size_t l;

		r = vd.cuFuncGetName(&name, fns[i]);
		if (!r && !name)
			r = CUDA_ERROR_UNKNOWN;	/* the count must match the names */
		if (r)
			break;
		l = strlen(name) + 1;
		if (used + l <= len)
			memcpy(buf + used, name, l);
		used += l;
	}
	cuda_leave();
	free(fns);
	*count = n;
	*need = used;
	return r;
}

static int cuda_module_get_global(struct axond *d, struct client *c, struct module *m,
				  const char *name, uint64_t *addr, uint64_t *size)
{
	struct cu_module *cm = m->backend_priv;
	CUdeviceptr p;
	size_t s;
	CUresult r;
	int ret;

	r = cuda_enter(c, m->ctx->device);
	if (!r)
		r = vd.cuModuleGetGlobal(&p, &s, cm->mod, name);
	cuda_leave();
	if (r)
		return r;
	/* Copies may name it: it joins the client's allocation table. */
	ret = client_register_global(d, c, m->ctx, p, s);
	if (ret == 0) {
		if (cm->nglobals == cm->capglobals) {
			unsigned int cap = cm->capglobals ? cm->capglobals * 2 : 8;
			uint64_t *g = realloc(cm->globals, cap * sizeof(*g));

			if (!g) {
				client_unmint_daemon(d, c, p);
				return CUDA_ERROR_OUT_OF_MEMORY;
			}
			cm->globals = g;
			cm->capglobals = cap;
		}
		cm->globals[cm->nglobals++] = p;
	} else if (ret != -EEXIST) {
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*addr = p;
	*size = s;
	return 0;
}

/*
 * AXON_OP_OCCUPANCY: the driver's own answer, in the context the function
 * was loaded in. The grid matters only for its divisibility by the cluster.
 */
static int cuda_occupancy(struct axond *d, struct client *c, struct func *f,
			  const struct axon_sqe *q, int *value)
{
	CUlaunchAttribute attr;
	CUlaunchConfig cfg;
	CUresult r;

	(void)d;
	memset(&cfg, 0, sizeof(cfg));
	memset(&attr, 0, sizeof(attr));
	cfg.gridDimX = q->occupancy.grid[0];
	cfg.gridDimY = q->occupancy.grid[1];
	cfg.gridDimZ = q->occupancy.grid[2];
	cfg.blockDimX = q->occupancy.block[0];
	cfg.blockDimY = q->occupancy.block[1];
	cfg.blockDimZ = q->occupancy.block[2];
	cfg.sharedMemBytes = q->occupancy.shared_bytes;
	if (q->occupancy.cluster[0] || q->occupancy.cluster[1] || q->occupancy.cluster[2]) {
		attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attr.value.clusterDim.x = q->occupancy.cluster[0] ? q->occupancy.cluster[0] : 1;
		attr.value.clusterDim.y = q->occupancy.cluster[1] ? q->occupancy.cluster[1] : 1;
		attr.value.clusterDim.z = q->occupancy.cluster[2] ? q->occupancy.cluster[2] : 1;
		cfg.attrs = &attr;
		cfg.numAttrs = 1;
	}
	r = cuda_enter(c, f->module->ctx->device);
	if (!r) {
		if (q->occupancy.query == AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE)
			r = vd.cuOccupancyMaxPotentialClusterSize(value,
					(CUfunction)f->backend_priv, &cfg);
		else
			r = vd.cuOccupancyMaxActiveClusters(value, (CUfunction)f->backend_priv, &cfg);
	}
	cuda_leave();
	return r;
}

/*
 * The table 1734dc26 (ops/private.c): slot 4 gives two objects of the
 * process, asked once and kept, as cuBLASLt keeps them; slot 13 asks a
 * value of them with two small integers. Dispatcher thread only.
 */
static int lt_call(struct client *c, struct ctx *ctx, unsigned int call, uint64_t arg,
		   uint64_t *out)
{
	static const CUuuid table_id = { { 0x17, 0x34, (char)0xdc, 0x26, (char)0x80, 0x0d,
					   0x47, 0x45, (char)0x87, 0x26, (char)0xc0,
					   (char)0xf1, (char)0xe7, (char)0xdd, (char)0x8b,
					   (char)0xca } };
	typedef CUresult (*objs_fn)(void **, void **);
	typedef CUresult (*query_fn)(void *, void *, int, int, int *, void *);
	static void *a, *b;
	const void *const *t = NULL;
	int value = 0;
	CUresult r;

	r = vd.cuGetExportTable((const void **)&t, &table_id);
	if (r || !t || (uintptr_t)t[0] < 14 * sizeof(void *) || !t[4] || !t[13])
		return CUDA_ERROR_NOT_SUPPORTED;
	r = cuda_enter(c, ctx->device);
	if (!r && !a)
		r = ((objs_fn)(uintptr_t)t[4])(&a, &b);
	if (!r && call == AXON_PRIV_LT_QUERY) {
		r = ((query_fn)(uintptr_t)t[13])(a, b, (int)(arg & 0xffff),
						 (int)((arg >> 16) & 0xffff), &value, NULL);
		*out = (uint32_t)value;
	}
	cuda_leave();
	return r;
}

/*
 * AXON_OP_PRIVATE_CALL (ops/private.c): the driver's own private entry
 * point, called as cuBLAS calls it, on the client's context.
 */
static int cuda_private_call(struct axond *d, struct client *c, struct ctx *ctx,
			     unsigned int call, uint64_t arg, uint64_t *out)
{
	static const CUuuid table_id = { { 0x21, 0x31, (char)0x8c, 0x60, (char)0x97, 0x14,
					   0x32, 0x48, (char)0x8c, (char)0xa6, 0x41,
					   (char)0xff, 0x73, 0x24, (char)0xc8, (char)0xf2 } };
	typedef CUresult (*slot_fn)(CUcontext, void *, void *, void *);
	const void *const *t = NULL;
	struct cu_gctx *g;
	void *obj = NULL;
	uint64_t value = 0;
	CUresult r;

	(void)d;
	if (call == AXON_PRIV_LT_OBJS || call == AXON_PRIV_LT_QUERY)
		return lt_call(c, ctx, call, arg, out);
	r = vd.cuGetExportTable((const void **)&t, &table_id);
	if (r || !t || (uintptr_t)t[0] < 52 * sizeof(void *) || !t[51] || !t[39])
		return CUDA_ERROR_NOT_SUPPORTED;
	r = cuda_enter(c, ctx->device);
	g = client_gctx(c, ctx->device);
	if (!r && !g)
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (!r && call == AXON_PRIV_CTX_OBJ) {
		r = ((slot_fn)(uintptr_t)t[51])(g->ctx, NULL, &obj, NULL);
		*out = (uint64_t)(uintptr_t)obj;
	} else if (!r) {
		r = ((slot_fn)(uintptr_t)t[39])(g->ctx, (void *)(uintptr_t)arg, &value, NULL);
		*out = value;
	}
	cuda_leave();
	return r;
}

static int cuda_func_get_attr(struct axond *d, struct func *f, int attr, int64_t *value)
{
	int v = 0;
	CUresult r;

	(void)d;
	r = vd.cuFuncGetAttribute(&v, (CUfunction_attribute)attr, (CUfunction)f->backend_priv);
	*value = v;
	return r;
}

static void cuda_func_free(struct axond *d, struct func *f)
{
	(void)d;
	f->backend_priv = NULL;	/* owned by its module */
}

static void cuda_stream_fini(struct axond *d, struct stream *s)
{
	(void)d;
	if (s->backend_priv)
		vd.cuStreamDestroy((CUstream)s->backend_priv);
	s->backend_priv = NULL;
}

static void cuda_event_fini(struct axond *d, struct event *e)
{
	(void)d;
	if (e->backend_priv)
		vd.cuEventDestroy((CUevent)e->backend_priv);
	e->backend_priv = NULL;
}

const struct backend cuda_backend = {
	.name = "cuda",
	.init = cuda_init,
	.fini = cuda_fini,
	.client_init = cuda_client_init,
	.client_fini = cuda_client_fini,
	.mem_map = cuda_mem_map,
	.phys_create = cuda_phys_create,
	.phys_free = cuda_phys_free,
	.phys_map = cuda_phys_map,
	.phys_unmap = cuda_phys_unmap,
	.module_prepare = cuda_module_prepare,
	.module_parse = cuda_module_parse,
	.module_commit = cuda_module_commit,
	.module_discard = cuda_module_discard,
	.module_unload = cuda_module_unload,
	.module_get_func = cuda_module_get_func,
	.module_get_global = cuda_module_get_global,
	.module_func_names = cuda_module_func_names,
	.func_get_attr = cuda_func_get_attr,
	.occupancy = cuda_occupancy,
	.private_call = cuda_private_call,
	.func_set_attr = cuda_func_set_attr,
	.tensor_map_encode = cuda_tensor_map_encode,
	.func_free = cuda_func_free,
	.region_prepare = cuda_region_prepare,
	.region_unprepare = cuda_region_unprepare,
	.region_pool_wait = cuda_region_pool_wait,
	.stream_fini = cuda_stream_fini,
	.event_fini = cuda_event_fini,
	.graph_instantiate = cuda_graph_instantiate,
	.graph_fini = cuda_graph_fini,
	.graph_exec_fini = cuda_graph_exec_fini,
	.submit = cuda_submit,
	.hostmem_register = cuda_hostmem_register,
	.hostmem_unregister = cuda_hostmem_unregister,
};
