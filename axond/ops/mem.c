// SPDX-License-Identifier: MIT
/*
 * Device memory: backing client-minted ranges (MEM_MAP), releasing them
 * (MEM_UNMAP) and reporting free/total. A client mints addresses in its own
 * window; the daemon checks the range, charges what the device will spend
 * on it (the granules it backs that no other allocation of the client's
 * backs already: granules.h) against the client's credit (deferred) or
 * against the arena (sync), and backs it in order before any later
 * operation can name it.
 */
#include <stdlib.h>
#include <cuda.h>
#include <axon/libaxon.h>
#include "ops.h"
#include "../memquota.h"

static uint64_t arena_total(struct axond *d, int dev)
{
	return d->info->device[dev].total_mem;
}

/* What MEM_MAP's prepare resolved (without a MEM handle). */
struct mem_map_req {
	struct ctx *ctx;
	uint64_t need;			/* bytes of granules it newly backs */
	uint64_t from_credit, beyond;	/* of need: charged to the credit, past it */
};

/* The part of the window clients mint from; the top 1/16 is the daemon's. */
static uint64_t client_window_end(const struct client *c)
{
	return c->params.va_base + c->params.va_size - c->params.va_size / 16;
}

int32_t op_mem_map_prep(struct op_ctx *o)
{
	struct mem_map_req *r = op_req(o, struct mem_map_req);
	struct client *c = o->c;
	uint64_t addr = o->sqe->mem.addr, len = o->sqe->mem.len;
	struct ctx *ctx = ctx_lookup(c, o->sqe->mem.ctx);
	uint64_t need, from_credit, beyond;

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	/* With a MEM handle: cuMemMap of physical memory (ops/vmm.c). */
	if (o->sqe->mem.resv[0])
		return op_vmm_map_prep(o, ctx);
	if (!len || (addr % AXON_MINT_ALIGN) || addr < c->params.va_base ||
	    addr + len < addr || addr + len > client_window_end(c) ||
	    o->sqe->mem.resv[0] || o->sqe->mem.resv[1])
		return CUDA_ERROR_INVALID_VALUE;
	/* The device spends whole granules, once per granule however many
	 * allocations share it: that is what is charged. */
	need = granules_need(&c->granules, addr, len);
	from_credit = need < c->mint_credit ? need : c->mint_credit;
	beyond = need - from_credit;
	/* Past the credit the rest must fit in the arena and in the client's
	 * and its user's quotas (the credit was counted against them when
	 * reserved). Deferred minting must stay within the credit the shim
	 * knows of: what is left plus what module globals took of it since
	 * it last heard (mint.c); past that, ask. */
	if (beyond && ((o->deferred && beyond > c->credit_lent) || beyond > mq_room(o->d, c))) 
		return CUDA_ERROR_OUT_OF_MEMORY;
	r->ctx = ctx;
	r->need = need;
	r->from_credit = from_credit;
	r->beyond = beyond;
	return CUDA_SUCCESS;
}

enum op_status op_mem_map_issue(struct op_ctx *o)
{
	const struct mem_map_req *r = op_req(o, struct mem_map_req);
	struct client *c = o->c;
	struct axond *d = o->d;
	uint64_t addr = o->sqe->mem.addr, len = o->sqe->mem.len;
	struct alloc *a;
	int ret;

