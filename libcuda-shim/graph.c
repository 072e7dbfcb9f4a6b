// SPDX-License-Identifier: MIT
/*
 * Graphs made by stream capture (capture.c): instantiate, launch, update,
 * upload, destroy. A CUgraph and a CUgraphExec are the daemon's handles
 * (AXON_HANDLE_GRAPH, AXON_HANDLE_GRAPH_EXEC), checked there against the
 * client's own tables; here only their type is checked.
 *
 * Classes: instantiation and update are Sync (one crossing: the daemon or
 * the vendor builds the executable graph); a launch is Deferred and
 * stream-ordered like a kernel launch (one crossing however many nodes the
 * graph has; its errors latch); destruction is Deferred; cuGraphUpload is
 * Local (the daemon uploads nothing ahead: the first launch does it).
 *
 * cuGraphGetNodes answers a captured graph's node count (what CAPTURE_END
 * reported) but names no nodes: node handles are not exposed. Graphs built
 * node by node (cuGraphCreate, cuGraphAdd*Node) live in graphbuild.c; the
 * calls here hand them over to it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

/* Node counts of the graphs this process captured, by handle index. */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { uint64_t graph, nodes; } *counts;
static uint32_t ncounts;

void shim_graph_note(uint64_t graph, uint64_t nodes)
{
	uint32_t i = AXON_HANDLE_INDEX(graph);

	pthread_mutex_lock(&count_lock);
	if (i >= ncounts) {
		uint32_t n = ncounts ? ncounts : 64;
		void *p;

		while (n <= i && n < (1u << 16))
			n *= 2;
		p = n > i ? realloc(counts, n * sizeof(*counts)) : NULL;
		if (!p) {
			pthread_mutex_unlock(&count_lock);
			return;		/* cuGraphGetNodes will say NOT_SUPPORTED */
		}
		counts = p;
		memset(counts + ncounts, 0, (n - ncounts) * sizeof(*counts));
		ncounts = n;
	}
	counts[i].graph = graph;
	counts[i].nodes = nodes;
	pthread_mutex_unlock(&count_lock);
}

/* -1 when unknown */
static int64_t graph_nodes(uint64_t graph)
{
	uint32_t i = AXON_HANDLE_INDEX(graph);
	int64_t n = -1;

	pthread_mutex_lock(&count_lock);
	if (i < ncounts && counts[i].graph == graph)
		n = (int64_t)counts[i].nodes;
	pthread_mutex_unlock(&count_lock);
	return n;
}

static void graph_forget(uint64_t graph)
{
	uint32_t i = AXON_HANDLE_INDEX(graph);

	pthread_mutex_lock(&count_lock);
	if (i < ncounts && counts[i].graph == graph)
		counts[i].graph = 0;
	pthread_mutex_unlock(&count_lock);
}

void shim_graph_forget(void)
{
	free(counts);
	counts = NULL;
	ncounts = 0;
	pthread_mutex_init(&count_lock, NULL);
}

static CUresult graph_handle(CUgraph g, uint64_t *h)
{
	*h = (uint64_t)(uintptr_t)g;
	return AXON_HANDLE_TYPE(*h) == AXON_HANDLE_GRAPH ? CUDA_SUCCESS
							  : CUDA_ERROR_INVALID_VALUE;
}

static CUresult exec_handle(CUgraphExec x, uint64_t *h)
{
	*h = (uint64_t)(uintptr_t)x;
	return AXON_HANDLE_TYPE(*h) == AXON_HANDLE_GRAPH_EXEC ? CUDA_SUCCESS
							       : CUDA_ERROR_INVALID_VALUE;
}

