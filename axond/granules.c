// SPDX-License-Identifier: MIT
/*
 * A client's device-memory granules (granules.h). The reference count is
 * kept by the dispatcher, which charges by it: a granule costs the client
 * while an allocation of its uses it. The backing follows it with a lag:
 * a granule whose last allocation was freed keeps its backing until the
 * work queued before that free has run (queued), as the driver keeps freed
 * memory alive for work already submitted; an allocation made there in
 * the meantime finds it backed and keeps it.
 */
#include <errno.h>
#include <stdlib.h>
#include <cuda.h>

#include "axond.h"
#include "backend.h"
#include "granules.h"

int granules_init(struct granules *g, uint64_t base, uint64_t size, uint64_t gran)
{
	if (!gran)
		gran = 2ULL << 20;
	if (gran & (gran - 1) || !size || size % gran)
		return -EINVAL;
	g->base = base;
	g->size = size;
	g->gran = gran;
	g->n = size / gran;
	g->refs = calloc(g->n, sizeof(*g->refs));
	g->queued = calloc(g->n, sizeof(*g->queued));
	g->backing = calloc(g->n, sizeof(*g->backing));
	if (!g->refs || !g->queued || !g->backing) {
		free(g->refs);
		free(g->queued);
		free(g->backing);
		g->refs = NULL;
		g->queued = NULL;
		g->backing = NULL;
		return -ENOMEM;
	}
	g->charged = 0;
	g->backed = 0;
	pthread_mutex_init(&g->lock, NULL);
	return 0;
}

static void release(struct axond *d, struct client *c, uint64_t i)
{
	struct granules *g = &c->granules;

	d->backend->granule_release(d, c, g->base + i * g->gran, g->gran, g->backing[i]);
	g->backing[i] = 0;
	g->backed -= g->gran;
}

void granules_fini(struct axond *d, struct client *c)
{
	struct granules *g = &c->granules;
	uint64_t i;

	if (!g->refs)
		return;
	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->n; i++)
		if (g->backing[i])
			release(d, c, i);
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_destroy(&g->lock);
	free(g->refs);
	free(g->queued);
	free(g->backing);
	g->refs = NULL;
	g->queued = NULL;
	g->backing = NULL;
}

/* The granules [addr, addr + len) touches, or false outside the window. */
static bool span(const struct granules *g, uint64_t addr, uint64_t len,
		 uint64_t *first, uint64_t *last)
{
	if (!g->refs || !len || addr < g->base || len > g->size ||
	    addr - g->base > g->size - len)
		return false;
	*first = (addr - g->base) / g->gran;
	*last = (addr - g->base + len - 1) / g->gran;
	return true;
}

uint64_t granules_need(struct granules *g, uint64_t addr, uint64_t len)
{
	uint64_t i, first, last, need = 0;

	if (!span(g, addr, len, &first, &last))
		return 0;
	pthread_mutex_lock(&g->lock);
	for (i = first; i <= last; i++)
		if (!g->refs[i])
			need += g->gran;
	pthread_mutex_unlock(&g->lock);
	return need;
}

int granules_take(struct axond *d, struct client *c, uint64_t addr, uint64_t len)
{
	struct granules *g = &c->granules;
	uint64_t i, j, first, last;
	int r = CUDA_SUCCESS;

	if (!span(g, addr, len, &first, &last))
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&g->lock);
	for (i = first; i <= last; i++) {
		if (g->refs[i] == UINT32_MAX) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			break;
		}
		if (!g->backing[i]) {
			r = d->backend->granule_back(d, c, g->base + i * g->gran,
						     g->gran, &g->backing[i]);
			if (r)
				break;
			if (!g->backing[i])
				g->backing[i] = 1;
			g->backed += g->gran;
		}
		if (!g->refs[i]++)
			g->charged += g->gran;
	}
	if (r) {
		/* Undo what this call took; what it backed goes again. */
		for (j = first; j < i; j++) {
			if (--g->refs[j])
				continue;
			g->charged -= g->gran;
			if (!g->queued[j])
				release(d, c, j);
		}
		r = CUDA_ERROR_OUT_OF_MEMORY;	/* as the driver's would */
	}
	pthread_mutex_unlock(&g->lock);
	return r;
}

uint64_t granules_drop(struct axond *d, struct client *c, uint64_t addr,
		       uint64_t len, bool queued)
{
	struct granules *g = &c->granules;
	uint64_t i, first, last, freed = 0;

	if (!span(g, addr, len, &first, &last))
		return 0;
	pthread_mutex_lock(&g->lock);
	for (i = first; i <= last; i++) {
		if (!g->refs[i])
			continue;	/* not ours: never taken */
		if (queued)
			g->queued[i]++;
		if (--g->refs[i])
			continue;
		g->charged -= g->gran;
		freed += g->gran;
		if (!g->queued[i] && g->backing[i])
			release(d, c, i);
	}
	pthread_mutex_unlock(&g->lock);
	return freed;
}

void granules_release_queued(struct axond *d, struct client *c, uint64_t addr,
			     uint64_t len)
{
	struct granules *g = &c->granules;
	uint64_t i, first, last;

	if (!span(g, addr, len, &first, &last))
		return;
	pthread_mutex_lock(&g->lock);
	for (i = first; i <= last; i++) {
		if (!g->queued[i])
			continue;
		if (--g->queued[i] || g->refs[i] || !g->backing[i])
			continue;
		release(d, c, i);
	}
	pthread_mutex_unlock(&g->lock);
}
