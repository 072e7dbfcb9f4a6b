// SPDX-License-Identifier: MIT
/*
 * What the shim remembers of captured graphs and their execs (shim.h):
 * each graph's node count as the driver would count it, and the host work
 * of each graph and exec. capture.c records a graph at its end, graph.c
 * looks it up; neither calls the other for it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "forkreg.h"

/*
 * Node counts and host work of the graphs this process captured, and the
 * host work of execs made from them, by handle index. Lookups take a
 * reference to the host work.
 */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static struct graph_rec { uint64_t graph, nodes; struct shim_hostwork *hw; } *counts;
static uint32_t ncounts;
static struct exec_rec { uint64_t exec; struct shim_hostwork *hw; } *execs;
static uint32_t nexecs;

/* Room for index i in *tab (count_lock held). */
static bool tab_grow(void **tab, uint32_t *n, uint32_t i, size_t size)
{
	uint32_t m = *n ? *n : 64;
	void *p;

	if (i < *n)
		return true;
	while (m <= i && m < (1u << 16))
		m *= 2;
	p = m > i ? realloc(*tab, (size_t)m * size) : NULL;
	if (!p)
		return false;
	memset((char *)p + (size_t)*n * size, 0, (size_t)(m - *n) * size);
	*tab = p;
	*n = m;
	return true;
}

bool shim_graph_note(uint64_t graph, uint64_t nodes, struct shim_hostwork *hw,
		     struct shim_hostwork **stale)
{
	uint32_t i = AXON_HANDLE_INDEX(graph);

	pthread_mutex_lock(&count_lock);
	if (!tab_grow((void **)&counts, &ncounts, i, sizeof(*counts))) {
		pthread_mutex_unlock(&count_lock);
		return false;
	}
	/* None: shim_graph_unrecord took the last one's. */
	*stale = counts[i].hw;
	counts[i] = (struct graph_rec){ graph, nodes, hw };
	pthread_mutex_unlock(&count_lock);
	return true;
}

/* -1 when unknown */
int64_t shim_graph_nodes(uint64_t graph)
{
	uint32_t i = AXON_HANDLE_INDEX(graph);
	int64_t n = -1;

	pthread_mutex_lock(&count_lock);
	if (i < ncounts && counts[i].graph == graph)
		n = (int64_t)counts[i].nodes;
	pthread_mutex_unlock(&count_lock);
	return n;
}

/* The graph's host work, referenced (NULL: none). */
struct shim_hostwork *shim_graph_hostwork(uint64_t graph)
{
	uint32_t i = AXON_HANDLE_INDEX(graph);
	struct shim_hostwork *hw = NULL;

	pthread_mutex_lock(&count_lock);
	if (i < ncounts && counts[i].graph == graph && (hw = counts[i].hw))
		shim_hostwork_get(hw);
	pthread_mutex_unlock(&count_lock);
	return hw;
}

/* Forgets the graph; returns its host work's reference to put. */
struct shim_hostwork *shim_graph_unrecord(uint64_t graph)
{
	uint32_t i = AXON_HANDLE_INDEX(graph);
	struct shim_hostwork *hw = NULL;

	pthread_mutex_lock(&count_lock);
	if (i < ncounts && counts[i].graph == graph) {
		hw = counts[i].hw;
		counts[i].graph = 0;
		counts[i].hw = NULL;
	}
	pthread_mutex_unlock(&count_lock);
	return hw;
}

/* The exec's host work becomes hw (a reference moves in; NULL: none);
 * returns the old one's reference to put, through *old. */
bool shim_exec_set_hostwork(uint64_t exec, struct shim_hostwork *hw, struct shim_hostwork **old)
{
	uint32_t i = AXON_HANDLE_INDEX(exec);

	*old = NULL;
	pthread_mutex_lock(&count_lock);
	if (!hw && (i >= nexecs || execs[i].exec != exec)) {
		pthread_mutex_unlock(&count_lock);
		return true;	/* nothing to remember */
	}
	if (!tab_grow((void **)&execs, &nexecs, i, sizeof(*execs))) {
		pthread_mutex_unlock(&count_lock);
		return false;
	}
	/* Whatever the slot held goes: this exec's own earlier work, or a
	 * destroyed exec's whose slot a new one took before its record
	 * was cleared (another thread instantiating in between). */
	*old = execs[i].hw;
	execs[i] = (struct exec_rec){ hw ? exec : 0, hw };
	pthread_mutex_unlock(&count_lock);
	return true;
}

struct shim_hostwork *shim_exec_hostwork(uint64_t exec)
{
	uint32_t i = AXON_HANDLE_INDEX(exec);
	struct shim_hostwork *hw = NULL;

	pthread_mutex_lock(&count_lock);
	if (i < nexecs && execs[i].exec == exec && (hw = execs[i].hw))
		shim_hostwork_get(hw);
	pthread_mutex_unlock(&count_lock);
	return hw;
}

/* After fork: the child forgets the records. Their host work is left on
 * the heap: its staging memory was never the child's (MADV_DONTFORK) and
 * releasing it would name the parent's regions. */
static void graph_records_forget(void)
{
	free(counts);
	counts = NULL;
	ncounts = 0;
	free(execs);
	execs = NULL;
	nexecs = 0;
	pthread_mutex_init(&count_lock, NULL);
}

__attribute__((constructor)) static void register_graph_records_forget(void)
{
	shim_fork_register(graph_records_forget);
}
