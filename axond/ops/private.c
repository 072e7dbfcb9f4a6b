// SPDX-License-Identifier: MIT
/*
 * AXON_OP_PRIVATE_CALL: private driver entry points that a library calls
 * and whose meaning nobody has published. cuBLAS 13.1 calls two slots of
 * the table 21318c60 once per process, on its first GEMM (traced on the
 * H200, driver 580.159.04, tools/cudatrace): slot 51 (ctx, 0, &obj, 0)
 * gives it an object of the driver's, and slot 39 (ctx, obj, &value) a
 * value read from it (7 on the H200). Refusing slot 51 makes cuBLAS fail,
 * or crash. Since only the driver knows the answer, the daemon makes the
 * same calls on the client's own context.
 *
 * cuBLASLt's half-precision heuristics ask the table 1734dc26 (traced on
 * the H200 the same way): slot 4 (&a, &b) hands out two objects of the
 * process once, slot 13 (a, b, 2, 1, &value, 0) asks a value of them (1 on
 * the H200). Refusing the table crashes cuBLASLt (it calls slot 4 through
 * a NULL table); the daemon makes the same calls.
 *
 * The object is a pointer into the daemon: the client gets an index
 * instead, and a query names only an object this client was given, so no
 * client can make the daemon read memory of its choosing.
 */
#include <cuda.h>
#include "ops.h"

struct private_req {
	struct ctx *ctx;
};

int32_t op_private_call_prep(struct op_ctx *o)
{
	struct client *c = o->c;
	struct ctx *ctx = ctx_lookup(c, o->sqe->obj.handle);
	uint64_t call = o->sqe->obj.arg0, arg = o->sqe->obj.arg1;

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!o->d->backend->private_call)
		return CUDA_ERROR_NOT_SUPPORTED;
	switch (call) {
	case AXON_PRIV_CTX_OBJ:
	case AXON_PRIV_LT_OBJS:
		if (arg)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case AXON_PRIV_CTX_OBJ_QUERY:
		/* Only an object of this client, from a context of the same
		 * device: the driver's entry point trusts what it is given. */
		if (!arg || arg > c->priv.nobj || c->priv.obj_dev[arg - 1] != ctx->device)
			return CUDA_ERROR_INVALID_HANDLE;
		break;
	case AXON_PRIV_LT_QUERY:
		/* Small integers only: the entry point is the driver's, and
		 * what it does with them is not known. */
		if ((uint32_t)arg != 1 || !c->priv.lt_pair)
			return CUDA_ERROR_INVALID_HANDLE;
		if (((arg >> 32) & 0xffff) >= AXON_PRIV_LT_ARG_MAX ||
		    (arg >> 48) >= AXON_PRIV_LT_ARG_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	op_req(o, struct private_req)->ctx = ctx;
	return CUDA_SUCCESS;
}

enum op_status op_private_call_issue(struct op_ctx *o)
{
	struct client *c = o->c;
	struct ctx *ctx = op_req(o, struct private_req)->ctx;
	uint64_t call = o->sqe->obj.arg0, arg = o->sqe->obj.arg1, out = 0, idx;

	switch (call) {
	case AXON_PRIV_CTX_OBJ:
		o->res = o->d->backend->private_call(o->d, c, ctx, (unsigned int)call, 0, &out);
		if (o->res)
			return OP_COMPLETE;
		/* The same object again (per context in the driver): one slot.
		 * Whether a new one is needed, and so whether the table is
		 * full, is known only from the driver's answer: this check
		 * cannot move to prepare. */
		for (idx = 0; idx < c->priv.nobj; idx++)
			if (c->priv.obj[idx] == out && c->priv.obj_dev[idx] == ctx->device)
				break;
		if (idx == c->priv.nobj) {
			if (c->priv.nobj == AXON_MAX_PRIV_OBJS) {
				o->res = CUDA_ERROR_OUT_OF_MEMORY;
				return OP_COMPLETE;
			}
			c->priv.obj_dev[idx] = ctx->device;
			c->priv.obj[c->priv.nobj++] = out;
		}
		o->aux[0] = idx + 1;	/* 0 is never a valid object */
		return OP_COMPLETE;
	case AXON_PRIV_CTX_OBJ_QUERY:
		o->res = o->d->backend->private_call(o->d, c, ctx, (unsigned int)call,
						     c->priv.obj[arg - 1], &out);
		o->aux[0] = out;
		return OP_COMPLETE;
	case AXON_PRIV_LT_OBJS:
		/* The pair is the process's (the backend keeps it): the token
		 * only says this client asked for it. */
		o->res = o->d->backend->private_call(o->d, c, ctx, (unsigned int)call, 0, &out);
		if (!o->res)
			c->priv.lt_pair = true;
		o->aux[0] = 1;
		return OP_COMPLETE;
	default:	/* AXON_PRIV_LT_QUERY, the only other one prepare lets by */
		o->res = o->d->backend->private_call(o->d, c, ctx, (unsigned int)call,
						     arg >> 32, &out);
		o->aux[0] = out;
		return OP_COMPLETE;
	}
}
