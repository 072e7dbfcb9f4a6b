// SPDX-License-Identifier: MIT
/*
 * Contexts. A CUcontext is the daemon's context handle; the shim keeps its
 * device, flags and default stream. Each thread's stack of current
 * contexts is current.c's (Local: no crossing to push, pop, set or get).
 */
#include <string.h>

#include "shim.h"
#include "synchooks.h"

/* Connected, and dev is one of the daemon's devices. */
static CUresult device_ready(CUdevice dev)
{
	CUresult r = shim_ensure_init();

	if (r)
		return r;
	if (dev < 0 || (unsigned int)dev >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

static CUresult ctx_create(CUdevice dev, unsigned int flags, bool primary,
			   uint64_t *handle)
{
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe;
	struct shim_ctx *sc;
	CUresult r;

	r = device_ready(dev);
	if (r)
		return r;
	shim_lock();
	sqe = shim_sqe();
	if (!sqe) {
		shim_unlock();
		return shim_gone_error();
	}
	axon_prep_ctx_create(sqe, (uint64_t)dev, flags);
	r = shim_sync_op(sqe, &w);
	if (!r) {
		sc = &shim.ctx[AXON_HANDLE_INDEX(w.aux[0]) % SHIM_MAX_CTX];
		sc->handle = w.aux[0];
		sc->default_stream = w.aux[1];
		/* The slot may have served a destroyed stream before. */
		shim.seq[shim_slot(w.aux[1]) % AXON_MAX_FRONTIER] = 0;
		sc->device = dev;
		sc->flags = flags;
		sc->primary = primary;
		*handle = w.aux[0];
	}
	shim_unlock();
	return r;
}

static void ctx_destroy(struct shim_ctx *sc)
{
	struct axon_sqe *sqe;

	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_ctx_destroy(sqe, sc->handle);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_flush();
	}
	/* Remove it from this thread's stack; others find it stale. */
	shim_ctx_unstack(sc->handle);
	memset(sc, 0, sizeof(*sc));
	shim_unlock();
}

SHIM_EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	uint64_t h;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = ctx_create(dev, flags, false, &h);
	if (r)
		return r;
	*pctx = (CUcontext)(uintptr_t)h;
	return shim_ctx_push(h);
}

SHIM_EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *params,
				    int nparams, unsigned int flags, CUdevice dev)
{
	if (nparams > 0 || params)
		return CUDA_ERROR_NOT_SUPPORTED;	/* no execution affinity */
	return cuCtxCreate_v2(pctx, flags, dev);
}

SHIM_EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *p,
				    unsigned int flags, CUdevice dev)
{
	if (p && (p->numExecAffinityParams || p->execAffinityParams || p->cigParams))
		return CUDA_ERROR_NOT_SUPPORTED;
	return cuCtxCreate_v2(pctx, flags, dev);
}

