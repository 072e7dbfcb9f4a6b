/* SPDX-License-Identifier: MIT */
/*
 * The daemon's clock and its profiling switch (clock.c): the lowest layer,
 * read by the dispatcher, the work layer and the backends alike, so that
 * none of them reaches into another for the time.
 */
#ifndef AXOND_CLOCK_H
#define AXOND_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* CLOCK_MONOTONIC, in nanoseconds. Any thread. */
uint64_t axond_now_ns(void);

/*
 * AXOND_PROFILE=1 in axond's environment, as the backend read it when it
 * started (the cuda backend; the sim leaves it off): the dispatcher then
 * times each op in the daemon (dispatch.c) and the executor its driver
 * calls (cuda/profile.h). Written once before any other thread runs.
 */
extern bool axond_profiling;

#endif
