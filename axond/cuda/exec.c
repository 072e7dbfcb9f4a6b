// SPDX-License-Identifier: MIT
/*
 * The executor (exec.h): one thread per device, with a context current,
 * turns work items into asynchronous driver calls on per-stream CUDA
 * streams; their completion is tracked in inflight.c. Device-wide items
 * (unmap, release, context sync) wait for all in-flight work first. Runs
 * of plain launches are issued as one graph replay (collapse.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include <sys/prctl.h>
#include <axon/libaxon.h>
#include "../axond.h"
#include "../backend.h"
#include "collapse.h"
#include "context.h"
#include "cugraph.h"
#include "devout.h"
#include "exec.h"
#include "inflight.h"
#include "launch.h"
#include "module.h"
#include "profile.h"
#include "state.h"
#include "vendor.h"
#include "vmm.h"
#include "window.h"

/*
 * cuStreamSetAttribute's values (ops/streamattr.c), given to the vendor's
 * stream once after each change, before the stream's next work. They were
 * checked as the driver checks them; should it still refuse one, the
 * stream keeps running with what it had, and the log says so.
 */
static void apply_attrs(struct stream *s, CUstream cs)
{
	struct axon_launch_attr a[STREAM_NATTRS];
	CUlaunchAttribute ca;
	unsigned int set, i;
	uint32_t gen;
	CUresult r;

	/* Pairs with the release store in op_stream_set_attr_issue. */
	if (__atomic_load_n(&s->attr_gen, __ATOMIC_ACQUIRE) == s->attr_applied)
		return;
	set = stream_attrs_copy(s, a, &gen);
	for (i = 0; i < STREAM_NATTRS; i++) {
		if (!(set & (1U << i)))
			continue;
		cuda_to_cu_attr(&a[i], &ca);
		r = vd.cuStreamSetAttribute(cs, (CUstreamAttrID)ca.id, &ca.value);
		if (r)
			axond_log(LOG_WARN, "stream attribute %u refused by the driver: %s",
				  a[i].id, vendor_err(r));
	}
	s->attr_applied = gen;
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
	apply_attrs(s, cs);
	return cs;
}

static CUdeviceptr dev_ptr(uint64_t a)
{
	return (CUdeviceptr)a;
}

/*
 * A rectangle: device sides are addresses in the client's window, the host
 * side the daemon's mapping of the data area or of a shared region, which
 * the driver knows as registered host memory.
 */
#define COPY_2D_ROWS_MAX	4096	/* the most driver calls a rectangle may cost */

static CUresult copy_2d(const typeof(((struct work *)0)->copy2d) *q, CUstream cs)
{
	CUDA_MEMCPY2D p = {
		.srcMemoryType = CU_MEMORYTYPE_DEVICE, .srcDevice = dev_ptr(q->src),
		.srcPitch = q->src_pitch,
		.dstMemoryType = CU_MEMORYTYPE_DEVICE, .dstDevice = dev_ptr(q->dst),
		.dstPitch = q->dst_pitch,
		.WidthInBytes = q->width, .Height = q->height,
	};
	CUresult r;
	uint64_t k;

	if (q->dir == AXON_COPY_2D_HTOD) {
		p.srcMemoryType = CU_MEMORYTYPE_HOST;
		p.srcDevice = 0;
		p.srcHost = q->host;
	} else if (q->dir == AXON_COPY_2D_DTOH) {
		p.dstMemoryType = CU_MEMORYTYPE_HOST;
		p.dstDevice = 0;
		p.dstHost = q->host;
	}
	r = vd.cuMemcpy2DAsync(&p, cs);
	if (r != CUDA_ERROR_INVALID_VALUE || q->height > COPY_2D_ROWS_MAX)
		return r;
	/* The driver may refuse pitches cuMemAllocPitch would not have
	 * given (device to device), or above its CU_DEVICE_ATTRIBUTE_MAX_PITCH
	 * (a raw client's), and has no asynchronous cuMemcpy2DUnaligned:
	 * row by row then, every row checked by ops/copy.c. */
	for (k = 0, r = CUDA_SUCCESS; k < q->height && !r; k++) {
		uint64_t d = q->dst + k * q->dst_pitch, s = q->src + k * q->src_pitch;

		if (q->dir == AXON_COPY_2D_HTOD)
			r = vd.cuMemcpyHtoDAsync(dev_ptr(d), q->host + k * q->src_pitch,
						 q->width, cs);
		else if (q->dir == AXON_COPY_2D_DTOH)
			r = vd.cuMemcpyDtoHAsync(q->host + k * q->dst_pitch, dev_ptr(s),
						 q->width, cs);
		else
			r = vd.cuMemcpyDtoDAsync(dev_ptr(d), dev_ptr(s), q->width, cs);
	}
	return r;
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
	case WORK_COPY_2D:
		return copy_2d(&w->copy2d, cs);
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

static bool device_wide(const struct work *w)
{
	return w->type == WORK_UNMAP || w->type == WORK_RELEASE ||
	       (w->type == WORK_MARKER && w->op == AXON_OP_CTX_SYNC);
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
	case WORK_COPY_2D:
		return true;
	case WORK_LAUNCH:
		return w->launch.func && w->launch.func->module &&
		       w->launch.func->module->backend_priv;
	default:
		return false;
	}
}

