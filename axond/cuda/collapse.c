// SPDX-License-Identifier: MIT
/*
 * Launch collapse (collapse.h). The executor hands over a run of n plain
 * launches of one stream; their shape (function, grid, block, dynamic
 * shared memory, parameter size, each in order) keys a small per-context
 * cache of instantiated graphs, a linear chain of n kernel nodes. A hit
 * costs one cuGraphExecKernelNodeSetParams per node whose parameters
 * changed since that graph's last replay (none in a loop relaunching the
 * same kernel) and one cuGraphLaunch.
 *
 * A graph serves one stream: the driver orders each launch of an exec
 * behind the previous launch of the same exec, so an exec shared by two
 * streams would serialise them (a high-priority stream behind a low one,
 * kernels that wait for each other across streams deadlocked). The stream
 * is part of the key.
 *
 * A shape is built into a graph the second time it is seen, not the first:
 * a sequence that never repeats would pay the instantiation for nothing.
 * Should building still outweigh replaying (shapes that recur, but rarely
 * enough to be evicted between uses), collapsing stops for a while in
 * that context.
 *
 * Stream semantics are kept: the nodes are chained, so they run in order,
 * after the stream's earlier work and before its later work; a graph
 * launched into a stream takes that stream's priority. Anything the graph
 * path cannot do (a launch the driver refuses at build, a failed update)
 * leaves the run to be launched directly, so errors are the driver's own
 * answer to a direct launch.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../axond.h"
#include "../backend.h"
#include "collapse.h"
#include "context.h"
#include "vendor.h"

#define CACHE_ENTRIES	32
#define SEEN_SLOTS	256
/* The thrash guard: after this many builds, at least this many replays
 * per build, or no collapsing for the next OFF_RUNS runs. */
#define GUARD_BUILDS	32
#define GUARD_RATIO	4
#define OFF_RUNS	4096

unsigned int collapse_min = COLLAPSE_MIN_DEFAULT;

/* Bumped when a cached graph may name a stale function (collapse.h). */
static _Atomic uint64_t epoch = 1;

/* What one node of a cached graph launches as of its last replay. */
struct node {
	CUfunction fn;
	uint32_t grid[3], block[3], smem, args_size;
	void *args;
};

struct entry {
	uint64_t key;		/* 0: free */
	CUstream stream;	/* the one it is launched on */
	unsigned int n;
	uint64_t last_use;
	CUgraph graph;
	CUgraphExec exec;
	CUgraphNode *gnodes;	/* n, in graph (for parameter updates) */
	struct node *nodes;	/* n */
};

struct collapse_cache {
	uint64_t epoch;
	uint64_t tick;		/* runs offered */
	uint64_t builds, replays, off_until;
	struct entry e[CACHE_ENTRIES];
	uint64_t seen[SEEN_SLOTS];	/* shapes seen once, by key */
};

void collapse_invalidate(void)
{
	atomic_fetch_add(&epoch, 1);
}

static void entry_drop(struct entry *e)
{
	unsigned int i;

	if (e->exec)
		vd.cuGraphExecDestroy(e->exec);
	if (e->graph)
		vd.cuGraphDestroy(e->graph);
	if (e->nodes)
		for (i = 0; i < e->n; i++)
			free(e->nodes[i].args);
	free(e->nodes);
	free(e->gnodes);
	memset(e, 0, sizeof(*e));
}

void collapse_free(struct cu_gctx *g)
{
	struct collapse_cache *cc = g->collapse;
	unsigned int i;

	if (!cc)
		return;
	for (i = 0; i < CACHE_ENTRIES; i++)
		if (cc->e[i].key)
			entry_drop(&cc->e[i]);
	free(cc);
	g->collapse = NULL;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	return h ^ (h >> 29);
}

