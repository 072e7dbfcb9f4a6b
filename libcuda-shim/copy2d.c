// SPDX-License-Identifier: MIT
/*
 * 2D and 3D copies (cuMemcpy2D*, cuMemcpy3D*) and peer copies.
 *
 * A copy is a rectangle: height rows of width bytes, each side with its
 * own pitch, its first byte at base + y * pitch + x (3D: + z * height *
 * pitch). A rectangle between device sides, or between the device and
 * pinned memory shared with the daemon (hostmem.c), is one deferred
 * MEMCPY_2D (the daemon reads or writes the shared memory in place). A
 * pageable host side crosses through the data area in row-aligned chunks
 * (copy.c's staging, shim.h: struct shim_stage): its rows are packed
 * contiguously there and each chunk is one MEMCPY_2D, pipelined like the
 * 1D copies; a row wider than a chunk goes as one 1D copy per row. A
 * rectangle whose rows are contiguous on both sides is a 1D copy. On a
 * capturing stream a pageable host side becomes one 1D captured copy per
 * row (copy.c's top: a host node and a copy from staging memory each), as
 * the graph must read the program's memory at every replay.
 *
 * A 3D copy is one 2D copy per slice, or a single one when the slices are
 * contiguous (each side's slice height equals the copy's). Sync forms wait
 * for the copy; async forms do not, except that a pageable destination is
 * written before they return, as with CUDA.
 *
 * CUDA arrays (CU_MEMORYTYPE_ARRAY) are not implemented in axon: a copy
 * naming one returns CUDA_ERROR_NOT_SUPPORTED, what cuArrayCreate and the
 * other array calls return. Peer copies: axon shows one device here and
 * every context of the process shares the client's window, so a peer copy
 * is a device-to-device copy once both contexts are checked.
 */
#include <string.h>

#include "shim.h"
#include "ptstream.h"

/* One side of a rectangle, resolved. */
struct side {
	bool dev;		/* a device address, else host memory */
	uint64_t addr;		/* its first byte */
	uint64_t pitch;
};

/* What a CUDA_MEMCPY2D / 3D says of one side, before resolving. */
struct side_desc {
	CUmemorytype type;
	const void *host;
	CUdeviceptr dev;
	uint64_t x, y, z, pitch, height;
};

/* The rows' span on a side: pitch * (height - 1) + width. */
static uint64_t span(const struct side *s, uint64_t width, uint64_t height)
{
	return s->pitch * (height - 1) + width;
}

static CUresult side_resolve(const struct side_desc *d, struct side *s)
{
	uint64_t base, rows, off;

	switch (d->type) {
	case CU_MEMORYTYPE_HOST:
		base = (uint64_t)(uintptr_t)d->host;
		s->dev = false;
		break;
	case CU_MEMORYTYPE_DEVICE:
		base = d->dev;
		s->dev = true;
		break;
	case CU_MEMORYTYPE_UNIFIED:
		base = d->dev;
		s->dev = shim_is_device(base);
		break;
	case CU_MEMORYTYPE_ARRAY:
		return CUDA_ERROR_NOT_SUPPORTED;	/* see the top */
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (__builtin_mul_overflow(d->z, d->height, &rows) ||
	    __builtin_add_overflow(rows, d->y, &rows) ||
	    __builtin_mul_overflow(rows, d->pitch, &off) ||
	    __builtin_add_overflow(off, d->x, &off) ||
	    __builtin_add_overflow(base, off, &s->addr))
		return CUDA_ERROR_INVALID_VALUE;
	s->pitch = d->pitch;
	return CUDA_SUCCESS;
}

/*
 * Whether a side's whole extent, depth slices of slice_rows rows (the
 * last one height rows) pitch apart, fits without wrapping. Everything
 * computed inside it then fits as well.
 */
static bool extent_ok(const struct side *s, uint64_t width, uint64_t height,
		      uint64_t slice_rows, uint64_t depth)
{
	uint64_t rows, ext, end;

	return !__builtin_mul_overflow(depth - 1, slice_rows, &rows) &&
	       !__builtin_add_overflow(rows, height - 1, &rows) &&
	       !__builtin_mul_overflow(rows, s->pitch, &ext) &&
	       !__builtin_add_overflow(ext, width, &ext) &&
	       !__builtin_add_overflow(s->addr, ext, &end) && (s->dev || s->addr);
}

/* The device's largest pitch (CU_DEVICE_ATTRIBUTE_MAX_PITCH). */
static uint64_t max_pitch(void)
{
	struct shim_ctx *c = shim_current_ctx();
	int v = 0;

	if (cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_PITCH, c ? c->device : 0) ||
	    v <= 0)
		return UINT32_MAX;
	return (uint64_t)v;
}

