// SPDX-License-Identifier: MIT
/*
 * Kernel launches, plain (LAUNCH) and with attributes (LAUNCH_EX). The
 * packed parameters are copied out of the data area at once (so the buffer
 * is free when sq_head passes); the geometry is checked against the
 * device's limits and each attribute against the driver's rules
 * (common/launchattr.h); pointer arguments are checked by the backend,
 * which alone knows which parameters are pointers.
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "ops.h"
#include "launchattr.h"

/*
 * What LAUNCH and LAUNCH_EX share: the function in the stream's context,
 * the geometry against the device, then a work item with its own copy of
 * the parameters (and of the attributes, in the same allocation).
 */
static enum op_status launch_submit(struct op_ctx *o, struct func *f, const uint32_t grid[3],
				    const uint32_t block[3], uint32_t shared_bytes,
				    const void *args, const struct axon_launch_attr *attrs,
				    uint32_t nattrs)
{
	const struct axon_device_info *dev = &o->d->info->device[f->module->ctx->device];
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
	size_t args_room = ((size_t)f->info.args_size + 7) & ~(size_t)7;
	struct work *w;
	int i;

	for (i = 0; i < 3; i++) {
		if (!grid[i] || !block[i] ||
		    grid[i] > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i] ||
		    block[i] > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i]) {
			o->res = CUDA_ERROR_INVALID_VALUE;
			return OP_COMPLETE;
		}
	}
	/* The function's own dynamic shared memory limit (raised with
	 * FUNC_SET_ATTR) is the backend's to enforce; the device's opt-in
	 * maximum bounds every function. */
	if (threads > (uint64_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] ||
	    shared_bytes > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN]) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	w = work_new(o, WORK_LAUNCH);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->launch.args = malloc(args_room + nattrs * sizeof(*attrs) + 1);
	if (!w->launch.args) {
		free(w);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	memcpy(w->launch.args, args, f->info.args_size);
	w->launch.args_size = f->info.args_size;
	if (nattrs) {
		struct axon_launch_attr *a = (void *)((char *)w->launch.args + args_room);

		memcpy(a, attrs, nattrs * sizeof(*attrs));
		w->launch.attrs = a;
		w->launch.nattrs = nattrs;
	}
	w->launch.func = f;
	memcpy(w->launch.grid, grid, sizeof(w->launch.grid));
	memcpy(w->launch.block, block, sizeof(w->launch.block));
	w->launch.shared_bytes = shared_bytes;
	return work_submit(o, w);
}

static struct func *launch_func(struct op_ctx *o, uint64_t handle)
{
	struct func *f = func_lookup(o->c, handle);

	if (!f || f->module->ctx != o->stream->ctx) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return NULL;
	}
	return f;
}

enum op_status op_launch(struct op_ctx *o)
{
	const typeof(o->sqe->launch) *l = &o->sqe->launch;
	struct func *f = launch_func(o, l->func);
	const void *args;

	if (!f)
		return OP_COMPLETE;
	args = data_range(o->c, l->args_off, f->info.args_size);
	if (!args) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	return launch_submit(o, f, l->grid, l->block, l->shared_bytes, args, NULL, 0);
}

/*
 * cuLaunchKernelEx: the header, attributes and parameters come in the data
 * area (struct axon_launch_ex). The area is the client's and may change
 * under us, so each part is copied before it is checked.
 */
enum op_status op_launch_ex(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	struct axon_launch_attr attrs[AXON_MAX_LAUNCH_ATTRS];
	struct func *f = launch_func(o, a->handle);
	struct axon_launch_ex hdr;
	const unsigned char *p;
	uint32_t i, n = 0;
	uint64_t attrs_end;

	if (!f)
		return OP_COMPLETE;
	p = data_range(o->c, a->data_off, a->data_len);
	if (!p || a->data_len < sizeof(hdr)) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	memcpy(&hdr, p, sizeof(hdr));
	attrs_end = sizeof(hdr) + (uint64_t)hdr.nattrs * sizeof(attrs[0]);
	if (hdr.resv || hdr.nattrs > AXON_MAX_LAUNCH_ATTRS || hdr.args_off % 8 ||
	    hdr.args_off < attrs_end ||
	    (uint64_t)hdr.args_off + f->info.args_size > a->data_len) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	for (i = 0; i < hdr.nattrs; i++) {
		struct axon_launch_attr at;

		memcpy(&at, p + sizeof(hdr) + i * sizeof(at), sizeof(at));
		o->res = axon_launch_attr_check(&at, hdr.grid, o->c->params.va_base,
						o->c->params.va_size);
		if (o->res)
			return OP_COMPLETE;
		if (at.id != CU_LAUNCH_ATTRIBUTE_IGNORE)
			attrs[n++] = at;
	}
	return launch_submit(o, f, hdr.grid, hdr.block, hdr.shared_bytes,
			     p + hdr.args_off, attrs, n);
}
