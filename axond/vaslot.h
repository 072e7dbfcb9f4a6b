/* SPDX-License-Identifier: MIT */
/*
 * Device-address window slots (vaslot.c). A client's window is one of a
 * bounded set of slots above cfg.va_base, taken when it connects and given
 * back only when the client object is freed: after its last work and after
 * the backend released the window (its host mapping, a driver VA range).
 */
#ifndef AXOND_VASLOT_H
#define AXOND_VASLOT_H

#include <stdint.h>

struct axond;
struct client;

/*
 * Every window ends at or below this address (42 TiB): below one third of
 * the 128 TiB user address space of x86-64, where Linux starts the mmap
 * area of a process with the legacy (bottom-up) layout, and well below its
 * executables (PIE, two thirds) and the default top-down mmap area, so a
 * window never covers a client's own host memory. The sanitizers' shadow
 * ends about at va_base (16 TiB).
 */
#define AXOND_VA_END	(42ULL << 40)

/* How many windows fit between cfg.va_base and AXOND_VA_END. */
uint64_t vaslot_count(const struct axond *d);
/* Windows held now (clients and freed clients' unfinished work). */
uint64_t vaslot_used(void);
/*
 * Take a free slot for c: c->va_slot and c->params.va_base are set.
 * -ENOSPC when every slot is held.
 */
int vaslot_take(struct axond *d, struct client *c);
/* Give c's slot back (any thread; nothing when it holds none). */
void vaslot_put(struct client *c);

#endif
