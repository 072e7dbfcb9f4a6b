// SPDX-License-Identifier: MIT
/*
 * The virtual memory management API for clients (cuMemCreate, cuMemMap,
 * cuMemRelease, cuMemRetainAllocationHandle): physical memory a client
 * creates is a daemon object named by a per-client AXON_HANDLE_MEM handle;
 * mapping it at an address of the client's window is MEM_MAP with that
 * handle (op_vmm_map_prep/_issue), unmapping it MEM_UNMAP (ops/mem.c:unmap_alloc, which
 * hands the backing to the backend's phys_unmap after earlier work).
 *
 * Addresses stay client-minted: the shim reserves ranges from its own
 * window (cuMemAddressReserve) and the daemon only checks that a mapping
 * lies in the window, is aligned to the device's granularity and overlaps
 * nothing the client has mapped. The memory is charged when it is created
 * (like MEM_MAP: the arena, the client's cgroup through the kernel),
 * whether or not it is ever mapped, and given back when the last reference
 * and the last mapping are gone, or when the client goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <cuda.h>
#include <axon/libaxon.h>
#include "ops.h"
#include "../memquota.h"
#include "../holdings.h"

/* Live physical allocations one client may hold (handle table size). */
#define VMM_MAX_HANDLES (1u << 20)

struct vmm_client {
	struct handle_table mems;
	struct vmm_phys *list;	/* every live vmm_phys, mapped or not */
};

static struct vmm_client *vmm_of(struct client *c, bool create)
{
	struct vmm_client *v = c->vmm;

	if (v || !create)
		return v;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	if (handle_table_init(&v->mems, VMM_MAX_HANDLES)) {
		free(v);
		return NULL;
	}
	c->vmm = v;
	return v;
}

static struct vmm_phys *phys_lookup(struct client *c, uint64_t handle)
{
	struct vmm_client *v = vmm_of(c, false);

	return v ? handle_lookup(&v->mems, handle, AXON_HANDLE_MEM) : NULL;
}

/* The device's mapping granularity; 2 MiB where the backend gave none. */
static uint64_t granularity(struct axond *d, int dev)
{
	uint64_t g = d->info->device[dev].vmm_granularity;

	return g ? g : 2ULL << 20;
}

/* Frees p and gives its charge back (none left: no reference, no mapping). */
static void phys_destroy(struct axond *d, struct client *c, struct vmm_phys *p)
{
	struct vmm_client *v = c->vmm;

	handle_free(&v->mems, p->handle, AXON_HANDLE_MEM);
	if (p->prev)
		p->prev->next = p->next;
	else
		v->list = p->next;
	if (p->next)
		p->next->prev = p->prev;
	d->backend->phys_free(d, p);
	/* Its mappings left at the client's teardown, and itself. */
	holdings_give(d, c, HOLD_MAPPING, p->maps);
	holdings_give(d, c, HOLD_VMM_OBJECT, 1);
	/* A dead client's accounting was settled when it disconnected, and
	 * the kernel gave its charges back itself. */
	if (!c->dead) {
		mq_used_sub(d, c, p->len);
		client_uncharge(d, c, p->len);
	}
	free(p);
}

struct mem_create_req {
	struct vmm_phys *phys;	/* retain: the handle's memory */
};

/* MEM_CREATE with obj.handle set: one more reference to mapped memory. */
static int32_t mem_retain_prep(struct op_ctx *o)
{
	struct vmm_phys *p = phys_lookup(o->c, o->sqe->obj.handle);

	if (!p || o->sqe->obj.arg0 || o->sqe->obj.arg1)
		return CUDA_ERROR_INVALID_VALUE;
	if (p->refs == UINT32_MAX)
		return CUDA_ERROR_OUT_OF_MEMORY;
	op_req(o, struct mem_create_req)->phys = p;
	return CUDA_SUCCESS;
}

static enum op_status mem_retain_issue(struct op_ctx *o)
{
	struct vmm_phys *p = op_req(o, struct mem_create_req)->phys;

	p->refs++;
	o->aux[0] = p->handle;
	o->aux[1] = p->len;
	return OP_COMPLETE;
}

