// SPDX-License-Identifier: MIT
/*
 * Copies and memsets. Pageable host memory crosses through the data area
 * in chunks, so a copy of any size streams: host-to-device chunks are
 * staged and queued (deferred) while the device drains earlier ones;
 * device-to-host chunks are read back one completion at a time. Synchronous
 * forms then wait on the stream, as CUDA's do.
 */
#include <string.h>

#include "shim.h"

/* Largest piece of one copy in the data area at a time. */
static uint64_t chunk_size(void)
{
	uint64_t c = shim_data_max() / 4;

	return c > (16ULL << 20) ? (16ULL << 20) : c;
}

static CUresult htod(uint64_t dst, const void *src, uint64_t len, uint64_t stream)
{
	const unsigned char *p = src;
	uint64_t done = 0, chunk = chunk_size();
	CUresult r;

	if (len && !src)
		return CUDA_ERROR_INVALID_VALUE;
	/* Not into a capture: the staged host side would be stale at replay. */
	r = shim_capture_check_stream(stream);
	if (r)
		return r;
	shim_lock();
	while (done < len || !len) {
		uint64_t n = len - done < chunk ? len - done : chunk;
		uint64_t id, off = shim_data_alloc(n ? n : 1, &id);
		struct axon_sqe *sqe;

		memcpy(shim.ring.data + off, p + done, n);
		sqe = shim_sqe();
		if (!sqe) {
			shim_data_done(id);
			shim_unlock();
			return CUDA_ERROR_DEVICE_UNAVAILABLE;
		}
		axon_prep_copy(sqe, AXON_OP_MEMCPY_HTOD, stream, dst + done, off, n);
		sqe->flags = AXON_SQE_F_DEFERRED;
		shim_data_release(id, DATA_AFTER_STREAM, shim_slot(stream),
				  shim_stream_next(stream));
		done += n;
		if (!len)
			break;
	}
	shim_flush();
	shim_unlock();
	return CUDA_SUCCESS;
}

static CUresult dtoh(void *dst, uint64_t src, uint64_t len, uint64_t stream)
{
	unsigned char *p = dst;
	uint64_t done = 0, chunk = chunk_size();
	CUresult r = CUDA_SUCCESS;

	if (len && !dst)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_capture_check_stream(stream);	/* as htod */
	if (r)
		return r;
	shim_lock();
	do {
		struct shim_waiter w = { 0 };
		uint64_t n = len - done < chunk ? len - done : chunk;
		uint64_t id, off = shim_data_alloc(n ? n : 1, &id);
		struct axon_sqe *sqe = shim_sqe();

		if (!sqe) {
			shim_data_done(id);
			r = CUDA_ERROR_DEVICE_UNAVAILABLE;
			break;
		}
		axon_prep_copy(sqe, AXON_OP_MEMCPY_DTOH, stream, off, src + done, n);
		shim_stream_next(stream);
		r = shim_sync_op(sqe, &w);
		if (!r)
			memcpy(p + done, shim.ring.data + off, n);
		shim_data_done(id);
		done += n;
	} while (!r && done < len);
	shim_unlock();
	/* A blocking copy flushes the device's printf output, as CUDA's. */
	shim_devout_drain();
	return r;
}

static CUresult dtod(uint64_t dst, uint64_t src, uint64_t len, uint64_t stream)
{
	struct axon_sqe *sqe;

	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_copy(sqe, AXON_OP_MEMCPY_DTOD, stream, dst, src, len);
		sqe->flags = AXON_SQE_F_DEFERRED;
		shim_stream_next(stream);
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : CUDA_ERROR_DEVICE_UNAVAILABLE;
}

/* The default stream of the current context (synchronous copies). */
static CUresult sync_stream(uint64_t *h)
{
	/* Synchronous copies are "potentially unsafe" during a capture. */
	CUresult r = shim_capture_unsafe();

	return r ? r : shim_stream(NULL, h);
}

SHIM_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
	uint64_t h;
	CUresult r = sync_stream(&h);

	if (!r)
		r = htod(dst, src, n, h);
	return r ? r : shim_stream_sync(h);
}

SHIM_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	uint64_t h;
	CUresult r = sync_stream(&h);

	return r ? r : dtoh(dst, src, n, h);
}

