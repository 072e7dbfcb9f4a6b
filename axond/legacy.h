/* SPDX-License-Identifier: MIT */
/*
 * The legacy default stream's implicit barrier (legacy.c): work_submit
 * puts the daemon's own records and waits in front of an item that must
 * wait for other streams. Dispatcher thread.
 */
#ifndef AXOND_LEGACY_H
#define AXOND_LEGACY_H

#include "axond.h"
#include "backend.h"

struct op_ctx;

int legacy_order_slow(struct op_ctx *o, struct work *w);

/* Orders w against the legacy stream or the blocking streams as CUDA
 * does; a CUresult (out of memory: w cannot be ordered, refuse it). */
static inline int legacy_order(struct op_ctx *o, struct work *w)
{
	const struct stream *s = w->stream;

	/* The common cases in a branch: no stream, a non-blocking one, a
	 * blocking one that already waited for the legacy stream's work and
	 * is listed for the legacy stream to wait for. */
	if (!s || s->nonblocking ||
	    (!s->is_default && s->listed_unjoined && s->legacy_seen == s->ctx->legacy_epoch))
		return 0;
	return legacy_order_slow(o, w);
}

/* A stream destroyed by the client: the legacy stream's later work still
 * waits for its work (queued before the stream's release). */
void legacy_stream_destroy(struct axond *d, struct client *c, struct stream *s);
/*
 * s is about to join a capture (before it is marked capturing): the legacy
 * stream's later work waits for s's work so far, joined now, since no
 * record of ours may join the capture; so a capturing stream is not left
 * on its context's list for every legacy item to pass over.
 */
void legacy_capture_begin(struct axond *d, struct client *c, struct stream *s);
/* Frees the backend state of s's order event (s is being freed). Inline:
 * the client's teardown (client.c) calls it, and client.c must not call
 * into legacy.c, which calls work.c, which calls client.c. */
static inline void legacy_stream_fini(struct axond *d, struct stream *s)
{
	if (d->backend->event_fini)
		d->backend->event_fini(d, &s->order_ev);
}

#endif
