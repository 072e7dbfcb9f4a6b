// SPDX-License-Identifier: MIT
/*
 * Graphs: stream capture, instantiation, launch, update, destruction
 * (AXON_OP_CAPTURE_BEGIN .. AXON_OP_GRAPH_EXEC_UPDATE), and the tracking
 * that decides which work items a capture takes (graph_capture_track).
 *
 * The daemon captures, not the shim: the client's stream-ordered ops go to
 * the daemon as usual and the backend turns the ones tagged with a capture
 * into graph nodes (axond/graph.h). Everything a graph's nodes name (kernel
 * functions, memset and copy ranges, the shared host regions of copies) is
 * kept in its refs and checked again at each launch, so a graph can never
 * run a function of an unloaded module or touch memory the client freed
 * since.
 *
 * Host functions captured (HOST_FUNC NODE) cut the graph into parts; the
 * client launches them one at a time and runs its functions in between
 * (graph.h).
 *
 * A client's graph state lives in struct graph_client, made on its first
 * graph op; clients that never capture pay one pointer test per work item.
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "ops.h"
#include "hostmem.h"
#include "../graph.h"

/* A stream in an open capture. */
struct capture_stream {
	uint64_t stream;
	uint64_t graph;
};

/* An event last recorded inside an open capture. */
struct capture_event {
	uint64_t event;
	uint64_t graph;
	uint64_t stream;	/* the member that recorded it */
	uint64_t pos;		/* that member's node count then */
};

struct graph_client {
	struct handle_table graphs, execs;
	uint32_t ncapturing;		/* open captures */
	struct capture_stream *cs;	/* streams of open captures */
	uint32_t ncs, capcs;
	struct capture_event *ce;	/* their events */
	uint32_t nce, capce;
	struct graph_update *updates;	/* in flight (graph.h) */
	/* Nodes held in its graphs and execs: at most --max-graph-nodes, so
	 * a capture that never ends cannot grow the daemon without bound. */
	uint64_t nodes;
};

#define GRAPH_MAX	(1u << 16)	/* graphs, and execs, per client */

static struct graph_client *gc_get(struct client *c)
{
	struct graph_client *gc = c->graphs;

	if (gc)
		return gc;
	gc = calloc(1, sizeof(*gc));
	if (!gc)
		return NULL;
	if (handle_table_init(&gc->graphs, GRAPH_MAX) ||
	    handle_table_init(&gc->execs, GRAPH_MAX)) {
		free(gc);
		return NULL;
	}
	c->graphs = gc;
	return gc;
}

static struct graph *graph_lookup(struct client *c, uint64_t h)
{
	struct graph *g;

	if (!c->graphs)
		return NULL;
	g = handle_lookup(&c->graphs->graphs, h, AXON_HANDLE_GRAPH);
	return g && !g->dying ? g : NULL;
}

static struct graph_exec *exec_lookup(struct client *c, uint64_t h)
{
	struct graph_exec *x;

	if (!c->graphs)
		return NULL;
	x = handle_lookup(&c->graphs->execs, h, AXON_HANDLE_GRAPH_EXEC);
	return x && !x->dying ? x : NULL;
}

/* Grows *p (of *cap elements of size) to hold n + 1. */
static bool grow(void **p, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t ncap;
	void *q;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap <= n)
		return false;
	q = realloc(*p, (size_t)ncap * size);
	if (!q)
		return false;
	*p = q;
	*cap = ncap;
	return true;
}

/* ---- what nodes name ---------------------------------------------------- */

static bool refs_add_func(struct graph_refs *r, uint64_t f)
{
	/* Consecutive launches of one kernel are the common case. */
	if (r->nfuncs && r->funcs[r->nfuncs - 1] == f)
		return true;
	if (!grow((void **)&r->funcs, &r->capfuncs, r->nfuncs, sizeof(*r->funcs)))
		return false;
	r->funcs[r->nfuncs++] = f;
	return true;
}

