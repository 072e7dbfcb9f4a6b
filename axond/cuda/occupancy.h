/* SPDX-License-Identifier: MIT */
/* The cuda backend's occupancy queries (occupancy.c). */
#ifndef AXOND_CUDA_OCCUPANCY_H
#define AXOND_CUDA_OCCUPANCY_H

struct axond;
struct axon_sqe;
struct client;
struct func;

/* backend.h's occupancy: AXON_OP_OCCUPANCY, q validated. */
int cuda_occupancy(struct axond *d, struct client *c, struct func *f,
		   const struct axon_sqe *q, int *value);

#endif
