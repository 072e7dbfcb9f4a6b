/* SPDX-License-Identifier: MIT */
/*
 * Shared host regions ("pinned" memory shared with the daemon): a client's
 * memfd, mapped by the client at [base, base + len) and by the daemon at
 * map, registered with the device by the backend. Copies whose host side
 * lies in one are done from/to the daemon's mapping, with no staging.
 *
 * The table is the dispatcher's: it adds and removes regions and
 * translates client addresses. Executors see a region through the pointer
 * a copy carries (struct work.copy.host), or look one up as a device
 * address (hostmem_device_span, under the client's alloc_lock, which the
 * dispatcher takes to change the table); a region stays mapped until its
 * release runs after every work item queued before its unregistration, or
 * until the client's teardown.
 */
#ifndef AXOND_OPS_HOSTMEM_H
#define AXOND_OPS_HOSTMEM_H

#include <stdbool.h>
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

/*
 * The daemon's pointer for [addr, addr + len) (a length of 0 is checked as
 * 1 byte) named as a device address: inside one of the client's regions
 * whose device pointer is its host pointer (unified addressing) and, if
 * write, not read-only for the device; with dying, a region unregistered
 * whose release is still queued counts too (executors: work queued before
 * the unregistration). Else NULL. Any thread.
 */
unsigned char *hostmem_device_span(struct client *c, uint64_t addr, uint64_t len, bool write,
				   bool dying);

/* Does [addr, addr + len) lie in a region the device may only read? A host
 * side of a copy that writes it is refused. Dispatcher only. */
bool hostmem_read_only(struct client *c, uint64_t addr, uint64_t len);

#endif
