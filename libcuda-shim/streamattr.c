// SPDX-License-Identifier: MIT
/*
 * Stream attributes: cuStreamSetAttribute, cuStreamGetAttribute and
 * cuStreamCopyAttributes for the attributes a stream takes (an L2 access
 * policy window, the synchronization policy, the priority, the memory-sync
 * domain and its map). A set is a synchronous STREAM_SET_ATTR: the daemon
 * checks it (a window must lie in this client's memory) and the backend
 * applies it (axond/ops/streamattr.c); what succeeded is kept here, by the
 * stream's frontier slot, and a get answers from it (Local), with the
 * driver's defaults for what was never set (measured on the H200,
 * 580.159.04: no window, synchronization policy -1, the stream's priority,
 * the domain map {0, 1}, domain 0). The default streams (NULL, legacy,
 * per-thread) are the context's default stream here as everywhere.
 */
#include <string.h>

#include "shim.h"
#include "forkreg.h"

#define NATTRS	5

static const CUstreamAttrID ids[NATTRS] = {
	CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW,
	CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY,
	CU_STREAM_ATTRIBUTE_PRIORITY,
	CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP,
	CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN,
};

/* What was set on each stream, by frontier slot (shim.lock). */
static struct {
	uint64_t handle;
	unsigned int set;	/* a bit per ids[] index */
	CUstreamAttrValue v[NATTRS];
} kept[AXON_MAX_FRONTIER];

static void attrs_forget(void)
{
	memset(kept, 0, sizeof(kept));
}

__attribute__((constructor)) static void register_attrs_forget(void)
{
	shim_fork_register(attrs_forget);
}

static int slot_of(CUstreamAttrID id)
{
	for (int i = 0; i < NATTRS; i++)
		if (ids[i] == id)
			return i;
	return -1;
}

/* The value's wire form (struct axon_launch_attr's val). */
static void to_wire(CUstreamAttrID id, const CUstreamAttrValue *v, uint64_t val[4])
{
	uint32_t hit;

	memset(val, 0, 4 * sizeof(val[0]));
	switch (id) {
	case CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		val[0] = (uint64_t)(uintptr_t)v->accessPolicyWindow.base_ptr;
		val[1] = v->accessPolicyWindow.num_bytes;
		memcpy(&hit, &v->accessPolicyWindow.hitRatio, sizeof(hit));
		val[2] = hit;
		val[3] = (uint64_t)(uint32_t)v->accessPolicyWindow.hitProp |
			 (uint64_t)(uint32_t)v->accessPolicyWindow.missProp << 32;
		break;
	case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		val[0] = v->memSyncDomainMap.default_ | (uint64_t)v->memSyncDomainMap.remote << 8;
		break;
	case CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		val[0] = (uint32_t)v->syncPolicy;
		break;
	case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN:
		val[0] = (uint32_t)v->memSyncDomain;
		break;
	default:	/* PRIORITY */
		val[0] = (uint64_t)(int64_t)v->priority;
		break;
	}
}

static CUresult set_attr(CUstream s, CUstreamAttrID id, const CUstreamAttrValue *v)
{
	struct shim_waiter w = { 0 };
	uint64_t h, val[4];
	int i = slot_of(id);
	uint32_t slot;
	CUresult r;

	if (!v || i < 0)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (r)
		return r;
	to_wire(id, v, val);
	slot = shim_slot(h) % AXON_MAX_FRONTIER;
	shim_lock();
	r = shim_call_locked(&w, axon_prep_stream_set_attr, h, (uint32_t)id, val);
	if (!r) {
		if (kept[slot].handle != h) {
			memset(&kept[slot], 0, sizeof(kept[slot]));
			kept[slot].handle = h;
		}
		kept[slot].v[i] = *v;
		/* As the daemon keeps it: clamped to the device's range. */
		if (id == CU_STREAM_ATTRIBUTE_PRIORITY)
			kept[slot].v[i].priority = v->priority > 0 ? 0 :
				v->priority < AXON_STREAM_PRIORITY_GREATEST ?
				AXON_STREAM_PRIORITY_GREATEST : v->priority;
		kept[slot].set |= 1U << i;
	}
	shim_unlock();
	return r;
}

