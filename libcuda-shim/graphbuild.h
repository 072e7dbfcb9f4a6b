/* SPDX-License-Identifier: MIT */
/*
 * Graphs built node by node (graphbuild.c): the nodes and their graphs,
 * which graphlower.c lowers to a capture, and what graph.c asks of them.
 */
#ifndef AXON_SHIM_GRAPHBUILD_H
#define AXON_SHIM_GRAPHBUILD_H

#include <pthread.h>

#include "shim.h"

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
		/* a host node: fn(data) runs in this process, in order */
		CUDA_HOST_NODE_PARAMS h;
		/* a child graph node: its own copy of the graph, not live */
		struct gb_graph *child;
	};
};

struct gb_graph {
	struct gb_node **node;
	uint32_t n, cap;
	uint32_t depth;			/* 1 + its deepest child graph's */
	struct gb_graph *next;		/* the live list */
};

/*
 * The one lock of built graphs: the live list and its nodes here, the
 * execs made from them in graphlower.c. Never held across a call into the
 * rest of the shim.
 */
extern pthread_mutex_t shim_gb_lock;

/* Whether g is on the live list (shim_gb_lock held). */
bool shim_gb_live(const struct gb_graph *g);
void shim_gb_graph_free(struct gb_graph *g);
/* A kernel node's parameters from p (func, or else kern): the arguments
 * packed now, as a launch would. NULL p: INVALID_VALUE. */
CUresult shim_gb_kernel_set(struct gb_node *n, const CUDA_KERNEL_NODE_PARAMS *p);

/* A v1 kernel node's parameters as the current struct (no CUkernel, no
 * context); NULL for NULL. */
static inline const CUDA_KERNEL_NODE_PARAMS *
shim_gb_kparams_v1(const CUDA_KERNEL_NODE_PARAMS_v1 *p, CUDA_KERNEL_NODE_PARAMS *tmp)
{
	if (!p)
		return NULL;
	*tmp = (CUDA_KERNEL_NODE_PARAMS){
		.func = p->func,
		.gridDimX = p->gridDimX, .gridDimY = p->gridDimY, .gridDimZ = p->gridDimZ,
		.blockDimX = p->blockDimX, .blockDimY = p->blockDimY,
		.blockDimZ = p->blockDimZ,
		.sharedMemBytes = p->sharedMemBytes,
		.kernelParams = p->kernelParams,
		.extra = p->extra,
	};
	return tmp;
}

/* shim_gb_lock held: the node, if it is one of a live graph. */
struct gb_node *shim_gb_node_of(CUgraphNode h);
/* Adds n (its type and parameters set) to built graph g after deps;
 * frees n on failure. Takes shim_gb_lock. */
CUresult shim_gb_add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
			  struct gb_node *n);

/* A copy of g, child graphs too, not on the live list (shim_gb_lock
 * held; graphlower.c); NULL without memory. */
struct gb_graph *shim_gb_graph_copy(const struct gb_graph *g);

/* Node h of the graph exec x was made from, given tmpl's parameters
 * (a host or memset node; graphlower.c). */
CUresult shim_gb_exec_node_set(CUgraphExec x, CUgraphNode h, const struct gb_node *tmpl);

/* For graph.c: whether g is a built graph (rather than a daemon handle),
 * its destruction, and cuGraphGetNodes / cuGraphGetRootNodes of it. */
bool shim_gb_owns(CUgraph g);
CUresult shim_gb_destroy(CUgraph g);
CUresult shim_gb_nodes(CUgraph g, CUgraphNode *nodes, size_t *num, bool roots);

#endif
