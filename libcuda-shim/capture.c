// SPDX-License-Identifier: MIT
/*
 * Stream capture queries. axon has no stream capture (cuStreamBeginCapture
 * is not implemented), so no stream is ever capturing and these are Local:
 * they check the stream and answer CU_STREAM_CAPTURE_STATUS_NONE. cudart and
 * libraries built on it (cuBLAS, PyTorch's caching allocator) ask before
 * many operations, and treat an error here as fatal.
 */
#include <stddef.h>

#include "shim.h"

static CUresult not_capturing(CUstream s, CUstreamCaptureStatus *status)
{
	uint64_t h;
	CUresult r;

	if (!status)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	*status = CU_STREAM_CAPTURE_STATUS_NONE;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *status)
{
	return not_capturing(s, status);
}

SHIM_EXPORT CUresult cuStreamIsCapturing_ptsz(CUstream s, CUstreamCaptureStatus *status)
{
	return not_capturing(s, status);
}

/* The outputs other than the status mean nothing when not capturing; they
 * are cleared anyway so that a careless caller reads zeros. */
static CUresult capture_info(CUstream s, CUstreamCaptureStatus *status, cuuint64_t *id,
			     CUgraph *graph, const CUgraphNode **deps,
			     const CUgraphEdgeData **edges, size_t *ndeps)
{
	CUresult r = not_capturing(s, status);

	if (r)
		return r;
	if (id)
		*id = 0;
	if (graph)
		*graph = NULL;
	if (deps)
		*deps = NULL;
	if (edges)
		*edges = NULL;
	if (ndeps)
		*ndeps = 0;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo(CUstream s, CUstreamCaptureStatus *status,
					    cuuint64_t *id)
{
	return capture_info(s, status, id, NULL, NULL, NULL, NULL);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_ptsz(CUstream s, CUstreamCaptureStatus *status,
						 cuuint64_t *id)
{
	return capture_info(s, status, id, NULL, NULL, NULL, NULL);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v2(CUstream s, CUstreamCaptureStatus *status,
					       cuuint64_t *id, CUgraph *graph,
					       const CUgraphNode **deps, size_t *ndeps)
{
	return capture_info(s, status, id, graph, deps, NULL, ndeps);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v2_ptsz(CUstream s, CUstreamCaptureStatus *status,
						    cuuint64_t *id, CUgraph *graph,
						    const CUgraphNode **deps, size_t *ndeps)
{
	return capture_info(s, status, id, graph, deps, NULL, ndeps);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v3(CUstream s, CUstreamCaptureStatus *status,
					       cuuint64_t *id, CUgraph *graph,
					       const CUgraphNode **deps,
					       const CUgraphEdgeData **edges, size_t *ndeps)
{
	return capture_info(s, status, id, graph, deps, edges, ndeps);
}

SHIM_EXPORT CUresult cuStreamGetCaptureInfo_v3_ptsz(CUstream s, CUstreamCaptureStatus *status,
						    cuuint64_t *id, CUgraph *graph,
						    const CUgraphNode **deps,
						    const CUgraphEdgeData **edges, size_t *ndeps)
{
	return capture_info(s, status, id, graph, deps, edges, ndeps);
}

/*
 * The thread's capture interaction mode: with no capture it changes no
 * behaviour, but it is state the caller reads back, so it is kept (per
 * thread, as the driver does).
 */
SHIM_EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	static __thread CUstreamCaptureMode current = CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUstreamCaptureMode m;

	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	m = *mode;
	if (m != CU_STREAM_CAPTURE_MODE_GLOBAL && m != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
	    m != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	*mode = current;
	current = m;
	return CUDA_SUCCESS;
}
