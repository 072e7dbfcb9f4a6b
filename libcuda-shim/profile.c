// SPDX-License-Identifier: MIT
/*
 * The client's own profile (AXON_PROFILE=1 in the program's environment):
 * where a program's time through axon goes on the client side. Counted,
 * under the shim's lock, are
 *   - each synchronous wait for the daemon, by operation (the time from
 *     publishing the request to its completion, lock drops included);
 *   - each wait for room in the submission ring (the daemon behind);
 *   - the bytes and the time of the shim's own staging copies of pageable
 *     memory into and out of the data area.
 * A table goes to stderr when the process exits. With the executor profile
 * on the daemon's side (axond/cuda/profile.h) it splits a figure such as a
 * slower training step or a copy's bandwidth into the parts each side adds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

bool shim_profiling;

static struct {
	uint64_t n[AXON_OP_LAST + 1], ns[AXON_OP_LAST + 1];
	uint64_t full_n, full_ns;
	uint64_t stage_bytes[2], stage_ns[2];
} prof;

uint64_t shim_prof_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void shim_prof_wait(unsigned int op, uint64_t t0)
{
	if (op > AXON_OP_LAST)
		op = AXON_OP_LAST;
	prof.n[op]++;
	prof.ns[op] += shim_prof_now() - t0;
}

void shim_prof_ring_full(uint64_t t0)
{
	prof.full_n++;
	prof.full_ns += shim_prof_now() - t0;
}

void shim_prof_stage(bool to_device, uint64_t bytes, uint64_t t0)
{
	prof.stage_bytes[to_device] += bytes;
	prof.stage_ns[to_device] += shim_prof_now() - t0;
}

static void report(void)
{
	unsigned int op;

	fprintf(stderr, "axon: profile: pid %d: synchronous waits by operation:\n", (int)getpid());
	for (op = 0; op <= AXON_OP_LAST; op++)
		if (prof.n[op])
			fprintf(stderr, "axon: profile:   %-20s %10llu x %9.3f us = %10.3f ms\n",
				op < AXON_OP_LAST ? axon_op_name(op) : "(other)",
				(unsigned long long)prof.n[op],
				(double)prof.ns[op] / 1e3 / (double)prof.n[op],
				(double)prof.ns[op] / 1e6);
	fprintf(stderr, "axon: profile:   waits for ring room %llu, %.3f ms\n",
		(unsigned long long)prof.full_n, (double)prof.full_ns / 1e6);
	fprintf(stderr, "axon: profile:   staging copies: to the data area %.1f MiB in %.3f ms, out of it %.1f MiB in %.3f ms\n",
		(double)prof.stage_bytes[1] / 1048576.0, (double)prof.stage_ns[1] / 1e6,
		(double)prof.stage_bytes[0] / 1048576.0, (double)prof.stage_ns[0] / 1e6);
}

__attribute__((constructor)) static void profile_init(void)
{
	const char *v = getenv("AXON_PROFILE");

	shim_profiling = v && !strcmp(v, "1");
	if (shim_profiling)
		atexit(report);
}
