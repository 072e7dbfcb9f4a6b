/* SPDX-License-Identifier: MIT */
/* The cuda backend's graph side (graph.c), as exec.c and cuda.c call it. */
#ifndef AXOND_CUDA_CUGRAPH_H
#define AXOND_CUDA_CUGRAPH_H

#include <stdbool.h>
#include <stdint.h>
#include <cuda.h>

struct axond;
struct client;
struct work;
struct graph;
struct graph_exec;

/* Done once issued: captured items and the graph-object items. */
bool cuda_graph_immediate(const struct work *w);
/* Executor: CAPTURE_BEGIN/END, GRAPH_LAUNCH, GRAPH_UPDATE on cs. */
CUresult cuda_graph_issue(struct work *w, CUstream cs);
/* Backend hooks (backend.h). */
int cuda_graph_instantiate(struct axond *d, struct client *c, struct graph *g,
			   struct graph_exec *x, uint64_t flags);
void cuda_graph_fini(struct axond *d, struct graph *g);
void cuda_graph_exec_fini(struct axond *d, struct graph_exec *x);

#endif
