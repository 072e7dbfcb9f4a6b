/* SPDX-License-Identifier: MIT */
/*
 * Device output (a kernel's printf) held for a client until its shim asks
 * for it (AXON_OP_DEVOUT_READ) at a synchronisation, so that the bytes reach
 * the client's own stdout, not the daemon's. See devout.c.
 */
#ifndef AXOND_DEVOUT_H
#define AXOND_DEVOUT_H

#include <stddef.h>
#include "axond.h"

/* Most bytes held per client and output (CUDA's default printf FIFO is
 * 1 MiB); more is dropped, counted and logged once. */
#define DEVOUT_MAX	(1U << 20)

/* Appends device output for c to its stdout (AXON_DEVOUT_STDOUT) or stderr
 * (AXON_DEVOUT_STDERR: the driver's assertion messages) and publishes the
 * count in its daemon page. Any thread; the caller holds a reference to c. */
void devout_append_to(struct client *c, unsigned int which, const void *bytes,
		      size_t len);
static inline void devout_append(struct client *c, const void *bytes, size_t len)
{
	devout_append_to(c, AXON_DEVOUT_STDOUT, bytes, len);
}
/* Moves up to max of the oldest bytes of one output to dst; *left gets
 * what stays of it. Dispatcher thread. */
size_t devout_take(struct client *c, unsigned int which, void *dst, size_t max,
		   size_t *left);
/* Frees what the client never fetched (client_free). */
void devout_free(struct client *c);

#endif
