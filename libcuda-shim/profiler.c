// SPDX-License-Identifier: MIT
/*
 * Profiler control (cudaProfiler.h): cuProfilerStart and cuProfilerStop
 * mark what a profiler should collect. The profiler that can see the
 * device is one attached to axond, so each call is a synchronous PROFILER
 * op that the daemon makes in this client's context (ops/profiler.c);
 * with no profiler attached both succeed, as the driver's do. Neither has
 * anything to do with the shim's own AXON_PROFILE table (profile.c).
 *
 * cudart's cudaProfilerStart/Stop ask cuGetProcAddress for these, so they
 * are in its table too (gen/gen_shim.py reads cudaProfilerTypedefs.h).
 */
#define __CUDA_API_VERSION_INTERNAL 1	/* cuProfilerInitialize undeprecated */
#include <cudaProfiler.h>

#include "shim.h"

static CUresult profiler(bool start)
{
	struct shim_waiter w = { 0 };
	struct shim_ctx *sc;
	CUresult r = shim_get_ctx(&sc);

	if (r)
		return r;
	return shim_call(&w, axon_prep_profiler, sc->handle, start ? 1 : 0);
}

SHIM_EXPORT CUresult cuProfilerStart(void)
{
	return profiler(true);
}

SHIM_EXPORT CUresult cuProfilerStop(void)
{
	return profiler(false);
}

/* "Starting with CUDA 12.0, it always returns error code
 * CUDA_ERROR_NOT_SUPPORTED" (the driver API's documentation). */
SHIM_EXPORT CUresult cuProfilerInitialize(const char *configFile, const char *outputFile,
					  CUoutput_mode outputMode)
{
	(void)configFile;
	(void)outputFile;
	(void)outputMode;
	return CUDA_ERROR_NOT_SUPPORTED;
}
