/* SPDX-License-Identifier: MIT */
/* The cuda backend's client windows (window.c). */
#ifndef AXOND_CUDA_WINDOW_H
#define AXOND_CUDA_WINDOW_H

#include <stdint.h>

struct axond;
struct client;

/* backend.h's client_init, client_fini and mem_map. */
int cuda_client_init(struct axond *d, struct client *c);
void cuda_client_fini(struct axond *d, struct client *c);
int cuda_mem_map(struct axond *d, struct client *c, uint64_t addr, uint64_t len);
/* Drops the pages [addr, addr+len) of the client's window holds, the last
 * allocation on each unmapping and releasing it (any thread). */
void cu_unmap_pages(struct client *c, uint64_t addr, uint64_t len);
/* The backend's fini: what workers' clients left to undo at the end. */
void cu_window_fini(void);

#endif
