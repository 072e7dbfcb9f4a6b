// SPDX-License-Identifier: MIT
/*
 * Events. A record is a deferred stream-ordered operation; the shim
 * remembers which stream slot and sequence number it got, so
 * cuEventQuery is a comparison against the frontier (no crossing), and
 * cuEventSynchronize crosses only when the event is not complete yet.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "ptstream.h"
#include "synchooks.h"
#include "forkreg.h"

CUresult shim_stream_sync(uint64_t h);

/* Client-side state of each event, by handle index (grown as needed). */
static struct shim_event **events;
static uint32_t nevents;

static struct shim_event *event_of(CUevent ev)
{
	uint64_t h = (uint64_t)(uintptr_t)ev;
	uint32_t i = AXON_HANDLE_INDEX(h);

	if (AXON_HANDLE_TYPE(h) != AXON_HANDLE_EVENT || i >= nevents || !events[i] ||
	    events[i]->handle != h)
		return NULL;
	return events[i];
}

/* The event, with the shim lock taken; NULL, not taken, for none of ours. */
static struct shim_event *event_locked(CUevent ev)
{
	struct shim_event *e;

	shim_lock();
	e = event_of(ev);
	if (!e)
		shim_unlock();
	return e;
}

/* After fork: the parent's events mean nothing to the child. */
static void events_forget(void)
{
	uint32_t i;

	for (i = 0; i < nevents; i++)
		free(events[i]);
	free(events);
	events = NULL;
	nevents = 0;
}

__attribute__((constructor)) static void register_events_forget(void)
{
	shim_fork_register(events_forget);
}

SHIM_EXPORT CUresult cuEventCreate(CUevent *ph, unsigned int flags)
{
	struct shim_waiter w = { 0 };
	struct shim_event *e;
	struct shim_ctx *sc;
	struct axon_sqe *sqe;
	CUresult r;

	if (!ph)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	sqe = shim_sqe();
	if (!sqe) {
		shim_unlock();
		free(e);
		return shim_gone_error();
	}
	axon_prep_event_create(sqe, sc->handle, flags);
	r = shim_sync_op(sqe, &w);
	if (!r) {
		uint32_t i = AXON_HANDLE_INDEX(w.aux[0]);

		if (i >= nevents) {
			uint32_t n = nevents ? nevents : 64;
			struct shim_event **ne;

			while (n <= i)
				n *= 2;
			ne = realloc(events, n * sizeof(*ne));
			if (!ne) {
				r = CUDA_ERROR_OUT_OF_MEMORY;
				goto out;
			}
			memset(ne + nevents, 0, (n - nevents) * sizeof(*ne));
			events = ne;
			nevents = n;
		}
		e->handle = w.aux[0];
		e->flags = flags;
		free(events[i]);
		events[i] = e;
		e = NULL;
		*ph = (CUevent)(uintptr_t)w.aux[0];
	}
out:
	shim_unlock();
	free(e);
	return r;
}

static CUresult event_destroy(CUevent ev)
{
	struct shim_event *e;
	struct axon_sqe *sqe;

	e = event_locked(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_event_destroy(sqe, e->handle);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_flush();
	}
	events[AXON_HANDLE_INDEX(e->handle)] = NULL;
	free(e);
	shim_unlock();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuEventDestroy_v2(CUevent ev)
{
	return event_destroy(ev);
}

SHIM_EXPORT CUresult cuEventDestroy(CUevent ev)
{
	return event_destroy(ev);
}

SHIM_EXPORT CUresult cuEventRecord(CUevent ev, CUstream s)
{
	struct shim_event *e;
	struct axon_sqe *sqe;
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	if (r)
		return r;
	e = event_locked(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_event_record(sqe, h, e->handle);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		e->slot = shim_slot(h);
		e->stream = h;
		e->seq = shim_stream_next(h);
		e->recorded = true;
		if (shim_capturing())	/* recorded in a capture: fork/join */
			shim_capture_note_record(e->handle, h);
		/* Published now: a query loop must see it progress. */
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
}

SHIM_EXPORT CUresult cuEventRecord_ptsz(CUevent ev, CUstream s)
{
	return SHIM_PER_THREAD(cuEventRecord(ev, s));
}

SHIM_EXPORT CUresult cuEventRecordWithFlags(CUevent ev, CUstream s, unsigned int flags)
{
	if (flags & ~(unsigned int)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	return cuEventRecord(ev, s);
}

SHIM_EXPORT CUresult cuEventRecordWithFlags_ptsz(CUevent ev, CUstream s, unsigned int flags)
{
	return SHIM_PER_THREAD(cuEventRecordWithFlags(ev, s, flags));
}

SHIM_EXPORT CUresult cuEventQuery(CUevent ev)
{
	struct shim_event *e;
	CUresult r;

	shim_lock();
	e = event_of(ev);
	if (!e)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (!e->recorded)
		r = CUDA_SUCCESS;	/* never recorded: complete, as CUDA says */
	else if ((r = shim_capture_check_event(e->handle)))
		;			/* recorded in a capture: no such state */
	else
		r = axon_frontier(&shim.ring, e->slot) >= e->seq ? CUDA_SUCCESS
								  : CUDA_ERROR_NOT_READY;
	shim_unlock();
	SHIM_LOCAL();
	return r;
}

static CUresult event_sync(CUevent ev)
{
	struct shim_event *e;
	uint64_t seq, stream;
	uint32_t slot;
	CUresult r;
	int spins;

	e = event_locked(ev);
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	slot = e->slot;
	seq = e->seq;
	stream = e->stream;
	if (!e->recorded) {
		shim_unlock();
		return CUDA_SUCCESS;
	}
	r = shim_capture_check_event(e->handle);
	if (r) {
		shim_unlock();
		return r;
	}
	shim_flush();
	shim_unlock();
	/* Frontier first: a finished event costs no crossing. */
	for (spins = 0; spins < 2000; spins++) {
		if (axon_frontier(&shim.ring, slot) >= seq) {
			SHIM_LOCAL();
			shim_devout_drain();
			return (CUresult)axon_read_once(&shim.ring.dpage->pending_error);
		}
		__builtin_ia32_pause();
	}
	/* Otherwise wait on the event's stream: it may hold later work too,
	 * which only makes the wait longer, never wrong. */
	r = shim_stream_sync(stream);
	if (r != CUDA_ERROR_INVALID_HANDLE)
		return r;
	/* The stream was destroyed meanwhile: its work still finishes. */
	while (axon_frontier(&shim.ring, slot) < seq) {
		if (axon_daemon_alive(&shim.ring))
			return shim_gone_error();
		sched_yield();
	}
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuEventSynchronize(CUevent ev)
{
	return shim_sync_point(event_sync(ev));	/* pools give back above threshold */
}

static CUresult elapsed(float *ms, CUevent start, CUevent end)
{
	struct shim_waiter w = { 0 };
	struct shim_event *a, *b;
	CUresult r;

	if (!ms)
		return CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	a = event_of(start);
	b = event_of(end);
	if (!a || !b) {
		shim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	r = shim_call_locked(&w, axon_prep_event_elapsed, a->handle, b->handle);
	if (!r)
		*ms = (float)((double)(int64_t)w.aux[0] / 1e6);
	shim_unlock();
	return r;
}

SHIM_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end)
{
	return elapsed(ms, start, end);
}

SHIM_EXPORT CUresult cuEventElapsedTime_v2(float *ms, CUevent start, CUevent end)
{
	return elapsed(ms, start, end);
}
