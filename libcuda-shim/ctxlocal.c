// SPDX-License-Identifier: MIT
/*
 * Context facts and preferences the shim answers itself: the context id,
 * the cache-configuration preferences and the limits that spend no memory
 * (cuCtxGetLimit, cuCtxSetLimit). cudart reads them in cudaDeviceGetLimit,
 * cudaDeviceGet/SetCacheConfig and cudaFuncSetCacheConfig.
 *
 * The limits that spend memory, the stack, the malloc heap and the printf
 * FIFO, are the daemon's (CTX_LIMIT, Sync): it charges what a change costs
 * before its backend makes it, so a raise past the client's memory limit
 * is CUDA_ERROR_OUT_OF_MEMORY with nothing changed, and reading one asks
 * it too (a launch of a large frame grows the stack). The device-runtime
 * depths are the same on every device and cannot change what this shim
 * runs, so only their fresh value can be "set". Cache configuration and
 * the two L2 limits are hints the driver itself may ignore (cuda.h says
 * so), so they are kept, per context, and read back.
 */
#include <string.h>

#include "shim.h"

/*
 * A fresh context's limits that do not depend on the device: pending
 * launches 2048 and synchronisation depth 2 (below compute capability 9.0;
 * from 9.0 on the limit does not exist) are cuda.h's (cuCtxSetLimit).
 */
#define DEFAULT_PENDING		2048
#define DEFAULT_SYNC_DEPTH	2

/* Per-context preferences, by context slot (as shim.ctx[]). */
struct ctx_prefs {
	uint64_t ctx;			/* whose they are; else defaults */
	CUfunc_cache cache;
	size_t l2_fetch;		/* MAX_L2_FETCH_GRANULARITY, if set */
	size_t l2_persisting;		/* PERSISTING_L2_CACHE_SIZE, if set */
	bool l2_fetch_set, l2_persisting_set;
};

static struct ctx_prefs prefs[SHIM_MAX_CTX];

/* With shim.lock held. Resets a slot whose context is a new one. */
static struct ctx_prefs *prefs_of(const struct shim_ctx *sc)
{
	struct ctx_prefs *p = &prefs[AXON_HANDLE_INDEX(sc->handle) % SHIM_MAX_CTX];

	if (p->ctx != sc->handle) {
		memset(p, 0, sizeof(*p));
		p->ctx = sc->handle;
		p->cache = CU_FUNC_CACHE_PREFER_NONE;
	}
	return p;
}

/* Unique for the life of the process: handles are never reused (their
 * generation changes when a slot is). */
