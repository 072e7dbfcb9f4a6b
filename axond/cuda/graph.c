// SPDX-License-Identifier: MIT
/*
 * Graphs in the cuda backend: the vendor captures. CAPTURE_BEGIN starts a
 * capture on the client's CUstream, always in CU_STREAM_CAPTURE_MODE_RELAXED:
 * the executor that issues it also serves other clients and the dispatcher
 * maps memory meanwhile, which the stricter modes would forbid (the modes a
 * client asks for are enforced by the shim). The stream's later items are
 * issued as usual and so become the vendor graph's nodes; cuda.c finishes
 * them as soon as they are issued instead of recording a tracking event,
 * which would otherwise end up in the client's graph (cuda_graph_immediate).
 * Forks and joins need nothing here: a wait on an event recorded in the
 * capture joins the waiting stream in the driver too.
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
	CUgraph graph;		/* once the capture ended well */
	CUstream capturing;	/* the vendor stream while capturing */
	CUresult begin_error;
};

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

			/* The client's cuGraphGetNodes counts the driver's nodes. */
			if (!vd.cuGraphGetNodes(graph, NULL, &n))
				w->aux0 = n;
		}
		cg->graph = graph;
	}
	graph_set_ended(g, (int32_t)r);
	return r;
}

static CUresult exec_update(struct work *w)
{
	struct cu_graph *cg = w->graph.graph->backend_priv;
	CUgraphExecUpdateResultInfo info = { 0 };
	CUresult r;

	r = vd.cuGraphExecUpdate((CUgraphExec)w->graph.exec->backend_priv, cg->graph, &info);
	w->aux0 = (uint64_t)info.result;
	return r;
}

/* Executor: the graph work types, on the item's CUstream. */
CUresult cuda_graph_issue(struct work *w, CUstream cs)
{
	switch (w->type) {
	case WORK_CAPTURE_BEGIN:
		return capture_begin(w->graph.graph, cs);
	case WORK_CAPTURE_END:
		return capture_end(w, w->graph.graph);
	case WORK_GRAPH_LAUNCH:
		return vd.cuGraphLaunch((CUgraphExec)w->graph.exec->backend_priv, cs);
	case WORK_GRAPH_UPDATE:
		return exec_update(w);
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

int cuda_graph_instantiate(struct axond *d, struct client *c, struct graph *g,
			   struct graph_exec *x, uint64_t flags)
{
	struct cu_graph *cg = g->backend_priv;
	CUgraphExec exec = NULL;
	CUresult r;

	(void)d;
	if (!cg || !cg->graph)
		return CUDA_ERROR_INVALID_VALUE;
	/* In the client's context (its own one in context mode). */
	r = cuda_enter(c, g->device);
	if (!r)
		r = vd.cuGraphInstantiateWithFlags(&exec, cg->graph, flags);
	cuda_leave();
	if (r)
		return r;
	x->backend_priv = exec;
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
	free(cg);
	g->backend_priv = NULL;
}

void cuda_graph_exec_fini(struct axond *d, struct graph_exec *x)
{
	(void)d;
	if (x->backend_priv)
		vd.cuGraphExecDestroy((CUgraphExec)x->backend_priv);
	x->backend_priv = NULL;
}
