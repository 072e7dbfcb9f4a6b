/* SPDX-License-Identifier: MIT */
/*
 * The work layer (work.c): stream-ordered work items on their way from an
 * op handler to the backend and back through the done queue.
 */
#ifndef AXOND_WORK_H
#define AXOND_WORK_H

#include <stdint.h>

struct axond;
struct work;

/* Called by a backend's executor when a work item has finished with res
 * (any thread). */
void work_done(struct axond *d, struct work *w, int32_t res);

#endif
