/* SPDX-License-Identifier: MIT */
/*
 * Where an executor's time goes (AXOND_PROFILE=1 in axond's environment;
 * workers inherit it). Off, each probe is one predictable branch; on, two
 * clock reads around each driver call the executor makes for work. The
 * totals are logged when the executor stops (a worker: when its client
 * leaves), so a benchmark's reasons can be measured rather than guessed.
 */
#ifndef AXOND_CUDA_PROFILE_H
#define AXOND_CUDA_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "../clock.h"

enum prof_kind {
	PROF_ISSUE,		/* the driver call that enqueues an item */
	PROF_COLLAPSE,		/* a run of launches issued as one graph */
	PROF_EV_RECORD,		/* completion-tracking event records */
	PROF_EV_QUERY,		/* polls of those events */
	PROF_CTX_SWITCH,	/* cuCtxSetCurrent */
	PROF_FINISH,		/* work_done: frontier, completion, free */
	PROF_HANDOFF,		/* taking a batch from the dispatcher's queue */
	PROF_IDLE,		/* spinning or asleep with nothing to do */
	PROF_BACKOFF,		/* asleep between polls of work in flight */
	PROF_NKINDS
};

struct exec_prof {
	uint64_t n[PROF_NKINDS];
	uint64_t ns[PROF_NKINDS];
	uint64_t batches, items, max_batch;
	uint64_t ev_not_ready;		/* polls that found work still running */
	uint64_t collapsed_items;	/* launches issued inside a graph */
	/* host<->device copies tracked by an event of their own: bytes and
	 * the time from their event's record to the poll that saw it done */
	uint64_t copies, copy_bytes, copy_ns;
	uint64_t t_first, t_last;	/* first and last item seen */
};

static inline uint64_t prof_start(void)
{
	return __builtin_expect(axond_profiling, 0) ? axond_now_ns() : 0;
}

static inline void prof_end(struct exec_prof *p, enum prof_kind k, uint64_t t0)
{
	if (__builtin_expect(axond_profiling, 0) && p) {
		p->n[k]++;
		p->ns[k] += axond_now_ns() - t0;
	}
}

void exec_prof_log(int dev, const struct exec_prof *p);

#endif
