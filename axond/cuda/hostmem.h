/* SPDX-License-Identifier: MIT */
/* The cuda backend's registration of shared host regions (hostmem.c). */
#ifndef AXOND_CUDA_HOSTMEM_H
#define AXOND_CUDA_HOSTMEM_H

struct axond;
struct hostmem;
struct work;

void cuda_hostmem_register(struct axond *d, struct hostmem *h, struct work *w);
void cuda_hostmem_unregister(struct axond *d, struct hostmem *h);
/* Backend shutdown: finishes queued registrations, stops the thread. */
void cuda_hostmem_fini(void);

#endif
