// SPDX-License-Identifier: MIT
/*
 * Stream capture, client side. The daemon captures (AXON_OP_CAPTURE_BEGIN
 * and _END; Documentation/architecture.md §3); the shim keeps what the
 * driver API lets a program ask about a capture and the rules a capture
 * puts on other calls:
 *
 *   - which streams capture: the origin, and every stream that waited on an
 *     event recorded in the capture (the same rule the daemon follows, in
 *     the same order, since both see the calls in submission order);
 *   - each capture's id, graph, mode, beginning thread, and whether a call
 *     invalidated it;
 *   - the thread's capture interaction mode (cuThreadExchangeStreamCaptureMode).
 *
 * Calls that conflict with a capture fail with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate it, as the driver
 * does: synchronising or querying a capturing stream, a legacy stream
 * callback on it, and, unless the calling thread is in relaxed mode,
 * "potentially unsafe" calls (allocation, freeing, synchronous copies,
 * context synchronisation) while its own non-relaxed capture is open or
 * another thread's global one is. Querying or synchronising an event
 * recorded in an open capture fails the same way but leaves the capture
 * valid. cuStreamEndCapture of an invalidated capture ends the daemon's
 * capture, drops the graph and returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED.
 *
 * Host functions (cuLaunchHostFunc, and the host side of copies to and
 * from memory the daemon cannot see, copy.c) become the capture's host
 * work (shim.h): nodes the shim runs between the parts of the daemon's
 * graph at each launch (graph.c). The capture owns them until its end
 * hands them to the graph.
 *
 * Locking: cap_lock protects everything here; it may be taken with
 * shim.lock held (the event and stream hooks), never the other way round.
 * The host-node lock (host_node_lock) is taken before shim.lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "ptstream.h"
#include "forkreg.h"

struct capture {
	uint64_t graph;			/* the daemon's graph (the CUgraph) */
	uint64_t id;			/* unique in the process, never 0 */
	uint64_t origin;		/* the stream it began on */
	CUstreamCaptureMode mode;
	pthread_t thread;		/* the thread that began it */
	bool invalidated;
	struct shim_hostwork *hw;	/* its host nodes, NULL until one */
};

struct cap_stream {
	uint64_t stream;
	struct capture *cap;
};

struct cap_event {
	uint64_t event;
	struct capture *cap;
};

static pthread_mutex_t cap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t host_node_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cap_stream *cstreams;
static uint32_t ncstreams, capcstreams;
static struct cap_event *cevents;
static uint32_t ncevents, capcevents;
static uint64_t next_id = 1;
/* Open captures (shim.h's fast test reads it without the lock). */
unsigned int shim_ncaptures;

static __thread CUstreamCaptureMode thread_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static bool grow(void **p, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t ncap;
	void *q;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 8;
	q = realloc(*p, (size_t)ncap * size);
	if (!q)
		return false;
	*p = q;
	*cap = ncap;
	return true;
}

/* cap_lock held */
static struct capture *capture_of(uint64_t stream)
{
	uint32_t i;

	for (i = 0; i < ncstreams; i++)
		if (cstreams[i].stream == stream)
			return cstreams[i].cap;
	return NULL;
}

static struct cap_event *event_entry(uint64_t event)
{
	uint32_t i;

	for (i = 0; i < ncevents; i++)
		if (cevents[i].event == event)
			return &cevents[i];
	return NULL;
}

static bool add_stream(uint64_t stream, struct capture *cap)
{
	if (!grow((void **)&cstreams, &capcstreams, ncstreams, sizeof(*cstreams)))
		return false;
	cstreams[ncstreams++] = (struct cap_stream){ stream, cap };
	return true;
}

/* Forgets cap's streams and events; cap_lock held. Its host work (which
 * the caller took) is not freed here: not under shim.lock. */
static void capture_drop(struct capture *cap)
{
	uint32_t i;

	for (i = 0; i < ncstreams;)
		if (cstreams[i].cap == cap)
			cstreams[i] = cstreams[--ncstreams];
		else
			i++;
	for (i = 0; i < ncevents;)
		if (cevents[i].cap == cap)
			cevents[i] = cevents[--ncevents];
		else
			i++;
	__atomic_store_n(&shim_ncaptures, shim_ncaptures - 1, __ATOMIC_RELAXED);
	free(cap);
}

/* ---- hooks for the rest of the shim ------------------------------------- */

