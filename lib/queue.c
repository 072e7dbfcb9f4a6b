// SPDX-License-Identifier: MIT
/*
 * Submitting and waiting: the only libaxon code on the I/O path that may
 * enter the kernel, and only to ring a sleeping daemon's doorbell or to
 * sleep when no completion came during the spin. How it rings and sleeps
 * is the transport's (r->ops); the protocol around it is the same on all.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <axon/libaxon.h>
#include "transport.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int axon_daemon_alive(struct axon_ring *r)
{
	if (axon_read_once(&r->dpage->sq_flags) & AXON_SQ_F_DAEMON_GONE)
		return -EPIPE;
	return r->ops->alive(r);
}

/* Tells the daemon, asleep (NEED_WAKEUP), that n more SQEs are published. */
static int ring_doorbell(struct axon_ring *r, uint32_t n)
{
	__atomic_fetch_add(&r->doorbells, 1, __ATOMIC_RELAXED);
	return r->ops->doorbell(r, n);
}

int axon_submit(struct axon_ring *r)
{
	uint32_t published = axon_read_once(&r->cpage->sq_tail);
	uint32_t n = r->sq_tail - published;

	if (!n)
		return 0;
	/* Pairs with the daemon's acquire of sq_tail: SQE stores come first. */
	axon_store_release(&r->cpage->sq_tail, r->sq_tail);
	/*
	 * Full barrier between publishing the tail and reading the daemon's
	 * NEED_WAKEUP flag; the daemon sets the flag, issues the same barrier
	 * and re-reads every tail before it sleeps, so one side always sees
	 * the other.
	 */
	axon_smp_mb();
	if (axon_read_once(&r->dpage->sq_flags) & (AXON_SQ_F_NEED_WAKEUP |
						   AXON_SQ_F_DAEMON_GONE)) {
		int ret;

		if (axon_read_once(&r->dpage->sq_flags) & AXON_SQ_F_DAEMON_GONE)
			return -EPIPE;
		ret = ring_doorbell(r, n);
		if (ret)
			return ret;
	}
	return (int)n;
}

/*
 * The daemon may have stopped taking our SQEs because our CQ was full, and
 * gone to sleep; we have reaped since. It cannot know, so ring it (pairs
 * with its set-NEED_WAKEUP, barrier, re-check; the caller has issued a full
 * barrier since it reaped).
 */
static int ring_if_held(struct axon_ring *r)
{
	if (axon_read_once(&r->cpage->sq_tail) == axon_load_acquire(&r->dpage->sq_head) ||
	    !(axon_read_once(&r->dpage->sq_flags) & AXON_SQ_F_NEED_WAKEUP))
		return 0;
	return ring_doorbell(r, 1);
}

/* AXON_SPIN_FOREVER: busy-polls this long, then yields between polls. */
#define SPIN_YIELD_AFTER_NS (50 * 1000ull)

int axon_wait_cqe(struct axon_ring *r, const struct axon_cqe **cqe,
		  uint64_t timeout_ns)
{
	const uint64_t start = now_ns();
	const uint64_t deadline = timeout_ns ? start + timeout_ns : UINT64_MAX;
	/* How long one sleep may last before we check that axond lives. */
	const uint64_t liveness_ns = 100 * 1000 * 1000ull;
	uint64_t t, checked = start;
	/* Spinning without end, the doorbell check is made once per call:
	 * cq_head does not move while we wait, and ringing again for SQEs
	 * held back for another reason (the queue limit, completions owed)
	 * would only keep axond from sleeping. */
	bool rang = false;

	for (;;) {
		uint32_t tail;
		int rc;

		if (axon_peek_cqe(r, cqe) == 0)
			return 0;
		t = now_ns();
		if (t >= deadline)
			return -ETIMEDOUT;
		if (t - start < r->spin_ns || r->spin_ns == AXON_SPIN_FOREVER) {
			/* A long spin checks that axond lives as a sleep does. */
			if (t - checked >= liveness_ns) {
				checked = t;
				if (axon_daemon_alive(r))
					return -EPIPE;
			}
			/* One that never sleeps gives the CPU to whatever else
			 * is runnable on it (axond's threads among them) once
			 * the first stretch is over; on an idle CPU a yield
			 * comes straight back. */
			if (r->spin_ns == AXON_SPIN_FOREVER && t - start >= SPIN_YIELD_AFTER_NS) {
				/* It never reaches the sleep's doorbell check. */
				if (!rang) {
					rang = true;
					axon_smp_mb();
					rc = ring_if_held(r);
					if (rc)
						return rc;
				}
				sched_yield();
			} else {
				__builtin_ia32_pause();
			}
			continue;
		}
		/*
		 * Announce that we may sleep, then re-check: the daemon
		 * publishes cq_tail, issues a full barrier and reads
		 * WAITING, so either it sees the flag and wakes us or we see
		 * the new tail here.
		 */
		axon_write_once(&r->cpage->cq_flags, AXON_CQ_F_WAITING);
		axon_smp_mb();
		rc = ring_if_held(r);
		if (rc)
			return rc;
		tail = axon_load_acquire(&r->dpage->cq_tail);
		if (tail == r->cq_head) {
			uint64_t slice = deadline - t;

			if (slice > liveness_ns)
				slice = liveness_ns;
			r->sleeps++;
			rc = r->ops->wait(r, tail, slice);
			if (rc) {
				axon_write_once(&r->cpage->cq_flags, 0);
				return rc;
			}
		}
		axon_write_once(&r->cpage->cq_flags, 0);
		if (axon_peek_cqe(r, cqe) == 0)
			return 0;
		if (axon_daemon_alive(r))
			return -EPIPE;
	}
}
