/* SPDX-License-Identifier: MIT */
/* What a graph's nodes name (graphrefs.c). Dispatcher thread. */
#ifndef AXOND_OPS_GRAPHREFS_H
#define AXOND_OPS_GRAPHREFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct client;
struct graph_refs;

/* Grows *p (of *cap elements of size) to hold n + 1. */
bool graph_grow(void **p, uint32_t *cap, uint32_t n, size_t size);
/* Adds what a node names; false when out of memory. */
bool graph_refs_add_func(struct graph_refs *r, uint64_t f);
bool graph_refs_add_range(struct graph_refs *r, uint64_t addr, uint64_t len);
bool graph_refs_add_host(struct graph_refs *r, uint64_t addr, uint64_t len,
			 const unsigned char *map);
/* Sorts and drops duplicates, so a launch checks each object once. */
void graph_refs_normalize(struct graph_refs *r);
/* Adds everything src names to dst (normalized); false without memory. */
bool graph_refs_merge(struct graph_refs *dst, const struct graph_refs *src);
void graph_refs_free(struct graph_refs *r);
/* Everything the nodes name is still the client's: 0 or a CUresult. */
int32_t graph_refs_check(struct client *c, const struct graph_refs *r);

#endif