void shim_capture_note_record(uint64_t event, uint64_t stream)
{
	struct cap_event *e;
	struct capture *cap;

	pthread_mutex_lock(&cap_lock);
	cap = capture_of(stream);
	e = event_entry(event);
	if (!cap) {
		if (e)		/* recorded outside any capture now */
			*e = cevents[--ncevents];
	} else if (e) {
		e->cap = cap;
	} else if (grow((void **)&cevents, &capcevents, ncevents, sizeof(*cevents))) {
		cevents[ncevents++] = (struct cap_event){ event, cap };
	} else {
		cap->invalidated = true;	/* cannot follow it: no graph */
	}
	pthread_mutex_unlock(&cap_lock);
}

void shim_capture_note_wait(uint64_t stream, uint64_t event)
{
	struct cap_event *e;

	pthread_mutex_lock(&cap_lock);
	e = event_entry(event);
	/* A wait on an event of a capture forks the stream into it. */
	if (e && !capture_of(stream) && !add_stream(stream, e->cap))
		e->cap->invalidated = true;
	pthread_mutex_unlock(&cap_lock);
}

static CUresult conflict(struct capture *cap)
{
	if (!cap)
		return CUDA_SUCCESS;
	cap->invalidated = true;
	return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

bool shim_stream_capturing(uint64_t stream)
{
	bool r;

	if (!shim_capturing())
		return false;
	pthread_mutex_lock(&cap_lock);
	r = capture_of(stream) != NULL;
	pthread_mutex_unlock(&cap_lock);
	return r;
}

void shim_capture_invalidate(uint64_t stream)
{
	(void)shim_capture_check_stream(stream);	/* conflict() */
}

void shim_capture_host_lock(void)
{
	pthread_mutex_lock(&host_node_lock);
}

void shim_capture_host_unlock(void)
{
	pthread_mutex_unlock(&host_node_lock);
}

int shim_capture_host_add_locked(uint64_t stream, const struct shim_hostnode *n,
				 uint32_t hidden, uint32_t *index)
{
	struct shim_hostwork *hw;
	struct capture *cap;
	int r = 1;

	pthread_mutex_lock(&cap_lock);
	cap = capture_of(stream);
	if (!cap) {
		r = 0;
		goto out;
	}
	hw = cap->hw;
	if (!hw) {
		hw = calloc(1, sizeof(*hw));
		if (!hw)
			goto oom;
		hw->refs = 1;
		cap->hw = hw;
	}
	if (!grow((void **)&hw->node, &hw->cap, hw->n, sizeof(*hw->node)))
		goto oom;
	*index = hw->n;
	hw->node[hw->n++] = *n;
	hw->hidden += hidden;
	goto out;
oom:
	(void)conflict(cap);	/* a node missing: nothing to run */
	r = -1;
out:
	pthread_mutex_unlock(&cap_lock);
	return r;
}

CUresult shim_capture_host_send_locked(uint64_t stream, uint32_t index)
{
	struct axon_sqe *sqe = shim_sqe();

	if (!sqe)
		return shim_gone_error();
	axon_prep_host_func(sqe, stream, 0, AXON_HOST_FUNC_NODE, index);
	axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
	shim_flush();
	return CUDA_SUCCESS;
}

CUresult shim_capture_check_stream_slow(uint64_t stream)
{
	CUresult r;

	pthread_mutex_lock(&cap_lock);
	r = conflict(capture_of(stream));
	pthread_mutex_unlock(&cap_lock);
	return r;
}

CUresult shim_capture_check_event_slow(uint64_t event)
{
	struct cap_event *e;
	CUresult r;

	/* What NVIDIA's driver answers (H200, 580.159.04, tests/gpu/drv-graph):
	 * CAPTURED_EVENT, and the capture is invalidated. */
	pthread_mutex_lock(&cap_lock);
	e = event_entry(event);
	r = CUDA_SUCCESS;
	if (e) {
		e->cap->invalidated = true;
		r = CUDA_ERROR_CAPTURED_EVENT;
	}
	pthread_mutex_unlock(&cap_lock);
	return r;
}

CUresult shim_capture_unsafe_slow(void)
{
	pthread_t self = pthread_self();
	CUresult r = CUDA_SUCCESS;
	uint32_t i;

	if (thread_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&cap_lock);
	for (i = 0; i < ncstreams; i++) {
		struct capture *cap = cstreams[i].cap;
		bool mine = pthread_equal(cap->thread, self);

		if (cstreams[i].stream != cap->origin)
			continue;	/* each capture once */
		if ((mine && cap->mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
		    (!mine && thread_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
		     cap->mode == CU_STREAM_CAPTURE_MODE_GLOBAL))
			r = conflict(cap);
	}
	pthread_mutex_unlock(&cap_lock);
	return r;
}

CUresult shim_capture_ctx_sync_slow(void)
{
	CUresult r = CUDA_SUCCESS;
	uint32_t i;

	/* Waiting for the whole context waits for the capturing streams. */
	pthread_mutex_lock(&cap_lock);
	for (i = 0; i < ncstreams; i++)
		if (cstreams[i].stream == cstreams[i].cap->origin)
			r = conflict(cstreams[i].cap);
	pthread_mutex_unlock(&cap_lock);
	return r;
}

/* After fork: the child has no captures (its parent's streams are gone;
 * their host work is left on the heap, as graph.c's). */
static void capture_forget(void)
{
	free(cstreams);
	free(cevents);
	cstreams = NULL;
	cevents = NULL;
	ncstreams = capcstreams = ncevents = capcevents = 0;
	shim_ncaptures = 0;
	pthread_mutex_init(&cap_lock, NULL);
	pthread_mutex_init(&host_node_lock, NULL);
}

__attribute__((constructor)) static void register_capture_forget(void)
{
	shim_fork_register(capture_forget);
}

/* ---- begin and end --------------------------------------------------------- */

static CUresult begin_capture(CUstream s, CUstreamCaptureMode mode)
{
	struct shim_waiter w = { 0 };
	struct capture *cap;
	uint64_t h;
	CUresult r;

	if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
	    mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	/* The legacy stream synchronises with everything: it cannot capture. */
	if ((!s && !shim_pt_calls) || s == CU_STREAM_LEGACY)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	r = shim_stream(s, &h);
	if (r)
		return r;
	cap = calloc(1, sizeof(*cap));
	if (!cap)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&cap_lock);
	if (capture_of(h)) {
		pthread_mutex_unlock(&cap_lock);
		free(cap);
		return CUDA_ERROR_ILLEGAL_STATE;
	}
	pthread_mutex_unlock(&cap_lock);

	shim_lock();
	{
		struct axon_sqe *sqe = shim_sqe();

		if (!sqe) {
			shim_unlock();
			free(cap);
			return shim_gone_error();
		}
		axon_prep_capture_begin(sqe, h, mode);
		r = shim_sync_op(sqe, &w);
	}
	if (!r) {
		/* Under shim.lock: no op of this stream is submitted between
		 * the daemon's begin and our knowing it. */
		pthread_mutex_lock(&cap_lock);
		cap->graph = w.aux[0];
		cap->id = next_id++;
		cap->origin = h;
		cap->mode = mode;
		cap->thread = pthread_self();
		if (add_stream(h, cap)) {
			__atomic_store_n(&shim_ncaptures, shim_ncaptures + 1, __ATOMIC_RELAXED);
			cap = NULL;
		} else {
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
		pthread_mutex_unlock(&cap_lock);
		if (r) {
			/* The daemon captures; end it there and drop its graph. */
			struct shim_waiter w2 = { 0 };
			struct axon_sqe *sqe = shim_sqe();

			if (sqe) {
				axon_prep_capture_end(sqe, h, w.aux[0]);
				shim_sync_op(sqe, &w2);
				shim_call_locked(&w2, axon_prep_graph_destroy, w.aux[0]);
			}
		}
	}
	shim_unlock();
	free(cap);
	return r;
}

SHIM_EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	return begin_capture(s, mode);
}

SHIM_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
	return SHIM_PER_THREAD(begin_capture(s, mode));
}

