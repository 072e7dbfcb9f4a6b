/* SPDX-License-Identifier: MIT */
/*
 * Client regions made ahead of time (pool.c): a memfd and its mapping for
 * the default geometry, kept ready (--region-pool) so that a connecting
 * client does not wait for them. Dispatcher thread.
 */
#ifndef AXOND_POOL_H
#define AXOND_POOL_H

#include <stddef.h>

struct axond;
struct axon_params;

/* A region of size bytes, its memfd in *fd mapped at *map: 0, or a
 * negative errno. */
int region_create(size_t size, int *fd, void **map);
void region_pool_init(struct axond *d);
void region_pool_refill(struct axond *d);
/* A ready region laid out as p: 0, or -ENOENT (none, or another layout). */
int region_pool_take(struct axond *d, const struct axon_params *p, int *fd, void **map);
void region_pool_fini(struct axond *d);

#endif