static void run_one(struct cu_dev *cd, struct work *w, const struct work *next)
{
	struct cu_gctx *g = cu_gctx_of(w);
	struct inflight *f;
	CUresult r;
	CUstream cs;

	if (cd->held && (w->stream != cd->held_tail->stream || g != cd->held_g ||
			 !coalescible(w)))
		cu_flush_held(cd);
	if (atomic_load(&w->client->dead_for_worker)) {
		cu_flush_held(cd);
		work_done(cu.d, w, 0);
		return;
	}
	if (w->stream && !g) {
		/* No context could be made for the client on this device. */
		cu_finish(cd, w, CUDA_ERROR_OUT_OF_MEMORY);
		return;
	}
	if (device_wide(w)) {
		/* Wait for everything queued before it. */
		cu_drain(cd, NULL);
		if (w->type == WORK_UNMAP) {
			if (w->unmap.phys)	/* cuMemMap'd (vmm.c) */
				cuda_phys_unmap(cu.d, w->client, w->unmap.addr,
						w->unmap.len, w->unmap.phys);
			else
				granules_release_queued(cu.d, w->client, w->unmap.addr,
							w->unmap.len);
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
		cu_finish(cd, w, g ? (int32_t)atomic_load(&g->poison) : 0);
		return;
	}
	if (g && atomic_load(&g->poison)) {
		/* As CUDA fails every later call in a poisoned context with
		 * its error: completed at once, the driver never sees it. */
		cu_flush_held(cd);
		cu_finish(cd, w, (int32_t)atomic_load(&g->poison));
		return;
	}
	if (g)
		cu_exec_enter(cd, g, w->client);
	cs = stream_of(w->stream, &r);
	if (!r && cuda_graph_immediate(w)) {
		/* A captured item is a node, not work: done once issued, with
		 * no tracking event (it would join the client's graph), after
		 * the stream's earlier work so that its frontier stays in
		 * order (graph.c). */
		if (w->capture)
			cu_drain(cd, w->stream);
		if (g)
			cu_exec_enter(cd, g, w->client);	/* polling may have switched */
		cu_finish(cd, w, issue(w, cs));
		return;
	}
	if (!r) {
		uint64_t t0 = prof_start();

		r = issue(w, cs);
		prof_end(&cd->prof, PROF_ISSUE, t0);
	}
	cu_devout_sink(NULL);
	if (r)
		cu_flush_held(cd);	/* they were issued before it */
	if (!r && next && next->stream == w->stream && cu_gctx_of(next) == g &&
	    coalescible(w) && coalescible(next) && !atomic_load(&g->poison)) {
		/*
		 * The next item of the same stream will say when this one is
		 * done: no event here (an event per item costs a driver call
		 * to record and one per poll to query). Only within a batch:
		 * holding the last one for the next batch cost more than it
		 * saved (measured on the H200: batches are mostly one item).
		 */
		cu_hold(cd, w, g, cs);
		return;
	}
	if (r) {
		if (w->type == WORK_LAUNCH || w->type >= WORK_HTOD)
			log_info("client %llu: %s failed: %s",
				 (unsigned long long)w->client->id,
				 axon_op_name(w->op), vendor_err(r));
		cu_finish(cd, w, r);
		return;
	}
	f = cu_inflight_record(cd, g, cs, &r);
	if (!f) {
		cu_flush_held(cd);
		/* The context was poisoned under us: that is the answer. */
		if (cu_sticky(r)) {
			cu_finish(cd, w, r);
			return;
		}
		/* Cannot track it: wait for it the slow way, so that it is
		 * never reported done before it is. */
		cu_drain(cd, NULL);
		cu_exec_enter(cd, g, w->client);
		r = vd.cuStreamSynchronize(cs);
		cu_devout_sink(NULL);
		cu_finish(cd, w, r);
		return;
	}
	f->w = w;
	/* The held items, issued before w on its stream, complete with it. */
	f->before = cd->held;
	cd->held = cd->held_tail = NULL;
	cu_track(cd, f);
}

/* A plain launch that a graph node can stand for (collapse.h): no launch
 * attributes (cuLaunchKernelEx), and coalescible (not captured; its output,
 * if it prints, is flushed with its run's). */
/* (Not on a stream given attributes: a replayed graph's kernel nodes
 * would not run with the stream's access policy window or domain.) */
static bool collapsible(const struct work *w)
{
	return w->type == WORK_LAUNCH && !w->launch.nattrs &&
	       w->launch.func && w->launch.func->backend_priv && coalescible(w) &&
	       !__atomic_load_n(&w->stream->attr_gen, __ATOMIC_RELAXED);
}

/*
 * Issues the run of collapsible launches that starts at w (the batch, in
 * order) as one graph replay, when it is long enough. Returns the rest of
 * the batch after the items it issued (which wait, held, for one event
 * after them: run_one, cu_flush_held), or w itself when it issued none;
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
	g = cu_gctx_of(w);
	if (!g || atomic_load(&g->poison) || atomic_load(&w->client->dead_for_worker))
		return w;
	for (x = w; x && len < COLLAPSE_MAX && x->stream == w->stream &&
	     cu_gctx_of(x) == g && collapsible(x); x = x->next)
		items[len++] = x;
	/* Powers of two: a loop of one kernel meets a handful of shapes. */
	for (n = 1; n * 2 <= len; n *= 2)
		;
	if (n < collapse_min || n < 2) {
		*direct = len;
		return w;
	}
	if (cd->held && (cd->held_tail->stream != w->stream || cd->held_g != g))
		cu_flush_held(cd);
	cu_exec_enter(cd, g, w->client);
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
	for (i = 0; i < n; i++)
		cu_hold(cd, items[i], g, cs);
	cd->prof.collapsed_items += axond_profiling ? n : 0;
	*issued = n;
	*direct = 0;
	return rest;
}

