// SPDX-License-Identifier: MIT
/*
 * Built graphs (graphbuild.c) lowered to a stream capture: their
 * instantiation, cuGraphExecUpdate from them and
 * cuGraphExecKernelNodeSetParams.
 *
 * Instantiating a built graph lowers it to a stream capture (the daemon's
 * graphs, capture.c/graph.c): on a private stream of the current context
 * the nodes are issued in a topological order (Kahn's, ties broken by
 * creation order, so the same graph always lowers to the same sequence),
 * the capture's graph is instantiated and dropped. The nodes then run one
 * after the other, in a valid order, without the concurrency between
 * independent branches. cuGraphExecKernelNodeSetParams and cuGraphExecUpdate
 * lower again (the exec keeps a copy of the graph it was made from) and
 * update the exec from the capture: same topology by construction.
 * Memcpy nodes with a host side are lowered to cuMemcpyHtoDAsync /
 * cuMemcpyDtoHAsync in the capture, which copy.c makes read or write the
 * host memory at each launch; host nodes to cuLaunchHostFunc, which runs
 * the function in this process at its place in each launch (hostfunc.c).
 * The execs are under shim_gb_lock (graphbuild.h), with the graphs.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graphbuild.h"
#include "graphlower.h"
#include "forkreg.h"

/* An exec made from a built graph: a copy of that graph, to lower again. */
struct gb_exec {
	uint64_t exec;
	struct gb_graph *copy;
	struct gb_node **orig;		/* the original node of each copy index */
	struct gb_exec *next;
};

/* A private stream per context, for lowering. */
struct gb_stream {
	uint64_t ctx;
	CUstream s;
};

/* Serialises lowering: one capture at a time on a private stream. Taken
 * before anything else, never while holding shim_gb_lock. */
static pthread_mutex_t lower_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gb_exec *execs;			/* shim_gb_lock */
static struct gb_stream streams[SHIM_MAX_CTX];	/* shim_gb_lock */

struct gb_graph *shim_gb_graph_copy(const struct gb_graph *g)
{
	struct gb_graph *c = calloc(1, sizeof(*c));
	uint32_t i;

	if (!c)
		return NULL;
	c->node = calloc(g->n ? g->n : 1, sizeof(*c->node));
	if (!c->node)
		goto err;
	c->cap = g->n;
	c->depth = g->depth;
	for (i = 0; i < g->n; i++) {
		const struct gb_node *o = g->node[i];
		struct gb_node *n = calloc(1, sizeof(*n));

		if (!n)
			goto err;
		*n = *o;
		n->g = c;
		n->deps = NULL;
		n->capdeps = n->ndeps = 0;
		if (o->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			n->k.args = malloc(o->k.args_size ? o->k.args_size : 1);
			if (n->k.args)
				memcpy(n->k.args, o->k.args, o->k.args_size);
		}
		/* (NULL when it fails: the original's is not this one's) */
		if (o->type == CU_GRAPH_NODE_TYPE_GRAPH)
			n->child = shim_gb_graph_copy(o->child);
		c->node[c->n++] = n;
		if ((o->type == CU_GRAPH_NODE_TYPE_KERNEL && !n->k.args) ||
		    (o->type == CU_GRAPH_NODE_TYPE_GRAPH && !n->child) ||
		    (o->ndeps && !(n->deps = malloc(o->ndeps * sizeof(*n->deps)))))
			goto err;
		if (o->ndeps)
			memcpy(n->deps, o->deps, o->ndeps * sizeof(*n->deps));
		n->ndeps = n->capdeps = o->ndeps;
	}
	return c;
err:
	shim_gb_graph_free(c);
	return NULL;
}

/* Kahn's order of g's nodes (creation order among the ready ones); NULL
 * for a cycle or no memory (*r says which). */