/* One deferred MEMCPY_2D of at most UINT32_MAX rows each. */
static CUresult send_rect(uint64_t stream, uint32_t dir, struct side dst, struct side src,
			  uint64_t width, uint64_t height, uint32_t flags)
{
	CUresult r = CUDA_SUCCESS;

	shim_lock();
	while (height && !r) {
		uint64_t rows = height > UINT32_MAX ? UINT32_MAX : height;
		struct axon_sqe *sqe = shim_sqe();

		if (!sqe) {
			r = shim_gone_error();
			break;
		}
		axon_prep_memcpy_2d(sqe, stream, dst.addr, src.addr, (uint32_t)width,
				    (uint32_t)rows, (uint32_t)dst.pitch, (uint32_t)src.pitch,
				    dir, flags);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_stream_next(stream);
		shim_flush();
		dst.addr += rows * dst.pitch;
		src.addr += rows * src.pitch;
		height -= rows;
	}
	shim_unlock();
	return r;
}

/* Staged chunks: rows [at / width, (at + n) / width) of the rectangle. */
static void rows_pack(const struct shim_stage *s, unsigned char *buf, uint64_t at, uint64_t n)
{
	const unsigned char *p = (const unsigned char *)s->host + at / s->width * s->host_pitch;
	uint64_t k;

	for (k = 0; k < n / s->width; k++)
		memcpy(buf + k * s->width, p + k * s->host_pitch, s->width);
}

static void rows_unpack(const struct shim_stage *s, const unsigned char *buf, uint64_t at,
			uint64_t n)
{
	unsigned char *p = (unsigned char *)s->host + at / s->width * s->host_pitch;
	uint64_t k;

	for (k = 0; k < n / s->width; k++)
		memcpy(p + k * s->host_pitch, buf + k * s->width, s->width);
}

static void rows_prep_htod(const struct shim_stage *s, struct axon_sqe *sqe, uint64_t off,
			   uint64_t at, uint64_t n)
{
	axon_prep_memcpy_2d(sqe, s->stream, s->dev + at / s->width * s->dev_pitch, off,
			    (uint32_t)s->width, (uint32_t)(n / s->width), (uint32_t)s->dev_pitch,
			    (uint32_t)s->width, AXON_COPY_2D_HTOD, 0);
}

static void rows_prep_dtoh(const struct shim_stage *s, struct axon_sqe *sqe, uint64_t off,
			   uint64_t at, uint64_t n)
{
	axon_prep_memcpy_2d(sqe, s->stream, off, s->dev + at / s->width * s->dev_pitch,
			    (uint32_t)s->width, (uint32_t)(n / s->width), (uint32_t)s->width,
			    (uint32_t)s->dev_pitch, AXON_COPY_2D_DTOH, 0);
}

