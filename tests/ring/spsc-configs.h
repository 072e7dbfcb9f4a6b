/* SPDX-License-Identifier: MIT */
/*
 * spsc-configs.h - the ring geometries and modes spsc-threads and
 * spsc-procs both run (see spsc-common.h). Free-running indices start close
 * to 2^32 so every run also crosses the u32 wrap.
 */
#ifndef AXON_TESTS_SPSC_CONFIGS_H
#define AXON_TESTS_SPSC_CONFIGS_H

#include "spsc-common.h"

static const struct spsc_cfg spsc_configs[] = {
	/* Two-entry SQ: wraps on every other SQE, 200k times. */
	{ .name = "poll-sq2-cq4", .mode = SPSC_POLL, .sq_entries = 2, .cq_entries = 4,
	  .total = 400000, .deferred_every = 3, .max_batch = 2,
	  .start_index = 0xfffff000u, .consumer_budget = 64 },
	/* Eight entries, random batches, one SQE in five deferred. */
	{ .name = "poll-sq8-cq16", .mode = SPSC_POLL, .sq_entries = 8, .cq_entries = 16,
	  .total = 600000, .deferred_every = 5, .max_batch = 8,
	  .start_index = 0xffff0000u, .consumer_budget = 64 },
	/* CQ as small as the SQ, no deferred SQEs, a consumer that takes at
	 * most three per pass: admission holds SQEs back all the time. */
	{ .name = "poll-sq8-cq8-admit", .mode = SPSC_POLL, .sq_entries = 8, .cq_entries = 8,
	  .total = 300000, .deferred_every = 0, .max_batch = 8,
	  .start_index = 0xfffffff0u, .consumer_budget = 3 },
	/* Doorbell and futex on every exchange: neither side spins. */
	{ .name = "doorbell-nospin", .mode = SPSC_DOORBELL, .sq_entries = 4,
	  .cq_entries = 8, .total = 60000, .deferred_every = 4, .max_batch = 4,
	  .start_index = 0xffffff00u, .producer_spin_ns = 0, .consumer_spin_ns = 0,
	  .consumer_budget = 64 },
	/* Short spins on both sides: the sleep/wake races are hit from both
	 * the spinning and the sleeping path. */
	{ .name = "doorbell-shortspin", .mode = SPSC_DOORBELL, .sq_entries = 16,
	  .cq_entries = 32, .total = 150000, .deferred_every = 2, .max_batch = 16,
	  .start_index = 0xfffff800u, .producer_spin_ns = 1000,
	  .consumer_spin_ns = 1000, .consumer_budget = 5 },
};

#define SPSC_NCONFIGS	((int)(sizeof(spsc_configs) / sizeof(spsc_configs[0])))

/* The admission scenario: CQ four SQs deep, indices wrap in the middle. */
static const struct spsc_cfg spsc_admission_cfg = {
	.name = "admission", .mode = SPSC_POLL, .sq_entries = 8, .cq_entries = 32,
	.total = 32 + 8, .deferred_every = 0, .max_batch = 8,
	.start_index = 0xffffffe8u, .consumer_budget = 64,
};

#endif
