// SPDX-License-Identifier: MIT
/* Range checks every op family uses (the handle lookups: tables.c). */
#include <cuda.h>
#include "ops.h"

void *data_range(struct client *c, uint64_t off, uint64_t len)
{
	if (off > c->params.data_size || len > c->params.data_size - off)
		return NULL;
	return c->data + off;
}

/* [addr, addr + len) in one live allocation, one mapped span, or (with
 * pending) one range whose release is still queued. */
static bool range_valid(struct client *c, uint64_t addr, uint64_t len, bool pending)
{
	bool ok;

	if (!len)
		len = 1;
	if (addr + len < addr)
		return false;
	pthread_mutex_lock(&c->alloc_lock);
	ok = rangemap_find_span(&c->allocs, addr, len) ||
	     (pending && rangemap_find_span(&c->pending_free, addr, len)) ||
	     vmm_span_valid(&c->allocs, addr, len);
	pthread_mutex_unlock(&c->alloc_lock);
	return ok;
}

bool client_range_valid(struct client *c, uint64_t addr, uint64_t len)
{
	return range_valid(c, addr, len, false);
}

bool client_range_valid_exec(struct client *c, uint64_t addr, uint64_t len)
{
	return range_valid(c, addr, len, true);
}

void client_unmap_done(struct client *c, uint64_t addr)
{
	pthread_mutex_lock(&c->alloc_lock);
	rangemap_remove(&c->pending_free, addr, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
}