#define EXEC_SPIN_NS	(50ULL * 1000)
/* Timer slack of the executor's back-off sleeps (--poll-us). */
#define EXEC_TIMER_SLACK_NS	1000UL

/* Back-off between polls of work in flight (--poll-us; 0: none). */
uint64_t cu_poll_backoff_ns = 20000;

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

void *cu_executor(void *arg)
{
	struct cu_dev *cd = arg;
	uint64_t idle_since = 0;

	cu_thread_profile(&cd->prof);
	/* The back-off between polls is a short sleep (--poll-us); the
	 * default 50 us of timer slack would stretch it by up to that much,
	 * and a client waiting on a sync sees its work done that late. */
	prctl(PR_SET_TIMERSLACK, EXEC_TIMER_SLACK_NS, 0, 0, 0);
	cu_set_current(cd->ctx);
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
			/* Asleep, it holds no client's context (cu_exec_enter). */
			if (cd->cur) {
				pthread_mutex_unlock(&cd->lock);
				cu_exec_primary(cd);
				continue;
			}
			while (!cd->head && !cd->inflight && !cd->stop)
				pthread_cond_wait(&cd->cond, &cd->lock);
			t_take = prof_start();
		}
		if (cd->stop && !cd->head && !cd->inflight) {
			pthread_mutex_unlock(&cd->lock);
			cu_exec_primary(cd);
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
			 * the executor holds it (cu_exec_enter). */
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
		cu_flush_held(cd);
		if (cd->inflight) {
			uint64_t t0 = axond_now_ns();

			/* Busy while work is in flight: time between polls. */
			if (cd->last_poll && t0 > cd->last_poll)
				atomic_fetch_add(&cu.d->busy_ns[cd->ordinal], t0 - cd->last_poll);
			cd->last_poll = t0;
			if (cu_poll_inflight(cd)) {
				idle_since = 0;
			} else {
				uint64_t now = axond_now_ns();

				/* Spin briefly for sub-microsecond completion,
				 * then back off so a long kernel costs no core. */
				if (!idle_since)
					idle_since = now;
				if (now - idle_since > 50000 && cu_poll_backoff_ns) {
					struct timespec ts = { 0, (long)cu_poll_backoff_ns };

					nanosleep(&ts, NULL);
					prof_end(&cd->prof, PROF_BACKOFF, now);
				} else {
					cpu_relax();
				}
			}
		}
	}
}

void cuda_submit(struct axond *d, struct work *w)
{
	int dev = 0;
	struct cu_dev *cd;

	(void)d;
	if (w->stream) {
		dev = w->stream->ctx->device;
		/* Before the executor sees the work (the queue lock orders it);
		 * NULL fails the work there. */
		cu_client_gctx(w->client, dev);
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