static uint64_t shape_key(CUstream cs, struct work *const *items, unsigned int n)
{
	uint64_t h = mix(mix(0xcbf29ce484222325ULL, n), (uint64_t)(uintptr_t)cs);
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct work *w = items[i];

		h = mix(h, (uint64_t)(uintptr_t)w->launch.func->backend_priv);
		h = mix(h, ((uint64_t)w->launch.grid[0] << 32) | w->launch.grid[1]);
		h = mix(h, ((uint64_t)w->launch.grid[2] << 32) | w->launch.block[0]);
		h = mix(h, ((uint64_t)w->launch.block[1] << 32) | w->launch.block[2]);
		h = mix(h, ((uint64_t)w->launch.shared_bytes << 32) | w->launch.args_size);
	}
	return h ? h : 1;
}

static bool same_shape(const struct node *nd, const struct work *w)
{
	return nd->fn == (CUfunction)w->launch.func->backend_priv &&
	       !memcmp(nd->grid, w->launch.grid, sizeof(nd->grid)) &&
	       !memcmp(nd->block, w->launch.block, sizeof(nd->block)) &&
	       nd->smem == w->launch.shared_bytes &&
	       nd->args_size == w->launch.args_size;
}

/* The driver's description of w as a kernel node. extra and size must
 * outlive the call that takes the parameters (which copies them). */
static void node_params(const struct work *w, CUDA_KERNEL_NODE_PARAMS *p,
			void *extra[5], size_t *size)
{
	memset(p, 0, sizeof(*p));
	p->func = (CUfunction)w->launch.func->backend_priv;
	p->gridDimX = w->launch.grid[0];
	p->gridDimY = w->launch.grid[1];
	p->gridDimZ = w->launch.grid[2];
	p->blockDimX = w->launch.block[0];
	p->blockDimY = w->launch.block[1];
	p->blockDimZ = w->launch.block[2];
	p->sharedMemBytes = w->launch.shared_bytes;
	*size = w->launch.args_size;
	if (*size) {
		extra[0] = CU_LAUNCH_PARAM_BUFFER_POINTER;
		extra[1] = w->launch.args;
		extra[2] = CU_LAUNCH_PARAM_BUFFER_SIZE;
		extra[3] = size;
		extra[4] = CU_LAUNCH_PARAM_END;
		p->extra = extra;
	}
}

/* Records what node i now launches. */
static int node_set(struct node *nd, const struct work *w)
{
	if (w->launch.args_size && !nd->args) {
		nd->args = malloc(w->launch.args_size);
		if (!nd->args)
			return -1;
	}
	nd->fn = (CUfunction)w->launch.func->backend_priv;
	memcpy(nd->grid, w->launch.grid, sizeof(nd->grid));
	memcpy(nd->block, w->launch.block, sizeof(nd->block));
	nd->smem = w->launch.shared_bytes;
	nd->args_size = w->launch.args_size;
	if (nd->args_size)
		memcpy(nd->args, w->launch.args, nd->args_size);
	return 0;
}

static CUresult build(struct entry *e, uint64_t key, CUstream cs, struct work *const *items,
		      unsigned int n)
{
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
	unsigned int i;

	e->n = n;
	e->gnodes = calloc(n, sizeof(*e->gnodes));
	e->nodes = calloc(n, sizeof(*e->nodes));
	if (!e->gnodes || !e->nodes)
		goto fail;
	r = vd.cuGraphCreate(&e->graph, 0);
	if (r)
		goto fail;
	for (i = 0; i < n; i++) {
		CUDA_KERNEL_NODE_PARAMS p;
		void *extra[5];
		size_t size;

		node_params(items[i], &p, extra, &size);
		r = vd.cuGraphAddKernelNode(&e->gnodes[i], e->graph,
					    i ? &e->gnodes[i - 1] : NULL, i ? 1 : 0, &p);
		if (r)
			goto fail;
		if (node_set(&e->nodes[i], items[i])) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto fail;
		}
	}
	r = vd.cuGraphInstantiateWithFlags(&e->exec, e->graph, 0);
	if (r)
		goto fail;
	e->key = key;
	e->stream = cs;
	return CUDA_SUCCESS;
