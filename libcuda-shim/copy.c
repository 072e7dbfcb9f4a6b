// SPDX-License-Identifier: MIT
/*
 * Copies and memsets.
 *
 * A copy whose host side lies entirely inside pinned memory shared with the
 * daemon (hostmem.c) is one deferred SQE with AXON_COPY_F_HOSTMEM: the
 * daemon reads or writes the memory in place, the device DMAs it, and
 * asynchronous forms are truly asynchronous (the caller must leave the
 * buffer alone until the stream passes the copy, as with CUDA).
 *
 * Memory registered with cuMemHostRegister is such a region too, once
 * hostreg.c moved it onto a memfd. Any other host memory (pageable,
 * registered memory that could not move, or straddling a region's end)
 * crosses through the data area in chunks, so a
 * copy of any size streams: host-to-device chunks are staged and queued
 * (deferred) while the device drains earlier ones, HTOD_DEPTH of them at
 * most; device-to-host chunks are pipelined: later chunks' copies into the
 * data area run while this process copies an earlier one out (with
 * non-temporal stores). Synchronous forms then wait on the stream, as
 * CUDA's do. The shapes were chosen by measurement (bench/gpu/hostbw).
 *
 * On a capturing stream a copy is a node of the graph, which must read or
 * write the host memory at each replay. A shared pinned range is named as
 * it is (the daemon checks at each launch that it is still registered).
 * Any other host memory is staged through pinned memory shared with the
 * daemon that the capture allocates for the copy (captured_copy): the
 * graph copies between the device and that buffer, and a host node the
 * shim runs at each replay copies between the buffer and the program's
 * memory (before the device reads it, after the device wrote it).
 */
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "shim.h"
#include "ptstream.h"

/* Largest piece of one copy in the data area at a time. */
static uint64_t chunk_size(void)
{
	uint64_t c = shim_data_max() / 4;

	return c > (16ULL << 20) ? (16ULL << 20) : c;
}

/*
 * Device-to-host chunks: DTOH_CHUNK at a time, DTOH_DEPTH in flight (each
 * holds its data-area chunk until this process has copied it out). Small
 * chunks keep what the device just wrote in the last-level cache for the
 * copy out; measured on the H200 machine (bench/gpu/hostbw, 2026-11-29),
 * 1 MiB x 4 copied out with non-temporal stores ran at 16.8 GB/s where
 * 16 MiB x 2 with memcpy ran at 8.1.
 */
#define DTOH_CHUNK (1ULL << 20)
#define DTOH_DEPTH 4

/* Below this a chunk is copied out with memcpy: the program is likely to
 * read a small result soon, and then it is better left in the cache. */
#define STREAM_OUT_MIN (256U << 10)

/*
 * Copies a device-to-host chunk out of the data area into the program's
 * memory with non-temporal stores: the destination's lines are not read
 * first (a plain memcpy reads each one before writing it), which is what
 * bound pageable device-to-host copies.
 */
static void copy_out(void *dst, const void *src, size_t n)
{
#ifdef __SSE2__
	unsigned char *d = dst;
	const unsigned char *p = src;

	if (n < STREAM_OUT_MIN) {
		memcpy(dst, src, n);
		return;
	}
	while ((uintptr_t)d & 15) {
		*d++ = *p++;
		n--;
	}
	for (; n >= 64; n -= 64, d += 64, p += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)p);
		__m128i b = _mm_loadu_si128((const __m128i *)(p + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(p + 32));
		__m128i e = _mm_loadu_si128((const __m128i *)(p + 48));

		_mm_stream_si128((__m128i *)d, a);
		_mm_stream_si128((__m128i *)(d + 16), b);
		_mm_stream_si128((__m128i *)(d + 32), c);
		_mm_stream_si128((__m128i *)(d + 48), e);
	}
	/* The stores are weakly ordered: done before the caller goes on. */
	_mm_sfence();
	memcpy(d, p, n);
#else
	memcpy(dst, src, n);
#endif
}

/* One deferred copy naming pinned memory shared with the daemon. */
static CUresult shared_copy_locked(unsigned int op, uint64_t dst, uint64_t src, uint64_t len,
				   uint64_t stream)
{
	struct axon_sqe *sqe = shim_sqe();

	if (!sqe)
		return shim_gone_error();
	if (op == AXON_OP_MEMCPY_HTOD)
		axon_prep_memcpy_htod(sqe, stream, dst, src, len, AXON_COPY_F_HOSTMEM);
	else
		axon_prep_memcpy_dtoh(sqe, stream, dst, src, len, AXON_COPY_F_HOSTMEM);
	axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
	shim_stream_next(stream);
	shim_flush();
	return CUDA_SUCCESS;
}