/* CUDA 10.0's form, from before capture modes: it behaved as global. */
SHIM_EXPORT CUresult cuStreamBeginCapture(CUstream s)
{
	return begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

SHIM_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
	return SHIM_PER_THREAD(begin_capture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
}

static CUresult end_capture(CUstream s, CUgraph *out)
{
	struct shim_waiter w = { 0 };
	struct shim_hostwork *hw, *stale = NULL;
	struct capture *cap;
	struct axon_sqe *sqe;
	bool invalidated;
	uint64_t h, graph, nodes;
	CUresult r;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	/* Both locks: the capture is looked up and dropped at once, so two
	 * threads ending it cannot both send the END; and not between a host
	 * node's joining it and its NODE (the host-node lock). */
	shim_capture_host_lock();
	shim_lock();
	pthread_mutex_lock(&cap_lock);
	cap = capture_of(h);
	if (!cap)
		r = CUDA_ERROR_ILLEGAL_STATE;
	else if (cap->origin != h)
		r = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	/* Only the beginning thread ends a non-relaxed capture. */
	else if (cap->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
		 !pthread_equal(cap->thread, pthread_self()))
		r = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
	if (r) {
		pthread_mutex_unlock(&cap_lock);
		shim_unlock();
		shim_capture_host_unlock();
		return r;
	}
	invalidated = cap->invalidated;
	graph = cap->graph;
	hw = cap->hw;
	capture_drop(cap);
	pthread_mutex_unlock(&cap_lock);
	shim_capture_host_unlock();
	sqe = shim_sqe();
	if (!sqe) {
		shim_unlock();
		shim_hostwork_put(hw);
		return shim_gone_error();
	}
	axon_prep_capture_end(sqe, h, graph);
	r = shim_sync_op(sqe, &w);
	/* What the driver counts: the daemon's nodes less ours. */
	nodes = w.aux[0];
	if (hw)
		nodes = nodes > hw->hidden ? nodes - hw->hidden : 0;
	if (!r && !invalidated && !shim_graph_note(graph, nodes, hw, &stale))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else if (!r && !invalidated)
		hw = NULL;	/* the graph's now */
	if (r || invalidated) {
		/* Nothing to run: the graph only served the capture. */
		sqe = shim_sqe();
		if (sqe) {
			axon_prep_graph_destroy(sqe, graph);
			axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
			shim_flush();
		}
		if (!r || r == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
			r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
		*out = NULL;
	} else {
		*out = (CUgraph)(uintptr_t)graph;
	}
	shim_unlock();
	shim_hostwork_put(hw);	/* no graph took it */
	shim_hostwork_put(stale);
	return r;
}

SHIM_EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *out)
{
	return end_capture(s, out);
}

SHIM_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *out)
{
	return SHIM_PER_THREAD(end_capture(s, out));
}

