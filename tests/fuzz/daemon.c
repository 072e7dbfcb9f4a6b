// SPDX-License-Identifier: MIT
/*
 * The fuzzers' in-process axond (daemon.h): what axond/main.c's main()
 * does before its loop, minus the socket, the signals and the kernel
 * transport, with the options below; then the dispatcher's steps run by
 * hand.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <axon/libaxon.h>
#include "daemon.h"
#include "backend.h"
#include "client.h"
#include "dispatch.h"
#include "options.h"
#include "kernelset.h"

#define STUCK_NS	(10ULL * 1000 * 1000 * 1000)

/*
 * Start-up steps of main() being added to axond as this is written
 * (access.c, holdings.c): weak, so that this builds with and without
 * them, and called when they are linked. Keep this file's set-up in step
 * with main()'s.
 */
int access_init(struct axond *d) __attribute__((weak));
void holdings_init(struct axond *d) __attribute__((weak));

static void die(const char *what)
{
	fprintf(stderr, "fuzz daemon: %s\n", what);
	abort();
}

struct axond *fuzz_daemon(void)
{
	/* A small device keeps what hostile sizes can touch small. */
	static char *argv[] = {
		"axond-fuzz", "--backend=sim", "--sim-mem=64M", "--mint-credit=4M",
		"--data-size=64K", "--region-pool=0", "--isolation=context",
		"--kmod=off", "-q", NULL
	};
	static struct axond daemon;
	static struct axond *d;
	char err[256] = "";
	uint64_t w = 1ULL << 30;
	int ret;

	if (d)
		return d;
	daemon.listen_fd = daemon.info_fd = daemon.epoll_fd = -1;
	daemon.signal_fd = daemon.worker_fd = daemon.kmod_fd = -1;
	pthread_mutex_init(&daemon.done_lock, NULL);
	daemon.start_ns = axond_now_ns();
	optind = 1;
	if (axond_parse_args(&daemon, (int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) ||
	    (access_init && access_init(&daemon)))
		die("options refused");
	/* The test kernels, linked in, as --sim-kernels would load them. */
	if (sim_kernelset_install(axon_sim_kernels_register_v1(SIM_KERNELS_ABI_VERSION),
				  "the fuzzers' kernels", err, sizeof(err)))
		die(err);
	daemon.backend = backend_find(daemon.cfg.backend);
	if (!daemon.backend)
		die("no sim backend");
	daemon.info = calloc(1, sizeof(*daemon.info));
	daemon.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	daemon.worker_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!daemon.info || daemon.epoll_fd < 0 || daemon.worker_fd < 0)
		die("out of memory or descriptors");
	ret = daemon.backend->init(&daemon, err, sizeof(err));
	if (ret)
		die(err);
	/* Client windows as main() lays them out. */
	while (w < 2 * daemon.info->device[0].total_mem)
		w <<= 1;
	daemon.cfg.va_size = w;
	daemon.cfg.va_base = 1ULL << 44;
	if (holdings_init)
		holdings_init(&daemon);
	d = &daemon;
	return d;
}

struct client *fuzz_client_new(struct axond *d, struct axon_welcome *w)
{
	struct axon_hello h = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
		.kind = AXON_HELLO_CLIENT,
		.params = { .sq_entries = 64, .data_size = 64 << 10 },
	};

	memset(w, 0, sizeof(*w));
	return client_create(d, -1, &h, w);
}

static bool done_queue_empty(struct axond *d)
{
	bool empty;

	pthread_mutex_lock(&d->done_lock);
	empty = !d->done_head;
	pthread_mutex_unlock(&d->done_lock);
	return empty;
}

/* Takes c's new completions, as a client reading its CQ would. */
static unsigned int reap(struct client *c, struct axon_cqe *cqes, unsigned int ncqes,
			 unsigned int *got)
{
	uint32_t head = c->cpage->cq_head, tail = axon_load_acquire(&c->dpage->cq_tail);
	unsigned int n = 0;

	static int trace = -1;

	/* FUZZ_TRACE=1: each completion on stderr (writing seeds). */
	if (trace < 0)
		trace = getenv("FUZZ_TRACE") != NULL;
	for (; head != tail; head++, n++) {
		const struct axon_cqe *e = &c->cqes[head & c->cq_mask];

		if (trace)
			fprintf(stderr, "fuzz: client %llu: cqe user_data %llu res %d aux %#llx %#llx\n",
				(unsigned long long)c->id, (unsigned long long)e->user_data,
				(int)e->res, (unsigned long long)e->aux[0],
				(unsigned long long)e->aux[1]);
		if (cqes && *got < ncqes)
			cqes[(*got)++] = *e;
	}
	axon_store_release(&c->cpage->cq_head, head);
	return n;
}

unsigned int fuzz_settle(struct axond *d, struct client *c, struct axon_cqe *cqes,
			 unsigned int ncqes)
{
	uint64_t deadline = axond_now_ns() + STUCK_NS;
	unsigned int got = 0, posted = 0, quiet = 0;

	for (;;) {
		int n = dispatch_done_queue(d);

		if (c && !c->dead)
			n += dispatch_client(d, c, 64);
		if (c && !c->dead)
			posted += reap(c, cqes, ncqes, &got);
		if (n) {
			quiet = 0;
			deadline = axond_now_ns() + STUCK_NS;
			continue;
		}
		/*
		 * Nothing moved: done once nothing of c is queued on the
		 * executor and every completion c is owed is of work parked
		 * behind a host function (which waits for the client: the
		 * input's business, not progress we can make). Others are
		 * owed by the executor or a loader thread. A finished item's
		 * completion is pushed just after its count drops: look twice.
		 */
		if ((!c || c->dead ||
		     (!atomic_load(&c->queued) && c->cq_owed <= c->nparked)) &&
		    done_queue_empty(d)) {
			if (++quiet >= 2)
				return posted;
		} else if (axond_now_ns() > deadline) {
			die("no progress for 10 s: queued work or an owed completion never finished");
		}
		sched_yield();
	}
}

void fuzz_client_end(struct axond *d, struct client *c)
{
	unsigned int live = atomic_load(&d->clients_live);
	uint64_t deadline = axond_now_ns() + STUCK_NS;

	client_disconnect(d, c);
	/* Its queued work drops its references on the executor. */
	while (atomic_load(&d->clients_live) >= live) {
		if (!dispatch_done_queue(d)) {
			if (axond_now_ns() > deadline)
				die("a disconnected client was not freed within 10 s");
			sched_yield();
		}
	}
}
