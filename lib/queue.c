// SPDX-License-Identifier: MIT
/*
 * Submitting and waiting: the only libaxon code on the I/O path that may
 * enter the kernel, and only to ring a sleeping daemon's doorbell or to
 * sleep when no completion came during the spin.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
	struct pollfd pfd = { .fd = r->sock_fd, .events = POLLIN };

	if (axon_read_once(&r->dpage->sq_flags) & AXON_SQ_F_DAEMON_GONE)
		return -EPIPE;
	if (r->transport == AXON_TRANSPORT_KMOD)
		return axon_kmod_alive(r);
	/* axond never writes to the socket after the welcome: any readiness
	 * means it closed its end. */
	if (poll(&pfd, 1, 0) > 0)
		return -EPIPE;
	return 0;
}

int axon_submit(struct axon_ring *r)
{
	uint32_t published = axon_read_once(&r->cpage->sq_tail);
	uint32_t n = r->sq_tail - published;
	uint64_t one = 1;

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
		if (axon_read_once(&r->dpage->sq_flags) & AXON_SQ_F_DAEMON_GONE)
			return -EPIPE;
		__atomic_fetch_add(&r->doorbells, 1, __ATOMIC_RELAXED);
		if (r->transport == AXON_TRANSPORT_KMOD) {
			int ret = axon_kmod_doorbell(r, n);

			if (ret)
				return ret;
		} else if (write(r->doorbell_fd, &one, sizeof(one)) < 0 &&
			   errno != EAGAIN) {
			return -errno;
		}
	}
	return (int)n;
}

static long futex_wait(const uint32_t *addr, uint32_t val, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	return syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

/*
 * The daemon may have stopped taking our SQEs because our CQ was full, and
 * gone to sleep; we have reaped since. It cannot know, so ring it (pairs
 * with its set-NEED_WAKEUP, barrier, re-check; the caller has issued a full
 * barrier since it reaped).
 */
static int ring_if_held(struct axon_ring *r)
{
	uint64_t one = 1;

	if (axon_read_once(&r->cpage->sq_tail) == axon_load_acquire(&r->dpage->sq_head) ||
	    !(axon_read_once(&r->dpage->sq_flags) & AXON_SQ_F_NEED_WAKEUP))
		return 0;
	__atomic_fetch_add(&r->doorbells, 1, __ATOMIC_RELAXED);
	if (r->transport == AXON_TRANSPORT_KMOD)
		return axon_kmod_doorbell(r, 1);
	if (write(r->doorbell_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
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
			if (r->transport == AXON_TRANSPORT_KMOD) {
				int ret = axon_kmod_wait(r, t + slice);

				if (ret) {
					axon_write_once(&r->cpage->cq_flags, 0);
					return ret;
				}
			} else {
				futex_wait(&r->dpage->cq_tail, tail, slice);
			}
		}
		axon_write_once(&r->cpage->cq_flags, 0);
		if (axon_peek_cqe(r, cqe) == 0)
			return 0;
		if (axon_daemon_alive(r))
			return -EPIPE;
	}
}
