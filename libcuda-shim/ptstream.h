/* SPDX-License-Identifier: MIT */
/*
 * Per-thread default streams (ptstream.c): what CU_STREAM_PER_THREAD names,
 * and what a NULL stream means inside the _ptsz and _ptds calls (the ones
 * cudart makes when a program is built with --default-stream per-thread).
 */
#ifndef AXON_SHIM_PTSTREAM_H
#define AXON_SHIM_PTSTREAM_H

#include <stdint.h>

#include "shim.h"

/* Non-zero while this thread is inside a _ptsz or _ptds call. */
extern __thread unsigned int shim_pt_calls;

/*
 * Makes call with NULL streams meaning the calling thread's per-thread
 * default stream: the exported _ptsz/_ptds entry points are the plain ones
 * wrapped in this, so no path below them needs to know which it is.
 */
#define SHIM_PER_THREAD(call)						\
	({								\
		CUresult pt_r_;						\
									\
		shim_pt_calls++;					\
		pt_r_ = (call);						\
		shim_pt_calls--;					\
		pt_r_;							\
	})

/*
 * The calling thread's default stream in context sc, made on first use.
 * Takes and drops shim.lock: call it without.
 */
CUresult shim_per_thread_stream(struct shim_ctx *sc, uint64_t *handle);

#endif
