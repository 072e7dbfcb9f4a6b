/* SPDX-License-Identifier: MIT */
/*
 * What a client makes axond hold besides device memory and work (holdings.c):
 * mappings in the daemon's address space (a pinned host region, a VMM
 * mapping) and VMM objects (each a descriptor in the sim, a driver handle on
 * cuda). Each kind is bounded per client, per user (all of its clients
 * together) and for the daemon as a whole, whose ceilings come from the
 * system (vm.max_map_count, RLIMIT_NOFILE) less a reserve, so that no user
 * can exhaust what every client needs (a new client's rings, a module load).
 * Dispatcher only.
 */
#ifndef AXOND_HOLDINGS_H
#define AXOND_HOLDINGS_H

struct axond;
struct client;

enum hold_kind {
	HOLD_MAPPING,		/* an mmap of axond's for the client */
	HOLD_VMM_OBJECT,	/* a cuMemCreate allocation */
	HOLD_KINDS
};

/* Reads the system's ceilings (start-up, before any client). */
void holdings_init(struct axond *d);
/*
 * One more of kind k for c: 0, or -ENOSPC when c, its user or the daemon
 * holds its limit already (logged at most once a second per kind).
 */
int holdings_take(struct axond *d, struct client *c, enum hold_kind k);
/* n of kind k given back (the client may be dead: the daemon's count). */
void holdings_give(struct axond *d, struct client *c, enum hold_kind k, unsigned int n);
/* The stats' names of the kinds. */
const char *holdings_name(enum hold_kind k);

#endif
