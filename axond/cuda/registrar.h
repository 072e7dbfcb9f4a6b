/* SPDX-License-Identifier: MIT */
/*
 * The cuda backend's registrar (registrar.c): client data areas registered
 * for DMA on a thread of their own. A registration costs ~0.7 ms per MiB,
 * too long for a client to wait at connect; copies before it finishes still
 * work, as the driver stages unregistered memory itself.
 */
#ifndef AXOND_CUDA_REGISTRAR_H
#define AXOND_CUDA_REGISTRAR_H

#include <stddef.h>

struct axond;
struct dma_reg;

/* Starts the thread (the backend's init; device 0's primary context is
 * made current on it); 0 or -EAGAIN with err filled. */
int cu_registrar_start(char *err, size_t errlen);
/* Stops it, once nothing queues any more (the backend's fini). */
void cu_registrar_stop(void);
/* The registration of [ptr, ptr+len): a prepared one, or a new one queued;
 * NULL without memory (copies stay staged). */
struct dma_reg *cu_dma_register_later(void *ptr, size_t len);
/* Before the memory goes: takes g off the queue, or waits for it to
 * finish, undoes it, and frees g. NULL is ignored. */
void cu_dma_unregister(struct dma_reg *g);

/* The backend's pooled-region hooks (backend.h). */
void cuda_region_pool_wait(struct axond *d);
void cuda_region_prepare(struct axond *d, void *data, size_t len);
void cuda_region_unprepare(struct axond *d, void *data);

#endif
