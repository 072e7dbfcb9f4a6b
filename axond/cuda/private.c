// SPDX-License-Identifier: MIT
/*
 * The driver's private entry points in the cuda backend (private.h), called
 * as the math libraries call them, through the driver's export tables.
 */
#include <stdint.h>

#include "../axond.h"
#include "context.h"
#include "private.h"
#include "vendor.h"

/*
 * The table 1734dc26 (ops/private.c): slot 4 gives two objects of the
 * process, asked once and kept, as cuBLASLt keeps them; slot 13 asks a
 * value of them with two small integers. Dispatcher thread only.
 */
static int lt_call(struct client *c, struct ctx *ctx, unsigned int call, uint64_t arg,
		   uint64_t *out)
{
	static const CUuuid table_id = { { 0x17, 0x34, (char)0xdc, 0x26, (char)0x80, 0x0d,
					   0x47, 0x45, (char)0x87, 0x26, (char)0xc0,
					   (char)0xf1, (char)0xe7, (char)0xdd, (char)0x8b,
					   (char)0xca } };
	typedef CUresult (*objs_fn)(void **, void **);
	typedef CUresult (*query_fn)(void *, void *, int, int, int *, void *);
	static void *a, *b;
	const void *const *t = NULL;
	int value = 0;
	CUresult r;

	r = vd.cuGetExportTable((const void **)&t, &table_id);
	if (r || !t || (uintptr_t)t[0] < 14 * sizeof(void *) || !t[4] || !t[13])
		return CUDA_ERROR_NOT_SUPPORTED;
	r = cuda_enter(c, ctx->device);
	if (!r && !a)
		r = ((objs_fn)(uintptr_t)t[4])(&a, &b);
	if (!r && call == AXON_PRIV_LT_QUERY) {
		r = ((query_fn)(uintptr_t)t[13])(a, b, (int)(arg & 0xffff),
						 (int)((arg >> 16) & 0xffff), &value, NULL);
		*out = (uint32_t)value;
	}
	cuda_leave();
	return r;
}

/*
 * AXON_OP_PRIVATE_CALL (ops/private.c): the driver's own private entry
 * point, called as cuBLAS calls it, on the client's context.
 */
int cuda_private_call(struct axond *d, struct client *c, struct ctx *ctx,
			     unsigned int call, uint64_t arg, uint64_t *out)
{
	static const CUuuid table_id = { { 0x21, 0x31, (char)0x8c, 0x60, (char)0x97, 0x14,
					   0x32, 0x48, (char)0x8c, (char)0xa6, 0x41,
					   (char)0xff, 0x73, 0x24, (char)0xc8, (char)0xf2 } };
	typedef CUresult (*slot_fn)(CUcontext, void *, void *, void *);
	const void *const *t = NULL;
	struct cu_gctx *g;
	void *obj = NULL;
	uint64_t value = 0;
	CUresult r;

	(void)d;
	if (call == AXON_PRIV_LT_OBJS || call == AXON_PRIV_LT_QUERY)
		return lt_call(c, ctx, call, arg, out);
	r = vd.cuGetExportTable((const void **)&t, &table_id);
	if (r || !t || (uintptr_t)t[0] < 52 * sizeof(void *) || !t[51] || !t[39])
		return CUDA_ERROR_NOT_SUPPORTED;
	r = cuda_enter(c, ctx->device);
	g = cu_client_gctx(c, ctx->device);
	if (!r && !g)
		r = CUDA_ERROR_INVALID_CONTEXT;
	if (!r && call == AXON_PRIV_CTX_OBJ) {
		r = ((slot_fn)(uintptr_t)t[51])(g->ctx, NULL, &obj, NULL);
		*out = (uint64_t)(uintptr_t)obj;
	} else if (!r) {
		r = ((slot_fn)(uintptr_t)t[39])(g->ctx, (void *)(uintptr_t)arg, &value, NULL);
		*out = value;
	}
	cuda_leave();
	return r;
}
