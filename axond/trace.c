// SPDX-License-Identifier: MIT
/*
 * Tracing one client's calls as they cross (AXON_HELLO_TRACE): strace for
 * the GPU. A tracer connection follows one client; the dispatcher appends a
 * record when it takes an SQE and when it posts a completion, batches them
 * and sends without blocking. A tracer too slow to read loses records (they
 * are counted), never slows the client. Clients nobody traces pay one
 * branch on ntracers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "axond.h"

#define TRACE_BATCH 64

struct tracer {
	int fd;
	struct client *client;
	uint32_t dropped;
	unsigned int n;
	struct axon_trace_event buf[TRACE_BATCH];
	struct tracer *next;
};

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

static void tracer_free(struct axond *d, struct tracer *t)
{
	struct tracer **pp;

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
	free(t);
}

/* Answers a trace hello; owns fd from here on. */
void trace_hello(struct axond *d, int fd, const struct axon_hello *h,
		 struct axon_welcome *w)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct client *c, *found = NULL;
	struct tracer *t;

	for (c = d->clients; c; c = c->next) {
		if (h->target_client ? c->id == h->target_client
				     : (h->target_pid && c->pid == (pid_t)h->target_pid)) {
			if (!found || c->id > found->id)
				found = c;
		}
	}
	if (h->flags || h->resv || (!h->target_client && !h->target_pid)) {
		w->status = -EINVAL;
		strcpy(w->message, "a trace names target_client or target_pid");
		goto refuse;
	}
	if (!found) {
		w->status = -ESRCH;
		strcpy(w->message, "no such client");
		goto refuse;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		w->status = -ENOMEM;
		strcpy(w->message, "out of memory");
		goto refuse;
	}
	t->fd = fd;
	t->client = found;
	w->status = 0;
	w->params.client_id = found->id;
	ev.data.u64 = (uint64_t)(uintptr_t)t | EV_TRACER_BIT;
	if (server_send_welcome(fd, w, NULL, 0) ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(t);
		close(fd);
		return;
	}
	found->ntracers++;
	t->next = d->tracers;
	d->tracers = t;
	log_info("tracer attached to client %llu (pid %d)",
		 (unsigned long long)found->id, (int)found->pid);
	return;
refuse:
	server_send_welcome(fd, w, NULL, 0);
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

void trace_hangup(struct axond *d, struct tracer *t)
{
	tracer_free(d, t);
}

/* The traced client is gone: flush what it did, then end the trace. */
void trace_client_gone(struct axond *d, struct client *c)
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

void trace_close_all(struct axond *d)
{
	while (d->tracers)
		tracer_free(d, d->tracers);
}
