// SPDX-License-Identifier: MIT
/*
 * cuFuncSetAttribute: the attributes the driver lets a program set, each
 * checked against its documented range and the device, then applied by the
 * backend (the sim keeps them and enforces them at launch; cuda calls the
 * driver). Reading them back is FUNC_GET_ATTR (module.c).
 *
 * The change applies to launches the backend issues from now on; a launch
 * queued earlier and not yet issued sees it too (the cuda backend issues in
 * order shortly after queueing, so only a lowered limit racing a queued
 * launch can tell).
 */
#include <cuda.h>
#include "ops.h"

struct func_set_attr_req {
	struct func *func;
};

int32_t op_func_set_attr_prep(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	struct func *f = func_lookup(o->c, a->handle);
	const struct axon_device_info *dev;
	int64_t v = (int64_t)a->arg1;
	bool ok;

	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (v != (int32_t)v)
		return CUDA_ERROR_INVALID_VALUE;
	dev = &o->d->info->device[f->module->ctx->device];
	switch (a->arg0) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		/* The backend also subtracts the function's static shared
		 * memory (the driver's rule: their sum within the opt-in). */
		ok = v >= 0 &&
		     v <= dev->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN];
		break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		ok = v >= CU_SHAREDMEM_CARVEOUT_DEFAULT && v <= CU_SHAREDMEM_CARVEOUT_MAX_SHARED;
		break;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
		ok = v >= 0 && v <= 16;
		break;
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		ok = v == 0 || v == 1;
		break;
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		ok = v >= CU_CLUSTER_SCHEDULING_POLICY_DEFAULT &&
		     v <= CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING;
		break;
	default:
		/* Read-only attributes and unknown ones, as the driver. */
		ok = false;
		break;
	}
	if (!ok)
		return CUDA_ERROR_INVALID_VALUE;
	if (!o->d->backend->func_set_attr)
		return CUDA_ERROR_NOT_SUPPORTED;
	op_req(o, struct func_set_attr_req)->func = f;
	return CUDA_SUCCESS;
}

enum op_status op_func_set_attr_issue(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;

	o->res = o->d->backend->func_set_attr(o->d, o->c,
					      op_req(o, struct func_set_attr_req)->func,
					      (int)a->arg0, (int)(int64_t)a->arg1);
	return OP_COMPLETE;
}
