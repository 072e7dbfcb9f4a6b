// SPDX-License-Identifier: MIT
/*
 * Local memory: the context limits that spend memory, charged exactly
 * (localmem.h). What the driver reserves was measured on an H200 (driver
 * 580.159.04, 132 SMs of 2048 threads; bench/gpu/chargecheck prints it
 * again next to the daemon's charge):
 *
 *   stack  the per-thread stack, rounded up to 16 bytes, for every thread
 *          the device can hold at once (SMs x threads per SM), in whole
 *          2 MiB pages: 2048 bytes cost 264 MiB more than 1024, 65536 cost
 *          16632 MiB more. The reservation follows the limit both ways
 *          (lowering it frees it), and a launch whose frame
 *          (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES) exceeds the stack grows
 *          the stack to it for good (cuCtxSetLimit's documentation, and
 *          measured: a 16 KiB frame cost what a 16 KiB limit does). A
 *          fresh context's stack is in its context charge (ctx_mem), so
 *          only what a client adds above it is charged here.
 *   heap   nothing when set; the driver reserves it at the first launch of
 *          a kernel that calls malloc, as the heap rounded up with a small
 *          header into 2 MiB pages (8 MiB took 10, 100000000 bytes 96 MiB,
 *          1 GiB 1026 MiB), and refuses a change after that. A heap is
 *          charged in full when a client sets it (before the driver can
 *          spend it); the default heap of a client that never sets it
 *          (8 MiB: 10) at the first launch of a kernel that calls malloc,
 *          itself or through the functions it calls (the image's
 *          EIATTR_EXTERNS, sim/image.h; a kernel of an image the parser
 *          does not know is taken to call it), a graph's launch included.
 *   FIFO   no device memory (up to 256 MiB: none; 1 GiB: one 2 MiB page):
 *          the driver keeps it in host memory, so what a client adds above
 *          a fresh context's FIFO is charged as pinned host memory
 *          (--max-pinned-per-client and -per-user).
 *
 *   device runtime  the first load, in a context, of a module whose code
 *          calls printf reserved 62 MiB beyond the module's own memory, one
 *          that calls malloc 136 MiB (printf's included: printf's module
 *          after malloc's cost nothing more, malloc's after printf's the
 *          other 74); later loads, unloads and the heap's size change
 *          nothing, and it stays until the context is destroyed. Charged
 *          before such a load, to the client's context, once. Only the H200's
 *          figures are measured: another device's are scaled by the
 *          threads it holds at once, as the stack's are. In
 *          --isolation=shared a second client's first such load is
 *          charged again although the one context has the reserve
 *          already: over, never under.
 *
 * In --isolation=shared every client's context is one: a raise is charged
 * to the client that raises, by what it adds to the value in force, and a
 * decrease gives back at most what the decreasing client was charged.
 */
#include <errno.h>
#include <cuda.h>

#include "axond.h"
#include "backend.h"
#include "localmem.h"
#include "memquota.h"
#include "sim/image.h"

#define PAGE_2M		(2ULL << 20)
#define STACK_ALIGN	16
#define HEAP_HEADER	(64ULL << 10)	/* within what the 2 MiB rounding hides */
#define FIFO_ALIGN	256
/* The driver refused a 512 KiB stack on the H200 (INVALID_VALUE): refused
 * here before its cost is computed, as a cost would say OUT_OF_MEMORY. */
#define STACK_MAX	(512ULL << 10)

static uint64_t round_up(uint64_t v, uint64_t a)
{
	if (v > UINT64_MAX - (a - 1))
		return UINT64_MAX;
	return (v + a - 1) / a * a;
}

uint64_t localmem_stack_cost(const struct axond *d, int dev, uint64_t bytes)
{
	const struct axon_device_info *di = &d->info->device[dev];
	int32_t sms = di->attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
	int32_t per_sm = di->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR];
	uint64_t threads, per = round_up(bytes, STACK_ALIGN);

	if (sms <= 0 || per_sm <= 0)
		return 0;
	threads = (uint64_t)sms * (uint64_t)per_sm;
	if (per > UINT64_MAX / threads)
		return UINT64_MAX;
	return round_up(per * threads, PAGE_2M);
}

/* The device runtime's reserves as measured on the H200 (132 SMs of 2048
 * threads), and that device's resident threads. */
#define RUNTIME_PRINTF_H200	(62ULL << 20)
#define RUNTIME_MALLOC_H200	(136ULL << 20)
#define THREADS_H200		(132ULL * 2048)

