// SPDX-License-Identifier: MIT
/*
 * "Page-locked" host memory: cuMemHostAlloc, cuMemAllocHost, cuMemFreeHost,
 * cuMemHostGetFlags, cuMemHostRegister, cuMemHostUnregister (cudart's
 * cudaMallocHost, cudaHostAlloc, cudaFreeHost, cudaHostRegister).
 *
 * Pinning exists so the GPU can DMA from host memory. Here the GPU never
 * touches this process's memory: every copy is staged through the shared
 * data area, whatever the host buffer is. So pinned memory is ordinary,
 * page-aligned memory that the shim remembers (to free it, report its flags
 * and refuse to free strangers), and registering a range only records it.
 * What cannot be honoured is a device mapping of host memory
 * (CU_MEMHOSTALLOC_DEVICEMAP, CU_MEMHOSTREGISTER_DEVICEMAP, IOMEMORY):
 * CUDA_ERROR_NOT_SUPPORTED.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

struct host_range {
	char *base;
	size_t len;
	unsigned int flags;
	bool allocated;		/* ours to free; else registered */
};

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_range *ranges;
static size_t nranges, cap;

/* The range starting at p (exact) or, if !exact, containing p. */
static struct host_range *find(const void *p, bool exact)
{
	const char *c = p;
	size_t i;

	for (i = 0; i < nranges; i++) {
		if (c == ranges[i].base)
			return &ranges[i];
		if (!exact && c > ranges[i].base && c < ranges[i].base + ranges[i].len)
			return &ranges[i];
	}
	return NULL;
}

static bool overlaps(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < nranges; i++)
		if (p < ranges[i].base + ranges[i].len && ranges[i].base < p + len)
			return true;
	return false;
}

static int add(void *p, size_t len, unsigned int flags, bool allocated)
{
	if (nranges == cap) {
		size_t n = cap ? cap * 2 : 16;
		struct host_range *nr = realloc(ranges, n * sizeof(*nr));

		if (!nr)
			return -1;
		ranges = nr;
		cap = n;
	}
	ranges[nranges].base = p;
	ranges[nranges].len = len;
	ranges[nranges].flags = flags;
	ranges[nranges].allocated = allocated;
	nranges++;
	return 0;
}

static void drop(struct host_range *r)
{
	*r = ranges[--nranges];
}

SHIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				   CU_MEMHOSTALLOC_WRITECOMBINED;
	long page = sysconf(_SC_PAGESIZE);
	struct shim_ctx *sc;
	void *p = NULL;
	CUresult r;

	if (!pp || !bytesize || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	if (flags & CU_MEMHOSTALLOC_DEVICEMAP)
		return CUDA_ERROR_NOT_SUPPORTED;	/* the device cannot reach it */
	if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytesize))
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&host_lock);
	if (add(p, bytesize, flags, true)) {
		pthread_mutex_unlock(&host_lock);
		free(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pthread_mutex_unlock(&host_lock);
	*pp = p;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

SHIM_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

SHIM_EXPORT CUresult cuMemFreeHost(void *p)
{
	struct host_range *r;
	void *base = NULL;

	pthread_mutex_lock(&host_lock);
	r = find(p, true);
	if (r && r->allocated) {
		base = r->base;
		drop(r);
	}
	pthread_mutex_unlock(&host_lock);
	if (!base)
		return CUDA_ERROR_INVALID_VALUE;
	free(base);
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	struct host_range *r;

	if (!pFlags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&host_lock);
	r = find(p, false);
	if (r)
		*pFlags = r->flags;
	pthread_mutex_unlock(&host_lock);
	SHIM_LOCAL();
	return r ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SHIM_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
				   CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
	struct shim_ctx *sc;
	CUresult r;

	if (!p || !bytesize || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	if (flags & (CU_MEMHOSTREGISTER_DEVICEMAP | CU_MEMHOSTREGISTER_IOMEMORY))
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_mutex_lock(&host_lock);
	if (overlaps(p, bytesize))
		r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	else if (add(p, bytesize, flags, false))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_unlock(&host_lock);
	SHIM_LOCAL();
	return r;
}

SHIM_EXPORT CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int flags)
{
	return cuMemHostRegister_v2(p, bytesize, flags);
}

SHIM_EXPORT CUresult cuMemHostUnregister(void *p)
{
	struct host_range *r;
	bool ok;

	pthread_mutex_lock(&host_lock);
	r = find(p, true);
	ok = r && !r->allocated;
	if (ok)
		drop(r);
	pthread_mutex_unlock(&host_lock);
	SHIM_LOCAL();
	return ok ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}