/* The count only: with nodes != NULL the caller wants node handles. */
SHIM_EXPORT CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *num)
{
	int64_t n;
	uint64_t h;
	CUresult r;

	if (!num)
		return CUDA_ERROR_INVALID_VALUE;
	if (shim_gb_owns(g))
		return shim_gb_nodes(g, nodes, num, false);
	r = graph_handle(g, &h);
	if (r)
		return r;
	n = graph_nodes(h);
	if (n < 0)
		return CUDA_ERROR_INVALID_VALUE;	/* not a graph we know */
	if (nodes) {
		shim_log("cuGraphGetNodes: node handles are not served (only the count)");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	SHIM_LOCAL();
	*num = (size_t)n;
	return CUDA_SUCCESS;
}

static CUresult instantiate_daemon(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
	struct shim_waiter w = { 0 };
	uint64_t h;
	CUresult r;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	r = graph_handle(g, &h);
	if (r)
		return r;
	r = shim_call_obj(AXON_OP_GRAPH_INSTANTIATE, h, flags, 0, &w);
	if (!r)
		*out = (CUgraphExec)(uintptr_t)w.aux[0];
	return r;
}

/* A graph built node by node is lowered to a capture first (graphbuild.c). */
static CUresult instantiate(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
	if (out && shim_gb_owns(g))
		return shim_gb_instantiate(out, g, flags, instantiate_daemon);
	return instantiate_daemon(out, g, flags);
}

SHIM_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *out, CUgraph g,
						 unsigned long long flags)
{
	return instantiate(out, g, flags);
}

/* The CUDA 10-11 form: no flags, an error node and a log we leave empty. */
static CUresult instantiate_log(CUgraphExec *out, CUgraph g, CUgraphNode *err_node,
				char *log, size_t log_size)
{
	if (err_node)
		*err_node = NULL;
	if (log && log_size)
		log[0] = 0;
	return instantiate(out, g, 0);
}

SHIM_EXPORT CUresult cuGraphInstantiate(CUgraphExec *out, CUgraph g, CUgraphNode *err_node,
					char *log, size_t log_size)
{
	return instantiate_log(out, g, err_node, log, log_size);
}

SHIM_EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *out, CUgraph g, CUgraphNode *err_node,
					   char *log, size_t log_size)
{
	return instantiate_log(out, g, err_node, log, log_size);
}

static CUresult instantiate_params(CUgraphExec *out, CUgraph g,
				   CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	CUresult r;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	if (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) {
		uint64_t s;

		/* Uploading ahead is an optimisation the daemon does not do;
		 * the stream must still be one. */
		r = shim_stream(p->hUploadStream, &s);
		if (r)
			return r;
	}
	r = instantiate(out, g, p->flags);
	p->hErrNode_out = NULL;
	switch (r) {
	case CUDA_SUCCESS:
		p->result_out = CUDA_GRAPH_INSTANTIATE_SUCCESS;
		break;
	case CUDA_ERROR_INVALID_VALUE:
		p->result_out = CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE;
		break;
	default:
		p->result_out = CUDA_GRAPH_INSTANTIATE_ERROR;
		break;
	}
	return r;
}

SHIM_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *out, CUgraph g,
						  CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	return instantiate_params(out, g, p);
}

SHIM_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *out, CUgraph g,
						       CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
	return instantiate_params(out, g, p);
}

static CUresult graph_launch(CUgraphExec x, CUstream s)
{
	struct axon_sqe *sqe;
	uint64_t hx, hs;
	CUresult r;

	r = exec_handle(x, &hx);
	if (!r)
		r = shim_stream(s, &hs);
	if (r)
		return r;
	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		sqe->opcode = AXON_OP_GRAPH_LAUNCH;
		sqe->flags = AXON_SQE_F_DEFERRED;
		sqe->stream = hs;
		sqe->obj.handle = hx;
		shim_stream_next(hs);
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
}

SHIM_EXPORT CUresult cuGraphLaunch(CUgraphExec x, CUstream s)
{
	return graph_launch(x, s);
}

SHIM_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream s)
{
	return graph_launch(x, s);
}

static CUresult graph_upload(CUgraphExec x, CUstream s)
{
	uint64_t hx, hs;
	CUresult r = exec_handle(x, &hx);

	if (!r)
		r = shim_stream(s, &hs);
	if (!r)
		SHIM_LOCAL();
	return r;
}

