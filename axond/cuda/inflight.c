// SPDX-License-Identifier: MIT
/*
 * The executor's in-flight tracking (inflight.h): work issued to the
 * driver is done when an event recorded after it on its stream is, which
 * the executor polls (the brief's measured 0.7 us, against 10 us for host
 * callbacks). Plain asynchronous items followed by another of their stream
 * in the same batch need no event of their own: they are held, done with
 * the next one tracked. Whatever cannot be tracked is waited for the slow
 * way, after what is in flight before it, so nothing is ever reported done
 * before it is.
 */
#include <sched.h>
#include <stdlib.h>

#include <axon/libaxon.h>
#include "../axond.h"
#include "../backend.h"
#include "context.h"
#include "devout.h"
#include "inflight.h"
#include "module.h"
#include "profile.h"
#include "state.h"
#include "vendor.h"

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

void cu_finish(struct cu_dev *cd, struct work *w, int32_t res)
{
	struct cu_gctx *g = cu_gctx_of(w);
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
	cu_exec_enter(&cu.dev[f->g->dev], f->g, w->client);
	vd.cuEventSynchronize(f->ev);
	/* (fd 1 is read at context synchronisations and module loads,
	 * not here: no system call per launch) */
	cu_devout_sink(NULL);
}

/* Polls in-flight work; returns how many completed. */
int cu_poll_inflight(struct cu_dev *cd)
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
			cu_finish(cd, b, r);
		}
		cu_finish(cd, f->w, r);
		f->next = cd->spare;
		cd->spare = f;
		n++;
	}
	return n;
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

/* Appends f to the in-flight list, keeping submission order. */
void cu_track(struct cu_dev *cd, struct inflight *f)
{
	struct inflight **pp = &cd->inflight;

	f->t_tracked = prof_start();
	f->next = NULL;
	while (*pp)
		pp = &(*pp)->next;
	*pp = f;
}

/*
 * An in-flight entry for work just issued on cs in context g (current): an
 * event recorded after it, to poll. NULL when there is none (*res says why:
 * no memory, or the driver's refusal): the caller waits the slow way.
 */
struct inflight *cu_inflight_record(struct cu_dev *cd, struct cu_gctx *g, CUstream cs,
				    CUresult *res)
{
	struct inflight *f = cd->spare;
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;

	if (f)
		cd->spare = f->next;
	else
		f = malloc(sizeof(*f));
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
		f = NULL;
	}
	*res = r;
	return f;
}

/*
 * Polls until nothing of stream s (NULL: nothing at all) is in flight any
 * more, yielding the processor between polls that finish nothing.
 */
void cu_drain(struct cu_dev *cd, const struct stream *s)
{
	while (s ? stream_in_flight(cd, s) : cd->inflight != NULL)
		if (!cu_poll_inflight(cd))
			sched_yield();
}

/* Appends w to the held items: issued, tracked by the event of a later
 * item of its stream (cu_flush_held). */
void cu_hold(struct cu_dev *cd, struct work *w, struct cu_gctx *g, CUstream cs)
{
	w->next = NULL;
	if (cd->held)
		cd->held_tail->next = w;
	else
		cd->held = w;
	cd->held_tail = w;
	cd->held_g = g;
	cd->held_cs = cs;
}

/* One event for the held items, after the last of them; without one they
 * are waited for the slow way. */
void cu_flush_held(struct cu_dev *cd)
{
	struct work *last = cd->held_tail, *b;
	struct inflight *f;
	CUresult r;

	if (!cd->held)
		return;
	/* In the items' context: an event is made in the current one. */
	cu_exec_enter(cd, cd->held_g, last->client);
	f = cu_inflight_record(cd, cd->held_g, cd->held_cs, &r);
	if (f) {
		f->w = last;
		f->before = cd->held == last ? NULL : cd->held;
		for (b = cd->held; b && b->next != last; b = b->next)
			;
		if (b)
			b->next = NULL;
		cd->held = cd->held_tail = NULL;
		cu_track(cd, f);
		return;
	}
	/* No event: wait for the stream itself, after what is in flight
	 * before them, so that none is reported done before it is. */
	cu_drain(cd, NULL);
	cu_exec_enter(cd, cd->held_g, last->client);
	if (!cu_sticky(r))
		r = vd.cuStreamSynchronize(cd->held_cs);
	cu_devout_sink(NULL);
	while ((b = cd->held)) {
		cd->held = b->next;
		b->next = NULL;
		cu_finish(cd, b, r);
	}
	cd->held_tail = NULL;
}

/* Frees the executor's spare entries (the backend's fini, executors gone). */
void cu_inflight_fini(struct cu_dev *cd)
{
	while (cd->spare) {
		struct inflight *f = cd->spare;

		cd->spare = f->next;
		free(f);
	}
}
