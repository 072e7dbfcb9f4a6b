// SPDX-License-Identifier: MIT
/* AXON_OP_NOP: the whole shape of an op. Used to measure the ring itself. */
#include <cuda.h>
#include "ops.h"

enum op_status op_nop(struct op_ctx *o)
{
	o->res = 0;
	return OP_COMPLETE;
}

/* An op number reserved in the ABI whose handler is not written yet. */
enum op_status op_unbuilt(struct op_ctx *o)
{
	o->res = CUDA_ERROR_NOT_SUPPORTED;
	return OP_COMPLETE;
}