static CUresult shared_copy(unsigned int op, uint64_t dst, uint64_t src, uint64_t len,
			    uint64_t stream)
{
	CUresult r;

	shim_lock();
	r = shared_copy_locked(op, dst, src, len, stream);
	shim_unlock();
	return r;
}

/* The host node of a staged captured copy: one side of it at replay. */
struct stage_copy {
	void *dst;
	const void *src;
	size_t len;
};

static void CUDA_CB stage_run(void *arg)
{
	const struct stage_copy *sc = arg;

	memcpy(sc->dst, sc->src, sc->len);
}

/*
 * A copy between device memory dev and host memory the daemon cannot see,
 * on a capturing stream: a buffer of shared pinned memory becomes the
 * copy's host side, and a host node copies the program's memory into it
 * first (HTOD) or out of it afterwards (DTOH). The capture owns both. Sets
 * *taken unless the stream turned out not to capture (the caller then
 * copies as usual).
 */
static CUresult captured_copy(unsigned int op, uint64_t dev, void *host, uint64_t len,
			      uint64_t stream, bool *taken)
{
	struct shim_hostnode n = { .fn = stage_run, .free_arg = true };
	struct stage_copy *sc;
	uint32_t index;
	CUresult r;
	int k;

	*taken = true;
	/* No lock held: it registers the memory with the daemon. */
	r = shim_hostmem_alloc_shared(len, &n.stage);
	if (r) {
		/* Nothing the daemon could read at replay (the kernel
		 * transport shares no memory): the capture cannot hold it. */
		shim_capture_invalidate(stream);
		return r == CUDA_ERROR_NOT_SUPPORTED ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : r;
	}
	sc = malloc(sizeof(*sc));
	if (!sc) {
		cuMemFreeHost(n.stage);
		shim_capture_invalidate(stream);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	sc->len = len;
	sc->dst = op == AXON_OP_MEMCPY_HTOD ? n.stage : host;
	sc->src = op == AXON_OP_MEMCPY_HTOD ? host : n.stage;
	n.arg = sc;
	shim_capture_host_lock();
	shim_lock();
	k = shim_capture_host_add_locked(stream, &n, 1, &index);
	if (k > 0 && op == AXON_OP_MEMCPY_HTOD) {
		r = shim_capture_host_send_locked(stream, index);
		if (!r)
			r = shared_copy_locked(op, dev, (uint64_t)(uintptr_t)n.stage, len, stream);
	} else if (k > 0) {
		r = shared_copy_locked(op, (uint64_t)(uintptr_t)n.stage, dev, len, stream);
		if (!r)
			r = shim_capture_host_send_locked(stream, index);
	}
	shim_unlock();
	shim_capture_host_unlock();
	if (k <= 0) {
		/* Not taken: still ours. */
		shim_hostnode_release(&n);
		*taken = k < 0;
		return k < 0 ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
	}
	return r;
}

/*
 * A copy on a capturing stream (see the top); *taken unless the stream
 * does not capture.
 */
static CUresult capture_copy(unsigned int op, uint64_t dev, void *host, uint64_t len,
			     uint64_t stream, bool *taken)
{
	*taken = shim_stream_capturing(stream);
	if (!*taken)
		return CUDA_SUCCESS;
	/* Nothing to copy, nothing to capture. */
	if (!len)
		return CUDA_SUCCESS;
	if (shim_hostmem_shared(host, len))
		return op == AXON_OP_MEMCPY_HTOD
		       ? shared_copy(op, dev, (uint64_t)(uintptr_t)host, len, stream)
		       : shared_copy(op, (uint64_t)(uintptr_t)host, dev, len, stream);
	return captured_copy(op, dev, host, len, stream, taken);
}

/*
 * Host-to-device chunks: HTOD_CHUNK at a time, at most HTOD_DEPTH staged
 * and not yet read by the device. What is staged is still in the cache
 * when the device reads it; with the whole 64 MiB area in flight it was
 * not. Measured on the H200 machine (bench/gpu/hostbw, 2026-11-29): 4 MiB
 * x 4 ran at 8.6-9.4 GB/s, 16 MiB x 4 at 6.3-6.6.
 */
#define HTOD_CHUNK (4ULL << 20)
#define HTOD_DEPTH 4

/*
 * A staged host-to-device chunk that a later chunk of the same copy waits
 * for: it is sent with a completion (not deferred), so the wait is an
 * ordinary one (shim_wait: the context's scheduling flags, axond's
 * liveness) and a refused copy (a bad stream) comes back as its error.
 */
struct htod_chunk {
	struct shim_waiter w;
	uint64_t id;
};

/* Waits for the oldest chunk a copy still waits for and gives its part of
 * the data area back; lock held. */
static CUresult htod_wait_oldest(struct htod_chunk *q, uint64_t *oldest, uint64_t *waiting)
{
	struct htod_chunk *c = &q[*oldest % HTOD_DEPTH];
	CUresult r = shim_wait(&c->w);

	shim_data_done(c->id);
	++*oldest;
	--*waiting;
	return r;
}

/* The largest chunk of a staged copy (shim.h: struct shim_stage). */
uint64_t shim_stage_chunk(bool htod)
{
	uint64_t c = htod ? chunk_size() : shim_data_max() / (2 * DTOH_DEPTH);
	uint64_t most = htod ? HTOD_CHUNK : DTOH_CHUNK;

	return c > most ? most : c;
}

/* A chunk size of at most the staging chunk, a multiple of s->unit. */
static uint64_t stage_chunk(const struct shim_stage *s, bool htod)
{
	uint64_t c = shim_stage_chunk(htod);

	if (s->unit > 1 && s->unit <= c)
		c -= c % s->unit;
	return c;
}

CUresult shim_stage_htod(const struct shim_stage *s)
{
	struct htod_chunk q[HTOD_DEPTH];
	/* Chunks [oldest, oldest + waiting) are sent and waited for later. */
	uint64_t chunk = stage_chunk(s, true), len = s->len, nchunks, k, oldest = 0;
	uint64_t waiting = 0, t0, stream = s->stream;
	CUresult r = CUDA_SUCCESS;

	/* A zero-length copy is still one op: the daemon validates it. */
	nchunks = len ? (len + chunk - 1) / chunk : 1;
	shim_lock();
	for (k = 0; k < nchunks && !r; k++) {
		struct htod_chunk *c = &q[k % HTOD_DEPTH];
		uint64_t at = k * chunk, n = len - at < chunk ? len - at : chunk;
		uint64_t id, off;
		struct axon_sqe *sqe;

		/* The chunk HTOD_DEPTH back must have been read first. */
		while (!r && waiting && oldest + HTOD_DEPTH <= k)
			r = htod_wait_oldest(q, &oldest, &waiting);
		/* Holding chunks only this thread gives back, never wait for
		 * room: finish the oldest first. */
		while (!r && waiting && !shim_data_try_alloc(n ? n : 1, &off, &id))
			r = htod_wait_oldest(q, &oldest, &waiting);
		if (r)
			break;
		if (!waiting)
			off = shim_data_alloc(n ? n : 1, &id);
		t0 = shim_profiling ? shim_prof_now() : 0;
		s->pack(s, shim.ring.data + off, at, n);
		if (t0)
			shim_prof_stage(true, n, t0);
		sqe = shim_sqe();
		if (!sqe) {
			shim_data_done(id);
			r = shim_gone_error();
			break;
		}
		s->prep(s, sqe, off, at, n);
		if (k + HTOD_DEPTH < nchunks) {
			memset(&c->w, 0, sizeof(c->w));
			c->w.op = AXON_OP_MEMCPY_HTOD;
			c->id = id;	/* given back once waited for */
			axon_sqe_set_data(sqe, (uint64_t)(uintptr_t)&c->w);
			shim_stream_next(stream);
			waiting++;
		} else {
			/* The last ones: the copy returns without waiting. */
			axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
			shim_data_release(id, DATA_AFTER_STREAM, shim_slot(stream),
					  shim_stream_next(stream));
		}
		/* Publish each chunk at once, so the daemon starts on it
		 * while the next one is staged. */
		shim_flush();
	}
	/* After an error: the chunks still to complete name our stack. */
	while (waiting)
		htod_wait_oldest(q, &oldest, &waiting);
	shim_unlock();
	return r;
}

/* A flat copy's chunks: the program's bytes as they are. */
static void flat_pack(const struct shim_stage *s, unsigned char *buf, uint64_t at, uint64_t n)
{
	memcpy(buf, (const unsigned char *)s->host + at, n);
}

static void flat_unpack(const struct shim_stage *s, const unsigned char *buf, uint64_t at,
			uint64_t n)
{
	copy_out((unsigned char *)s->host + at, buf, n);
}

static void flat_prep_htod(const struct shim_stage *s, struct axon_sqe *sqe, uint64_t off,
			   uint64_t at, uint64_t n)
{
	axon_prep_memcpy_htod(sqe, s->stream, s->dev + at, off, n, 0);
}

static void flat_prep_dtoh(const struct shim_stage *s, struct axon_sqe *sqe, uint64_t off,
			   uint64_t at, uint64_t n)
{
	axon_prep_memcpy_dtoh(sqe, s->stream, off, s->dev + at, n, 0);
}

CUresult shim_copy_htod(uint64_t dst, const void *src, uint64_t len, uint64_t stream)
{
	struct shim_stage st = {
		.len = len, .unit = 1, .stream = stream, .dev = dst, .host = (void *)src,
		.pack = flat_pack, .prep = flat_prep_htod,
	};
	CUresult r;

	if (len && !src)
		return CUDA_ERROR_INVALID_VALUE;
	if (shim_capturing()) {
		bool taken;

		r = capture_copy(AXON_OP_MEMCPY_HTOD, dst, (void *)src, len, stream, &taken);
		if (taken)
			return r;
	}
	if (len && shim_hostmem_shared(src, len))
		return shared_copy(AXON_OP_MEMCPY_HTOD, dst, (uint64_t)(uintptr_t)src, len,
				   stream);
	return shim_stage_htod(&st);
}

/* A staged device-to-host chunk in flight. */
struct dtoh_chunk {
	struct shim_waiter w;
	uint64_t id, off, at, n;
};

CUresult shim_stage_dtoh(const struct shim_stage *s)
{
	struct dtoh_chunk q[DTOH_DEPTH];
	/* At most half the area held: other threads' copies go on. */
	uint64_t issued = 0, chunk = stage_chunk(s, false), len = s->len;
	unsigned int head = 0, busy = 0;
	bool sent = false;
	CUresult r = CUDA_SUCCESS;

	shim_lock();
	for (;;) {
		struct dtoh_chunk *c;
		CUresult cr;

		/* Queue chunks until DTOH_DEPTH are in flight (a zero-length
		 * copy is still one op: the daemon validates it). */
		while (!r && busy < DTOH_DEPTH && (issued < len || (!len && !sent))) {
			uint64_t n = len - issued < chunk ? len - issued : chunk;
			struct axon_sqe *sqe;

			c = &q[(head + busy) % DTOH_DEPTH];
			/* Holding chunks only this thread gives back, never
			 * wait for room: copy the oldest out first. */
			if (busy) {
				if (!shim_data_try_alloc(n ? n : 1, &c->off, &c->id))
					break;
			} else {
				c->off = shim_data_alloc(n ? n : 1, &c->id);
			}
			sqe = shim_sqe();
			if (!sqe) {
				shim_data_done(c->id);
				r = shim_gone_error();
				break;
			}
			memset(&c->w, 0, sizeof(c->w));
			c->w.op = AXON_OP_MEMCPY_DTOH;
			s->prep(s, sqe, c->off, issued, n);
			axon_sqe_set_data(sqe, (uint64_t)(uintptr_t)&c->w);
			shim_stream_next(s->stream);
			c->at = issued;
			c->n = n;
			issued += n;
			busy++;
			sent = true;
		}
		if (!busy)
			break;
		/* The oldest: copy it out while the next one runs. */
		c = &q[head];
		cr = shim_wait(&c->w);
		if (!r && cr)
			r = cr;
		else if (!r) {
			uint64_t t0 = shim_profiling ? shim_prof_now() : 0;

			s->unpack(s, shim.ring.data + c->off, c->at, c->n);
			if (t0)
				shim_prof_stage(false, c->n, t0);
		}
		shim_data_done(c->id);
		head = (head + 1) % DTOH_DEPTH;
		busy--;
	}
	shim_unlock();
	return r;
}

/*
 * Device to host. Into shared pinned memory: one deferred copy, waited for
 * unless async. Into anything else: synchronous, as CUDA is for pageable
 * memory whatever the form.
 */
CUresult shim_copy_dtoh(void *dst, uint64_t src, uint64_t len, uint64_t stream, bool async)
{
	struct shim_stage st = {
		.len = len, .unit = 1, .stream = stream, .dev = src, .host = dst,
		.unpack = flat_unpack, .prep = flat_prep_dtoh,
	};
	CUresult r;

	if (len && !dst)
		return CUDA_ERROR_INVALID_VALUE;
	if (shim_capturing()) {
		bool taken;

		/* A node: it runs at each launch, not now. */
		r = capture_copy(AXON_OP_MEMCPY_DTOH, src, dst, len, stream, &taken);
		if (taken)
			return r;
	}
	if (len && shim_hostmem_shared(dst, len)) {
		r = shared_copy(AXON_OP_MEMCPY_DTOH, (uint64_t)(uintptr_t)dst, src, len, stream);
		if (r || async)
			return r;
		r = shim_stream_sync(stream);
	} else {
		r = shim_stage_dtoh(&st);
	}
	/* A blocking copy flushes the device's printf output, as CUDA's. */
	shim_devout_drain();
	return r;
}

CUresult shim_copy_dtod(uint64_t dst, uint64_t src, uint64_t len, uint64_t stream)
{
	struct axon_sqe *sqe;

	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_memcpy_dtod(sqe, stream, dst, src, len);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_stream_next(stream);
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
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
		r = shim_copy_htod(dst, src, n, h);
	return r ? r : shim_stream_sync(h);
}

SHIM_EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n)
{
	uint64_t h;
	CUresult r = sync_stream(&h);

	return r ? r : shim_copy_dtoh(dst, src, n, h, false);
}

