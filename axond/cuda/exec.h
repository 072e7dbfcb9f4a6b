/* SPDX-License-Identifier: MIT */
/* The cuda backend's executors (exec.c). */
#ifndef AXOND_CUDA_EXEC_H
#define AXOND_CUDA_EXEC_H

#include <stdint.h>

struct axond;
struct work;

/* Back-off between polls of work in flight, ns (--poll-us; 0: none); set
 * before the executors start. */
extern uint64_t cu_poll_backoff_ns;

/* The executor thread of one device (arg: its struct cu_dev). */
void *cu_executor(void *arg);
/* Queue stream-ordered work on its device's executor (backend.h). */
void cuda_submit(struct axond *d, struct work *w);

#endif