/* ---- queries (Local) ---------------------------------------------------- */

static CUresult capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
			     CUgraph *graph, const CUgraphNode **deps,
			     const CUgraphEdgeData **edges, size_t *ndeps)
{
	struct capture *cap;
	uint64_t h;
	CUresult r;

	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	SHIM_LOCAL();
	pthread_mutex_lock(&cap_lock);
	cap = capture_of(h);
	if (!cap)
		*status = CU_STREAM_CAPTURE_STATUS_NONE;
	else if (cap->invalidated)
		*status = CU_STREAM_CAPTURE_STATUS_INVALIDATED;
	else
		*status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	/* The outputs other than the status mean something only while the
	 * capture is active; they are cleared otherwise, so that a careless
	 * caller reads zeros. Node handles are not exposed: the set of nodes
	 * the next op will depend on is reported empty. */
	if (id)
		*id = cap ? cap->id : 0;
	if (graph)
		*graph = cap ? (CUgraph)(uintptr_t)cap->graph : NULL;
	pthread_mutex_unlock(&cap_lock);
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (ndeps)
		*ndeps = 0;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{
	return capture_info(s, status, NULL, NULL, NULL, NULL, NULL);
}

SHIM_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *status)
{
	return SHIM_PER_THREAD(capture_info(s, status, NULL, NULL, NULL, NULL, NULL));
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *status,
					    cuuint64_t *id)
{
	return capture_info(s, status, id, NULL, NULL, NULL, NULL);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream s, CUstreamCaptureStatus *status,
						 cuuint64_t *id)
{
	return SHIM_PER_THREAD(capture_info(s, status, id, NULL, NULL, NULL, NULL));
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *status,
					       cuuint64_t *id, CUgraph *graph,
					       const CUgraphNode **deps, size_t *ndeps)
{
	return capture_info(s, status, id, graph, deps, NULL, ndeps);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream s, CUstreamCaptureStatus *status,
						    cuuint64_t *id, CUgraph *graph,
						    const CUgraphNode **deps, size_t *ndeps)
{
	return SHIM_PER_THREAD(capture_info(s, status, id, graph, deps, NULL, ndeps));
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *status,
					       cuuint64_t *id, CUgraph *graph,
					       const CUgraphNode **deps,
					       const CUgraphEdgeData **edges, size_t *ndeps)
{
	return capture_info(s, status, id, graph, deps, edges, ndeps);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *status,
						    cuuint64_t *id, CUgraph *graph,
						    const CUgraphNode **deps,
						    const CUgraphEdgeData **edges, size_t *ndeps)
{
	return SHIM_PER_THREAD(capture_info(s, status, id, graph, deps, edges, ndeps));
}

/* The calling thread's capture interaction mode (see the comment at top). */
SHIM_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode m;

	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	m = *mode;
	if (m != CU_STREAM_CAPTURE_MODE_GLOBAL && m != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    m != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	*mode = thread_mode;
	thread_mode = m;
	return CUDA_SUCCESS;
}
