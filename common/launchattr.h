/* SPDX-License-Identifier: MIT */
/*
 * The rules for one cuLaunchKernelEx attribute in axon's wire form (struct
 * axon_launch_attr), shared by the shim (which fails a bad launch at once,
 * as the driver does) and axond (which trusts nothing a client sends).
 * Header-only: both sides compile the same checks.
 *
 * Event attributes (PROGRAMMATIC_EVENT, LAUNCH_COMPLETION_EVENT) never
 * travel: the shim turns them into an EVENT_RECORD after the launch, which
 * fires no earlier than the driver's would (at the kernel's end rather than
 * at its trigger), so every wait on them stays correct.
 */
#ifndef AXON_COMMON_LAUNCHATTR_H
#define AXON_COMMON_LAUNCHATTR_H

#include <stdint.h>
#include <string.h>
#include <cuda.h>
#include <axon/protocol.h>

/* Largest cluster any device allows (non-portable sizes on sm_90). */
#define AXON_MAX_CLUSTER_BLOCKS	16

static inline uint32_t axon_attr_lo(uint64_t v) { return (uint32_t)v; }
static inline uint32_t axon_attr_hi(uint64_t v) { return (uint32_t)(v >> 32); }

/*
 * CUDA_SUCCESS if attribute a may be forwarded for a launch of grid;
 * va_base/va_size: the client's device-address window (an access policy
 * window must lie in it). The rules are the driver's documented ones.
 */
static inline CUresult axon_launch_attr_check(const struct axon_launch_attr *a,
					      const uint32_t grid[3],
					      uint64_t va_base, uint64_t va_size)
{
	uint32_t x, y, z;
	float hit;

	if (a->resv)
		return CUDA_ERROR_INVALID_VALUE;
	switch (a->id) {
	case CU_LAUNCH_ATTRIBUTE_IGNORE:
		return CUDA_SUCCESS;
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: {
		uint32_t hitbits = axon_attr_lo(a->val[2]);

		memcpy(&hit, &hitbits, sizeof(hit));
		if (axon_attr_hi(a->val[2]) || !(hit >= 0.0f && hit <= 1.0f) ||
		    axon_attr_lo(a->val[3]) > CU_ACCESS_PROPERTY_PERSISTING ||
		    axon_attr_hi(a->val[3]) > CU_ACCESS_PROPERTY_PERSISTING)
			return CUDA_ERROR_INVALID_VALUE;
		/* A hint, but it names memory: only the client's own. */
		if (a->val[1] && (a->val[0] < va_base || a->val[1] > va_size ||
				  a->val[0] - va_base > va_size - a->val[1]))
			return CUDA_ERROR_INVALID_VALUE;
		return CUDA_SUCCESS;
	}
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
		x = axon_attr_lo(a->val[0]);
		y = axon_attr_hi(a->val[0]);
		z = axon_attr_lo(a->val[1]);
		if (a->val[1] >> 32 || a->val[2] || a->val[3])
			return CUDA_ERROR_INVALID_VALUE;
		if (!x || !y || !z || (uint64_t)x * y * z > AXON_MAX_CLUSTER_BLOCKS)
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		/* The grid is made of whole clusters (the preferred size
		 * falls back to the required one, so only that must divide). */
		if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
		    (grid[0] % x || grid[1] % y || grid[2] % z))
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		return CUDA_SUCCESS;
	default:
		break;
	}
	/* Every other attribute is one integer in val[0]. */
	if (a->val[1] || a->val[2] || a->val[3])
		return CUDA_ERROR_INVALID_VALUE;
	switch (a->id) {
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		/* Any int: non-zero means on; priorities are clamped by the
		 * driver to the device's range. */
		return (int64_t)a->val[0] == (int32_t)a->val[0] ?
		       CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		return a->val[0] <= CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING ?
		       CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		return a->val[0] <= CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE ?
		       CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		/* Two domain indices (sm_90 has four domains). */
		return a->val[0] >> 16 || (a->val[0] & 0xff) >= 4 ||
		       ((a->val[0] >> 8) & 0xff) >= 4 ?
		       CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		return a->val[0] <= 100 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
		return a->val[0] <= 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
	default:
		/* Unknown ids; SYNCHRONIZATION_POLICY (streams only);
		 * DEVICE_UPDATABLE_KERNEL_NODE (graphs only: an error on a
		 * non-capturing stream); event attributes (see above). */
		return CUDA_ERROR_INVALID_VALUE;
	}
}

#endif
