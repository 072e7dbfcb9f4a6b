// SPDX-License-Identifier: MIT
/*
 * Graphs in the cuda backend: the vendor captures. CAPTURE_BEGIN starts a
 * capture on the client's CUstream, always in CU_STREAM_CAPTURE_MODE_RELAXED:
 * the executor that issues it also serves other clients and the dispatcher
 * maps memory meanwhile, which the stricter modes would forbid (the modes a
 * client asks for are enforced by the shim). The stream's later items are
 * issued as usual and so become the vendor graph's nodes; exec.c finishes
 * them as soon as they are issued instead of recording a tracking event,
 * which would otherwise end up in the client's graph (cuda_graph_immediate).
 * Forks and joins need nothing here: a wait on an event recorded in the
 * capture joins the waiting stream in the driver too.
 *
 * A host node (HOST_FUNC NODE) is captured as a host node of the vendor's
 * graph whose function is a placeholder that never runs: once the capture
 * ended, the graph is cut there into parts (split()), each one a graph
 * of its own with its own exec, which GRAPH_LAUNCH runs one at a time
 * while the client runs its host functions in between (axond/graph.h). A
 * node goes into the part just after the last host node it depends on,
 * so the cut keeps every dependency and the concurrency of the branches
 * within a part.
 *
 * Threads: BEGIN, END, launches and updates run on the device's executor,
 * in the client's context like all its work (the driver does not
 * synchronise one graph exec between threads, and the order against
 * launches queued before an update matters); instantiation on the
 * dispatcher in the client's context (cuda_enter), destruction on the
 * dispatcher or wherever the client's last reference goes, once the
 * executor is done with the graph (END published, or release-later).
 */
#include <stdlib.h>
#include <cuda.h>

#include "../axond.h"
#include "../backend.h"
#include "../graph.h"
#include "context.h"
#include "cugraph.h"
#include "vendor.h"

struct cu_graph {
	CUgraph graph;		/* once the capture ended well (unless cut) */
	CUstream capturing;	/* the vendor stream while capturing */
	CUresult begin_error;
	/* A graph with host nodes, cut: nseg parts (nhost + 1); graph is
	 * then NULL. A part with no node is NULL (nothing to launch). */
	CUgraph *seg;
	uint32_t nseg;
};

/* An exec: one vendor exec per part (NULL for an empty part). */
struct cu_exec {
	uint32_t nseg;
	CUgraphExec x[];
};

/* The function of the vendor's host nodes that stand for the client's:
 * cut out of every part, never run. */
static void CUDA_CB host_placeholder(void *arg)
{
	(void)arg;
}

bool cuda_graph_immediate(const struct work *w)
{
	return w->capture || w->type == WORK_CAPTURE_BEGIN ||
	       w->type == WORK_CAPTURE_END || w->type == WORK_GRAPH_UPDATE;
}

static CUresult capture_begin(struct graph *g, CUstream cs)
{
	struct cu_graph *cg = calloc(1, sizeof(*cg));
	CUresult r;

	if (!cg)
		return CUDA_ERROR_OUT_OF_MEMORY;	/* the END says so too */
	g->backend_priv = cg;
	r = vd.cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED);
	if (r)
		cg->begin_error = r;
	else
		cg->capturing = cs;
	return r;
}

/* A node handle's index in nodes[] (sorted copy in by[]), or -1. */
struct node_ix {
	CUgraphNode node;
	uint32_t i;
};

static int cmp_node_ix(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct node_ix *)a)->node;
	uintptr_t y = (uintptr_t)((const struct node_ix *)b)->node;

	return x < y ? -1 : x > y;
}

static int64_t node_index(const struct node_ix *by, size_t n, CUgraphNode node)
{
	struct node_ix key = { .node = node };
	const struct node_ix *f = bsearch(&key, by, n, sizeof(*by), cmp_node_ix);

	return f ? (int64_t)f->i : -1;
}

