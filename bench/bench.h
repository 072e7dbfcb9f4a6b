/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what bench-ring and bench-shim share: the clock, samples and
 * their summary, CPU pinning, and the one-line result format bench-shim
 * prints for bench-ring to put in its table:
 *
 *	ROW <tab> name <tab> floor <tab> n <tab> p50_ns <tab> p99_ns <tab> mean_ns
 *	SKIP <tab> name <tab> reason
 *
 * Everything is CLOCK_MONOTONIC nanoseconds; a sample is either one timed
 * operation or, for calls too short to time one by one, the mean of a
 * batch of them (said so in the row's name and in bench/README.md).
 */
#ifndef AXON_BENCH_H
#define AXON_BENCH_H

#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t b_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct b_samples {
	uint64_t *v;
	size_t n, cap;
};

static inline void b_init(struct b_samples *s, size_t cap)
{
	s->v = calloc(cap ? cap : 1, sizeof(*s->v));
	if (!s->v) {
		perror("calloc");
		exit(1);
	}
	s->n = 0;
	s->cap = cap;
}

static inline void b_add(struct b_samples *s, uint64_t ns)
{
	if (s->n < s->cap)
		s->v[s->n++] = ns;
}

static inline void b_free(struct b_samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

struct b_summary {
	size_t n;
	double p50, p99, mean;	/* nanoseconds */
};

static inline int b_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the samples; p50/p99 by nearest rank. */
static inline struct b_summary b_summarize(struct b_samples *s)
{
	struct b_summary r = { .n = s->n };
	double sum = 0;
	size_t i;

	if (!s->n)
		return r;
	qsort(s->v, s->n, sizeof(*s->v), b_cmp);
	for (i = 0; i < s->n; i++)
		sum += (double)s->v[i];
	r.p50 = (double)s->v[(s->n - 1) / 2];
	r.p99 = (double)s->v[(s->n * 99 + 99) / 100 - 1];
	r.mean = sum / (double)s->n;
	return r;
}

/* Batched samples are stored as total ns * 1000 / batch (picoseconds
 * per call, so that sub-ns differences survive); divide back. */
static inline struct b_summary b_summarize_ps(struct b_samples *s)
{
	struct b_summary r = b_summarize(s);

	r.p50 /= 1000.0;
	r.p99 /= 1000.0;
	r.mean /= 1000.0;
	return r;
}

/* The first two CPUs this process may run on; -1 where there are none. */
static inline void b_pick_cpus(int *a, int *b)
{
	cpu_set_t set;
	int i;

	*a = *b = -1;
	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (i = 0; i < CPU_SETSIZE; i++) {
		if (!CPU_ISSET(i, &set))
			continue;
		if (*a < 0)
			*a = i;
		else if (*b < 0) {
			*b = i;
			break;
		}
	}
}

/* Pins the calling thread (and what it forks / execs later) to cpu. */
static inline int b_pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static inline void b_print_row(const char *name, const char *floor,
			       const struct b_summary *r)
{
	printf("ROW\t%s\t%s\t%zu\t%.1f\t%.1f\t%.1f\n", name, floor, r->n, r->p50,
	       r->p99, r->mean);
	fflush(stdout);
}

#endif /* AXON_BENCH_H */
