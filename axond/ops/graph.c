// SPDX-License-Identifier: MIT
/*
 * Graphs: instantiation, launch, update, destruction (AXON_OP_GRAPH_*),
 * and a client's tables of graphs and execs. Capture, which makes the
 * graphs, is ops/capture.c; what their nodes name, ops/graphrefs.c.
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
 * A client's graph state lives in struct graph_client (graphclient.h),
 * made on its first graph op.
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "ops.h"
#include "graphclient.h"
#include "graphrefs.h"
#include "../graph.h"
#include "../localmem.h"
#include "../sim/image.h"
#include "../stats.h"

#define GRAPH_MAX	(1u << 16)	/* graphs, and execs, per client */

struct graph_client *graph_client_get(struct client *c)
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

struct graph *graph_lookup(struct client *c, uint64_t h)
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

int32_t graph_ops_built(const struct op_ctx *o)
{
	return o->d->backend->graph_instantiate ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

/* A graph whose capture ended well (its nodes are final). */
static bool graph_ready(const struct graph *g)
{
	/* Pairs with graph_set_ended on the executor. */
	return g->state == GRAPH_ENDED &&
	       atomic_load_explicit(&g->end_res, memory_order_acquire) == CUDA_SUCCESS;
}

/* A work item of a graph op that is not stream-ordered for the client. */
struct work *graph_work(struct op_ctx *o, struct stream *s, enum work_type type)
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
	graph_refs_free(&g->refs);
	free(g);
}

static void exec_free(struct axond *d, struct client *c, struct graph_exec *x)
{
	if (d->backend->graph_exec_fini)
		d->backend->graph_exec_fini(d, x);
	handle_free(&c->graphs->execs, x->handle, AXON_HANDLE_GRAPH_EXEC);
	c->graphs->nodes -= x->nnodes;
	graph_refs_free(&x->refs);
	free(x);
}

/* The graph and the exec a request names. */
struct graph_req {
	struct graph *graph;
	struct graph_exec *exec;
};

int32_t op_graph_instantiate_prep(struct op_ctx *o)
{
	struct client *c = o->c;
	struct graph *g = graph_lookup(c, o->sqe->obj.handle);
	int32_t res;

	res = graph_ops_built(o);
	if (res)
		return res;
	if (!g)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!graph_ready(g)) {
		/* Still capturing, or its capture failed: nothing to run. */
		return g->state == GRAPH_CAPTURING ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
						   : CUDA_ERROR_INVALID_VALUE;
	}
	o->ctx = ctx_lookup(c, g->ctx);
	if (!o->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	res = graph_refs_check(c, &g->refs);
	if (res)
		return res;
	/* An exec holds a copy of its graph's nodes. */
	if (g->nnodes > o->d->cfg.max_graph_nodes - c->graphs->nodes)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op_req(o, struct graph_req)->graph = g;
	return CUDA_SUCCESS;
}

enum op_status op_graph_instantiate_issue(struct op_ctx *o)
{
	struct client *c = o->c;
	struct graph *g = op_req(o, struct graph_req)->graph;
	struct graph_exec *x;
	int32_t res;

	x = calloc(1, sizeof(*x));
	if (!x || !graph_refs_merge(&x->refs, &g->refs))
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
		graph_refs_free(&x->refs);
		free(x);
		o->res = res;
		return OP_COMPLETE;
	}
	c->graphs->nodes += x->nnodes;
	o->aux[0] = x->handle;
	return OP_COMPLETE;

err_oom:
	if (x)
		graph_refs_free(&x->refs);
	free(x);
	o->res = CUDA_ERROR_OUT_OF_MEMORY;
	return OP_COMPLETE;
}

/* obj.arg0: which part (graph.h); a graph with no host node has one. */
int32_t op_graph_launch_prep(struct op_ctx *o)
{
	struct graph_exec *x = exec_lookup(o->c, o->sqe->obj.handle);
	int32_t res;

	res = graph_ops_built(o);
	if (res)
		return res;
	if (!x || x->ctx != o->stream->ctx->handle)
		return CUDA_ERROR_INVALID_HANDLE;
	if (o->sqe->obj.arg0 > x->nhost)
		return CUDA_ERROR_INVALID_VALUE;
	res = graph_refs_check(o->c, &x->refs);
	if (res)
		return res;
	op_req(o, struct graph_req)->exec = x;
	return CUDA_SUCCESS;
}

/*
 * Its kernels' frames and heap, as their own launches would be charged
 * (localmem.h): the largest frame grows the stack, a kernel that calls
 * malloc spends the heap. The functions were checked in the prep.
 */
static int32_t graph_launch_charge(struct op_ctx *o, const struct graph_exec *x)
{
	uint64_t frame = 0;
	bool heap = false;
	uint32_t i;

	if (!o->d->backend->ctx_limit)
		return CUDA_SUCCESS;
	for (i = 0; i < x->refs.nfuncs; i++) {
		struct func *f = func_lookup(o->c, x->refs.funcs[i]);
		uint64_t fr;

		if (!f)
			return CUDA_ERROR_INVALID_HANDLE;
		fr = localmem_frame(o->d, f);
		if (fr > frame)
			frame = fr;
		heap |= (f->calls & SIM_IMAGE_CALLS_MALLOC) != 0;
	}
	return localmem_charge_launch(o->d, o->c, x->device, frame, heap);
}

