// SPDX-License-Identifier: MIT
/*
 * Tensor maps (cuTensorMapEncodeTiled, Im2col, Im2colWide,
 * cuTensorMapReplaceAddress). A CUtensorMap is the driver's private 128-byte
 * encoding, so the daemon makes it (TENSOR_MAP_ENCODE, Sync): it checks every
 * argument as the driver documents and that the memory the map spans is the
 * client's, and the backend encodes (cuda: the vendor's own function; sim:
 * CUDA_ERROR_NOT_SUPPORTED, it has no tensor memory accelerator).
 *
 * Programs often encode the same map again for every launch, so the last
 * CACHE_SIZE answers are kept, keyed by the whole request: a hit is given
 * without crossing if the memory the map spans (its extent, which the
 * daemon returned) is still inside one live allocation of ours. The cache
 * also serves cuTensorMapReplaceAddress: the map's bytes find the request
 * that made it, which is encoded again with the new address (and checked
 * again); a map not found there (never made here, or evicted) is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define CACHE_SIZE	256

struct tm_entry {
	struct axon_tensor_map_req req;
	unsigned char map[AXON_TENSOR_MAP_BYTES];
	uint64_t extent;
	bool used;
};

/* Under shim.lock. */
static struct tm_entry cache[CACHE_SIZE];
static unsigned int cache_next;

/* Whether [addr, addr + len) is inside one live allocation of ours. */
static bool still_ours(uint64_t addr, uint64_t len)
{
	CUdeviceptr base;
	size_t size;

	if (cuMemGetAddressRange_v2(&base, &size, (CUdeviceptr)addr) != CUDA_SUCCESS)
		return false;
	return addr - base <= size && len <= size - (addr - base);
}

static struct tm_entry *cache_find(const struct axon_tensor_map_req *req)
{
	unsigned int i;

	for (i = 0; i < CACHE_SIZE; i++)
		if (cache[i].used && !memcmp(&cache[i].req, req, sizeof(*req)))
			return &cache[i];
	return NULL;
}

static CUresult encode(CUtensorMap *out, const struct axon_tensor_map_req *req)
{
	struct shim_waiter w = { 0 };
	struct shim_ctx *sc;
	struct tm_entry *e;
	struct axon_sqe *sqe;
	uint64_t id, off, len = sizeof(*req);
	CUresult r;

	if (!out || ((uintptr_t)out & 63))
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	shim_lock();
	e = cache_find(req);
	if (e) {
		struct tm_entry hit = *e;

		shim_unlock();
		if (still_ours(hit.req.global_addr, hit.extent)) {
			memcpy(out, hit.map, sizeof(hit.map));
			SHIM_LOCAL();
			return CUDA_SUCCESS;
		}
		shim_lock();
	}
	if (len < AXON_TENSOR_MAP_BYTES)
		len = AXON_TENSOR_MAP_BYTES;
	off = shim_data_alloc(len, &id);
	memcpy(shim.ring.data + off, req, sizeof(*req));
	sqe = shim_sqe();
	if (!sqe) {
		shim_data_done(id);
		shim_unlock();
		return shim_gone_error();
	}
	axon_prep_tensor_map_encode(sqe, sc->handle, (uint32_t)off, (uint32_t)len);
	r = shim_sync_op(sqe, &w);
	if (!r) {
		memcpy(out, shim.ring.data + off, AXON_TENSOR_MAP_BYTES);
		e = cache_find(req);
		if (!e) {
			e = &cache[cache_next];
			cache_next = (cache_next + 1) % CACHE_SIZE;
		}
		e->req = *req;
		memcpy(e->map, out, sizeof(e->map));
		e->extent = w.aux[0];
		e->used = true;
	}
	shim_data_done(id);
	shim_unlock();
	return r;
}