static bool refs_add_range(struct graph_refs *r, uint64_t addr, uint64_t len)
{
	if (r->nranges && r->ranges[r->nranges - 1].addr == addr &&
	    r->ranges[r->nranges - 1].len == len)
		return true;
	if (!grow((void **)&r->ranges, &r->capranges, r->nranges, sizeof(*r->ranges)))
		return false;
	r->ranges[r->nranges].addr = addr;
	r->ranges[r->nranges].len = len;
	r->nranges++;
	return true;
}

static bool refs_add_host(struct graph_refs *r, uint64_t addr, uint64_t len,
			  const unsigned char *map)
{
	if (r->nhosts && r->hosts[r->nhosts - 1].addr == addr &&
	    r->hosts[r->nhosts - 1].len == len && r->hosts[r->nhosts - 1].map == map)
		return true;
	if (!grow((void **)&r->hosts, &r->caphosts, r->nhosts, sizeof(*r->hosts)))
		return false;
	r->hosts[r->nhosts++] = (struct graph_host){ .addr = addr, .len = len, .map = map };
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_range(const void *a, const void *b)
{
	const struct graph_range *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int cmp_host(const void *a, const void *b)
{
	const struct graph_host *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->map < y->map ? -1 : x->map > y->map;
}

/* Sorts and drops duplicates, so a launch checks each object once. */
static void refs_normalize(struct graph_refs *r)
{
	uint32_t i, n;

	if (r->nhosts > 1) {
		qsort(r->hosts, r->nhosts, sizeof(*r->hosts), cmp_host);
		for (i = 1, n = 1; i < r->nhosts; i++)
			if (cmp_host(&r->hosts[i], &r->hosts[n - 1]))
				r->hosts[n++] = r->hosts[i];
		r->nhosts = n;
	}

	if (r->nfuncs > 1) {
		qsort(r->funcs, r->nfuncs, sizeof(*r->funcs), cmp_u64);
		for (i = 1, n = 1; i < r->nfuncs; i++)
			if (r->funcs[i] != r->funcs[n - 1])
				r->funcs[n++] = r->funcs[i];
		r->nfuncs = n;
	}
	if (r->nranges > 1) {
		qsort(r->ranges, r->nranges, sizeof(*r->ranges), cmp_range);
		for (i = 1, n = 1; i < r->nranges; i++)
			if (cmp_range(&r->ranges[i], &r->ranges[n - 1]))
				r->ranges[n++] = r->ranges[i];
		r->nranges = n;
	}
}

static bool refs_merge(struct graph_refs *dst, const struct graph_refs *src)
{
	uint32_t i;

	for (i = 0; i < src->nfuncs; i++)
		if (!refs_add_func(dst, src->funcs[i]))
			return false;
	for (i = 0; i < src->nranges; i++)
		if (!refs_add_range(dst, src->ranges[i].addr, src->ranges[i].len))
			return false;
	for (i = 0; i < src->nhosts; i++)
		if (!refs_add_host(dst, src->hosts[i].addr, src->hosts[i].len,
				   src->hosts[i].map))
			return false;
	refs_normalize(dst);
	return true;
}

static void refs_free(struct graph_refs *r)
{
	free(r->funcs);
	free(r->ranges);
	free(r->hosts);
	memset(r, 0, sizeof(*r));
}

/* Everything the nodes name is still the client's: 0 or a CUresult. */
static int32_t refs_check(struct client *c, const struct graph_refs *r)
{
	int32_t res = CUDA_SUCCESS;
	uint32_t i;

	for (i = 0; i < r->nfuncs; i++)
		if (!func_lookup(c, r->funcs[i]))
			return CUDA_ERROR_INVALID_HANDLE;
	/*
	 * A copy node reads or writes the mapping it was made with: the
	 * region must still be registered and show that range there (a
	 * region unregistered is unmapped only after the work queued before
	 * its unregistration, which includes this launch).
	 */
	for (i = 0; i < r->nhosts; i++)
		if (hostmem_translate(c, r->hosts[i].addr, r->hosts[i].len) != r->hosts[i].map)
			return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&c->alloc_lock);
	for (i = 0; i < r->nranges && !res; i++)
		if (!rangemap_find_span(&c->allocs, r->ranges[i].addr,
					r->ranges[i].len ? r->ranges[i].len : 1))
			res = CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_unlock(&c->alloc_lock);
	return res;
}

/* ---- capture membership -------------------------------------------------- */

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
static bool capture_join(struct graph_client *gc, struct graph *g, uint64_t s)
{
	if (!grow((void **)&g->members, &g->capmembers, g->nmembers, sizeof(*g->members)) ||
	    !grow((void **)&gc->cs, &gc->capcs, gc->ncs, sizeof(*gc->cs)))
		return false;
	g->members[g->nmembers++] = (struct graph_member){ .stream = s };
	gc->cs[gc->ncs++] = (struct capture_stream){ .stream = s, .graph = g->handle };
	return true;
}

/* Closes g's capture: no stream or event refers to it any more. */
static void capture_close(struct graph_client *gc, struct graph *g)
{
	uint32_t i;

	for (i = 0; i < gc->ncs;)
		if (gc->cs[i].graph == g->handle)
			gc->cs[i] = gc->cs[--gc->ncs];
		else
			i++;
	for (i = 0; i < gc->nce;)
		if (gc->ce[i].graph == g->handle)
			ce_drop(gc, &gc->ce[i]);
		else
			i++;
	g->state = GRAPH_ENDED;
	gc->ncapturing--;
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
		ok = refs_add_range(&g->refs, w->copy.dst, w->copy.len) &&
		     refs_add_range(&g->refs, w->copy.src, w->copy.len);
		break;
	case WORK_HTOD:
		ok = refs_add_range(&g->refs, w->copy.dst, w->copy.len) &&
		     refs_add_host(&g->refs, w->copy.src, w->copy.len, w->copy.host);
		break;
	case WORK_DTOH:
		ok = refs_add_host(&g->refs, w->copy.dst, w->copy.len, w->copy.host) &&
		     refs_add_range(&g->refs, w->copy.src, w->copy.len);
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
	case WORK_MEMSET: {
		uint64_t row = w->memset.width * w->memset.elem_size;

		ok = refs_add_range(&g->refs, w->memset.dst,
				    w->memset.pitch * (w->memset.height - 1) + row);
		break;
	}
	case WORK_LAUNCH:
		ok = refs_add_func(&g->refs, w->launch.func->handle);
		break;
	case WORK_GRAPH_LAUNCH:
		ok = refs_merge(&g->refs, &w->graph.exec->refs);
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
 * Called by work_submit for every item, before the backend sees it. Tags
 * the items of capturing streams with their graph (and the part of it,
 * after the host nodes taken so far), follows forks and joins through
 * events, and refuses what a graph cannot hold: host copies staged in the
 * data area (their host side is a buffer the shim reuses, stale at any
 * replay; copies of shared host regions are nodes), a wait on work
 * outside the capture, a merge of two captures.
 */
void graph_capture_track(struct axond *d, struct work *w)
{
	struct client *c = w->client;
	struct graph_client *gc = c->graphs;
	struct capture_stream *cs;
	struct capture_event *ce;
	struct graph_member *m;
	struct graph *g;

	if (!gc || !gc->ncapturing || !w->stream) {
		not_captured(w);
		return;
	}
	switch (w->type) {
	case WORK_ADVANCE: case WORK_HTOD: case WORK_DTOH: case WORK_DTOD:
	case WORK_MEMSET: case WORK_LAUNCH: case WORK_EVENT_RECORD:
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
		if (!g || !capture_join(gc, g, w->stream->handle)) {
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
	case WORK_EVENT_RECORD:
		ce = ce_find(gc, w->event.event->handle);
		if (!ce) {
			if (!grow((void **)&gc->ce, &gc->capce, gc->nce, sizeof(*gc->ce))) {
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

/* ---- ops ---------------------------------------------------------------- */

static bool graphs_built(struct op_ctx *o)
{
	if (o->d->backend->graph_instantiate)
		return true;
	o->res = CUDA_ERROR_NOT_SUPPORTED;
	return false;
}

/* A graph whose capture ended well (its nodes are final). */
static bool graph_ready(const struct graph *g)
{
	/* Pairs with graph_set_ended on the executor. */
	return g->state == GRAPH_ENDED &&
	       atomic_load_explicit(&g->end_res, memory_order_acquire) == CUDA_SUCCESS;
}

/* A work item of a graph op that is not stream-ordered for the client. */
static struct work *graph_work(struct op_ctx *o, struct stream *s, enum work_type type)
{
	struct op_ctx wo = *o;

	wo.stream = s;
	return work_new(&wo, type);
}

static void graph_free(struct axond *d, struct client *c, struct graph *g)
{
	if (d->backend->graph_fini)
		d->backend->graph_fini(d, g);
	handle_free(&c->graphs->graphs, g->handle, AXON_HANDLE_GRAPH);
	c->graphs->nodes -= g->nnodes;
	free(g->members);
	refs_free(&g->refs);
	free(g);
}

static void exec_free(struct axond *d, struct client *c, struct graph_exec *x)
{
	if (d->backend->graph_exec_fini)
		d->backend->graph_exec_fini(d, x);
	handle_free(&c->graphs->execs, x->handle, AXON_HANDLE_GRAPH_EXEC);
	c->graphs->nodes -= x->nnodes;
	refs_free(&x->refs);
	free(x);
}

enum op_status op_capture_begin(struct op_ctx *o)
{
	struct client *c = o->c;
	struct stream *s = stream_lookup(c, o->sqe->stream);
	struct graph_client *gc;
	struct graph *g;
	struct work *w;

	if (!graphs_built(o))
		return OP_COMPLETE;
	if (!s) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	o->ctx = s->ctx;
	if (o->sqe->obj.arg0 > CU_STREAM_CAPTURE_MODE_RELAXED) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	gc = gc_get(c);
	g = calloc(1, sizeof(*g));
	if (!gc || !g)
		goto err_oom;
	if (cs_find(gc, s->handle)) {
		free(g);
		o->res = CUDA_ERROR_ILLEGAL_STATE;	/* what the driver says */
		return OP_COMPLETE;
	}
	g->ctx = s->ctx->handle;
	g->device = s->ctx->device;
	g->origin = s->handle;
	g->state = GRAPH_CAPTURING;
	atomic_init(&g->end_res, GRAPH_END_PENDING);
	if (handle_alloc(&gc->graphs, AXON_HANDLE_GRAPH, g, &g->handle))
		goto err_oom;
	w = graph_work(o, s, WORK_CAPTURE_BEGIN);
	if (!w || !capture_join(gc, g, s->handle)) {
		free(w);
		handle_free(&gc->graphs, g->handle, AXON_HANDLE_GRAPH);
		free(g->members);
		goto err_oom;
	}
	gc->ncapturing++;
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

enum op_status op_capture_end(struct op_ctx *o)
{
	struct client *c = o->c;
	struct stream *s = stream_lookup(c, o->sqe->stream);
	struct graph *g = graph_lookup(c, o->sqe->obj.handle);
	struct capture_stream *cs;
	uint32_t verdict, i;
	struct work *w;

	if (!graphs_built(o))
		return OP_COMPLETE;
	if (!s || !g) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	o->ctx = s->ctx;
	cs = cs_find(c->graphs, s->handle);
	if (!cs) {
		o->res = CUDA_ERROR_ILLEGAL_STATE;	/* not capturing */
		return OP_COMPLETE;
	}
	if (cs->graph != g->handle || g->origin != s->handle) {
		o->res = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
		return OP_COMPLETE;
	}
	w = graph_work(o, s, WORK_CAPTURE_END);
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
	capture_close(c->graphs, g);
	refs_normalize(&g->refs);
	w->res = (int32_t)verdict;
	w->aux0 = g->nnodes;	/* the completion's aux0; cuda: the driver's count */
	w->graph.graph = g;
	return work_submit(o, w);
}

enum op_status op_graph_instantiate(struct op_ctx *o)
{
	struct client *c = o->c;
	struct graph *g = graph_lookup(c, o->sqe->obj.handle);
	struct graph_exec *x;
	int32_t res;

	if (!graphs_built(o))
		return OP_COMPLETE;
	if (!g) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	if (!graph_ready(g)) {
		/* Still capturing, or its capture failed: nothing to run. */
		o->res = g->state == GRAPH_CAPTURING ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
						     : CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	o->ctx = ctx_lookup(c, g->ctx);
	if (!o->ctx) {
		o->res = CUDA_ERROR_INVALID_CONTEXT;
		return OP_COMPLETE;
	}
	res = refs_check(c, &g->refs);
	if (res) {
		o->res = res;
		return OP_COMPLETE;
	}
	/* An exec holds a copy of its graph's nodes. */
	if (g->nnodes > o->d->cfg.max_graph_nodes - c->graphs->nodes) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	x = calloc(1, sizeof(*x));
	if (!x || !refs_merge(&x->refs, &g->refs))
		goto err_oom;
	x->ctx = g->ctx;
	x->device = g->device;
	x->nnodes = g->nnodes;
	x->nhost = g->nhost;
	if (handle_alloc(&c->graphs->execs, AXON_HANDLE_GRAPH_EXEC, x, &x->handle))
		goto err_oom;
	res = o->d->backend->graph_instantiate(o->d, c, g, x, o->sqe->obj.arg0);
	if (res) {
		handle_free(&c->graphs->execs, x->handle, AXON_HANDLE_GRAPH_EXEC);
		refs_free(&x->refs);
		free(x);
		o->res = res;
		return OP_COMPLETE;
	}
	c->graphs->nodes += x->nnodes;
	o->aux[0] = x->handle;
	return OP_COMPLETE;

err_oom:
	if (x)
		refs_free(&x->refs);
	free(x);
	o->res = CUDA_ERROR_OUT_OF_MEMORY;
	return OP_COMPLETE;
}

/* obj.arg0: which part (graph.h); a graph with no host node has one. */
enum op_status op_graph_launch(struct op_ctx *o)
{
	struct graph_exec *x = exec_lookup(o->c, o->sqe->obj.handle);
	struct work *w;
	int32_t res;

	if (!graphs_built(o))
		return OP_COMPLETE;
	if (!x || x->ctx != o->stream->ctx->handle) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	if (o->sqe->obj.arg0 > x->nhost) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	res = refs_check(o->c, &x->refs);
	if (res) {
		o->res = res;
		return OP_COMPLETE;
	}
	w = work_new(o, WORK_GRAPH_LAUNCH);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->graph.exec = x;
	w->graph.seg = (uint32_t)o->sqe->obj.arg0;
	return work_submit(o, w);
}

static void graph_release(struct axond *d, struct client *c, void *obj)
{
	graph_free(d, c, obj);
}

static void exec_release(struct axond *d, struct client *c, void *obj)
{
	exec_free(d, c, obj);
}

enum op_status op_graph_destroy(struct op_ctx *o)
{
	struct graph *g = graph_lookup(o->c, o->sqe->obj.handle);

	if (!graphs_built(o))
		return OP_COMPLETE;
	if (!g) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	if (g->state == GRAPH_CAPTURING) {
		o->res = CUDA_ERROR_ILLEGAL_STATE;
		return OP_COMPLETE;
	}
	/* Freed after the work queued so far (its END, launches naming it). */
	g->dying = true;
	if (work_release_later(o->d, o->c, graph_release, g)) {
		g->dying = false;
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
	}
	return OP_COMPLETE;
}

enum op_status op_graph_exec_destroy(struct op_ctx *o)
{
	struct graph_exec *x = exec_lookup(o->c, o->sqe->obj.handle);

	if (!graphs_built(o))
		return OP_COMPLETE;
	if (!x) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	x->dying = true;
	if (work_release_later(o->d, o->c, exec_release, x)) {
		x->dying = false;
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
	}
	return OP_COMPLETE;
}

/*
 * Runs on the executor, in order with the launches queued before it: the
 * driver does not synchronise a graph exec between threads, and launches
 * already queued must run the old parameters.
 */
/* Unlinks u from the client's updates in flight. */
static void update_unlink(struct graph_client *gc, struct graph_update *u)
{
	struct graph_update **pp;

	for (pp = &gc->updates; *pp; pp = &(*pp)->next) {
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	}
}

/*
 * Dispatcher, once the update ran (its work item's done_fn), just before
 * its completion: a successful one leaves the exec naming what its new
 * graph names only, so that memory only the old graph named (the staging
 * memory of its host copies, say) may go as soon as the client knows,
 * without failing the exec's launches. The exec is still there: its
 * destruction is released after the work queued before it.
 */
static void update_ran(struct axond *d, struct client *c, void *obj)
{
	struct graph_update *u = obj;

	(void)d;
	update_unlink(c->graphs, u);
	if (u->res == CUDA_SUCCESS) {
		refs_free(&u->exec->refs);
		u->exec->refs = u->refs;
	} else {
		refs_free(&u->refs);
	}
	free(u);
}

enum op_status op_graph_exec_update(struct op_ctx *o)
{
	struct client *c = o->c;
	struct graph_exec *x = exec_lookup(c, o->sqe->obj.handle);
	struct graph *g = graph_lookup(c, o->sqe->obj.arg0);
	struct graph_update *u;
	struct work *w;

	if (!graphs_built(o))
		return OP_COMPLETE;
	if (!x || !g) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	if (!graph_ready(g)) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	o->ctx = ctx_lookup(c, x->ctx);
	if (!o->ctx || g->ctx != x->ctx) {
		o->aux[0] = CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
		o->res = o->ctx ? CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE : CUDA_ERROR_INVALID_CONTEXT;
		return OP_COMPLETE;
	}
	if (g->nnodes != x->nnodes || g->nhost != x->nhost) {
		o->aux[0] = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		o->res = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		return OP_COMPLETE;
	}
	o->res = refs_check(c, &g->refs);
	if (o->res)
		return OP_COMPLETE;
	/*
	 * The exec may run either graph's parameters from here on (the
	 * update can still fail on the executor), so launches check both,
	 * until update_ran knows.
	 */
	w = graph_work(o, o->ctx->default_stream, WORK_GRAPH_UPDATE);
	u = calloc(1, sizeof(*u));
	if (!w || !u || !refs_merge(&u->refs, &g->refs) || !refs_merge(&x->refs, &g->refs)) {
		free(w);
		if (u)
			refs_free(&u->refs);
		free(u);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	u->exec = x;
	u->res = CUDA_ERROR_UNKNOWN;	/* the backend never ran it */
	u->next = c->graphs->updates;
	c->graphs->updates = u;
	w->graph.graph = g;
	w->graph.exec = x;
	w->graph.update = u;
	w->done_fn = update_ran;
	w->done_obj = u;
	return work_submit(o, w);
}

/* ---- teardown and stats ------------------------------------------------- */

void graph_client_fini(struct axond *d, struct client *c)
{
	struct graph_client *gc = c->graphs;
	uint32_t pos = 0;
	uint64_t h;
	void *obj;

	if (!gc)
		return;
	/* Execs first: the cuda backend's were made from the graphs. */
	while (handle_iter(&gc->execs, AXON_HANDLE_GRAPH_EXEC, &pos, &h, &obj))
		exec_free(d, c, obj);
	pos = 0;
	while (handle_iter(&gc->graphs, AXON_HANDLE_GRAPH, &pos, &h, &obj))
		graph_free(d, c, obj);
	handle_table_destroy(&gc->graphs);
	handle_table_destroy(&gc->execs);
	/* Updates whose release never ran (a dead client's are skipped). */
	while (gc->updates) {
		struct graph_update *u = gc->updates;

		gc->updates = u->next;
		refs_free(&u->refs);
		free(u);
	}
	free(gc->cs);
	free(gc->ce);
	free(gc);
	c->graphs = NULL;
}

void graph_client_counts(const struct client *c, uint32_t *graphs, uint32_t *execs)
{
	*graphs = c->graphs ? handle_count(&c->graphs->graphs, 0) : 0;
	*execs = c->graphs ? handle_count(&c->graphs->execs, 0) : 0;
}

uint64_t graph_client_nodes(const struct client *c)
{
	return c->graphs ? c->graphs->nodes : 0;
}
