// SPDX-License-Identifier: MIT
/*
 * What a graph's nodes name (graphrefs.h): the functions of its kernel
 * nodes, the device ranges of its memsets and copies, the shared host
 * regions of its host copies. Collected while capturing (ops/capture.c),
 * checked again at each instantiation, launch and update (ops/graph.c), so
 * a graph never runs a function of an unloaded module or touches memory
 * the client freed since.
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "ops.h"
#include "hostmem.h"
#include "graphrefs.h"
#include "../graph.h"

/* Grows *p (of *cap elements of size) to hold n + 1. */
bool graph_grow(void **p, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t ncap;
	void *q;

	if (n < *cap)
		return true;
	ncap = *cap ? *cap * 2 : 8;
	if (ncap <= n)
		return false;
	q = realloc(*p, (size_t)ncap * size);
	if (!q)
		return false;
	*p = q;
	*cap = ncap;
	return true;
}

bool graph_refs_add_func(struct graph_refs *r, uint64_t f)
{
	/* Consecutive launches of one kernel are the common case. */
	if (r->nfuncs && r->funcs[r->nfuncs - 1] == f)
		return true;
	if (!graph_grow((void **)&r->funcs, &r->capfuncs, r->nfuncs, sizeof(*r->funcs)))
		return false;
	r->funcs[r->nfuncs++] = f;
	return true;
}

bool graph_refs_add_range(struct graph_refs *r, uint64_t addr, uint64_t len)
{
	if (r->nranges && r->ranges[r->nranges - 1].addr == addr &&
	    r->ranges[r->nranges - 1].len == len)
		return true;
	if (!graph_grow((void **)&r->ranges, &r->capranges, r->nranges, sizeof(*r->ranges)))
		return false;
	r->ranges[r->nranges].addr = addr;
	r->ranges[r->nranges].len = len;
	r->nranges++;
	return true;
}

bool graph_refs_add_host(struct graph_refs *r, uint64_t addr, uint64_t len,
			  const unsigned char *map)
{
	if (r->nhosts && r->hosts[r->nhosts - 1].addr == addr &&
	    r->hosts[r->nhosts - 1].len == len && r->hosts[r->nhosts - 1].map == map)
		return true;
	if (!graph_grow((void **)&r->hosts, &r->caphosts, r->nhosts, sizeof(*r->hosts)))
		return false;
	r->hosts[r->nhosts++] = (struct graph_host){ .addr = addr, .len = len, .map = map };
	return true;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_range(const void *a, const void *b)
{
	const struct graph_range *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int cmp_host(const void *a, const void *b)
{
	const struct graph_host *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x->map < y->map ? -1 : x->map > y->map;
}

/* Sorts and drops duplicates, so a launch checks each object once. */
void graph_refs_normalize(struct graph_refs *r)
{
	uint32_t i, n;

	if (r->nhosts > 1) {
		qsort(r->hosts, r->nhosts, sizeof(*r->hosts), cmp_host);
		for (i = 1, n = 1; i < r->nhosts; i++)
			if (cmp_host(&r->hosts[i], &r->hosts[n - 1]))
				r->hosts[n++] = r->hosts[i];
		r->nhosts = n;
	}

	if (r->nfuncs > 1) {
		qsort(r->funcs, r->nfuncs, sizeof(*r->funcs), cmp_u64);
		for (i = 1, n = 1; i < r->nfuncs; i++)
			if (r->funcs[i] != r->funcs[n - 1])
				r->funcs[n++] = r->funcs[i];
		r->nfuncs = n;
	}
	if (r->nranges > 1) {
		qsort(r->ranges, r->nranges, sizeof(*r->ranges), cmp_range);
		for (i = 1, n = 1; i < r->nranges; i++)
			if (cmp_range(&r->ranges[i], &r->ranges[n - 1]))
				r->ranges[n++] = r->ranges[i];
		r->nranges = n;
	}
}

bool graph_refs_merge(struct graph_refs *dst, const struct graph_refs *src)
{
	uint32_t i;

	for (i = 0; i < src->nfuncs; i++)
		if (!graph_refs_add_func(dst, src->funcs[i]))
			return false;
	for (i = 0; i < src->nranges; i++)
		if (!graph_refs_add_range(dst, src->ranges[i].addr, src->ranges[i].len))
			return false;
	for (i = 0; i < src->nhosts; i++)
		if (!graph_refs_add_host(dst, src->hosts[i].addr, src->hosts[i].len,
				   src->hosts[i].map))
			return false;
	graph_refs_normalize(dst);
	return true;
}

void graph_refs_free(struct graph_refs *r)
{
	free(r->funcs);
	free(r->ranges);
	free(r->hosts);
	memset(r, 0, sizeof(*r));
}

/* Everything the nodes name is still the client's: 0 or a CUresult. */
int32_t graph_refs_check(struct client *c, const struct graph_refs *r)
{
	int32_t res = CUDA_SUCCESS;
	uint32_t i;

	for (i = 0; i < r->nfuncs; i++)
		if (!func_lookup(c, r->funcs[i]))
			return CUDA_ERROR_INVALID_HANDLE;
	/*
	 * A copy node reads or writes the mapping it was made with: the
	 * region must still be registered and show that range there (a
	 * region unregistered is unmapped only after the work queued before
	 * its unregistration, which includes this launch).
	 */
	for (i = 0; i < r->nhosts; i++)
		if (hostmem_translate(c, r->hosts[i].addr, r->hosts[i].len) != r->hosts[i].map)
			return CUDA_ERROR_INVALID_VALUE;
	/* A device range is a live allocation or, as when it was captured,
	 * a shared region named by its host address (unified addressing). */
	for (i = 0; i < r->nranges && !res; i++) {
		uint64_t len = r->ranges[i].len ? r->ranges[i].len : 1;
		bool ok;

		pthread_mutex_lock(&c->alloc_lock);
		ok = rangemap_find_span(&c->allocs, r->ranges[i].addr, len);
		pthread_mutex_unlock(&c->alloc_lock);
		if (!ok && !hostmem_device_span(c, r->ranges[i].addr, len, false, false))
			res = CUDA_ERROR_INVALID_VALUE;
	}
	return res;
}
