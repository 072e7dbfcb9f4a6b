/* SPDX-License-Identifier: MIT */
/*
 * Device printf with NVIDIA's driver (devout.c): the driver formats a
 * context's printf buffer on the host and writes it to the process's stdout
 * when the buffer is flushed (a launch, a synchronisation, a module load or
 * unload, the context's destruction). axond replaces its stdout so that
 * those bytes go to the client whose context the flushing thread is
 * working for (its "sink"), through ../devout.c, instead of axond's stdout.
 */
#ifndef AXOND_CUDA_DEVOUT_H
#define AXOND_CUDA_DEVOUT_H

#include <stdbool.h>
#include <stddef.h>

struct client;

/* Before the driver is opened: route stdout through the sinks. */
int cu_devout_init(char *err, size_t errlen);
/* This thread's driver calls now work for c (NULL: axond itself). */
void cu_devout_sink(struct client *c);
/* A worker's one client, or NULL: who gets output no sink claims. */
void cu_devout_fallback(struct client *c);
/* Put the real stdout back on fd 1 (at the end, before a restart). */
void cu_devout_restore(void);
/* Output flushed on this thread is dropped (a context being destroyed). */
void cu_devout_discard(bool on);
/* Collects what reached fd 1 directly (not through stdio) into the current
 * sink; call after a call that flushes. */
void cu_devout_collect(void);
/* Whether a module image may print (names vprintf or __assertfail, or
 * cannot be searched: a fatbin, possibly compressed). */
bool cu_image_may_print(const void *image, size_t len);

#endif
