// SPDX-License-Identifier: MIT
/*
 * The cuda backend's side of cuLaunchKernelEx, cuFuncSetAttribute and the
 * tensor-map encoders: each turns axon's validated wire form back into the
 * driver's types and calls the vendor's function. The dispatcher checked
 * every value (ops/launch.c, ops/funcattr.c, ops/tensormap.c); the driver
 * checks again and its verdict is what the client gets.
 */
#include <string.h>

#include "context.h"
#include "launch.h"
#include "collapse.h"
#include "vendor.h"

void cuda_to_cu_attr(const struct axon_launch_attr *a, CUlaunchAttribute *ca)
{
	memset(ca, 0, sizeof(*ca));
	ca->id = (CUlaunchAttributeID)a->id;
	switch (a->id) {
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
		ca->value.clusterDim.x = (uint32_t)a->val[0];
		ca->value.clusterDim.y = (uint32_t)(a->val[0] >> 32);
		ca->value.clusterDim.z = (uint32_t)a->val[1];
		break;
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
		ca->value.preferredClusterDim.x = (uint32_t)a->val[0];
		ca->value.preferredClusterDim.y = (uint32_t)(a->val[0] >> 32);
		ca->value.preferredClusterDim.z = (uint32_t)a->val[1];
		break;
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW: {
		uint32_t hit = (uint32_t)a->val[2];

		ca->value.accessPolicyWindow.base_ptr = (void *)(uintptr_t)a->val[0];
		ca->value.accessPolicyWindow.num_bytes = a->val[1];
		memcpy(&ca->value.accessPolicyWindow.hitRatio, &hit, sizeof(hit));
		ca->value.accessPolicyWindow.hitProp = (CUaccessProperty)(uint32_t)a->val[3];
		ca->value.accessPolicyWindow.missProp =
			(CUaccessProperty)(uint32_t)(a->val[3] >> 32);
		break;
	}
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		ca->value.memSyncDomainMap.default_ = (unsigned char)a->val[0];
		ca->value.memSyncDomainMap.remote = (unsigned char)(a->val[0] >> 8);
		break;
	case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		ca->value.clusterSchedulingPolicyPreference = (CUclusterSchedulingPolicy)a->val[0];
		break;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		ca->value.memSyncDomain = (CUlaunchMemSyncDomain)a->val[0];
		break;
	case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		ca->value.sharedMemCarveout = (unsigned int)a->val[0];
		break;
	case CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING:
		ca->value.nvlinkUtilCentricScheduling = (unsigned int)a->val[0];
		break;
	default:
		/* COOPERATIVE, PROGRAMMATIC_STREAM_SERIALIZATION, PRIORITY:
		 * one int, at the same place in the union. */
		ca->value.cooperative = (int)(int64_t)a->val[0];
		break;
	}
}

CUresult cuda_launch_ex(struct work *w, CUstream cs)
{
	CUlaunchAttribute attrs[AXON_MAX_LAUNCH_ATTRS];
	size_t size = w->launch.args_size;
	void *extra[] = {
		CU_LAUNCH_PARAM_BUFFER_POINTER, w->launch.args,
		CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
		CU_LAUNCH_PARAM_END,
	};
	CUlaunchConfig cfg = {
		.gridDimX = w->launch.grid[0], .gridDimY = w->launch.grid[1],
		.gridDimZ = w->launch.grid[2],
		.blockDimX = w->launch.block[0], .blockDimY = w->launch.block[1],
		.blockDimZ = w->launch.block[2],
		.sharedMemBytes = w->launch.shared_bytes,
		.hStream = cs,
		.attrs = attrs,
		.numAttrs = w->launch.nattrs,
	};
	uint32_t i;

	for (i = 0; i < w->launch.nattrs && i < AXON_MAX_LAUNCH_ATTRS; i++)
		cuda_to_cu_attr(&w->launch.attrs[i], &attrs[i]);
	return vd.cuLaunchKernelEx(&cfg, (CUfunction)w->launch.func->backend_priv, NULL,
				   size ? extra : NULL);
}