uint64_t localmem_runtime_cost(const struct axond *d, int dev, uint32_t calls)
{
	const struct axon_device_info *di = &d->info->device[dev];
	int32_t sms = di->attr[CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT];
	int32_t per_sm = di->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR];
	uint64_t h200 = calls & SIM_IMAGE_CALLS_MALLOC ? RUNTIME_MALLOC_H200 :
			calls & SIM_IMAGE_CALLS_PRINTF ? RUNTIME_PRINTF_H200 : 0;
	uint64_t threads;

	if (!h200 || sms <= 0 || per_sm <= 0)
		return h200;
	/* divide first where the product would not fit */
	threads = (uint64_t)sms * (uint64_t)per_sm;
	if (threads == THREADS_H200)
		return h200;
	if (threads > UINT64_MAX / h200)
		return round_up(h200 / THREADS_H200 * threads, PAGE_2M);
	return round_up(h200 * threads / THREADS_H200, PAGE_2M);
}

uint64_t localmem_heap_cost(uint64_t bytes)
{
	if (bytes > UINT64_MAX - HEAP_HEADER)
		return UINT64_MAX;
	return round_up(bytes + HEAP_HEADER, PAGE_2M);
}

static uint64_t fifo_cost(const struct localmem *lm, uint64_t bytes)
{
	uint64_t b = round_up(bytes, FIFO_ALIGN);

	return b > lm->fifo_base ? b - lm->fifo_base : 0;
}

/* Takes n bytes for c: device memory (arena, quotas, cgroup), or pinned
 * host memory for the FIFO. */
static int take(struct axond *d, struct client *c, uint64_t n, bool host)
{
	if (!n)
		return 0;
	if (host)
		return mq_pinned_take(d, c, n) ? -ENOMEM : 0;
	return client_charge_device(d, c, n, &c->local_mem);
}

static void give(struct axond *d, struct client *c, uint64_t n, bool host)
{
	if (!n)
		return;
	if (host)
		mq_pinned_give(d, c, n);
	else
		client_uncharge_device(d, c, n, &c->local_mem);
}

static int load(struct axond *d, struct client *c, int dev, struct localmem *lm)
{
	int r;

	if (lm->known)
		return CUDA_SUCCESS;
	r = d->backend->ctx_limit(d, c, dev, CU_LIMIT_STACK_SIZE, false, &lm->stack);
	if (!r)
		r = d->backend->ctx_limit(d, c, dev, CU_LIMIT_MALLOC_HEAP_SIZE, false, &lm->heap);
	if (!r)
		r = d->backend->ctx_limit(d, c, dev, CU_LIMIT_PRINTF_FIFO_SIZE, false, &lm->fifo);
	if (r)
		return r;
	lm->stack_base = lm->stack;
	lm->fifo_base = lm->fifo;
	lm->known = true;
	return CUDA_SUCCESS;
}

static uint64_t *value_of(struct localmem *lm, int limit)
{
	return limit == CU_LIMIT_STACK_SIZE ? &lm->stack :
	       limit == CU_LIMIT_MALLOC_HEAP_SIZE ? &lm->heap : &lm->fifo;
}

/* A stack's cost beyond what the context's charge holds (its fresh one). */
static uint64_t stack_cost_over(const struct axond *d, int dev, const struct localmem *lm,
				uint64_t v)
{
	uint64_t cost = localmem_stack_cost(d, dev, v);
	uint64_t base = localmem_stack_cost(d, dev, lm->stack_base);

	return cost > base ? cost - base : 0;
}

/* What the limit's value costs in its charge's terms, and that charge. */
static uint64_t cost_of(const struct axond *d, int dev, const struct localmem *lm,
			int limit, uint64_t v)
{
	if (limit == CU_LIMIT_STACK_SIZE)
		return stack_cost_over(d, dev, lm, v);
	if (limit == CU_LIMIT_MALLOC_HEAP_SIZE)
		return localmem_heap_cost(v);
	return fifo_cost(lm, v);
}

static uint64_t *charge_of(struct localmem *lm, int limit)
{
	return limit == CU_LIMIT_STACK_SIZE ? &lm->stack_charged :
	       limit == CU_LIMIT_MALLOC_HEAP_SIZE ? &lm->heap_charged : &lm->fifo_pinned;
}

/*
 * The stack's present cost is that of the value in force (in
 * --isolation=shared others may have paid for part of it); the heap's and
 * the FIFO's are their whole charge (nothing is charged for them unset).
 */
static uint64_t cost_now(const struct axond *d, int dev, struct localmem *lm, int limit)
{
	if (limit == CU_LIMIT_STACK_SIZE)
		return stack_cost_over(d, dev, lm, lm->stack);
	return *charge_of(lm, limit);
}

