// SPDX-License-Identifier: MIT
/*
 * Each client's device-address window (window.h): reserved with
 * cuMemAddressReserve when it connects; a minted range is backed by mapping
 * physical pages of the allocation granularity (2 MiB on current GPUs)
 * under it on demand, shared by every allocation that touches the page
 * (counted in the client's granule table, granules.h, which also says
 * what the client is charged), so small allocations cost one mapping per
 * page, not one driver allocation each. Its granules are released before
 * cuda_client_fini (client.c).
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
	/* Its context on device 0, from the pool (context mode), or the
	 * shared one. */
	cc->g[0] = cu_join(0);
	if (!cc->g[0]) {
		free(cc);
		return -ENOMEM;
	}
	cc->gran = cu.dev[0].gran;
	cc->size = c->params.va_size;
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
	free(cc);
	return -ENOMEM;
}

void cuda_client_fini(struct axond *d, struct client *c)
{
	struct cu_client *cc = c->backend_priv;
	struct leftover *lo;
	int i;

	if (axond_is_worker(d) && !cu.shared_mode)
		cu_devout_fallback(NULL);
	/* Context mode: its context goes, with every module, stream and
	 * event made in it, destroyed by the keeper thread; never reused. */
	for (i = 0; i < AXON_MAX_DEVICES; i++)
		gctx_put(cc->g[i]);
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
	free(cc);
	c->backend_priv = NULL;
}

/* A granule of the window (granules.c, its lock held): physical memory
 * of the allocation granularity, mapped read-write for the device. */
int cuda_granule_back(struct axond *d, struct client *c, uint64_t va,
		      uint64_t len, uint64_t *handle)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
	};
	CUmemAccessDesc acc = {
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = 0 },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUmemGenericAllocationHandle h;
	CUresult r;

	(void)d;
	(void)c;
	r = vd.cuMemCreate(&h, len, &prop, 0);
	if (r)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = vd.cuMemMap(va, len, 0, h, 0);
	if (!r) {
		r = vd.cuMemSetAccess(va, len, &acc, 1);
		if (r)
			vd.cuMemUnmap(va, len);
	}
	if (r) {
		vd.cuMemRelease(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*handle = h;
	return 0;
}

void cuda_granule_release(struct axond *d, struct client *c, uint64_t va,
			  uint64_t len, uint64_t handle)
{
	(void)d;
	(void)c;
	vd.cuMemUnmap(va, len);
	vd.cuMemRelease(handle);
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