SHIM_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	uint64_t h;
	CUresult r = sync_stream(&h);

	if (!r)
		r = shim_copy_dtod(dst, src, n, h);
	return r ? r : shim_stream_sync(h);
}

SHIM_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	return r ? r : shim_copy_htod(dst, src, n, h);
}

/* Asynchronous into shared pinned memory; a pageable destination is
 * complete before this returns, as with CUDA. */
SHIM_EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	return r ? r : shim_copy_dtoh(dst, src, n, h, true);
}

SHIM_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	uint64_t h;
	CUresult r = shim_stream(s, &h);

	return r ? r : shim_copy_dtod(dst, src, n, h);
}

/* Unified addressing: an address inside our window is device memory. */
bool shim_is_device(uint64_t p)
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
	if (shim_is_device(dst) && shim_is_device(src))
		r = shim_copy_dtod(dst, src, n, h);
	else if (shim_is_device(dst))
		r = shim_copy_htod(dst, (const void *)(uintptr_t)src, n, h);
	else if (shim_is_device(src))
		return shim_copy_dtoh((void *)(uintptr_t)dst, src, n, h, !sync);
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
	return SHIM_PER_THREAD(memcpy_any(dst, src, n, NULL, true));
}

SHIM_EXPORT CUresult cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(memcpy_any(dst, src, n, s, false));
}