/* The parts every kind shares. */
static CUresult fill_common(struct axon_tensor_map_req *q, uint32_t kind,
			    CUtensorMapDataType type, cuuint32_t rank, void *addr,
			    const cuuint64_t *dim, const cuuint64_t *strides,
			    const cuuint32_t *estr, CUtensorMapInterleave interleave,
			    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2,
			    CUtensorMapFloatOOBfill oob)
{
	cuuint32_t i;

	memset(q, 0, sizeof(*q));
	/* Only what copying the arrays needs; the daemon checks the rest. */
	if (rank == 0 || rank > 5 || !dim || !estr || (rank > 1 && !strides))
		return CUDA_ERROR_INVALID_VALUE;
	q->kind = kind;
	q->data_type = (uint32_t)type;
	q->rank = rank;
	q->interleave = (uint32_t)interleave;
	q->swizzle = (uint32_t)swizzle;
	q->l2_promotion = (uint32_t)l2;
	q->oob_fill = (uint32_t)oob;
	q->global_addr = (uint64_t)(uintptr_t)addr;
	for (i = 0; i < rank; i++) {
		q->global_dim[i] = dim[i];
		q->elem_strides[i] = estr[i];
		if (i + 1 < rank)
			q->global_strides[i] = strides[i];
	}
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type,
					    cuuint32_t rank, void *addr, const cuuint64_t *dim,
					    const cuuint64_t *strides, const cuuint32_t *box,
					    const cuuint32_t *estr,
					    CUtensorMapInterleave interleave,
					    CUtensorMapSwizzle swizzle,
					    CUtensorMapL2promotion l2,
					    CUtensorMapFloatOOBfill oob)
{
	struct axon_tensor_map_req q;
	cuuint32_t i;
	CUresult r;

	r = fill_common(&q, AXON_TENSOR_MAP_TILED, type, rank, addr, dim, strides, estr,
			interleave, swizzle, l2, oob);
	if (r || !box)
		return r ? r : CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < rank; i++)
		q.box_dim[i] = box[i];
	return encode(map, &q);
}

SHIM_EXPORT CUresult cuTensorMapEncodeIm2col(CUtensorMap *map, CUtensorMapDataType type,
					     cuuint32_t rank, void *addr, const cuuint64_t *dim,
					     const cuuint64_t *strides, const int *lower,
					     const int *upper, cuuint32_t channels,
					     cuuint32_t pixels, const cuuint32_t *estr,
					     CUtensorMapInterleave interleave,
					     CUtensorMapSwizzle swizzle,
					     CUtensorMapL2promotion l2,
					     CUtensorMapFloatOOBfill oob)
{
	struct axon_tensor_map_req q;
	cuuint32_t i;
	CUresult r;

	r = fill_common(&q, AXON_TENSOR_MAP_IM2COL, type, rank, addr, dim, strides, estr,
			interleave, swizzle, l2, oob);
	if (r || rank < 3 || !lower || !upper)
		return r ? r : CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < rank - 2; i++) {
		q.lower[i] = lower[i];
		q.upper[i] = upper[i];
	}
	q.channels_per_pixel = channels;
	q.pixels_per_column = pixels;
	return encode(map, &q);
}

SHIM_EXPORT CUresult cuTensorMapEncodeIm2colWide(CUtensorMap *map, CUtensorMapDataType type,
						 cuuint32_t rank, void *addr,
						 const cuuint64_t *dim,
						 const cuuint64_t *strides, int lower_w,
						 int upper_w, cuuint32_t channels,
						 cuuint32_t pixels, const cuuint32_t *estr,
						 CUtensorMapInterleave interleave,
						 CUtensorMapIm2ColWideMode mode,
						 CUtensorMapSwizzle swizzle,
						 CUtensorMapL2promotion l2,
						 CUtensorMapFloatOOBfill oob)
{
	struct axon_tensor_map_req q;
	CUresult r;

	r = fill_common(&q, AXON_TENSOR_MAP_IM2COL_WIDE, type, rank, addr, dim, strides,
			estr, interleave, swizzle, l2, oob);
	if (r)
		return r;
	q.lower[0] = lower_w;
	q.upper[0] = upper_w;
	q.channels_per_pixel = channels;
	q.pixels_per_column = pixels;
	q.wide_mode = (uint32_t)mode;
	return encode(map, &q);
}

SHIM_EXPORT CUresult cuTensorMapReplaceAddress(CUtensorMap *map, void *addr)
{
	struct axon_tensor_map_req q;
	unsigned int i;
	bool found = false;

	if (!map || ((uintptr_t)map & 63))
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	for (i = 0; i < CACHE_SIZE && !found; i++) {
		if (cache[i].used && !memcmp(cache[i].map, map, sizeof(cache[i].map))) {
			q = cache[i].req;
			found = true;
		}
	}
	shim_unlock();
	if (!found) {
		shim_log("cuTensorMapReplaceAddress: this map was not encoded by this process "
			 "(or was among the oldest of more than %d); encode it again",
			 CACHE_SIZE);
		return CUDA_ERROR_INVALID_VALUE;
	}
	q.global_addr = (uint64_t)(uintptr_t)addr;
	return encode(map, &q);
}
