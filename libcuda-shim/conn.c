// SPDX-License-Identifier: MIT
/*
 * The shim's connection to axond: made once at cuInit, then shared by all
 * threads. Taking SQEs and publishing them happens under shim.lock; waiting
 * for a completion is done by one reaper thread at a time, outside the lock,
 * so other threads keep submitting while someone waits.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"
#include "cpus.h"
#include "forkreg.h"
#include "cuerr.h"

struct shim shim = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/*
 * A forked child must not touch its parent's rings: the region is shared
 * memory, so its submissions would corrupt the parent's. The child forgets
 * the connection (its own cuInit connects it as a new client) and every
 * handle it inherited becomes invalid.
 */
static void forget_in_child(void)
{
	/* The parent's fault, or its lost axond, is not the child's: its
	 * own connection starts clean. */
	shim.fault = 0;
	shim.gone = false;
	if (!shim.connected)
		return;
	axon_close(&shim.ring);
	vaalloc_destroy(&shim.va);
	memset(shim.ctx, 0, sizeof(shim.ctx));
	memset(shim.primary, 0, sizeof(shim.primary));
	memset(shim.seq, 0, sizeof(shim.seq));
	shim_fork_forget_all();	/* every module's records (forkreg.h) */
	shim.nrecs = 0;
	shim.data_head = shim.data_tail = 0;
	shim.credit = 0;
	shim.credit_gran = 0;
	shim.reaper_active = false;
	shim.init_error = 0;
	__atomic_store_n(&shim.connected, false, __ATOMIC_RELEASE);
}

static void before_fork(void)
{
	shim_lock();
}

static void after_fork_parent(void)
{
	shim_unlock();
}

static void after_fork_child(void)
{
	forget_in_child();
	pthread_mutex_init(&shim.lock, NULL);
	pthread_cond_init(&shim.cond, NULL);
}

/* The CPUs this process may run on: its affinity, within a CPU quota. */
static unsigned int online_cpus(void)
{
	unsigned int n = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN), limit;
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = (unsigned int)CPU_COUNT(&set);
	limit = cpus_cgroup_limit("/proc/self/cgroup", "/sys/fs/cgroup");
	return limit && limit < n ? limit : n;
}

/* With fewer CPUs than this, SCHED_AUTO never spins: axond's threads need
 * them (the CI machines have 2). */
#define SPIN_AUTO_MIN_CPUS 8
/* How often SCHED_AUTO looks again at how busy the machine is. */
#define SPIN_AUTO_RECHECK_NS (5ULL * 1000 * 1000)

/*
 * SCHED_AUTO: whether the machine has CPUs to spare for a waiter that never
 * sleeps: enough of them, and no more than half running something now
 * (/proc/loadavg's running count, read at most every 5 ms). Clients that
 * all spun with 32 of them on 16 CPUs kept the workers' threads waiting
 * (fairness between 32 clients fell from 0.98 to 0.54 on the H200); with
 * this they stop spinning while the CPUs are taken. Lock held.
 */
static bool cpus_to_spare(void)
{
	static int fd = -2;
	static long online;
	static uint64_t next;
	static bool spare;
	uint64_t now = shim_prof_now();
	unsigned long running;
	char buf[128];
	ssize_t n;

	if (now < next)
		return spare;
	next = now + SPIN_AUTO_RECHECK_NS;
	spare = false;
	if (shim.ncpus < SPIN_AUTO_MIN_CPUS)
		return spare;
	if (fd == -2) {
		fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
		online = sysconf(_SC_NPROCESSORS_ONLN);
	}
	n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return spare;
	buf[n] = 0;
	if (online <= 0 || !cpus_loadavg_running(buf, &running))
		return spare;
	spare = running <= (unsigned long)online / 2;
	return spare;
}

/*
 * How long the reaper busy-polls for a completion before it sleeps, as the
 * current context's scheduling flags ask (cuCtxCreate,
 * cuDevicePrimaryCtxSetFlags, cudaSetDeviceFlags), the way CUDA waits for
 * the GPU: SCHED_SPIN and SCHED_YIELD never sleep (libaxon polls, then
 * polls yielding the CPU between polls); SCHED_BLOCKING_SYNC polls briefly
 * (spin_default) and then sleeps; SCHED_AUTO, the default, never sleeps
 * while the machine has CPUs to spare beside axond's own polling threads
 * (cpus_to_spare; CUDA spins when a process has no more contexts than
 * cores, but the work here also needs the daemon's CPUs), else it is
 * BLOCKING_SYNC. The futex wake-up after a step's sync cost PyTorch MLP
 * training 322 -> 338 step/s on the H200 (native 339). AXON_SPIN_NS, when
 * the user sets it, decides alone.
 */
