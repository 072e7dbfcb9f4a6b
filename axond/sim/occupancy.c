// SPDX-License-Identifier: MIT
/*
 * Cluster occupancy on the sim device. The sim has no GPCs; it models its
 * SMs as one pool: a cluster of n blocks needs n blocks' worth of room, and
 * as many clusters fit as the pool holds. Blocks per SM are limited by
 * threads (the device's maximum per SM, warps rounded up), by 32 blocks and
 * by shared memory, as the occupancy calculator does for the real device.
 * Portable cluster sizes go up to 8 blocks; 16 when the function allows
 * non-portable sizes, as on Hopper.
 */
#include <cuda.h>
#include "sim.h"
#include "../ops/ops.h"

static int64_t fattr(struct axond *d, struct func *f, int attr)
{
	int64_t v = 0;

	if (d->backend->func_get_attr(d, f, attr, &v))
		return 0;
	return v;
}

int sim_occupancy(struct axond *d, struct client *c, struct func *f,
		  const struct axon_sqe *q, int *value)
{
	const struct axon_device_info *dev = &d->info->device[f->module->ctx->device];
	int64_t threads = (int64_t)q->occupancy.block[0] * q->occupancy.block[1] *
			  q->occupancy.block[2];
	int64_t warps = (threads + 31) / 32, per_sm, by_smem, cluster, limit;
	int64_t smem = (int64_t)q->occupancy.shared_bytes +
		       fattr(d, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
	int64_t nonportable = fattr(d, f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED);

	(void)c;
	if (threads > fattr(d, f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK))
		return CUDA_ERROR_INVALID_VALUE;
	limit = nonportable ? 16 : 8;
	if (q->occupancy.query == AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE) {
		*value = (int)limit;
		return 0;
	}
	/* "Without required sizes, the cluster size must be specified in
	 * config, else the function will return an error" (driver API docs). */
	if (!q->occupancy.cluster[0] &&
	    !fattr(d, f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH))
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	cluster = (int64_t)(q->occupancy.cluster[0] ? q->occupancy.cluster[0] : 1) *
		  (q->occupancy.cluster[1] ? q->occupancy.cluster[1] : 1) *
		  (q->occupancy.cluster[2] ? q->occupancy.cluster[2] : 1);
	if (cluster > limit)
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	for (int i = 0; i < 3; i++)
		if (q->occupancy.cluster[i] && q->occupancy.grid[i] % q->occupancy.cluster[i])
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	per_sm = dev->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] / (warps * 32);
	if (per_sm > 32)
		per_sm = 32;
	if (smem > 0) {
		by_smem = dev->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] /
			  (smem + dev->attr[CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK]);
		if (by_smem < per_sm)
			per_sm = by_smem;
	}
	*value = (int)(per_sm * dev->attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] / cluster);
	return 0;
}
