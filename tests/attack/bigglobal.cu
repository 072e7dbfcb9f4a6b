// SPDX-License-Identifier: MIT
/*
 * A module with one large zero-initialised global (attack-globals): the
 * image stays small (the global is .nv.global, no bits in the file), the
 * memory it asks for on load does not. fill() is the built-in sim kernel of
 * that name (tests/sim-kernels/kernels.cu), so the image parses as a test
 * image; the global only has to exist.
 */
#define BIGGLOBAL_BYTES (48 << 20)

__device__ char g_huge[BIGGLOBAL_BYTES];

extern "C" __global__ void fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v + g_huge[i % BIGGLOBAL_BYTES];
}