/* Dispatcher calls for a client run in its context (context.h). */
int cuda_func_set_attr(struct axond *d, struct client *c, struct func *f, int attr,
		       int value)
{
	bool known = false;
	int old = 0;
	CUresult r;

	(void)d;
	r = cuda_enter(c, f->module->ctx->device);
	if (!r)
		known = vd.cuFuncGetAttribute(&old, (CUfunction_attribute)attr,
					      (CUfunction)f->backend_priv) == CUDA_SUCCESS;
	if (!r)
		r = vd.cuFuncSetAttribute((CUfunction)f->backend_priv,
					  (CUfunction_attribute)attr, value);
	cuda_leave();
	/* A graph node keeps what was checked when it was made; setting the
	 * value it already had (cuBLASLt and CUTLASS do before every GEMM)
	 * changes nothing, and must not empty every cache. */
	if (!r && (!known || old != value))
		collapse_invalidate();
	return r;
}

int cuda_tensor_map_encode(struct axond *d, struct client *c, int dev,
			   const struct axon_tensor_map_req *r, void *out)
{
	CUtensorMap map;
	void *addr = (void *)(uintptr_t)r->global_addr;	/* client and device
							 * addresses are one */
	cuuint64_t dim[5], strides[4];
	cuuint32_t box[5], estr[5];
	int lower[3], upper[3];
	CUresult res;
	int i;

	(void)d;
	/* The ABI's fixed-width fields in the driver's own types. */
	for (i = 0; i < 5; i++) {
		dim[i] = r->global_dim[i];
		box[i] = r->box_dim[i];
		estr[i] = r->elem_strides[i];
		if (i < 4)
			strides[i] = r->global_strides[i];
		if (i < 3) {
			lower[i] = r->lower[i];
			upper[i] = r->upper[i];
		}
	}
	memset(&map, 0, sizeof(map));
	res = cuda_enter(c, dev);
	if (res) {
		cuda_leave();
		return res;
	}
	switch (r->kind) {
	case AXON_TENSOR_MAP_TILED:
		res = vd.cuTensorMapEncodeTiled(&map, (CUtensorMapDataType)r->data_type, r->rank,
						addr, dim, strides,
						box, estr,
						(CUtensorMapInterleave)r->interleave,
						(CUtensorMapSwizzle)r->swizzle,
						(CUtensorMapL2promotion)r->l2_promotion,
						(CUtensorMapFloatOOBfill)r->oob_fill);
		break;
	case AXON_TENSOR_MAP_IM2COL:
		res = vd.cuTensorMapEncodeIm2col(&map, (CUtensorMapDataType)r->data_type,
						 r->rank, addr, dim, strides,
						 lower, upper, r->channels_per_pixel,
						 r->pixels_per_column, estr,
						 (CUtensorMapInterleave)r->interleave,
						 (CUtensorMapSwizzle)r->swizzle,
						 (CUtensorMapL2promotion)r->l2_promotion,
						 (CUtensorMapFloatOOBfill)r->oob_fill);
		break;
	case AXON_TENSOR_MAP_IM2COL_WIDE:
		res = vd.cuTensorMapEncodeIm2colWide(&map, (CUtensorMapDataType)r->data_type,
						     r->rank, addr, dim,
						     strides, r->lower[0], r->upper[0],
						     r->channels_per_pixel, r->pixels_per_column,
						     estr,
						     (CUtensorMapInterleave)r->interleave,
						     (CUtensorMapIm2ColWideMode)r->wide_mode,
						     (CUtensorMapSwizzle)r->swizzle,
						     (CUtensorMapL2promotion)r->l2_promotion,
						     (CUtensorMapFloatOOBfill)r->oob_fill);
		break;
	default:
		res = CUDA_ERROR_INVALID_VALUE;
		break;
	}
	cuda_leave();
	if (res == CUDA_SUCCESS)
		memcpy(out, &map, AXON_TENSOR_MAP_BYTES);
	return res;
}