int32_t op_mem_create_prep(struct op_ctx *o)
{
	struct axond *d = o->d;
	uint64_t len = o->sqe->obj.arg0, dev = o->sqe->obj.arg1;

	if (o->sqe->obj.handle)
		return mem_retain_prep(o);
	if (dev >= d->info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	if (!len || len % granularity(d, (int)dev))
		return CUDA_ERROR_INVALID_VALUE;
	if (!d->backend->phys_create)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* Physical memory is used from now on, mapped or not: the arena and
	 * the client's and its user's quotas must have room for it. */
	if (len > mq_room(d, o->c))
		return CUDA_ERROR_OUT_OF_MEMORY;
	return CUDA_SUCCESS;
}

enum op_status op_mem_create_issue(struct op_ctx *o)
{
	struct client *c = o->c;
	struct axond *d = o->d;
	uint64_t len = o->sqe->obj.arg0, dev = o->sqe->obj.arg1;
	struct vmm_client *v;
	struct vmm_phys *p;
	int ret;

	if (o->sqe->obj.handle)
		return mem_retain_issue(o);
	/* A descriptor in the sim, a driver handle on cuda: bounded. Taking
	 * the holding is the check, so it is issue's. */
	if (holdings_take(d, c, HOLD_VMM_OBJECT)) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	v = vmm_of(c, true);
	p = v ? calloc(1, sizeof(*p)) : NULL;
	if (!p) {
		holdings_give(d, c, HOLD_VMM_OBJECT, 1);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	p->len = len;
	p->device = (int)dev;
	p->refs = 1;
	if (handle_alloc(&v->mems, AXON_HANDLE_MEM, p, &p->handle)) {
		free(p);
		holdings_give(d, c, HOLD_VMM_OBJECT, 1);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	/* The kernel charges the client's cgroup first, as for MEM_MAP. */
	if (client_charge(d, c, len)) {
		handle_free(&v->mems, p->handle, AXON_HANDLE_MEM);
		holdings_give(d, c, HOLD_VMM_OBJECT, 1);
		free(p);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	ret = d->backend->phys_create(d, c, p);
	if (ret) {
		client_uncharge(d, c, len);
		handle_free(&v->mems, p->handle, AXON_HANDLE_MEM);
		holdings_give(d, c, HOLD_VMM_OBJECT, 1);
		free(p);
		o->res = ret;
		return OP_COMPLETE;
	}
	p->next = v->list;
	if (v->list)
		v->list->prev = p;
	v->list = p;
	mq_used_add(d, c, len);
	o->aux[0] = p->handle;
	return OP_COMPLETE;
}

struct mem_release_req {
	struct vmm_phys *phys;
};

int32_t op_mem_release_prep(struct op_ctx *o)
{
	struct vmm_phys *p = phys_lookup(o->c, o->sqe->obj.handle);

	/* A handle the client released already (still mapped) is no longer
	 * its to release. */
	if (!p || !p->refs)
		return CUDA_ERROR_INVALID_VALUE;
	op_req(o, struct mem_release_req)->phys = p;
	return CUDA_SUCCESS;
}

enum op_status op_mem_release_issue(struct op_ctx *o)
{
	struct vmm_phys *p = op_req(o, struct mem_release_req)->phys;

	if (--p->refs == 0 && p->maps == 0)
		phys_destroy(o->d, o->c, p);
	return OP_COMPLETE;
}
/* The part of the window clients map into; the top 1/16 is the daemon's. */
static uint64_t client_window_end(const struct client *c)
{
	return c->params.va_base + c->params.va_size - c->params.va_size / 16;
}

/* Whether [addr, addr+len) overlaps a range still being released. */
static bool overlaps_pending(struct client *c, uint64_t addr, uint64_t len)
{
	struct rangemap_entry *e;
	bool hit;

	pthread_mutex_lock(&c->alloc_lock);
	e = rangemap_find(&c->pending_free, addr);
	if (!e)
		e = rangemap_find_ge(&c->pending_free, addr);
	hit = e && e->base < addr + len;
	pthread_mutex_unlock(&c->alloc_lock);
	return hit;
}

struct vmm_map_req {
	struct ctx *ctx;
	struct vmm_phys *phys;
};

/* MEM_MAP with a MEM handle (cuMemMap). ctx is the live context named. */
int32_t op_vmm_map_prep(struct op_ctx *o, struct ctx *ctx)
{
	struct vmm_map_req *r = op_req(o, struct vmm_map_req);
	struct client *c = o->c;
	uint64_t addr = o->sqe->mem.addr, len = o->sqe->mem.len;
	uint64_t off = o->sqe->mem.resv[1], g;
	struct vmm_phys *p = phys_lookup(c, o->sqe->mem.resv[0]);

	/* A released handle cannot be mapped again (CUDA: invalid handle
	 * value); retaining it first is the way back. */
	if (o->deferred || !p || !p->refs)
		return CUDA_ERROR_INVALID_VALUE;
	g = granularity(o->d, p->device);
	if (!len || addr % g || len % g || off % g || off > p->len ||
	    len > p->len - off || addr < c->params.va_base ||
	    addr + len < addr || addr + len > client_window_end(c))
		return CUDA_ERROR_INVALID_VALUE;
	/*
	 * An earlier unmap of these addresses has not reached the device
	 * yet: mapping now would race with it. The client synchronises and
	 * asks again (the shim does, libcuda-shim/vmm.c).
	 */
	if (overlaps_pending(c, addr, len))
		return CUDA_ERROR_NOT_READY;
	r->ctx = ctx;
	r->phys = p;
	return CUDA_SUCCESS;
}

enum op_status op_vmm_map_issue(struct op_ctx *o)
{
	const struct vmm_map_req *r = op_req(o, struct vmm_map_req);
	struct client *c = o->c;
	struct axond *d = o->d;
	uint64_t addr = o->sqe->mem.addr, len = o->sqe->mem.len;
	uint64_t off = o->sqe->mem.resv[1];
	struct vmm_phys *p = r->phys;
	struct alloc *a;
	int ret;

	/* Each map is a mapping of axond's (the sim's, the driver's); taking
	 * the holding is the check. */
	if (holdings_take(d, c, HOLD_MAPPING)) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		holdings_give(d, c, HOLD_MAPPING, 1);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	a->addr = addr;
	a->len = len;
	a->ctx = r->ctx;
	a->phys = p;
	a->phys_off = off;
	/* The overlap check is the insertion itself, as for MEM_MAP. */
	pthread_mutex_lock(&c->alloc_lock);
	ret = rangemap_insert(&c->allocs, addr, len, a, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
	if (ret) {
		free(a);
		holdings_give(d, c, HOLD_MAPPING, 1);
		o->res = CUDA_ERROR_INVALID_VALUE;	/* something is mapped there */
		return OP_COMPLETE;
	}
	ret = d->backend->phys_map(d, c, addr, len, p, off);
	if (ret) {
		pthread_mutex_lock(&c->alloc_lock);
		rangemap_remove(&c->allocs, addr, NULL);
		pthread_mutex_unlock(&c->alloc_lock);
		holdings_give(d, c, HOLD_MAPPING, 1);
		free(a);
		o->res = ret;
		return OP_COMPLETE;
	}
	p->maps++;
	return OP_COMPLETE;
}

/* Runs once the unmap of one mapping of p reached the device. */
static void phys_unmapped(struct axond *d, struct client *c, void *obj)
{
	struct vmm_phys *p = obj;

	holdings_give(d, c, HOLD_MAPPING, 1);
	if (--p->maps == 0 && p->refs == 0)
		phys_destroy(d, c, p);
}

void vmm_unmap_later(struct axond *d, struct client *c, struct vmm_phys *p)
{
	/* Without the release item p keeps its mapping count and is freed
	 * with the client: never before its backing was unmapped. */
	if (work_release_later(d, c, phys_unmapped, p))
		log_warn("client %llu: no memory to track an unmap; "
			 "its physical memory is freed at disconnect",
			 (unsigned long long)c->id);
}

bool vmm_span_valid(const struct rangemap *allocs, uint64_t addr, uint64_t len)
{
	const struct rangemap_entry *e = rangemap_find(allocs, addr);

	while (e) {
		const struct alloc *a = e->value;
		uint64_t end = e->base + e->len;

		if (!a->phys)
			return false;
		if (addr + len <= end)
			return true;
		e = rangemap_next(allocs, e);
		if (e && e->base != end)
			return false;
	}
	return false;
}

/*
 * Client teardown (client_free, no work of it queued any more): undo every
 * mapping still there, including those whose unmap was skipped because the
 * client died, then free every physical allocation.
 */
static void vmm_client_fini(struct axond *d, struct client *c)
{
	struct vmm_client *v = c->vmm;
	struct rangemap_entry *e;

	if (!v)
		return;
	for (e = rangemap_first(&c->allocs); e; e = rangemap_next(&c->allocs, e)) {
		struct alloc *a = e->value;

		if (a->phys)
			d->backend->phys_unmap(d, c, e->base, e->len, a->phys);
	}
	for (e = rangemap_first(&c->pending_free); e;
	     e = rangemap_next(&c->pending_free, e))
		if (e->value)
			d->backend->phys_unmap(d, c, e->base, e->len, e->value);
	while (v->list)
		phys_destroy(d, c, v->list);
	handle_table_destroy(&v->mems);
	free(v);
	c->vmm = NULL;
}

static const struct client_family_ops vmm_family = {
	.family = CLIENT_FAMILY_VMM,
	.fini = vmm_client_fini,
	.fini_stage = CLIENT_FINI_ALLOCS,
};

static void __attribute__((constructor)) vmm_register_family(void)
{
	client_family_register(&vmm_family);
}
