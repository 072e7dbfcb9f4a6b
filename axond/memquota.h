/* SPDX-License-Identifier: MIT */
/*
 * Device-memory accounting and quotas (memquota.c). Every place that takes
 * device memory for a client (MEM_MAP, daemon mints such as module
 * globals, VMM objects, the minting credit) asks mq_room() first and books
 * what it took here, so that the arena (the device's memory), the client's
 * limit (--max-client-mem) and its user's limit (--max-user-mem) hold on
 * every transport. Reserved credit counts against the quotas: a client
 * spends it without asking. Dispatcher only.
 */
#ifndef AXOND_MEMQUOTA_H
#define AXOND_MEMQUOTA_H

#include <stdint.h>
#include <sys/types.h>

struct axond;
struct client;

/* One user's share, shared by its clients; freed with its last client. */
struct mq_user {
	uid_t uid;
	unsigned int nclients;
	uint64_t used;		/* its clients' bytes_mapped */
	uint64_t reserved;	/* its clients' mint_credit */
	uint64_t pinned;	/* its clients' host_pinned */
	struct mq_user *next;	/* hash chain */
};

/* The client joins its user's share (client_activate); 0 or -ENOMEM. */
int mq_client_join(struct axond *d, struct client *c);
/* It leaves (client_disconnect): its usage goes from its user's share. */
void mq_client_leave(struct axond *d, struct client *c);

/*
 * Device memory neither used nor reserved as credit, all clients: the
 * arena this file books against (MEM_MAP and its info ask it too). Here,
 * below the ops, so that the quota check calls nothing above it.
 */
uint64_t mem_arena_avail(const struct axond *d);

/* What the client may still take beyond its credit: the arena's free part
 * within its own and its user's remaining quota. */
uint64_t mq_room(struct axond *d, const struct client *c);
/* The same without the arena: its own and its user's remaining quota. */
uint64_t mq_quota_room(struct axond *d, const struct client *c);

/* Book len bytes taken (used) or given back, or credit reserved/released. */
void mq_used_add(struct axond *d, struct client *c, uint64_t len);
void mq_used_sub(struct axond *d, struct client *c, uint64_t len);
void mq_reserved_add(struct axond *d, struct client *c, uint64_t len);
void mq_reserved_sub(struct axond *d, struct client *c, uint64_t len);
/*
 * Device memory c gave back (freed bytes, no longer used): it refills c's
 * minting credit first, up to --mint-credit, and the shim hears of it. A
 * charge draws on the credit first, so without this a client freeing and
 * allocating in turn runs its credit dry, and with the arena reserved as
 * other clients' credit its next allocation fails.
 */
void mq_used_give_back(struct axond *d, struct client *c, uint64_t freed);

/*
 * Host memory pinned for the client (its shared host regions): 0 and
 * booked, or -ENOSPC past --max-pinned-per-client or -per-user. The sub
 * works for a dead client too (its user's share was settled then).
 */
int mq_pinned_take(struct axond *d, struct client *c, uint64_t len);
void mq_pinned_give(struct axond *d, struct client *c, uint64_t len);

/* The limits in force (UINT64_MAX: none beyond the device). */
uint64_t mq_client_limit(const struct axond *d);
uint64_t mq_user_limit(const struct axond *d);

#endif
