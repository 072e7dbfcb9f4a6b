// SPDX-License-Identifier: MIT
/*
 * Graphs built node by node (cuGraphCreate, cuGraphAdd{Kernel,Memset,
 * Memcpy,Empty}Node, cuGraphAddDependencies, cuGraph{Exec,}KernelNodeSetParams).
 *
 * Such a graph lives in the client: a list of nodes with their parameters
 * and dependencies. Instantiating it lowers it to a stream capture (the
 * daemon's graphs, capture.c/graph.c): on a private stream of the current
 * context the nodes are issued in a topological order (Kahn's, ties broken
 * by creation order, so the same graph always lowers to the same sequence),
 * the capture's graph is instantiated and dropped. The nodes then run one
 * after the other, in a valid order, without the concurrency between
 * independent branches. cuGraphExecKernelNodeSetParams and cuGraphExecUpdate
 * lower again (the exec keeps a copy of the graph it was made from) and
 * update the exec from the capture: same topology by construction.
 *
 * A CUgraph of this kind is the address of a struct gb_graph, a CUgraphNode
 * the address of a struct gb_node; both are checked against the live list
 * before use. Daemon graph handles (type byte 6) never look like these.
 * Memcpy nodes: one-dimensional (a 3D copy of one row), device to device
 * or between device and host memory (lowered to cuMemcpyHtoDAsync /
 * cuMemcpyDtoHAsync in the capture, which copy.c makes read or write the
 * host memory at each launch); anything else, and host nodes, child
 * graphs, event nodes: NOT_SUPPORTED.
 * One lock (gb_lock) protects everything here; it is never held across a
 * call into the rest of the shim.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "forkreg.h"

struct gb_graph;

struct gb_node {
	struct gb_graph *g;
	uint32_t index;			/* in g->node */
	CUgraphNodeType type;
	uint32_t *deps;			/* indices of the nodes it waits for */
	uint32_t ndeps, capdeps;
	union {
		struct {
			CUfunction f;
			unsigned int grid[3], block[3], shmem;
			void *args;	/* packed as the function's layout */
			size_t args_size;
		} k;
		CUDA_MEMSET_NODE_PARAMS m;
		/* host_dst / host_src: that side is host memory, at dst_host
		 * / src_host */
		struct {
			CUdeviceptr dst, src;
			size_t len;
			void *dst_host;
			const void *src_host;
			bool host_dst, host_src;
		} c;
	};
};

struct gb_graph {
	struct gb_node **node;
	uint32_t n, cap;
	struct gb_graph *next;		/* gb.graphs */
};

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

static struct {
	pthread_mutex_t lock;
	/* Serialises lowering: one capture at a time on a private stream.
	 * Taken before anything else, never while holding gb.lock. */
	pthread_mutex_t lower_lock;
	struct gb_graph *graphs;
	struct gb_exec *execs;
	struct gb_stream streams[SHIM_MAX_CTX];
} gb = { .lock = PTHREAD_MUTEX_INITIALIZER, .lower_lock = PTHREAD_MUTEX_INITIALIZER };

static bool live(const struct gb_graph *g)
{
	const struct gb_graph *p;

	for (p = gb.graphs; p; p = p->next)
		if (p == g)
			return true;
	return false;
}

/* Whether g is a built graph of ours (rather than a daemon handle). */
bool shim_gb_owns(CUgraph g)
{
	bool ok;

	if (AXON_HANDLE_TYPE((uint64_t)(uintptr_t)g) == AXON_HANDLE_GRAPH)
		return false;
	pthread_mutex_lock(&gb.lock);
	ok = live((const struct gb_graph *)g);
	pthread_mutex_unlock(&gb.lock);
	return ok;
}

/* gb.lock held: the node, if it is one of a live graph. */
static struct gb_node *node_of(CUgraphNode h)
{
	struct gb_node *n = (struct gb_node *)h;
	struct gb_graph *g;

