// SPDX-License-Identifier: MIT
/*
 * cuLaunchKernelEx and cuLaunchCooperativeKernel: a launch with attributes
 * (LAUNCH_EX). Each CUlaunchAttribute is turned into axon's wire form and
 * checked by the rules the daemon applies again (common/launchattr.h), so a
 * bad one fails here at once, as the driver's launch does, with
 * CUDA_ERROR_INVALID_VALUE for unknown ids.
 *
 * The two event attributes are not sent: PROGRAMMATIC_EVENT and
 * LAUNCH_COMPLETION_EVENT become cuEventRecord on the launch's stream right
 * after it. The event then fires when the kernel has finished, which is no
 * earlier than the driver would fire it (at every block's trigger or exit),
 * so whatever waits on it sees at least what it would natively; only the
 * overlap the programmatic event allows is lost.
 */
#include <string.h>

#include "launch.h"
#include "ptstream.h"
#include "launchattr.h"

#define MAX_EVENTS 2

static CUresult to_wire(const CUlaunchAttribute *ca, struct axon_launch_attr *a)
{
	const CUlaunchAttributeValue *v = &ca->value;
	uint32_t hit;

	memset(a, 0, sizeof(*a));
	a->id = (uint32_t)ca->id;
	switch (ca->id) {
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		a->val[0] = (uint64_t)(uintptr_t)v->accessPolicyWindow.base_ptr;
		a->val[1] = v->accessPolicyWindow.num_bytes;
		memcpy(&hit, &v->accessPolicyWindow.hitRatio, sizeof(hit));
		a->val[2] = hit;
		a->val[3] = (uint64_t)(uint32_t)v->accessPolicyWindow.hitProp |
			    (uint64_t)(uint32_t)v->accessPolicyWindow.missProp << 32;
		break;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
		a->val[0] = v->clusterDim.x | (uint64_t)v->clusterDim.y << 32;
		a->val[1] = v->clusterDim.z;
		break;
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
		a->val[0] = v->preferredClusterDim.x | (uint64_t)v->preferredClusterDim.y << 32;
		a->val[1] = v->preferredClusterDim.z;
		break;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		a->val[0] = v->memSyncDomainMap.default_ |
			    (uint64_t)v->memSyncDomainMap.remote << 8;
		break;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		a->val[0] = (uint32_t)v->clusterSchedulingPolicyPreference;
		break;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		a->val[0] = (uint32_t)v->memSyncDomain;
		break;
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		a->val[0] = v->sharedMemCarveout;
		break;
	case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
		a->val[0] = v->nvlinkUtilCentricScheduling;
		break;
	case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
	case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		/* One int each, at the same place in the union. */
		a->val[0] = (uint64_t)(int64_t)v->cooperative;
		break;
	default:
		/* Unknown, streams-only or graphs-only: the check refuses
		 * them by id. */
		break;
	}
	return CUDA_SUCCESS;
}

/* An event attribute: checked, and kept to be recorded after the launch. */
static CUresult take_event(CUevent ev, int flags, CUevent *events, unsigned int *nev)
{
	CUresult r;

	if (flags != CU_EVENT_RECORD_DEFAULT || *nev == MAX_EVENTS)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuEventQuery(ev);	/* local: only the handle is checked here */
	if (r != CUDA_SUCCESS && r != CUDA_ERROR_NOT_READY)
		return r == CUDA_ERROR_INVALID_HANDLE ? r : CUDA_ERROR_INVALID_HANDLE;
	events[(*nev)++] = ev;
	return CUDA_SUCCESS;
}

static CUresult launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **params,
			  void **extra, bool cooperative)
{
	struct axon_launch_attr attrs[AXON_MAX_LAUNCH_ATTRS];
	struct shim_launch l = {
		.f = f, .stream = cfg->hStream, .params = params, .extra = extra,
		.grid = { cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ },
		.block = { cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ },
		.shmem = cfg->sharedMemBytes, .attrs = attrs,
	};
	CUevent events[MAX_EVENTS];
	unsigned int i, nev = 0;
	CUresult r;

	r = shim_ensure_init();
	if (r)
		return r;
	if (cfg->numAttrs && !cfg->attrs)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < cfg->numAttrs; i++) {
		const CUlaunchAttribute *ca = &cfg->attrs[i];

		switch (ca->id) {
		case CU_LAUNCH_ATTRIBUTE_IGNORE:
			continue;
		case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
			r = take_event(ca->value.programmaticEvent.event,
				       ca->value.programmaticEvent.flags, events, &nev);
			if (r)
				return r;
			continue;
		case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
			r = take_event(ca->value.launchCompletionEvent.event,
				       ca->value.launchCompletionEvent.flags, events, &nev);
			if (r)
				return r;
			continue;
		default:
			break;
		}
		if (l.nattrs == AXON_MAX_LAUNCH_ATTRS)
			return CUDA_ERROR_INVALID_VALUE;
		to_wire(ca, &attrs[l.nattrs]);
		r = axon_launch_attr_check(&attrs[l.nattrs], l.grid, shim.ring.params.va_base,
					   shim.ring.params.va_size);
		if (r)
			return r;
		l.nattrs++;
	}
	if (cooperative) {
		if (l.nattrs == AXON_MAX_LAUNCH_ATTRS)
			return CUDA_ERROR_INVALID_VALUE;
		memset(&attrs[l.nattrs], 0, sizeof(attrs[0]));
		attrs[l.nattrs].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attrs[l.nattrs].val[0] = 1;
		l.nattrs++;
	}
	r = shim_launch(&l);
	for (i = 0; !r && i < nev; i++)
		r = cuEventRecord(events[i], cfg->hStream);
	return r;
}

SHIM_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				      void **kernelParams, void **extra)
{
	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	return launch_ex(config, f, kernelParams, extra, false);
}

SHIM_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
					   void **kernelParams, void **extra)
{
	return SHIM_PER_THREAD(cuLaunchKernelEx(config, f, kernelParams, extra));
}

SHIM_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy,
					       unsigned int gz, unsigned int bx,
					       unsigned int by, unsigned int bz,
					       unsigned int shmem, CUstream s, void **params)
{
	const CUlaunchConfig cfg = {
		.gridDimX = gx, .gridDimY = gy, .gridDimZ = gz,
		.blockDimX = bx, .blockDimY = by, .blockDimZ = bz,
		.sharedMemBytes = shmem, .hStream = s,
	};

	return launch_ex(&cfg, f, params, NULL, true);
}

SHIM_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx,
						    unsigned int gy, unsigned int gz,
						    unsigned int bx, unsigned int by,
						    unsigned int bz, unsigned int shmem,
						    CUstream s, void **params)
{
	return SHIM_PER_THREAD(cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params));
}
