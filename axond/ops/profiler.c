// SPDX-License-Identifier: MIT
/*
 * AXON_OP_PROFILER: cuProfilerStart and cuProfilerStop. The program's
 * calls mark the part of its run a profiler should collect; the only
 * process that has the device is the daemon, so a profiler (Nsight
 * Systems or Compute with --profile-from-start off) is attached to axond,
 * and the daemon makes the same call in the client's own context. A
 * backend without the call (the sim) has no profiler to tell, and answers
 * as the driver does with none attached: success, whether collection was
 * on or off.
 */
#include <cuda.h>
#include "ops.h"

struct profiler_req {
	struct ctx *ctx;
};

int32_t op_profiler_prep(struct op_ctx *o)
{
	const typeof(o->sqe->profiler) *q = &o->sqe->profiler;
	struct ctx *ctx;

	if (q->resv0 || q->start > 1)
		return CUDA_ERROR_INVALID_VALUE;
	ctx = ctx_lookup(o->c, q->ctx);
	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	op_req(o, struct profiler_req)->ctx = ctx;
	return CUDA_SUCCESS;
}

enum op_status op_profiler_issue(struct op_ctx *o)
{
	struct ctx *ctx = op_req(o, struct profiler_req)->ctx;

	o->res = o->d->backend->profiler ?
		 o->d->backend->profiler(o->d, o->c, ctx, o->sqe->profiler.start == 1) :
		 CUDA_SUCCESS;
	return OP_COMPLETE;
}
