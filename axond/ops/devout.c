// SPDX-License-Identifier: MIT
/*
 * AXON_OP_DEVOUT_READ: the shim fetches the device output (kernel printf)
 * the daemon holds for it (../devout.c), of its stdout or its stderr
 * (obj.arg0), into a data-area buffer.
 */
#include <cuda.h>
#include "ops.h"
#include "../devout.h"

struct devout_req {
	void *dst;
};

int32_t op_devout_read_prep(struct op_ctx *o)
{
	const struct axon_sqe *sqe = o->sqe;
	void *dst = data_range(o->c, sqe->obj.data_off, sqe->obj.data_len);

	if (!dst || !sqe->obj.data_len || sqe->obj.arg0 > AXON_DEVOUT_STDERR)
		return CUDA_ERROR_INVALID_VALUE;
	op_req(o, struct devout_req)->dst = dst;
	return CUDA_SUCCESS;
}

enum op_status op_devout_read_issue(struct op_ctx *o)
{
	const struct axon_sqe *sqe = o->sqe;
	size_t left;

	o->aux[0] = devout_take(o->c, (unsigned int)sqe->obj.arg0,
				op_req(o, struct devout_req)->dst,
				sqe->obj.data_len, &left);
	o->aux[1] = left;
	return OP_COMPLETE;
}
