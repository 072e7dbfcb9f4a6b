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
 *
 * The files: cuda.c starts and stops the backend and holds its table;
 * info.c fills the info page; context.c pools contexts and makes them
 * current; window.c backs each client's window; registrar.c registers data
 * areas for DMA; exec.c is the executor and inflight.c its completion
 * tracking; module.c, occupancy.c, private.c, launch.c, graph.c, vmm.c,
 * hostmem.c and devout.c serve their op families.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../axond.h"
#include "../backend.h"
#include "collapse.h"
#include "context.h"
#include "cugraph.h"
#include "devout.h"
#include "exec.h"
#include "hostmem.h"
#include "inflight.h"
#include "info.h"
#include "ctxlimits.h"
#include "launch.h"
#include "module.h"
#include "occupancy.h"
#include "private.h"
#include "profile.h"
#include "profilerctl.h"
#include "registrar.h"
#include "state.h"
#include "vendor.h"
#include "vmm.h"
#include "window.h"

struct cu_state cu;

static int cuda_init(struct axond *d, char *err, size_t errlen)
{
	CUresult r;
	int i, ret;

	cu.d = d;
	axond_profiling = getenv("AXOND_PROFILE") && *getenv("AXOND_PROFILE") == '1';
	collapse_min = d->cfg.collapse_min;
	cu_poll_backoff_ns = d->cfg.poll_us * 1000ULL;
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
	ret = cu_fill_info(d, err, errlen);
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
		if (pthread_create(&cd->thread, NULL, cu_executor, cd)) {
			snprintf(err, errlen, "cannot start executor %d", i);
			return -EAGAIN;
		}
	}
	/* What a client's context starts with (cuCtxGetLimit answers it). */
	for (i = 0; i < cu.ndev; i++) {
		size_t fifo = 0;

		cu_set_current(cu.dev[i].ctx);
		if (vd.cuCtxGetLimit(&fifo, CU_LIMIT_PRINTF_FIFO_SIZE) == CUDA_SUCCESS &&
		    fifo <= UINT32_MAX)
			d->info->device[i].printf_fifo_size = (uint32_t)fifo;
	}
	/* The dispatcher thread maps memory with device 0's primary context
	 * current (VMM mappings and host registrations are per process) and
	 * switches to a client's context for its modules (cuda_enter). */
	cu_set_current(cu.dev[0].ctx);
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
		size_t before[AXON_MAX_DEVICES] = { 0 }, after, total;

		for (i = 0; i < cu.ndev; i++) {
			devs[i] = cu.dev[i].dev;
			cu_set_current(cu.dev[i].ctx);
			if (vd.cuMemGetInfo(&before[i], &total))
				before[i] = 0;
		}
		ret = ctxpool_init(cu.ndev, devs, n, !axond_is_worker(d), err, errlen);
		if (ret)
			return ret;
		/*
		 * What a client's context costs the device (stack for every
		 * resident thread, printf and heap reserves), charged to each
		 * client that gets one (context and process isolation). Given
		 * (--ctx-mem), or measured now, which is right only while
		 * nothing else allocates on the device: true of one daemon at
		 * its start, and of the first worker of a supervisor, which
		 * starts it alone and gives its figure to every later worker
		 * (supervisor.c); workers measuring beside each other counted
		 * each other's contexts (1032 to 2978 MiB for 524 on the H200).
		 */
		for (i = 0; i < cu.ndev; i++) {
			struct cu_dev *cd = &cu.dev[i];
			uint64_t g = cd->gran ? cd->gran : 2 << 20, per;

			cu_set_current(cd->ctx);
			if (d->cfg.ctx_mem)
				per = d->cfg.ctx_mem;
			else if (!n || !before[i] || vd.cuMemGetInfo(&after, &total) ||
				 after >= before[i])
				continue;
			else
				per = (before[i] - after) / n;
			cd->ctx_mem = per > UINT64_MAX - g ? per : (per + g - 1) / g * g;
			log_info("cuda: device %d: a context takes %llu MiB (%s)", i,
				 (unsigned long long)(cd->ctx_mem >> 20),
				 d->cfg.ctx_mem ? "--ctx-mem" : "measured");
		}
		d->ctx_cost = cu.dev[0].ctx_mem;
		cu_set_current(cu.dev[0].ctx);
	}
	return cu_registrar_start(err, errlen);
}

/*
 * A client with a context of its own (not shared mode) is charged it; a
 * worker's client (--isolation=process) also the worker's primary context,
 * which costs what a created one does and exists for it alone.
 */
static uint64_t cuda_ctx_mem(struct axond *d, struct client *c)
{
	(void)c;
	if (cu.shared_mode)
		return 0;
	return axond_is_worker(d) ? 2 * cu.dev[0].ctx_mem : cu.dev[0].ctx_mem;
}

static void cuda_fini(struct axond *d)
{
	int i;

	(void)d;
	cu_registrar_stop();
	cuda_hostmem_fini();
	for (i = 0; i < cu.ndev; i++) {
		struct cu_dev *cd = &cu.dev[i];

		pthread_mutex_lock(&cd->lock);
		cd->stop = true;
		pthread_cond_signal(&cd->cond);
		pthread_mutex_unlock(&cd->lock);
		pthread_join(cd->thread, NULL);
	}
	cu_window_fini();
	for (i = 0; i < cu.ndev; i++) {
		struct cu_dev *cd = &cu.dev[i];

		exec_prof_log(i, &cd->prof);
		gctx_put(cd->shared);
		cd->shared = NULL;
		cu_inflight_fini(cd);
		vd.cuDevicePrimaryCtxRelease(cd->dev);
	}
	/* Clients still connected keep their contexts to the end. */
	ctxpool_fini();
	/* Last: what the driver printed while shutting down stays ours. */
	cu_devout_restore();
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
	.ctx_mem = cuda_ctx_mem,
	.granule_back = cuda_granule_back,
	.granule_release = cuda_granule_release,
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
	.profiler = cuda_profiler,
	.func_set_attr = cuda_func_set_attr,
	.ctx_limit = cuda_ctx_limit,
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
