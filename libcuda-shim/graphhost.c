// SPDX-License-Identifier: MIT
/*
 * Host nodes of graphs built node by node (graphbuild.c), and the
 * parameters of host and memset nodes read and changed. A host node keeps
 * the function and its argument; lowering (graphlower.c) issues it as a
 * cuLaunchHostFunc in the capture, so at each launch the function runs in
 * this process at its place in the graph's order, as a captured host
 * function does (hostfunc.c: the daemon holds the work after it until the
 * shim says it ran). Changing a node's parameters changes the graph, not
 * the execs already made from it, as the driver's documentation says;
 * cuGraphExec{Host,Memset}NodeSetParams change one exec (graphlower.c
 * lowers its copy again and updates it).
 */
#include <stdlib.h>

#include "graphbuild.h"

SHIM_EXPORT CUresult cuGraphAddHostNode(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
					size_t ndeps, const CUDA_HOST_NODE_PARAMS *p)
{
	struct gb_node *n;

	if (!p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	n = calloc(1, sizeof(*n));
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	n->type = CU_GRAPH_NODE_TYPE_HOST;
	n->h = *p;
	return shim_gb_add_node(out, g, deps, ndeps, n);
}

/* The node h of a live built graph, of that type, under shim_gb_lock
 * (NULL: not one; the lock is then not held). */
static struct gb_node *typed_node(CUgraphNode h, CUgraphNodeType type)
{
	struct gb_node *n;

	pthread_mutex_lock(&shim_gb_lock);
	n = shim_gb_node_of(h);
	if (n && n->type == type)
		return n;
	pthread_mutex_unlock(&shim_gb_lock);
	return NULL;
}

SHIM_EXPORT CUresult cuGraphHostNodeGetParams(CUgraphNode h, CUDA_HOST_NODE_PARAMS *p)
{
	struct gb_node *n;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	n = typed_node(h, CU_GRAPH_NODE_TYPE_HOST);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*p = n->h;
	pthread_mutex_unlock(&shim_gb_lock);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuGraphHostNodeSetParams(CUgraphNode h, const CUDA_HOST_NODE_PARAMS *p)
{
	struct gb_node *n;

	if (!p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	n = typed_node(h, CU_GRAPH_NODE_TYPE_HOST);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	n->h = *p;
	pthread_mutex_unlock(&shim_gb_lock);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuGraphMemsetNodeGetParams(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS *p)
{
	struct gb_node *n;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	n = typed_node(h, CU_GRAPH_NODE_TYPE_MEMSET);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	*p = n->m;
	pthread_mutex_unlock(&shim_gb_lock);
	return CUDA_SUCCESS;
}

/* The checks cuGraphAddMemsetNode makes (graphbuild.c). */
static bool memset_ok(const CUDA_MEMSET_NODE_PARAMS *p)
{
	return p && (p->elementSize == 1 || p->elementSize == 2 || p->elementSize == 4) &&
	       p->width && p->height && (p->height == 1 || p->pitch >= p->width * p->elementSize);
}

SHIM_EXPORT CUresult cuGraphMemsetNodeSetParams(CUgraphNode h, const CUDA_MEMSET_NODE_PARAMS *p)
{
	struct gb_node *n;

	if (!memset_ok(p))
		return CUDA_ERROR_INVALID_VALUE;
	n = typed_node(h, CU_GRAPH_NODE_TYPE_MEMSET);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	n->m = *p;
	pthread_mutex_unlock(&shim_gb_lock);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuGraphExecHostNodeSetParams(CUgraphExec x, CUgraphNode h,
						  const CUDA_HOST_NODE_PARAMS *p)
{
	struct gb_node tmpl = { .type = CU_GRAPH_NODE_TYPE_HOST };

	if (!p || !p->fn)
		return CUDA_ERROR_INVALID_VALUE;
	tmpl.h = *p;
	return shim_gb_exec_node_set(x, h, &tmpl);
}

SHIM_EXPORT CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec x, CUgraphNode h,
						    const CUDA_MEMSET_NODE_PARAMS *p, CUcontext ctx)
{
	struct gb_node tmpl = { .type = CU_GRAPH_NODE_TYPE_MEMSET };

	(void)ctx;	/* the exec's context runs it */
	if (!memset_ok(p))
		return CUDA_ERROR_INVALID_VALUE;
	tmpl.m = *p;
	return shim_gb_exec_node_set(x, h, &tmpl);
}
