// SPDX-License-Identifier: MIT
/*
 * Modules in the cuda backend (module.h): loaded in the client's context on
 * a loader thread, looked up (functions, globals, names) on the dispatcher
 * in the same context, unloaded in it unless the context goes with them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../axond.h"
#include "../backend.h"
#include "collapse.h"
#include "context.h"
#include "devout.h"
#include "module.h"
#include "profile.h"
#include "state.h"
#include "vendor.h"
#include "../sim/image.h"

int cuda_module_prepare(struct axond *d, struct client *c, int dev, void **priv)
{
	struct cu_module *cm = calloc(1, sizeof(*cm));

	(void)d;
	if (!cm)
		return CUDA_ERROR_OUT_OF_MEMORY;
	/* The client's context, joined on the dispatcher (cu_client_gctx
	 * changes the client's and the device's state); it lives as long
	 * as the client, which the load holds. */
	cm->g = cu_client_gctx(c, dev);
	if (!cm->g) {
		free(cm);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*priv = cm;
	return 0;
}

/* Whole granules, as the driver's allocations are. */
static uint64_t granules_of(uint64_t bytes)
{
	uint64_t g = cu.dev[0].gran ? cu.dev[0].gran : 2 << 20;

	return bytes > UINT64_MAX / 2 ? UINT64_MAX / 2 : (bytes + g - 1) / g * g;
}

/*
 * The device memory the driver places for an image's globals: the bytes of
 * its __device__ and __constant__ data as the image declares them (read by
 * the loader's own parser, sim/image.h, which picks the entry an sm_90
 * device runs, as the driver does), in whole granules; chargecheck on the
 * H200 finds it exact. The parsed image is kept in cm (its kernels' calls,
 * read at each lookup). False for an image the parser does not know.
 */
static bool image_globals_mem(struct cu_module *cm, const void *image, size_t len,
			      uint32_t *calls)
{
	struct sim_image *img;
	uint64_t sum = 0;
	char err[160];
	size_t i;

	if (sim_image_parse(image, len, &img, err, sizeof(err)))
		return false;
	*calls = img->calls;
	for (i = 0; i < img->nglobals; i++) {
		if (img->globals[i].size > UINT64_MAX / 2 - sum) {
			sum = UINT64_MAX / 2;
			break;
		}
		sum += img->globals[i].size;
	}
	sim_image_free(cm->img);
	cm->img = img;
	cm->mem = granules_of(sum);
	return true;
}

/*
 * A loader thread, with the client's context made current here and given
 * back after (as cuda_enter/cuda_leave do on the dispatcher, without the
 * join). The image is the loader's private NUL-terminated copy.
 */
int cuda_module_parse(struct axond *d, struct client *c, void *priv,
		      const void *image, size_t len, uint32_t calls_charged,
		      uint32_t *calls, char *err, size_t errlen)
{
	struct cu_module *cm = priv;
	size_t before = 0, after = 0, total;
	bool parsed;
	uint64_t t[3];
	CUresult r;

	(void)d;
	*calls = 0;
	/*
	 * The driver reserves memory for the device runtime (printf, malloc)
	 * at the first load of a module that calls it, and keeps it: charged
	 * before the load (localmem.h), so the caller charges and comes back.
	 * An image the parser does not know is measured below instead.
	 */
	parsed = image_globals_mem(cm, image, len, calls);
	if (parsed && (*calls & ~calls_charged))
		return 0;
	cm->prints = cu_image_may_print(image, len);
	r = (CUresult)atomic_load(&cm->g->poison);
	if (r) {
		snprintf(err, errlen, "the client's context is poisoned: %s", vendor_err(r));
		return r;
	}
	t[0] = prof_start();
	/* In the client's context: loading flushes its printf output. */
	cu_set_current(cm->g->ctx);
	cu_devout_sink(c);
	/*
	 * An image the parser does not know costs what cuMemGetInfo lost
	 * across its load, which other clients' allocations may blur; only
	 * then is it measured: cuMemGetInfo took ~16 ms per load on the H200
	 * with a pool of workers (modload_cubin_repeat 0.2 -> 21.8 ms).
	 */
	if (!parsed && vd.cuMemGetInfo(&before, &total))
		before = 0;
	t[1] = prof_start();
	r = vd.cuModuleLoadData(&cm->mod, image);
	t[2] = prof_start();
	if (!r && !parsed && before && !vd.cuMemGetInfo(&after, &total) && after < before)
		cm->mem = granules_of(before - after);
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

int cuda_module_commit(struct axond *d, struct client *c, struct module *m,
			      void *priv, char *err, size_t errlen)
{
	struct cu_module *cm = priv;

	/* Its globals are on the device already: charged now (refused, the
	 * load fails and discard unloads it). */
	if (client_charge_device(d, c, cm->mem, &c->module_mem)) {
		snprintf(err, errlen, "its globals (%llu bytes) do not fit the arena or "
			 "the client's quotas", (unsigned long long)cm->mem);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	m->backend_priv = priv;
	return 0;
}

/* A load never committed: unloaded as cuda_module_unload would. */
void cuda_module_discard(struct axond *d, struct client *c, void *priv)
{
	struct cu_module *cm = priv;

	(void)d;
	if (!cm)
		return;
	/* A client gone in context mode: its context's destruction unloads
	 * it; a poisoned context refuses calls. */
	if (cm->loaded && !atomic_load(&cm->g->poison) && !(c->dead && !cm->g->shared)) {
		cu_set_current(cm->g->ctx);
		cu_devout_sink(c->dead ? NULL : c);
		vd.cuModuleUnload(cm->mod);
		cuda_leave();
	}
	sim_image_free(cm->img);
	free(cm);
}

void cuda_module_unload(struct axond *d, struct client *c, struct module *m)
{
	struct cu_module *cm = m->backend_priv;
	unsigned int i;

	if (!cm)
		return;
	/* Its functions' handles may come back for another module. */
	collapse_invalidate();
	client_uncharge_device(d, c, cm->mem, &c->module_mem);
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

			cu_set_current(g->ctx);
			cu_devout_sink(c->dead ? NULL : c);
			t0 = prof_start();
			vd.cuModuleUnload(cm->mod);
			if (axond_profiling)
				log_info("profile: module unload: driver %.1f us",
					 (double)(prof_start() - t0) / 1e3);
			cuda_leave();
		}
	}
	sim_image_free(cm->img);
	free(cm);
	m->backend_priv = NULL;
}

int cuda_module_get_func(struct axond *d, struct client *c, struct module *m,
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
	/* An image the parser does not know may call malloc from any. */
	if (cm->img) {
		const struct sim_kernel_desc *k = sim_image_find_kernel(cm->img, name);

		f->calls = k ? k->calls : cm->img->calls;
	} else {
		f->calls = SIM_IMAGE_CALLS_MALLOC;
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

int cuda_module_func_names(struct axond *d, struct client *c, struct module *m,
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

int cuda_module_get_global(struct axond *d, struct client *c, struct module *m,
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

int cuda_func_get_attr(struct axond *d, struct func *f, int attr, int64_t *value)
{
	int v = 0;
	CUresult r;

	(void)d;
	r = vd.cuFuncGetAttribute(&v, (CUfunction_attribute)attr, (CUfunction)f->backend_priv);
	*value = v;
	return r;
}

void cuda_func_free(struct axond *d, struct func *f)
{
	(void)d;
	f->backend_priv = NULL;	/* owned by its module */
}
