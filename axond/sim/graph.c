// SPDX-License-Identifier: MIT
/*
 * Graphs in the sim: a captured graph is the list of its nodes (copies of
 * the work items the capture took, in the order the executor met them,
 * each with its part: the host nodes submitted before it, graph.h); a
 * graph exec is its own copy of that list, sorted by part (stably); a
 * launch replays one part, in order, on the executor, as part of the
 * launching stream's one item. Host nodes themselves leave nothing here:
 * the client runs them between the parts.
 *
 * Submission order is a topological order of the captured dependencies
 * (an item is only submitted after everything it depends on), so replaying
 * the nodes in that order on one stream runs the same graph the driver
 * would, minus the concurrency between its branches. A graph launched into
 * a capture is inlined (the nodes of the part launched are copied), where
 * the driver would add a child-graph node. Copies to and from shared host
 * regions keep the daemon's pointer to the region; launches check that it
 * is still what the region shows (ops/graph.c).
 *
 * Threads: the executor appends nodes while capturing and replays and
 * updates exec lists; the dispatcher copies a graph's list into an exec at
 * instantiation, only once the capture's end is published (graph_ready),
 * and frees lists once no queued work uses them (release-later).
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "../axond.h"
#include "../backend.h"
#include "../graph.h"
#include "sim.h"

struct sim_nodes {
	/* type, parameters and capture_seg; client, stream unused */
	struct work *node;
	uint32_t n, cap;
	int32_t error;		/* capture: a node could not be kept */
	/* An exec's: node[] sorted by part, part k is node[start[k]] up to
	 * node[start[k + 1]]; nparts + 1 entries. NULL for a graph's list. */
	uint32_t *start;
	uint32_t nparts;
};

static void nodes_clear(struct sim_nodes *l)
{
	uint32_t i;

	for (i = 0; i < l->n; i++)
		if (l->node[i].type == WORK_LAUNCH)
			free(l->node[i].launch.args);
	free(l->node);
	free(l->start);
	memset(l, 0, sizeof(*l));
}

/*
 * A node's parameters into dst (its old launch arguments are freed). A
 * launch's arguments and its attributes (LAUNCH_EX) are copied into one
 * allocation, as ops/launch.c makes them.
 */
static bool node_set(struct work *dst, const struct work *src)
{
	const struct axon_launch_attr *attrs = NULL;
	size_t room = 0;
	void *args = NULL;

	if (src->type == WORK_LAUNCH) {
		room = ((size_t)src->launch.args_size + 7) & ~(size_t)7;
		args = malloc(room + src->launch.nattrs * sizeof(*attrs) + 1);
		if (!args)
			return false;
		memcpy(args, src->launch.args, src->launch.args_size);
		if (src->launch.nattrs) {
			attrs = (const void *)((char *)args + room);
			memcpy((void *)attrs, src->launch.attrs,
			       src->launch.nattrs * sizeof(*attrs));
		}
	}
	if (dst->type == WORK_LAUNCH)
		free(dst->launch.args);
	memset(dst, 0, sizeof(*dst));
	dst->type = src->type;
	dst->capture_seg = src->capture_seg;
	switch (src->type) {
	case WORK_HTOD:
	case WORK_DTOH:
	case WORK_DTOD:
		dst->copy = src->copy;
		break;
	case WORK_MEMSET:
		dst->memset = src->memset;
		break;
	case WORK_COPY_2D:
		dst->copy2d = src->copy2d;
		break;
	default:
		dst->launch = src->launch;
		dst->launch.args = args;
		dst->launch.attrs = attrs;
		break;
	}
	return true;
}

static bool nodes_append(struct sim_nodes *l, const struct work *w)
{
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		struct work *p;

		if (cap <= l->n)
			return false;
		p = realloc(l->node, (size_t)cap * sizeof(*p));
		if (!p)
			return false;
		l->node = p;
		l->cap = cap;
	}
	memset(&l->node[l->n], 0, sizeof(l->node[l->n]));
	if (!node_set(&l->node[l->n], w))
		return false;
	l->n++;
	return true;
}