/* One 1D copy per row (rows wider than a chunk; captured pageable rows). */
static CUresult per_row(struct side dst, struct side src, uint64_t width, uint64_t height,
			uint64_t stream, bool async)
{
	CUresult r = CUDA_SUCCESS;
	uint64_t k;

	for (k = 0; k < height && !r; k++) {
		uint64_t d = dst.addr + k * dst.pitch, s = src.addr + k * src.pitch;

		if (dst.dev)
			r = shim_copy_htod(d, (const void *)(uintptr_t)s, width, stream);
		else
			r = shim_copy_dtoh((void *)(uintptr_t)d, s, width, stream, async);
	}
	return r;
}

/*
 * A rectangle between the device and host memory. Returns with host memory
 * written for a pageable destination; a shared pinned one is written by
 * the time the stream passes the copy (waited for unless async).
 */
static CUresult host_rect(struct side dst, struct side src, uint64_t width, uint64_t height,
			  uint64_t stream, bool async)
{
	bool htod = dst.dev;
	struct side *host = htod ? &src : &dst, *dev = htod ? &dst : &src;
	uint64_t ext = span(host, width, height);
	struct shim_stage st = {
		.len = width * height, .unit = width, .stream = stream, .dev = dev->addr,
		.host = (void *)(uintptr_t)host->addr, .dev_pitch = dev->pitch,
		.host_pitch = host->pitch, .width = width,
		.pack = rows_pack, .unpack = rows_unpack,
		.prep = htod ? rows_prep_htod : rows_prep_dtoh,
	};
	CUresult r;

	if (shim_hostmem_shared((const void *)(uintptr_t)host->addr, ext)) {
		r = send_rect(stream, htod ? AXON_COPY_2D_HTOD : AXON_COPY_2D_DTOH, dst, src,
			      width, height, AXON_COPY_F_HOSTMEM);
		return r || htod || async ? r : shim_stream_sync(stream);
	}
	if ((shim_capturing() && shim_stream_capturing(stream)) ||
	    width > shim_stage_chunk(htod))
		return per_row(dst, src, width, height, stream, async);
	if (htod)
		return shim_stage_htod(&st);
	r = shim_stage_dtoh(&st);
	/* A blocking copy flushes the device's printf output, as CUDA's. */
	if (!async)
		shim_devout_drain();
	return r;
}

/*
 * The copy of a checked rectangle on a resolved stream; sync: the caller
 * waits for it afterwards (host-to-host and pageable device-to-host
 * copies are complete on return anyway).
 */
static CUresult rect_copy(struct side dst, struct side src, uint64_t width, uint64_t height,
			  uint64_t stream, bool sync)
{
	CUresult r;
	uint64_t k;

	if (!width || !height)
		return CUDA_SUCCESS;	/* nothing to copy, as the driver */
	if (!dst.dev && !src.dev) {
		/* A graph node would have to copy at each replay, which
		 * only the shim could do: not kept. */
		if (shim_capturing() && shim_stream_capturing(stream)) {
			shim_capture_invalidate(stream);
			return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
		}
		/* In stream order, as the driver's host-to-host copy is. */
		r = shim_stream_sync(stream);
		for (k = 0; k < height && !r; k++)
			memmove((void *)(uintptr_t)(dst.addr + k * dst.pitch),
				(const void *)(uintptr_t)(src.addr + k * src.pitch), width);
		return r;
	}
	/* Rows contiguous on both sides: one flat copy. */
	if (height == 1 || (dst.pitch == width && src.pitch == width)) {
		uint64_t len = width * height;

		if (dst.dev && src.dev)
			r = shim_copy_dtod(dst.addr, src.addr, len, stream);
		else if (dst.dev)
			r = shim_copy_htod(dst.addr, (const void *)(uintptr_t)src.addr, len,
					   stream);
		else
			return shim_copy_dtoh((void *)(uintptr_t)dst.addr, src.addr, len, stream,
					      !sync);
	} else if (dst.dev && src.dev) {
		r = send_rect(stream, AXON_COPY_2D_DTOD, dst, src, width, height, 0);
	} else {
		r = host_rect(dst, src, width, height, stream, !sync);
		if (r || !dst.dev)
			return r;
	}
	return r || !sync ? r : shim_stream_sync(stream);
}

