// SPDX-License-Identifier: MIT
/*
 * Function attributes and what the shim knows about a function locally.
 * cuFuncSetAttribute is Sync (FUNC_SET_ATTR: the daemon checks the value
 * and the backend applies it; cuda calls the driver's); a dynamic shared
 * memory maximum that was set is also kept here, so a launch asking for
 * more fails at once, as the driver's does. The parameter layout, name and
 * module come from what cuModuleGetFunction saved (module.c): Local.
 * A CUkernel is the CUfunction of its first context (library.c), so the
 * cuKernel* forms answer from that function.
 */
#include "shim.h"

SHIM_EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attrib, int value)
{
	struct shim_waiter w = { 0 };
	struct shim_func *sf;
	CUresult r;

	r = shim_ensure_init();
	if (r)
		return r;
	shim_lock();
	sf = shim_func_of(f);
	if (!sf) {
		shim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	/* Whatever it changes, the cached answers go (module.c), before
	 * and after: a query racing with the call must not keep an old one. */
	sf->attr_known = 0;
	r = shim_call_locked(&w, axon_prep_func_set_attr, sf->handle, (uint64_t)attrib,
			     (uint64_t)(int64_t)value);
	/* The entry may have been replaced while the lock was dropped. */
	sf = shim_func_of(f);
	if (sf)
		sf->attr_known = 0;
	if (!r && sf && attrib == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
		sf->max_dyn_shared = value;
	shim_unlock();
	return r;
}

/* Local answers need the saved entry, found under the lock; bad_args (the
 * caller's arguments are not valid) is INVALID_VALUE, checked first. */
static CUresult with_func(CUfunction f, bool bad_args, struct shim_func *out,
			  uint32_t *param, uint32_t index)
{
	struct shim_func *sf;

	if (bad_args)
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	sf = shim_func_of(f);
	if (sf) {
		*out = *sf;
		if (param && index < sf->nparams)
			*param = sf->param[index];
	}
	shim_unlock();
	SHIM_LOCAL();
	return sf ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult param_info(CUfunction f, size_t index, size_t *off, size_t *size)
{
	struct shim_func sf;
	uint32_t p = 0;
	CUresult r;

	r = with_func(f, !off && !size, &sf, &p,
		      index > UINT32_MAX ? UINT32_MAX : (uint32_t)index);
	if (r)
		return r;
	if (index >= sf.nparams)
		return CUDA_ERROR_INVALID_VALUE;
	if (off)
		*off = AXON_PARAM_OFFSET(p);
	if (size)
		*size = AXON_PARAM_SIZE(p);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *off, size_t *size)
{
	return param_info(f, index, off, size);
}

SHIM_EXPORT CUresult cuKernelGetParamInfo(CUkernel k, size_t index, size_t *off, size_t *size)
{
	return param_info((CUfunction)k, index, off, size);
}

SHIM_EXPORT CUresult cuFuncGetName(const char **name, CUfunction f)
{
	struct shim_func sf;
	CUresult r = with_func(f, !name, &sf, NULL, 0);

	if (!r)
		*name = sf.name;	/* lives as long as the function's entry */
	return r;
}

SHIM_EXPORT CUresult cuFuncGetModule(CUmodule *mod, CUfunction f)
{
	struct shim_func sf;
	CUresult r = with_func(f, !mod, &sf, NULL, 0);

	if (!r)
		*mod = (CUmodule)(uintptr_t)sf.module;
	return r;
}

/* Modules are loaded whole (the daemon has no lazy loading): every
 * function handed out is loaded. */
SHIM_EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction f)
{
	struct shim_func sf;
	CUresult r = with_func(f, !state, &sf, NULL, 0);

	if (!r)
		*state = CU_FUNCTION_LOADING_STATE_LOADED;
	return r;
}

SHIM_EXPORT CUresult cuFuncLoad(CUfunction f)
{
	struct shim_func sf;

	return with_func(f, false, &sf, NULL, 0);
}
