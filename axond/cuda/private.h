/* SPDX-License-Identifier: MIT */
/* The cuda backend's private driver calls (private.c). */
#ifndef AXOND_CUDA_PRIVATE_H
#define AXOND_CUDA_PRIVATE_H

#include <stdint.h>

struct axond;
struct client;
struct ctx;

/* backend.h's private_call: AXON_PRIV_* in the client's context ctx. */
int cuda_private_call(struct axond *d, struct client *c, struct ctx *ctx,
		      unsigned int call, uint64_t arg, uint64_t *out);

#endif
