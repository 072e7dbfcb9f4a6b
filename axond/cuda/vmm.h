/* SPDX-License-Identifier: MIT */
/* The cuda backend's side of the VMM API for clients (vmm.c). */
#ifndef AXOND_CUDA_VMM_H
#define AXOND_CUDA_VMM_H

#include <stdint.h>

struct axond;
struct client;
struct vmm_phys;

int cuda_phys_create(struct axond *d, struct client *c, struct vmm_phys *p);
void cuda_phys_free(struct axond *d, struct vmm_phys *p);
int cuda_phys_map(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		  struct vmm_phys *p, uint64_t off);
void cuda_phys_unmap(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		     struct vmm_phys *p);

#endif
