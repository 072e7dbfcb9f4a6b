// SPDX-License-Identifier: MIT
/*
 * Copies and memsets. The host side of a copy is a range of the client's
 * data area (pageable host memory is staged there by the shim) or, with
 * AXON_COPY_F_HOSTMEM, a range of one of the client's shared host regions
 * (ops/hostmem.c), read or written in place; the device side must lie
 * inside one live allocation of the client or, as under unified
 * addressing, inside one of its shared host regions named by its host
 * address (memory the program pinned is device memory too: XLA memsets and
 * copies registered memory through the host pointer). A region the device
 * may only read (READ_ONLY) is never the target of a write. A 2D copy
 * (MEMCPY_2D) is a rectangle of rows with a pitch on each side, checked
 * span by span.
 */
#include <cuda.h>
#include "ops.h"
#include "hostmem.h"

/* A device side: one live allocation, or one shared region by its device
 * (= host) address. */
static bool device_range(struct client *c, uint64_t addr, uint64_t len, bool write)
{
	return client_range_valid(c, addr, len) ||
	       hostmem_device_span(c, addr, len, write, false);
}

/* A shared region's host side of a device-to-host copy: written. */
static unsigned char *host_written(struct client *c, uint64_t addr, uint64_t len)
{
	return hostmem_read_only(c, addr, len) ? NULL : hostmem_translate(c, addr, len);
}

struct memcpy_req {
	enum work_type type;
	unsigned char *host;	/* the host side, resolved */
};

