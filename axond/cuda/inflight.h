/* SPDX-License-Identifier: MIT */
/* The cuda executor's in-flight tracking (inflight.c). Executor thread. */
#ifndef AXOND_CUDA_INFLIGHT_H
#define AXOND_CUDA_INFLIGHT_H

#include <stdint.h>
#include <cuda.h>

struct cu_dev;
struct cu_gctx;
struct stream;
struct work;

struct inflight {
	struct work *w;
	/* Earlier work of the same stream issued without an event of its own
	 * (run_one: held), linked by w->next, done when this is. */
	struct work *before;
	CUevent ev;		/* recorded after the work on its stream */
	struct cu_gctx *g;	/* the context the work and ev are in */
	uint64_t t_tracked;	/* AXOND_PROFILE: when its event was recorded */
	struct inflight *next;
};

/* w is done with res: its context is poisoned by a sticky res, its event
 * record timed; then work_done. */
void cu_finish(struct cu_dev *cd, struct work *w, int32_t res);
/* Polls in-flight work; returns how many completed. */
int cu_poll_inflight(struct cu_dev *cd);
/* An entry with an event recorded on cs in g, or NULL (inflight.c). */
struct inflight *cu_inflight_record(struct cu_dev *cd, struct cu_gctx *g, CUstream cs,
				    CUresult *res);
/* Appends f (w and before set) to the in-flight list. */
void cu_track(struct cu_dev *cd, struct inflight *f);
/* Until nothing of stream s (NULL: of any) is in flight. */
void cu_drain(struct cu_dev *cd, const struct stream *s);
/* Holds w, issued on cs in g, for a later item's event to track. */
void cu_hold(struct cu_dev *cd, struct work *w, struct cu_gctx *g, CUstream cs);
/* One event for the held items, or the slow way without one. */
void cu_flush_held(struct cu_dev *cd);
void cu_inflight_fini(struct cu_dev *cd);

#endif
