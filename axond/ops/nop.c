// SPDX-License-Identifier: MIT
/* AXON_OP_NOP: the whole shape of an op. Used to measure the ring itself. */
#include <cuda.h>
#include "ops.h"

int32_t op_nop_prep(struct op_ctx *o)
{
	(void)o;
	return CUDA_SUCCESS;
}

enum op_status op_nop_issue(struct op_ctx *o)
{
	o->res = 0;
	return OP_COMPLETE;
}
