/* SPDX-License-Identifier: MIT */
/*
 * Hooks at synchronisation points (synchooks.c). The modules that
 * synchronise (stream.c, event.c, ctx.c) sit below those with something to
 * do there (mempool.c gives memory back, hostfunc.c knows of host
 * functions the daemon's frontier does not count): the upper modules
 * register from a constructor, or count their work here, and the lower
 * ones run what is registered, or read the counts, without knowing who.
 */
#ifndef AXON_SHIM_SYNCHOOKS_H
#define AXON_SHIM_SYNCHOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>
#include <axon/protocol.h>

/* At load time (a constructor): fn runs after every cuStreamSynchronize,
 * cuCtxSynchronize and cuEventSynchronize, whatever they answered, with
 * no lock held. */
void shim_on_sync_point(void (*fn)(void));
/* Runs them after a synchronisation that answered r; returns r, so that a
 * synchronising call can end with return shim_sync_point(its_sync(...)). */
CUresult shim_sync_point(CUresult r);

/*
 * Work of a stream that the daemon's frontier does not count (host
 * functions the shim runs itself, hostfunc.c), by stream slot: the modules
 * that have such work count it up and down here, atomically, with any lock
 * or none. A counter rather than a hook, because cuStreamQuery is a local
 * call that reads it on every query: an indirect call there cost a fifth of
 * the call.
 */
extern uint32_t shim_stream_local_busy[AXON_MAX_FRONTIER];

static inline uint32_t *shim_stream_busy_count(uint64_t stream)
{
	return &shim_stream_local_busy[AXON_HANDLE_INDEX(stream) % AXON_MAX_FRONTIER];
}

/* Whether the stream has such work (cuStreamQuery is NOT_READY). */
static inline bool shim_stream_busy_locally(uint64_t stream)
{
	return __atomic_load_n(shim_stream_busy_count(stream), __ATOMIC_ACQUIRE) != 0;
}

#endif
