// SPDX-License-Identifier: MIT
/*
 * Copies and memsets. The host side of a copy is a range of the client's
 * data area (pageable host memory is staged there by the shim) or, with
 * AXON_COPY_F_HOSTMEM, a range of one of the client's shared host regions
 * (ops/hostmem.c), read or written in place; the device side must lie
 * inside one live allocation of the client.
 */
#include <cuda.h>
#include "ops.h"
#include "hostmem.h"

enum op_status op_memcpy(struct op_ctx *o)
{
	struct client *c = o->c;
	uint64_t dst = o->sqe->copy.dst, src = o->sqe->copy.src;
	uint64_t len = o->sqe->copy.len, hflags = o->sqe->copy.host_flags;
	unsigned char *host = NULL;
	enum work_type type;
	struct work *w;
	bool ok;

	if (o->sqe->copy.resv1 || (hflags & ~AXON_COPY_F_ALL) ||
	    (hflags && o->sqe->opcode == AXON_OP_MEMCPY_DTOD)) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	/* The host side: a shared region of this client's own table (never
	 * another client's), else the client's data area. */
	switch (o->sqe->opcode) {
	case AXON_OP_MEMCPY_HTOD:
		type = WORK_HTOD;
		host = hflags ? hostmem_translate(c, src, len) : data_range(c, src, len);
		ok = client_range_valid(c, dst, len) && host;
		if (ok)
			c->stats.bytes_htod += len;
		break;
	case AXON_OP_MEMCPY_DTOH:
		type = WORK_DTOH;
		host = hflags ? hostmem_translate(c, dst, len) : data_range(c, dst, len);
		ok = host && client_range_valid(c, src, len);
		if (ok)
			c->stats.bytes_dtoh += len;
		break;
	default:
		type = WORK_DTOD;
		ok = client_range_valid(c, dst, len) && client_range_valid(c, src, len);
		break;
	}
	if (!ok) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	w = work_new(o, type);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->copy.dst = dst;
	w->copy.src = src;
	w->copy.len = len;
	w->copy.host = host;
	/* A stream capture keeps these, not staged ones (ops/graph.c). */
	w->copy.shared = hflags != 0;
	return work_submit(o, w);
}

enum op_status op_memset(struct op_ctx *o)
{
	const typeof(o->sqe->memset) *m = &o->sqe->memset;
	uint64_t row, extent;
	struct work *w;

	if ((m->elem_size != 1 && m->elem_size != 2 && m->elem_size != 4) ||
	    !m->height || m->width > (UINT64_MAX / 4) ||
	    (m->elem_size < 4 && m->value >> (8 * m->elem_size))) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	/* Nothing to set: done, as the driver's is. Nothing below may see a
	 * zero row (the pitch check divides by the pitch, which may be 0, and
	 * an empty extent has no range to check). */
	if (!m->width) {
		o->res = CUDA_SUCCESS;
		return OP_COMPLETE;
	}
	row = m->width * m->elem_size;
	if (m->height > 1 && (m->pitch < row ||
			      m->height - 1 > (UINT64_MAX - row) / m->pitch)) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	extent = m->height > 1 ? m->pitch * (m->height - 1) + row : row;
	if (!client_range_valid(o->c, m->dst, extent)) {
		o->res = CUDA_ERROR_INVALID_VALUE;
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
