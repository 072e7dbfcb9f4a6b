/* SPDX-License-Identifier: MIT */
/*
 * Hooks at synchronisation points (synchooks.c). The modules that
 * synchronise (stream.c, event.c, ctx.c) sit below those with something to
 * do there (mempool.c gives memory back, hostfunc.c knows of host
 * functions the daemon's frontier does not count): the upper modules
 * register from a constructor, and the lower ones run what is registered,
 * without knowing who.
 */
#ifndef AXON_SHIM_SYNCHOOKS_H
#define AXON_SHIM_SYNCHOOKS_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

/* At load time (a constructor): fn runs after every cuStreamSynchronize,
 * cuCtxSynchronize and cuEventSynchronize, whatever they answered, with
 * no lock held. */
void shim_on_sync_point(void (*fn)(void));
/* Runs them after a synchronisation that answered r; returns r, so that a
 * synchronising call can end with return shim_sync_point(its_sync(...)). */
CUresult shim_sync_point(CUresult r);

/* At load time: busy(stream) says whether the stream has work queued that
 * the daemon's frontier does not count. Any lock, or none. */
void shim_on_stream_busy(bool (*busy)(uint64_t stream));
/* Whether any registered hook says so (cuStreamQuery is NOT_READY). */
bool shim_stream_busy_locally(uint64_t stream);

#endif
