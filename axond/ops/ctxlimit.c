// SPDX-License-Identifier: MIT
/*
 * cuCtxGetLimit and cuCtxSetLimit for the limits that spend memory (the
 * stack, the malloc heap, the printf FIFO): the value goes to the backend's
 * context, charged first (localmem.c). The other limits are the shim's
 * (libcuda-shim/ctxlocal.c).
 */
#include <cuda.h>
#include "ops.h"

struct ctx_limit_req {
	struct ctx *ctx;
};

int32_t op_ctx_limit_prep(struct op_ctx *o)
{
	const typeof(o->sqe->ctx_limit) *a = &o->sqe->ctx_limit;
	struct ctx *ctx = ctx_lookup(o->c, a->ctx);

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (a->flags & ~AXON_CTX_LIMIT_F_ALL)
		return CUDA_ERROR_INVALID_VALUE;
	if (!(a->flags & AXON_CTX_LIMIT_SET) && a->value)
		return CUDA_ERROR_INVALID_VALUE;
	if (a->limit != CU_LIMIT_STACK_SIZE && a->limit != CU_LIMIT_MALLOC_HEAP_SIZE &&
	    a->limit != CU_LIMIT_PRINTF_FIFO_SIZE)
		return CUDA_ERROR_INVALID_VALUE;
	if (!o->d->backend->ctx_limit)
		return CUDA_ERROR_NOT_SUPPORTED;
	op_req(o, struct ctx_limit_req)->ctx = ctx;
	return CUDA_SUCCESS;
}

enum op_status op_ctx_limit_issue(struct op_ctx *o)
{
	const typeof(o->sqe->ctx_limit) *a = &o->sqe->ctx_limit;
	uint64_t value = a->value;

	o->res = localmem_limit(o->d, o->c, op_req(o, struct ctx_limit_req)->ctx->device,
				(int)a->limit, a->flags & AXON_CTX_LIMIT_SET, &value);
	if (o->res == CUDA_SUCCESS)
		o->aux[0] = value;
	return OP_COMPLETE;
}
