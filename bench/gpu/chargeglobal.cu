// SPDX-License-Identifier: MIT
/*
 * The module chargecheck loads: one 3 MiB __device__ array (zero, so the
 * image stays small) and a kernel that uses it, so that the driver keeps
 * it. What the device spends on loading it is compared with what axond
 * charges the client for it.
 */
#define CHARGEGLOBAL_BYTES (3 << 20)

__device__ char g_three_mib[CHARGEGLOBAL_BYTES];

extern "C" __global__ void touch(int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		g_three_mib[i % CHARGEGLOBAL_BYTES]++;
}
