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

/*
 * Any thread: the driver will serve this process no more (a device fault
 * that poisons the process, not one context). error is the fault, whose
 * work it was is client_id; main.c registers the daemon's answer.
 */
typedef void (*work_fault_fn)(struct axond *d, const char *why, int32_t error,
			      uint64_t client_id);
/* Registration, before the backend starts. */
void work_register_fault(work_fault_fn fault);
/* Backends, any thread: report such a fault. */
void work_device_fault(struct axond *d, const char *why, int32_t error,
		       uint64_t client_id);

#endif
