/* SPDX-License-Identifier: MIT */
/*
 * procaddr.c - cuGetProcAddress (CUDA 11.3's form) and cuGetProcAddress_v2
 * (CUDA 12.0's), over the table gen/gen_shim.py derives from cuda.h and
 * cudaTypedefs.h ($(BUILD)/gen/shim_proctable.c).
 *
 * A request names a base symbol ("cuMemAlloc"), a CUDA version and flags.
 * The answer is the newest variant of that base whose version is at or
 * below the one asked for. With CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
 * only the per-thread variants (_ptds, _ptsz) are searched if the base has
 * any -- no falling back to the legacy ones: cuLaunchKernel at 6050 is
 * VERSION_NOT_SUFFICIENT, as cuLaunchKernel_ptsz came with 7.0 -- and the
 * default ones if it has none. The pointers are the addresses of this
 * library's own exported symbols: a real implementation where the shim has
 * one, else the weak stub.
 *
 * Semantics are those measured on NVIDIA's driver 580.159.04 (CUDA 13.0):
 *   - flag bits other than LEGACY_STREAM | PER_THREAD_DEFAULT_STREAM, or a
 *     version above the one the table was made for: CUDA_ERROR_INVALID_VALUE,
 *     symbolStatus untouched;
 *   - LEGACY_STREAM and DEFAULT (0) search the same way; when both LEGACY and
 *     PER_THREAD are set, PER_THREAD wins;
 *   - _v2, unknown symbol or version older than the symbol's first variant:
 *     CUDA_SUCCESS, *pfn = NULL, symbolStatus SYMBOL_NOT_FOUND or
 *     VERSION_NOT_SUFFICIENT (the 4-argument form returns
 *     CUDA_ERROR_NOT_FOUND in both cases instead);
 *   - a negative version compares as unsigned, i.e. gets the newest variant
 *     (the driver does this; kept for fidelity);
 *   - no cuInit needed.
 * Where the driver crashes (NULL symbol or pfn) this returns
 * CUDA_ERROR_INVALID_VALUE; where it leaves *pfn untouched on failure this
 * sets it to NULL.
 *
 * No initialisation: the table is const data resolved by the dynamic loader.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <stddef.h>
#include <string.h>

#include "shim_proctable.h"
#include "shim-internal-gen.h"

#define PROC_FLAGS_KNOWN \
	((cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | \
		      CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))

static const struct axon_proc_base *find_base(const char *symbol)
{
	size_t lo = 0, hi = AXON_PROC_NBASES;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(symbol, axon_proc_strtab + axon_proc_bases[mid].name);

		if (c == 0)
			return &axon_proc_bases[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* the newest of @n variants (ascending versions) at or below @version */
static const struct axon_proc_variant *
newest(const struct axon_proc_variant *v, unsigned int n, unsigned int version)
{
	const struct axon_proc_variant *best = NULL;

	for (unsigned int i = 0; i < n; i++)
		if ((unsigned int)v[i].version <= version)
			best = &v[i];
	return best;
}

/*
 * The search itself: CUDA_SUCCESS with *pfn set, CUDA_ERROR_NOT_FOUND with
 * *status saying why, or CUDA_ERROR_INVALID_VALUE.
 */
static CUresult lookup(const char *symbol, void **pfn, int cudaVersion,
		       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	const struct axon_proc_base *b;
	const struct axon_proc_variant *v = NULL;

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (flags & ~PROC_FLAGS_KNOWN)
		return CUDA_ERROR_INVALID_VALUE;
	if (cudaVersion > AXON_PROC_CUDA_VERSION)
		return CUDA_ERROR_INVALID_VALUE;

	b = find_base(symbol);
	if (!b) {
		*status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
		return CUDA_ERROR_NOT_FOUND;
	}
	if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && b->npt)
		v = newest(&axon_proc_variants[b->first + b->ndefault], b->npt,
			   (unsigned int)cudaVersion);
	else
		v = newest(&axon_proc_variants[b->first], b->ndefault,
			   (unsigned int)cudaVersion);
	if (!v) {
		*status = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
		return CUDA_ERROR_NOT_FOUND;
	}
	*pfn = (void *)v->fn;
	*status = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}

__attribute__((visibility("default"))) CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
				     cuuint64_t flags,
				     CUdriverProcAddressQueryResult *symbolStatus)
{
	CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
	CUresult r = lookup(symbol, pfn, cudaVersion, flags, &status);

	if (r == CUDA_ERROR_INVALID_VALUE)
		return r;
	if (symbolStatus)
		*symbolStatus = status;
	return CUDA_SUCCESS;	/* found or not: status says which */
}

__attribute__((visibility("default"))) CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags)
{
	CUdriverProcAddressQueryResult status;

	return lookup(symbol, pfn, cudaVersion, flags, &status);
}