int32_t op_memcpy_prep(struct op_ctx *o)
{
	struct memcpy_req *r = op_req(o, struct memcpy_req);
	struct client *c = o->c;
	uint64_t dst = o->sqe->copy.dst, src = o->sqe->copy.src;
	uint64_t len = o->sqe->copy.len, hflags = o->sqe->copy.host_flags;
	bool ok;

	if (o->sqe->copy.resv1 || (hflags & ~AXON_COPY_F_ALL) ||
	    (hflags && o->sqe->opcode == AXON_OP_MEMCPY_DTOD))
		return CUDA_ERROR_INVALID_VALUE;
	/* The host side: a shared region of this client's own table (never
	 * another client's), else the client's data area. */
	r->host = NULL;
	switch (o->sqe->opcode) {
	case AXON_OP_MEMCPY_HTOD:
		r->type = WORK_HTOD;
		r->host = hflags ? hostmem_translate(c, src, len) : data_range(c, src, len);
		ok = device_range(c, dst, len, true) && r->host;
		break;
	case AXON_OP_MEMCPY_DTOH:
		r->type = WORK_DTOH;
		r->host = hflags ? host_written(c, dst, len) : data_range(c, dst, len);
		ok = r->host && device_range(c, src, len, false);
		break;
	default:
		r->type = WORK_DTOD;
		ok = device_range(c, dst, len, true) && device_range(c, src, len, false);
		break;
	}
	return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

enum op_status op_memcpy_issue(struct op_ctx *o)
{
	const struct memcpy_req *r = op_req(o, struct memcpy_req);
	struct client *c = o->c;
	struct work *w;

	/* Counted once checked, whether or not the work item is had. */
	if (r->type == WORK_HTOD)
		c->stats.bytes_htod += o->sqe->copy.len;
	else if (r->type == WORK_DTOH)
		c->stats.bytes_dtoh += o->sqe->copy.len;
	w = work_new(o, r->type);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->copy.dst = o->sqe->copy.dst;
	w->copy.src = o->sqe->copy.src;
	w->copy.len = o->sqe->copy.len;
	w->copy.host = r->host;
	/* A stream capture keeps these, not staged ones (ops/graph.c). */
	w->copy.shared = o->sqe->copy.host_flags != 0;
	return work_submit(o, w);
}

struct memset_req {
	uint64_t row;		/* bytes of one row; 0: nothing to set */
};

int32_t op_memset_prep(struct op_ctx *o)
{
	const typeof(o->sqe->memset) *m = &o->sqe->memset;
	struct memset_req *r = op_req(o, struct memset_req);
	uint64_t row, extent;

	r->row = 0;
	if ((m->elem_size != 1 && m->elem_size != 2 && m->elem_size != 4) ||
	    !m->height || m->width > (UINT64_MAX / 4) ||
	    (m->elem_size < 4 && m->value >> (8 * m->elem_size)))
		return CUDA_ERROR_INVALID_VALUE;
	/* Nothing to set: done, as the driver's is. Nothing below may see a
	 * zero row (the pitch check divides by the pitch, which may be 0, and
	 * an empty extent has no range to check). */
	if (!m->width)
		return CUDA_SUCCESS;
	row = m->width * m->elem_size;
	if (m->height > 1 && (m->pitch < row ||
			      m->height - 1 > (UINT64_MAX - row) / m->pitch))
		return CUDA_ERROR_INVALID_VALUE;
	extent = m->height > 1 ? m->pitch * (m->height - 1) + row : row;
	if (!device_range(o->c, m->dst, extent, true))
		return CUDA_ERROR_INVALID_VALUE;
	r->row = row;
	return CUDA_SUCCESS;
}

enum op_status op_memset_issue(struct op_ctx *o)
{
	const typeof(o->sqe->memset) *m = &o->sqe->memset;
	uint64_t row = op_req(o, struct memset_req)->row;
	struct work *w;

	if (!row) {
		o->res = CUDA_SUCCESS;
		return OP_COMPLETE;
	}
	w = work_new(o, WORK_MEMSET);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->memset.dst = m->dst;
	w->memset.width = m->width;
	w->memset.height = m->height;
	w->memset.pitch = m->height > 1 ? m->pitch : row;
	w->memset.value = m->value;
	w->memset.elem_size = m->elem_size;
	return work_submit(o, w);
}

/*
 * The bytes a rectangle of height rows of width bytes, pitch apart, spans
 * from its first byte: 0 when there is nothing to copy, false when a pitch
 * is below the width or the span does not fit in 64 bits.
 */
static bool rect_extent(uint64_t width, uint64_t height, uint64_t pitch, uint64_t *extent)
{
	uint64_t rows;

	*extent = 0;
	if (!width || !height)
		return true;
	if (height == 1) {
		*extent = width;
		return true;
	}
	if (pitch < width)
		return false;
	return !__builtin_mul_overflow(pitch, height - 1, &rows) &&
	       !__builtin_add_overflow(rows, width, extent);
}

/* A rectangle's host side: a shared region's or a data-area range. */
static unsigned char *rect_host(struct client *c, uint64_t at, uint64_t extent, bool shared,
			        bool write)
{
	if (at + extent < at)
		return NULL;
	if (!shared)
		return data_range(c, at, extent);
	return write ? host_written(c, at, extent) : hostmem_translate(c, at, extent);
}

struct memcpy_2d_req {
	uint64_t bytes;		/* width * height; 0: nothing to copy */
	unsigned char *host;	/* the host side, resolved */
};

/*
 * Every row of both sides is checked by checking the span from the first
 * byte of the first row to the last byte of the last one: rows lie in
 * order inside it (pitch >= width), so one live allocation (or the data
 * area, or one shared region) holding the span holds them all.
 */
int32_t op_memcpy_2d_prep(struct op_ctx *o)
{
	const typeof(o->sqe->memcpy_2d) *m = &o->sqe->memcpy_2d;
	struct memcpy_2d_req *r = op_req(o, struct memcpy_2d_req);
	struct client *c = o->c;
	uint64_t dext, sext;
	bool shared = m->host_flags & AXON_COPY_F_HOSTMEM, ok;

	r->bytes = 0;
	r->host = NULL;
	if ((m->host_flags & ~AXON_COPY_F_ALL) || m->dir > AXON_COPY_2D_DTOD ||
	    (m->host_flags && m->dir == AXON_COPY_2D_DTOD) ||
	    !rect_extent(m->width, m->height, m->dst_pitch, &dext) ||
	    !rect_extent(m->width, m->height, m->src_pitch, &sext))
		return CUDA_ERROR_INVALID_VALUE;
	/* Nothing to copy: done, as the driver's is; no range to check. */
	if (!dext)
		return CUDA_SUCCESS;
	switch (m->dir) {
	case AXON_COPY_2D_HTOD:
		r->host = rect_host(c, m->src, sext, shared, false);
		ok = r->host && device_range(c, m->dst, dext, true);
		break;
	case AXON_COPY_2D_DTOH:
		r->host = rect_host(c, m->dst, dext, shared, true);
		ok = r->host && device_range(c, m->src, sext, false);
		break;
	default:
		ok = device_range(c, m->dst, dext, true) &&
		     device_range(c, m->src, sext, false);
		break;
	}
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	r->bytes = (uint64_t)m->width * m->height;
	return CUDA_SUCCESS;
}

enum op_status op_memcpy_2d_issue(struct op_ctx *o)
{
	const typeof(o->sqe->memcpy_2d) *m = &o->sqe->memcpy_2d;
	const struct memcpy_2d_req *r = op_req(o, struct memcpy_2d_req);
	struct client *c = o->c;
	struct work *w;

	if (!r->bytes) {
		o->res = CUDA_SUCCESS;
		return OP_COMPLETE;
	}
	if (m->dir == AXON_COPY_2D_HTOD)
		c->stats.bytes_htod += r->bytes;
	else if (m->dir == AXON_COPY_2D_DTOH)
		c->stats.bytes_dtoh += r->bytes;
	w = work_new(o, WORK_COPY_2D);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->copy2d.dst = m->dst;
	w->copy2d.src = m->src;
	w->copy2d.width = m->width;
	w->copy2d.height = m->height;
	/* One row: the pitches are never used, say the width. */
	w->copy2d.dst_pitch = m->height > 1 ? m->dst_pitch : m->width;
	w->copy2d.src_pitch = m->height > 1 ? m->src_pitch : m->width;
	w->copy2d.host = r->host;
	w->copy2d.dir = m->dir;
	/* A stream capture keeps these, not staged ones (ops/capture.c). */
	w->copy2d.shared = m->host_flags != 0;
	return work_submit(o, w);
}
