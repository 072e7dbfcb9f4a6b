// SPDX-License-Identifier: MIT
/*
 * Stream capture (AXON_OP_CAPTURE_BEGIN, AXON_OP_CAPTURE_END), and the
 * tracking that decides which work items a capture takes: the capture
 * hook that work_submit calls (work.h), registered here.
 *
 * The daemon captures, not the shim: the client's stream-ordered ops go to
 * the daemon as usual and the backend turns the ones tagged with a capture
 * into graph nodes (axond/graph.h). What the nodes name joins the graph's
 * refs (graphrefs.c). A stream taking part in a capture is in
 * STREAM_CAPTURE mode until the capture ends.
 *
 * Host functions captured (HOST_FUNC NODE) cut the graph into parts; the
 * client launches them one at a time and runs its functions in between
 * (graph.h).
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "ops.h"
#include "graphclient.h"
#include "graphrefs.h"
#include "../graph.h"
#include "../legacy.h"
#include "../work.h"

static struct capture_stream *cs_find(struct graph_client *gc, uint64_t stream)
{
	uint32_t i;

	for (i = 0; i < gc->ncs; i++)
		if (gc->cs[i].stream == stream)
			return &gc->cs[i];
	return NULL;
}

static struct capture_event *ce_find(struct graph_client *gc, uint64_t event)
{
	uint32_t i;

	for (i = 0; i < gc->nce; i++)
		if (gc->ce[i].event == event)
			return &gc->ce[i];
	return NULL;
}

static void ce_drop(struct graph_client *gc, struct capture_event *e)
{
	*e = gc->ce[--gc->nce];
}

static struct graph_member *member_of(struct graph *g, uint64_t stream)
{
	uint32_t i;

	for (i = 0; i < g->nmembers; i++)
		if (g->members[i].stream == stream)
			return &g->members[i];
	return NULL;
}

/* Adds stream s to g's capture; false when out of memory. */
static bool capture_join(struct axond *d, struct client *c, struct graph_client *gc,
			 struct graph *g, struct stream *s)
{
	if (!graph_grow((void **)&g->members, &g->capmembers, g->nmembers, sizeof(*g->members)) ||
	    !graph_grow((void **)&gc->cs, &gc->capcs, gc->ncs, sizeof(*gc->cs)))
		return false;
	g->members[g->nmembers++] = (struct graph_member){ .stream = s->handle };
	gc->cs[gc->ncs++] = (struct capture_stream){ .stream = s->handle, .graph = g->handle };
	legacy_capture_begin(d, c, s);
	s->mode |= STREAM_CAPTURE;
	return true;
}

/* Closes g's capture: no stream or event refers to it any more. */
static void capture_close(struct client *c, struct graph *g)
{
	struct graph_client *gc = c->graphs;
	uint32_t i;

	for (i = 0; i < gc->ncs;)
		if (gc->cs[i].graph == g->handle) {
			struct stream *s = handle_lookup(&c->streams, gc->cs[i].stream,
							 AXON_HANDLE_STREAM);

			if (s)
				s->mode &= ~STREAM_CAPTURE;
			gc->cs[i] = gc->cs[--gc->ncs];
		} else {
			i++;
		}
	for (i = 0; i < gc->nce;)
		if (gc->ce[i].graph == g->handle)
			ce_drop(gc, &gc->ce[i]);
		else
			i++;
	g->state = GRAPH_ENDED;
	c->ncapturing--;
}

static void invalidate(struct graph *g, uint32_t res)
{
	if (!g->capture_error)
		g->capture_error = res;
}

