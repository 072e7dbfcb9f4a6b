/* SPDX-License-Identifier: MIT */
/*
 * Tracing one client's calls as they cross (trace.c): the tracer
 * connections, the records the dispatcher appends, their limits.
 * Dispatcher thread.
 */
#ifndef AXOND_TRACE_H
#define AXOND_TRACE_H

#include <stdint.h>

struct axond;
struct client;
struct axon_hello;
struct axon_sqe;
struct axon_welcome;
struct tracer;

/* Answers a trace hello; owns fd from here on. */
void trace_hello(struct axond *d, int fd, const struct axon_hello *h,
		 struct axon_welcome *w);
/* A record of c's (kind AXON_TRACE_*) for each of its tracers. */
void trace_emit(struct axond *d, struct client *c, unsigned int kind,
		const struct axon_sqe *sqe, uint64_t user_data, uint32_t op,
		int32_t res, uint64_t latency_ns);
void trace_flush(struct axond *d);
void trace_hangup(struct axond *d, uint64_t tag);
void trace_counts(unsigned int *live, uint64_t *refused_by_limit, uint64_t *refused_by_access);
void trace_close_all(struct axond *d);

#endif
