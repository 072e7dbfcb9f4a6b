// SPDX-License-Identifier: MIT
/*
 * Device-address window slots (vaslot.h): a bitmap of the windows between
 * cfg.va_base and AXOND_VA_END. Windows used to be handed out by a counter
 * that never went back, so after some thousand connections a client's
 * window reached its own host mappings (its heap, libraries, stack) and
 * unified copies of host buffers were taken for device ones.
 *
 * A slot is taken on the dispatcher when a client connects; it is given
 * back when the client object is freed, which may happen on an executor
 * thread (the last queued work drops the last reference): hence the lock.
 * The search starts after the slot taken last, so a slot just given back
 * is the last one handed out again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "axond.h"
#include "vaslot.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t *bits;		/* one bit per slot: held */
static uint64_t nslots, nused, cursor;

uint64_t vaslot_count(const struct axond *d)
{
	if (!d->cfg.va_size || d->cfg.va_base >= AXOND_VA_END)
		return 0;
	return (AXOND_VA_END - d->cfg.va_base) / d->cfg.va_size;
}

uint64_t vaslot_used(void)
{
	uint64_t n;

	pthread_mutex_lock(&lock);
	n = nused;
	pthread_mutex_unlock(&lock);
	return n;
}

int vaslot_take(struct axond *d, struct client *c)
{
	uint64_t i, s;
	int ret = -ENOSPC;

	pthread_mutex_lock(&lock);
	if (!bits) {
		/* The geometry is fixed once the backend is up (main.c). */
		nslots = vaslot_count(d);
		bits = calloc((nslots + 63) / 64 ? (nslots + 63) / 64 : 1, sizeof(*bits));
		if (!bits) {
			ret = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < nslots && nused < nslots; i++) {
		s = (cursor + i) % nslots;
		if (bits[s / 64] & (1ULL << (s % 64)))
			continue;
		bits[s / 64] |= 1ULL << (s % 64);
		nused++;
		cursor = s + 1;
		c->va_slot = s + 1;
		c->params.va_base = d->cfg.va_base + s * d->cfg.va_size;
		c->params.va_size = d->cfg.va_size;
		ret = 0;
		break;
	}
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

void vaslot_put(struct client *c)
{
	uint64_t s;

	if (!c->va_slot)
		return;
	s = c->va_slot - 1;
	c->va_slot = 0;
	pthread_mutex_lock(&lock);
	if (bits && s < nslots && (bits[s / 64] & (1ULL << (s % 64)))) {
		bits[s / 64] &= ~(1ULL << (s % 64));
		nused--;
	}
	pthread_mutex_unlock(&lock);
}
