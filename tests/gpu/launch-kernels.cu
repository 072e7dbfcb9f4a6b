// SPDX-License-Identifier: MIT
/*
 * Kernels for tests/gpu/drv-launch.c, built for sm_90 only (clusters need
 * it) into $(BUILD)/tests/gpu/launch-kernels.cubin. None is in the sim's
 * built-in set: the program runs on a GPU, natively and through axon.
 */
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

/*
 * No __cluster_dims__: whether blocks form clusters is the launch's
 * choice. Each block reports its rank in its cluster, the cluster's size,
 * and a value read from the next block's shared memory through distributed
 * shared memory (only possible inside a real cluster).
 */
extern "C" __global__ void cluster_probe(unsigned int *out)
{
	cg::cluster_group cl = cg::this_cluster();
	__shared__ unsigned int v;
	unsigned int peer = 0;

	if (threadIdx.x == 0)
		v = blockIdx.x * 10 + 1;
	cl.sync();
	if (cl.num_blocks() > 1)
		peer = *cl.map_shared_rank(&v, (cl.block_rank() + 1) % cl.num_blocks());
	cl.sync();
	if (threadIdx.x == 0) {
		out[blockIdx.x * 3 + 0] = cl.block_rank();
		out[blockIdx.x * 3 + 1] = cl.num_blocks();
		out[blockIdx.x * 3 + 2] = peer;
	}
}

/* Fills n floats of dynamic shared memory, then sums them in order. */
extern "C" __global__ void smem_sum(float *out, int n)
{
	extern __shared__ float buf[];
	int i;

	for (i = threadIdx.x; i < n; i += blockDim.x)
		buf[i] = (float)(i % 97);
	__syncthreads();
	if (threadIdx.x == 0) {
		float s = 0.0f;

		for (i = 0; i < n; i++)
			s += buf[i];
		out[blockIdx.x] = s;
	}
}

extern "C" __global__ void add_const(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] += v;
}
