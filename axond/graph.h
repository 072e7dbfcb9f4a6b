/* SPDX-License-Identifier: MIT */
/*
 * Graphs: stream capture and replay (ops/graph.c; backends: sim/graph.c,
 * cuda/graph.c).
 *
 * A capture is a graph object created by AXON_OP_CAPTURE_BEGIN. While it
 * is open, the dispatcher tags every stream-ordered work item of its
 * streams with it (graph_capture_track, from work_submit): the backend
 * records the item (sim) or issues it to the vendor's capturing stream
 * (cuda) and the item is done at once for the frontier. Which streams
 * belong to a capture is decided on the dispatcher, in submission order:
 * the origin stream, and any stream that waits on an event recorded in the
 * capture (fork); a later wait by a member on an event recorded on another
 * member joins that one back.
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
	struct graph_refs refs;	/* of every graph it was made or updated from */
	void *backend_priv;
};

/* The executor ended g's capture with res (before finishing the item). */
static inline void graph_set_ended(struct graph *g, int32_t res)
{
	/* Pairs with the acquire in ops/graph.c (graph_ready). */
	atomic_store_explicit(&g->end_res, res, memory_order_release);
}

/* work.c: before a work item goes to the backend (dispatcher). */
void graph_capture_track(struct axond *d, struct work *w);
/* client.c: a client's graphs, at its teardown (no work is queued). */
void graph_client_fini(struct axond *d, struct client *c);
/* stats.c */
void graph_client_counts(const struct client *c, uint32_t *graphs, uint32_t *execs);

#endif