	if (o->sqe->mem.resv[0])
		return op_vmm_map_issue(o);
	a = calloc(1, sizeof(*a));
	if (!a) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	a->addr = addr;
	a->len = len;
	a->ctx = r->ctx;
	/* The overlap check is the insertion itself (it refuses a range
	 * that overlaps a live one), so it stays here, after the
	 * allocation, as before the split. */
	pthread_mutex_lock(&c->alloc_lock);
	ret = rangemap_insert(&c->allocs, addr, len, a, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
	if (ret) {
		free(a);
		o->res = CUDA_ERROR_INVALID_VALUE;	/* overlaps a live range */
		return OP_COMPLETE;
	}
	/* The kernel charges the client's cgroup first; past a limit the
	 * allocation fails as out of memory, as the driver's would. */
	ret = client_charge(d, c, r->need);
	if (ret) {
		pthread_mutex_lock(&c->alloc_lock);
		rangemap_remove(&c->allocs, addr, NULL);
		pthread_mutex_unlock(&c->alloc_lock);
		free(a);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	ret = granules_take(d, c, addr, len);
	if (ret) {
		client_uncharge(d, c, r->need);
		pthread_mutex_lock(&c->alloc_lock);
		rangemap_remove(&c->allocs, addr, NULL);
		pthread_mutex_unlock(&c->alloc_lock);
		free(a);
		o->res = ret;
		return OP_COMPLETE;
	}
	mq_reserved_sub(d, c, r->from_credit);
	mq_used_add(d, c, r->need);
	if (o->deferred)
		c->credit_lent -= r->beyond;
	if (!o->deferred) {
		/* Top the credit up so the next allocations need not ask,
		 * within what the quotas leave. */
		uint64_t want = d->cfg.mint_credit, avail = mem_arena_avail(d);
		uint64_t quota = mq_quota_room(d, c);

		if (want > avail)
			want = avail;
		if (want > c->mint_credit && want - c->mint_credit > quota)
			want = c->mint_credit + quota;
		if (want > c->mint_credit)
			mq_reserved_add(d, c, want - c->mint_credit);
		o->aux[0] = c->mint_credit;
		c->credit_lent = 0;	/* the shim hears its credit now */
	}
	axon_write_once(&c->dpage->mint_credit, c->mint_credit);
	return OP_COMPLETE;
}

static void unmap_alloc(struct axond *d, struct client *c, struct alloc *a,
			struct op_ctx *o)
{
	struct op_ctx local = { .d = d, .c = c, .deferred = true };
	struct work *w;

	pthread_mutex_lock(&c->alloc_lock);
	rangemap_remove(&c->allocs, a->addr, NULL);
	/* If the same range is already pending (freed, reminted, freed
	 * again before the executor caught up), the earlier entry covers it.
	 * A mapping of physical memory keeps its object there, so that
	 * teardown can undo a mapping whose unmap never ran. */
	if (rangemap_insert(&c->pending_free, a->addr, a->len, a->phys, NULL))
		log_debug("client %llu: range 0x%llx already pending release",
			  (unsigned long long)c->id, (unsigned long long)a->addr);
	pthread_mutex_unlock(&c->alloc_lock);
	/* The backing goes after the work that may still touch it. */
	w = work_new(o ? o : &local, WORK_UNMAP);
	/* Physical memory (cuMemCreate) is charged while it lives, mapped
	 * or not: unmapping gives nothing back. Minted memory gives back the
	 * granules no other allocation uses, now; their backing goes with
	 * the WORK_UNMAP (without one, with the client). What they took
	 * refills the client's credit first, up to --mint-credit: granules
	 * spend credit fast (2 MiB for a small allocation), and with the
	 * arena reserved as other clients' credit a client freeing and
	 * allocating in turn would run dry. */
	if (!a->phys) {
		uint64_t freed = granules_drop(d, c, a->addr, a->len, true);

		mq_used_give_back(d, c, freed);
		client_uncharge(d, c, freed);
	}
	if (w) {
		w->want_cqe = false;
		w->unmap.addr = a->addr;
		w->unmap.len = a->len;
		w->unmap.phys = a->phys;
		work_submit(o ? o : &local, w);
		if (a->phys)
			vmm_unmap_later(d, c, a->phys);
	}
	free(a);
}

struct mem_unmap_req {
	struct alloc *alloc;
};

int32_t op_mem_unmap_prep(struct op_ctx *o)
{
	struct client *c = o->c;
	struct rangemap_entry *e;
	struct alloc *a;

	pthread_mutex_lock(&c->alloc_lock);
	e = rangemap_find(&c->allocs, o->sqe->mem.addr);
	a = e ? e->value : NULL;
	pthread_mutex_unlock(&c->alloc_lock);
	if (!ctx_lookup(c, o->sqe->mem.ctx))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!a || a->addr != o->sqe->mem.addr || a->daemon_owned ||
	    o->sqe->mem.len || o->sqe->mem.resv[0] || o->sqe->mem.resv[1])
		return CUDA_ERROR_INVALID_VALUE;
	op_req(o, struct mem_unmap_req)->alloc = a;
	return CUDA_SUCCESS;
}

enum op_status op_mem_unmap_issue(struct op_ctx *o)
{
	struct alloc *a = op_req(o, struct mem_unmap_req)->alloc;

	o->aux[0] = a->len;
	unmap_alloc(o->d, o->c, a, o);
	return OP_COMPLETE;
}

struct unmap_ctx_arg {
	struct axond *d;
	struct client *c;
	struct ctx *ctx;
	struct alloc **list;
	size_t n, cap;
};

/* Frees every allocation of a context being destroyed. */
void mem_unmap_ctx(struct axond *d, struct client *c, struct ctx *ctx)
{
	struct unmap_ctx_arg u = { .d = d, .c = c, .ctx = ctx };
	struct rangemap_entry *e;
	size_t i;

	pthread_mutex_lock(&c->alloc_lock);
	for (e = rangemap_first(&c->allocs); e; e = rangemap_next(&c->allocs, e)) {
		struct alloc *a = e->value;

		if (a->ctx != ctx)
			continue;
		if (u.n == u.cap) {
			size_t cap = u.cap ? u.cap * 2 : 64;
			struct alloc **l = realloc(u.list, cap * sizeof(*l));

			if (!l)
				break;	/* the rest goes with the client */
			u.list = l;
			u.cap = cap;
		}
		u.list[u.n++] = a;
	}
	pthread_mutex_unlock(&c->alloc_lock);
	for (i = 0; i < u.n; i++)
		unmap_alloc(d, c, u.list[i], NULL);
	free(u.list);
}

int32_t op_mem_get_info_prep(struct op_ctx *o)
{
	return o->sqe->obj.arg0 >= o->d->info->ndevices ? CUDA_ERROR_INVALID_DEVICE
							: CUDA_SUCCESS;
}

enum op_status op_mem_get_info_issue(struct op_ctx *o)
{
	struct axond *d = o->d;

	/* What this client could still get: the arena's free part plus the
	 * credit already reserved for it. */
	o->aux[0] = mem_arena_avail(d) + o->c->mint_credit;
	o->aux[1] = arena_total(d, (int)o->sqe->obj.arg0);
	return OP_COMPLETE;
}
