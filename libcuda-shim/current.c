// SPDX-License-Identifier: MIT
/*
 * What a call acts on: the calling thread's stack of current contexts
 * (Local: no crossing to push, pop, set or get), the shim's record of a
 * context, and a CUstream resolved to the daemon's stream, NULL naming the
 * current context's default one. Below every module that makes calls: it
 * reads the shim's state and calls nothing.
 */
#include "shim.h"

#define STACK_MAX 32

static __thread uint64_t stack[STACK_MAX];
static __thread int depth;

struct shim_ctx *shim_ctx_of(CUcontext c)
{
	uint64_t h = (uint64_t)(uintptr_t)c;
	struct shim_ctx *sc;

	if (AXON_HANDLE_TYPE(h) != AXON_HANDLE_CTX)
		return NULL;
	sc = &shim.ctx[AXON_HANDLE_INDEX(h) % SHIM_MAX_CTX];
	return sc->handle == h ? sc : NULL;
}

struct shim_ctx *shim_current_ctx(void)
{
	return depth ? shim_ctx_of((CUcontext)(uintptr_t)stack[depth - 1]) : NULL;
}

CUresult shim_get_ctx(struct shim_ctx **out)
{
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	*out = shim_current_ctx();
	return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult shim_ctx_push(uint64_t h)
{
	if (depth == STACK_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	stack[depth++] = h;
	return CUDA_SUCCESS;
}

bool shim_ctx_pop(uint64_t *h)
{
	if (!depth)
		return false;
	depth--;
	if (h)
		*h = stack[depth];
	return true;
}

void shim_ctx_set_top(uint64_t h)
{
	if (depth)
		stack[depth - 1] = h;
	else
		stack[depth++] = h;
}

void shim_ctx_unstack(uint64_t h)
{
	int i;

	for (i = 0; i < depth; i++)
		if (stack[i] == h)
			stack[i] = 0;
}

