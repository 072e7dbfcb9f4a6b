// SPDX-License-Identifier: MIT
/*
 * Host functions: cuLaunchHostFunc and cuStreamAddCallback. The function
 * runs in this process, on one callback thread the shim starts on first
 * use, never in the daemon. Ordering is the daemon's (axond/ops/hostfunc.c):
 * the call queues HOST_FUNC WAIT on the stream, whose completion arrives
 * once the stream's earlier work is done, and from then on the daemon holds
 * the stream's later work; the callback thread runs the function and sends
 * HOST_FUNC DONE, which releases it. No submitting thread ever blocks on a
 * host function, and the daemon blocks nothing either.
 *
 * The callback thread takes the first completed record, whichever stream
 * it is on (host functions on different streams do not wait for each
 * other), runs it with no shim lock held, so a function may take the
 * program's own locks; it must not call CUDA, as with the driver (one that
 * waits for its own stream would wait for itself). While none is complete
 * it helps reap completions like any waiting thread.
 *
 * cuStreamQuery says NOT_READY while a host function of the stream has not
 * returned (its count in synchooks.h); cuStreamSynchronize,
 * cuCtxSynchronize and events recorded after it wait for it in the daemon. The status given to a
 * cuStreamAddCallback callback is the error of the stream's earlier work
 * as the next synchronising call would report it (not cleared), else
 * CUDA_SUCCESS.
 *
 * Each WAIT owes a completion, and the daemon takes an SQE that owes one
 * only while the CQ has room for it; a WAIT parked behind a held stream
 * keeps owing. So at most a quarter of the CQ's entries are WAITs not yet
 * completed: a call past that waits (reaping) until one completes, which
 * keeps room for the DONE's way through the SQ and for other threads'
 * synchronous calls. The driver's own queue blocks the caller the same
 * way once it is full, only deeper.
 *
 * cuLaunchHostFunc on a capturing stream adds a host node to the capture
 * instead (capture.c; cuStreamAddCallback is refused there, as natively);
 * the graph's launches run it as above, between the parts of the graph
 * (graph.c: shim_hostfn_issue_locked).
 *
 * A forked child has no callback thread and forgets the parent's records
 * (conn.c); its own cuInit starts over.
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"
#include "ptstream.h"
#include "synchooks.h"
#include "forkreg.h"

struct hostfn {
	struct shim_waiter w;		/* the WAIT's completion; user_data */
	CUhostFn fn;			/* cuLaunchHostFunc, or */
	CUstreamCallback cb;		/* cuStreamAddCallback */
	void *user;
	CUstream stream;		/* as the caller named it (for cb) */
	uint64_t h;			/* its daemon handle */
	/* A graph launch's: the host work fn and user belong to (a
	 * reference, put once the function ran). */
	struct shim_hostwork *keep;
	struct hostfn *next;
};

/* All under shim.lock. */
static struct hostfn *head, *tail;
static bool thread_started;

static void hostfns_forget(void)
{
	struct hostfn *p, *n;

	for (p = head; p; p = n) {
		n = p->next;
		free(p);
	}
	head = tail = NULL;
	thread_started = false;
	/* The child has none of the parent's host functions; this file is
	 * the only one that counts streams' local work. */
	memset(shim_stream_local_busy, 0, sizeof(shim_stream_local_busy));
}

__attribute__((constructor)) static void register_hostfns_forget(void)
{
	shim_fork_register(hostfns_forget);
}

/* The first record whose WAIT completed, unlinked. */
static struct hostfn *take_done(void)
{
	struct hostfn **pp, *p, *prev = NULL;

	for (pp = &head; (p = *pp); prev = p, pp = &p->next) {
		if (!__atomic_load_n(&p->w.done, __ATOMIC_ACQUIRE))
			continue;
		*pp = p->next;
		if (tail == p)
			tail = prev;
		p->next = NULL;
		return p;
	}
	return NULL;
}

/* WAITs whose completion has not been reaped (they hold CQ credit). */
static unsigned int waiting(void)
{
	const struct hostfn *p;
	unsigned int n = 0;

	for (p = head; p; p = p->next)
		n += !__atomic_load_n(&p->w.done, __ATOMIC_ACQUIRE);
	return n;
}

static void run(struct hostfn *p, CUresult status)
{
	if (p->fn)
		p->fn(p->user);
	else
		p->cb(p->stream, status, p->user);
}

/* Tells the daemon the function returned: the stream's later work goes. */
static void send_done(struct hostfn *p)
{
	/* Even after a fault: a DONE queues no work, it releases what the
	 * daemon holds back (a synchronisation waiting behind it). */
	struct axon_sqe *sqe = shim_sqe_after_fault();

	if (!sqe)
		return;		/* the daemon is gone: nothing is held */
	axon_prep_host_func(sqe, p->h, (uint64_t)(uintptr_t)p, AXON_HOST_FUNC_DONE, 0);
	axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
	shim_flush();
}