static uint32_t *topo(const struct gb_graph *g, CUresult *r)
{
	uint32_t *order = malloc((g->n ? g->n : 1) * sizeof(*order));
	uint32_t *pending = calloc(g->n ? g->n : 1, sizeof(*pending));
	bool *done = calloc(g->n ? g->n : 1, sizeof(*done));
	uint32_t k = 0, i, j;

	*r = CUDA_ERROR_OUT_OF_MEMORY;
	if (!order || !pending || !done)
		goto err;
	for (i = 0; i < g->n; i++)
		pending[i] = g->node[i]->ndeps;
	while (k < g->n) {
		/* The first ready node by creation order: O(n^2), fine for
		 * graphs built by hand. */
		for (i = 0; i < g->n && (done[i] || pending[i]); i++)
			;
		if (i == g->n) {
			*r = CUDA_ERROR_INVALID_VALUE;	/* a cycle */
			goto err;
		}
		done[i] = true;
		order[k++] = i;
		for (j = 0; j < g->n; j++)
			for (uint32_t d = 0; d < g->node[j]->ndeps; d++)
				if (g->node[j]->deps[d] == i)
					pending[j]--;
	}
	free(pending);
	free(done);
	*r = CUDA_SUCCESS;
	return order;
err:
	free(order);
	free(pending);
	free(done);
	return NULL;
}

/* The current context's private stream for lowering. */
static CUresult lowering_stream(CUstream *out)
{
	struct shim_ctx *sc;
	CUresult r = shim_get_ctx(&sc);
	unsigned int i = 0;
	CUstream s;

	if (r)
		return r;
	i = AXON_HANDLE_INDEX(sc->handle) % SHIM_MAX_CTX;
	pthread_mutex_lock(&shim_gb_lock);
	if (streams[i].ctx == sc->handle && streams[i].s) {
		*out = streams[i].s;
		pthread_mutex_unlock(&shim_gb_lock);
		return CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&shim_gb_lock);
	r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	if (r)
		return r;
	pthread_mutex_lock(&shim_gb_lock);
	streams[i].ctx = sc->handle;
	streams[i].s = s;
	pthread_mutex_unlock(&shim_gb_lock);
	*out = s;
	return CUDA_SUCCESS;
}

/* Lowers g (a copy, owned by the caller) to a daemon graph in *out. */
static CUresult lower_locked(const struct gb_graph *g, CUgraph *out);

static CUresult lower(const struct gb_graph *g, CUgraph *out)
{
	CUresult r;

	pthread_mutex_lock(&lower_lock);
	r = lower_locked(g, out);
	pthread_mutex_unlock(&lower_lock);
	return r;
}

/* Issues g's nodes on s, in a topological order; a child graph's nodes
 * at the child node's place, in the child's order. */
static CUresult issue_nodes(const struct gb_graph *g, CUstream s)
{
	CUresult r;
	uint32_t *order, i;

	order = topo(g, &r);
	if (!order)
		return r;
	for (i = 0; i < g->n && !r; i++) {
		const struct gb_node *n = g->node[order[i]];

		switch (n->type) {
		case CU_GRAPH_NODE_TYPE_KERNEL: {
			size_t size = n->k.args_size;
			void *extra[] = {
				CU_LAUNCH_PARAM_BUFFER_POINTER, n->k.args,
				CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
				CU_LAUNCH_PARAM_END,
			};

			r = cuLaunchKernel(n->k.f, n->k.grid[0], n->k.grid[1], n->k.grid[2],
					   n->k.block[0], n->k.block[1], n->k.block[2],
					   n->k.shmem, s, NULL, extra);
			break;
		}
		case CU_GRAPH_NODE_TYPE_MEMSET:	/* the stream's MEMSET op, 2D too */
			r = shim_memset_async(n->m.dst, n->m.pitch, n->m.value, n->m.elementSize,
					      n->m.width, n->m.height, s);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			if (n->c.host_src)
				r = cuMemcpyHtoDAsync_v2(n->c.dst, n->c.src_host, n->c.len, s);
			else if (n->c.host_dst)
				r = cuMemcpyDtoHAsync_v2(n->c.dst_host, n->c.src, n->c.len, s);
			else
				r = cuMemcpyDtoDAsync_v2(n->c.dst, n->c.src, n->c.len, s);
			break;
		case CU_GRAPH_NODE_TYPE_HOST:	/* a captured host function */
			r = cuLaunchHostFunc(s, n->h.fn, n->h.userData);
			break;
		case CU_GRAPH_NODE_TYPE_GRAPH:	/* depth bounded (graphchild.c) */
			r = issue_nodes(n->child, s);
			break;
		default:
			break;		/* empty: ordering only, which the order gives */
		}
	}
	free(order);
	return r;
}