/*
 * Cuts graph (nhost placeholders, numbered by the client in submission
 * order, which is a topological order) into nhost + 1 graphs in seg[].
 * A node's part is 1 + the number of the last host node among its
 * ancestors (0 without one): every ancestor of host node k is then in a
 * part <= k and every descendant in a part > k, and an edge never goes
 * back to an earlier part, so each part keeps exactly the edges between
 * its own nodes. Executor.
 */
static CUresult split(CUgraph graph, uint32_t nhost, CUgraph *seg)
{
	CUgraphNode *nodes = NULL, *from = NULL, *to = NULL;
	CUgraphEdgeData *edata = NULL;
	struct node_ix *by = NULL;
	uint32_t *part = NULL, *indeg = NULL, *order = NULL;
	int64_t *host = NULL;
	size_t n = 0, m = 0, i, j, k, head, tail;
	uint32_t made = 0;
	CUresult r;

	r = vd.cuGraphGetNodes(graph, NULL, &n);
	if (!r)
		r = vd.cuGraphGetEdges(graph, NULL, NULL, NULL, &m);
	if (r)
		return r;
	nodes = calloc(n ? n : 1, sizeof(*nodes));
	by = calloc(n ? n : 1, sizeof(*by));
	part = calloc(n ? n : 1, sizeof(*part));
	indeg = calloc(n ? n : 1, sizeof(*indeg));
	order = calloc(n ? n : 1, sizeof(*order));
	host = calloc(n ? n : 1, sizeof(*host));
	from = calloc(m ? m : 1, sizeof(*from));
	to = calloc(m ? m : 1, sizeof(*to));
	edata = calloc(m ? m : 1, sizeof(*edata));
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if (!nodes || !by || !part || !indeg || !order || !host || !from || !to || !edata)
		goto out;
	r = vd.cuGraphGetNodes(graph, nodes, &n);
	if (!r && m)
		r = vd.cuGraphGetEdges(graph, from, to, edata, &m);
	if (r)
		goto out;
	for (i = 0; i < n; i++) {
		CUgraphNodeType type;
		CUDA_HOST_NODE_PARAMS hp;

		by[i] = (struct node_ix){ .node = nodes[i], .i = (uint32_t)i };
		host[i] = -1;
		r = vd.cuGraphNodeGetType(nodes[i], &type);
		if (!r && type == CU_GRAPH_NODE_TYPE_HOST)
			r = vd.cuGraphHostNodeGetParams(nodes[i], &hp);
		if (r)
			goto out;
		if (type == CU_GRAPH_NODE_TYPE_HOST && hp.fn == host_placeholder)
			host[i] = (int64_t)(uintptr_t)hp.userData;
		if (host[i] >= (int64_t)nhost) {
			r = CUDA_ERROR_UNKNOWN;		/* not one of ours */
			goto out;
		}
	}
	qsort(by, n, sizeof(*by), cmp_node_ix);
	/* Kahn's order; each node's part from its predecessors'. */
	for (j = 0; j < m; j++) {
		int64_t t = node_index(by, n, to[j]);

		if (t < 0 || node_index(by, n, from[j]) < 0) {
			r = CUDA_ERROR_UNKNOWN;
			goto out;
		}
		indeg[t]++;
	}
	for (i = 0, tail = 0; i < n; i++)
		if (!indeg[i])
			order[tail++] = (uint32_t)i;
	for (head = 0; head < tail; head++) {
		uint32_t a = order[head];
		uint32_t after = host[a] >= 0 ? (uint32_t)host[a] + 1 : part[a];

		/* O(n * m): graphs are captured by hand, parts are few. */
		for (j = 0; j < m; j++) {
			int64_t b;

			if (from[j] != nodes[a])
				continue;
			b = node_index(by, n, to[j]);
			if (part[b] < after)
				part[b] = after;
			if (!--indeg[b])
				order[tail++] = (uint32_t)b;
		}
		/* A host node after one numbered later: not a valid cut. */
		if (host[a] >= 0 && part[a] > (uint32_t)host[a]) {
			r = CUDA_ERROR_UNKNOWN;
			goto out;
		}
	}
	if (tail != n) {
		r = CUDA_ERROR_UNKNOWN;		/* a cycle: cannot be */
		goto out;
	}
	/* Each part: a clone less the nodes of the others and the host nodes. */
	for (k = 0; k <= nhost; k++) {
		size_t left = 0;

		seg[k] = NULL;
		for (i = 0; i < n; i++)
			left += host[i] < 0 && part[i] == k;
		if (!left)
			continue;	/* an empty part: nothing to launch */
		r = vd.cuGraphClone(&seg[k], graph);
		if (r)
			goto out;
		made = (uint32_t)k + 1;
		for (i = 0; i < n && !r; i++) {
			CUgraphNode c;

			if (host[i] < 0 && part[i] == k)
				continue;
			r = vd.cuGraphNodeFindInClone(&c, nodes[i], seg[k]);
			if (!r)
				r = vd.cuGraphDestroyNode(c);
		}
		if (r)
			goto out;
	}
	r = CUDA_SUCCESS;
out:
	if (r)
		for (k = 0; k < made; k++)
			if (seg[k]) {
				vd.cuGraphDestroy(seg[k]);
				seg[k] = NULL;
			}
	free(nodes);
	free(by);
	free(part);
	free(indeg);
	free(order);
	free(host);
	free(from);
	free(to);
	free(edata);
	return r;
}

