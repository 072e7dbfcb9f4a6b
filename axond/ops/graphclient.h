/* SPDX-License-Identifier: MIT */
/*
 * A client's graphs, execs and open captures (struct client's graphs),
 * shared by the graph ops (ops/graph.c) and capture (ops/capture.c).
 * Dispatcher thread.
 */
#ifndef AXOND_OPS_GRAPHCLIENT_H
#define AXOND_OPS_GRAPHCLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "ops.h"

/* A stream in an open capture. */
struct capture_stream {
	uint64_t stream;
	uint64_t graph;
};

/* An event last recorded inside an open capture. */
struct capture_event {
	uint64_t event;
	uint64_t graph;
	uint64_t stream;	/* the member that recorded it */
	uint64_t pos;		/* that member's node count then */
};

struct graph_client {
	struct handle_table graphs, execs;
	struct capture_stream *cs;	/* streams of open captures */
	uint32_t ncs, capcs;
	struct capture_event *ce;	/* their events */
	uint32_t nce, capce;
	struct graph_update *updates;	/* in flight (graph.h) */
	/* Nodes held in its graphs and execs: at most --max-graph-nodes, so
	 * a capture that never ends cannot grow the daemon without bound. */
	uint64_t nodes;
};

/* The client's graph state, made on its first graph op; NULL without
 * memory. */
struct graph_client *graph_client_get(struct client *c);
/* A live graph of the client by handle, or NULL. */
struct graph *graph_lookup(struct client *c, uint64_t h);
/* 0 if the backend has graphs, else CUDA_ERROR_NOT_SUPPORTED (the first
 * check of every graph op's prepare). */
int32_t graph_ops_built(const struct op_ctx *o);
/* A work item of a graph op that is not stream-ordered for the client. */
struct work *graph_work(struct op_ctx *o, struct stream *s, enum work_type type);

#endif
