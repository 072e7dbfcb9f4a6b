// SPDX-License-Identifier: MIT
/*
 * Per-thread default streams. CUDA gives every host thread a default
 * stream of its own in each context (CU_STREAM_PER_THREAD, and a NULL
 * stream in the _ptsz/_ptds calls): it is not the legacy stream, it does
 * not synchronise with other threads' per-thread streams, but it is not
 * non-blocking either -- it synchronises with the legacy default stream
 * ("Driver API: Stream synchronization behavior"). That is exactly a
 * blocking stream, so each one is a stream the daemon creates with flags 0
 * (axond/legacy.c orders blocking streams against the legacy one), made
 * the first time a thread names it in a context.
 *
 * Mapping them all to the legacy stream, as before, was more order than
 * CUDA asks: work of two threads could not overlap, and a thread waiting
 * for its own stream waited for every other thread's work too -- a
 * deadlock where that work waits, through a host function or a flag, for
 * the first thread (integration-ptstream).
 *
 * A thread's streams are destroyed when it exits, so a program whose
 * threads come and go does not use up the client's stream slots; a
 * destroyed context takes its streams with it in the daemon, and handles
 * carry a generation, so an entry for a dead context is never matched
 * again and is not destroyed twice.
 */
#include <pthread.h>
#include <stdlib.h>

#include "forkreg.h"
#include "ptstream.h"

__thread unsigned int shim_pt_calls;

struct pt_stream {
	uint64_t ctx;
	uint64_t stream;
};

/* This thread's streams, one per context it used one in. */
static __thread struct pt_stream *pt;
static __thread size_t npt, cappt;

static pthread_key_t pt_key;
static pthread_once_t pt_once = PTHREAD_ONCE_INIT;

/* Thread exit: each stream of a context that still lives is destroyed
 * (deferred, as cuStreamDestroy is: its queued work still runs). */
static void pt_release(void *unused)
{
	struct axon_sqe *sqe;
	size_t i;

	(void)unused;
	shim_lock();
	for (i = 0; i < npt; i++) {
		struct shim_ctx *sc = shim_ctx_of((CUcontext)(uintptr_t)pt[i].ctx);

		/* Checked under the lock ctx_destroy takes, so a context
		 * destroyed after this still sees our destroy first. */
		if (!sc || sc->handle != pt[i].ctx)
			continue;
		sqe = shim_sqe();
		if (!sqe)
			break;
		axon_prep_stream_destroy(sqe, pt[i].stream);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
	}
	shim_flush();
	shim_unlock();
	free(pt);
	pt = NULL;
	npt = cappt = 0;
}

static void pt_key_create(void)
{
	if (pthread_key_create(&pt_key, pt_release))
		abort();	/* out of keys at load: nothing sane to do */
}

/* A forked child has only the forking thread, and none of the parent's
 * streams: its connection and handles are new. */
static void pt_forget(void)
{
	free(pt);
	pt = NULL;
	npt = cappt = 0;
}

__attribute__((constructor)) static void register_pt_forget(void)
{
	shim_fork_register(pt_forget);
}

CUresult shim_per_thread_stream(struct shim_ctx *sc, uint64_t *handle)
{
	uint64_t ctx = sc->handle, h;
	CUresult r;
	size_t i;

	for (i = 0; i < npt; i++)
		if (pt[i].ctx == ctx) {
			*handle = pt[i].stream;
			return CUDA_SUCCESS;
		}
	pthread_once(&pt_once, pt_key_create);
	if (npt == cappt) {
		size_t n = cappt ? cappt * 2 : 4;
		struct pt_stream *p = realloc(pt, n * sizeof(*p));

		if (!p)
			return CUDA_ERROR_OUT_OF_MEMORY;
		pt = p;
		cappt = n;
	}
	r = shim_stream_create(0, 0, &h);
	if (r)
		return r;
	/* Non-NULL, so the destructor runs at this thread's exit. */
	if (pthread_setspecific(pt_key, pt)) {
		shim_stream_destroy_handle(h);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	pt[npt].ctx = ctx;
	pt[npt].stream = h;
	npt++;
	*handle = h;
	return CUDA_SUCCESS;
}

/*
 * What a stream argument names. Here, with the per-thread streams, rather
 * than beside the current context (current.c): that file sits below
 * everything that calls the daemon, and making a per-thread stream does.
 */
CUresult shim_stream(CUstream s, uint64_t *handle)
{
	struct shim_ctx *sc;
	CUresult r;

	/* NULL is the legacy stream, except inside a _ptsz/_ptds call. */
	if (!s && shim_pt_calls)
		s = CU_STREAM_PER_THREAD;
	if (s == CU_STREAM_PER_THREAD) {
		r = shim_get_ctx(&sc);
		return r ? r : shim_per_thread_stream(sc, handle);
	}
	/* The context's default stream: the daemon orders it as the legacy
	 * stream against the blocking streams (axond/legacy.c). */
	if (!s || s == CU_STREAM_LEGACY) {
		r = shim_get_ctx(&sc);
		if (r)
			return r;
		*handle = sc->default_stream;
		return CUDA_SUCCESS;
	}
	*handle = (uint64_t)(uintptr_t)s;
	if (AXON_HANDLE_TYPE(*handle) != AXON_HANDLE_STREAM)
		return CUDA_ERROR_INVALID_HANDLE;
	return CUDA_SUCCESS;
}