static CUresult capture_end(struct work *w, struct graph *g)
{
	struct cu_graph *cg = g->backend_priv;
	CUgraph graph = NULL;
	CUresult r;

	if (!cg) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (cg->begin_error) {
		r = cg->begin_error;
	} else {
		r = vd.cuStreamEndCapture(cg->capturing, &graph);
		cg->capturing = NULL;
		/* The dispatcher's verdict wins: it refused an op the vendor
		 * never saw (a host copy), or found a stream not joined. */
		if (!r && w->res)
			r = (CUresult)w->res;
		if (r && graph) {
			vd.cuGraphDestroy(graph);
			graph = NULL;
		}
		if (graph) {
			size_t n = 0;

			/* The client's cuGraphGetNodes counts the driver's nodes
			 * (host nodes included, as natively). */
			if (!vd.cuGraphGetNodes(graph, NULL, &n))
				w->aux0 = n;
		}
		if (graph && g->nhost) {
			cg->seg = calloc((size_t)g->nhost + 1, sizeof(*cg->seg));
			r = cg->seg ? split(graph, g->nhost, cg->seg) : CUDA_ERROR_OUT_OF_MEMORY;
			if (!r)
				cg->nseg = g->nhost + 1;
			else {
				free(cg->seg);
				cg->seg = NULL;
			}
			vd.cuGraphDestroy(graph);
			graph = NULL;
		}
		cg->graph = graph;
	}
	graph_set_ended(g, (int32_t)r);
	return r;
}

/* Part k of a graph (one part when it was not cut). */
static CUgraph part_of(const struct cu_graph *cg, uint32_t k)
{
	if (!cg->nseg)
		return k ? NULL : cg->graph;
	return k < cg->nseg ? cg->seg[k] : NULL;
}

static uint32_t parts(const struct cu_graph *cg)
{
	return cg->nseg ? cg->nseg : 1;
}

/*
 * Part by part. The parts (and which are empty) must match first; a part
 * the driver refuses stops the update there, the parts before it updated
 * (the driver would leave the exec as it was).
 */
