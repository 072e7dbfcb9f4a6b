// SPDX-License-Identifier: MIT
/*
 * axond: the only process that opens the device. Takes its options
 * (options.c), sets up the backend, the info page and the socket, then runs
 * the dispatcher loop: drain every client's ring, spin briefly when idle,
 * then sleep in epoll until a doorbell, a completion from the executor, a
 * connection or a signal arrives.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <axon/libaxon.h>
#include "axond.h"
#include "trace.h"
#include "server.h"
#include "pool.h"
#include "client.h"
#include "loader.h"
#include "holdings.h"
#include "backend.h"
#include "work.h"
#include "options.h"
#include "dispatch.h"
#include "ops/ops.h"
#include "access.h"
#include "hello.h"

/* Runs every op table entry through the start-up check, as io_uring does. */
static int check_op_table(void)
{
	unsigned int i;

	for (i = 0; i < AXON_OP_LAST; i++) {
		if (!op_table[i].name || !op_table[i].prep || !op_table[i].issue) {
			log_err("op %u has no table entry", i);
			return -EINVAL;
		}
	}
	return 0;
}

static int setup_info(struct axond *d)
{
	size_t size = (sizeof(struct axon_info) + 4095) & ~4095UL;

	d->info_fd = memfd_create("axon-info", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (d->info_fd < 0 || ftruncate(d->info_fd, (off_t)size) < 0)
		return -errno;
	d->info = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, d->info_fd, 0);
	if (d->info == MAP_FAILED)
		return -errno;
	d->info->magic = AXON_MAGIC;
	d->info->abi_major = AXON_ABI_MAJOR;
	d->info->abi_minor = AXON_ABI_MINOR;
	d->info->start_time_ns = (uint64_t)time(NULL) * 1000000000ull;
	return 0;
}

/* Seal the info page so clients can map it read-only and never change it. */
static int seal_info(struct axond *d)
{
	if (fcntl(d->info_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
		  F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0)
		return -errno;
	return 0;
}

static int setup_fds(struct axond *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t mask;

	d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epoll_fd < 0)
		return -errno;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (d->signal_fd < 0)
		return -errno;
	ev.data.u64 = EV_SIGNAL;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->signal_fd, &ev) < 0)
		return -errno;
	d->worker_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->worker_fd < 0)
		return -errno;
	ev.data.u64 = EV_WORKER;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->worker_fd, &ev) < 0)
		return -errno;
	return 0;
}

/* --transport=kmod without the module: no client could be served. */
static int require_kmod(struct axond *d)
{
	if (!d->cfg.kmod_only || d->kmod_fd >= 0)
		return 0;
	log_err("--transport=kmod: not attached to %s (is the axon module loaded?)",
		d->cfg.kmod ? d->cfg.kmod : AXON_DEVICE_PATH);
	return -ENODEV;
}

static void drain_fd(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0)
		;
}

/*
 * A device fault (an assert, an illegal address) makes NVIDIA's driver
 * refuse everything in the whole process, not only in the faulting
 * context: seen on the H200 with driver 580.159.04, where after one
 * context's CUDA_ERROR_ASSERT every other context, a new context and
 * cuMemHostRegister answered 710 too, even once the faulting context was
 * destroyed. So the daemon cannot go on: its clients get the fault at
 * their next synchronisation anyway, and a fresh process is the only way
 * for new clients to be served.
 */
static void request_restart(struct axond *d, const char *why, int32_t error,
			    uint64_t client_id)
{
	uint64_t one = 1, nobody = 0;
	int32_t none = 0;

	/*
	 * A worker serves one client: its fault harms nobody else, so the
	 * worker stays, answering the fault to every later call as the
	 * driver would (and handing the client the driver's assert message),
	 * and ends when its client does. Restarting is the supervisor's
	 * business: a SIGHUP meant for it changes nothing here.
	 */
	if (axond_is_worker(d)) {
		if (error) {
			log_info("client %llu hit %s (%d): it keeps this worker until it exits",
				 (unsigned long long)client_id, why, (int)error);
			worker_client_faulted();
		}
		return;
	}
	if (error && atomic_compare_exchange_strong(&d->restart_error, &none, error))
		atomic_compare_exchange_strong(&d->restart_client, &nobody, client_id);
	if (atomic_exchange(&d->restart, true))
		return;
	log_warn("%s: every client is ended and axond starts again", why);
	(void)!write(d->worker_fd, &one, sizeof(one));
}

