// SPDX-License-Identifier: MIT
/*
 * cuTensorMapEncodeTiled / Im2col / Im2colWide: the 128-byte CUtensorMap is
 * the driver's private encoding, so the backend makes it (cuda: the vendor's
 * own function; sim: no tensor memory accelerator, NOT_SUPPORTED). Here
 * every argument is checked as the driver documents, and the memory the
 * map describes, from the global address to the last byte its dimensions
 * and strides reach, must lie in one allocation of the client: a map is a
 * pointer the device will follow.
 */
#include <string.h>
#include <cuda.h>
#include "ops.h"

/* Bits per element (packed types: per value, gaps included). */
static unsigned int elem_bits(uint32_t type)
{
	switch (type) {
	case CU_TENSOR_MAP_DATA_TYPE_UINT8:
		return 8;
	case CU_TENSOR_MAP_DATA_TYPE_UINT16:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
	case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
		return 16;
	case CU_TENSOR_MAP_DATA_TYPE_UINT32:
	case CU_TENSOR_MAP_DATA_TYPE_INT32:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
		return 32;
	case CU_TENSOR_MAP_DATA_TYPE_UINT64:
	case CU_TENSOR_MAP_DATA_TYPE_INT64:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
		return 64;
	case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B:
		return 4;	/* 16 values in 8 bytes */
	case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B:
	case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B:
		return 8;	/* 16 values in 16 bytes */
	default:
		return 0;
	}
}

static bool is_float(uint32_t type)
{
	switch (type) {
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
	case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
		return true;
	default:
		return false;
	}
}

