// SPDX-License-Identifier: MIT
/*
 * The kernels of reserveprobe: one that calls printf (built with
 * -DRESERVE_PRINTF) or one that calls malloc, each alone in its cubin, so
 * that loading it shows what the device runtime reserves for that call.
 */
#include <cstdio>

#ifdef RESERVE_PRINTF
extern "C" __global__ void printfk(int n)
{
	if (n == 12345)
		printf("%d\n", n);
}
#else
extern "C" __global__ void heapuse(int *out, unsigned long long n)
{
	char *p = (char *)malloc(n);

	if (out)
		out[0] = p != 0;
	free(p);
}
#endif
