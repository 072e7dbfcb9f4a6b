// SPDX-License-Identifier: MIT
/*
 * Regions made ahead of time. A backend may need long to prepare a client's
 * region (the cuda backend pins the data area for DMA: ~0.7 ms per MiB), so
 * axond keeps a few fresh regions of the default geometry ready, prepared
 * in the background, and hands one to each client that asks for the
 * default sizes, as contexts are pre-created. A region is never reused: a
 * client's bytes never reach another client.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "axond.h"
#include "pool.h"
#include "backend.h"

struct region {
	int fd;
	void *map;
	size_t size;
	struct region *next;
};

static struct region *head;
static unsigned int count;
static struct axon_params geom;	/* what pooled regions are laid out for */

int region_create(size_t size, int *fd, void **map)
{
	*fd = memfd_create("axon-client", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0)
		return -errno;
	/* The client gets the same file: it must not be able to shrink it
	 * under our mapping (SIGBUS) or grow it. */
	if (ftruncate(*fd, (off_t)size) < 0 ||
	    fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
		goto err;
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (*map == MAP_FAILED)
		goto err;
	return 0;
err:
	{
		int e = -errno;

		close(*fd);
		*fd = -1;
		return e;
	}
}

/* Tops the pool up to the configured size. */
void region_pool_refill(struct axond *d)
{
	while (count < d->cfg.region_pool) {
		struct region *r = calloc(1, sizeof(*r));

		if (!r)
			return;
		r->size = geom.region_size;
		if (region_create(r->size, &r->fd, &r->map)) {
			free(r);
			return;
		}
		if (d->backend->region_prepare)
			d->backend->region_prepare(d, (char *)r->map + geom.off_data,
						   geom.data_size);
		r->next = head;
		head = r;
		count++;
	}
}

void region_pool_init(struct axond *d)
{
	if (!d->cfg.region_pool || client_default_geometry(d, &geom))
		d->cfg.region_pool = 0;
	region_pool_refill(d);
}

/* A ready region if p is the pooled geometry; 0 or -ENOENT. */
int region_pool_take(struct axond *d, const struct axon_params *p, int *fd, void **map)
{
	struct region *r = head;

	if (!r || p->region_size != geom.region_size || p->off_data != geom.off_data ||
	    p->data_size != geom.data_size || p->sq_entries != geom.sq_entries ||
	    p->cq_entries != geom.cq_entries)
		return -ENOENT;
	head = r->next;
	count--;
	*fd = r->fd;
	*map = r->map;
	free(r);
	(void)d;
	return 0;
}

void region_pool_fini(struct axond *d)
{
	while (head) {
		struct region *r = head;

		head = r->next;
		if (d->backend->region_unprepare)
			d->backend->region_unprepare(d, (char *)r->map + geom.off_data);
		munmap(r->map, r->size);
		close(r->fd);
		free(r);
	}
	count = 0;
}
