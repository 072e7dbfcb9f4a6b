// SPDX-License-Identifier: MIT
/*
 * cuLaunchKernel, Deferred: pack the parameters into the data area by the
 * layout the daemon returned with the function, queue one SQE, return. The
 * daemon copies the parameters out when it takes the SQE, so the buffer is
 * free as soon as the SQ head passes it. Errors surface at the next
 * synchronising call.
 */
#include <string.h>

#include "shim.h"

/*
 * A launch the device could never run fails here, at once, as the driver's
 * does (cudaGetLastError sees it), rather than at the next synchronisation.
 */
static CUresult check_geometry(uint64_t stream, const unsigned int grid[3],
			       const unsigned int block[3], unsigned int shmem)
{
	const struct axon_device_info *di;
	struct shim_ctx *sc = shim_current_ctx();
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
	int i;

	(void)stream;
	di = &shim.ring.info->device[sc ? sc->device : 0];
	for (i = 0; i < 3; i++) {
		if (!grid[i] || !block[i] ||
		    grid[i] > (unsigned int)di->attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i] ||
		    block[i] > (unsigned int)di->attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i])
			return CUDA_ERROR_INVALID_VALUE;
	}
	if (threads > (uint64_t)di->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK] ||
	    shmem > (unsigned int)di->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN])
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult launch(CUfunction f, const unsigned int grid[3], const unsigned int block[3],
		       unsigned int shmem, CUstream s, void **params, void **extra)
{
	const void *buf = NULL;
	size_t buf_size = 0;
	struct shim_func *sf;
	struct axon_sqe *sqe;
	uint64_t h, id, off;
	uint32_t i;
	CUresult r;

	r = shim_stream(s, &h);
	if (r)
		return r;
	r = check_geometry(h, grid, block, shmem);
	if (r)
		return r;
	if (extra) {
		/* CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE, ended by _END. */
		for (i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				buf = extra[i + 1];
			else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				buf_size = *(size_t *)extra[i + 1];
			else
				return CUDA_ERROR_INVALID_VALUE;
		}
		if (params || !buf)
			return CUDA_ERROR_INVALID_VALUE;
	}
	shim_lock();
	sf = shim_func_of(f);
	if (!sf) {
		shim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if ((extra && buf_size < sf->args_size) || (!extra && sf->nparams && !params)) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	off = shim_data_alloc(sf->args_size ? sf->args_size : 1, &id);
	if (extra) {
		memcpy(shim.ring.data + off, buf, sf->args_size);
	} else {
		for (i = 0; i < sf->nparams; i++)
			memcpy(shim.ring.data + off + AXON_PARAM_OFFSET(sf->param[i]),
			       params[i], AXON_PARAM_SIZE(sf->param[i]));
	}
	sqe = shim_sqe();
	if (!sqe) {
		shim_data_done(id);
		shim_unlock();
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	}
	sqe->opcode = AXON_OP_LAUNCH;
	sqe->flags = AXON_SQE_F_DEFERRED;
	sqe->stream = h;
	sqe->launch.func = sf->handle;
	memcpy(sqe->launch.grid, grid, sizeof(sqe->launch.grid));
	memcpy(sqe->launch.block, block, sizeof(sqe->launch.block));
	sqe->launch.shared_bytes = shmem;
	sqe->launch.args_off = (uint32_t)off;
	shim_data_release(id, DATA_AFTER_SQ, 0, 0);
	shim_stream_next(h);
	shim_flush();
	shim_unlock();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
				    unsigned int gz, unsigned int bx, unsigned int by,
				    unsigned int bz, unsigned int shmem, CUstream s,
				    void **params, void **extra)
{
	const unsigned int grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };

	return launch(f, grid, block, shmem, s, params, extra);
}

SHIM_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
					 unsigned int gz, unsigned int bx, unsigned int by,
					 unsigned int bz, unsigned int shmem, CUstream s,
					 void **params, void **extra)
{
	return cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra);
}
