/* SPDX-License-Identifier: MIT */
/*
 * The dispatcher's drain of a client's rings (dispatch.c): SQEs in, CQEs
 * out. Dispatcher thread, except client_latch_error.
 */
#ifndef AXOND_DISPATCH_H
#define AXOND_DISPATCH_H

#include <stdint.h>

struct axond;
struct client;
struct ctx;

/* Takes up to budget SQEs from one client; returns how many it took. */
int dispatch_client(struct axond *d, struct client *c, unsigned int budget);
/* Writes one CQE and publishes it; the caller wakes the client. */
void dispatch_post_cqe(struct axond *d, struct client *c, uint64_t user_data,
		       int32_t res, uint64_t aux0, uint64_t aux1);
/* Wakes the client if it sleeps waiting for a CQE. */
void dispatch_wake_client(struct axond *d, struct client *c);
/* Moves the executors' completions into client CQs; returns how many. */
int dispatch_done_queue(struct axond *d);
/* AXOND_PROFILE=1: logs each op's mean time in the daemon. */
void dispatch_prof_log(void);
/* Completion of a stream-ordered or a synchronous op: posts the CQE
 * unless it was deferred and succeeded. */
void dispatch_complete(struct axond *d, struct client *c, struct ctx *ctx,
		       uint64_t user_data,
		       uint32_t op, int32_t res, uint64_t aux0, uint64_t aux1,
		       uint64_t t_start);
/* Any thread: latches a deferred failure res of work in ctx (NULL: none);
 * a sticky one poisons that context. */
void client_latch_error(struct client *c, struct ctx *ctx, uint32_t res);

#endif
