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

struct occupancy_req {
	struct func *func;
};

int32_t op_occupancy_prep(struct op_ctx *o)
{
	const struct axon_sqe *q = o->sqe;
	struct func *f;
	int i;

	if (q->occupancy.resv0 || q->occupancy.resv1 ||
	    q->occupancy.query > AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < 3; i++) {
		if (!q->occupancy.block[i] || q->occupancy.block[i] > OCC_MAX_BLOCK_DIM ||
		    !q->occupancy.grid[i])
			return CUDA_ERROR_INVALID_VALUE;
		/* What the driver answers; cuBLAS probes sizes upwards
		 * until it gets this. */
		if (q->occupancy.cluster[i] > OCC_MAX_CLUSTER_DIM)
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	}
	/* All three or none (then the function's own, if it has one). */
	if ((q->occupancy.cluster[0] || q->occupancy.cluster[1] || q->occupancy.cluster[2]) &&
	    !(q->occupancy.cluster[0] && q->occupancy.cluster[1] && q->occupancy.cluster[2]))
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	f = func_lookup(o->c, q->occupancy.func);
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct occupancy_req)->func = f;
	return CUDA_SUCCESS;
}

enum op_status op_occupancy_issue(struct op_ctx *o)
{
	int value = 0;

	o->res = o->d->backend->occupancy(o->d, o->c, op_req(o, struct occupancy_req)->func,
					  o->sqe, &value);
	o->aux[0] = (uint64_t)value;
	return OP_COMPLETE;
}