/* A copy request, 2D (depth 1) or 3D, as the CUDA structures give it. */
struct copy_req {
	struct side_desc dst, src;
	uint64_t width, height, depth;
};

/* Checks and runs a request on stream s (NULL: the context's default). */
static CUresult copy_run(const struct copy_req *q, CUstream s, bool sync)
{
	struct side dst, src;
	uint64_t h, z, mp;
	CUresult r;

	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	/* Synchronous copies are "potentially unsafe" during a capture. */
	r = sync ? shim_capture_unsafe() : CUDA_SUCCESS;
	if (!r)
		r = shim_stream(s, &h);
	if (!r)
		r = side_resolve(&q->dst, &dst);
	if (!r)
		r = side_resolve(&q->src, &src);
	if (r)
		return r;
	if (!q->width || !q->height || !q->depth)
		return CUDA_SUCCESS;	/* nothing to copy, as the driver */
	if (q->height == 1 && q->depth == 1) {
		/* One row: the pitches are never used. */
		dst.pitch = src.pitch = q->width;
	} else {
		mp = max_pitch();
		if (q->width > dst.pitch || q->width > src.pitch || dst.pitch > mp ||
		    src.pitch > mp ||
		    (q->depth > 1 && (q->height > q->dst.height || q->height > q->src.height)))
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (!extent_ok(&dst, q->width, q->height, q->dst.height, q->depth) ||
	    !extent_ok(&src, q->width, q->height, q->src.height, q->depth))
		return CUDA_ERROR_INVALID_VALUE;
	/* Slices contiguous on both sides: one rectangle of all their rows. */
	if (q->depth == 1 || (q->dst.height == q->height && q->src.height == q->height))
		return rect_copy(dst, src, q->width, q->height * q->depth, h, sync);
	for (z = 0; z < q->depth && !r; z++) {
		struct side d = dst, c = src;

		d.addr += z * q->dst.height * dst.pitch;
		c.addr += z * q->src.height * src.pitch;
		/* The last slice's wait waits for them all (one stream). */
		r = rect_copy(d, c, q->width, q->height, h, sync && z == q->depth - 1);
	}
	return r;
}

static CUresult copy_2d(const CUDA_MEMCPY2D *p, CUstream s, bool sync)
{
	struct copy_req q;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	q = (struct copy_req){
		.dst = { p->dstMemoryType, p->dstHost, p->dstDevice, p->dstXInBytes, p->dstY,
			 0, p->dstPitch, p->Height },
		.src = { p->srcMemoryType, p->srcHost, p->srcDevice, p->srcXInBytes, p->srcY,
			 0, p->srcPitch, p->Height },
		.width = p->WidthInBytes, .height = p->Height, .depth = 1,
	};
	return copy_run(&q, s, sync);
}

/* The fields CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER share. */
#define COPY_3D_REQ(p)							\
	((struct copy_req){						\
		.dst = { (p)->dstMemoryType, (p)->dstHost, (p)->dstDevice, \
			 (p)->dstXInBytes, (p)->dstY, (p)->dstZ, (p)->dstPitch, \
			 (p)->dstHeight },				\
		.src = { (p)->srcMemoryType, (p)->srcHost, (p)->srcDevice, \
			 (p)->srcXInBytes, (p)->srcY, (p)->srcZ, (p)->srcPitch, \
			 (p)->srcHeight },				\
		.width = (p)->WidthInBytes, .height = (p)->Height,	\
		.depth = (p)->Depth,					\
	})

static CUresult copy_3d(const CUDA_MEMCPY3D *p, CUstream s, bool sync)
{
	struct copy_req q;

	/* The reserved fields NULL. A mipmap level means something only for
	 * an array side (not implemented here): the H200's driver ignores
	 * srcLOD for linear memory, so it is ignored here too. */
	if (!p || p->reserved0 || p->reserved1)
		return CUDA_ERROR_INVALID_VALUE;
	q = COPY_3D_REQ(p);
	return copy_run(&q, s, sync);
}

/* A context a peer copy names: one of the process's live contexts, or
 * NULL, which the H200's driver takes (as the current context). */
static CUresult peer_ctx(CUcontext c)
{
	return !c || shim_ctx_of(c) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER *p, CUstream s, bool sync)
{
	struct copy_req q;
	CUresult r;

	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	r = peer_ctx(p->srcContext);
	if (!r)
		r = peer_ctx(p->dstContext);
	if (r)
		return r;
	q = COPY_3D_REQ(p);
	return copy_run(&q, s, sync);
}

static CUresult copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx,
			  size_t n, CUstream s, bool sync)
{
	CUresult r = peer_ctx(sctx);
	uint64_t h;

	if (!r)
		r = peer_ctx(dctx);
	if (r)
		return r;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	r = sync ? shim_capture_unsafe() : CUDA_SUCCESS;
	if (!r)
		r = shim_stream(s, &h);
	if (!r)
		r = shim_copy_dtod(dst, src, n, h);
	return r || !sync ? r : shim_stream_sync(h);
}

