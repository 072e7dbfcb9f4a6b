// SPDX-License-Identifier: MIT
/*
 * The sim's side of function attributes and launch attributes. The
 * settable function attributes are kept per function and enforced at
 * launch as the driver does: dynamic shared memory up to the function's
 * maximum (48 KiB until raised), a cluster of more than 8 blocks only with
 * NON_PORTABLE_CLUSTER_SIZE_ALLOWED. Clusters themselves are accepted and
 * otherwise ignored: the built-in kernels are host code run block by block,
 * with no distributed shared memory to share. Cooperative launches run as
 * any other (every block of a sim launch is resident in turn, and the
 * built-in kernels do not synchronise the grid); priorities, memory-sync
 * domains, access-policy windows, carve-outs and scheduling preferences are
 * performance hints with nothing to act on.
 */
#include <cuda.h>

#include "../axond.h"
#include "../backend.h"
#include "sim.h"

#define SIM_DEFAULT_MAX_DYN_SHARED	49152	/* the driver's default */
#define SIM_PORTABLE_CLUSTER		8

void sim_fattr_init(struct sim_fattr *fa)
{
	fa->max_dyn_shared = SIM_DEFAULT_MAX_DYN_SHARED;
	fa->carveout = CU_SHAREDMEM_CARVEOUT_DEFAULT;
	fa->cluster[0] = fa->cluster[1] = fa->cluster[2] = 0;
	fa->non_portable = 0;
	fa->sched = CU_CLUSTER_SCHEDULING_POLICY_DEFAULT;
}

bool sim_fattr_get(const struct sim_fattr *fa, int attr, int64_t *value)
{
	switch (attr) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		*value = fa->max_dyn_shared;
		return true;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		*value = fa->carveout;
		return true;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		*value = fa->cluster[attr - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH];
		return true;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		*value = fa->non_portable;
		return true;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		*value = fa->sched;
		return true;
	default:
		return false;
	}
}

/* The dispatcher checked attr and the value's documented range. */
int sim_fattr_set(struct sim_fattr *fa, const struct axon_info *info, int dev,
		  int attr, int value)
{
	switch (attr) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		/* Built-in kernels use no static shared memory. */
		if (value > info->device[dev].attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN])
			return CUDA_ERROR_INVALID_VALUE;
		fa->max_dyn_shared = value;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		fa->carveout = value;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		fa->cluster[attr - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH] = value;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		fa->non_portable = value;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		fa->sched = value;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

/* What the driver refuses at launch that depends on the function. */
int32_t sim_launch_check(const struct sim_fattr *fa, const struct work *w)
{
	uint32_t i;

	if (w->launch.shared_bytes > (uint32_t)fa->max_dyn_shared)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < w->launch.nattrs; i++) {
		const struct axon_launch_attr *a = &w->launch.attrs[i];
		uint64_t n;

		if (a->id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
			continue;
		n = (uint64_t)(uint32_t)a->val[0] * (uint32_t)(a->val[0] >> 32) *
		    (uint32_t)a->val[1];
		if (n > SIM_PORTABLE_CLUSTER && !fa->non_portable)
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		/* A size fixed by the function must be the one asked for. */
		if (fa->cluster[0] && (fa->cluster[0] != (uint32_t)a->val[0] ||
				       fa->cluster[1] != (uint32_t)(a->val[0] >> 32) ||
				       fa->cluster[2] != (uint32_t)a->val[1]))
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	}
	return CUDA_SUCCESS;
}
