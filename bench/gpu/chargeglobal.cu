// SPDX-License-Identifier: MIT
/*
 * The module chargecheck loads: one 3 MiB __device__ array (zero, so the
 * image stays small) and a kernel that uses it, so that the driver keeps
 * it. What the device spends on loading it is compared with what axond
 * charges the client for it. Also the kernels of the local-memory rows: one
 * with a 16 KiB frame (its launch grows the stack) and one that calls
 * malloc (its first launch reserves the heap).
 */
#define CHARGEGLOBAL_BYTES (3 << 20)

__device__ char g_three_mib[CHARGEGLOBAL_BYTES];

extern "C" __global__ void touch(int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		g_three_mib[i % CHARGEGLOBAL_BYTES]++;
}

extern "C" __global__ void frame16k(int *out, int n)
{
	volatile char buf[16384];

	for (int i = 0; i < 16384; i += 64)
		buf[i] = (char)(i + n);
	if (out)
		out[threadIdx.x] = buf[(n * 64) % 16384];
}

extern "C" __global__ void heapuse(int *out, unsigned long long n)
{
	char *p = (char *)malloc(n);

	if (out)
		out[0] = p != 0;
	free(p);
}