static unsigned int wait_spin_ns(void)
{
	const struct shim_ctx *sc = shim_current_ctx();
	unsigned int sched;

	/* A thread with no context is ours (host functions' thread, which
	 * may wait as long as a stream runs, as CUDA's sleeps) or a program
	 * thread between contexts: poll briefly, then sleep. */
	if (shim.spin_from_env || !sc)
		return shim.spin_default;
	sched = sc->flags & CU_CTX_SCHED_MASK;
	if (sched == CU_CTX_SCHED_AUTO)
		sched = cpus_to_spare() ? CU_CTX_SCHED_SPIN : CU_CTX_SCHED_BLOCKING_SYNC;
	return sched == CU_CTX_SCHED_BLOCKING_SYNC ? shim.spin_default : AXON_SPIN_FOREVER;
}

/* Called with shim.lock held. */
static CUresult connect_locked(void)
{
	char err[256] = "";
	int ret;

	ret = axon_connect(NULL, NULL, &shim.ring, err, sizeof(err));
	if (ret) {
		shim_log("cannot connect to axond: %s", err);
		return ret == -EPROTO ? CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
				      : CUDA_ERROR_NO_DEVICE;
	}
	if (shim.ring.info->ndevices == 0) {
		axon_close(&shim.ring);
		return CUDA_ERROR_NO_DEVICE;
	}
	/* The client mints from its window minus the daemon's top 1/16. */
	ret = vaalloc_init(&shim.va, shim.ring.params.va_base,
			   shim.ring.params.va_size - shim.ring.params.va_size / 16);
	if (ret) {
		axon_close(&shim.ring);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	shim.credit = shim.ring.params.mint_credit;
	shim.spin_default = shim.ring.spin_ns;
	shim.spin_from_env = getenv("AXON_SPIN_NS") != NULL;
	shim.ncpus = online_cpus();
	__atomic_store_n(&shim.connected, true, __ATOMIC_RELEASE);
	if (!shim.atfork_done) {
		pthread_atfork(before_fork, after_fork_parent, after_fork_child);
		shim.atfork_done = true;
	}
	return CUDA_SUCCESS;
}

CUresult shim_ensure_init(void)
{
	CUresult r;

	if (__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_SUCCESS;
	shim_lock();
	if (shim.connected)
		r = CUDA_SUCCESS;
	else if (shim.init_error)
		r = shim.init_error;
	else
		r = connect_locked();
	if (r && !shim.init_error)
		shim.init_error = r;
	shim_unlock();
	return r;
}

/* Moves every available completion to its waiter. Reaper only. */
static void reap_ready(void)
{
	const struct axon_cqe *cqe;

	while (axon_peek_cqe(&shim.ring, &cqe) == 0) {
		struct shim_waiter *w = (struct shim_waiter *)(uintptr_t)cqe->user_data;

		if (!shim.fault && axon_cu_sticky(cqe->res))
			shim.fault = (uint32_t)cqe->res;

		if (w) {
			w->res = cqe->res;
			w->flags = cqe->flags;
			w->aux[0] = cqe->aux[0];
			w->aux[1] = cqe->aux[1];
			__atomic_store_n(&w->done, true, __ATOMIC_RELEASE);
		}
		axon_cqe_seen(&shim.ring);
	}
}

void shim_flush(void)
{
	int ret = axon_submit(&shim.ring);

	if (ret < 0)
		shim_log("submit failed: %s", strerror(-ret));
}

struct axon_sqe *shim_sqe(void)
{
	if (shim.fault)
		return NULL;
	return shim_sqe_after_fault();
}

/* An SQE even after a fault: what the daemon still holds for us (the
 * driver's message about the fault) is fetched with it. */
struct axon_sqe *shim_sqe_after_fault(void)
{
	struct axon_sqe *sqe;
	uint64_t t0 = 0;

	if (shim.gone)
		return NULL;
	while (!(sqe = axon_get_sqe(&shim.ring))) {
		if (shim_profiling && !t0)
			t0 = shim_prof_now();
		/* SQ full: publish what we have and let the daemon catch up. */
		shim_flush();
		/*
		 * The daemon takes an SQE that wants a completion only while
		 * the CQ has room: completions nobody waits for synchronously
		 * (host functions' WAITs, hostfunc.c) must not fill it while
		 * every thread is here, so take what has arrived.
		 */
		if (!shim.reaper_active) {
			reap_ready();
			pthread_cond_broadcast(&shim.cond);
		}
		if (axon_daemon_alive(&shim.ring)) {
			shim.gone = true;
			return NULL;
		}
		shim_unlock();
		sched_yield();
		shim_lock();
	}
	if (t0)
		shim_prof_ring_full(t0);
	return sqe;
}

/*
 * Waits for w (whose SQE was taken under the lock). Returns with the lock
 * held. The reaper drains CQEs for every waiter; others sleep on the cond.
 */
CUresult shim_wait(struct shim_waiter *w)
{
	uint64_t t0 = shim_profiling ? shim_prof_now() : 0;

	shim_flush();
	while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE)) {
		CUresult r = shim_reap_once();

		if (r)
			return r;
	}
	if (t0)
		shim_prof_wait(w->op ? w->op : AXON_OP_LAST, t0);
	return (CUresult)w->res;
}

