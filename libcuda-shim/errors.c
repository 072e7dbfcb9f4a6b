// SPDX-License-Identifier: MIT
/* cuGetErrorName / cuGetErrorString: Local, from the generated table. */
#include <stddef.h>

#include "errors.h"
#include "shim.h"

static const struct shim_error *find(CUresult e)
{
	unsigned int lo = 0, hi = shim_nerrors;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (shim_errors[mid].code == (int)e)
			return &shim_errors[mid];
		if (shim_errors[mid].code < (int)e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

SHIM_EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
	const struct shim_error *e = find(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = e ? e->name : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

SHIM_EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
	const struct shim_error *e = find(error);

	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	*pStr = e ? e->text : NULL;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
