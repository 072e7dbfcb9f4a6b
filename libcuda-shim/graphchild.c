// SPDX-License-Identifier: MIT
/*
 * Child graph nodes of graphs built node by node (graphbuild.c). As the
 * driver does, the node holds a copy of the child graph made when the node
 * is added, so later changes to the child reach it no more than the
 * child's destruction does; lowering (graphlower.c) issues the copy's
 * nodes, in the child's own topological order, at the child node's place.
 * Only a built graph can be a child here: a captured one lives in the
 * daemon as a whole (NOT_SUPPORTED). Children nest up to GB_MAX_DEPTH
 * graphs deep, which bounds the recursion of copying, lowering and
 * freeing them.
 */
#include <stdlib.h>

#include "graphbuild.h"

#define GB_MAX_DEPTH	16

SHIM_EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *out, CUgraph g,
					      const CUgraphNode *deps, size_t ndeps,
					      CUgraph child)
{
	struct gb_graph *copy = NULL, *c = (struct gb_graph *)child;
	struct gb_node *n;
	CUresult r = CUDA_SUCCESS;

	if (!child || child == g)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&shim_gb_lock);
	if (!shim_gb_live(c))
		r = AXON_HANDLE_TYPE((uint64_t)(uintptr_t)child) == AXON_HANDLE_GRAPH ?
		    CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_INVALID_VALUE;
	else if (c->depth + 1 >= GB_MAX_DEPTH)
		r = CUDA_ERROR_NOT_SUPPORTED;
	else if (!(copy = shim_gb_graph_copy(c)))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_unlock(&shim_gb_lock);
	if (r == CUDA_ERROR_NOT_SUPPORTED)
		shim_log("cuGraphAddChildGraphNode: only a graph built node by node, "
			 "at most %d deep, is served as a child", GB_MAX_DEPTH);
	if (r)
		return r;
	n = calloc(1, sizeof(*n));
	if (!n) {
		shim_gb_graph_free(copy);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	n->type = CU_GRAPH_NODE_TYPE_GRAPH;
	n->child = copy;
	r = shim_gb_add_node(out, g, deps, ndeps, n);	/* frees n (and copy) on failure */
	if (!r) {
		pthread_mutex_lock(&shim_gb_lock);
		if (shim_gb_live((struct gb_graph *)g) &&
		    ((struct gb_graph *)g)->depth < copy->depth + 1)
			((struct gb_graph *)g)->depth = copy->depth + 1;
		pthread_mutex_unlock(&shim_gb_lock);
	}
	return r;
}
