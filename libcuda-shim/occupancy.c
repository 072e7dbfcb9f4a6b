// SPDX-License-Identifier: MIT
/*
 * Occupancy (cuOccupancy*): computed in the client with the toolkit's own
 * occupancy calculator, cuda_occupancy.h (its C API), from the device's
 * attributes on the info page and the function's attributes (asked from
 * the daemon, which has the real ones). cudart's cudaOccupancy* and
 * libraries like CUB and Thrust size their grids with these.
 *
 * Cluster occupancy (cuOccupancyMaxPotentialClusterSize,
 * cuOccupancyMaxActiveClusters) is asked from the daemon (AXON_OP_OCCUPANCY)
 * with the config's cluster dimensions: the calculator does not model
 * clusters, and how many fit depends on how the device groups its SMs,
 * which only the driver knows.
 */
#include <string.h>
#include <cuda_occupancy.h>

#include "shim.h"

/* The device of the current context, as the calculator describes one. */
static CUresult device_prop(cudaOccDeviceProp *p)
{
	const struct axon_device_info *d;
	struct shim_ctx *sc;
	CUresult r = shim_get_ctx(&sc);

	if (r)
		return r;
	d = &shim.ring.info->device[sc->device];
	p->computeMajor = (int)d->cc_major;
	p->computeMinor = (int)d->cc_minor;
	p->maxThreadsPerBlock = d->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
	p->maxThreadsPerMultiprocessor = d->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR];
	p->regsPerBlock = d->attr[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK];
	p->regsPerMultiprocessor = d->attr[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR];
	p->warpSize = d->attr[CU_DEVICE_ATTRIBUTE_WARP_SIZE];
	p->sharedMemPerBlock = (size_t)d->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK];
	p->sharedMemPerMultiprocessor =
		(size_t)d->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR];
	p->numSms = d->attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
	p->sharedMemPerBlockOptin =
		(size_t)d->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
	p->reservedSharedMemPerBlock =
		(size_t)d->attr[CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK];
	return CUDA_SUCCESS;
}

/*
 * The function as the calculator describes one. A function compiled for
 * the L1-caching global loads (CACHE_MODE_CA) wants partitioned global
 * caching where the device has it; CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE
 * says it cannot be turned off to fit more blocks.
 */
static CUresult func_attrs(CUfunction f, unsigned int flags, cudaOccFuncAttributes *a)
{
	int threads, regs, shared, dyn, ca = 0;
	CUresult r;

	if (flags & ~(unsigned int)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
	if (!r)
		r = cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
	if (!r)
		r = cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
	if (!r)
		r = cuFuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
	if (r)
		return r;
	/* Not every backend knows it; no answer means not compiled for it. */
	if (cuFuncGetAttribute(&ca, CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, f))
		ca = 0;
	a->maxThreadsPerBlock = threads;
	a->numRegs = regs;
	a->sharedSizeBytes = (size_t)shared;
	a->partitionedGCConfig = !ca ? PARTITIONED_GC_OFF :
				 (flags & CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE) ?
				 PARTITIONED_GC_ON_STRICT : PARTITIONED_GC_ON;
	/* MAX_DYNAMIC_SHARED_SIZE_BYTES is the function's opted-in limit. */
	a->shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
	a->maxDynamicSharedSizeBytes = (size_t)dyn;
	a->numBlockBarriers = 1;	/* what the calculator assumes by default */
	return CUDA_SUCCESS;
}

static CUresult occ_status(cudaOccError e)
{
	return e == CUDA_OCC_SUCCESS ? CUDA_SUCCESS
	       : e == CUDA_OCC_ERROR_UNKNOWN_DEVICE ? CUDA_ERROR_NOT_SUPPORTED
	       : CUDA_ERROR_INVALID_VALUE;
}

/* What the calculator is given: the current device, f's attributes, the
 * default cache and carveout configuration. */
struct occ_in {
	cudaOccDeviceProp prop;
	cudaOccFuncAttributes attr;
	cudaOccDeviceState state;
};

static CUresult occ_inputs(CUfunction f, unsigned int flags, struct occ_in *in)
{
	CUresult r;

	*in = (struct occ_in){ .state = { .cacheConfig = CACHE_PREFER_NONE,
					  .carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT } };
	r = device_prop(&in->prop);
	return r ? r : func_attrs(f, flags, &in->attr);
}

SHIM_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
	int *numBlocks, CUfunction f, int blockSize, size_t dynamicSMemSize, unsigned int flags)
{
	struct occ_in in;
	cudaOccResult res = { 0 };
	CUresult r;

	if (!numBlocks)
		return CUDA_ERROR_INVALID_VALUE;
	r = occ_inputs(f, flags, &in);
	if (r)
		return r;
	r = occ_status(cudaOccMaxActiveBlocksPerMultiprocessor(&res, &in.prop, &in.attr, &in.state,
								 blockSize, dynamicSMemSize));
	if (!r)
		*numBlocks = res.activeBlocksPerMultiprocessor;
	return r;
}

SHIM_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction f,
								  int blockSize,
								  size_t dynamicSMemSize)
{
	return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, f, blockSize,
								    dynamicSMemSize,
								    CU_OCCUPANCY_DEFAULT);
}