static void *callback_thread(void *arg)
{
	(void)arg;
	shim_lock();
	for (;;) {
		struct hostfn *p = take_done();
		CUresult status;

		if (p) {
			status = (CUresult)p->w.res;
			if (!status)
				status = (CUresult)axon_read_once(&shim.ring.dpage->pending_error);
			shim_unlock();
			run(p, status);
			/* No lock held: the last put frees staging memory. The
			 * parts after this function still read it in the
			 * daemon, which lets it go only after them. */
			shim_hostwork_put(p->keep);
			shim_lock();
			__atomic_fetch_sub(shim_stream_busy_count(p->h), 1,
					   __ATOMIC_RELEASE);
			send_done(p);
			free(p);
			continue;
		}
		if (!head) {
			pthread_cond_wait(&shim.cond, &shim.lock);
			continue;
		}
		if (shim_reap_once()) {
			/*
			 * The daemon is gone: no completion will come and
			 * nothing is held. Run what is left with the error,
			 * so no program waits forever for its callbacks.
			 */
			while ((p = head)) {
				head = p->next;
				shim_unlock();
				run(p, shim_gone_error());
				shim_hostwork_put(p->keep);
				shim_lock();
				__atomic_fetch_sub(shim_stream_busy_count(p->h),
						   1, __ATOMIC_RELEASE);
				free(p);
			}
			tail = NULL;
		}
	}
	return NULL;
}

/* Queues the WAIT of a host function on stream h; shim.lock held. keep:
 * see struct hostfn (a reference is taken). */
static CUresult enqueue_locked(CUstream s, uint64_t h, CUhostFn fn, CUstreamCallback cb,
			       void *user, struct shim_hostwork *keep)
{
	struct axon_sqe *sqe;
	struct hostfn *p;
	pthread_attr_t attr;
	pthread_t t;
	CUresult r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return CUDA_ERROR_OUT_OF_MEMORY;
	p->fn = fn;
	p->cb = cb;
	p->user = user;
	p->stream = s;
	p->h = h;
	if (!thread_started) {
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, callback_thread, NULL)) {
			pthread_attr_destroy(&attr);
			free(p);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		pthread_attr_destroy(&attr);
		thread_started = true;
	}
	while (waiting() >= (shim.ring.cq_entries / 4 ? shim.ring.cq_entries / 4 : 1)) {
		r = shim_reap_once();
		if (r) {
			free(p);
			return r;
		}
	}
	sqe = shim_sqe();
	if (!sqe) {
		free(p);
		return shim_gone_error();
	}
	if (keep) {
		shim_hostwork_get(keep);
		p->keep = keep;
	}
	axon_prep_host_func(sqe, h, 0, AXON_HOST_FUNC_WAIT, 0);
	axon_sqe_set_data(sqe, (uint64_t)(uintptr_t)&p->w);
	if (tail)
		tail->next = p;
	else
		head = p;
	tail = p;
	__atomic_fetch_add(shim_stream_busy_count(h), 1, __ATOMIC_RELEASE);
	shim_flush();
	/* The callback thread may be asleep with nothing to wait for. */
	pthread_cond_broadcast(&shim.cond);
	return CUDA_SUCCESS;
}

static CUresult enqueue(CUstream s, CUhostFn fn, CUstreamCallback cb, void *user)
{
	uint64_t h;
	CUresult r;

	if (!fn && !cb)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_stream(s, &h);
	/* A legacy callback cannot be captured (the driver refuses it too). */
	if (!r && cb)
		r = shim_capture_check_stream(h);
	if (r)
		return r;
	shim_lock();
	r = enqueue_locked(s, h, fn, cb, user, NULL);
	shim_unlock();
	return r;
}

CUresult shim_hostfn_issue_locked(uint64_t h, const struct shim_hostnode *n,
				  struct shim_hostwork *keep)
{
	struct shim_hostnode c = { .fn = n->fn, .arg = n->arg, .keep = keep };
	uint32_t index;
	int taken;

	if (shim_capturing()) {
		/* Into the capture, as a node of its own that borrows fn and
		 * arg from keep. */
		shim_hostwork_get(keep);
		taken = shim_capture_host_add_locked(h, &c, 2, &index);
		if (taken > 0)
			return shim_capture_host_send_locked(h, index);
		shim_hostwork_unget(keep);	/* the caller holds one */
		if (taken < 0)
			return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return enqueue_locked(NULL, h, c.fn, NULL, c.arg, keep);
}

/* In a capture: a host node (the graph's launches run it). */
static CUresult host_node(uint64_t h, CUhostFn fn, void *user, bool *taken)
{
	struct shim_hostnode n = { .fn = fn, .arg = user };
	uint32_t index;
	CUresult r = CUDA_SUCCESS;
	int k;

	shim_capture_host_lock();
	shim_lock();
	k = shim_capture_host_add_locked(h, &n, 0, &index);
	if (k > 0)
		r = shim_capture_host_send_locked(h, index);
	shim_unlock();
	shim_capture_host_unlock();
	*taken = k != 0;
	return k < 0 ? CUDA_ERROR_OUT_OF_MEMORY : r;
}

SHIM_EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *user)
{
	bool taken = false;
	uint64_t h;
	CUresult r;

	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	if (shim_capturing()) {
		r = shim_stream(s, &h);
		if (!r)
			r = host_node(h, fn, user, &taken);
		if (r || taken)
			return r;
	}
	return enqueue(s, fn, NULL, user);
}

SHIM_EXPORT CUresult cuLaunchHostFunc_ptsz(CUstream s, CUhostFn fn, void *user)
{
	return SHIM_PER_THREAD(cuLaunchHostFunc(s, fn, user));
}

SHIM_EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *user,
					 unsigned int flags)
{
	if (!cb || flags)
		return CUDA_ERROR_INVALID_VALUE;
	return enqueue(s, NULL, cb, user);
}

SHIM_EXPORT CUresult cuStreamAddCallback_ptsz(CUstream s, CUstreamCallback cb, void *user,
					      unsigned int flags)
{
	return SHIM_PER_THREAD(cuStreamAddCallback(s, cb, user, flags));
}
