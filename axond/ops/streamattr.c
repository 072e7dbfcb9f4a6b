// SPDX-License-Identifier: MIT
/*
 * AXON_OP_STREAM_SET_ATTR: cuStreamSetAttribute. The attributes a stream
 * takes (the driver's CUstreamAttrID list): an L2 access policy window,
 * the synchronization policy, the priority, the memory-sync domain and its
 * map. Each is checked as the driver checks it (measured on the H200,
 * 580.159.04) and, the window, against the client's own memory: it names
 * addresses, and the daemon lets no client name another's. The values are
 * kept on the stream; the cuda executor gives them to the vendor's stream
 * before it issues the stream's next work (exec.c), so work the backend
 * issues from then on runs with them; work queued earlier and not yet
 * issued does too, as with cuFuncSetAttribute (ops/funcattr.c). The sim
 * keeps them and has nothing to apply them to. Reading them back
 * (cuStreamGetAttribute) is the shim's, from what it set
 * (libcuda-shim/streamattr.c).
 */
#include <cuda.h>
#include "ops.h"
#include "launchattr.h"

static pthread_mutex_t stream_attr_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of a stream attribute, or -1 for an id a stream does not take. */
static int stream_attr_slot(uint32_t id)
{
	switch (id) {
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		return 0;
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		return 1;
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		return 2;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		return 3;
	case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		return 4;
	default:
		return -1;
	}
}

struct stream_attr_req {
	struct stream *stream;
	struct axon_launch_attr attr;
	int slot;
};

int32_t op_stream_set_attr_prep(struct op_ctx *o)
{
	const typeof(o->sqe->stream_set_attr) *q = &o->sqe->stream_set_attr;
	struct stream_attr_req *r = op_req(o, struct stream_attr_req);
	static const uint32_t grid[3] = { 1, 1, 1 };
	const struct axon_device_info *dev;
	struct stream *s;
	int64_t prio;

	if (q->resv0)
		return CUDA_ERROR_INVALID_VALUE;
	s = stream_lookup(o->c, o->sqe->stream);
	if (!s)
		return CUDA_ERROR_INVALID_HANDLE;
	r->slot = stream_attr_slot(q->id);
	if (r->slot < 0)
		return CUDA_ERROR_INVALID_VALUE;
	memset(&r->attr, 0, sizeof(r->attr));
	r->attr.id = q->id;
	memcpy(r->attr.val, q->val, sizeof(r->attr.val));
	switch (q->id) {
	case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		/* AUTO 1 .. BLOCKING_SYNC 4; 0 is no policy. */
		if (q->val[1] || q->val[2] || q->val[3] ||
		    q->val[0] < CU_SYNC_POLICY_AUTO || q->val[0] > CU_SYNC_POLICY_BLOCKING_SYNC)
			return CUDA_ERROR_INVALID_VALUE;
		break;
	case CU_LAUNCH_ATTRIBUTE_PRIORITY:
		/* Any int, clamped to the device's range as at creation. */
		prio = (int64_t)q->val[0];
		if (q->val[1] || q->val[2] || q->val[3] || prio != (int32_t)prio)
			return CUDA_ERROR_INVALID_VALUE;
		prio = prio > 0 ? 0 : prio < AXON_STREAM_PRIORITY_GREATEST ?
		       AXON_STREAM_PRIORITY_GREATEST : prio;
		r->attr.val[0] = (uint64_t)prio;
		break;
	case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		/* "num_bytes must be less than accessPolicyMaxWindowSize"
		 * (CUaccessPolicyWindow); a larger one fails in the driver
		 * only when the executor applies it, too late to tell. */
		dev = &o->d->info->device[s->ctx->device];
		if (q->val[1] >
		    (uint64_t)dev->attr[CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE])
			return CUDA_ERROR_INVALID_VALUE;
		/* and the launch attribute's checks */
		__attribute__((fallthrough));
	default:
		if (axon_launch_attr_check(&r->attr, grid, o->c->params.va_base,
					   o->c->params.va_size))
			return CUDA_ERROR_INVALID_VALUE;
		break;
	}
	r->stream = s;
	return CUDA_SUCCESS;
}

enum op_status op_stream_set_attr_issue(struct op_ctx *o)
{
	struct stream_attr_req *r = op_req(o, struct stream_attr_req);
	struct stream *s = r->stream;

	pthread_mutex_lock(&stream_attr_lock);
	s->attr[r->slot] = r->attr;
	s->attr_set |= 1U << r->slot;
	/* Pairs with the acquire load in the executor (cuda/exec.c). */
	__atomic_store_n(&s->attr_gen, s->attr_gen + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&stream_attr_lock);
	return OP_COMPLETE;
}

unsigned int stream_attrs_copy(struct stream *s, struct axon_launch_attr out[STREAM_NATTRS],
			       uint32_t *gen)
{
	unsigned int set;

	pthread_mutex_lock(&stream_attr_lock);
	memcpy(out, s->attr, sizeof(s->attr));
	set = s->attr_set;
	*gen = s->attr_gen;
	pthread_mutex_unlock(&stream_attr_lock);
	return set;
}