static CUresult lower_locked(const struct gb_graph *g, CUgraph *out)
{
	CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUresult r, r2;
	CUgraph dg = NULL;
	CUstream s;

	r = lowering_stream(&s);
	if (!r)
		r = cuStreamBeginCapture_v2(s, relaxed);
	if (r)
		return r;
	r = issue_nodes(g, s);
	r2 = cuStreamEndCapture(s, &dg);
	if (r || r2) {
		if (dg)
			cuGraphDestroy(dg);
		return r ? r : r2;
	}
	*out = dg;
	return CUDA_SUCCESS;
}

static void exec_record_free(struct gb_exec *e)
{
	if (!e)
		return;
	if (e->copy)
		shim_gb_graph_free(e->copy);
	free(e->orig);
	free(e);
}

/*
 * A copy of built graph hg and the original of each of its nodes, taken
 * under the lock; NULL with the error when hg is no live graph or out of
 * memory.
 */
static struct gb_graph *snapshot(CUgraph hg, struct gb_node ***orig, CUresult *r)
{
	struct gb_graph *g = (struct gb_graph *)hg, *copy = NULL;
	uint32_t i;

	*orig = NULL;
	pthread_mutex_lock(&shim_gb_lock);
	if (shim_gb_live(g)) {
		copy = shim_gb_graph_copy(g);
		*orig = calloc(g->n ? g->n : 1, sizeof(**orig));
		for (i = 0; *orig && i < g->n; i++)
			(*orig)[i] = g->node[i];
	}
	pthread_mutex_unlock(&shim_gb_lock);
	if (copy && *orig)
		return copy;
	/* Either missing: out of memory; both: no such graph. */
	*r = copy || *orig ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	if (copy)
		shim_gb_graph_free(copy);
	free(*orig);
	*orig = NULL;
	return NULL;
}

/* shim_gb_lock held: the record of exec x, if it was made from a built
 * graph. */
static struct gb_exec *exec_of(CUgraphExec x)
{
	struct gb_exec *e;

	for (e = execs; e && e->exec != (uint64_t)(uintptr_t)x; e = e->next)
		;
	return e;
}

/*
 * Lowers copy and updates exec x from the capture; on success the exec's
 * record takes copy (and orig, when not NULL: the nodes it was copied
 * from). What the record does not take is freed.
 */
static CUresult update_from(CUgraphExec x, struct gb_graph *copy, struct gb_node **orig,
			    CUresult (*update)(CUgraphExec, CUgraph, CUgraphExecUpdateResult *),
			    CUgraphExecUpdateResult *result)
{
	struct gb_exec *e;
	CUgraph dg = NULL;
	CUresult r;

	r = lower(copy, &dg);
	if (!r)
		r = update(x, dg, result);
	if (dg)
		cuGraphDestroy(dg);
	pthread_mutex_lock(&shim_gb_lock);
	e = exec_of(x);
	if (!r && e) {
		shim_gb_graph_free(e->copy);
		e->copy = copy;
		copy = NULL;
		if (orig) {
			free(e->orig);
			e->orig = orig;
			orig = NULL;
		}
	}
	pthread_mutex_unlock(&shim_gb_lock);
	if (copy)
		shim_gb_graph_free(copy);
	free(orig);
	return r;
}

/* cuGraphInstantiate* of a built graph (graph.c): lower, instantiate, drop
 * the capture's graph, remember a copy for later node updates. */
CUresult shim_gb_instantiate(CUgraphExec *out, CUgraph hg, unsigned long long flags,
			     CUresult (*inst)(CUgraphExec *, CUgraph, unsigned long long))
{
	struct gb_exec *e = calloc(1, sizeof(*e));
	CUgraph dg = NULL;
	CUresult r;

	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->copy = snapshot(hg, &e->orig, &r);
	if (!e->copy) {
		exec_record_free(e);
		return r;
	}
	r = lower(e->copy, &dg);
	if (!r)
		r = inst(out, dg, flags);
	if (dg)
		cuGraphDestroy(dg);	/* the exec is a copy of it */
	if (r) {
		exec_record_free(e);
		return r;
	}
	e->exec = (uint64_t)(uintptr_t)*out;
	pthread_mutex_lock(&shim_gb_lock);
	e->next = execs;
	execs = e;
	pthread_mutex_unlock(&shim_gb_lock);
	return CUDA_SUCCESS;
}