static int set_limit(struct axond *d, struct client *c, int dev, struct localmem *lm,
		     int limit, uint64_t *value)
{
	bool host = limit == CU_LIMIT_PRINTF_FIFO_SIZE;
	uint64_t *charged = charge_of(lm, limit);
	uint64_t old = cost_now(d, dev, lm, limit), want, got, need;
	int r;

	if (limit == CU_LIMIT_STACK_SIZE && *value >= STACK_MAX)
		return CUDA_ERROR_INVALID_VALUE;
	/* The driver clamps a heap to what the device can hold. */
	if (limit == CU_LIMIT_MALLOC_HEAP_SIZE && *value > d->info->device[dev].total_mem)
		*value = d->info->device[dev].total_mem;
	want = cost_of(d, dev, lm, limit, *value);
	need = want > old ? want - old : 0;
	if (take(d, c, need, host))
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = d->backend->ctx_limit(d, c, dev, limit, true, value);
	if (r) {
		give(d, c, need, host);
		return r;
	}
	*charged += need;
	*value_of(lm, limit) = *value;
	/* Settle on what the driver made of it: it rounds as cost_of does,
	 * so this gives back only on a decrease (at most the client's own). */
	got = cost_of(d, dev, lm, limit, *value);
	if (got < old + need) {
		uint64_t back = old + need - got;

		if (back > *charged)
			back = *charged;
		give(d, c, back, host);
		*charged -= back;
	}
	return CUDA_SUCCESS;
}

int localmem_limit(struct axond *d, struct client *c, int dev, int limit,
		   bool set, uint64_t *value)
{
	struct localmem *lm = &c->local[dev];
	int r;

	if (!d->backend->ctx_limit)
		return CUDA_ERROR_NOT_SUPPORTED;
	r = load(d, c, dev, lm);
	if (r)
		return r;
	if (set) {
		uint64_t now;

		/* The value in force first: in --isolation=shared another
		 * client may have changed it. */
		r = d->backend->ctx_limit(d, c, dev, limit, false, &now);
		if (r)
			return r;
		*value_of(lm, limit) = now;
		return set_limit(d, c, dev, lm, limit, value);
	}
	r = d->backend->ctx_limit(d, c, dev, limit, false, value);
	if (!r)
		*value_of(lm, limit) = *value;
	return r;
}

/*
 * The first launch of a kernel that calls malloc: the driver reserves the
 * heap in force. One the client set is charged in full already; the
 * default one (never set) is charged here.
 */
static int spend_heap(struct axond *d, struct client *c, struct localmem *lm)
{
	uint64_t cost = localmem_heap_cost(lm->heap), need;

	need = cost > lm->heap_charged ? cost - lm->heap_charged : 0;
	if (take(d, c, need, false))
		return CUDA_ERROR_OUT_OF_MEMORY;
	lm->heap_charged += need;
	lm->heap_spent = true;
	return CUDA_SUCCESS;
}

uint64_t localmem_frame(struct axond *d, struct func *f)
{
	if (!f->local_known) {
		int64_t v = 0;

		if (d->backend->func_get_attr(d, f, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &v) ||
		    v < 0)
			v = 0;
		f->local_size = (uint64_t)v;
		f->local_known = true;
	}
	return f->local_size;
}

int localmem_charge_launch(struct axond *d, struct client *c, int dev, uint64_t frame,
			   bool heap)
{
	struct localmem *lm = &c->local[dev];
	uint64_t grown = 0;

	heap = heap && !lm->heap_spent;
	if (!frame && !heap)
		return CUDA_SUCCESS;
	if (load(d, c, dev, lm))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (frame > lm->stack) {
		/* A frame larger than the stack: the driver grows it. */
		frame = round_up(frame, STACK_ALIGN);
		grown = stack_cost_over(d, dev, lm, frame) - stack_cost_over(d, dev, lm, lm->stack);
		if (take(d, c, grown, false))
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (heap && spend_heap(d, c, lm)) {
		give(d, c, grown, false);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (frame > lm->stack) {
		lm->stack_charged += grown;
		lm->stack = frame;
	}
	return CUDA_SUCCESS;
}

int localmem_launch(struct axond *d, struct client *c, struct func *f)
{
	if (!d->backend->ctx_limit)
		return CUDA_SUCCESS;
	return localmem_charge_launch(d, c, f->module->ctx->device, localmem_frame(d, f),
				      f->calls & SIM_IMAGE_CALLS_MALLOC);
}

uint32_t localmem_calls_charged(const struct client *c, int dev)
{
	return c->local[dev].calls;
}

int localmem_module(struct axond *d, struct client *c, int dev, uint32_t calls)
{
	struct localmem *lm = &c->local[dev];
	uint32_t want = lm->calls | calls;
	uint64_t cost = localmem_runtime_cost(d, dev, want), need;

	need = cost > lm->runtime_charged ? cost - lm->runtime_charged : 0;
	if (take(d, c, need, false))
		return CUDA_ERROR_OUT_OF_MEMORY;
	lm->runtime_charged += need;
	lm->calls = want;
	return CUDA_SUCCESS;
}
