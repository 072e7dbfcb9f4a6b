// SPDX-License-Identifier: MIT
/*
 * Tracing one client's calls as they cross (AXON_HELLO_TRACE): strace for
 * the GPU. A tracer connection follows one client; the dispatcher appends a
 * record when it takes an SQE and when it posts a completion, batches them
 * and sends without blocking. A tracer too slow to read loses records (they
 * are counted), never slows the client. Clients nobody traces pay one
 * branch on ntracers.
 *
 * Who may trace whom: the client's own uid and administrators (access.c).
 * How many: --max-tracers-per-client on one client, --max-tracers-per-user
 * opened by one uid, so tracers cannot eat the daemon's descriptors.
 *
 * Lifetime: a tracer ends in one place, tracer_free, reached from its own
 * hang-up or its client's end, whichever comes first. Both can come in one
 * epoll batch (a process holding a client and a tracer of it dies), so the
 * epoll event does not carry the tracer's address: it carries a slot of
 * the tracer table and that slot's generation (tracer_tag). An event that
 * names a tracer freed earlier in the batch finds the generation moved on
 * and is dropped, never dereferenced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "axond.h"
#include "trace.h"
#include "access.h"
#include "client.h"
#include "stats.h"
#include "welcome.h"

#define TRACE_BATCH 64
/* The one handle type of the tracer table (private to this file). */
#define TRACER_HANDLE	1
/* Slots in the table: the index must fit in bits 2..31 of the epoll tag;
 * the per-user and per-client limits keep it far from this. */
#define TRACER_SLOTS_MAX	(1U << 20)

struct tracer {
	int fd;
	uint64_t handle;	/* its slot in tracer_table */
	struct client *client;
	uid_t uid;		/* who opened it (SO_PEERCRED) */
	uint32_t dropped;
	unsigned int n;
	struct axon_trace_event buf[TRACE_BATCH];
	struct tracer *next;
};

static struct handle_table tracer_table;
static bool tracer_table_ready;
static unsigned int ntracers;		/* live, all clients */
static uint64_t refused_limit;		/* trace hellos refused by a limit */
static uint64_t refused_access;		/* ...by the access policy */

/*
 * The epoll tag of handle h: the handle's upper half (type 1 in bits
 * 56..63, so never EV_PENDING nor a small constant; the generation in
 * bits 32..55) and its index shifted past EV_TRACER_BIT and
 * EV_DOORBELL_BIT (main.c tells the kinds of tag apart by those bits).
 */
static uint64_t tracer_tag(uint64_t h)
{
	return (h & 0xffffffff00000000ULL) | ((uint64_t)AXON_HANDLE_INDEX(h) << 2) |
	       EV_TRACER_BIT;
}

static uint64_t tag_handle(uint64_t tag)
{
	return (tag & 0xffffffff00000000ULL) | ((tag & 0xffffffffULL) >> 2);
}