/* cuGraphExecDestroy (graph.c): forget the exec's copy, if it has one. */
void shim_gb_exec_forget(uint64_t exec)
{
	struct gb_exec **pp, *e = NULL;

	pthread_mutex_lock(&shim_gb_lock);
	for (pp = &execs; *pp; pp = &(*pp)->next) {
		if ((*pp)->exec == exec) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&shim_gb_lock);
	exec_record_free(e);
}

/*
 * cuGraphExecUpdate from a built graph (graph.c): lower it, update the exec
 * from the capture; on success the exec's copy becomes a copy of g.
 */
CUresult shim_gb_exec_update(CUgraphExec x, CUgraph hg,
			     CUresult (*update)(CUgraphExec, CUgraph, CUgraphExecUpdateResult *),
			     CUgraphExecUpdateResult *result)
{
	struct gb_node **orig;
	struct gb_graph *copy;
	CUresult r;

	*result = CU_GRAPH_EXEC_UPDATE_ERROR;
	copy = snapshot(hg, &orig, &r);
	if (!copy)
		return r;
	return update_from(x, copy, orig, update, result);
}

/* graph.c's exec update, for the exec-node call below. */
CUresult shim_graph_exec_update_daemon(CUgraphExec x, CUgraph g, CUgraphExecUpdateResult *res);

static CUresult exec_kernel_set(CUgraphExec x, CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct gb_node tmp = { .type = CU_GRAPH_NODE_TYPE_KERNEL };
	CUgraphExecUpdateResult res;
	struct gb_graph *copy = NULL;
	bool found = false;
	struct gb_exec *e;
	CUresult r;
	uint32_t i;

	r = shim_gb_kernel_set(&tmp, p);
	if (r)
		return r;
	/* The exec's copy with this one node changed. */
	pthread_mutex_lock(&shim_gb_lock);
	e = exec_of(x);
	for (i = 0; e && i < e->copy->n && e->orig[i] != (struct gb_node *)h; i++)
		;
	if (e && i < e->copy->n && e->copy->node[i]->type == CU_GRAPH_NODE_TYPE_KERNEL) {
		found = true;
		copy = shim_gb_graph_copy(e->copy);
	}
	pthread_mutex_unlock(&shim_gb_lock);
	if (!copy) {
		free(tmp.k.args);
		/* Not a kernel node of the graph the exec was made from (execs
		 * made by capture have no node handles to name). */
		return found ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	}
	free(copy->node[i]->k.args);
	copy->node[i]->k = tmp.k;
	return update_from(x, copy, NULL, shim_graph_exec_update_daemon, &res);
}

SHIM_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode h,
						       const CUDA_KERNEL_NODE_PARAMS *p)
{
	return exec_kernel_set(x, h, p);
}

SHIM_EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode h,
						    const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS tmp;

	return exec_kernel_set(x, h, shim_gb_kparams_v1(p, &tmp));
}

/*
 * cuGraphExec{Host,Memset}NodeSetParams: the exec's copy with node h's
 * parameters replaced by tmpl's (a node of h's type, no allocations of
 * its own), lowered again and the exec updated from it.
 */
CUresult shim_gb_exec_node_set(CUgraphExec x, CUgraphNode h, const struct gb_node *tmpl)
{
	CUgraphExecUpdateResult res;
	struct gb_graph *copy = NULL;
	bool found = false;
	struct gb_exec *e;
	uint32_t i;

	pthread_mutex_lock(&shim_gb_lock);
	e = exec_of(x);
	for (i = 0; e && i < e->copy->n && e->orig[i] != (struct gb_node *)h; i++)
		;
	if (e && i < e->copy->n && e->copy->node[i]->type == tmpl->type) {
		found = true;
		copy = shim_gb_graph_copy(e->copy);
	}
	pthread_mutex_unlock(&shim_gb_lock);
	if (!copy)
		return found ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	if (tmpl->type == CU_GRAPH_NODE_TYPE_HOST)
		copy->node[i]->h = tmpl->h;
	else
		copy->node[i]->m = tmpl->m;
	return update_from(x, copy, NULL, shim_graph_exec_update_daemon, &res);
}

/* After fork: the parent's execs and streams are not the child's. */
static void lower_forget(void)
{
	while (execs) {
		struct gb_exec *e = execs;

		execs = e->next;
		exec_record_free(e);
	}
	memset(streams, 0, sizeof(streams));
	pthread_mutex_init(&lower_lock, NULL);
}

__attribute__((constructor)) static void register_lower_forget(void)
{
	shim_fork_register(lower_forget);
}
