// SPDX-License-Identifier: MIT
/*
 * cuLaunchKernel, Deferred: pack the parameters into the data area by the
 * layout the daemon returned with the function, queue one SQE, return. The
 * daemon copies the parameters out when it takes the SQE, so the buffer is
 * free as soon as the SQ head passes it. Errors surface at the next
 * synchronising call. Launches with attributes (launchex.c) go the same
 * way as LAUNCH_EX, whose data-area payload is a struct axon_launch_ex,
 * the attributes, then the parameters.
 */
#include <string.h>

#include "launch.h"
#include "ptstream.h"

/*
 * A launch the device could never run fails here, at once, as the driver's
 * does (cudaGetLastError sees it), rather than at the next synchronisation.
 */
static CUresult check_geometry(const unsigned int grid[3], const unsigned int block[3],
			       unsigned int shmem)
{
	const struct axon_device_info *di;
	struct shim_ctx *sc = shim_current_ctx();
	uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
	int i;

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

/* CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE, ended by _END. */
static CUresult parse_extra(void **extra, const void **buf, size_t *buf_size)
{
	uint32_t i;

	for (i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			*buf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			*buf_size = *(size_t *)extra[i + 1];
		else
			return CUDA_ERROR_INVALID_VALUE;
	}
	return *buf ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

static void pack_args(struct shim_func *sf, unsigned char *dst, void **params,
		      const void *buf)
{
	uint32_t i;

	if (buf) {
		memcpy(dst, buf, sf->args_size);
		return;
	}
	for (i = 0; i < sf->nparams; i++)
		memcpy(dst + AXON_PARAM_OFFSET(sf->param[i]), params[i],
		       AXON_PARAM_SIZE(sf->param[i]));
}

/*
 * More than the default 48 KiB of dynamic shared memory needs the
 * function's MAX_DYNAMIC_SHARED_SIZE_BYTES raised first; the driver refuses
 * the launch at once otherwise. Unless cuFuncSetAttribute told us, ask the
 * daemon once per function (only launches this large pay for it). Lock
 * held; it is dropped while waiting, so the entry is looked up again.
 */
#define DEFAULT_MAX_DYN_SHARED	49152

static struct shim_func *learn_max_dyn_shared(CUfunction f, struct shim_func *sf)
{
	struct shim_waiter w = { 0 };

	if (shim_call_locked(&w, axon_prep_func_get_attr, sf->handle,
			     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES))
		return shim_func_of(f);	/* unknown: the daemon decides */
	sf = shim_func_of(f);
	if (sf && sf->max_dyn_shared < 0)
		sf->max_dyn_shared = (int32_t)(int64_t)w.aux[0];
	return sf;
}

CUresult shim_launch(const struct shim_launch *l)
{
	const void *buf = NULL;
	size_t buf_size = 0;
	struct shim_func *sf;
	struct axon_sqe *sqe;
	uint64_t h, id, off, len, args_off = 0;
	CUresult r;

	r = shim_stream(l->stream, &h);
	if (r)
		return r;
	r = check_geometry(l->grid, l->block, l->shmem);
	if (r)
		return r;
	if (l->extra) {
		r = parse_extra(l->extra, &buf, &buf_size);
		if (r || l->params)
			return CUDA_ERROR_INVALID_VALUE;
	}
	shim_lock();
	sf = shim_func_of(l->f);
	if (sf && sf->max_dyn_shared < 0 && l->shmem > DEFAULT_MAX_DYN_SHARED)
		sf = learn_max_dyn_shared(l->f, sf);
	if (!sf) {
		shim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if ((l->extra && buf_size < sf->args_size) || (!l->extra && sf->nparams && !l->params) ||
	    (sf->max_dyn_shared >= 0 && l->shmem > (unsigned int)sf->max_dyn_shared)) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	len = sf->args_size ? sf->args_size : 1;
	if (l->nattrs) {
		args_off = sizeof(struct axon_launch_ex) +
			   (uint64_t)l->nattrs * sizeof(struct axon_launch_attr);
		len = args_off + sf->args_size;
	}
	off = shim_data_alloc(len, &id);
	if (l->nattrs) {
		struct axon_launch_ex *x = (void *)(shim.ring.data + off);

		memset(x, 0, sizeof(*x));
		memcpy(x->grid, l->grid, sizeof(x->grid));
		memcpy(x->block, l->block, sizeof(x->block));
		x->shared_bytes = l->shmem;
		x->nattrs = l->nattrs;
		x->args_off = (uint32_t)args_off;
		memcpy(x->attrs, l->attrs, l->nattrs * sizeof(*l->attrs));
	}
	pack_args(sf, shim.ring.data + off + args_off, l->params, buf);
	sqe = shim_sqe();
	if (!sqe) {
		shim_data_done(id);
		shim_unlock();
		return shim_gone_error();
	}
	if (l->nattrs)
		axon_prep_launch_ex(sqe, h, sf->handle, (uint32_t)off, (uint32_t)len);
	else
		axon_prep_launch(sqe, h, sf->handle, l->grid, l->block, l->shmem,
				 (uint32_t)off);
	axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
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
	const struct shim_launch l = {
		.f = f, .grid = { gx, gy, gz }, .block = { bx, by, bz },
		.shmem = shmem, .stream = s, .params = params, .extra = extra,
	};

	return shim_launch(&l);
}

SHIM_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
					 unsigned int gz, unsigned int bx, unsigned int by,
					 unsigned int bz, unsigned int shmem, CUstream s,
					 void **params, void **extra)
{
	return SHIM_PER_THREAD(cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, extra));
}
