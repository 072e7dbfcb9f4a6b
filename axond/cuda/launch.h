/* SPDX-License-Identifier: MIT */
/* The cuda backend's launch attributes, function attributes and tensor
 * maps (launch.c). */
#ifndef AXOND_CUDA_LAUNCH_H
#define AXOND_CUDA_LAUNCH_H

#include <cuda.h>
#include "../axond.h"
#include "../backend.h"

/* Executor: issues a WORK_LAUNCH that carries attributes. */
CUresult cuda_launch_ex(struct work *w, CUstream cs);
/* A validated attribute's wire form in the driver's type (launches and
 * streams alike: CUstreamAttrValue is CUlaunchAttributeValue). */
void cuda_to_cu_attr(const struct axon_launch_attr *a, CUlaunchAttribute *ca);
/* Dispatcher (backend hooks, see backend.h). */
int cuda_func_set_attr(struct axond *d, struct client *c, struct func *f, int attr,
		       int value);
int cuda_tensor_map_encode(struct axond *d, struct client *c, int dev,
			   const struct axon_tensor_map_req *req, void *out);

#endif