static bool packed16(uint32_t type)
{
	return type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B ||
	       type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

/* Bytes the swizzle pattern spans (the inner box dimension's limit). */
static uint32_t swizzle_span(uint32_t swizzle)
{
	switch (swizzle) {
	case CU_TENSOR_MAP_SWIZZLE_32B:
		return 32;
	case CU_TENSOR_MAP_SWIZZLE_64B:
		return 64;
	default:
		return 128;
	}
}

/* The driver's documented rules; 0 or CUDA_ERROR_INVALID_VALUE. */
static int tensor_map_check(const struct axon_tensor_map_req *r, uint64_t *extent)
{
	unsigned int bits = elem_bits(r->data_type);
	uint32_t align = 16, inner, i, min_rank = 1, ncorner = 0;
	unsigned __int128 last;

	if (!bits || r->kind > AXON_TENSOR_MAP_IM2COL_WIDE)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->kind != AXON_TENSOR_MAP_TILED)
		min_rank = 3;
	else if (r->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
		min_rank = 3;
	if (r->rank < min_rank || r->rank > 5)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->interleave > CU_TENSOR_MAP_INTERLEAVE_32B ||
	    r->swizzle > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B ||
	    r->l2_promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
	    r->oob_fill > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->oob_fill && !is_float(r->data_type))
		return CUDA_ERROR_INVALID_VALUE;
	if (r->interleave == CU_TENSOR_MAP_INTERLEAVE_32B &&
	    r->swizzle != CU_TENSOR_MAP_SWIZZLE_32B)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->data_type == CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B &&
	    r->interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->interleave == CU_TENSOR_MAP_INTERLEAVE_32B || packed16(r->data_type))
		align = 32;
	if (!r->global_addr || r->global_addr % align)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < 5; i++) {
		bool in = i < r->rank;

		if (!in) {
			if (r->global_dim[i] || r->elem_strides[i] || r->box_dim[i] ||
			    (i < 4 && r->global_strides[i]))
				return CUDA_ERROR_INVALID_VALUE;
			continue;
		}
		if (!r->global_dim[i] || r->global_dim[i] > (1ULL << 32) ||
		    !r->elem_strides[i] || r->elem_strides[i] > 8)
			return CUDA_ERROR_INVALID_VALUE;
		if (i + 1 < r->rank) {
			uint64_t s = r->global_strides[i];

			if (!s || s % align || s >= (1ULL << 40))
				return CUDA_ERROR_INVALID_VALUE;
		} else if (i < 4 && r->global_strides[i]) {
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	if (packed16(r->data_type) && r->global_dim[0] % 128)
		return CUDA_ERROR_INVALID_VALUE;
	if (r->data_type == CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && r->global_dim[0] % 2)
		return CUDA_ERROR_INVALID_VALUE;

	switch (r->kind) {
	case AXON_TENSOR_MAP_TILED:
		for (i = 0; i < r->rank; i++)
			if (!r->box_dim[i] || r->box_dim[i] > 256)
				return CUDA_ERROR_INVALID_VALUE;
		if (packed16(r->data_type) && r->box_dim[0] != 128)
			return CUDA_ERROR_INVALID_VALUE;
		inner = (uint32_t)(((uint64_t)r->box_dim[0] * bits + 7) / 8);
		if (r->wide_mode || r->channels_per_pixel || r->pixels_per_column)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case AXON_TENSOR_MAP_IM2COL: {
		/* Corner offsets: one per spatial dimension, narrower as
		 * there are more of them. */
		static const int32_t lim[6] = { 0, 0, 0, 32768, 128, 16 };

		ncorner = r->rank - 2;
		for (i = 0; i < 3; i++) {
			if (i >= ncorner) {
				if (r->lower[i] || r->upper[i])
					return CUDA_ERROR_INVALID_VALUE;
				continue;
			}
			if (r->lower[i] < -lim[r->rank] || r->lower[i] >= lim[r->rank] ||
			    r->upper[i] < -lim[r->rank] || r->upper[i] >= lim[r->rank])
				return CUDA_ERROR_INVALID_VALUE;
		}
		if (!r->pixels_per_column || r->pixels_per_column > 1024 || r->wide_mode)
			return CUDA_ERROR_INVALID_VALUE;
		goto pixels;
	}
	case AXON_TENSOR_MAP_IM2COL_WIDE:
		if (r->lower[0] < -32768 || r->lower[0] > 32767 ||
		    r->upper[0] < -32768 || r->upper[0] > 32767 ||
		    r->lower[1] || r->lower[2] || r->upper[1] || r->upper[2] ||
		    r->wide_mode > CU_TENSOR_MAP_IM2COL_WIDE_MODE_W128)
			return CUDA_ERROR_INVALID_VALUE;
		if (r->wide_mode == CU_TENSOR_MAP_IM2COL_WIDE_MODE_W &&
		    (!r->pixels_per_column || r->pixels_per_column > 1024))
			return CUDA_ERROR_INVALID_VALUE;
		/* Wide mode supports only these swizzles. */
		if (r->swizzle != CU_TENSOR_MAP_SWIZZLE_64B &&
		    r->swizzle != CU_TENSOR_MAP_SWIZZLE_128B &&
		    r->swizzle != CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B)
			return CUDA_ERROR_INVALID_VALUE;
pixels:
		for (i = 0; i < 5; i++)
			if (r->box_dim[i])
				return CUDA_ERROR_INVALID_VALUE;
		if (!r->channels_per_pixel || r->channels_per_pixel > 256 ||
		    (packed16(r->data_type) && r->channels_per_pixel != 128))
			return CUDA_ERROR_INVALID_VALUE;
		inner = (uint32_t)(((uint64_t)r->channels_per_pixel * bits + 7) / 8);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (r->interleave == CU_TENSOR_MAP_INTERLEAVE_NONE) {
		if (inner % 16)
			return CUDA_ERROR_INVALID_VALUE;
		if (r->swizzle != CU_TENSOR_MAP_SWIZZLE_NONE && inner > swizzle_span(r->swizzle))
			return CUDA_ERROR_INVALID_VALUE;
	}

	/* The last byte the map can reach, from its first. */
	last = ((unsigned __int128)r->global_dim[0] * bits + 7) / 8;
	for (i = 1; i < r->rank; i++)
		last += (unsigned __int128)(r->global_dim[i] - 1) * r->global_strides[i - 1];
	if (last > UINT64_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	*extent = (uint64_t)last;
	return CUDA_SUCCESS;
}

/* The request, copied out of the data area and checked. */
struct tensor_map_req {
	struct ctx *ctx;
	unsigned char *buf;	/* the data-area request, overwritten with the map */
	uint64_t extent;
	struct axon_tensor_map_req req;
};

int32_t op_tensor_map_encode_prep(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	struct tensor_map_req *r = op_req(o, struct tensor_map_req);
	int32_t res;

	r->ctx = ctx_lookup(o->c, a->handle);
	if (!r->ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	r->buf = data_range(o->c, a->data_off, a->data_len);
	if (!r->buf || a->data_len < sizeof(r->req) || a->data_len < AXON_TENSOR_MAP_BYTES)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&r->req, r->buf, sizeof(r->req));	/* the client may change it under us */
	r->extent = 0;
	res = tensor_map_check(&r->req, &r->extent);
	if (res)
		return res;
	if (!client_range_valid(o->c, r->req.global_addr, r->extent))
		return CUDA_ERROR_INVALID_VALUE;
	if (!o->d->backend->tensor_map_encode)
		return CUDA_ERROR_NOT_SUPPORTED;
	return CUDA_SUCCESS;
}

enum op_status op_tensor_map_encode_issue(struct op_ctx *o)
{
	const struct tensor_map_req *r = op_req(o, struct tensor_map_req);
	unsigned char out[AXON_TENSOR_MAP_BYTES] __attribute__((aligned(64)));

	memset(out, 0, sizeof(out));
	o->res = o->d->backend->tensor_map_encode(o->d, o->c, r->ctx->device, &r->req, out);
	if (!o->res) {
		memcpy(r->buf, out, sizeof(out));
		o->aux[0] = r->extent;	/* lets the client cache the answer */
	}
	return OP_COMPLETE;
}