/* The value of ids[i] on the stream with handle h: set, or the default. */
static CUresult get_attr(CUstream s, uint64_t h, int i, CUstreamAttrValue *out, bool *was_set)
{
	uint32_t slot = shim_slot(h) % AXON_MAX_FRONTIER;
	int prio = 0;
	CUresult r;

	shim_lock();
	*was_set = kept[slot].handle == h && (kept[slot].set & (1U << i));
	if (*was_set)
		*out = kept[slot].v[i];
	shim_unlock();
	if (*was_set)
		return CUDA_SUCCESS;
	memset(out, 0, sizeof(*out));
	switch (ids[i]) {
	case CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		out->syncPolicy = (CUsynchronizationPolicy)-1;	/* none chosen */
		break;
	case CU_STREAM_ATTRIBUTE_PRIORITY:
		r = cuStreamGetPriority(s, &prio);
		if (r)
			return r;
		out->priority = prio;
		break;
	case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		out->memSyncDomainMap.default_ = 0;
		out->memSyncDomainMap.remote = 1;
		break;
	default:
		break;
	}
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamSetAttribute(CUstream s, CUstreamAttrID id,
					  const CUstreamAttrValue *value)
{
	return set_attr(s, id, value);
}

SHIM_EXPORT CUresult cuStreamSetAttribute_ptsz(CUstream s, CUstreamAttrID id,
					       const CUstreamAttrValue *value)
{
	return set_attr(s, id, value);
}

static CUresult get_one(CUstream s, CUstreamAttrID id, CUstreamAttrValue *value)
{
	CUstreamAttrValue v;
	int i = slot_of(id);
	bool was_set;
	uint64_t h;
	CUresult r;

	if (!value || i < 0)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	if (!r)
		r = get_attr(s, h, i, &v, &was_set);
	if (r)
		return r;
	/* Only the member asked for is written, as the driver does. */
	switch (id) {
	case CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		value->accessPolicyWindow = v.accessPolicyWindow;
		break;
	case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		value->memSyncDomainMap = v.memSyncDomainMap;
		break;
	case CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		value->syncPolicy = v.syncPolicy;
		break;
	case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN:
		value->memSyncDomain = v.memSyncDomain;
		break;
	default:
		value->priority = v.priority;
		break;
	}
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuStreamGetAttribute(CUstream s, CUstreamAttrID id, CUstreamAttrValue *value)
{
	return get_one(s, id, value);
}

SHIM_EXPORT CUresult cuStreamGetAttribute_ptsz(CUstream s, CUstreamAttrID id,
					       CUstreamAttrValue *value)
{
	return get_one(s, id, value);
}

/*
 * Every attribute of src onto dst, one set each. A synchronization policy
 * never chosen on src cannot be set (no value means "none"), so dst keeps
 * its own there.
 */
static CUresult copy_attrs(CUstream dst, CUstream src)
{
	CUstreamAttrValue v;
	uint64_t hd, hs;
	bool was_set;
	CUresult r;

	r = shim_stream(dst, &hd);
	if (!r)
		r = shim_stream(src, &hs);
	for (int i = 0; !r && i < NATTRS; i++) {
		r = get_attr(src, hs, i, &v, &was_set);
		if (r || (ids[i] == CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY && !was_set))
			continue;
		r = set_attr(dst, ids[i], &v);
	}
	return r;
}

SHIM_EXPORT CUresult cuStreamCopyAttributes(CUstream dst, CUstream src)
{
	return copy_attrs(dst, src);
}

SHIM_EXPORT CUresult cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src)
{
	return copy_attrs(dst, src);
}
