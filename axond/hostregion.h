/* SPDX-License-Identifier: MIT */
/*
 * A shared host region as both its op family (ops/hostmem.c, which owns
 * the client's table of them: ops/hostmem.h) and the backends that
 * register it with the device (backend.h, cuda/hostmem.c) see it: a
 * client's memfd, mapped by the client at [base, base + len) and by the
 * daemon at map (the same address: only there is it mapped). base need not
 * be page-aligned (memory the application registers, cuMemHostRegister):
 * the memfd then starts at base's page, and both mappings cover whole
 * pages, while only [base, base + len) can be named.
 */
#ifndef AXOND_HOSTREGION_H
#define AXOND_HOSTREGION_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <axon/protocol.h>

#include "work.h"

struct axond;

struct hostmem {
	uint64_t base, len;		/* the client's address range */
	unsigned char *map;		/* the daemon's MAP_SHARED mapping of base */
	size_t map_off;			/* base's offset in its first page */
	size_t map_len;			/* whole pages, from map - map_off */
	unsigned int flags;		/* CU_MEMHOSTALLOC_*, AXON_HOSTMEM_F_* */
	uint64_t devptr;		/* the address kernels use for base (atomic:
					 * the backend's registrar sets it) */
	void *info;			/* data-area struct axon_hostmem_info */
	void *backend_priv;
	struct hostmem *next_dying;	/* unregistered, release pending */
};

/*
 * The device address the client is told for the region's first byte: only
 * the client's own address, where the device address equals it (unified
 * addressing: the daemon's mapping is there, and the driver's device
 * pointer of it is its host address). Otherwise 0, "no device pointer":
 * the region still serves copies in place (hostmem_translate), and the
 * shim answers cuMemHostGetDevicePointer and the pointer's DEVICE_POINTER
 * attribute with INVALID_VALUE. Any other address would be the daemon's
 * (or the driver's in the daemon) and tell the client where the daemon's
 * memory lies.
 */
static inline uint64_t hostmem_client_devptr(const struct hostmem *h)
{
	uint64_t devptr = __atomic_load_n(&h->devptr, __ATOMIC_ACQUIRE);

	return devptr && devptr == h->base ? h->base : 0;
}

/* The first page of the daemon's mapping (what munmap and the driver see). */
static inline unsigned char *hostmem_map_start(const struct hostmem *h)
{
	return h->map - h->map_off;
}

/*
 * A backend finished (or failed) registering h: write the region's info
 * for the client and complete w, whose client reference and queued count
 * hostmem_register took. Any thread; h must still be registered-pending
 * (the backend's unregister waits for this).
 */
static inline void hostmem_register_done(struct axond *d, struct hostmem *h, struct work *w,
					 int32_t res)
{
	struct axon_hostmem_info info = { .devptr = res ? 0 : hostmem_client_devptr(h) };

	/* The buffer is the client's until it sees the completion. */
	memcpy(h->info, &info, sizeof(info));
	work_done(d, w, res);
}

#endif