SHIM_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
	struct shim_ctx *sc = shim_ctx_of(ctx);

	if (!sc || sc->primary)
		return CUDA_ERROR_INVALID_CONTEXT;
	shim_ctx_storage_drop(sc->handle);
	ctx_destroy(sc);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	if (!shim_ctx_of(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	SHIM_LOCAL();
	return shim_ctx_push((uint64_t)(uintptr_t)ctx);
}

SHIM_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *pctx)
{
	uint64_t h;

	if (!shim_ctx_pop(&h))
		return CUDA_ERROR_INVALID_CONTEXT;
	SHIM_LOCAL();
	if (pctx)
		*pctx = (CUcontext)(uintptr_t)h;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	SHIM_LOCAL();
	if (!ctx) {
		shim_ctx_pop(NULL);
		return CUDA_SUCCESS;
	}
	if (!shim_ctx_of(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	shim_ctx_set_top((uint64_t)(uintptr_t)ctx);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	struct shim_ctx *sc;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	SHIM_LOCAL();
	sc = shim_current_ctx();
	*pctx = sc ? (CUcontext)(uintptr_t)sc->handle : NULL;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
	struct shim_ctx *sc;
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	SHIM_LOCAL();
	*device = sc->device;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
	struct shim_ctx *sc = ctx ? shim_ctx_of(ctx) : shim_current_ctx();

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sc)
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = sc->device;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
	struct shim_ctx *sc;
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (!r)
		*flags = sc->flags;
	return r;
}

SHIM_EXPORT CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	if (ctx && !shim_ctx_of(ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	*version = 3020;	/* what the driver reports for every context */
	return CUDA_SUCCESS;
}

static CUresult ctx_sync_once(struct shim_ctx *sc);

/* After every context synchronisation: the registered sync points
 * (pools above their release threshold give memory back, mempool.c). */
static CUresult ctx_sync(struct shim_ctx *sc)
{
	return shim_sync_point(ctx_sync_once(sc));
}

static CUresult ctx_sync_once(struct shim_ctx *sc)
{
	struct shim_waiter w = { 0 };
	CUresult r = shim_capture_ctx_sync();	/* it would wait on a capture */

	if (r)
		return r;
	r = shim_call(&w, axon_prep_ctx_sync, sc->handle);

	/* What the context's kernels printed, after its synchronisation. */
	shim_devout_drain();
	return r;
}

SHIM_EXPORT CUresult cuCtxSynchronize(void)
{
	struct shim_ctx *sc;
	CUresult r = shim_get_ctx(&sc);

	return r ? r : ctx_sync(sc);
}

CUresult (*const shim_ctx_sync_current)(void) = cuCtxSynchronize;

SHIM_EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	struct shim_ctx *sc = ctx ? shim_ctx_of(ctx) : shim_current_ctx();

	return sc ? ctx_sync(sc) : CUDA_ERROR_INVALID_CONTEXT;
}

/*
 * Primary contexts: one per device per process, reference counted. The
 * handle exists from the first Retain, or from the first peek (the cudart
 * export table asks for it without retaining, exporttable.c), until the
 * process ends; it is active while retained.
 */
static CUresult primary_get(CUdevice dev, bool retain, uint64_t *handle)
{
	struct shim_primary *p;
	CUresult r;

	r = device_ready(dev);
	if (r)
		return r;
	p = &shim.primary[dev];
	shim_lock();
	if (!p->ctx) {
		uint64_t h = 0;

		shim_unlock();
		r = ctx_create(dev, p->flags, true, &h);
		shim_lock();
		if (r) {
			shim_unlock();
			return r;
		}
		if (p->ctx) {
			/* Another thread won the race: drop ours. */
			shim_unlock();
			ctx_destroy(shim_ctx_of((CUcontext)(uintptr_t)h));
			shim_lock();
		} else {
			p->ctx = h;
		}
	}
	if (retain)
		p->refs++;
	*handle = p->ctx;
	shim_unlock();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	uint64_t h;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = primary_get(dev, true, &h);
	if (!r)
		*pctx = (CUcontext)(uintptr_t)h;
	return r;
}

CUresult shim_primary_peek(CUdevice dev, uint64_t *handle)
{
	return primary_get(dev, false, handle);
}

static CUresult primary_drop(CUdevice dev, bool reset)
{
	struct shim_primary *p;
	struct shim_ctx *sc = NULL;

	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || (unsigned int)dev >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	p = &shim.primary[dev];
	shim_lock();
	if (!reset && !p->refs) {
		shim_unlock();
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	/*
	 * Inactive, not gone: the driver keeps a primary context's handle
	 * valid for the life of the process, and cudart relies on it (after
	 * cudaDeviceReset it makes the old handle current again and retains
	 * it, and launches the CUkernels it already has). So the daemon's
	 * context stays, with what it holds, until the process ends; only
	 * the context-local storage goes, its destructors run as on a reset.
	 */
	if (reset || --p->refs == 0) {
		sc = p->ctx ? shim_ctx_of((CUcontext)(uintptr_t)p->ctx) : NULL;
		p->refs = 0;
	}
	shim_unlock();
	if (sc)
		shim_ctx_storage_drop(sc->handle);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
	return primary_drop(dev, false);
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	return primary_drop(dev, false);
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
	return primary_drop(dev, true);
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
	return primary_drop(dev, true);
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || (unsigned int)dev >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	*flags = shim.primary[dev].flags;
	*active = shim.primary[dev].refs > 0;	/* a peeked handle is inactive */
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags)
{
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || (unsigned int)dev >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	shim.primary[dev].flags = flags;
	/* An active primary context takes the new scheduling flags at once
	 * (cudaSetDeviceFlags after the first CUDA call): they decide how
	 * this process waits (conn.c wait_spin_ns). */
	if (shim.primary[dev].ctx) {
		struct shim_ctx *sc = shim_ctx_of((CUcontext)(uintptr_t)shim.primary[dev].ctx);

		if (sc)
			sc->flags = (sc->flags & ~CU_CTX_SCHED_MASK) | (flags & CU_CTX_SCHED_MASK);
	}
	shim_unlock();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
	return cuDevicePrimaryCtxSetFlags_v2(dev, flags);
}
