// SPDX-License-Identifier: MIT
/*
 * Stream-ordered allocation through the CUDA runtime (cudaMallocAsync and
 * memory pools), which cudart turns into the driver's cuMemAllocAsync and
 * cuMemPool* calls: the path PyTorch takes with
 * PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync. No kernels (the sim runs
 * it too); the output is the same natively and through axon.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rt-gpu.h"

#define MiB (1024 * 1024ULL)

static uint64_t attr(cudaMemPool_t p, cudaMemPoolAttr a)
{
	uint64_t v = 0;

	RT_OK(cudaMemPoolGetAttribute(p, a, &v));
	return v;
}

int main(void)
{
	static unsigned char host[4 * MiB];
	cudaMemPool_t dflt, pool;
	cudaMemPoolProps props;
	cudaStream_t s;
	void *a, *b, *c;
	uint64_t max = UINT64_MAX;
	int dev = 0, supported = 0;
	size_t i;

	RT_OK(cudaSetDevice(dev));
	RT_OK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
	printf("memory pools supported: %d\n", supported);
	RT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	RT_OK(cudaDeviceGetDefaultMemPool(&dflt, dev));

	/* What PyTorch's cudaMallocAsync backend does first. */
	RT_OK(cudaMemPoolSetAttribute(dflt, cudaMemPoolAttrReleaseThreshold, &max));

	RT_OK(cudaMallocAsync(&a, 4 * MiB, s));
	RT_OK(cudaMemsetAsync(a, 0x5a, 4 * MiB, s));
	RT_OK(cudaMallocAsync(&b, 4 * MiB, s));
	RT_OK(cudaMemcpyAsync(b, a, 4 * MiB, cudaMemcpyDeviceToDevice, s));
	RT_OK(cudaMemcpyAsync(host, b, 4 * MiB, cudaMemcpyDeviceToHost, s));
	RT_OK(cudaStreamSynchronize(s));
	for (i = 0; i < sizeof(host); i++)
		if (host[i] != 0x5a)
			break;
	RT_CHECK(i == sizeof(host), "byte %zu is 0x%x", i, host[i]);
	printf("stream-ordered memset and copies: %s\n", i == sizeof(host) ? "ok" : "wrong");
	printf("used: %llu MiB\n",
	       (unsigned long long)(attr(dflt, cudaMemPoolAttrUsedMemCurrent) / MiB));

	RT_OK(cudaFreeAsync(a, s));
	RT_OK(cudaMallocAsync(&c, 4 * MiB, s));
	printf("same-stream reuse: %s\n", c == a ? "yes" : "no");
	RT_OK(cudaFreeAsync(b, s));
	RT_OK(cudaFreeAsync(c, s));
	RT_OK(cudaStreamSynchronize(s));
	printf("kept under threshold max: %s\n",
	       attr(dflt, cudaMemPoolAttrReservedMemCurrent) >= 8 * MiB ? "yes" : "no");
	RT_OK(cudaMemPoolTrimTo(dflt, 0));
	printf("after trim: reserved %llu\n",
	       (unsigned long long)attr(dflt, cudaMemPoolAttrReservedMemCurrent));

	memset(&props, 0, sizeof(props));
	props.allocType = cudaMemAllocationTypePinned;
	props.location.type = cudaMemLocationTypeDevice;
	props.location.id = dev;
	RT_OK(cudaMemPoolCreate(&pool, &props));
	RT_OK(cudaMallocFromPoolAsync(&a, MiB, pool, s));
	RT_OK(cudaMemsetAsync(a, 1, MiB, s));
	printf("created pool in use: %llu MiB\n",
	       (unsigned long long)(attr(pool, cudaMemPoolAttrUsedMemCurrent) / MiB));
	RT_OK(cudaFreeAsync(a, s));
	RT_OK(cudaStreamSynchronize(s));
	RT_OK(cudaMemPoolDestroy(pool));

	/* A plain cudaFree of stream-ordered memory. */
	RT_OK(cudaMallocAsync(&a, MiB, s));
	RT_OK(cudaStreamSynchronize(s));
	RT_OK(cudaFree(a));
	/* Not the pool's USED_MEM_CURRENT here: the driver still counts the
	 * block for a while after cudaFree (1 MiB on the H200), axon not. */
	printf("plain cudaFree of stream-ordered memory: ok\n");
	RT_OK(cudaStreamDestroy(s));
	return rt_done();
}