enum op_status op_graph_launch_issue(struct op_ctx *o)
{
	struct work *w;

	o->res = graph_launch_charge(o, op_req(o, struct graph_req)->exec);
	if (o->res)
		return OP_COMPLETE;
	w = work_new(o, WORK_GRAPH_LAUNCH);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->graph.exec = op_req(o, struct graph_req)->exec;
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

/* Marks obj dying and frees it once the work queued before it is done;
 * without the memory to queue that, obj stays as it was. */
static enum op_status destroy_later(struct op_ctx *o, bool *dying,
				    release_fn release, void *obj)
{
	*dying = true;
	if (work_release_later(o->d, o->c, release, obj)) {
		*dying = false;
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
	}
	return OP_COMPLETE;
}

int32_t op_graph_destroy_prep(struct op_ctx *o)
{
	struct graph *g = graph_lookup(o->c, o->sqe->obj.handle);
	int32_t res;

	res = graph_ops_built(o);
	if (res)
		return res;
	if (!g)
		return CUDA_ERROR_INVALID_HANDLE;
	if (g->state == GRAPH_CAPTURING)
		return CUDA_ERROR_ILLEGAL_STATE;
	op_req(o, struct graph_req)->graph = g;
	return CUDA_SUCCESS;
}

enum op_status op_graph_destroy_issue(struct op_ctx *o)
{
	struct graph *g = op_req(o, struct graph_req)->graph;

	/* Freed after the work queued so far (its END, launches naming it). */
	return destroy_later(o, &g->dying, graph_release, g);
}

int32_t op_graph_exec_destroy_prep(struct op_ctx *o)
{
	struct graph_exec *x = exec_lookup(o->c, o->sqe->obj.handle);
	int32_t res;

	res = graph_ops_built(o);
	if (res)
		return res;
	if (!x)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct graph_req)->exec = x;
	return CUDA_SUCCESS;
}

enum op_status op_graph_exec_destroy_issue(struct op_ctx *o)
{
	struct graph_exec *x = op_req(o, struct graph_req)->exec;

	return destroy_later(o, &x->dying, exec_release, x);
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
		graph_refs_free(&u->exec->refs);
		u->exec->refs = u->refs;
	} else {
		graph_refs_free(&u->refs);
	}
	free(u);
}

int32_t op_graph_exec_update_prep(struct op_ctx *o)
{
	struct graph_req *r = op_req(o, struct graph_req);
	struct client *c = o->c;
	struct graph_exec *x = exec_lookup(c, o->sqe->obj.handle);
	struct graph *g = graph_lookup(c, o->sqe->obj.arg0);
	int32_t res;

	res = graph_ops_built(o);
	if (res)
		return res;
	if (!x || !g)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!graph_ready(g))
		return CUDA_ERROR_INVALID_VALUE;
	o->ctx = ctx_lookup(c, x->ctx);
	if (!o->ctx || g->ctx != x->ctx) {
		o->aux[0] = CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
		return o->ctx ? CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE : CUDA_ERROR_INVALID_CONTEXT;
	}
	if (g->nnodes != x->nnodes || g->nhost != x->nhost) {
		o->aux[0] = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	res = graph_refs_check(c, &g->refs);
	if (res)
		return res;
	r->graph = g;
	r->exec = x;
	return CUDA_SUCCESS;
}

enum op_status op_graph_exec_update_issue(struct op_ctx *o)
{
	const struct graph_req *r = op_req(o, struct graph_req);
	struct client *c = o->c;
	struct graph_exec *x = r->exec;
	struct graph *g = r->graph;
	struct graph_update *u;
	struct work *w;

	/*
	 * The exec may run either graph's parameters from here on (the
	 * update can still fail on the executor), so launches check both,
	 * until update_ran knows.
	 */
	w = graph_work(o, o->ctx->default_stream, WORK_GRAPH_UPDATE);
	u = calloc(1, sizeof(*u));
	if (!w || !u || !graph_refs_merge(&u->refs, &g->refs) || !graph_refs_merge(&x->refs, &g->refs)) {
		free(w);
		if (u)
			graph_refs_free(&u->refs);
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

static void graph_client_fini(struct axond *d, struct client *c)
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
		graph_refs_free(&u->refs);
		free(u);
	}
	free(gc->cs);
	free(gc->ce);
	free(gc);
	c->graphs = NULL;
}

static void graph_client_stats(const struct client *c, struct stats_client *out)
{
	const struct graph_client *gc = c->graphs;

	out->handles.graphs = gc ? handle_count(&gc->graphs, 0) : 0;
	out->handles.graph_execs = gc ? handle_count(&gc->execs, 0) : 0;
	/* Nodes held in its graphs and execs (--max-graph-nodes). */
	out->limits.graph_nodes = gc ? gc->nodes : 0;
}

static const struct client_family_ops graph_family = {
	.family = CLIENT_FAMILY_GRAPH,
	.fini = graph_client_fini,
	.fini_stage = CLIENT_FINI_HANDLES,
	.stats = graph_client_stats,
};

static void __attribute__((constructor)) graph_register_family(void)
{
	client_family_register(&graph_family);
}
