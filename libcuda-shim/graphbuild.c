// SPDX-License-Identifier: MIT
/*
 * Graphs built node by node (cuGraphCreate, cuGraphAdd{Kernel,Memset,
 * Memcpy,Empty}Node, cuGraphAddDependencies, cuGraphKernelNodeSetParams).
 *
 * Such a graph lives in the client: a list of nodes with their parameters
 * and dependencies (graphbuild.h). Instantiating it lowers it to a stream
 * capture (graphlower.c).
 *
 * A CUgraph of this kind is the address of a struct gb_graph, a CUgraphNode
 * the address of a struct gb_node; both are checked against the live list
 * before use. Daemon graph handles (type byte 6) never look like these.
 * Memcpy nodes: one-dimensional (a 3D copy of one row), device to device
 * or between device and host memory; anything else, and host nodes, child
 * graphs, event nodes: NOT_SUPPORTED.
 * One lock (shim_gb_lock) protects everything here and graphlower.c's
 * execs; it is never held across a call into the rest of the shim.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "graphbuild.h"
#include "forkreg.h"

pthread_mutex_t shim_gb_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gb_graph *graphs;		/* the live list */

bool shim_gb_live(const struct gb_graph *g)
{
	const struct gb_graph *p;

	for (p = graphs; p; p = p->next)
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
	pthread_mutex_lock(&shim_gb_lock);
	ok = shim_gb_live((const struct gb_graph *)g);
	pthread_mutex_unlock(&shim_gb_lock);
	return ok;
}

/* shim_gb_lock held: the node, if it is one of a live graph. */
static struct gb_node *node_of(CUgraphNode h)
{
	struct gb_node *n = (struct gb_node *)h;
	struct gb_graph *g;

	for (g = graphs; g; g = g->next)
		for (uint32_t i = 0; i < g->n; i++)
			if (g->node[i] == n)
				return n;
	return NULL;
}

struct gb_node *shim_gb_node_of(CUgraphNode h)
{
	return node_of(h);
}

static void node_free(struct gb_node *n)
{
	if (!n)
		return;
	if (n->type == CU_GRAPH_NODE_TYPE_KERNEL)
		free(n->k.args);
	if (n->type == CU_GRAPH_NODE_TYPE_GRAPH && n->child)
		shim_gb_graph_free(n->child);
	free(n->deps);
	free(n);
}

void shim_gb_graph_free(struct gb_graph *g)
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
	pthread_mutex_lock(&shim_gb_lock);
	g->next = graphs;
	graphs = g;
	pthread_mutex_unlock(&shim_gb_lock);
	SHIM_LOCAL();
	*out = (CUgraph)g;
	return CUDA_SUCCESS;
}

/* cuGraphDestroy of a built graph (graph.c calls it). */
CUresult shim_gb_destroy(CUgraph h)
{
	struct gb_graph **pp;

	pthread_mutex_lock(&shim_gb_lock);
	for (pp = &graphs; *pp; pp = &(*pp)->next) {
		if (*pp == (struct gb_graph *)h) {
			struct gb_graph *g = *pp;

			*pp = g->next;
			pthread_mutex_unlock(&shim_gb_lock);
			shim_gb_graph_free(g);
			return CUDA_SUCCESS;
		}
	}
	pthread_mutex_unlock(&shim_gb_lock);
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
	pthread_mutex_lock(&shim_gb_lock);
	if (!shim_gb_live(g)) {
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
	pthread_mutex_unlock(&shim_gb_lock);
	node_free(n);
	return r;
}

CUresult shim_gb_kernel_set(struct gb_node *n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	const void *buf = NULL;
	size_t buf_size = 0, i;
	void **params, **extra;
	struct shim_func *sf;
	CUfunction f;
	void *args;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	/* A CUkernel is accepted where a function is (as cuLaunchKernel
	 * does). */
	f = p->func ? p->func : (CUfunction)p->kern;
	params = p->kernelParams;
	extra = p->extra;
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
	n->k.grid[0] = p->gridDimX;
	n->k.grid[1] = p->gridDimY;
	n->k.grid[2] = p->gridDimZ;
	n->k.block[0] = p->blockDimX;
	n->k.block[1] = p->blockDimY;
	n->k.block[2] = p->blockDimZ;
	n->k.shmem = p->sharedMemBytes;
	return CUDA_SUCCESS;
}

CUresult shim_gb_add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
			  struct gb_node *n)
{
	return add_node(out, g, deps, ndeps, n);
}

