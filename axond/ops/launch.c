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

/* What a launch's prepare resolved and copied: its issue's input. */
struct launch_req {
	struct func *func;
	uint32_t grid[3], block[3], shared_bytes;
	const void *args;		/* the parameters, in the data area */
	uint32_t nattrs;
	struct axon_launch_attr attrs[AXON_MAX_LAUNCH_ATTRS];
};

/*
 * What LAUNCH and LAUNCH_EX share: the function in the stream's context
 * (launch_func), the geometry against the device (launch_check), then a
 * work item with its own copy of the parameters (and of the attributes, in
 * the same allocation).
 */
static int32_t launch_check(struct op_ctx *o, const struct launch_req *r)
{
	const struct axon_device_info *dev =
		&o->d->info->device[r->func->module->ctx->device];
	uint64_t threads = (uint64_t)r->block[0] * r->block[1] * r->block[2];
	int i;

	for (i = 0; i < 3; i++) {
		if (!r->grid[i] || !r->block[i] ||
		    r->grid[i] > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i] ||
		    r->block[i] > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i])
			return CUDA_ERROR_INVALID_VALUE;
	}
	/* The function's own dynamic shared memory limit (raised with
	 * FUNC_SET_ATTR) is the backend's to enforce; the device's opt-in
	 * maximum bounds every function. */
	if (threads > (uint64_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] ||
	    r->shared_bytes > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN])
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static enum op_status launch_issue(struct op_ctx *o)
{
	const struct launch_req *r = op_req(o, struct launch_req);
	struct func *f = r->func;
	size_t args_room = ((size_t)f->info.args_size + 7) & ~(size_t)7;
	struct work *w;

	/* A frame larger than the stack: the driver grows it at the launch. */
	o->res = localmem_launch(o->d, o->c, f);
	if (o->res)
		return OP_COMPLETE;
	w = work_new(o, WORK_LAUNCH);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->launch.args = malloc(args_room + r->nattrs * sizeof(r->attrs[0]) + 1);
	if (!w->launch.args) {
		free(w);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	memcpy(w->launch.args, r->args, f->info.args_size);
	w->launch.args_size = f->info.args_size;
	if (r->nattrs) {
		struct axon_launch_attr *a = (void *)((char *)w->launch.args + args_room);

		memcpy(a, r->attrs, r->nattrs * sizeof(r->attrs[0]));
		w->launch.attrs = a;
		w->launch.nattrs = r->nattrs;
	}
	w->launch.func = f;
	memcpy(w->launch.grid, r->grid, sizeof(w->launch.grid));
	memcpy(w->launch.block, r->block, sizeof(w->launch.block));
	w->launch.shared_bytes = r->shared_bytes;
	return work_submit(o, w);
}

static struct func *launch_func(struct op_ctx *o, uint64_t handle)
{
	struct func *f = func_lookup(o->c, handle);

	if (!f || f->module->ctx != o->stream->ctx)
		return NULL;
	return f;
}

int32_t op_launch_prep(struct op_ctx *o)
{
	const typeof(o->sqe->launch) *l = &o->sqe->launch;
	struct launch_req *r = op_req(o, struct launch_req);

	r->func = launch_func(o, l->func);
	if (!r->func)
		return CUDA_ERROR_INVALID_HANDLE;
	r->args = data_range(o->c, l->args_off, r->func->info.args_size);
	if (!r->args)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(r->grid, l->grid, sizeof(r->grid));
	memcpy(r->block, l->block, sizeof(r->block));
	r->shared_bytes = l->shared_bytes;
	r->nattrs = 0;
	return launch_check(o, r);
}

enum op_status op_launch_issue(struct op_ctx *o)
{
	return launch_issue(o);
}

/*
 * cuLaunchKernelEx: the header, attributes and parameters come in the data
 * area (struct axon_launch_ex). The area is the client's and may change
 * under us, so each part is copied before it is checked.
 */
int32_t op_launch_ex_prep(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	struct launch_req *r = op_req(o, struct launch_req);
	struct axon_launch_ex hdr;
	const unsigned char *p;
	uint64_t attrs_end;
	uint32_t i;
	int32_t res;

	r->func = launch_func(o, a->handle);
	if (!r->func)
		return CUDA_ERROR_INVALID_HANDLE;
	p = data_range(o->c, a->data_off, a->data_len);
	if (!p || a->data_len < sizeof(hdr))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&hdr, p, sizeof(hdr));
	attrs_end = sizeof(hdr) + (uint64_t)hdr.nattrs * sizeof(r->attrs[0]);
	if (hdr.resv || hdr.nattrs > AXON_MAX_LAUNCH_ATTRS || hdr.args_off % 8 ||
	    hdr.args_off < attrs_end ||
	    (uint64_t)hdr.args_off + r->func->info.args_size > a->data_len)
		return CUDA_ERROR_INVALID_VALUE;
	r->nattrs = 0;
	for (i = 0; i < hdr.nattrs; i++) {
		struct axon_launch_attr at;

		memcpy(&at, p + sizeof(hdr) + i * sizeof(at), sizeof(at));
		res = axon_launch_attr_check(&at, hdr.grid, o->c->params.va_base,
					     o->c->params.va_size);
		if (res)
			return res;
		if (at.id != CU_LAUNCH_ATTRIBUTE_IGNORE)
			r->attrs[r->nattrs++] = at;
	}
	memcpy(r->grid, hdr.grid, sizeof(r->grid));
	memcpy(r->block, hdr.block, sizeof(r->block));
	r->shared_bytes = hdr.shared_bytes;
	r->args = p + hdr.args_off;
	return launch_check(o, r);
}

enum op_status op_launch_ex_issue(struct op_ctx *o)
{
	return launch_issue(o);
}
