// SPDX-License-Identifier: MIT
/* Cluster occupancy queries in the cuda backend (occupancy.h). */
#include <string.h>

#include "../axond.h"
#include "context.h"
#include "occupancy.h"
#include "vendor.h"

/*
 * AXON_OP_OCCUPANCY: the driver's own answer, in the context the function
 * was loaded in. The grid matters only for its divisibility by the cluster.
 */
int cuda_occupancy(struct axond *d, struct client *c, struct func *f,
			  const struct axon_sqe *q, int *value)
{
	CUlaunchAttribute attr;
	CUlaunchConfig cfg;
	CUresult r;

	(void)d;
	memset(&cfg, 0, sizeof(cfg));
	memset(&attr, 0, sizeof(attr));
	cfg.gridDimX = q->occupancy.grid[0];
	cfg.gridDimY = q->occupancy.grid[1];
	cfg.gridDimZ = q->occupancy.grid[2];
	cfg.blockDimX = q->occupancy.block[0];
	cfg.blockDimY = q->occupancy.block[1];
	cfg.blockDimZ = q->occupancy.block[2];
	cfg.sharedMemBytes = q->occupancy.shared_bytes;
	if (q->occupancy.cluster[0] || q->occupancy.cluster[1] || q->occupancy.cluster[2]) {
		attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		attr.value.clusterDim.x = q->occupancy.cluster[0] ? q->occupancy.cluster[0] : 1;
		attr.value.clusterDim.y = q->occupancy.cluster[1] ? q->occupancy.cluster[1] : 1;
		attr.value.clusterDim.z = q->occupancy.cluster[2] ? q->occupancy.cluster[2] : 1;
		cfg.attrs = &attr;
		cfg.numAttrs = 1;
	}
	r = cuda_enter(c, f->module->ctx->device);
	if (!r) {
		if (q->occupancy.query == AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE)
			r = vd.cuOccupancyMaxPotentialClusterSize(value,
					(CUfunction)f->backend_priv, &cfg);
		else
			r = vd.cuOccupancyMaxActiveClusters(value, (CUfunction)f->backend_priv, &cfg);
	}
	cuda_leave();
	return r;
}
