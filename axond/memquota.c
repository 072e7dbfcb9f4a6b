// SPDX-License-Identifier: MIT
/*
 * Device-memory quotas per client and per user (memquota.h). The daemon's
 * totals (mem_used, mem_reserved) bound the arena; each client's
 * bytes_mapped and mint_credit bound it against --max-client-mem; the sum
 * of those over a uid's clients, kept in a small table keyed by uid, bounds
 * it against --max-user-mem. A table entry lives while its user has a
 * client, so the accounting survives clients coming and going without a
 * walk over every client on each allocation.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "memquota.h"

#define MQ_BUCKETS 64

static struct mq_user *users[MQ_BUCKETS];

static struct mq_user **bucket(uid_t uid)
{
	return &users[(unsigned int)uid % MQ_BUCKETS];
}

uint64_t mq_client_limit(const struct axond *d)
{
	return d->cfg.max_client_mem ? d->cfg.max_client_mem : UINT64_MAX;
}

uint64_t mq_user_limit(const struct axond *d)
{
	return d->cfg.max_user_mem ? d->cfg.max_user_mem : UINT64_MAX;
}

/* limit - (a + b), 0 when that is negative; no overflow on the way. */
static uint64_t left(uint64_t limit, uint64_t a, uint64_t b)
{
	if (a > limit || b > limit - a)
		return 0;
	return limit - a - b;
}

int mq_client_join(struct axond *d, struct client *c)
{
	struct mq_user *u;

	(void)d;
	for (u = *bucket(c->uid); u; u = u->next)
		if (u->uid == c->uid)
			break;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return -ENOMEM;
		u->uid = c->uid;
		u->next = *bucket(c->uid);
		*bucket(c->uid) = u;
	}
	u->nclients++;
	u->used += c->bytes_mapped;
	u->reserved += c->mint_credit;
	u->pinned += c->host_pinned;
	c->quser = u;
	return 0;
}

void mq_client_leave(struct axond *d, struct client *c)
{
	struct mq_user *u = c->quser, **pp;

	(void)d;
	if (!u)
		return;
	c->quser = NULL;
	u->used -= c->bytes_mapped;
	u->reserved -= c->mint_credit;
	u->pinned -= c->host_pinned;
	if (--u->nclients)
		return;
	for (pp = bucket(u->uid); *pp; pp = &(*pp)->next) {
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	}
	free(u);
}

uint64_t mq_quota_room(struct axond *d, const struct client *c)
{
	uint64_t room = left(mq_client_limit(d), c->bytes_mapped, c->mint_credit);

	if (c->quser) {
		uint64_t u = left(mq_user_limit(d), c->quser->used, c->quser->reserved);

		if (u < room)
			room = u;
	}
	return room;
}

uint64_t mem_arena_avail(const struct axond *d)
{
	uint64_t total = d->info->device[0].total_mem;
	uint64_t taken = d->mem_used + d->mem_reserved;

	return taken >= total ? 0 : total - taken;
}

uint64_t mq_room(struct axond *d, const struct client *c)
{
	uint64_t room = mq_quota_room(d, c), avail = mem_arena_avail(d);

	return avail < room ? avail : room;
}

void mq_used_add(struct axond *d, struct client *c, uint64_t len)
{
	c->bytes_mapped += len;
	d->mem_used += len;
	if (c->quser)
		c->quser->used += len;
}

void mq_used_sub(struct axond *d, struct client *c, uint64_t len)
{
	c->bytes_mapped -= len;
	d->mem_used -= len;
	if (c->quser)
		c->quser->used -= len;
}

void mq_reserved_add(struct axond *d, struct client *c, uint64_t len)
{
	c->mint_credit += len;
	d->mem_reserved += len;
	if (c->quser)
		c->quser->reserved += len;
}

void mq_reserved_sub(struct axond *d, struct client *c, uint64_t len)
{
	c->mint_credit -= len;
	d->mem_reserved -= len;
	if (c->quser)
		c->quser->reserved -= len;
}

static uint64_t pinned_limit(uint64_t limit)
{
	return limit ? limit : UINT64_MAX;
}

int mq_pinned_take(struct axond *d, struct client *c, uint64_t len)
{
	if (left(pinned_limit(d->cfg.max_pinned_client), c->host_pinned, 0) < len)
		return -ENOSPC;
	if (c->quser && left(pinned_limit(d->cfg.max_pinned_user), c->quser->pinned, 0) < len)
		return -ENOSPC;
	c->host_pinned += len;
	if (c->quser)
		c->quser->pinned += len;
	return 0;
}

void mq_pinned_give(struct axond *d, struct client *c, uint64_t len)
{
	(void)d;
	c->host_pinned -= len;
	if (c->quser)
		c->quser->pinned -= len;
}

void mq_used_give_back(struct axond *d, struct client *c, uint64_t freed)
{
	uint64_t refill = d->cfg.mint_credit > c->mint_credit ?
			  d->cfg.mint_credit - c->mint_credit : 0;

	if (refill > freed)
		refill = freed;
	mq_used_sub(d, c, freed);
	mq_reserved_add(d, c, refill);
	if (refill && c->dpage)
		axon_write_once(&c->dpage->mint_credit, c->mint_credit);
}
