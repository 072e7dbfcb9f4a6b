// SPDX-License-Identifier: MIT
/*
 * The sim backend: a software device for tests and GPU-less machines.
 *
 * Device memory is host memory: each client's device-address window is
 * backed by one lazily-populated anonymous mapping of the same size, so a
 * device address translates by a constant offset and clients can never
 * reach each other's memory. One executor thread runs the stream-ordered
 * work: each client's in submission order (which keeps every stream's order
 * and makes that client's cross-stream event waits trivially satisfied),
 * the clients in turn, one item each, so one client's flood of work cannot
 * hold another's back for long. Kernels run as host
 * implementations found by name in the kernels object given with
 * --sim-kernels (kernelset.c; the tests give the test kernels, kernels.c);
 * any other kernel, or every kernel without one, fails at launch with
 * CUDA_ERROR_NOT_SUPPORTED and a log line.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cuda.h>

#include "../axond.h"
#include "../backend.h"
#include "../devout.h"
#include "../ops/hostmem.h"
#include "image.h"
#include "kernelset.h"
#include "sim.h"

struct sim_client;

struct sim_state {
	pthread_t thread;
	pthread_mutex_t lock;		/* protects the ready list, queues, stop */
	pthread_cond_t cond;
	struct sim_client *ready, *ready_tail;	/* clients with queued work */
	bool stop;
	struct axond *d;
};

struct sim_client {
	unsigned char *window;		/* host view of [va_base, va_base+va_size) */
	uint64_t base, size;
	struct work *head, *tail;	/* this client's queue (sim.lock) */
	bool listed;			/* on sim.ready */
	struct sim_client *next_ready;
	struct sim_limits limits[AXON_MAX_DEVICES];	/* dispatcher */
};

struct sim_global {
	uint64_t addr, size;
};

struct sim_module {
	struct sim_image *img;
	struct sim_global *globals;	/* img->nglobals */
	struct namemap globals_by_name;	/* name -> its globals[] */
};

struct sim_func {
	const struct sim_kernel_desc *desc;
	const struct sim_kernel *impl;	/* NULL: not in the kernels object */
	struct sim_fattr fa;		/* settable attributes (launchex.c) */
};

static struct sim_state sim;

/*
 * The daemon's pointer for a device address the op checked: the window's,
 * or a shared host region's named by its host address (unified
 * addressing: the daemon maps it at that address, ops/hostmem.c), whose
 * release waits for the work queued before it. NULL for anything else
 * (the work then fails with ILLEGAL_ADDRESS, never touches other memory).
 */
static void *dev_ptr(struct client *c, uint64_t addr, uint64_t len)
{
	struct sim_client *sc = c->backend_priv;

	if (addr - sc->base < sc->size)
		return sc->window + (addr - sc->base);
	return hostmem_device_span(c, addr, len, false, true);
}

static void *host_ptr(struct client *c, uint64_t addr)
{
	struct sim_client *sc = c->backend_priv;

	return sc->window + (addr - sc->base);
}

void *sim_host_ptr(struct client *c, uint64_t addr)
{
	return host_ptr(c, addr);
}

/* Kernel pointer arguments: the whole range must be one live allocation. */
static void *translate(void *ctx, uint64_t addr, uint64_t len)
{
	struct client *c = ctx;

	if (!client_range_valid_exec(c, addr, len))
		return hostmem_device_span(c, addr, len, false, true);
	return host_ptr(c, addr);
}

/* A kernel's printf: held for the client that launched it (devout.c). */
static void output(void *ctx, const char *text, size_t len)
{
	devout_append(ctx, text, len);
}