/* The item fails with res instead of running, and invalidates g. */
static void refuse(struct graph *g, struct work *w, int32_t res)
{
	if (w->type == WORK_LAUNCH)
		free(w->launch.args);
	w->type = WORK_ADVANCE;
	w->res = res;
	invalidate(g, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
}

/* A node of g on member m: what it names joins g's refs. */
static void add_node(const struct axond *d, struct graph *g, struct graph_member *m,
		     struct work *w)
{
	struct graph_client *gc = w->client->graphs;
	bool ok = true;

	if (gc->nodes >= d->cfg.max_graph_nodes) {
		if (!g->capture_error)	/* once per capture */
			log_info("client %llu: a capture passed --max-graph-nodes=%u",
				 (unsigned long long)w->client->id, d->cfg.max_graph_nodes);
		w->client->stats.limit_refused++;
		refuse(g, w, CUDA_ERROR_OUT_OF_MEMORY);
		return;
	}
	switch (w->type) {
	case WORK_DTOD:
		ok = graph_refs_add_range(&g->refs, w->copy.dst, w->copy.len) &&
		     graph_refs_add_range(&g->refs, w->copy.src, w->copy.len);
		break;
	case WORK_HTOD:
		ok = graph_refs_add_range(&g->refs, w->copy.dst, w->copy.len) &&
		     graph_refs_add_host(&g->refs, w->copy.src, w->copy.len, w->copy.host);
		break;
	case WORK_DTOH:
		ok = graph_refs_add_host(&g->refs, w->copy.dst, w->copy.len, w->copy.host) &&
		     graph_refs_add_range(&g->refs, w->copy.src, w->copy.len);
		break;
	case WORK_HOST_NODE:
		/* The shim numbers its host nodes as it sends them: the same
		 * order, or the parts would not be the ones it runs. */
		if (w->host_node.index != g->nhost) {
			refuse(g, w, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
			return;
		}
		g->nhost++;
		break;
	case WORK_COPY_2D: {
		const typeof(w->copy2d) *q = &w->copy2d;
		/* The spans ops/copy.c checked (height >= 1). */
		uint64_t dext = q->dst_pitch * (q->height - 1) + q->width;
		uint64_t sext = q->src_pitch * (q->height - 1) + q->width;

		if (q->dir == AXON_COPY_2D_HTOD)
			ok = graph_refs_add_range(&g->refs, q->dst, dext) &&
			     graph_refs_add_host(&g->refs, q->src, sext, q->host);
		else if (q->dir == AXON_COPY_2D_DTOH)
			ok = graph_refs_add_host(&g->refs, q->dst, dext, q->host) &&
			     graph_refs_add_range(&g->refs, q->src, sext);
		else
			ok = graph_refs_add_range(&g->refs, q->dst, dext) &&
			     graph_refs_add_range(&g->refs, q->src, sext);
		break;
	}
	case WORK_MEMSET: {
		uint64_t row = w->memset.width * w->memset.elem_size;

		ok = graph_refs_add_range(&g->refs, w->memset.dst,
				    w->memset.pitch * (w->memset.height - 1) + row);
		break;
	}
	case WORK_LAUNCH:
		ok = graph_refs_add_func(&g->refs, w->launch.func->handle);
		break;
	case WORK_GRAPH_LAUNCH:
		ok = graph_refs_merge(&g->refs, &w->graph.exec->refs);
		break;
	default:
		return;
	}
	if (!ok) {
		refuse(g, w, CUDA_ERROR_OUT_OF_MEMORY);
		return;
	}
	m->nodes++;
	g->nnodes++;
	gc->nodes++;
}

/* A host node only means something in a capture: elsewhere it fails. */
static void not_captured(struct work *w)
{
	if (w->type != WORK_HOST_NODE)
		return;
	w->type = WORK_ADVANCE;
	w->res = CUDA_ERROR_ILLEGAL_STATE;
}

/*
 * The capture hook (work.h): work_submit calls it for the items a capture
 * may take, in submission order, before the backend sees them. Tags
 * the items of capturing streams with their graph (and the part of it,
 * after the host nodes taken so far), follows forks and joins through
 * events, and refuses what a graph cannot hold: host copies staged in the
 * data area (their host side is a buffer the shim reuses, stale at any
 * replay; copies of shared host regions are nodes), a wait on work
 * outside the capture, a merge of two captures.
 */
static void graph_capture_track(struct axond *d, struct work *w)
{
	struct client *c = w->client;
	struct graph_client *gc = c->graphs;
	struct capture_stream *cs;
	struct capture_event *ce;
	struct graph_member *m;
	struct graph *g;

	if (!gc || !c->ncapturing || !w->stream) {
		not_captured(w);
		return;
	}
	switch (w->type) {
	case WORK_ADVANCE: case WORK_HTOD: case WORK_DTOH: case WORK_DTOD:
	case WORK_MEMSET: case WORK_COPY_2D: case WORK_LAUNCH: case WORK_EVENT_RECORD:
	case WORK_WAIT_EVENT: case WORK_MARKER: case WORK_GRAPH_LAUNCH:
	case WORK_HOST_NODE:
		break;
	default:
		return;		/* the capture's own items, device-wide items */
	}
	cs = cs_find(gc, w->stream->handle);
	if (!cs) {
		not_captured(w);
		/* Not capturing: a record here makes the event an outside one;
		 * a wait on an event of an open capture forks this stream in. */
		if (w->type == WORK_EVENT_RECORD) {
			ce = ce_find(gc, w->event.event->handle);
			if (ce)
				ce_drop(gc, ce);
			return;
		}
		if (w->type != WORK_WAIT_EVENT)
			return;
		ce = ce_find(gc, w->event.event->handle);
		if (!ce)
			return;
		g = graph_lookup(c, ce->graph);
		if (!g || !capture_join(d, c, gc, g, w->stream)) {
			if (g)
				refuse(g, w, CUDA_ERROR_OUT_OF_MEMORY);
			return;
		}
		w->capture = g;
		w->capture_seg = g->nhost;
		return;
	}
	g = graph_lookup(c, cs->graph);
	m = g ? member_of(g, w->stream->handle) : NULL;
	if (!m) {
		not_captured(w);
		return;		/* cannot happen: members and cs change together */
	}
	w->capture = g;
	w->capture_seg = g->nhost;
	switch (w->type) {
	case WORK_ADVANCE:	/* an op that failed its checks */
		invalidate(g, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
		break;
	case WORK_HTOD:
	case WORK_DTOH:
		if (w->copy.shared)
			add_node(d, g, m, w);
		else
			refuse(g, w, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
		break;
	case WORK_COPY_2D:
		if (w->copy2d.shared || w->copy2d.dir == AXON_COPY_2D_DTOD)
			add_node(d, g, m, w);
		else
			refuse(g, w, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
		break;
	case WORK_EVENT_RECORD:
		ce = ce_find(gc, w->event.event->handle);
		if (!ce) {
			if (!graph_grow((void **)&gc->ce, &gc->capce, gc->nce, sizeof(*gc->ce))) {
				refuse(g, w, CUDA_ERROR_OUT_OF_MEMORY);
				break;
			}
			ce = &gc->ce[gc->nce++];
		}
		*ce = (struct capture_event){ .event = w->event.event->handle,
					      .graph = g->handle,
					      .stream = m->stream, .pos = m->nodes };
		break;
	case WORK_WAIT_EVENT: {
		struct graph_member *from;

		ce = ce_find(gc, w->event.event->handle);
		if (!ce) {
			/* Recorded outside any capture (a never-recorded event
			 * is no dependency at all). */
			if (w->event.event->records)
				refuse(g, w, CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
			break;
		}
		if (ce->graph != g->handle) {
			refuse(g, w, CUDA_ERROR_STREAM_CAPTURE_MERGE);
			break;
		}
		from = member_of(g, ce->stream);
		if (from && from != m && from->joined < ce->pos)
			from->joined = ce->pos;
		break;
	}
	default:
		add_node(d, g, m, w);
		break;
	}
}

static void __attribute__((constructor)) graph_register_hooks(void)
{
	work_register_capture(graph_capture_track);
}

/* The stream (and, for END, the graph) a request names. */
struct capture_req {
	struct stream *stream;
	struct graph *graph;
};

int32_t op_capture_begin_prep(struct op_ctx *o)
{
	struct client *c = o->c;
	struct stream *s = stream_lookup(c, o->sqe->stream);
	int32_t res;

	res = graph_ops_built(o);
	if (res)
		return res;
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	o->ctx = s->ctx;
	if (o->sqe->obj.arg0 > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	/* A stream in a capture already (none without graph state yet).
	 * Checked before the allocations now, which only changes which
	 * error a capturing stream gets when memory runs out. */
	if (c->graphs && cs_find(c->graphs, s->handle))
		return CUDA_ERROR_ILLEGAL_STATE;	/* what the driver says */
	op_req(o, struct capture_req)->stream = s;
	return CUDA_SUCCESS;
}

enum op_status op_capture_begin_issue(struct op_ctx *o)
{
	struct client *c = o->c;
	struct stream *s = op_req(o, struct capture_req)->stream;
	struct graph_client *gc;
	struct graph *g;
	struct work *w;

	gc = graph_client_get(c);
	g = calloc(1, sizeof(*g));
	if (!gc || !g)
		goto err_oom;
	g->ctx = s->ctx->handle;
	g->device = s->ctx->device;
	g->origin = s->handle;
	g->state = GRAPH_CAPTURING;
	atomic_init(&g->end_res, GRAPH_END_PENDING);
	if (handle_alloc(&gc->graphs, AXON_HANDLE_GRAPH, g, &g->handle))
		goto err_oom;
	w = graph_work(o, s, WORK_CAPTURE_BEGIN);
	if (!w || !capture_join(o->d, c, gc, g, s)) {
		free(w);
		handle_free(&gc->graphs, g->handle, AXON_HANDLE_GRAPH);
		free(g->members);
		goto err_oom;
	}
	o->c->ncapturing++;
	/* Its failure (the vendor refusing) shows at CAPTURE_END. */
	w->want_cqe = false;
	w->graph.graph = g;
	work_submit(o, w);
	o->aux[0] = g->handle;
	return OP_COMPLETE;

err_oom:
	free(g);
	o->res = CUDA_ERROR_OUT_OF_MEMORY;
	return OP_COMPLETE;
}

int32_t op_capture_end_prep(struct op_ctx *o)
{
	struct capture_req *r = op_req(o, struct capture_req);
	struct client *c = o->c;
	struct stream *s = stream_lookup(c, o->sqe->stream);
	struct graph *g = graph_lookup(c, o->sqe->obj.handle);
	struct capture_stream *cs;
	int32_t res;

	res = graph_ops_built(o);
	if (res)
		return res;
	if (!s || !g)
		return CUDA_ERROR_INVALID_HANDLE;
	o->ctx = s->ctx;
	cs = cs_find(c->graphs, s->handle);
	if (!cs)
		return CUDA_ERROR_ILLEGAL_STATE;	/* not capturing */
	if (cs->graph != g->handle || g->origin != s->handle)
		return CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
	r->stream = s;
	r->graph = g;
	return CUDA_SUCCESS;
}

enum op_status op_capture_end_issue(struct op_ctx *o)
{
	const struct capture_req *r = op_req(o, struct capture_req);
	struct client *c = o->c;
	struct graph *g = r->graph;
	uint32_t verdict, i;
	struct work *w;

	w = graph_work(o, r->stream, WORK_CAPTURE_END);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	/* Every forked stream must have been waited for by the capture
	 * (approximation: by any member, not necessarily the origin). */
	verdict = g->capture_error;
	for (i = 0; i < g->nmembers && !verdict; i++)
		if (g->members[i].stream != g->origin &&
		    g->members[i].nodes > g->members[i].joined)
			verdict = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
	capture_close(c, g);
	graph_refs_normalize(&g->refs);
	w->res = (int32_t)verdict;
	w->aux0 = g->nnodes;	/* the completion's aux0; cuda: the driver's count */
	w->graph.graph = g;
	return work_submit(o, w);
}
