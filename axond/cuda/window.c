// SPDX-License-Identifier: MIT
/*
 * Each client's device-address window (window.h): reserved with
 * cuMemAddressReserve when it connects; a minted range is backed by mapping
 * physical pages of the allocation granularity (2 MiB on current GPUs)
 * under it on demand, shared by every allocation that touches the page
 * (refcounted), so small allocations cost one mapping per page, not one
 * driver allocation each.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "../axond.h"
#include "../backend.h"
#include "context.h"
#include "devout.h"
#include "registrar.h"
#include "state.h"
#include "vendor.h"
#include "window.h"

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

/* Protects leftovers. */
static pthread_mutex_t leftover_lock = PTHREAD_MUTEX_INITIALIZER;
static struct leftover *leftovers;	/* a worker's, undone at its end */

int cuda_client_init(struct axond *d, struct client *c)
{
	struct cu_client *cc = calloc(1, sizeof(*cc));
	CUresult r;

	if (!cc)
		return -ENOMEM;
	pthread_mutex_init(&cc->lock, NULL);
	/* Its context on device 0, from the pool (context mode), or the
	 * shared one. */
	cc->g[0] = cu_join(0);
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
	cc->reg = cu_dma_register_later(c->data, c->params.data_size);
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

void cu_unmap_pages(struct client *c, uint64_t addr, uint64_t len)
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

void cuda_client_fini(struct axond *d, struct client *c)
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
		pthread_mutex_lock(&leftover_lock);
		lo->next = leftovers;
		leftovers = lo;
		pthread_mutex_unlock(&leftover_lock);
	} else {
		vd.cuMemAddressFree(cc->base, cc->size);
		cu_dma_unregister(cc->reg);
	}
	free(cc->refs);
	free(cc->phys);
	free(cc);
	c->backend_priv = NULL;
}

int cuda_mem_map(struct axond *d, struct client *c, uint64_t addr, uint64_t len)
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
			cu_unmap_pages(c, addr, (p - first) * cc->gran -
				    (addr - cc->base - first * cc->gran));
		return r == CUDA_ERROR_OUT_OF_MEMORY ? r : CUDA_ERROR_OUT_OF_MEMORY;
	}
	return 0;
}

/* The backend's fini, executors gone: undo what workers' clients left
 * (nothing adds to it any more; device 0's primary context is still there
 * to undo it in). */
void cu_window_fini(void)
{
	if (leftovers)
		cu_set_current(cu.dev[0].ctx);
	while (leftovers) {
		struct leftover *lo = leftovers;

		leftovers = lo->next;
		vd.cuMemAddressFree(lo->base, lo->size);
		cu_dma_unregister(lo->reg);
		free(lo);
	}
}