static int32_t run_launch(struct work *w)
{
	struct sim_func *sf = w->launch.func->backend_priv;
	struct sim_launch l = {
		.args = w->launch.args,
		.args_size = w->launch.args_size,
		.translate = translate,
		.ctx = w->client,
		.output = output,
	};
	int32_t res = sim_launch_check(&sf->fa, w);

	if (res)
		return res;
	if (!sf->impl) {
		log_warn("client %llu (%s): kernel %s is not in the sim's built-in set%s; "
			 "launch fails with CUDA_ERROR_NOT_SUPPORTED",
			 (unsigned long long)w->client->id, w->client->comm,
			 w->launch.func->name,
			 sim_kernelset_loaded() ? "" : " (no kernels object: --sim-kernels)");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	memcpy(l.grid, w->launch.grid, sizeof(l.grid));
	memcpy(l.block, w->launch.block, sizeof(l.block));
	return sf->impl->run(&l);
}

static int32_t run_memset(struct client *c, struct work *w)
{
	uint64_t extent = w->memset.pitch * (w->memset.height - 1) +
			  w->memset.width * w->memset.elem_size;
	unsigned char *base = dev_ptr(c, w->memset.dst, extent);
	uint64_t row, i;

	if (!base)
		return CUDA_ERROR_ILLEGAL_ADDRESS;

	for (row = 0; row < w->memset.height; row++) {
		unsigned char *p = base + row * w->memset.pitch;

		switch (w->memset.elem_size) {
		case 1:
			memset(p, (int)w->memset.value, w->memset.width);
			break;
		case 2:
			for (i = 0; i < w->memset.width; i++) {
				uint16_t v = (uint16_t)w->memset.value;

				memcpy(p + 2 * i, &v, 2);
			}
			break;
		default:
			for (i = 0; i < w->memset.width; i++)
				memcpy(p + 4 * i, &w->memset.value, 4);
			break;
		}
	}
	return 0;
}

/* MEMCPY_2D: one row at a time (ops/copy.c checked every row's place). */
static int32_t run_copy_2d(struct client *c, struct work *w)
{
	const typeof(w->copy2d) *q = &w->copy2d;
	uint64_t dext = q->dst_pitch * (q->height - 1) + q->width;
	uint64_t sext = q->src_pitch * (q->height - 1) + q->width;
	unsigned char *dst = q->dir == AXON_COPY_2D_DTOH ? q->host : dev_ptr(c, q->dst, dext);
	const unsigned char *src = q->dir == AXON_COPY_2D_HTOD ? q->host :
				   dev_ptr(c, q->src, sext);
	uint64_t row;

	if (!dst || !src)
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	for (row = 0; row < q->height; row++)
		memmove(dst + row * q->dst_pitch, src + row * q->src_pitch, q->width);
	return 0;
}

/* Gives the pages of a freed range back to the host (whole pages only). */
static void run_unmap(struct client *c, struct work *w)
{
	uintptr_t start = (uintptr_t)host_ptr(c, w->unmap.addr);
	uintptr_t end = start + w->unmap.len;

	if (w->unmap.phys) {	/* cuMemUnmap: the window's own memory again */
		sim_phys_unmap(sim.d, c, w->unmap.addr, w->unmap.len, w->unmap.phys);
		/* Only now may the dispatcher map these addresses again. */
		client_unmap_done(c, w->unmap.addr);
		return;
	}
	start = (start + 4095) & ~(uintptr_t)4095;
	end &= ~(uintptr_t)4095;
	if (end > start)
		madvise((void *)start, end - start, MADV_DONTNEED);
	/* The granules no allocation uses any more go too. */
	granules_release_queued(sim.d, c, w->unmap.addr, w->unmap.len);
	client_unmap_done(c, w->unmap.addr);
}

/* Runs one item (graph.c replays graph nodes through it too). */
int32_t sim_execute(struct work *w)
{
	struct client *c = w->client;
	void *dst, *src;
	int32_t res;

	/* A capturing stream's item becomes a node instead (graph.c). */
	if (w->capture && sim_graph_record(w, &res))
		return res;
	switch (w->type) {
	case WORK_ADVANCE:
		return w->res;
	case WORK_HTOD:
		dst = dev_ptr(c, w->copy.dst, w->copy.len);
		if (!dst)
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		memcpy(dst, w->copy.host, w->copy.len);
		return 0;
	case WORK_DTOH:
		src = dev_ptr(c, w->copy.src, w->copy.len);
		if (!src)
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		memcpy(w->copy.host, src, w->copy.len);
		return 0;
	case WORK_DTOD:
		dst = dev_ptr(c, w->copy.dst, w->copy.len);
		src = dev_ptr(c, w->copy.src, w->copy.len);
		if (!dst || !src)
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		memmove(dst, src, w->copy.len);
		return 0;
	case WORK_MEMSET:
		return run_memset(c, w);
	case WORK_COPY_2D:
		return run_copy_2d(c, w);
	case WORK_LAUNCH:
		return run_launch(w);
	case WORK_EVENT_RECORD:
		atomic_store(&w->event.event->time_ns, axond_now_ns());
		atomic_fetch_add(&w->event.event->done_records, 1);
		return 0;
	case WORK_UNMAP:
		run_unmap(c, w);
		return 0;
	case WORK_WAIT_EVENT:	/* one in-order queue: already satisfied */
	case WORK_MARKER:
	case WORK_RELEASE:
		return 0;
	case WORK_CAPTURE_BEGIN:
	case WORK_CAPTURE_END:
	case WORK_GRAPH_LAUNCH:
	case WORK_GRAPH_UPDATE:
		return sim_graph_execute(w);
	case WORK_HOST_NODE:	/* only ever captured (ops/graph.c) */
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	return CUDA_ERROR_UNKNOWN;
}

/* Puts sc at the back of the clients with queued work; sim.lock held. */
static void ready_append(struct sim_client *sc)
{
	sc->next_ready = NULL;
	if (sim.ready_tail)
		sim.ready_tail->next_ready = sc;
	else
		sim.ready = sc;
	sim.ready_tail = sc;
}

static void *executor(void *arg)
{
	struct axond *d = arg;

	for (;;) {
		struct work *w;
		int32_t res = 0;

		struct sim_client *sc;

		pthread_mutex_lock(&sim.lock);
		while (!sim.ready && !sim.stop)
			pthread_cond_wait(&sim.cond, &sim.lock);
		sc = sim.ready;
		if (!sc) {
			pthread_mutex_unlock(&sim.lock);
			return NULL;
		}
		/* One item from the first client, which goes to the back. */
		sim.ready = sc->next_ready;
		if (!sim.ready)
			sim.ready_tail = NULL;
		w = sc->head;
		sc->head = w->next;
		if (!sc->head) {
			sc->tail = NULL;
			sc->listed = false;
		} else {
			ready_append(sc);
		}
		pthread_mutex_unlock(&sim.lock);

		/* A dead client's work is dropped; its memory is going away. */
		if (!atomic_load(&w->client->dead_for_worker)) {
			uint64_t t0 = axond_now_ns();

			res = sim_execute(w);
			atomic_fetch_add(&d->busy_ns[0], axond_now_ns() - t0);
			/* --sim-fault=process: behave as NVIDIA's driver, whose
			 * fault poisons every context of the process, so that
			 * what the daemon does about it is tested here. */
			if (d->cfg.sim_fault_process &&
			    (res == CUDA_ERROR_ASSERT || res == CUDA_ERROR_ILLEGAL_ADDRESS))
				work_device_fault(d, "device fault (--sim-fault=process)",
						  res, w->client->id);
		}
		work_done(d, w, res);
	}
}

static void sim_submit(struct axond *d, struct work *w)
{
	struct sim_client *sc = w->client->backend_priv;

	(void)d;
	w->next = NULL;
	pthread_mutex_lock(&sim.lock);
	if (sc->tail)
		sc->tail->next = w;
	else
		sc->head = w;
	sc->tail = w;
	if (!sc->listed) {
		sc->listed = true;
		ready_append(sc);
	}
	pthread_cond_signal(&sim.cond);
	pthread_mutex_unlock(&sim.lock);
}

static uint64_t sim_ctx_mem(struct axond *d, struct client *c);

static int sim_init(struct axond *d, char *err, size_t errlen)
{
	sim_fill_info(d->info, d->cfg.sim_mem);
	d->ctx_cost = sim_ctx_mem(d, NULL);
	if (d->cfg.sim_kernels) {
		if (sim_kernelset_load(d->cfg.sim_kernels, err, errlen))
			return -EINVAL;
		log_info("sim: kernels from %s: %s", d->cfg.sim_kernels,
			 sim_kernelset_name());
	}
	sim.d = d;
	pthread_mutex_init(&sim.lock, NULL);
	pthread_cond_init(&sim.cond, NULL);
	if (pthread_create(&sim.thread, NULL, executor, d)) {
		snprintf(err, errlen, "cannot start the executor thread");
		return -EAGAIN;
	}
	return 0;
}

static void sim_fini(struct axond *d)
{
	(void)d;
	pthread_mutex_lock(&sim.lock);
	sim.stop = true;
	pthread_cond_signal(&sim.cond);
	pthread_mutex_unlock(&sim.lock);
	pthread_join(sim.thread, NULL);
}

static int sim_client_init(struct axond *d, struct client *c)
{
	struct sim_client *sc = calloc(1, sizeof(*sc));

	(void)d;
	if (!sc)
		return -ENOMEM;
	sc->base = c->params.va_base;
	sc->size = c->params.va_size;
	/* Reserve the window; pages appear on first touch (MAP_NORESERVE). */
	sc->window = mmap(NULL, sc->size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (sc->window == MAP_FAILED) {
		free(sc);
		return -ENOMEM;
	}
	c->backend_priv = sc;
	return 0;
}

static void sim_client_fini(struct axond *d, struct client *c)
{
	struct sim_client *sc = c->backend_priv;

	(void)d;
	munmap(sc->window, sc->size);
	free(sc);
	c->backend_priv = NULL;
}

/* The model's context: --ctx-mem, in whole granules. */
static uint64_t sim_ctx_mem(struct axond *d, struct client *c)
{
	uint64_t g = d->info->device[0].vmm_granularity, m = d->cfg.ctx_mem;

	(void)c;
	if (!g || m > UINT64_MAX - (g - 1))
		return m;
	return (m + g - 1) / g * g;
}

/* The window is already reserved; a granule's pages come on touch. */
static int sim_granule_back(struct axond *d, struct client *c, uint64_t va,
			    uint64_t len, uint64_t *handle)
{
	(void)d;
	(void)c;
	(void)va;
	(void)len;
	*handle = 1;
	return 0;
}

/* ...and go back to the host once no allocation uses them. */
static void sim_granule_release(struct axond *d, struct client *c, uint64_t va,
				uint64_t len, uint64_t handle)
{
	(void)d;
	(void)handle;
	madvise(host_ptr(c, va), len, MADV_DONTNEED);
}

/*
 * Gives a global's pages back to the host (whole pages only: a neighbour
 * may share the others) and its addresses to the client's accounting. A
 * module is unloaded after the work that may use it (ops/module.c).
 */
static void unmint_global(struct axond *d, struct client *c, const struct sim_global *g)
{
	uintptr_t start = (uintptr_t)host_ptr(c, g->addr);
	uintptr_t end = start + (g->size ? g->size : 1);

	start = (start + 4095) & ~(uintptr_t)4095;
	end &= ~(uintptr_t)4095;
	if (end > start)
		madvise((void *)start, end - start, MADV_DONTNEED);
	client_unmint_daemon(d, c, g->addr);
}

static int sim_module_prepare(struct axond *d, struct client *c, int dev, void **priv)
{
	(void)d;
	(void)c;
	(void)dev;
	*priv = calloc(1, sizeof(struct sim_module));
	return *priv ? 0 : CUDA_ERROR_OUT_OF_MEMORY;
}

static void sim_module_discard(struct axond *d, struct client *c, void *priv)
{
	struct sim_module *sm = priv;

	(void)d;
	(void)c;
	if (!sm)
		return;
	namemap_destroy(&sm->globals_by_name);
	sim_image_free(sm->img);
	free(sm->globals);
	free(sm);
}

/* A loader thread: sm and the image are this load's alone. */
static int sim_module_parse(struct axond *d, struct client *c, void *priv,
			    const void *image, size_t len, uint32_t calls_charged,
			    uint32_t *calls, char *err, size_t errlen)
{
	struct sim_module *sm = priv;
	size_t i;
	int ret;

	(void)d;
	(void)c;
	*calls = 0;
	ret = sim_image_parse(image, len, &sm->img, err, errlen);
	if (ret) {
		if (ret == -ENOMEM)
			return CUDA_ERROR_OUT_OF_MEMORY;
		/* No code a 9.0 device runs: what the driver says for it. */
		return ret == -ENOEXEC ? CUDA_ERROR_NO_BINARY_FOR_GPU : CUDA_ERROR_INVALID_IMAGE;
	}
	/* The device runtime's reserve is charged before the load, as on a
	 * GPU (the sim spends nothing on it: the charge is the model). */
	*calls = sm->img->calls;
	if (*calls & ~calls_charged) {
		sim_image_free(sm->img);
		sm->img = NULL;
		return 0;
	}
	sm->globals = calloc(sm->img->nglobals ? sm->img->nglobals : 1,
			     sizeof(*sm->globals));
	if (!sm->globals)
		goto oom;
	/* Globals by name; of two with one name (static in two units) the
	 * first is the one found, as sim_image_find_global says. */
	for (i = 0; i < sm->img->nglobals; i++) {
		ret = namemap_insert(&sm->globals_by_name, 0, sm->img->globals[i].name,
				     &sm->globals[i]);
		if (ret && ret != -EEXIST)
			goto oom;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return CUDA_ERROR_OUT_OF_MEMORY;
}

/* The dispatcher: globals live in the client's window, minted by it. */
static int sim_module_commit(struct axond *d, struct client *c, struct module *m,
			     void *priv, char *err, size_t errlen)
{
	struct sim_module *sm = priv;
	size_t i;

	for (i = 0; i < sm->img->nglobals; i++) {
		const struct sim_global_desc *g = &sm->img->globals[i];
		uint64_t size = g->size ? g->size : 1;

		if (client_mint_daemon(d, c, m->ctx, size, &sm->globals[i].addr))
			goto err_oom;
		sm->globals[i].size = g->size;
		/* Zero-initialised ones are left alone: the window's pages are
		 * zero until written, and daemon-minted addresses were never
		 * minted before (zeroing them cost host memory for nothing). */
		if (g->init)
			memcpy(host_ptr(c, sm->globals[i].addr), g->init, g->size);
	}
	m->backend_priv = sm;
	return 0;

err_oom:
	snprintf(err, errlen, "out of device memory for module globals");
	while (i--)
		unmint_global(d, c, &sm->globals[i]);
	return CUDA_ERROR_OUT_OF_MEMORY;
}

static void sim_module_unload(struct axond *d, struct client *c, struct module *m)
{
	struct sim_module *sm = m->backend_priv;
	size_t i;

	if (!sm)
		return;
	for (i = 0; i < sm->img->nglobals; i++)
		unmint_global(d, c, &sm->globals[i]);
	sim_module_discard(d, c, sm);
	m->backend_priv = NULL;
}

static bool same_layout(const struct sim_kernel *impl, const struct sim_kernel_desc *k)
{
	uint32_t i;

	if (impl->nparams != k->nparams || impl->args_size != k->args_size)
		return false;
	for (i = 0; i < k->nparams; i++)
		if (impl->params[i].offset != k->params[i].offset ||
		    impl->params[i].size != k->params[i].size)
			return false;
	return true;
}

static int sim_module_get_func(struct axond *d, struct client *c, struct module *m,
			       const char *name, struct func *f)
{
	struct sim_module *sm = m->backend_priv;
	const struct sim_kernel_desc *k = sim_image_find_kernel(sm->img, name);
	struct sim_func *sf;
	uint32_t i;

	(void)d;
	(void)c;
	if (!k)
		return CUDA_ERROR_NOT_FOUND;
	if (k->nparams > AXON_MAX_KERNEL_PARAMS)
		return CUDA_ERROR_INVALID_IMAGE;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	sf->desc = k;
	sim_fattr_init(&sf->fa);
	sf->impl = sim_kernelset_find(name);
	if (sf->impl && !same_layout(sf->impl, k)) {
		/* Same name, other parameters: not our kernel. */
		log_warn("kernel %s: parameters differ from the built-in %s; "
			 "launches will fail with CUDA_ERROR_NOT_SUPPORTED",
			 name, sf->impl->proto);
		sf->impl = NULL;
	}
	f->calls = k->calls;
	f->info.nparams = k->nparams;
	f->info.args_size = k->args_size;
	for (i = 0; i < k->nparams; i++)
		f->info.param[i] = AXON_PARAM_MAKE(k->params[i].offset, k->params[i].size);
	f->backend_priv = sf;
	return 0;
}

static int sim_module_func_names(struct axond *d, struct client *c, struct module *m,
				 char *buf, size_t len, uint32_t *count, size_t *need)
{
	struct sim_module *sm = m->backend_priv;
	size_t i, used = 0;

	(void)d;
	(void)c;
	for (i = 0; i < sm->img->nkernels; i++) {
		size_t l = strlen(sm->img->kernels[i].name) + 1;

		if (used + l <= len)
			memcpy(buf + used, sm->img->kernels[i].name, l);
		used += l;
	}
	*count = (uint32_t)sm->img->nkernels;
	*need = used;
	return 0;
}

static int sim_module_get_global(struct axond *d, struct client *c, struct module *m,
				 const char *name, uint64_t *addr, uint64_t *size)
{
	struct sim_module *sm = m->backend_priv;
	struct sim_global *g = namemap_find(&sm->globals_by_name, 0, name);

	(void)d;
	(void)c;
	if (!g)
		return CUDA_ERROR_NOT_FOUND;
	*addr = g->addr;
	*size = g->size;
	return 0;
}

static int sim_func_get_attr(struct axond *d, struct func *f, int attr, int64_t *value)
{
	struct sim_func *sf = f->backend_priv;

	(void)d;
	if (sim_fattr_get(&sf->fa, attr, value))
		return 0;
	switch (attr) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		*value = 1024;
		return 0;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES:
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
		*value = 0;
		return 0;
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		*value = 32;
		return 0;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION:
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
		*value = 90;
		return 0;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		*value = 49152;
		return 0;
	case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA:
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		*value = 0;	/* the sim has no cache modes or clusters */
		return 0;
	default:
		(void)f;
		return CUDA_ERROR_INVALID_VALUE;
	}
}

static int sim_func_set_attr(struct axond *d, struct client *c, struct func *f, int attr,
			     int value)
{
	struct sim_func *sf = f->backend_priv;

	(void)c;
	return sim_fattr_set(&sf->fa, d->info, f->module->ctx->device, attr, value);
}

static int sim_ctx_limit(struct axond *d, struct client *c, int dev, int limit,
			 bool set, uint64_t *value)
{
	struct sim_client *sc = c->backend_priv;

	return sim_limit(&sc->limits[dev], &d->info->device[dev], limit, set, value);
}

static void sim_func_free(struct axond *d, struct func *f)
{
	(void)d;
	free(f->backend_priv);
	f->backend_priv = NULL;
}

const struct backend sim_backend = {
	.name = "sim",
	.init = sim_init,
	.fini = sim_fini,
	.client_init = sim_client_init,
	.client_fini = sim_client_fini,
	.phys_create = sim_phys_create,
	.phys_free = sim_phys_free,
	.phys_map = sim_phys_map,
	.phys_unmap = sim_phys_unmap,
	.ctx_mem = sim_ctx_mem,
	.granule_back = sim_granule_back,
	.granule_release = sim_granule_release,
	.module_prepare = sim_module_prepare,
	.module_parse = sim_module_parse,
	.module_commit = sim_module_commit,
	.module_discard = sim_module_discard,
	.module_unload = sim_module_unload,
	.module_get_func = sim_module_get_func,
	.module_get_global = sim_module_get_global,
	.module_func_names = sim_module_func_names,
	.func_get_attr = sim_func_get_attr,
	.occupancy = sim_occupancy,
	.func_set_attr = sim_func_set_attr,
	.ctx_limit = sim_ctx_limit,
	.tensor_map_encode = sim_tensor_map_encode,
	.func_free = sim_func_free,
	.submit = sim_submit,
	.graph_instantiate = sim_graph_instantiate,
	.graph_fini = sim_graph_fini,
	.graph_exec_fini = sim_graph_exec_fini,
};