/*
 * Executor: an item of a capturing stream. Returns true when the capture
 * took it (with *res), false when it runs as usual (an event record keeps
 * its bookkeeping so that nothing waits for it forever).
 */
bool sim_graph_record(struct work *w, int32_t *res)
{
	struct sim_nodes *l = w->capture->backend_priv;
	const struct sim_nodes *x;
	uint32_t i;

	*res = CUDA_SUCCESS;
	switch (w->type) {
	case WORK_EVENT_RECORD:
		return false;
	case WORK_HTOD:
	case WORK_DTOH:
	case WORK_DTOD:
	case WORK_MEMSET:
	case WORK_COPY_2D:
	case WORK_LAUNCH:
		if (!l || !nodes_append(l, w))
			*res = CUDA_ERROR_OUT_OF_MEMORY;
		break;
	case WORK_GRAPH_LAUNCH:
		/* The part launched, in this capture's current part. */
		x = w->graph.exec->backend_priv;
		if (w->graph.seg >= x->nparts) {
			*res = CUDA_ERROR_INVALID_VALUE;
			break;
		}
		for (i = x->start[w->graph.seg]; i < x->start[w->graph.seg + 1] && !*res; i++) {
			if (!l || !nodes_append(l, &x->node[i]))
				*res = CUDA_ERROR_OUT_OF_MEMORY;
			else
				l->node[l->n - 1].capture_seg = w->capture_seg;
		}
		break;
	case WORK_ADVANCE:
		*res = w->res;	/* the dispatcher invalidated the capture */
		return true;
	default:
		return true;	/* waits and markers: nothing to keep */
	}
	if (*res && l && !l->error)
		l->error = *res;
	return true;
}

/*
 * An exec's list from a graph's (nhost host nodes): its nodes sorted by
 * part, keeping their order within each. NULL when out of memory.
 */
static struct sim_nodes *parts_copy(const struct sim_nodes *l, uint32_t nhost)
{
	struct sim_nodes *e = calloc(1, sizeof(*e));
	uint32_t *at = NULL, i, k, n = l ? l->n : 0;

	if (!e)
		return NULL;
	e->nparts = nhost + 1;
	e->start = calloc((size_t)e->nparts + 1, sizeof(*e->start));
	e->node = calloc(n ? n : 1, sizeof(*e->node));
	at = calloc((size_t)e->nparts + 1, sizeof(*at));
	if (!e->start || !e->node || !at)
		goto err;
	e->cap = n ? n : 1;
	/* Counting sort: a node's part is at most nhost (ops/graph.c). */
	for (i = 0; i < n; i++)
		e->start[(l->node[i].capture_seg < nhost ? l->node[i].capture_seg : nhost) + 1]++;
	for (k = 0; k < e->nparts; k++)
		e->start[k + 1] += e->start[k];
	memcpy(at, e->start, ((size_t)e->nparts + 1) * sizeof(*at));
	for (i = 0; i < n; i++) {
		k = l->node[i].capture_seg < nhost ? l->node[i].capture_seg : nhost;
		if (!node_set(&e->node[at[k]], &l->node[i]))
			goto err;
		e->node[at[k]++].capture_seg = k;
	}
	e->n = n;
	free(at);
	return e;
err:
	/* Nodes not set yet are zero (WORK_ADVANCE): nothing to free. */
	e->n = e->node ? n : 0;
	free(at);
	nodes_clear(e);
	free(e);
	return NULL;
}

/* Executor: replays one part of an exec as one item of the launching
 * stream. */
static int32_t replay(struct work *w)
{
	const struct sim_nodes *x = w->graph.exec->backend_priv;
	int32_t res = CUDA_SUCCESS;
	uint32_t i;

	if (w->graph.seg >= x->nparts)
		return CUDA_ERROR_INVALID_VALUE;	/* ops/graph.c checked */
	for (i = x->start[w->graph.seg]; i < x->start[w->graph.seg + 1] && !res; i++) {
		struct work n = x->node[i];

		n.client = w->client;
		n.stream = w->stream;
		n.capture = NULL;
		res = sim_execute(&n);
	}
	return res;
}