fail:
	e->exec = NULL;
	entry_drop(e);
	return r;
}

/* Brings a hit's nodes to items' parameters. */
static CUresult update(struct entry *e, struct work *const *items, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct node *nd = &e->nodes[i];
		const struct work *w = items[i];
		CUDA_KERNEL_NODE_PARAMS p;
		void *extra[5];
		size_t size;
		CUresult r;

		if (!nd->args_size || !memcmp(nd->args, w->launch.args, nd->args_size))
			continue;
		node_params(w, &p, extra, &size);
		r = vd.cuGraphExecKernelNodeSetParams(e->exec, e->gnodes[i], &p);
		if (r)
			return r;
		memcpy(nd->args, w->launch.args, nd->args_size);
	}
	return CUDA_SUCCESS;
}

static struct entry *lookup(struct collapse_cache *cc, uint64_t key, CUstream cs,
			    struct work *const *items, unsigned int n)
{
	unsigned int i, k;

	for (i = 0; i < CACHE_ENTRIES; i++) {
		struct entry *e = &cc->e[i];

		if (e->key != key || e->n != n || e->stream != cs)
			continue;
		for (k = 0; k < n && same_shape(&e->nodes[k], items[k]); k++)
			;
		if (k == n)
			return e;
	}
	return NULL;
}

/* A free entry, or the least recently replayed one, emptied. */
static struct entry *victim(struct collapse_cache *cc)
{
	struct entry *v = &cc->e[0];
	unsigned int i;

	for (i = 0; i < CACHE_ENTRIES; i++) {
		if (!cc->e[i].key)
			return &cc->e[i];
		if (cc->e[i].last_use < v->last_use)
			v = &cc->e[i];
	}
	entry_drop(v);
	return v;
}

CUresult collapse_issue(struct cu_gctx *g, CUstream cs, struct work *const *items,
			unsigned int n)
{
	struct collapse_cache *cc = g->collapse;
	uint64_t key, now_epoch = atomic_load(&epoch);
	struct entry *e;
	CUresult r;

	if (!cc) {
		cc = g->collapse = calloc(1, sizeof(*cc));
		if (!cc)
			return CUDA_ERROR_OUT_OF_MEMORY;
		cc->epoch = now_epoch;
	}
	if (cc->epoch != now_epoch) {
		unsigned int i;

		for (i = 0; i < CACHE_ENTRIES; i++)
			if (cc->e[i].key)
				entry_drop(&cc->e[i]);
		memset(cc->seen, 0, sizeof(cc->seen));
		cc->epoch = now_epoch;
	}
	cc->tick++;
	if (cc->tick < cc->off_until)
		return CUDA_ERROR_NOT_SUPPORTED;
	key = shape_key(cs, items, n);
	e = lookup(cc, key, cs, items, n);
	if (e) {
		r = update(e, items, n);
		if (r) {
			/* Its nodes are half updated: start again. */
			entry_drop(e);
			cc->builds++;
			return r;
		}
	} else {
		uint64_t *seen = &cc->seen[key % SEEN_SLOTS];

		if (*seen != key) {
			*seen = key;	/* built if it comes again */
			return CUDA_ERROR_NOT_SUPPORTED;
		}
		*seen = 0;
		if (cc->builds >= GUARD_BUILDS) {
			if (cc->replays < cc->builds * GUARD_RATIO) {
				cc->off_until = cc->tick + OFF_RUNS;
				cc->builds = cc->replays = 0;
				return CUDA_ERROR_NOT_SUPPORTED;
			}
			cc->builds = cc->replays = 0;
		}
		cc->builds++;
		e = victim(cc);
		r = build(e, key, cs, items, n);
		if (r)
			return r;
	}
	r = vd.cuGraphLaunch(e->exec, cs);
	if (r) {
		entry_drop(e);
		return r;
	}
	e->last_use = cc->tick;
	cc->replays++;
	return CUDA_SUCCESS;
}