	for (g = gb.graphs; g; g = g->next)
		for (uint32_t i = 0; i < g->n; i++)
			if (g->node[i] == n)
				return n;
	return NULL;
}

static void node_free(struct gb_node *n)
{
	if (!n)
		return;
	if (n->type == CU_GRAPH_NODE_TYPE_KERNEL)
		free(n->k.args);
	free(n->deps);
	free(n);
}

static void graph_free(struct gb_graph *g)
{
	uint32_t i;

	for (i = 0; i < g->n; i++)
		node_free(g->node[i]);
	free(g->node);
	free(g);
}

SHIM_EXPORT CUresult cuGraphCreate(CUgraph *out, unsigned int flags)
{
	struct gb_graph *g;

	if (!out || flags)
		return CUDA_ERROR_INVALID_VALUE;
	g = calloc(1, sizeof(*g));
	if (!g)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&gb.lock);
	g->next = gb.graphs;
	gb.graphs = g;
	pthread_mutex_unlock(&gb.lock);
	SHIM_LOCAL();
	*out = (CUgraph)g;
	return CUDA_SUCCESS;
}

/* cuGraphDestroy of a built graph (graph.c calls it). */
CUresult shim_gb_destroy(CUgraph h)
{
	struct gb_graph **pp;

	pthread_mutex_lock(&gb.lock);
	for (pp = &gb.graphs; *pp; pp = &(*pp)->next) {
		if (*pp == (struct gb_graph *)h) {
			struct gb_graph *g = *pp;

			*pp = g->next;
			pthread_mutex_unlock(&gb.lock);
			graph_free(g);
			return CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&gb.lock);
	return CUDA_ERROR_INVALID_VALUE;
}

static bool add_dep(struct gb_node *n, uint32_t from)
{
	uint32_t i;

	for (i = 0; i < n->ndeps; i++)
		if (n->deps[i] == from)
			return true;	/* an edge once */
	if (n->ndeps == n->capdeps) {
		uint32_t cap = n->capdeps ? n->capdeps * 2 : 4;
		uint32_t *p = realloc(n->deps, cap * sizeof(*p));

		if (!p)
			return false;
		n->deps = p;
		n->capdeps = cap;
	}
	n->deps[n->ndeps++] = from;
	return true;
}

/* Adds n (parameters filled) to g after deps; takes n either way. */
static CUresult add_node(CUgraphNode *out, CUgraph hg, const CUgraphNode *deps,
			 size_t ndeps, struct gb_node *n)
{
	struct gb_graph *g = (struct gb_graph *)hg;
	CUresult r = CUDA_SUCCESS;
	size_t i;

	if (!out || (ndeps && !deps)) {
		node_free(n);
		return CUDA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&gb.lock);
	if (!live(g)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	for (i = 0; i < ndeps && !r; i++) {
		struct gb_node *d = node_of(deps[i]);

		if (!d || d->g != g)
			r = CUDA_ERROR_INVALID_VALUE;
		else if (!add_dep(n, d->index))
			r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (!r && g->n == g->cap) {
		uint32_t cap = g->cap ? g->cap * 2 : 16;
		struct gb_node **p = realloc(g->node, cap * sizeof(*p));

		if (!p)
			r = CUDA_ERROR_OUT_OF_MEMORY;
		else {
			g->node = p;
			g->cap = cap;
		}
	}
	if (!r) {
		n->g = g;
		n->index = g->n;
		g->node[g->n++] = n;
		*out = (CUgraphNode)n;
		n = NULL;
	}
out:
	pthread_mutex_unlock(&gb.lock);
	node_free(n);
	return r;
}

/* A kernel node's parameters: the arguments packed now, as a launch would. */
static CUresult kernel_set(struct gb_node *n, CUfunction f, const unsigned int grid[3],
			   const unsigned int block[3], unsigned int shmem,
			   void **params, void **extra)
{
	const void *buf = NULL;
	size_t buf_size = 0, i;
	struct shim_func *sf;
	void *args;

	if (!f)
		return CUDA_ERROR_INVALID_VALUE;
	if (extra) {
		for (i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = extra[i + 1];
			else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				buf_size = *(size_t *)extra[i + 1];
			else
				return CUDA_ERROR_INVALID_VALUE;
		}
		if (params || !buf)
			return CUDA_ERROR_INVALID_VALUE;
	}
	shim_lock();
	sf = shim_func_of(f);
	if (!sf || (extra && buf_size < sf->args_size) ||
	    (!extra && sf->nparams && !params)) {
		shim_unlock();
		return sf ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_HANDLE;
	}
	args = malloc(sf->args_size ? sf->args_size : 1);
	if (!args) {
		shim_unlock();
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (extra) {
		memcpy(args, buf, sf->args_size);
	} else {
		for (i = 0; i < sf->nparams; i++)
			memcpy((char *)args + AXON_PARAM_OFFSET(sf->param[i]), params[i],
			       AXON_PARAM_SIZE(sf->param[i]));
	}
	n->k.args_size = sf->args_size;
	shim_unlock();
	free(n->k.args);
	n->k.args = args;
	n->k.f = f;
	memcpy(n->k.grid, grid, sizeof(n->k.grid));
	memcpy(n->k.block, block, sizeof(n->k.block));
	n->k.shmem = shmem;
	return CUDA_SUCCESS;
}

static CUresult add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
			   CUfunction f, const unsigned int grid[3], const unsigned int block[3],
			   unsigned int shmem, void **params, void **extra)
{
	struct gb_node *n = calloc(1, sizeof(*n));
	CUresult r;

	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_KERNEL;
	r = kernel_set(n, f, grid, block, shmem, params, extra);
	if (r) {
		node_free(n);
		return r;
	}
	return add_node(out, g, deps, ndeps, n);
}

/* A CUkernel is accepted where a function is (as cuLaunchKernel does). */
static CUfunction func_of(CUfunction f, CUkernel k)
{
	return f ? f : (CUfunction)k;
}

SHIM_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g,
					     const CUgraphNode *deps, size_t ndeps,
					     const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return add_kernel(out, g, deps, ndeps, func_of(p->func, p->kern),
			  (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			  (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			  p->sharedMemBytes, p->kernelParams, p->extra);
}

SHIM_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *out, CUgraph g,
					  const CUgraphNode *deps, size_t ndeps,
					  const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return add_kernel(out, g, deps, ndeps, p->func,
			  (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			  (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			  p->sharedMemBytes, p->kernelParams, p->extra);
}

SHIM_EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
					  size_t ndeps, const CUDA_MEMSET_NODE_PARAMS *p,
					  CUcontext ctx)
{
	struct gb_node *n;

	(void)ctx;	/* the context current at instantiation runs it */
	if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) ||
	    !p->width || !p->height ||
	    (p->height > 1 && p->pitch < p->width * p->elementSize))
		return CUDA_ERROR_INVALID_VALUE;
	n = calloc(1, sizeof(*n));
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_MEMSET;
	n->m = *p;
	return add_node(out, g, deps, ndeps, n);
}

/* One row, device to device or between device and host memory: what the
 * capture of a stream can hold. */
static bool is_device(CUmemorytype t)
{
	return t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED;
}

SHIM_EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
					  size_t ndeps, const CUDA_MEMCPY3D *p, CUcontext ctx)
{
	bool src_host, dst_host;
	struct gb_node *n;

	(void)ctx;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	src_host = p->srcMemoryType == CU_MEMORYTYPE_HOST;
	dst_host = p->dstMemoryType == CU_MEMORYTYPE_HOST;
	if ((!src_host && !is_device(p->srcMemoryType)) ||
	    (!dst_host && !is_device(p->dstMemoryType)) || (src_host && dst_host) ||
	    (p->Height > 1) || (p->Depth > 1) || p->srcXInBytes || p->srcY || p->srcZ ||
	    p->dstXInBytes || p->dstY || p->dstZ || p->srcLOD || p->dstLOD) {
		shim_log("cuGraphAddMemcpyNode: only one-row copies to or from device memory "
			 "are served");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (p->WidthInBytes && ((src_host && !p->srcHost) || (dst_host && !p->dstHost)))
		return CUDA_ERROR_INVALID_VALUE;
	n = calloc(1, sizeof(*n));
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_MEMCPY;
	n->c.dst = p->dstDevice;
	n->c.src = p->srcDevice;
	n->c.len = p->WidthInBytes;
	n->c.dst_host = dst_host ? p->dstHost : NULL;
	n->c.src_host = src_host ? p->srcHost : NULL;
	n->c.host_dst = dst_host;
	n->c.host_src = src_host;
	return add_node(out, g, deps, ndeps, n);
}

SHIM_EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
					 size_t ndeps)
{
	struct gb_node *n = calloc(1, sizeof(*n));

	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_EMPTY;
	return add_node(out, g, deps, ndeps, n);
}

static CUresult add_deps(CUgraph hg, const CUgraphNode *from, const CUgraphNode *to,
			 size_t count)
{
	struct gb_graph *g = (struct gb_graph *)hg;
	CUresult r = CUDA_SUCCESS;
	size_t i;

	if (count && (!from || !to))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&gb.lock);
	if (!live(g))
		r = CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count && !r; i++) {
		struct gb_node *a = node_of(from[i]), *b = node_of(to[i]);

		if (!a || !b || a->g != g || b->g != g || a == b)
			r = CUDA_ERROR_INVALID_VALUE;
		else if (!add_dep(b, a->index))
			r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&gb.lock);
	return r;
}