/* Same topology, parameters that may change: a CUgraphExecUpdateResult. */
static CUgraphExecUpdateResult update_check(const struct sim_nodes *x,
					    const struct sim_nodes *g)
{
	uint32_t i;

	if (x->n != g->n || x->nparts != g->nparts ||
	    memcmp(x->start, g->start, ((size_t)x->nparts + 1) * sizeof(*x->start)))
		return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
	for (i = 0; i < x->n; i++) {
		const struct work *a = &x->node[i], *b = &g->node[i];

		if (a->type != b->type)
			return CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
		/* As the driver: only 1D memsets change, element size fixed. */
		if (a->type == WORK_MEMSET &&
		    (a->memset.elem_size != b->memset.elem_size ||
		     ((a->memset.height > 1 || b->memset.height > 1) &&
		      (a->memset.height != b->memset.height ||
		       a->memset.width != b->memset.width ||
		       a->memset.pitch != b->memset.pitch))))
			return CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
	}
	return CU_GRAPH_EXEC_UPDATE_SUCCESS;
}

static int32_t update(struct work *w)
{
	struct sim_nodes *x = w->graph.exec->backend_priv;
	struct sim_nodes *fresh, old;
	CUgraphExecUpdateResult r;

	/* The graph's nodes as the exec would hold them, copied first, so
	 * that running out of memory changes nothing. */
	fresh = parts_copy(w->graph.graph->backend_priv, w->graph.graph->nhost);
	if (!fresh)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = update_check(x, fresh);
	w->aux0 = (uint64_t)r;
	if (r != CU_GRAPH_EXEC_UPDATE_SUCCESS) {
		nodes_clear(fresh);
		free(fresh);
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	old = *x;
	*x = *fresh;
	*fresh = old;
	nodes_clear(fresh);
	free(fresh);
	return CUDA_SUCCESS;
}

static int32_t update_reporting(struct work *w)
{
	int32_t res = update(w);

	graph_update_ran(w->graph.update, res);
	return res;
}

/* Executor: the graph work types. */
int32_t sim_graph_execute(struct work *w)
{
	struct graph *g = w->graph.graph;
	struct sim_nodes *l;
	int32_t res;

	switch (w->type) {
	case WORK_CAPTURE_BEGIN:
		g->backend_priv = calloc(1, sizeof(struct sim_nodes));
		return CUDA_SUCCESS;	/* no list: the END says so */
	case WORK_CAPTURE_END:
		l = g->backend_priv;
		res = w->res;
		if (!res && (!l || l->error))
			res = l ? l->error : CUDA_ERROR_OUT_OF_MEMORY;
		graph_set_ended(g, res);
		return res;
	case WORK_GRAPH_LAUNCH:
		return replay(w);
	case WORK_GRAPH_UPDATE:
		return update_reporting(w);
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

/* Dispatcher: the exec gets its own copy of the graph's nodes. */
int sim_graph_instantiate(struct axond *d, struct client *c, struct graph *g,
			  struct graph_exec *x, uint64_t flags)
{
	const uint64_t known = CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH |
			       CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD |
			       CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH |
			       CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY;
	struct sim_nodes *e;

	(void)d;
	(void)c;
	if (flags & ~known)
		return CUDA_ERROR_INVALID_VALUE;
	/* Graphs launched from kernels: the sim runs no device code. */
	if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
		return CUDA_ERROR_NOT_SUPPORTED;
	e = parts_copy(g->backend_priv, g->nhost);
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	x->backend_priv = e;
	return CUDA_SUCCESS;
}

void sim_graph_fini(struct axond *d, struct graph *g)
{
	(void)d;
	if (g->backend_priv) {
		nodes_clear(g->backend_priv);
		free(g->backend_priv);
		g->backend_priv = NULL;
	}
}

void sim_graph_exec_fini(struct axond *d, struct graph_exec *x)
{
	(void)d;
	if (x->backend_priv) {
		nodes_clear(x->backend_priv);
		free(x->backend_priv);
		x->backend_priv = NULL;
	}
}
