// SPDX-License-Identifier: MIT
/*
 * Cluster occupancy on the sim device, modelled on what the H200's driver
 * (580.159.04) answers. The sim has no GPCs; it models its SMs as one
 * pool: a cluster of n blocks needs n blocks' worth of room, and as many
 * clusters fit as the pool holds. Blocks per SM are limited by threads
 * (the device's maximum per SM), by shared memory, as the occupancy
 * calculator does, and by 8, the most the H200 answers for blocks of 32 to
 * 256 threads. Portable cluster sizes go up to 8 blocks; 16 when the
 * function allows non-portable sizes, as on Hopper, where a larger cluster
 * is no error but fits nowhere (0; the H200 still places clusters of 17).
 * A launch that cannot run at all (more threads than the function takes,
 * more dynamic shared memory than it opted in to) answers 0, and so does a
 * function with neither a required cluster size nor one in the config.
 * The generic checks (ops/occupancy.c) have run: dimensions, a cluster
 * dividing the grid.
 */
#include <cuda.h>
#include "sim.h"
#include "../ops/ops.h"

#define SIM_CLUSTER_BLOCKS_PER_SM	8
#define SIM_PORTABLE_CLUSTER		8
#define SIM_NONPORTABLE_CLUSTER		16

static int64_t fattr(struct axond *d, struct func *f, int attr)
{
	int64_t v = 0;

	if (d->backend->func_get_attr(d, f, attr, &v))
		return 0;
	return v;
}

/* Blocks of this launch one SM holds (0: the launch cannot run). */
static int64_t blocks_per_sm(struct axond *d, struct func *f, const struct axon_device_info *dev,
			     const struct axon_sqe *q)
{
	int64_t threads = (int64_t)q->occupancy.block[0] * q->occupancy.block[1] *
			  q->occupancy.block[2];
	int64_t warps = (threads + 31) / 32, per_sm, by_smem;
	int64_t smem = (int64_t)q->occupancy.shared_bytes +
		       fattr(d, f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);

	if (threads > fattr(d, f, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) ||
	    q->occupancy.shared_bytes > fattr(d, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))
		return 0;
	per_sm = dev->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR] / (warps * 32);
	if (per_sm > SIM_CLUSTER_BLOCKS_PER_SM)
		per_sm = SIM_CLUSTER_BLOCKS_PER_SM;
	if (smem > 0) {
		by_smem = dev->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR] /
			  (smem + dev->attr[CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK]);
		if (by_smem < per_sm)
			per_sm = by_smem;
	}
	return per_sm;
}

int sim_occupancy(struct axond *d, struct client *c, struct func *f,
		  const struct axon_sqe *q, int *value)
{
	const struct axon_device_info *dev = &d->info->device[f->module->ctx->device];
	int64_t per_sm = blocks_per_sm(d, f, dev, q), limit, cluster = 1;
	int64_t req[3];
	bool given = q->occupancy.cluster[0] != 0;	/* all three or none */
	int i;

	(void)c;
	limit = fattr(d, f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) ?
		SIM_NONPORTABLE_CLUSTER : SIM_PORTABLE_CLUSTER;
	req[0] = fattr(d, f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH);
	req[1] = fattr(d, f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT);
	req[2] = fattr(d, f, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH);
	for (i = 0; i < 3; i++) {
		int64_t dim = given ? q->occupancy.cluster[i] : req[i] ? req[i] : 1;

		/* A required size must be the one asked for. */
		if (given && req[0] && q->occupancy.cluster[i] != (req[i] ? req[i] : 1))
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		cluster *= dim;
	}
	if (cluster > limit) {
		if (limit == SIM_PORTABLE_CLUSTER)
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		*value = 0;
		return 0;
	}
	if (q->occupancy.query == AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE) {
		*value = per_sm ? (int)limit : 0;
		return 0;
	}
	if (!given && !req[0]) {
		*value = 0;
		return 0;
	}
	*value = (int)(per_sm * dev->attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT] / cluster);
	return 0;
}
