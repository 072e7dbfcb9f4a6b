// SPDX-License-Identifier: MIT
/*
 * axond: the only process that opens the device. Parses options, sets up
 * the backend, the info page and the socket, then runs the dispatcher loop:
 * drain every client's ring, spin briefly when idle, then sleep in epoll
 * until a doorbell, a completion from the executor, a connection or a
 * signal arrives.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
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
#include "imagelimits.h"
#include "loader.h"
#include "holdings.h"
#include "backend.h"
#include "ops/ops.h"
#include "ops/hostmem.h"
#include "access.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: axond [options]\n"
		"  --backend=sim|cuda     device backend (default sim)\n"
		"  --vendor-lib=PATH      cuda: NVIDIA's libcuda.so.1 (default: search\n"
		"                         /usr/local/nvidia/lib64, .../nvidia/current, ...)\n"
		"  --listen=unix:PATH     socket (default unix:" AXON_DEFAULT_SOCKET ")\n"
		"  --region-pool=N        regions of the default size kept ready, prepared\n"
		"                         in the background (default 2 with --backend=cuda)\n"
		"  --isolation=process|context|shared\n"
		"                         process (the cuda default): each client served\n"
		"                         by a worker process of its own, in its own CUDA\n"
		"                         context; a device fault ends only that worker\n"
		"                         (NVIDIA's driver poisons every context of a\n"
		"                         process on a fault). context (the sim default):\n"
		"                         one process, a CUDA context per client. shared:\n"
		"                         every client of a device in one context\n"
		"                         (MPS-like, a trusted group; a fault reaches all)\n"
		"  --context-pool=N       contexts per device made ahead of clients and\n"
		"                         refilled in the background; process: worker\n"
		"                         processes kept ready (default: one per 16 GiB of\n"
		"                         device memory, 2 to 8; shared: 1)\n"
		"  --kmod=PATH|off        the kernel transport (default: attach to\n"
		"                         " AXON_DEVICE_PATH " when the module is loaded)\n"
		"  --sim-mem=BYTES        sim device memory (default 16G; K/M/G suffixes)\n"
		"  --sim-fault=client|process\n"
		"                         sim: what a device fault (assert, illegal\n"
		"                         address) poisons: its client (default), or the\n"
		"                         whole daemon process, as NVIDIA's driver does\n"
		"  --spin-us=N            busy-poll this long before sleeping (default 50)\n"
		"  --poll-us=N            cuda: with GPU work in flight, sleep this long\n"
		"                         between polls once 50 us of polling found it\n"
		"                         running (default 20; 0: poll without sleeping,\n"
		"                         one core per busy device; below 1000000)\n"
		"  --collapse=N           cuda: issue a run of N or more launches queued on\n"
		"                         one stream as one replay of a cached CUDA graph\n"
		"                         (default 4; 0: launch each one directly)\n"
		"  --max-clients=N        (default 1024)\n"
		"  --max-tracers-per-client=N\n"
		"                         tracers following one client (default 16; 0: none)\n"
		"  --max-tracers-per-user=N\n"
		"                         tracers one uid has open (default 64; 0: none)\n"
		"  --admin-group=NAME     its members may trace, and see in the stats, every\n"
		"                         user's clients, as root and axond's uid may\n"
		"                         (default axon-admin if it exists; empty: none)\n"
		"  --max-clients-per-user=N  clients of one uid at once (default 256)\n"
		"  --max-pending-per-user=N  connections of one uid that have not said\n"
		"                         hello yet (default 32; all users: 256)\n"
		"  --max-parked=N         work items of one client waiting behind its host\n"
		"                         functions (default 65536)\n"
		"  --max-parked-bytes=BYTES  the memory they may hold (default 64M)\n"
		"  --max-graph-nodes=N    nodes in one client's graphs and their\n"
		"                         instantiations together (default 1048576)\n"
		"  --max-maps-per-client=N, --max-maps-per-user=N\n"
		"                         mappings axond holds for pinned host memory\n"
		"                         and VMM maps (defaults 4096, 16384)\n"
		"  --max-vmm-per-client=N, --max-vmm-per-user=N\n"
		"                         VMM objects (cuMemCreate; defaults 4096, 16384)\n"
		"  --data-size=BYTES      default per-client data area (default 64M)\n"
		"  --mint-credit=BYTES    per-client minting credit (default 256M)\n"
		"  --max-image=BYTES      bytes of one module image (default 256M)\n"
		"  --max-inflate=BYTES    bytes one compressed fatbin entry may inflate to\n"
		"                         (default 256M)\n"
		"  --max-inflate-ratio=N  ...and times its compressed size (default 1024)\n"
		"  --max-module-loads=N   module loads of one client queued or running at\n"
		"                         once (default 4)\n"
		"  --max-client-mem=BYTES device memory one client may hold (default 0:\n"
		"                         the device's; K/M/G/T suffixes)\n"
		"  --max-user-mem=BYTES   device memory all clients of one uid may hold\n"
		"                         (default 0: the device's)\n"
		"  -v, --verbose          more log (repeat for debug)\n"
		"  -q, --quiet            errors only\n");
}

/* A byte count with an optional K/M/G/T suffix; no sign, no overflow. */
static int parse_size(const char *s, uint64_t *out)
{
	unsigned int shift = 0;
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end || (shift && v > (~0ULL >> shift)))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