static void handle_event(struct axond *d, const struct epoll_event *ev)
{
	uint64_t tag = ev->data.u64;

	if (tag == EV_LISTEN) {
		server_accept(d);
	} else if (tag == EV_SIGNAL) {
		struct signalfd_siginfo si;

		while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
			/* SIGHUP: start again with the same options (a new
			 * driver, a changed configuration), keeping the socket. */
			if (si.ssi_signo == SIGHUP) {
				request_restart(d, "SIGHUP", 0, 0);
				continue;
			}
			log_info("signal %u: shutting down", si.ssi_signo);
			d->stop = true;
		}
	} else if (tag == EV_WORKER) {
		drain_fd(d->worker_fd);
	} else if (tag == EV_KMOD) {
		kmod_events(d);
	} else if (tag == EV_CTL) {
		worker_ctl_event(d);
	} else if (tag & EV_PENDING) {
		hello_route(d, tag);
	} else if (tag & EV_TRACER_BIT) {
		/* Tracers only listen; anything else means they left. */
		trace_hangup(d, tag);
	} else {
		/* A descriptor the client's transport registered for it. */
		struct client *c = (struct client *)(uintptr_t)(tag & ~EV_DOORBELL_BIT);

		if (!c->dead)
			c->xport->event(d, c, tag, ev->events);
	}
}

/* The client an event names (its socket or doorbell), else NULL. */
static struct client *event_client(uint64_t tag)
{
	if (tag <= EV_CTL || (tag & EV_PENDING) || (tag & EV_TRACER_BIT))
		return NULL;
	return (struct client *)(uintptr_t)(tag & ~EV_DOORBELL_BIT);
}

/*
 * One epoll batch. A handler may disconnect, and so free, a client that a
 * later event of the same batch names (its socket hung up, then its
 * doorbell): hold a reference on each named client across the batch, so
 * the later handler finds it dead, not freed.
 */
static void handle_events(struct axond *d, const struct epoll_event *evs, int n)
{
	struct client *c;
	int i;

	for (i = 0; i < n; i++)
		if ((c = event_client(evs[i].data.u64)))
			client_get(c);
	for (i = 0; i < n; i++)
		handle_event(d, &evs[i]);
	for (i = 0; i < n; i++)
		if ((c = event_client(evs[i].data.u64)))
			client_put(d, c);
}

#define BATCH	64

static int drain_all(struct axond *d)
{
	struct client *c, *next;
	int n = dispatch_done_queue(d);

	for (c = d->clients; c; c = next) {
		next = c->next;	/* dispatch may disconnect c */
		n += dispatch_client(d, c, BATCH);
	}
	return n;
}

/*
 * sq_flags is not ours alone: the kernel sets AXON_SQ_F_DAEMON_GONE in it
 * when the attached daemon goes (with --isolation=process that is the
 * supervisor, while a worker keeps writing), so each change is an atomic
 * read-modify-write, never a load and a store that could undo the
 * kernel's bit.
 */
