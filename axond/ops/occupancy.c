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

struct occupancy_req {
	struct func *func;
};

/*
 * The checks the driver makes whatever the function, in its order
 * (measured on the H200, 580.159.04): a cluster with some dimensions 0
 * (all three 0 is none), then a grid or block dimension of 0, then a grid
 * that is not made of whole clusters. A block larger than the function
 * takes, too much shared memory, a cluster too large for any device: the
 * backend's answer (the driver says 0 clusters, or INVALID_CLUSTER_SIZE
 * when the size is not allowed for the function).
 */
int32_t op_occupancy_prep(struct op_ctx *o)
{
	const struct axon_sqe *q = o->sqe;
	const uint8_t *cl = q->occupancy.cluster;
	struct func *f;
	int i;

	if (q->occupancy.resv0 || q->occupancy.resv1 ||
	    q->occupancy.query > AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	if ((cl[0] || cl[1] || cl[2]) && !(cl[0] && cl[1] && cl[2]))
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	for (i = 0; i < 3; i++)
		if (!q->occupancy.block[i] || !q->occupancy.grid[i])
			return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < 3; i++)
		if (cl[i] && q->occupancy.grid[i] % cl[i])
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
