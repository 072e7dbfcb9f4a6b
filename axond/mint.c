// SPDX-License-Identifier: MIT
/*
 * Daemon-minted device addresses: module globals live in the top 1/16 of
 * the client's window, which clients may not mint from. They are charged
 * to the client like its own allocations.
 */
#include <errno.h>
#include <stdlib.h>
#include <cuda.h>
#include "axond.h"
#include "backend.h"

int client_mint_daemon(struct axond *d, struct client *c, struct ctx *ctx,
		       uint64_t len, uint64_t *addr)
{
	uint64_t end = c->params.va_base + c->params.va_size;
	uint64_t a = c->mint_next_daemon;
	struct alloc *al;
	int ret;

	len = (len + AXON_MINT_ALIGN - 1) & ~(uint64_t)(AXON_MINT_ALIGN - 1);
	if (!len || len > end - a)
		return -ENOMEM;
	al = calloc(1, sizeof(*al));
	if (!al)
		return -ENOMEM;
	al->addr = a;
	al->len = len;
	al->ctx = ctx;
	al->daemon_owned = true;
	pthread_mutex_lock(&c->alloc_lock);
	ret = rangemap_insert(&c->allocs, a, len, al, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
	if (ret) {
		free(al);
		return ret;
	}
	c->mint_next_daemon = a + len;
	c->bytes_mapped += len;
	d->mem_used += len;
	*addr = a;
	return 0;
}

void client_unmint_daemon(struct axond *d, struct client *c, uint64_t addr)
{
	void *value = NULL;
	struct alloc *al;

	pthread_mutex_lock(&c->alloc_lock);
	rangemap_remove(&c->allocs, addr, &value);
	pthread_mutex_unlock(&c->alloc_lock);
	al = value;
	if (!al)
		return;
	/* A dead client's accounting was settled when it disconnected. */
	if (!c->dead) {
		c->bytes_mapped -= al->len;
		d->mem_used -= al->len;
	}
	free(al);
}

int client_register_global(struct axond *d, struct client *c, struct ctx *ctx,
			   uint64_t addr, uint64_t len)
{
	struct alloc *al = calloc(1, sizeof(*al));
	int ret;

	if (!al)
		return -ENOMEM;
	al->addr = addr;
	al->len = len ? len : 1;
	al->ctx = ctx;
	al->daemon_owned = true;
	pthread_mutex_lock(&c->alloc_lock);
	ret = rangemap_insert(&c->allocs, addr, al->len, al, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
	if (ret) {
		free(al);
		return ret;
	}
	/* Charged like any allocation; client_unmint_daemon gives it back. */
	c->bytes_mapped += al->len;
	d->mem_used += al->len;
	return 0;
}
