// SPDX-License-Identifier: MIT
/*
 * The cuda backend's side of CTX_LIMIT: the limit of the client's own
 * driver context on the device (in --isolation=shared the context every
 * client shares), set and read with that context current. The charge was
 * taken before (localmem.c). cuCtxSetLimit waits for the context's work
 * to finish when the stack changes (its documentation), so a set is a
 * synchronous op, as cudaDeviceSetLimit is natively.
 */
#include <cuda.h>

#include "context.h"
#include "ctxlimits.h"
#include "vendor.h"

int cuda_ctx_limit(struct axond *d, struct client *c, int dev, int limit, bool set,
		   uint64_t *value)
{
	size_t v = 0;
	CUresult r;

	(void)d;
	if (set && *value > SIZE_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuda_enter(c, dev);
	if (!r && set)
		r = vd.cuCtxSetLimit((CUlimit)limit, (size_t)*value);
	if (!r)
		r = vd.cuCtxGetLimit(&v, (CUlimit)limit);
	cuda_leave();
	if (!r)
		*value = v;
	return r;
}
