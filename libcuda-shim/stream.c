// SPDX-License-Identifier: MIT
/*
 * Streams. A CUstream is the daemon's stream handle; its handle index is
 * its frontier slot. cuStreamQuery is Frontier-class: it compares the
 * number of operations this process queued on the stream with the number
 * the daemon says the device finished, without crossing.
 */
#include <string.h>

#include "shim.h"
#include "ptstream.h"
#include "synchooks.h"
#include "forkreg.h"

/* What each stream was created with, by frontier slot (Local answers). */
static struct {
	uint64_t handle;
	uint64_t ctx;
	unsigned int flags;
	int priority;
} created[AXON_MAX_FRONTIER];

static void streams_forget(void)
{
	memset(created, 0, sizeof(created));
}

__attribute__((constructor)) static void register_streams_forget(void)
{
	shim_fork_register(streams_forget);
}

CUresult shim_stream_create(unsigned int flags, int priority, uint64_t *handle)
{
	struct shim_waiter w = { 0 };
	struct shim_ctx *sc;
	struct axon_sqe *sqe;
	CUresult r;

	if (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	/* "Priorities outside the range are clamped to the nearest valid
	 * priority" (cuStreamCreateWithPriority). */
	if (priority > 0)
		priority = 0;
	if (priority < AXON_STREAM_PRIORITY_GREATEST)
		priority = AXON_STREAM_PRIORITY_GREATEST;
	shim_lock();
	sqe = shim_sqe();
	if (!sqe) {
		shim_unlock();
		return shim_gone_error();
	}
	axon_prep_stream_create(sqe, sc->handle, flags, (uint64_t)(int64_t)priority);
	r = shim_sync_op(sqe, &w);
	if (!r) {
		uint32_t slot = shim_slot(w.aux[0]) % AXON_MAX_FRONTIER;

		shim.seq[slot] = 0;
		created[slot].handle = w.aux[0];
		created[slot].ctx = sc->handle;
		created[slot].flags = flags;
		created[slot].priority = priority;
		*handle = w.aux[0];
	}
	shim_unlock();
	return r;
}

static CUresult stream_create(CUstream *ph, unsigned int flags, int priority)
{
	uint64_t h;
	CUresult r;

	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream_create(flags, priority, &h);
	if (!r)
		*ph = (CUstream)(uintptr_t)h;
	return r;
}

SHIM_EXPORT CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	return stream_create(ph, flags, 0);
}

SHIM_EXPORT CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned int flags, int priority)
{
	return stream_create(ph, flags, priority);
}

/* A stream this process created (NULL for a default stream). */
static bool created_with(uint64_t h, unsigned int *flags, int *priority)
{
	uint32_t slot = shim_slot(h) % AXON_MAX_FRONTIER;
	bool ok;

	shim_lock();
	ok = created[slot].handle == h;
	if (ok) {
		*flags = created[slot].flags;
		*priority = created[slot].priority;
	}
	shim_unlock();
	return ok;
}

SHIM_EXPORT CUresult cuStreamGetPriority(CUstream s, int *priority)
{
	unsigned int flags = 0;
	uint64_t h;
	int prio = 0;
	CUresult r = shim_stream(s, &h);

	if (r)
		return r;
	if (!priority)
		return CUDA_ERROR_INVALID_VALUE;
	created_with(h, &flags, &prio);
	*priority = prio;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
	if (least)
		*least = 0;
	if (greatest)
		*greatest = AXON_STREAM_PRIORITY_GREATEST;
	return CUDA_SUCCESS;
}

/* Deferred: the stream's queued work still runs, as cuStreamDestroy's. */
CUresult shim_stream_destroy_handle(uint64_t h)
{
	struct axon_sqe *sqe;

	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_stream_destroy(sqe, h);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
}

static CUresult stream_destroy(CUstream s)
{
	uint64_t h;
	CUresult r;

	if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return CUDA_ERROR_INVALID_HANDLE;
	r = shim_stream(s, &h);
	return r ? r : shim_stream_destroy_handle(h);
}

SHIM_EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	return stream_destroy(s);
}

SHIM_EXPORT CUresult cuStreamDestroy(CUstream s)
{
	return stream_destroy(s);
}

/* Waits until everything queued on the stream so far is done. */
CUresult shim_stream_sync(uint64_t h)
{
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe;
	CUresult r;

	shim_lock();
	sqe = shim_sqe();
	if (!sqe) {
		shim_unlock();
		return shim_gone_error();
	}
	axon_prep_stream_sync(sqe, h);
	r = shim_sync_op(sqe, &w);
	shim_unlock();
	shim_devout_drain();
	return r;
}

static CUresult stream_sync(CUstream s)
{
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	if (!r)
		r = shim_capture_check_stream(h);	/* never waits on a capture */
	return r ? r : shim_stream_sync(h);
}

SHIM_EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	return shim_sync_point(stream_sync(s));	/* pools give back above threshold */
}

SHIM_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s)
{
	return SHIM_PER_THREAD(cuStreamSynchronize(s));
}

