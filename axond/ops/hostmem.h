/* SPDX-License-Identifier: MIT */
/*
 * Shared host regions ("pinned" memory shared with the daemon): a client's
 * memfd, mapped by the client at [base, base + len) and by the daemon at
 * map, registered with the device by the backend. Copies whose host side
 * lies in one are done from/to the daemon's mapping, with no staging.
 *
 * The table is the dispatcher's (no lock): it adds and removes regions and
 * translates client addresses. Executors only see a region through the
 * pointer a copy carries (struct work.copy.host), which stays mapped until
 * the region's release runs after every work item queued before its
 * unregistration, or until the client's teardown.
 */
#ifndef AXOND_OPS_HOSTMEM_H
#define AXOND_OPS_HOSTMEM_H

#include <stddef.h>
#include <stdint.h>

#include "../hostregion.h"

struct axond;
struct client;


/*
 * The client's socket turned readable: take every struct axon_hostmem_fd
 * waiting there. Returns 0, or -1 when the client sent anything else or too
 * many descriptors (the caller disconnects it).
 */
int hostmem_sock_readable(struct axond *d, struct client *c);

/* The daemon's pointer for [addr, addr + len) of the client, if that lies
 * inside one of its shared regions; else NULL. Dispatcher only. */
unsigned char *hostmem_translate(struct client *c, uint64_t addr, uint64_t len);

#endif