static CUresult exec_update(struct work *w)
{
	struct cu_graph *cg = w->graph.graph->backend_priv;
	struct cu_exec *cx = w->graph.exec->backend_priv;
	CUgraphExecUpdateResultInfo info = { 0 };
	CUresult r = CUDA_SUCCESS;
	uint32_t k;

	if (parts(cg) != cx->nseg) {
		w->aux0 = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		graph_update_ran(w->graph.update, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	for (k = 0; k < cx->nseg; k++) {
		if (!part_of(cg, k) != !cx->x[k]) {
			w->aux0 = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
			graph_update_ran(w->graph.update,
					 CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
			return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		}
	}
	for (k = 0; k < cx->nseg && !r; k++)
		if (cx->x[k])
			r = vd.cuGraphExecUpdate(cx->x[k], part_of(cg, k), &info);
	w->aux0 = (uint64_t)info.result;
	/* Failed, some parts may be updated: the exec keeps naming what
	 * both graphs name. */
	graph_update_ran(w->graph.update, (int32_t)r);
	return r;
}

/* Executor: the graph work types, on the item's CUstream. */
CUresult cuda_graph_issue(struct work *w, CUstream cs)
{
	struct cu_exec *cx;

	switch (w->type) {
	case WORK_CAPTURE_BEGIN:
		return capture_begin(w->graph.graph, cs);
	case WORK_CAPTURE_END:
		return capture_end(w, w->graph.graph);
	case WORK_GRAPH_LAUNCH:
		cx = w->graph.exec->backend_priv;
		if (w->graph.seg >= cx->nseg)
			return CUDA_ERROR_INVALID_VALUE;	/* ops/graph.c checked */
		/* An empty part has nothing to run. */
		return cx->x[w->graph.seg] ? vd.cuGraphLaunch(cx->x[w->graph.seg], cs)
					   : CUDA_SUCCESS;
	case WORK_GRAPH_UPDATE:
		return exec_update(w);
	case WORK_HOST_NODE:
		/* Its place in the vendor's graph, cut there at the end. */
		if (!w->capture)
			return CUDA_ERROR_ILLEGAL_STATE;
		return vd.cuLaunchHostFunc(cs, host_placeholder,
					   (void *)(uintptr_t)w->host_node.index);
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

static void exec_free(struct cu_exec *cx)
{
	uint32_t k;

	for (k = 0; k < cx->nseg; k++)
		if (cx->x[k])
			vd.cuGraphExecDestroy(cx->x[k]);
	free(cx);
}

int cuda_graph_instantiate(struct axond *d, struct client *c, struct graph *g,
			   struct graph_exec *x, uint64_t flags)
{
	struct cu_graph *cg = g->backend_priv;
	struct cu_exec *cx;
	CUresult r;
	uint32_t k;

	(void)d;
	if (!cg || (!cg->graph && !cg->nseg))
		return CUDA_ERROR_INVALID_VALUE;
	cx = calloc(1, sizeof(*cx) + parts(cg) * sizeof(cx->x[0]));
	if (!cx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	cx->nseg = parts(cg);
	/* In the client's context (its own one in context mode). */
	r = cuda_enter(c, g->device);
	for (k = 0; k < cx->nseg && !r; k++)
		if (part_of(cg, k))
			r = vd.cuGraphInstantiateWithFlags(&cx->x[k], part_of(cg, k), flags);
	if (r)
		exec_free(cx);
	cuda_leave();
	if (r)
		return r;
	x->backend_priv = cx;
	return CUDA_SUCCESS;
}

void cuda_graph_fini(struct axond *d, struct graph *g)
{
	struct cu_graph *cg = g->backend_priv;
	CUgraph graph = NULL;

	(void)d;
	if (!cg)
		return;
	/* A client gone mid-capture: end the vendor's capture (its stream
	 * is destroyed after the graphs, client.c) and drop what it made. */
	if (cg->capturing && !vd.cuStreamEndCapture(cg->capturing, &graph) && graph)
		vd.cuGraphDestroy(graph);
	if (cg->graph)
		vd.cuGraphDestroy(cg->graph);
	for (uint32_t k = 0; k < cg->nseg; k++)
		if (cg->seg[k])
			vd.cuGraphDestroy(cg->seg[k]);
	free(cg->seg);
	free(cg);
	g->backend_priv = NULL;
}

void cuda_graph_exec_fini(struct axond *d, struct graph_exec *x)
{
	(void)d;
	if (x->backend_priv)
		exec_free(x->backend_priv);
	x->backend_priv = NULL;
}
