// SPDX-License-Identifier: MIT
/*
 * The 2D memset forms beside copy.c's cuMemsetD2D*_v2: the asynchronous
 * ones (cuBLAS's batched routines clear their matrices with
 * cuMemsetD2D8Async) and the per-thread-default-stream names. Each is the
 * one deferred MEMSET that copy.c's forms send (shim_memset_async); the
 * synchronous ones then wait for the stream, as the driver's do.
 */
#include "shim.h"
#include "ptstream.h"

SHIM_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v, size_t w,
				       size_t h, CUstream s)
{
	return shim_memset_async(d, pitch, v, 1, w, h, s);
}

SHIM_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t pitch, unsigned short v, size_t w,
					size_t h, CUstream s)
{
	return shim_memset_async(d, pitch, v, 2, w, h, s);
}

SHIM_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v, size_t w,
					size_t h, CUstream s)
{
	return shim_memset_async(d, pitch, v, 4, w, h, s);
}

SHIM_EXPORT CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr d, size_t pitch, unsigned char v,
					    size_t w, size_t h, CUstream s)
{
	return SHIM_PER_THREAD(cuMemsetD2D8Async(d, pitch, v, w, h, s));
}

SHIM_EXPORT CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr d, size_t pitch, unsigned short v,
					     size_t w, size_t h, CUstream s)
{
	return SHIM_PER_THREAD(cuMemsetD2D16Async(d, pitch, v, w, h, s));
}

SHIM_EXPORT CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr d, size_t pitch, unsigned int v,
					     size_t w, size_t h, CUstream s)
{
	return SHIM_PER_THREAD(cuMemsetD2D32Async(d, pitch, v, w, h, s));
}

SHIM_EXPORT CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr d, size_t pitch, unsigned char v, size_t w,
					  size_t h)
{
	return SHIM_PER_THREAD(cuMemsetD2D8_v2(d, pitch, v, w, h));
}

SHIM_EXPORT CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr d, size_t pitch, unsigned short v,
					   size_t w, size_t h)
{
	return SHIM_PER_THREAD(cuMemsetD2D16_v2(d, pitch, v, w, h));
}

SHIM_EXPORT CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr d, size_t pitch, unsigned int v,
					   size_t w, size_t h)
{
	return SHIM_PER_THREAD(cuMemsetD2D32_v2(d, pitch, v, w, h));
}
