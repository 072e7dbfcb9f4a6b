// SPDX-License-Identifier: MIT
/*
 * AXON_OP_OCCUPANCY: cluster occupancy, which the client cannot compute
 * itself. How many clusters fit at once depends on how the device's SMs are
 * grouped (GPCs of different sizes on an H200), which no attribute tells;
 * only the driver knows. cuBLAS asks this about thirty times while it
 * creates a handle, so the op is a plain synchronous query.
 */
#include <cuda.h>
#include "ops.h"

/* The driver's limits: 1024 threads a block, 16 blocks a cluster (non-portable). */
#define OCC_MAX_BLOCK_DIM	1024
#define OCC_MAX_CLUSTER_DIM	16

enum op_status op_occupancy(struct op_ctx *o)
{
	const struct axon_sqe *q = o->sqe;
	struct func *f;
	int value = 0, i;

	if (q->occupancy.resv0 || q->occupancy.resv1 ||
	    q->occupancy.query > AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	for (i = 0; i < 3; i++) {
		if (!q->occupancy.block[i] || q->occupancy.block[i] > OCC_MAX_BLOCK_DIM ||
		    !q->occupancy.grid[i]) {
			o->res = CUDA_ERROR_INVALID_VALUE;
			return OP_COMPLETE;
		}
		/* What the driver answers; cuBLAS probes sizes upwards
		 * until it gets this. */
		if (q->occupancy.cluster[i] > OCC_MAX_CLUSTER_DIM) {
			o->res = CUDA_ERROR_INVALID_CLUSTER_SIZE;
			return OP_COMPLETE;
		}
	}
	/* All three or none (then the function's own, if it has one). */
	if ((q->occupancy.cluster[0] || q->occupancy.cluster[1] || q->occupancy.cluster[2]) &&
	    !(q->occupancy.cluster[0] && q->occupancy.cluster[1] && q->occupancy.cluster[2])) {
		o->res = CUDA_ERROR_INVALID_CLUSTER_SIZE;
		return OP_COMPLETE;
	}
	f = func_lookup(o->c, q->occupancy.func);
	if (!f) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	o->res = o->d->backend->occupancy(o->d, o->c, f, q, &value);
	o->aux[0] = (uint64_t)value;
	return OP_COMPLETE;
}