SHIM_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	uint64_t h;
	CUresult r = sync_stream(&h);

	if (!r)
		r = dtod(dst, src, n, h);
	return r ? r : shim_stream_sync(h);
}

SHIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	return r ? r : htod(dst, src, n, h);
}

/* Pageable destination: CUDA completes these before returning too. */
SHIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	return r ? r : dtoh(dst, src, n, h);
}

SHIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	return r ? r : dtod(dst, src, n, h);
}

/* Unified addressing: an address inside our window is device memory. */
static bool is_device(uint64_t p)
{
	return p >= shim.ring.params.va_base &&
	       p - shim.ring.params.va_base < shim.ring.params.va_size;
}

static CUresult memcpy_any(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s, bool sync)
{
	uint64_t h;
	CUresult r;

	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	r = shim_stream(s, &h);
	if (r)
		return r;
	if (is_device(dst) && is_device(src))
		r = dtod(dst, src, n, h);
	else if (is_device(dst))
		r = htod(dst, (const void *)(uintptr_t)src, n, h);
	else if (is_device(src))
		return dtoh((void *)(uintptr_t)dst, src, n, h);
	else {
		memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n);
		return CUDA_SUCCESS;
	}
	return r || !sync ? r : shim_stream_sync(h);
}

SHIM_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return memcpy_any(dst, src, n, NULL, true);
}

SHIM_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return memcpy_any(dst, src, n, s, false);
}

SHIM_EXPORT CUresult cuMemcpy_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return memcpy_any(dst, src, n, NULL, true);
}

SHIM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return memcpy_any(dst, src, n, s, false);
}

SHIM_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
	return cuMemcpyHtoD_v2(dst, src, n);
}

SHIM_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
	return cuMemcpyDtoH_v2(dst, src, n);
}

SHIM_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return cuMemcpyDtoD_v2(dst, src, n);
}

SHIM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return cuMemcpyHtoDAsync_v2(dst, src, n, s);
}

SHIM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	return cuMemcpyDtoHAsync_v2(dst, src, n, s);
}

SHIM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return cuMemcpyDtoDAsync_v2(dst, src, n, s);
}

/* Memsets: one deferred op each, 2D forms with a pitch. */
static CUresult memset_op(uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elem,
			  uint64_t width, uint64_t height, CUstream s, bool sync)
{
	struct axon_sqe *sqe;
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	if (r)
		return r;
	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		sqe->opcode = AXON_OP_MEMSET;
		sqe->flags = AXON_SQE_F_DEFERRED;
		sqe->stream = h;
		sqe->memset.dst = dst;
		sqe->memset.width = width;
		sqe->memset.height = height;
		sqe->memset.pitch = height > 1 ? pitch : 0;
		sqe->memset.value = value;
		sqe->memset.elem_size = elem;
		shim_stream_next(h);
		shim_flush();
	}
	shim_unlock();
	if (!sqe)
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	return sync ? shim_stream_sync(h) : CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	return memset_op(d, 0, v, 1, n, 1, NULL, true);
}

SHIM_EXPORT CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n)
{
	return memset_op(d, 0, v, 2, n, 1, NULL, true);
}

SHIM_EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
	return memset_op(d, 0, v, 4, n, 1, NULL, true);
}

SHIM_EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return memset_op(d, 0, v, 1, n, 1, s, false);
}

SHIM_EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return memset_op(d, 0, v, 2, n, 1, s, false);
}

SHIM_EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return memset_op(d, 0, v, 4, n, 1, s, false);
}

SHIM_EXPORT CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h)
{
	return memset_op(d, pitch, v, 1, w, h, NULL, true);
}

SHIM_EXPORT CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h)
{
	return memset_op(d, pitch, v, 2, w, h, NULL, true);
}

SHIM_EXPORT CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h)
{
	return memset_op(d, pitch, v, 4, w, h, NULL, true);
}

SHIM_EXPORT CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n)
{
	return cuMemsetD8_v2(d, v, n);
}

SHIM_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n)
{
	return cuMemsetD16_v2(d, v, n);
}

SHIM_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n)
{
	return cuMemsetD32_v2(d, v, n);
}

SHIM_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return cuMemsetD8Async(d, v, n, s);
}

SHIM_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return cuMemsetD16Async(d, v, n, s);
}

SHIM_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return cuMemsetD32Async(d, v, n, s);
}