SHIM_EXPORT CUresult cuStreamQuery(CUstream s)
{
	uint32_t pending;
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	if (!r)
		r = shim_capture_check_stream(h);
	if (r)
		return r;
	SHIM_LOCAL();
	pending = axon_read_once(&shim.ring.dpage->pending_error);
	if (pending)
		return (CUresult)pending;
	if (shim_stream_busy_locally(h))	/* host functions (hostfunc.c) */
		return CUDA_ERROR_NOT_READY;
	return axon_frontier(&shim.ring, shim_slot(h)) >=
	       __atomic_load_n(&shim.seq[shim_slot(h) % AXON_MAX_FRONTIER], __ATOMIC_RELAXED)
	       ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

SHIM_EXPORT CUresult cuStreamQuery_ptsz(CUstream s)
{
	return SHIM_PER_THREAD(cuStreamQuery(s));
}

SHIM_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent ev, unsigned int flags)
{
	struct axon_sqe *sqe;
	uint64_t h;
	CUresult r;

	if (flags & ~(unsigned int)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	if (AXON_HANDLE_TYPE((uint64_t)(uintptr_t)ev) != AXON_HANDLE_EVENT)
		return CUDA_ERROR_INVALID_HANDLE;
	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_stream_wait_event(sqe, h, (uint64_t)(uintptr_t)ev);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		if (shim_capturing())	/* may fork h into a capture */
			shim_capture_note_wait(h, (uint64_t)(uintptr_t)ev);
		shim_stream_next(h);
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
}

SHIM_EXPORT CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent ev, unsigned int flags)
{
	return SHIM_PER_THREAD(cuStreamWaitEvent(s, ev, flags));
}

SHIM_EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned int *flags)
{
	unsigned int f = 0;
	uint64_t h;
	int prio = 0;
	CUresult r = shim_stream(s, &h);

	if (r)
		return r;
	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	created_with(h, &f, &prio);
	*flags = f;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

/*
 * The context a stream belongs to: the one it was created in, for a
 * stream made here, or the one whose default stream it is. Not the
 * current context: a stream stays its context's whichever is current.
 */
static struct shim_ctx *stream_ctx(uint64_t h)
{
	uint32_t slot = shim_slot(h) % AXON_MAX_FRONTIER;
	struct shim_ctx *sc = NULL;
	uint64_t ctx = 0;
	size_t i;

	shim_lock();
	if (created[slot].handle == h)
		ctx = created[slot].ctx;
	for (i = 0; !ctx && i < SHIM_MAX_CTX; i++)
		if (shim.ctx[i].handle && shim.ctx[i].default_stream == h)
			ctx = shim.ctx[i].handle;
	shim_unlock();
	if (ctx)
		sc = shim_ctx_of((CUcontext)(uintptr_t)ctx);
	return sc;
}

SHIM_EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx)
{
	struct shim_ctx *sc;
	uint64_t h;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	sc = stream_ctx(h);
	if (!sc)
		return CUDA_ERROR_INVALID_HANDLE;
	*pctx = (CUcontext)(uintptr_t)sc->handle;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamGetCtx_ptsz(CUstream s, CUcontext *pctx)
{
	return SHIM_PER_THREAD(cuStreamGetCtx(s, pctx));
}

/* No green contexts: a stream's green context is always NULL. */
SHIM_EXPORT CUresult cuStreamGetCtx_v2(CUstream s, CUcontext *pctx, CUgreenCtx *pgreen)
{
	CUresult r;

	if (!pctx && !pgreen)
		return CUDA_ERROR_INVALID_VALUE;
	if (pgreen)
		*pgreen = NULL;
	if (!pctx) {
		uint64_t h;

		return shim_stream(s, &h);
	}
	r = cuStreamGetCtx(s, pctx);
	return r;
}

SHIM_EXPORT CUresult cuStreamGetCtx_v2_ptsz(CUstream s, CUcontext *pctx, CUgreenCtx *pgreen)
{
	return SHIM_PER_THREAD(cuStreamGetCtx_v2(s, pctx, pgreen));
}

SHIM_EXPORT CUresult cuStreamGetDevice(CUstream s, CUdevice *device)
{
	struct shim_ctx *sc;
	uint64_t h;
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	sc = stream_ctx(h);
	if (!sc)
		return CUDA_ERROR_INVALID_HANDLE;
	*device = sc->device;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamGetDevice_ptsz(CUstream s, CUdevice *device)
{
	return SHIM_PER_THREAD(cuStreamGetDevice(s, device));
}

/*
 * "Unique for the life of the program": the daemon's handle is, as its
 * generation changes whenever a slot is reused. The legacy stream and
 * each thread's per-thread stream are streams of their own, so their ids
 * differ, as the driver's do.
 */
SHIM_EXPORT CUresult cuStreamGetId(CUstream s, unsigned long long *id)
{
	uint64_t h;
	CUresult r;

	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	*id = h;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamGetId_ptsz(CUstream s, unsigned long long *id)
{
	return SHIM_PER_THREAD(cuStreamGetId(s, id));
}