SHIM_EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dst, const void *src, size_t n)
{
	return SHIM_PER_THREAD(cuMemcpyHtoD_v2(dst, src, n));
}

SHIM_EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dst, CUdeviceptr src, size_t n)
{
	return SHIM_PER_THREAD(cuMemcpyDtoH_v2(dst, src, n));
}

SHIM_EXPORT CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return SHIM_PER_THREAD(cuMemcpyDtoD_v2(dst, src, n));
}

SHIM_EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(cuMemcpyHtoDAsync_v2(dst, src, n, s));
}

SHIM_EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(cuMemcpyDtoHAsync_v2(dst, src, n, s));
}

SHIM_EXPORT CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(cuMemcpyDtoDAsync_v2(dst, src, n, s));
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
		axon_prep_memset(sqe, h, dst, width, height, height > 1 ? pitch : 0, value, elem);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_stream_next(h);
		shim_flush();
	}
	shim_unlock();
	if (!sqe)
		return shim_gone_error();
	return sync ? shim_stream_sync(h) : CUDA_SUCCESS;
}

CUresult shim_memset_async(uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elem,
			   uint64_t width, uint64_t height, CUstream s)
{
	return memset_op(dst, pitch, value, elem, width, height, s, false);
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
	return SHIM_PER_THREAD(cuMemsetD8_v2(d, v, n));
}

SHIM_EXPORT CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n)
{
	return SHIM_PER_THREAD(cuMemsetD16_v2(d, v, n));
}

SHIM_EXPORT CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n)
{
	return SHIM_PER_THREAD(cuMemsetD32_v2(d, v, n));
}

SHIM_EXPORT CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(cuMemsetD8Async(d, v, n, s));
}

SHIM_EXPORT CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(cuMemsetD16Async(d, v, n, s));
}

SHIM_EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(cuMemsetD32Async(d, v, n, s));
}