/* A decimal count from min to max; no sign, nothing after it. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

/* Long options without a short letter. */
enum {
	OPT_MAX_CLIENTS_PER_USER = 1000,
	OPT_MAX_PENDING_PER_USER,
	OPT_MAX_PARKED,
	OPT_MAX_PARKED_BYTES,
	OPT_MAX_GRAPH_NODES,
	OPT_MAX_MAPS_CLIENT,
	OPT_MAX_MAPS_USER,
	OPT_MAX_VMM_CLIENT,
	OPT_MAX_VMM_USER,
};

/* Long options of the tracer limits and the access policy (trace.c,
 * access.c), numbered apart from the others. */
enum {
	OPT_MAX_TRACERS_PER_CLIENT = 1100,
	OPT_MAX_TRACERS_PER_USER,
	OPT_ADMIN_GROUP,
};

/* Long options of the device-memory quotas (memquota.c). */
enum {
	OPT_MAX_CLIENT_MEM = 1200,
	OPT_MAX_USER_MEM,
};

/* Long options of module loads (imagelimits.h, loader.h). */
enum {
	OPT_MAX_IMAGE = 1300,
	OPT_MAX_INFLATE,
	OPT_MAX_INFLATE_RATIO,
	OPT_MAX_MODULE_LOADS,
};

