// SPDX-License-Identifier: MIT
/*
 * Kernel launches. The packed parameters are copied out of the data area
 * at once (so the buffer is free when sq_head passes); the geometry is
 * checked against the device's limits; pointer arguments are checked by
 * the backend, which alone knows which parameters are pointers.
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "ops.h"

enum op_status op_launch(struct op_ctx *o)
{
	const typeof(o->sqe->launch) *l = &o->sqe->launch;
	struct client *c = o->c;
	struct func *f = func_lookup(c, l->func);
	const struct axon_device_info *dev;
	const void *args;
	uint64_t threads;
	struct work *w;
	int i;

	if (!f || f->module->ctx != o->stream->ctx) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	dev = &o->d->info->device[f->module->ctx->device];
	for (i = 0; i < 3; i++) {
		if (!l->grid[i] || !l->block[i] ||
		    l->grid[i] > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i] ||
		    l->block[i] > (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i]) {
			o->res = CUDA_ERROR_INVALID_VALUE;
			return OP_COMPLETE;
		}
	}
	threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
	if (threads > (uint64_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] ||
	    l->shared_bytes >
	    (uint32_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN]) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	args = data_range(c, l->args_off, f->info.args_size);
	if (!args) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	w = work_new(o, WORK_LAUNCH);
	if (!w) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	w->launch.args = malloc(f->info.args_size ? f->info.args_size : 1);
	if (!w->launch.args) {
		free(w);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	memcpy(w->launch.args, args, f->info.args_size);
	w->launch.args_size = f->info.args_size;
	w->launch.func = f;
	memcpy(w->launch.grid, l->grid, sizeof(w->launch.grid));
	memcpy(w->launch.block, l->block, sizeof(w->launch.block));
	w->launch.shared_bytes = l->shared_bytes;
	return work_submit(o, w);
}