SHIM_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(
	int *minGridSize, int *blockSize, CUfunction f, CUoccupancyB2DSize b2d,
	size_t dynamicSMemSize, int blockSizeLimit, unsigned int flags)
{
	struct occ_in in;
	CUresult r;

	if (!minGridSize || !blockSize || blockSizeLimit < 0)
		return CUDA_ERROR_INVALID_VALUE;
	r = occ_inputs(f, flags, &in);
	if (r)
		return r;
	/* The calculator searches up to the function's own limit. */
	if (blockSizeLimit > 0 && blockSizeLimit < in.attr.maxThreadsPerBlock)
		in.attr.maxThreadsPerBlock = blockSizeLimit;
	return occ_status(cudaOccMaxPotentialOccupancyBlockSize(minGridSize, blockSize, &in.prop,
								  &in.attr, &in.state, b2d,
								  dynamicSMemSize));
}

SHIM_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
						      CUfunction f, CUoccupancyB2DSize b2d,
						      size_t dynamicSMemSize, int blockSizeLimit)
{
	return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, f, b2d,
							 dynamicSMemSize, blockSizeLimit,
							 CU_OCCUPANCY_DEFAULT);
}

SHIM_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
							     CUfunction f, int numBlocks,
							     int blockSize)
{
	struct occ_in in;
	CUresult r;

	if (!dynamicSmemSize)
		return CUDA_ERROR_INVALID_VALUE;
	r = occ_inputs(f, CU_OCCUPANCY_DEFAULT, &in);
	if (r)
		return r;
	return occ_status(cudaOccAvailableDynamicSMemPerBlock(dynamicSmemSize, &in.prop, &in.attr,
								&in.state, numBlocks, blockSize));
}

/* ---- cluster occupancy ------------------------------------------------- */

/* A CUfunction, or a CUkernel (accepted where a CUfunction is, as CUDA
 * does) resolved to its function in the current context. */
static CUresult occ_function(CUfunction f, CUfunction *out)
{
	bool known;

	shim_lock();
	known = shim_func_of(f) != NULL;
	shim_unlock();
	if (known) {
		*out = f;
		return CUDA_SUCCESS;
	}
	return cuKernelGetFunction(out, (CUkernel)f) ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
}

/*
 * The config's attributes as the driver reads them for these queries
 * (measured on the H200, 580.159.04): an id the driver does not know is
 * INVALID_VALUE, the last CLUSTER_DIMENSION is the one that counts, every
 * other attribute (a preferred cluster size included) changes nothing.
 */
static CUresult config_cluster(const CUlaunchConfig *cfg, unsigned int c[3])
{
	unsigned int i;

	c[0] = c[1] = c[2] = 0;
	for (i = 0; i < cfg->numAttrs; i++) {
		CUlaunchAttributeID id = cfg->attrs[i].id;

		if ((unsigned int)id > CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING ||
		    (unsigned int)id == CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT + 1)
			return CUDA_ERROR_INVALID_VALUE;
		if (id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
			continue;
		c[0] = cfg->attrs[i].value.clusterDim.x;
		c[1] = cfg->attrs[i].value.clusterDim.y;
		c[2] = cfg->attrs[i].value.clusterDim.z;
	}
	/* Some dimensions 0 (all three 0: no cluster given) comes first. */
	if ((c[0] || c[1] || c[2]) && !(c[0] && c[1] && c[2]))
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	/* The op carries a byte a dimension: a cluster of more than 255
	 * blocks in one dimension is refused as too large for the function
	 * (the driver answers 0 clusters when non-portable sizes are
	 * allowed). */
	if (c[0] > 0xff || c[1] > 0xff || c[2] > 0xff)
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	return CUDA_SUCCESS;
}

static CUresult cluster_query(int *value, CUfunction f, const CUlaunchConfig *cfg,
			      unsigned int query)
{
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe;
	unsigned int i, c[3];
	uint32_t grid[3];
	uint16_t block[3];
	uint8_t cluster[3];
	CUresult r;

	if (!value || !f || !cfg || (cfg->numAttrs && !cfg->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_ensure_init();
	if (r)
		return r;
	r = occ_function(f, &f);
	if (r)
		return r;
	r = config_cluster(cfg, c);
	if (r)
		return r;
	/* A block the wire cannot carry has more threads than any function
	 * takes: no cluster of it fits (the driver's 0 for 1025 threads). */
	if (cfg->blockDimX > 0xffff || cfg->blockDimY > 0xffff || cfg->blockDimZ > 0xffff) {
		if (!cfg->gridDimX || !cfg->gridDimY || !cfg->gridDimZ)
			return CUDA_ERROR_INVALID_VALUE;
		*value = 0;
		return CUDA_SUCCESS;
	}
	grid[0] = cfg->gridDimX;
	grid[1] = cfg->gridDimY;
	grid[2] = cfg->gridDimZ;
	block[0] = (uint16_t)cfg->blockDimX;
	block[1] = (uint16_t)cfg->blockDimY;
	block[2] = (uint16_t)cfg->blockDimZ;
	shim_lock();
	if (!shim_func_of(f)) {
		shim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	sqe = shim_sqe();
	if (!sqe) {
		shim_unlock();
		return shim_gone_error();
	}
	for (i = 0; i < 3; i++)
		cluster[i] = (uint8_t)c[i];
	axon_prep_occupancy(sqe, (uint64_t)(uintptr_t)f, grid, block, cluster, (uint8_t)query,
			    cfg->sharedMemBytes);
	r = shim_sync_op(sqe, &w);
	if (!r)
		*value = (int)(int64_t)w.aux[0];
	shim_unlock();
	return r;
}

SHIM_EXPORT CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
						  const CUlaunchConfig *config)
{
	return cluster_query(numClusters, func, config, AXON_OCC_MAX_ACTIVE_CLUSTERS);
}

SHIM_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
							const CUlaunchConfig *config)
{
	return cluster_query(clusterSize, func, config, AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE);
}
