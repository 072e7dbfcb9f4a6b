// SPDX-License-Identifier: MIT
/*
 * Tensor maps on the sim: the sim has no tensor memory accelerator, and a
 * CUtensorMap's bytes are the driver's private encoding, so a request that
 * passed every documented check (ops/tensormap.c) is refused here, with a
 * log line saying why.
 */
#include <cuda.h>

#include "../axond.h"
#include "../backend.h"
#include "sim.h"

int sim_tensor_map_encode(struct axond *d, struct client *c, int dev,
			  const struct axon_tensor_map_req *req, void *out)
{
	(void)d;
	(void)dev;
	(void)out;
	log_warn("client %llu (%s): tensor map (kind %u, rank %u) refused: the sim has "
		 "no tensor memory accelerator; CUDA_ERROR_NOT_SUPPORTED",
		 (unsigned long long)c->id, c->comm, req->kind, req->rank);
	return CUDA_ERROR_NOT_SUPPORTED;
}
