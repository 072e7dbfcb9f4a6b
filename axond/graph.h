/* SPDX-License-Identifier: MIT */
/*
 * Graphs: stream capture and replay (ops/capture.c, ops/graph.c;
 * backends: sim/graph.c, cuda/graph.c).
 *
 * A capture is a graph object created by AXON_OP_CAPTURE_BEGIN. While it
 * is open, the dispatcher tags every stream-ordered work item of its
 * streams with it (ops/capture.c's capture hook, from work_submit): the
 * backend records the item (sim) or issues it to the vendor's capturing
 * stream (cuda) and the item is done at once for the frontier. Which
 * streams belong to a capture is decided on the dispatcher, in submission
 * order: the origin stream, and any stream that waits on an event recorded
 * in the capture (fork); a later wait by a member on an event recorded on
 * another member joins that one back.
 *
 * A host function captured (HOST_FUNC NODE: the client's cuLaunchHostFunc,
 * and the host side of the shim's staged copies) runs in the client, never
 * in a graph: it cuts the graph into parts, nhost + 1 of them. The client
 * launches the parts one by one (GRAPH_LAUNCH obj.arg0), each followed by
 * its host function as an ordinary one (HOST_FUNC WAIT and DONE), which
 * keeps the later parts behind it. In the sim an item belongs to the part
 * of the host nodes submitted before it (work.capture_seg): submission
 * order being a topological order of the captured dependencies, running
 * the parts in order runs a valid order of the graph. The cuda backend
 * cuts the vendor's graph by its dependencies instead (cuda/graph.c).
 *
 * Threads: the dispatcher owns everything here except the fields marked
 * "worker" (the executor writes them before it finishes the item that
 * changes them) and backend_priv, which the backend's executor fills while
 * capturing and the dispatcher reads only once end_res says the capture
 * ended.
 */
#ifndef AXOND_GRAPH_H
#define AXOND_GRAPH_H

#include <stdatomic.h>
#include <stdint.h>

#include "axond.h"

enum graph_state {
	GRAPH_CAPTURING,	/* CAPTURE_BEGIN taken, END not yet */
	GRAPH_ENDED,		/* CAPTURE_END taken; end_res says how it went */
};

/* end_res before the executor ended the capture. */
#define GRAPH_END_PENDING	INT32_MIN

/* A stream taking part in a capture. */
struct graph_member {
	uint64_t stream;	/* its handle */
	uint64_t nodes;		/* nodes it added */
	uint64_t joined;	/* nodes of it another member waited for */
};

/* Objects a graph's nodes name: each must still be live when it runs. */
struct graph_refs {
	uint64_t *funcs;	/* function handles of kernel nodes */
	uint32_t nfuncs, capfuncs;
	struct graph_range { uint64_t addr, len; } *ranges;	/* memset/copy */
	uint32_t nranges, capranges;
	/*
	 * The host side of copies to and from shared host regions: the
	 * client's range and the daemon's mapping of it the node was made
	 * with, which the region must still translate to (the nodes keep
	 * that pointer).
	 */
	struct graph_host { uint64_t addr, len; const unsigned char *map; } *hosts;
	uint32_t nhosts, caphosts;
};

struct graph {
	uint64_t handle;
	bool dying;
	uint64_t ctx;		/* handle of the context it was captured in */
	int device;		/* ...and its device */
	enum graph_state state;
	uint32_t capture_error;	/* first error that invalidated the capture */
	uint64_t origin;	/* the stream CAPTURE_BEGIN named */
	struct graph_member *members;
	uint32_t nmembers, capmembers;
	uint32_t nnodes;	/* as the client would count them */
	/* Host nodes (HOST_FUNC NODE): they cut the graph into nhost + 1
	 * parts, launched one by one with the client's host functions in
	 * between (ops/graph.c). */
	uint32_t nhost;
	struct graph_refs refs;
	_Atomic int32_t end_res;	/* worker: GRAPH_END_PENDING, then a CUresult */
	void *backend_priv;
};

struct graph_exec {
	uint64_t handle;
	bool dying;
	uint64_t ctx;		/* handle, as the graph's */
	int device;
	uint32_t nnodes;
	uint32_t nhost;		/* as its graph's: nhost + 1 parts */
	struct graph_refs refs;	/* of every graph it was made or updated from */
	void *backend_priv;
};

/*
 * An update of an exec in flight (ops/graph.c): once it ran, the exec
 * names only what the new graph names (until then launches check both),
 * so memory only the old graph named can go; the dispatcher makes that
 * change (work.done_fn) before it posts the update's completion. The
 * executor sets res; one it never ran keeps its initial error.
 */
struct graph_update {
	struct graph_exec *exec;
	struct graph_refs refs;		/* the new graph's */
	int32_t res;			/* worker */
	struct graph_update *next;	/* the client's updates in flight */
};

/* The executor ran an update (u: its work's graph.update) with res; the
 * done queue carries it over to the dispatcher. */
static inline void graph_update_ran(struct graph_update *u, int32_t res)
{
	if (u)
		u->res = res;
}

/* The executor ended g's capture with res (before finishing the item). */
static inline void graph_set_ended(struct graph *g, int32_t res)
{
	/* Pairs with the acquire in ops/graph.c (graph_ready). */
	atomic_store_explicit(&g->end_res, res, memory_order_release);
}

#endif
