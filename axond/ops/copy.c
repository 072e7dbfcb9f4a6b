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
		ok = client_range_valid(c, dst, len) && r->host;
		break;
	case AXON_OP_MEMCPY_DTOH:
		r->type = WORK_DTOH;
		r->host = hflags ? hostmem_translate(c, dst, len) : data_range(c, dst, len);
		ok = r->host && client_range_valid(c, src, len);
		break;
	default:
		r->type = WORK_DTOD;
		ok = client_range_valid(c, dst, len) && client_range_valid(c, src, len);
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
	if (!client_range_valid(o->c, m->dst, extent))
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