static CUresult add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
			   const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct gb_node *n;
	CUresult r;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	n = calloc(1, sizeof(*n));
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_KERNEL;
	r = shim_gb_kernel_set(n, p);
	if (r) {
		node_free(n);
		return r;
	}
	return add_node(out, g, deps, ndeps, n);
}

SHIM_EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *out, CUgraph g,
					     const CUgraphNode *deps, size_t ndeps,
					     const CUDA_KERNEL_NODE_PARAMS *p)
{
	return add_kernel(out, g, deps, ndeps, p);
}

SHIM_EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *out, CUgraph g,
					  const CUgraphNode *deps, size_t ndeps,
					  const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS tmp;

	return add_kernel(out, g, deps, ndeps, shim_gb_kparams_v1(p, &tmp));
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
	pthread_mutex_lock(&shim_gb_lock);
	if (!shim_gb_live(g))
		r = CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count && !r; i++) {
		struct gb_node *a = node_of(from[i]), *b = node_of(to[i]);

		if (!a || !b || a->g != g || b->g != g || a == b)
			r = CUDA_ERROR_INVALID_VALUE;
		else if (!add_dep(b, a->index))
			r = CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&shim_gb_lock);
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

static CUresult kernel_node_set(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p)
{
	struct gb_node tmp = { .type = CU_GRAPH_NODE_TYPE_KERNEL }, *n;
	CUresult r = shim_gb_kernel_set(&tmp, p);

	if (r)
		return r;
	pthread_mutex_lock(&shim_gb_lock);
	n = node_of(h);
	if (!n || n->type != CU_GRAPH_NODE_TYPE_KERNEL) {
		pthread_mutex_unlock(&shim_gb_lock);
		free(tmp.k.args);
		return CUDA_ERROR_INVALID_VALUE;
	}
	free(n->k.args);
	n->k = tmp.k;
	pthread_mutex_unlock(&shim_gb_lock);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS *p)
{
	return kernel_node_set(h, p);
}

SHIM_EXPORT CUresult cuGraphKernelNodeSetParams(CUgraphNode h, const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
	CUDA_KERNEL_NODE_PARAMS tmp;

	return kernel_node_set(h, shim_gb_kparams_v1(p, &tmp));
}

SHIM_EXPORT CUresult cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType *type)
{
	struct gb_node *n;

	if (!type)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_gb_lock);
	n = node_of(h);
	if (n)
		*type = n->type;
	pthread_mutex_unlock(&shim_gb_lock);
	return n ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* cuGraphGetNodes / cuGraphGetRootNodes of a built graph (graph.c). */
CUresult shim_gb_nodes(CUgraph hg, CUgraphNode *nodes, size_t *num, bool roots)
{
	struct gb_graph *g = (struct gb_graph *)hg;
	size_t k = 0, i;

	pthread_mutex_lock(&shim_gb_lock);
	if (!shim_gb_live(g)) {
		pthread_mutex_unlock(&shim_gb_lock);
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (i = 0; i < g->n; i++) {
		if (roots && g->node[i]->ndeps)
			continue;
		if (nodes && k < *num)
			nodes[k] = (CUgraphNode)g->node[i];
		k++;
	}
	pthread_mutex_unlock(&shim_gb_lock);
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

/* After fork: the parent's graphs are not the child's. */
static void gb_forget(void)
{
	while (graphs) {
		struct gb_graph *g = graphs;

		graphs = g->next;
		shim_gb_graph_free(g);
	}
	pthread_mutex_init(&shim_gb_lock, NULL);
}

__attribute__((constructor)) static void register_gb_forget(void)
{
	shim_fork_register(gb_forget);
}
