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

struct axond;
struct client;
struct work;

struct hostmem {
	uint64_t base, len;		/* the client's address range */
	unsigned char *map;		/* the daemon's MAP_SHARED mapping */
	size_t map_len;
	unsigned int flags;		/* CU_MEMHOSTALLOC_* */
	uint64_t devptr;		/* the address kernels use for base */
	void *info;			/* data-area struct axon_hostmem_info */
	void *backend_priv;
	struct hostmem *next_dying;	/* unregistered, release pending */
};

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
 * A backend finished (or failed) registering h: write the region's info
 * for the client and complete w, whose client reference and queued count
 * hostmem_register took. Any thread; h must still be registered-pending
 * (the backend's unregister waits for this).
 */
void hostmem_register_done(struct axond *d, struct hostmem *h, struct work *w, int32_t res);

/* Client teardown (last reference): every region, live or dying. */
void hostmem_client_fini(struct axond *d, struct client *c);

#endif