SHIM_EXPORT CUresult cuGraphAddDependencies(CUgraph g, const CUgraphNode *from,
					    const CUgraphNode *to, size_t count)
{
	return add_deps(g, from, to, count);
}

SHIM_EXPORT CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode *from,
					       const CUgraphNode *to,
					       const CUgraphEdgeData *edges, size_t count)
{
	size_t i;

	/* Only the plain full dependency (what CUDA 12.2- knew). */
	for (i = 0; edges && i < count; i++)
		if (edges[i].type != CU_GRAPH_DEPENDENCY_TYPE_DEFAULT || edges[i].from_port ||
		    edges[i].to_port)
			return CUDA_ERROR_NOT_SUPPORTED;
	return add_deps(g, from, to, count);
}

static CUresult kernel_node_set(CUgraphNode h, CUfunction f, const unsigned int grid[3],
				const unsigned int block[3], unsigned int shmem,
				void **params, void **extra)
{
	struct gb_node tmp = { .type = CU_GRAPH_NODE_TYPE_KERNEL }, *n;
	CUresult r = kernel_set(&tmp, f, grid, block, shmem, params, extra);

	if (r)
		return r;
	pthread_mutex_lock(&gb.lock);
	n = node_of(h);
	if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL) {
		pthread_mutex_unlock(&gb.lock);
		free(tmp.k.args);
		return CUDA_ERROR_INVALID_VALUE;
	}
	free(n->k.args);
	n->k = tmp.k;
	pthread_mutex_unlock(&gb.lock);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_node_set(h, func_of(p->func, p->kern),
			       (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			       (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			       p->sharedMemBytes, p->kernelParams, p->extra);
}

SHIM_EXPORT CUresult cuGraphKernelNodeSetParams(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_node_set(h, p->func,
			       (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			       (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			       p->sharedMemBytes, p->kernelParams, p->extra);
}

SHIM_EXPORT CUresult cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType *type)
{
	struct gb_node *n;

	if (!type)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&gb.lock);
	n = node_of(h);
	if (n)
		*type = n->type;
	pthread_mutex_unlock(&gb.lock);
	return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* cuGraphGetNodes / cuGraphGetRootNodes of a built graph (graph.c). */
CUresult shim_gb_nodes(CUgraph hg, CUgraphNode *nodes, size_t *num, bool roots)
{
	struct gb_graph *g = (struct gb_graph *)hg;
	size_t k = 0, i;

	pthread_mutex_lock(&gb.lock);
	if (!live(g)) {
		pthread_mutex_unlock(&gb.lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (i = 0; i < g->n; i++) {
		if (roots && g->node[i]->ndeps)
			continue;
		if (nodes && k < *num)
			nodes[k] = (CUgraphNode)g->node[i];
		k++;
	}
	pthread_mutex_unlock(&gb.lock);
	/* As the driver: with an array, at most *num are written, the rest of
	 * it is cleared and *num says how many were; without, *num is the
	 * total. */
	if (nodes) {
		for (i = k; i < *num; i++)
			nodes[i] = NULL;
		if (k < *num)
			*num = k;
		return CUDA_SUCCESS;
	}
	*num = k;
	return CUDA_SUCCESS;
}

/* ---- lowering to a capture ------------------------------------------- */

/* A copy of g (gb.lock held), not on the live list. */
static struct gb_graph *graph_copy(const struct gb_graph *g)
{
	struct gb_graph *c = calloc(1, sizeof(*c));
	uint32_t i;

	if (!c)
		return NULL;
	c->node = calloc(g->n ? g->n : 1, sizeof(*c->node));
	if (!c->node)
		goto err;
	c->cap = g->n;
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
		c->node[c->n++] = n;
		if ((o->type == CU_GRAPH_NODE_TYPE_KERNEL && !n->k.args) ||
		    (o->ndeps && !(n->deps = malloc(o->ndeps * sizeof(*n->deps)))))
			goto err;
		if (o->ndeps)
			memcpy(n->deps, o->deps, o->ndeps * sizeof(*n->deps));
		n->ndeps = n->capdeps = o->ndeps;
	}
	return c;
err:
	graph_free(c);
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
	pthread_mutex_lock(&gb.lock);
	if (gb.streams[i].ctx == sc->handle && gb.streams[i].s) {
		*out = gb.streams[i].s;
		pthread_mutex_unlock(&gb.lock);
		return CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&gb.lock);
	r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	if (r)
		return r;
	pthread_mutex_lock(&gb.lock);
	gb.streams[i].ctx = sc->handle;
	gb.streams[i].s = s;
	pthread_mutex_unlock(&gb.lock);
	*out = s;
	return CUDA_SUCCESS;
}

/* One memset node as the stream's MEMSET op (2D ones too). */
static CUresult lower_memset(CUstream s, const CUDA_MEMSET_NODE_PARAMS *m)
{
	struct axon_sqe *sqe;
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	if (r)
		return r;
	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_memset(sqe, h, m->dst, m->width, m->height,
				 m->height > 1 ? m->pitch : 0, m->value, m->elementSize);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_stream_next(h);
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
}

/* Lowers g (a copy, owned by the caller) to a daemon graph in *out. */
static CUresult lower_locked(const struct gb_graph *g, CUgraph *out);

static CUresult lower(const struct gb_graph *g, CUgraph *out)
{
	CUresult r;

	pthread_mutex_lock(&gb.lower_lock);
	r = lower_locked(g, out);
	pthread_mutex_unlock(&gb.lower_lock);
	return r;
}

static CUresult lower_locked(const struct gb_graph *g, CUgraph *out)
{
	CUstreamCaptureMode relaxed = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUresult r, r2;
	uint32_t *order, i;
	CUgraph dg = NULL;
	CUstream s;

	order = topo(g, &r);
	if (!order)
		return r;
	r = lowering_stream(&s);
	if (!r)
		r = cuStreamBeginCapture_v2(s, relaxed);
	if (r) {
		free(order);
		return r;
	}
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
		case CU_GRAPH_NODE_TYPE_MEMSET:
			r = lower_memset(s, &n->m);
			break;
		case CU_GRAPH_NODE_TYPE_MEMCPY:
			if (n->c.host_src)
				r = cuMemcpyHtoDAsync_v2(n->c.dst, n->c.src_host, n->c.len, s);
			else if (n->c.host_dst)
				r = cuMemcpyDtoHAsync_v2(n->c.dst_host, n->c.src, n->c.len, s);
			else
				r = cuMemcpyDtoDAsync_v2(n->c.dst, n->c.src, n->c.len, s);
			break;
		default:
			break;		/* empty: ordering only, which the order gives */
		}
	}
	free(order);
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
		graph_free(e->copy);
	free(e->orig);
	free(e);
}

/* cuGraphInstantiate* of a built graph (graph.c): lower, instantiate, drop
 * the capture's graph, remember a copy for later node updates. */
CUresult shim_gb_instantiate(CUgraphExec *out, CUgraph hg, unsigned long long flags,
			     CUresult (*inst)(CUgraphExec *, CUgraph, unsigned long long))
{
	struct gb_graph *g = (struct gb_graph *)hg;
	struct gb_exec *e = calloc(1, sizeof(*e));
	CUgraph dg = NULL;
	CUresult r;
	uint32_t i;

	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&gb.lock);
	if (live(g)) {
		e->copy = graph_copy(g);
		e->orig = calloc(g->n ? g->n : 1, sizeof(*e->orig));
		for (i = 0; e->orig && i < g->n; i++)
			e->orig[i] = g->node[i];
	}
	pthread_mutex_unlock(&gb.lock);
	if (!e->copy || !e->orig) {
		r = e->copy || e->orig ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
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
	pthread_mutex_lock(&gb.lock);
	e->next = gb.execs;
	gb.execs = e;
	pthread_mutex_unlock(&gb.lock);
	return CUDA_SUCCESS;
}

/* cuGraphExecDestroy (graph.c): forget the exec's copy, if it has one. */
void shim_gb_exec_forget(uint64_t exec)
{
	struct gb_exec **pp, *e = NULL;

	pthread_mutex_lock(&gb.lock);
	for (pp = &gb.execs; *pp; pp = &(*pp)->next) {
		if ((*pp)->exec == exec) {
			e = *pp;
			*pp = e->next;
			break;
		}
	}
	pthread_mutex_unlock(&gb.lock);
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
	struct gb_graph *g = (struct gb_graph *)hg, *copy = NULL;
	struct gb_node **orig = NULL;
	struct gb_exec *e;
	CUgraph dg = NULL;
	CUresult r;
	uint32_t i;

	*result = CU_GRAPH_EXEC_UPDATE_ERROR;
	pthread_mutex_lock(&gb.lock);
	if (live(g)) {
		copy = graph_copy(g);
		orig = calloc(g->n ? g->n : 1, sizeof(*orig));
		for (i = 0; orig && i < g->n; i++)
			orig[i] = g->node[i];
	}
	pthread_mutex_unlock(&gb.lock);
	if (!copy || !orig) {
		/* Either missing: out of memory; both: no such graph. */
		r = copy || orig ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
		if (copy)
			graph_free(copy);
		free(orig);
		return r;
	}
	r = lower(copy, &dg);
	if (!r)
		r = update(x, dg, result);
	if (dg)
		cuGraphDestroy(dg);
	pthread_mutex_lock(&gb.lock);
	for (e = gb.execs; e && e->exec != (uint64_t)(uintptr_t)x; e = e->next)
		;
	if (!r && e) {
		graph_free(e->copy);
		free(e->orig);
		e->copy = copy;
		e->orig = orig;
		copy = NULL;
		orig = NULL;
	}
	pthread_mutex_unlock(&gb.lock);
	if (copy)
		graph_free(copy);
	free(orig);
	return r;
}

static CUresult exec_kernel_set(CUgraphExec x, CUgraphNode h, CUfunction f,
				const unsigned int grid[3], const unsigned int block[3],
				unsigned int shmem, void **params, void **extra,
				CUresult (*update)(CUgraphExec, CUgraph, CUgraphExecUpdateResult *))
{
	struct gb_node tmp = { .type = CU_GRAPH_NODE_TYPE_KERNEL };
	CUgraphExecUpdateResult res;
	struct gb_graph *copy = NULL;
	bool found = false;
	struct gb_exec *e;
	CUgraph dg = NULL;
	CUresult r;
	uint32_t i;

	r = kernel_set(&tmp, f, grid, block, shmem, params, extra);
	if (r)
		return r;
	/* The exec's copy with this one node changed. */
	pthread_mutex_lock(&gb.lock);
	for (e = gb.execs; e && e->exec != (uint64_t)(uintptr_t)x; e = e->next)
		;
	for (i = 0; e && i < e->copy->n && e->orig[i] != (struct gb_node *)h; i++)
		;
	if (e && i < e->copy->n && e->copy->node[i]->type == CU_GRAPH_NODE_TYPE_KERNEL) {
		found = true;
		copy = graph_copy(e->copy);
	}
	pthread_mutex_unlock(&gb.lock);
	if (!copy) {
		free(tmp.k.args);
		/* Not a kernel node of the graph the exec was made from (execs
		 * made by capture have no node handles to name). */
		return found ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	}
	free(copy->node[i]->k.args);
	copy->node[i]->k = tmp.k;
	r = lower(copy, &dg);
	if (!r)
		r = update(x, dg, &res);
	if (dg)
		cuGraphDestroy(dg);
	pthread_mutex_lock(&gb.lock);
	for (e = gb.execs; e && e->exec != (uint64_t)(uintptr_t)x; e = e->next)
		;
	if (!r && e) {
		graph_free(e->copy);
		e->copy = copy;
		copy = NULL;
	}
	pthread_mutex_unlock(&gb.lock);
	if (copy)
		graph_free(copy);
	return r;
}

/* graph.c's exec update, for the exec-node call below. */
CUresult shim_graph_exec_update_daemon(CUgraphExec x, CUgraph g, CUgraphExecUpdateResult *res);

SHIM_EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec x, CUgraphNode h,
						       const CUDA_KERNEL_NODE_PARAMS *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return exec_kernel_set(x, h, func_of(p->func, p->kern),
			       (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			       (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			       p->sharedMemBytes, p->kernelParams, p->extra,
			       shim_graph_exec_update_daemon);
}

SHIM_EXPORT CUresult cuGraphExecKernelNodeSetParams(CUgraphExec x, CUgraphNode h,
						    const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	return exec_kernel_set(x, h, p->func,
			       (const unsigned int[3]){ p->gridDimX, p->gridDimY, p->gridDimZ },
			       (const unsigned int[3]){ p->blockDimX, p->blockDimY, p->blockDimZ },
			       p->sharedMemBytes, p->kernelParams, p->extra,
			       shim_graph_exec_update_daemon);
}

/* After fork: the parent's graphs and streams are not the child's. */
static void gb_forget(void)
{
	while (gb.graphs) {
		struct gb_graph *g = gb.graphs;

		gb.graphs = g->next;
		graph_free(g);
	}
	while (gb.execs) {
		struct gb_exec *e = gb.execs;

		gb.execs = e->next;
		exec_record_free(e);
	}
	memset(gb.streams, 0, sizeof(gb.streams));
	pthread_mutex_init(&gb.lock, NULL);
	pthread_mutex_init(&gb.lower_lock, NULL);
}

__attribute__((constructor)) static void register_gb_forget(void)
{
	shim_fork_register(gb_forget);
}
