// SPDX-License-Identifier: MIT
/*
 * Device output held per client. A backend appends the bytes a client's
 * kernels printed (sim: its built-in kernels, as they run; cuda: what the
 * driver flushes while that client's context is current, cuda/devout.c),
 * before the completion or frontier update of the work that produced them,
 * and sets dpage->devout_pending. The shim checks that word at each of its
 * synchronisation points and fetches the bytes with AXON_OP_DEVOUT_READ, so
 * they reach the client's stdout in order with its synchronisation, as
 * CUDA's printf FIFO reaches a native process's stdout when it is flushed.
 */
#include <stdlib.h>
#include <string.h>

#include <axon/libaxon.h>
#include "devout.h"

struct devout_buf {
	char *buf;
	size_t len, cap;
	uint64_t lost;		/* bytes dropped past DEVOUT_MAX */
};

struct devout {
	struct devout_buf out[2];	/* AXON_DEVOUT_STDOUT, _STDERR */
};

/* What dpage->devout_pending says: both outputs. */
static uint32_t held(const struct devout *d)
{
	return (uint32_t)(d->out[0].len + d->out[1].len);
}

/* One lock for every client's buffer: output is rare and short. */
static pthread_mutex_t devout_lock = PTHREAD_MUTEX_INITIALIZER;

void devout_append_to(struct client *c, unsigned int which, const void *bytes,
		      size_t len)
{
	struct devout_buf *o;
	size_t room;

	if (!len || which > AXON_DEVOUT_STDERR)
		return;
	pthread_mutex_lock(&devout_lock);
	if (!c->devout)
		c->devout = calloc(1, sizeof(*c->devout));
	if (!c->devout)
		goto drop;
	o = &c->devout->out[which];
	room = DEVOUT_MAX - o->len;
	if (len > room) {
		if (!o->lost)
			log_warn("client %llu: more than %u bytes of device output "
				 "not fetched; dropping the rest",
				 (unsigned long long)c->id, DEVOUT_MAX);
		o->lost += len - room;
		len = room;
	}
	if (o->len + len > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;
		char *p;

		while (cap < o->len + len)
			cap *= 2;
		if (cap > DEVOUT_MAX)
			cap = DEVOUT_MAX;
		p = realloc(o->buf, cap);
		if (!p)
			goto drop;
		o->buf = p;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, bytes, len);
	o->len += len;
	/* Before the caller's completion or frontier store (both release):
	 * a client that sees those sees this. */
	axon_write_once(&c->dpage->devout_pending, held(c->devout));
	pthread_mutex_unlock(&devout_lock);
	return;
drop:
	pthread_mutex_unlock(&devout_lock);
	log_warn("client %llu: out of memory holding device output",
		 (unsigned long long)c->id);
}

size_t devout_take(struct client *c, unsigned int which, void *dst, size_t max,
		   size_t *left)
{
	struct devout_buf *o;
	size_t n = 0;

	*left = 0;
	if (which > AXON_DEVOUT_STDERR)
		return 0;
	pthread_mutex_lock(&devout_lock);
	if (c->devout) {
		o = &c->devout->out[which];
		n = o->len < max ? o->len : max;
		if (n) {	/* an output never written has no buffer */
			memcpy(dst, o->buf, n);
			memmove(o->buf, o->buf + n, o->len - n);
			o->len -= n;
		}
		*left = o->len;
		axon_write_once(&c->dpage->devout_pending, held(c->devout));
	}
	pthread_mutex_unlock(&devout_lock);
	return n;
}

void devout_free(struct client *c)
{
	struct devout *d = c->devout;
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < 2; i++) {
		struct devout_buf *o = &d->out[i];

		if (o->len || o->lost)
			log_debug("client %llu: %zu bytes of device output never fetched, "
				  "%llu dropped", (unsigned long long)c->id, o->len,
				  (unsigned long long)o->lost);
		free(o->buf);
	}
	free(d);
	c->devout = NULL;
}