SHIM_EXPORT CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *p)
{
	return copy_2d(p, NULL, true);
}

/* The driver's alignment rules for device-to-device pitches do not apply
 * to axon's copies: the unaligned form is the same copy. */
SHIM_EXPORT CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *p)
{
	return copy_2d(p, NULL, true);
}

SHIM_EXPORT CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *p, CUstream s)
{
	return copy_2d(p, s, false);
}

SHIM_EXPORT CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *p)
{
	return copy_3d(p, NULL, true);
}

SHIM_EXPORT CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream s)
{
	return copy_3d(p, s, false);
}

SHIM_EXPORT CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *p)
{
	return copy_3d_peer(p, NULL, true);
}

SHIM_EXPORT CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
	return copy_3d_peer(p, s, false);
}

SHIM_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
				  CUcontext sctx, size_t n)
{
	return copy_peer(dst, dctx, src, sctx, n, NULL, true);
}

SHIM_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
				       CUcontext sctx, size_t n, CUstream s)
{
	return copy_peer(dst, dctx, src, sctx, n, s, false);
}

SHIM_EXPORT CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *p)
{
	return SHIM_PER_THREAD(cuMemcpy2D_v2(p));
}

SHIM_EXPORT CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *p)
{
	return SHIM_PER_THREAD(cuMemcpy2DUnaligned_v2(p));
}

SHIM_EXPORT CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *p, CUstream s)
{
	return SHIM_PER_THREAD(cuMemcpy2DAsync_v2(p, s));
}

SHIM_EXPORT CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *p)
{
	return SHIM_PER_THREAD(cuMemcpy3D_v2(p));
}

SHIM_EXPORT CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *p, CUstream s)
{
	return SHIM_PER_THREAD(cuMemcpy3DAsync_v2(p, s));
}

SHIM_EXPORT CUresult cuMemcpy3DPeer_ptds(const CUDA_MEMCPY3D_PEER *p)
{
	return SHIM_PER_THREAD(cuMemcpy3DPeer(p));
}

SHIM_EXPORT CUresult cuMemcpy3DPeerAsync_ptsz(const CUDA_MEMCPY3D_PEER *p, CUstream s)
{
	return SHIM_PER_THREAD(cuMemcpy3DPeerAsync(p, s));
}

SHIM_EXPORT CUresult cuMemcpyPeer_ptds(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
				       CUcontext sctx, size_t n)
{
	return SHIM_PER_THREAD(cuMemcpyPeer(dst, dctx, src, sctx, n));
}

SHIM_EXPORT CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src,
					    CUcontext sctx, size_t n, CUstream s)
{
	return SHIM_PER_THREAD(cuMemcpyPeerAsync(dst, dctx, src, sctx, n, s));
}
