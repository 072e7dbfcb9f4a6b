// SPDX-License-Identifier: MIT
/*
 * What a call answers when it cannot be done: libaxon's errors as
 * CUresults, and the error every call answers once a device fault was
 * reported or axond went away (shim.fault, shim.gone). Reads the
 * connection's state, calls nothing: every module may use it.
 */
#include <errno.h>

#include "shim.h"

CUresult shim_status(int ret)
{
	switch (ret) {
	case 0:
		return CUDA_SUCCESS;
	case -ENOMEM:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case -ETIMEDOUT:
		return CUDA_ERROR_TIMEOUT;
	default:
		return CUDA_ERROR_OPERATING_SYSTEM;
	}
}

/*
 * What to answer once axond is gone: the error it left in our page before
 * it went (a device fault that ended every client, axond/main.c), else
 * DEVICE_UNAVAILABLE.
 */
CUresult shim_gone_error(void)
{
	uint32_t e = shim.ring.dpage ? axon_read_once(&shim.ring.dpage->gone_error) : 0;

	if (shim.fault)
		return (CUresult)shim.fault;
	return e ? (CUresult)e : CUDA_ERROR_DEVICE_UNAVAILABLE;
}