/*
 * One round of waiting for completions, lock held: as the reaper (the lock
 * dropped while it sleeps), or, while another thread is, until its next
 * round. Callers re-check what they wait for (hostfunc.c waits for any of
 * several).
 */
CUresult shim_reap_once(void)
{
	const struct axon_cqe *cqe;
	int ret;

	if (shim.reaper_active) {
		pthread_cond_wait(&shim.cond, &shim.lock);
		return CUDA_SUCCESS;
	}
	shim.reaper_active = true;
	shim.ring.spin_ns = wait_spin_ns();
	shim_unlock();
	/* Only the reaper touches the CQ side of the ring. One that never
	 * sleeps comes back every SPIN_AUTO_RECHECK_NS to decide again (the
	 * callers wait in a loop), so it stops once the CPUs are taken. */
	ret = axon_wait_cqe(&shim.ring, &cqe,
			    shim.ring.spin_ns == AXON_SPIN_FOREVER ? SPIN_AUTO_RECHECK_NS : 0);
	/* Each slice starts libaxon's liveness clock again: look here. */
	if (ret == -ETIMEDOUT) {
		int alive = axon_daemon_alive(&shim.ring);

		if (alive)
			ret = alive;
	}
	shim_lock();
	if (ret == 0)
		reap_ready();
	shim.reaper_active = false;
	pthread_cond_broadcast(&shim.cond);
	if (ret && ret != -ETIMEDOUT) {
		/* -EPIPE: axond went away; on /dev/axon also the error the
		 * daemon disconnected us with. Either way no completion will
		 * come. */
		if (!shim.gone)
			shim_log("axond went away (%s)", strerror(-ret));
		shim.gone = true;
		return shim_gone_error();
	}
	return CUDA_SUCCESS;
}

/* Calls made again after reserving what the daemon asked for. */
#define RESERVE_TRIES	4

/*
 * Where the kernel charges through the dmem controller, the daemon refuses
 * a call whose charge our reservation cannot cover, marking its completion
 * (AXON_CQE_F_RESERVE: nothing was done) and naming the bytes in the daemon
 * page; only this process can reserve (dmem charges the caller's cgroup).
 * The call's SQE and data are still ours, so the same request goes again.
 * After it, and after any call that succeeded, the reservation goes back to
 * the credit's floor (axon_reserve_settle): the call may have consumed the
 * floor's units, which deferred allocations need.
 */
CUresult shim_sync_op(struct axon_sqe *sqe, struct shim_waiter *w)
{
	struct axon_sqe again = *sqe;
	unsigned int tries = 0;
	CUresult r;

	for (;;) {
		axon_sqe_set_data(sqe, (uint64_t)(uintptr_t)w);
		w->op = sqe->opcode;
		w->flags = 0;
		r = shim_wait(w);
		if (r != CUDA_ERROR_OUT_OF_MEMORY || !(w->flags & AXON_CQE_F_RESERVE) ||
		    tries == RESERVE_TRIES ||
		    axon_reserve(&shim.ring, __atomic_load_n(&shim.ring.dpage->reserve_want,
							    __ATOMIC_RELAXED)))
			break;
		tries++;
		sqe = shim_sqe();
		if (!sqe) {
			r = shim_gone_error();
			break;
		}
		*sqe = again;
		__atomic_store_n(&w->done, false, __ATOMIC_RELAXED);
	}
	/* Any call may have charged what the floor holds (a synchronous
	 * MEM_MAP does, and the daemon refills the credit it drew on): one
	 * ioctl per call, on a dmem ring only. */
	if (shim.ring.dmem && (tries || r == CUDA_SUCCESS))
		axon_reserve_settle(&shim.ring);
	return r;
}
