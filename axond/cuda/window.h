/* SPDX-License-Identifier: MIT */
/* The cuda backend's client windows (window.c). */
#ifndef AXOND_CUDA_WINDOW_H
#define AXOND_CUDA_WINDOW_H

#include <stdint.h>

struct axond;
struct client;

/* backend.h's client_init, client_fini, granule_back and granule_release. */
int cuda_client_init(struct axond *d, struct client *c);
void cuda_client_fini(struct axond *d, struct client *c);
int cuda_granule_back(struct axond *d, struct client *c, uint64_t va,
		      uint64_t len, uint64_t *handle);
void cuda_granule_release(struct axond *d, struct client *c, uint64_t va,
			  uint64_t len, uint64_t handle);
/* The backend's fini: what workers' clients left to undo at the end. */
void cu_window_fini(void);

#endif