static int parse_args(struct axond *d, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "vendor-lib", required_argument, NULL, 'V' },
		{ "kmod", required_argument, NULL, 'K' },
		{ "region-pool", required_argument, NULL, 'P' },
		{ "isolation", required_argument, NULL, 'I' },
		{ "context-pool", required_argument, NULL, 'X' },
		{ "listen", required_argument, NULL, 'l' },
		{ "sim-mem", required_argument, NULL, 'm' },
		{ "sim-fault", required_argument, NULL, 'F' },
		{ "spin-us", required_argument, NULL, 's' },
		{ "collapse", required_argument, NULL, 'L' },
		{ "poll-us", required_argument, NULL, 'Q' },
		{ "max-clients", required_argument, NULL, 'c' },
		{ "max-tracers-per-client", required_argument, NULL, OPT_MAX_TRACERS_PER_CLIENT },
		{ "max-tracers-per-user", required_argument, NULL, OPT_MAX_TRACERS_PER_USER },
		{ "admin-group", required_argument, NULL, OPT_ADMIN_GROUP },
		{ "max-clients-per-user", required_argument, NULL, OPT_MAX_CLIENTS_PER_USER },
		{ "max-pending-per-user", required_argument, NULL, OPT_MAX_PENDING_PER_USER },
		{ "max-parked", required_argument, NULL, OPT_MAX_PARKED },
		{ "max-parked-bytes", required_argument, NULL, OPT_MAX_PARKED_BYTES },
		{ "max-graph-nodes", required_argument, NULL, OPT_MAX_GRAPH_NODES },
		{ "max-maps-per-client", required_argument, NULL, OPT_MAX_MAPS_CLIENT },
		{ "max-maps-per-user", required_argument, NULL, OPT_MAX_MAPS_USER },
		{ "max-vmm-per-client", required_argument, NULL, OPT_MAX_VMM_CLIENT },
		{ "max-vmm-per-user", required_argument, NULL, OPT_MAX_VMM_USER },
		{ "data-size", required_argument, NULL, 'D' },
		{ "mint-credit", required_argument, NULL, 'C' },
		{ "max-client-mem", required_argument, NULL, OPT_MAX_CLIENT_MEM },
		{ "max-user-mem", required_argument, NULL, OPT_MAX_USER_MEM },
		{ "max-image", required_argument, NULL, OPT_MAX_IMAGE },
		{ "max-inflate", required_argument, NULL, OPT_MAX_INFLATE },
		{ "max-inflate-ratio", required_argument, NULL, OPT_MAX_INFLATE_RATIO },
		{ "max-module-loads", required_argument, NULL, OPT_MAX_MODULE_LOADS },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		/* Internal: started by a supervisor (worker.c). */
		{ "worker-ctl", required_argument, NULL, 'W' },
		{ 0 }
	};
	struct axond_config *cfg = &d->cfg;
	uint64_t v;
	int o, li = 0;

	cfg->backend = "sim";
	/* AXON_ADDR names where clients connect; only a socket address is
	 * also where we listen (never, say, /dev/axon). */
	cfg->listen = "unix:" AXON_DEFAULT_SOCKET;
	if (getenv("AXON_ADDR") && !strncmp(getenv("AXON_ADDR"), "unix:", 5))
		cfg->listen = getenv("AXON_ADDR");
	cfg->sim_mem = 16ULL << 30;
	cfg->spin_us = 50;
	cfg->collapse_min = 4;	/* COLLAPSE_MIN_DEFAULT (cuda/collapse.h) */
	cfg->poll_us = 20;
	cfg->max_clients = 1024;
	cfg->max_tracers_client = 16;
	cfg->max_tracers_user = 64;
	cfg->max_clients_per_user = 256;
	cfg->max_pending_per_user = 32;
	cfg->max_parked = 65536;
	cfg->max_parked_bytes = 64ULL << 20;
	cfg->max_graph_nodes = 1U << 20;
	cfg->max_maps_per_client = 4096;
	cfg->max_maps_per_user = 16384;
	cfg->max_vmm_per_client = 4096;
	cfg->max_vmm_per_user = 16384;
	cfg->default_data_size = 64ULL << 20;
	cfg->mint_credit = 256ULL << 20;
	cfg->max_image = AXOND_MAX_IMAGE_DEFAULT;
	cfg->max_inflate = AXOND_MAX_INFLATE_DEFAULT;
	cfg->max_inflate_ratio = AXOND_MAX_INFLATE_RATIO_DEFAULT;
	cfg->max_module_loads = AXOND_MAX_MODULE_LOADS_DEFAULT;
	cfg->region_pool = ~0U;	/* "default": decided once the backend is known */
	cfg->isolation = NULL;	/* "default": decided once the backend is known */
	cfg->worker_ctl = -1;
	cfg->context_pool = ~0U;	/* "default": decided by the isolation mode */
	while ((o = getopt_long(argc, argv, "vqh", opts, &li)) != -1) {
		switch (o) {
		case 'b': cfg->backend = optarg; break;
		case 'V': cfg->vendor_lib = optarg; break;
		case 'K': cfg->kmod = optarg; break;
		case 'P':
			if (parse_uint(optarg, 0, 64, &cfg->region_pool))
				goto bad;
			break;
		case 'I':
			if (strcmp(optarg, "process") && strcmp(optarg, "context") &&
			    strcmp(optarg, "shared"))
				goto bad;
			cfg->isolation = optarg;
			break;
		case 'X':
			if (parse_uint(optarg, 0, 64, &cfg->context_pool))
				goto bad;
			break;
		case 'l': cfg->listen = optarg; break;
		case 'F':
			if (strcmp(optarg, "client") && strcmp(optarg, "process"))
				goto bad;
			cfg->sim_fault_process = !strcmp(optarg, "process");
			break;
		case 'W': {
			unsigned int fd;

			if (parse_uint(optarg, 3, INT_MAX, &fd))
				goto bad;
			cfg->worker_ctl = (int)fd;
			break;
		}
		case 'm':
			if (parse_size(optarg, &cfg->sim_mem) || cfg->sim_mem < (1 << 20))
				goto bad;
			break;
		case 's':
			if (parse_uint(optarg, 0, 1000000, &cfg->spin_us))
				goto bad;
			break;
		case 'L':
			if (parse_uint(optarg, 0, 128, &cfg->collapse_min))	/* COLLAPSE_MAX */
				goto bad;
			break;
		case 'Q':
			if (parse_uint(optarg, 0, 999999, &cfg->poll_us))
				goto bad;
			break;
		case 'c':
			if (parse_uint(optarg, 1, 1U << 20, &cfg->max_clients))
				goto bad;
			break;
		case OPT_MAX_TRACERS_PER_CLIENT:
			if (parse_uint(optarg, 0, 65536, &cfg->max_tracers_client))
				goto bad;
			break;
		case OPT_MAX_TRACERS_PER_USER:
			if (parse_uint(optarg, 0, 65536, &cfg->max_tracers_user))
				goto bad;
			break;
		case OPT_ADMIN_GROUP: cfg->admin_group = optarg; break;
		case OPT_MAX_CLIENTS_PER_USER:
			if (parse_uint(optarg, 1, 1U << 20, &cfg->max_clients_per_user))
				goto bad;
			break;
		case OPT_MAX_PENDING_PER_USER:
			if (parse_uint(optarg, 1, 256, &cfg->max_pending_per_user))
				goto bad;
			break;
		case OPT_MAX_PARKED:
			if (parse_uint(optarg, 1, 1U << 24, &cfg->max_parked))
				goto bad;
			break;
		case OPT_MAX_PARKED_BYTES:
			if (parse_size(optarg, &cfg->max_parked_bytes) || cfg->max_parked_bytes < 4096)
				goto bad;
			break;
		case OPT_MAX_MAPS_CLIENT:
			if (parse_uint(optarg, 1, 1U << 20, &cfg->max_maps_per_client))
				goto bad;
			break;
		case OPT_MAX_MAPS_USER:
			if (parse_uint(optarg, 1, 1U << 20, &cfg->max_maps_per_user))
				goto bad;
			break;
		case OPT_MAX_VMM_CLIENT:
			if (parse_uint(optarg, 1, 1U << 20, &cfg->max_vmm_per_client))
				goto bad;
			break;
		case OPT_MAX_VMM_USER:
			if (parse_uint(optarg, 1, 1U << 20, &cfg->max_vmm_per_user))
				goto bad;
			break;
		case OPT_MAX_GRAPH_NODES:
			if (parse_uint(optarg, 1, 1U << 30, &cfg->max_graph_nodes))
				goto bad;
			break;
		case 'D':
			if (parse_size(optarg, &v) || v < 4096 || v > AXON_MAX_DATA_SIZE)
				goto bad;
			cfg->default_data_size = v;
			break;
		case 'C':
			if (parse_size(optarg, &cfg->mint_credit))
				goto bad;
			break;
		/* 0 or absent: no limit beyond the device's memory. */
		case OPT_MAX_CLIENT_MEM:
			if (parse_size(optarg, &cfg->max_client_mem))
				goto bad;
			break;
		case OPT_MAX_USER_MEM:
			if (parse_size(optarg, &cfg->max_user_mem))
				goto bad;
			break;
		/* An image passes through the data area (AXON_MAX_DATA_SIZE). */
		case OPT_MAX_IMAGE:
			if (parse_size(optarg, &cfg->max_image) || !cfg->max_image ||
			    cfg->max_image > AXON_MAX_DATA_SIZE)
				goto bad;
			break;
		case OPT_MAX_INFLATE:
			if (parse_size(optarg, &cfg->max_inflate) || !cfg->max_inflate)
				goto bad;
			break;
		case OPT_MAX_INFLATE_RATIO: {
			unsigned int r;

			if (parse_uint(optarg, 1, 1U << 20, &r))
				goto bad;
			cfg->max_inflate_ratio = r;
			break;
		}
		case OPT_MAX_MODULE_LOADS:
			if (parse_uint(optarg, 1, 1024, &cfg->max_module_loads))
				goto bad;
			break;
		case 'v': axond_verbose++; break;
		case 'q': axond_verbose = LOG_ERR; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -EINVAL;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "axond: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "axond: bad value for --%s: '%s'\n", opts[li].name, optarg);
	usage(stderr);
	return -EINVAL;
}

int axond_parse_args(struct axond *d, int argc, char **argv)
{
	return parse_args(d, argc, argv);
}

/* Runs every op table entry through the start-up check, as io_uring does. */
static int check_op_table(void)
{
	unsigned int i;

	for (i = 0; i < AXON_OP_LAST; i++) {
		if (!op_table[i].name || !op_table[i].issue) {
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

static void drain_fd(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) > 0)
		;
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
				axond_request_restart(d, "SIGHUP", 0, 0);
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
		server_hello(d, tag);
	} else if (tag & EV_TRACER_BIT) {
		/* Tracers only listen; anything else means they left. */
		trace_hangup(d, tag);
	} else if (tag & EV_DOORBELL_BIT) {
		struct client *c = (struct client *)(uintptr_t)(tag & ~EV_DOORBELL_BIT);

		if (!c->dead)
			drain_fd(c->doorbell_fd);
	} else {
		struct client *c = (struct client *)(uintptr_t)tag;

		/* After the hello clients send only descriptors of shared
		 * host memory (ops/hostmem.c); anything else, or a hang-up,
		 * means gone (or misbehaving, which ends the same way). */
		if (!c->dead && (ev->events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR) ||
				 hostmem_sock_readable(d, c) < 0))
			client_disconnect(d, c);
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

static void set_need_wakeup(struct axond *d, bool on)
{
	struct client *c;

	for (c = d->clients; c; c = c->next) {
		uint32_t f = axon_read_once(&c->dpage->sq_flags);

		f = on ? (f | AXON_SQ_F_NEED_WAKEUP) : (f & ~AXON_SQ_F_NEED_WAKEUP);
		axon_write_once(&c->dpage->sq_flags, f);
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
void axond_request_restart(struct axond *d, const char *why, int32_t error,
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

int main(int argc, char **argv)
{
	static struct axond daemon;
	struct axond *d = &daemon;
	char err[256] = "";
	bool restarting;
	int ret;

	d->listen_fd = d->info_fd = d->epoll_fd = d->signal_fd = d->worker_fd = -1;
	d->kmod_fd = -1;
	pthread_mutex_init(&d->done_lock, NULL);
	d->start_ns = axond_now_ns();
	if (parse_args(d, argc, argv) || access_init(d))
		return 2;
	if (axond_is_worker(d))
		snprintf(axond_log_tag, sizeof(axond_log_tag), "worker %d ", (int)getpid());
	if (check_op_table())
		return 1;
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
	if (axond_is_supervisor(d) || axond_is_worker(d)) {
		/* Not yet: the kernel transport hands clients to one daemon
		 * process; here clients connect through the socket. */
		if (axond_is_supervisor(d) && d->cfg.kmod && strcmp(d->cfg.kmod, "off"))
			log_warn("--isolation=process does not use the kernel transport yet; "
				 "clients connect through the socket");
		d->cfg.kmod = "off";
	}
	if (axond_is_supervisor(d)) {
		ret = setup_fds(d);
		if (!ret)
			ret = server_listen(d);
		if (ret) {
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
		if (!ret)
			ret = server_listen(d);
		if (!ret)
			ret = kmod_attach(d);
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
	dispatch_done_queue(d);
	if (restarting) {
		/* Same binary, same options. Ours are close-on-exec; the
		 * driver's (/dev/nvidia*) are not ours to trust: close every
		 * descriptor but the socket handed over. */
		log_info("axond restarting");
		close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
		if (d->listen_fd >= 0)
			fcntl(d->listen_fd, F_SETFD, 0);
		execv("/proc/self/exe", argv);
		log_err("restart: cannot run /proc/self/exe: %s", strerror(errno));
		server_close(d);
		return 1;
	}
	log_info("axond stopped");
	return 0;
}