SHIM_EXPORT CUresult cuGraphUpload(CUgraphExec x, CUstream s)
{
	return graph_upload(x, s);
}

SHIM_EXPORT CUresult cuGraphUpload_ptsz(CUgraphExec x, CUstream s)
{
	return graph_upload(x, s);
}

/* Deferred: the daemon frees it after the work queued before. */
static CUresult destroy(unsigned int op, uint64_t h)
{
	struct axon_sqe *sqe;

	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_obj(sqe, op, h, 0, 0);
		sqe->flags = AXON_SQE_F_DEFERRED;
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
}

SHIM_EXPORT CUresult cuGraphDestroy(CUgraph g)
{
	uint64_t h;
	CUresult r;

	if (shim_gb_owns(g))
		return shim_gb_destroy(g);
	r = graph_handle(g, &h);
	if (r)
		return r;
	graph_forget(h);
	return destroy(AXON_OP_GRAPH_DESTROY, h);
}

SHIM_EXPORT CUresult cuGraphExecDestroy(CUgraphExec x)
{
	uint64_t h;
	CUresult r = exec_handle(x, &h);

	if (r)
		return r;
	shim_gb_exec_forget(h);	/* made from a built graph: its copy */
	return destroy(AXON_OP_GRAPH_EXEC_DESTROY, h);
}

static CUresult exec_update_daemon(CUgraphExec x, CUgraph g, CUgraphExecUpdateResult *result)
{
	struct shim_waiter w = { 0 };
	uint64_t hx, hg;
	CUresult r;

	r = exec_handle(x, &hx);
	if (!r)
		r = graph_handle(g, &hg);
	if (r)
		return r;
	r = shim_call_obj(AXON_OP_GRAPH_EXEC_UPDATE, hx, hg, 0, &w);
	/* The daemon names why an update failed; any other error is ours. */
	*result = r == CUDA_SUCCESS ? CU_GRAPH_EXEC_UPDATE_SUCCESS
		  : r == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE ? (CUgraphExecUpdateResult)w.aux[0]
		  : CU_GRAPH_EXEC_UPDATE_ERROR;
	return r;
}

CUresult shim_graph_exec_update_daemon(CUgraphExec x, CUgraph g, CUgraphExecUpdateResult *res)
{
	return exec_update_daemon(x, g, res);
}

/* From a built graph: lowered to a capture first (graphbuild.c). */
static CUresult exec_update(CUgraphExec x, CUgraph g, CUgraphExecUpdateResult *result)
{
	if (shim_gb_owns(g))
		return shim_gb_exec_update(x, g, exec_update_daemon, result);
	return exec_update_daemon(x, g, result);
}

/* Roots are known for built graphs only (captured ones expose no nodes). */
SHIM_EXPORT CUresult cuGraphGetRootNodes(CUgraph g, CUgraphNode *nodes, size_t *num)
{
	if (!num)
		return CUDA_ERROR_INVALID_VALUE;
	if (shim_gb_owns(g))
		return shim_gb_nodes(g, nodes, num, true);
	shim_log("cuGraphGetRootNodes: not served for captured graphs");
	return CUDA_ERROR_NOT_SUPPORTED;
}

SHIM_EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec x, CUgraph g,
					  CUgraphExecUpdateResultInfo *info)
{
	CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_ERROR;
	CUresult r;

	if (!info)
		return CUDA_ERROR_INVALID_VALUE;
	r = exec_update(x, g, &res);
	memset(info, 0, sizeof(*info));
	info->result = res;
	return r;
}

/* The CUDA 10.2-11 form. */
SHIM_EXPORT CUresult cuGraphExecUpdate(CUgraphExec x, CUgraph g, CUgraphNode *err_node,
				       CUgraphExecUpdateResult *result)
{
	CUgraphExecUpdateResult res = CU_GRAPH_EXEC_UPDATE_ERROR;
	CUresult r;

	if (!err_node || !result)
		return CUDA_ERROR_INVALID_VALUE;
	r = exec_update(x, g, &res);
	*err_node = NULL;
	*result = res;
	return r;
}