static void tracer_send(struct tracer *t)
{
	ssize_t n;

	if (!t->n)
		return;
	t->buf[0].dropped = t->dropped;
	n = send(t->fd, t->buf, t->n * sizeof(t->buf[0]), MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		t->dropped += t->n;	/* full or gone: hangup handles gone */
	else
		t->dropped = 0;
	t->n = 0;
}

/* The only place a tracer ends: its slot's generation moves on first. */
static void tracer_free(struct axond *d, struct tracer *t)
{
	struct tracer **pp;

	handle_free(&tracer_table, t->handle, TRACER_HANDLE);
	for (pp = &d->tracers; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, t->fd, NULL);
	close(t->fd);
	if (t->client)
		t->client->ntracers--;
	ntracers--;
	free(t);
}

static unsigned int tracers_of_uid(struct axond *d, uid_t uid)
{
	unsigned int n = 0;
	struct tracer *t;

	for (t = d->tracers; t; t = t->next)
		n += t->uid == uid;
	return n;
}

/* Answers a trace hello; owns fd from here on. */
void trace_hello(struct axond *d, int fd, const struct axon_hello *h,
		 struct axon_welcome *w)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct client *c, *found = NULL;
	struct access_peer peer;
	struct tracer *t;

	if (h->flags || h->resv || (!h->target_client && !h->target_pid)) {
		w->status = -EINVAL;
		strcpy(w->message, "a trace names target_client or target_pid");
		goto refuse;
	}
	for (c = d->clients; c; c = c->next) {
		if (h->target_client ? c->id == h->target_client
				     : (h->target_pid && c->pid == (pid_t)h->target_pid)) {
			if (!found || c->id > found->id)
				found = c;
		}
	}
	if (!found) {
		w->status = -ESRCH;
		strcpy(w->message, "no such client");
		goto refuse;
	}
	/* The peer of this very socket, as the kernel saw it connect: also
	 * when a supervisor handed it to this worker. */
	access_peer_of(fd, &peer);
	if (!access_may_see(&peer, found->uid)) {
		refused_access++;
		w->status = -EPERM;
		snprintf(w->message, sizeof(w->message),
			 "client %llu belongs to another user: only its uid and administrators "
			 "(root, axond's uid, --admin-group) may trace it",
			 (unsigned long long)found->id);
		goto refuse;
	}
	if (found->ntracers >= d->cfg.max_tracers_client) {
		refused_limit++;
		w->status = -EBUSY;
		snprintf(w->message, sizeof(w->message),
			 "client %llu already has %u tracers (--max-tracers-per-client=%u)",
			 (unsigned long long)found->id, found->ntracers,
			 d->cfg.max_tracers_client);
		goto refuse;
	}
	if (tracers_of_uid(d, peer.uid) >= d->cfg.max_tracers_user) {
		refused_limit++;
		w->status = -EBUSY;
		snprintf(w->message, sizeof(w->message),
			 "uid %u already has %u tracers open (--max-tracers-per-user=%u)",
			 (unsigned int)peer.uid, tracers_of_uid(d, peer.uid),
			 d->cfg.max_tracers_user);
		goto refuse;
	}
	if (!tracer_table_ready) {
		if (handle_table_init(&tracer_table, TRACER_SLOTS_MAX))
			goto nomem;
		tracer_table_ready = true;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		goto nomem;
	if (handle_alloc(&tracer_table, TRACER_HANDLE, t, &t->handle)) {
		free(t);
		goto nomem;
	}
	t->fd = fd;
	t->client = found;
	t->uid = peer.uid;
	w->status = 0;
	w->params.client_id = found->id;
	ev.data.u64 = tracer_tag(t->handle);
	if (welcome_send(fd, w, NULL, 0) ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		handle_free(&tracer_table, t->handle, TRACER_HANDLE);
		free(t);
		close(fd);
		return;
	}
	found->ntracers++;
	ntracers++;
	t->next = d->tracers;
	d->tracers = t;
	log_info("tracer attached to client %llu (pid %d) by uid %u",
		 (unsigned long long)found->id, (int)found->pid, (unsigned int)peer.uid);
	return;
nomem:
	w->status = -ENOMEM;
	strcpy(w->message, "out of memory");
refuse:
	welcome_send(fd, w, NULL, 0);
	close(fd);
}

void trace_emit(struct axond *d, struct client *c, unsigned int kind,
		const struct axon_sqe *sqe, uint64_t user_data, uint32_t op,
		int32_t res, uint64_t latency_ns)
{
	uint64_t now = axond_now_ns();
	struct tracer *t;

	for (t = d->tracers; t; t = t->next) {
		struct axon_trace_event *e;

		if (t->client != c)
			continue;
		if (t->n == TRACE_BATCH)
			tracer_send(t);
		e = &t->buf[t->n++];
		memset(e, 0, sizeof(*e));
		e->time_ns = now;
		e->client_id = c->id;
		e->user_data = user_data;
		e->kind = (uint8_t)kind;
		e->opcode = (uint8_t)op;
		e->res = res;
		e->latency_ns = latency_ns;
		if (sqe) {
			e->sqe_flags = sqe->flags;
			e->stream = sqe->stream;
			memcpy(e->args, sqe->raw, sizeof(e->args));
		}
	}
}

void trace_flush(struct axond *d)
{
	struct tracer *t;

	for (t = d->tracers; t; t = t->next)
		tracer_send(t);
}

/* A tracer's socket turned readable or hung up: it left. tag is its epoll
 * tag; a tracer that ended earlier in the same batch is not looked at. */
void trace_hangup(struct axond *d, uint64_t tag)
{
	struct tracer *t;

	if (!tracer_table_ready)
		return;
	t = handle_lookup(&tracer_table, tag_handle(tag), TRACER_HANDLE);
	if (t)
		tracer_free(d, t);
}

/* The traced client is gone: flush what it did, then end the trace. */
static void trace_client_gone(struct axond *d, struct client *c)
{
	struct tracer *t, *next;

	if (!c->ntracers)
		return;
	for (t = d->tracers; t; t = next) {
		next = t->next;
		if (t->client == c) {
			tracer_send(t);
			tracer_free(d, t);
		}
	}
}

static void trace_client_stats(const struct client *c, struct stats_client *out)
{
	out->tracers = c->ntracers;
}

static const struct client_family_ops trace_family = {
	.family = CLIENT_FAMILY_TRACE,
	.gone = trace_client_gone,
	.stats = trace_client_stats,
};

static void __attribute__((constructor)) trace_register_family(void)
{
	client_family_register(&trace_family);
}

void trace_counts(unsigned int *live, uint64_t *refused_by_limit, uint64_t *refused_by_access)
{
	*live = ntracers;
	*refused_by_limit = refused_limit;
	*refused_by_access = refused_access;
}

void trace_close_all(struct axond *d)
{
	while (d->tracers)
		tracer_free(d, d->tracers);
	if (tracer_table_ready) {
		handle_table_destroy(&tracer_table);
		tracer_table_ready = false;
	}
}
