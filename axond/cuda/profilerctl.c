// SPDX-License-Identifier: MIT
/*
 * AXON_OP_PROFILER in the cuda backend: the client's cuProfilerStart or
 * cuProfilerStop, made by the daemon in the client's context, for a
 * profiler attached to axond (not the executor's own timing, profile.c).
 */
#include "../axond.h"
#include "context.h"
#include "profilerctl.h"
#include "vendor.h"

int cuda_profiler(struct axond *d, struct client *c, struct ctx *ctx, bool start)
{
	CUresult r;

	(void)d;
	r = cuda_enter(c, ctx->device);
	if (!r)
		r = start ? vd.cuProfilerStart() : vd.cuProfilerStop();
	cuda_leave();
	return r;
}
