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
 * reported, less the daemon's nodes the driver would not have) but names
 * no nodes: node handles are not exposed. Graphs built node by node
 * (cuGraphCreate, cuGraphAdd*Node) live in graphbuild.c and are lowered
 * to a capture by graphlower.c; the calls here hand them over.
 *
 * A captured graph may carry host work (shim.h: host functions and the
 * host side of staged copies), which the daemon's graph cannot run: it is
 * cut into parts there, and a launch here sends one GRAPH_LAUNCH per part
 * with the host functions in between. The graph and each exec made or
 * updated from it hold a reference to the host work; each host function a
 * launch queued holds one until it ran, so destroying the graph and exec
 * with launches in flight frees nothing they still use.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "ptstream.h"
#include "graphbuild.h"
#include "graphlower.h"

/* The order event of host work is made here (graph_launch); hostwork.c
 * destroys it through this hook with the last reference. */
static void order_release(CUevent order)
{
	cuEventDestroy_v2(order);
}

__attribute__((constructor)) static void register_order_release(void)
{
	shim_hostwork_on_order_release(order_release);
}

/* Running the host work of a launch, the parts go on one at a time. */
static CUresult launch_part(uint64_t exec, uint64_t stream, uint32_t part)
{
	struct axon_sqe *sqe = shim_sqe();

	if (!sqe)
		return shim_gone_error();
	axon_prep_graph_launch(sqe, stream, exec, part);
	axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
	shim_stream_next(stream);
	shim_flush();
	return CUDA_SUCCESS;
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
	n = shim_graph_nodes(h);
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

static CUresult destroy(unsigned int op, uint64_t h);

/* The exec shares the graph's host work (a launch without it would run the
 * first part only). */
static CUresult instantiate_daemon(CUgraphExec *out, CUgraph g, unsigned long long flags)
{
	struct shim_waiter w = { 0 };
	struct shim_hostwork *hw, *old;
	uint64_t h;
	CUresult r;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	r = graph_handle(g, &h);
	if (r)
		return r;
	hw = shim_graph_hostwork(h);
	r = shim_call(&w, axon_prep_graph_instantiate, h, flags);
	if (!r && !shim_exec_set_hostwork(w.aux[0], hw, &old)) {
		destroy(AXON_OP_GRAPH_EXEC_DESTROY, w.aux[0]);
		r = CUDA_ERROR_OUT_OF_MEMORY;
	} else if (!r) {
		hw = old;	/* none: a new exec */
	}
	shim_hostwork_put(hw);
	if (!r)
		*out = (CUgraphExec)(uintptr_t)w.aux[0];
	return r;
}

/* A graph built node by node is lowered to a capture first (graphlower.c). */
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
	return SHIM_PER_THREAD(instantiate_params(out, g, p));
}

/*
 * One GRAPH_LAUNCH, or, for a graph with host work, its parts with the
 * host functions in between, all under one hold of the lock (unless
 * shim_sqe or the host functions' completion credit make it wait): other
 * threads' ops on the stream then go before or after the whole launch.
 */
/*
 * Launches of one exec run one after the other, whatever their streams,
 * as the driver runs them. A graph in one part gets that from the daemon's
 * driver; one cut by host nodes is several launches there, so a launch on
 * another stream could run its first part while an earlier launch waits
 * for a host function, both using the same staging memory. So each launch
 * of a graph with host work waits for an event recorded after the last
 * part of the one before (not inside a capture: there the parts join the
 * capture in order). One lock for all such launches: rare, and it keeps
 * the event's wait and record in the order of the launches.
 */
static pthread_mutex_t order_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult graph_launch(CUgraphExec x, CUstream s)
{
	struct shim_hostwork *hw;
	bool capturing, ordered;
	uint64_t hx, hs;
	uint32_t k;
	CUresult r;

	r = exec_handle(x, &hx);
	if (!r)
		r = shim_stream(s, &hs);
	if (r)
		return r;
	hw = shim_exec_hostwork(hx);
	capturing = hw && shim_capturing();
	ordered = hw && hw->n && !capturing;
	if (ordered) {
		pthread_mutex_lock(&order_lock);
		if (hw->order_set)
			r = cuStreamWaitEvent(s, hw->order, 0);
	}
	if (capturing)
		shim_capture_host_lock();	/* its host nodes may join a capture */
	shim_lock();
	for (k = 0; !r; k++) {
		r = launch_part(hx, hs, k);
		if (r || !hw || k == hw->n)
			break;
		r = shim_hostfn_issue_locked(hs, &hw->node[k], hw);
	}
	shim_unlock();
	if (capturing)
		shim_capture_host_unlock();
	if (ordered) {
		if (!r && !hw->order)
			r = cuEventCreate(&hw->order, CU_EVENT_DISABLE_TIMING);
		if (!r)
			r = cuEventRecord(hw->order, s);
		hw->order_set = hw->order_set || !r;
		pthread_mutex_unlock(&order_lock);
	}
	shim_hostwork_put(hw);
	return r;
}

SHIM_EXPORT CUresult cuGraphLaunch(CUgraphExec x, CUstream s)
{
	return graph_launch(x, s);
}

SHIM_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec x, CUstream s)
{
	return SHIM_PER_THREAD(graph_launch(x, s));
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
	return SHIM_PER_THREAD(graph_upload(x, s));
}

/* Deferred: the daemon frees it after the work queued before. */
static CUresult destroy(unsigned int op, uint64_t h)
{
	struct axon_sqe *sqe;

	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		if (op == AXON_OP_GRAPH_DESTROY)
			axon_prep_graph_destroy(sqe, h);
		else
			axon_prep_graph_exec_destroy(sqe, h);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
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
	/* Launches queued hold their own references to the host work. */
	r = destroy(AXON_OP_GRAPH_DESTROY, h);
	shim_hostwork_put(shim_graph_unrecord(h));
	return r;
}

SHIM_EXPORT CUresult cuGraphExecDestroy(CUgraphExec x)
{
	struct shim_hostwork *old;
	uint64_t h;
	CUresult r = exec_handle(x, &h);

	if (r)
		return r;
	shim_gb_exec_forget(h);	/* made from a built graph: its copy */
	r = destroy(AXON_OP_GRAPH_EXEC_DESTROY, h);
	shim_exec_set_hostwork(h, NULL, &old);	/* cannot fail without host work */
	shim_hostwork_put(old);
	return r;
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
	{
		/*
		 * A launch whose later parts the daemon holds behind a host
		 * function would meet the update first and run with the new
		 * parameters and staging, where the driver's queued launches
		 * keep the old ones: the update waits for the launches before
		 * it (the event after the last one's last part, graph_launch).
		 */
		struct shim_hostwork *cur = shim_exec_hostwork(hx);

		if (cur) {
			pthread_mutex_lock(&order_lock);
			if (cur->order_set)
				r = cuEventSynchronize(cur->order);
			pthread_mutex_unlock(&order_lock);
			shim_hostwork_put(cur);
		}
		if (r)
			return r;
	}
	r = shim_call(&w, axon_prep_graph_exec_update, hx, hg);
	if (!r) {
		/* Same number of host nodes (the daemon checked): the exec
		 * runs the graph's host work from now on. The launches queued
		 * before hold references to the old one. */
		struct shim_hostwork *hw = shim_graph_hostwork(hg), *old = NULL;

		if (!shim_exec_set_hostwork(hx, hw, &old))
			old = hw;	/* cannot be: the exec has a record */
		shim_hostwork_put(old);
	}
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

/* From a built graph: lowered to a capture first (graphlower.c). */
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
