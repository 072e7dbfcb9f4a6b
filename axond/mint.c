// SPDX-License-Identifier: MIT
/*
 * Daemon-minted device addresses: module globals live in the top 1/16 of
 * the client's window, which clients may not mint from. They are charged
 * to the client like its own allocations (by the granules they back,
 * granules.h), through the same checks as a
 * synchronous MEM_MAP (ops/mem.c): the arena, the client's and its user's
 * quotas (memquota.c), the client's cgroup for kernel clients. The
 * client's own minting credit is drawn on first (it is arena reserved for
 * this client: with every client's credit reserved, nothing else would be
 * left for globals); the shim keeps its own count of it, so what was taken
 * is remembered (credit_lent) and a deferred MEM_MAP within the credit the
 * shim knows of is checked like a synchronous one (ops/mem.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <cuda.h>
#include <axon/libaxon.h>
#include "axond.h"
#include "client.h"
#include "backend.h"
#include "memquota.h"

/*
 * need bytes of device memory the daemon is to spend for c: within the
 * arena and quotas (its credit first) and charged to its cgroup, before
 * anything is spent; 0 or -ENOMEM. book() then counts them.
 */
static int charge(struct axond *d, struct client *c, uint64_t need)
{
	uint64_t from_credit = need < c->mint_credit ? need : c->mint_credit;

	if (need - from_credit > mq_room(d, c) || client_charge(d, c, need))
		return -ENOMEM;
	return 0;
}

static void book(struct axond *d, struct client *c, uint64_t need)
{
	uint64_t from_credit = need < c->mint_credit ? need : c->mint_credit;

	mq_reserved_sub(d, c, from_credit);
	c->credit_lent += from_credit;
	mq_used_add(d, c, need);
	if (c->dpage)
		axon_write_once(&c->dpage->mint_credit, c->mint_credit);
}

int client_charge_device(struct axond *d, struct client *c, uint64_t len,
			 uint64_t *counter)
{
	if (!len)
		return 0;
	if (charge(d, c, len))
		return -ENOMEM;
	book(d, c, len);
	*counter += len;
	return 0;
}

void client_uncharge_device(struct axond *d, struct client *c, uint64_t len,
			    uint64_t *counter)
{
	if (!len)
		return;
	*counter -= len;
	/* A dead client's accounting was settled when it disconnected, and
	 * the kernel gave its charges back itself. */
	if (c->dead)
		return;
	/* Refilling its credit (seen running dry: integration-garbage's
	 * vecadd companion, loading a module with a granule of globals each
	 * round while 900 other clients took the arena as credit). */
	mq_used_give_back(d, c, len);
	client_uncharge(d, c, len);
}

/* Takes [a, a+len) into c's allocations, charged by the granules of the
 * window it backs (none outside the window: the driver placed it, and its
 * module was charged for it); 0 or a negative errno (-EEXIST: already
 * there, -ENOMEM: no room or the kernel refused). */
static int take(struct axond *d, struct client *c, struct alloc *al)
{
	uint64_t need = granules_need(&c->granules, al->addr, al->len);
	bool in_window = al->addr >= c->params.va_base &&
			 al->addr - c->params.va_base < c->params.va_size;
	int ret;

	pthread_mutex_lock(&c->alloc_lock);
	ret = rangemap_insert(&c->allocs, al->addr, al->len, al, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
	if (ret)
		return ret;
	/* Past the arena or a quota, or refused by the client's cgroup. */
	if (charge(d, c, need))
		goto refused;
	if (in_window && granules_take(d, c, al->addr, al->len)) {
		client_uncharge(d, c, need);
		goto refused;
	}
	book(d, c, need);
	return 0;
refused:
	pthread_mutex_lock(&c->alloc_lock);
	rangemap_remove(&c->allocs, al->addr, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
	return -ENOMEM;
}

int client_mint_daemon(struct axond *d, struct client *c, struct ctx *ctx,
		       uint64_t len, uint64_t *addr)
{
	uint64_t end = c->params.va_base + c->params.va_size;
	uint64_t a = c->mint_next_daemon;
	struct alloc *al;
	int ret;

	if (len > UINT64_MAX - (AXON_MINT_ALIGN - 1))
		return -ENOMEM;
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
	ret = take(d, c, al);
	if (ret) {
		free(al);
		return ret == -EEXIST ? -ENOMEM : ret;
	}
	c->mint_next_daemon = a + len;
	*addr = a;
	return 0;
}

void client_unmint_daemon(struct axond *d, struct client *c, uint64_t addr)
{
	void *value = NULL;
	struct alloc *al;
	uint64_t freed;

	pthread_mutex_lock(&c->alloc_lock);
	rangemap_remove(&c->allocs, addr, &value);
	pthread_mutex_unlock(&c->alloc_lock);
	al = value;
	if (!al)
		return;
	/* Its granules go now: a module is unloaded after the work that may
	 * use it. A dead client's accounting was settled when it
	 * disconnected, and the kernel gave its charges back itself. */
	freed = granules_drop(d, c, al->addr, al->len, false);
	if (!c->dead) {
		mq_used_give_back(d, c, freed);
		client_uncharge(d, c, freed);
	}
	free(al);
}

/* The cuda backend's globals: the driver placed them at load, outside the
 * window, and the module was charged for them then (ops/module.c); here
 * they only become ranges the client may name. */
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
	ret = take(d, c, al);
	if (ret)
		free(al);
	/* client_unmint_daemon takes it out again. */
	return ret;
}