SHIM_EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *id)
{
	struct shim_ctx *sc = ctx ? shim_ctx_of(ctx) : shim_current_ctx();

	if (!id)
		return CUDA_ERROR_INVALID_VALUE;
	if (!sc)
		return CUDA_ERROR_INVALID_CONTEXT;
	*id = ((unsigned long long)AXON_HANDLE_GEN(sc->handle) << 32) |
	      AXON_HANDLE_INDEX(sc->handle);
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

static const struct axon_device_info *dev_of(const struct shim_ctx *sc)
{
	return &shim.ring.info->device[sc->device];
}

static bool spends_memory(CUlimit limit)
{
	return limit == CU_LIMIT_STACK_SIZE || limit == CU_LIMIT_MALLOC_HEAP_SIZE ||
	       limit == CU_LIMIT_PRINTF_FIFO_SIZE;
}

/* The daemon's limit of the context: read, or set to value; *value gets
 * the value in force. */
static CUresult daemon_limit(const struct shim_ctx *sc, CUlimit limit, bool set,
			     size_t *value)
{
	struct shim_waiter w = { 0 };
	CUresult r;

	r = shim_call(&w, axon_prep_ctx_limit, sc->handle, (uint32_t)limit,
		      set ? AXON_CTX_LIMIT_SET : 0, set ? (uint64_t)*value : 0);
	if (!r)
		*value = (size_t)w.aux[0];
	return r;
}

/*
 * The fixed limits: 0 and *value set, or the error. Also used by
 * cuCtxSetLimit, which accepts exactly these values.
 */
static CUresult fixed_limit(const struct shim_ctx *sc, CUlimit limit, size_t *value)
{
	switch (limit) {
	case CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT:
		*value = DEFAULT_PENDING;
		return CUDA_SUCCESS;
	case CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH:
		if (dev_of(sc)->cc_major >= 9)
			return CUDA_ERROR_UNSUPPORTED_LIMIT;
		*value = DEFAULT_SYNC_DEPTH;
		return CUDA_SUCCESS;
	case CU_LIMIT_SHMEM_SIZE:
		/* Not a CIG context: all of a block's shared memory (what the
		 * H200 reported, its opt-in maximum). */
		*value = (size_t)dev_of(sc)->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
		return CUDA_SUCCESS;
	case CU_LIMIT_CIG_ENABLED:
		*value = 0;	/* cuCtxCreate_v4 makes no CIG contexts */
		return CUDA_SUCCESS;
	case CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED:
		return CUDA_ERROR_UNSUPPORTED_LIMIT;	/* as on a non-CIG context */
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

SHIM_EXPORT CUresult cuCtxGetLimit(size_t *value, CUlimit limit)
{
	struct ctx_prefs *p;
	struct shim_ctx *sc;
	bool set = false;
	CUresult r;

	if (!value)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	if (spends_memory(limit))
		return daemon_limit(sc, limit, false, value);
	SHIM_LOCAL();
	if (limit != CU_LIMIT_MAX_L2_FETCH_GRANULARITY &&
	    limit != CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
		return fixed_limit(sc, limit, value);
	/* The hints: their defaults depend on the device (64 and 11796480
	 * bytes on the H200), so only a value set here can be read back. */
	shim_lock();
	p = prefs_of(sc);
	if (limit == CU_LIMIT_MAX_L2_FETCH_GRANULARITY && p->l2_fetch_set) {
		*value = p->l2_fetch;
		set = true;
	} else if (limit == CU_LIMIT_PERSISTING_L2_CACHE_SIZE && p->l2_persisting_set) {
		*value = p->l2_persisting;
		set = true;
	}
	shim_unlock();
	return set ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

SHIM_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value)
{
	struct ctx_prefs *p;
	struct shim_ctx *sc;
	size_t cur = 0;
	CUresult r;

	r = shim_get_ctx(&sc);
	if (r)
		return r;
	switch (limit) {
	case CU_LIMIT_MAX_L2_FETCH_GRANULARITY:
		if (value > 128)
			return CUDA_ERROR_INVALID_VALUE;
		shim_lock();
		p = prefs_of(sc);
		p->l2_fetch = value;
		p->l2_fetch_set = true;
		shim_unlock();
		return CUDA_SUCCESS;
	case CU_LIMIT_PERSISTING_L2_CACHE_SIZE:
		/* "Can be ignored or clamped": clamped to the device's. */
		if (value > (size_t)dev_of(sc)->attr[CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE])
			value = (size_t)dev_of(sc)->attr[CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE];
		shim_lock();
		p = prefs_of(sc);
		p->l2_persisting = value;
		p->l2_persisting_set = true;
		shim_unlock();
		return CUDA_SUCCESS;
	case CU_LIMIT_SHMEM_SIZE:
	case CU_LIMIT_CIG_ENABLED:
		return CUDA_ERROR_INVALID_VALUE;	/* "can only be queried" */
	case CU_LIMIT_STACK_SIZE:
	case CU_LIMIT_MALLOC_HEAP_SIZE:
	case CU_LIMIT_PRINTF_FIFO_SIZE:
		return daemon_limit(sc, limit, true, &value);
	default:
		/* The device-runtime depths: this shim runs no device-side
		 * launches, so their fresh value is the only one it can keep. */
		r = fixed_limit(sc, limit, &cur);
		if (r == CUDA_SUCCESS && value != cur)
			r = CUDA_ERROR_NOT_SUPPORTED;
		return r;
	}
}

static bool cache_config_valid(CUfunc_cache c)
{
	return c == CU_FUNC_CACHE_PREFER_NONE || c == CU_FUNC_CACHE_PREFER_SHARED ||
	       c == CU_FUNC_CACHE_PREFER_L1 || c == CU_FUNC_CACHE_PREFER_EQUAL;
}

SHIM_EXPORT CUresult cuCtxGetCacheConfig(CUfunc_cache *config)
{
	struct shim_ctx *sc;
	CUresult r;

	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	shim_lock();
	*config = prefs_of(sc)->cache;
	shim_unlock();
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuCtxSetCacheConfig(CUfunc_cache config)
{
	struct shim_ctx *sc;
	CUresult r;

	if (!cache_config_valid(config))
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	shim_lock();
	prefs_of(sc)->cache = config;
	shim_unlock();
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

/* A function's preference: "the driver is free to choose a different
 * configuration" (cuda.h), and there is nothing to read it back with. */
SHIM_EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache config)
{
	bool known;

	if (!cache_config_valid(config))
		return CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	known = shim_func_of(f) != NULL;
	shim_unlock();
	return known ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* A CUkernel is a CUfunction handle here (library.c). */
SHIM_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config, CUdevice dev)
{
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || (unsigned int)dev >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	return cuFuncSetCacheConfig((CUfunction)kernel, config);
}
