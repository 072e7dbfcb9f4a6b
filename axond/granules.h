/* SPDX-License-Identifier: MIT */
/*
 * A client's device-memory granules (granules.c): the one table that says
 * which granules of its window are backed, how many of its live
 * allocations use each (what it is charged for) and how many releases of
 * each wait behind queued work. Minted memory is backed a granule at a time
 * (2 MiB on current GPUs), shared by every allocation that touches it, so
 * the device spends a granule however small the allocation: this is what
 * the client is charged, once per granule, before the backend backs it,
 * and given back when the last allocation on it goes. Both backends back
 * and release granules through backend.h's granule_back/granule_release,
 * called from here with the table's lock held.
 */
#ifndef AXOND_GRANULES_H
#define AXOND_GRANULES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct axond;
struct client;

struct granules {
	pthread_mutex_t lock;	/* every field below, any thread */
	uint64_t base, size;	/* the window it covers */
	uint64_t gran;		/* bytes per granule, a power of two */
	uint64_t n;
	uint32_t *refs;		/* live allocations on each: charged while > 0 */
	uint32_t *queued;	/* their releases queued behind work, not run */
	uint64_t *backing;	/* the backend's handle, 0: not backed */
	uint64_t charged;	/* bytes of granules with refs > 0 */
	uint64_t backed;	/* bytes of granules backed */
};

/* Covers [base, base + size) in granules of gran bytes (0: 2 MiB); 0 or
 * -ENOMEM / -EINVAL. */
int granules_init(struct granules *g, uint64_t base, uint64_t size, uint64_t gran);
/* Client teardown (no work of it queued): every backed granule goes back
 * to the backend, then the table. Safe on a table never initialised. */
void granules_fini(struct axond *d, struct client *c);

/* Bytes of the granules [addr, addr + len) touches that no live allocation
 * uses yet: what mapping it would charge. addr and len must lie inside
 * the window (the caller checked them). */
uint64_t granules_need(struct granules *g, uint64_t addr, uint64_t len);
/*
 * An allocation [addr, addr + len) takes its granules: each gains a
 * reference; one without backing is backed now. Returns a CUresult; on
 * failure nothing is left taken. Dispatcher, after charging
 * granules_need's answer.
 */
int granules_take(struct axond *d, struct client *c, uint64_t addr, uint64_t len);
/*
 * The allocation goes: each of its granules loses a reference. Returns
 * the bytes no live allocation uses any more (to give back now). With
 * queued, the backing is released later by granules_release_queued (once
 * the work queued before the free is done); without (no work can use it),
 * now.
 */
uint64_t granules_drop(struct axond *d, struct client *c, uint64_t addr,
		       uint64_t len, bool queued);
/* Executor: a release granules_drop queued has come up; granules left
 * unused go back to the backend. */
void granules_release_queued(struct axond *d, struct client *c, uint64_t addr,
			     uint64_t len);

#endif