static void set_need_wakeup(struct axond *d, bool on)
{
	struct client *c;

	for (c = d->clients; c; c = c->next) {
		uint32_t *f = &c->dpage->sq_flags;

		/* A locked operation only where the bit changes. */
		if (!(axon_read_once(f) & AXON_SQ_F_NEED_WAKEUP) == !on)
			continue;
		if (on)
			__atomic_fetch_or(f, AXON_SQ_F_NEED_WAKEUP, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(f, ~AXON_SQ_F_NEED_WAKEUP, __ATOMIC_RELAXED);
	}
}

/* While spinning, the sockets are looked at this often. */
#define EPOLL_EVERY_NS	(20ULL * 1000)

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void run(struct axond *d)
{
	const uint64_t spin_ns = (uint64_t)d->cfg.spin_us * 1000;
	struct epoll_event evs[64];
	uint64_t idle_since = axond_now_ns(), last_epoll = 0, now;
	unsigned int polls = 0;
	int n;

	while (!d->stop && !atomic_load(&d->restart) &&
	       !(axond_is_worker(d) && worker_done(d))) {
		if (drain_all(d)) {
			idle_since = axond_now_ns();
			/* Keep connections, hang-ups and traces moving under load. */
			if (++polls % 256 == 0) {
				trace_flush(d);
				n = epoll_wait(d->epoll_fd, evs, 64, 0);
				handle_events(d, evs, n);
			}
			continue;
		}
		now = axond_now_ns();
		if (now - idle_since < spin_ns) {
			/*
			 * Spinning: look at the sockets now and then, not at
			 * every turn. An epoll_wait is a system call; a ring
			 * submitted meanwhile waited for it to return (the
			 * round trip of a synchronous call, ~1 us on the H200).
			 */
			if (now - last_epoll >= EPOLL_EVERY_NS) {
				last_epoll = now;
				server_expire(d);
				n = epoll_wait(d->epoll_fd, evs, 64, 0);
				handle_events(d, evs, n);
			} else {
				cpu_relax();
			}
			continue;
		}
		/*
		 * Going to sleep: announce it, full barrier, look once more.
		 * Pairs with the barrier in axon_submit() (clients) and in
		 * done_push() (executor).
		 */
		set_need_wakeup(d, true);
		atomic_store(&d->sleeping, true);
		atomic_thread_fence(memory_order_seq_cst);
		trace_flush(d);
		if (!drain_all(d))
			n = epoll_wait(d->epoll_fd, evs, 64, server_expire(d));
		else
			n = 0;
		atomic_store(&d->sleeping, false);
		set_need_wakeup(d, false);
		handle_events(d, evs, n);
		idle_since = axond_now_ns();
	}
}

int main(int argc, char **argv)
{
	static struct axond daemon;
	struct axond *d = &daemon;
	char err[256] = "";
	bool restarting;
	int ret;

	d->listen_fd = d->info_fd = d->epoll_fd = d->signal_fd = d->worker_fd = -1;
	d->addr_lock_fd = -1;
	d->kmod_fd = -1;
	pthread_mutex_init(&d->done_lock, NULL);
	d->start_ns = axond_now_ns();
	if (axond_parse_args(d, argc, argv) || access_init(d))
		return 2;
	if (axond_is_worker(d))
		snprintf(axond_log_tag, sizeof(axond_log_tag), "worker %d ", (int)getpid());
	if (check_op_table())
		return 1;
	/* What a backend's device fault means for this process. */
	work_register_fault(request_restart);
	d->backend = backend_find(d->cfg.backend);
	/* Only a backend that prepares regions gains from a pool; a worker
	 * serves one client. */
	if (d->cfg.region_pool == ~0U)
		d->cfg.region_pool = d->backend && d->backend->region_prepare ?
				     (axond_is_worker(d) ? 1 : 2) : 0;
	if (!d->backend) {
		log_err("unknown backend '%s' (this build has: sim, cuda)", d->cfg.backend);
		return 2;
	}
	/* A real driver poisons a whole process on a device fault: only a
	 * process per client keeps a fault to its client (supervisor.c). */
	if (!d->cfg.isolation)
		d->cfg.isolation = !strcmp(d->backend->name, "cuda") ? "process" : "context";
	if (axond_is_worker(d) && strcmp(d->cfg.isolation, "process")) {
		log_err("--worker-ctl is for workers of --isolation=process");
		return 2;
	}
	if (d->cfg.kmod_only && d->cfg.kmod && !strcmp(d->cfg.kmod, "off")) {
		log_err("--transport=kmod needs the kernel transport: not with --kmod=off");
		return 2;
	}
	/* A worker's clients come from its supervisor, the daemon attached
	 * to /dev/axon: a /dev/axon client with the delegate that acts for
	 * it (supervisor-kmod.c). */
	if (axond_is_worker(d))
		d->cfg.kmod = "off";
	if (axond_is_supervisor(d)) {
		ret = setup_fds(d);
		if (!ret)
			ret = kmod_attach(d);
		if (!ret)
			ret = require_kmod(d);
		if (!ret)
			ret = server_listen(d);
		if (ret) {
			if (ret != -ENODEV)
				log_err("setup: %s", strerror(-ret));
			return 1;
		}
		return supervisor_run(d, argv);
	}
	ret = setup_info(d);
	if (!ret)
		ret = setup_fds(d);
	if (ret) {
		log_err("setup: %s", strerror(-ret));
		return 1;
	}
	ret = d->backend->init(d, err, sizeof(err));
	if (ret) {
		log_err("backend %s: %s", d->backend->name, err);
		return 1;
	}
	{
		/* Client windows: disjoint, each twice the device's memory. */
		uint64_t w = 1ULL << 30;

		while (w < 2 * d->info->device[0].total_mem)
			w <<= 1;
		d->cfg.va_size = w;
		d->cfg.va_base = 1ULL << 44;
	}
	holdings_init(d);
	ret = seal_info(d);
	if (!ret)
		region_pool_init(d);
	if (!ret && axond_is_worker(d)) {
		/* Ready means ready: its client's region too. */
		if (d->backend->region_pool_wait)
			d->backend->region_pool_wait(d);
		ret = worker_start(d);
		if (ret)
			log_err("worker: cannot reach the supervisor: %s", strerror(-ret));
	} else {
		/* Attached first: with --transport=kmod and no module,
		 * nothing listens. */
		if (!ret)
			ret = kmod_attach(d);
		if (!ret)
			ret = require_kmod(d);
		if (!ret)
			ret = server_listen(d);
	}
	if (ret) {
		d->backend->fini(d);
		return 1;
	}
	if (axond_is_worker(d))
		log_debug("worker ready: backend %s, %u device(s), %s", d->backend->name,
			  d->info->ndevices, d->info->device[0].name);
	else
		log_info("axond ready: backend %s, %u device(s), %s", d->backend->name,
			 d->info->ndevices, d->info->device[0].name);
	run(d);

	/* Orderly shutdown: tell every client, stop the executor, free. A
	 * restart keeps the listening socket for the next process. */
	/* A SIGTERM read with a restart's cause wins: stop. */
	restarting = atomic_load(&d->restart) && !d->stop;
	if (restarting)
		server_handover(d);
	else
		server_close(d);
	trace_close_all(d);
	/* A device fault ends everyone. The client whose work faulted (its
	 * contexts hold the error) answers the fault from then on, as CUDA
	 * would; the others were not at fault and answer that the device is
	 * gone. The page stays mapped in the client after we are. */
	if (restarting && atomic_load(&d->restart_error)) {
		struct client *c;

		for (c = d->clients; c; c = c->next)
			if (c->dpage)
				axon_write_once(&c->dpage->gone_error,
						c->id == atomic_load(&d->restart_client) ||
						c->sticky_any ?
						(uint32_t)atomic_load(&d->restart_error) :
						(uint32_t)CUDA_ERROR_DEVICE_UNAVAILABLE);
	}
	while (d->clients)
		client_disconnect(d, d->clients);
	kmod_detach(d);
	region_pool_fini(d);
	/* No load may run in the driver once the backend is gone. */
	loader_stop(d);
	d->backend->fini(d);
	dispatch_prof_log();
	dispatch_done_queue(d);
	if (restarting) {
		/* Same binary, same options. Ours are close-on-exec; the
		 * driver's (/dev/nvidia*) are not ours to trust: close every
		 * descriptor but the socket handed over. */
		log_info("axond restarting");
		close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
		server_keep_across_exec(d);
		execv("/proc/self/exe", argv);
		log_err("restart: cannot run /proc/self/exe: %s", strerror(errno));
		server_close(d);
		return 1;
	}
	log_info("axond stopped");
	return 0;
}
