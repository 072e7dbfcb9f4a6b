// SPDX-License-Identifier: MIT
/*
 * axond's command line: the options, their defaults, their bounds and the
 * usage text. Every numeric value is a plain decimal (or, for sizes, a
 * number with a K/M/G/T suffix) within its documented range; anything else
 * is refused with a message naming the option (tests/daemon/axond-options.sh).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "imagelimits.h"
#include "loader.h"

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
		"  --transport=any|kmod   kmod: serve clients only through the kernel\n"
		"                         transport, refusing socket clients (requires\n"
		"                         the module; default any)\n"
		"  --sim-mem=BYTES        sim device memory (default 16G; K/M/G suffixes)\n"
		"  --ctx-mem=BYTES        device memory one CUDA context costs, charged\n"
		"                         for each client's (cuda: measured at start\n"
		"                         when not given; sim: the model's, default 0)\n"
		"  --sim-kernels=PATH     sim: the shared object with the kernels it can run\n"
		"                         (the tests': build/lib/axon-sim-kernels.so);\n"
		"                         without it every launch fails, NOT_SUPPORTED\n"
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
		"  --max-pinned-per-client=BYTES, --max-pinned-per-user=BYTES\n"
		"                         host memory axond pins for one client, for all\n"
		"                         clients of one uid (defaults: 1/4 and 1/2 of\n"
		"                         the host's memory; 0: no limit)\n"
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
	OPT_MAX_PINNED_CLIENT,
	OPT_MAX_PINNED_USER,
	OPT_CTX_MEM,
};

/* Long options of module loads (imagelimits.h, loader.h). */
enum {
	OPT_MAX_IMAGE = 1300,
	OPT_MAX_INFLATE,
	OPT_MAX_INFLATE_RATIO,
	OPT_MAX_MODULE_LOADS,
};

/* The sim's kernels object (sim/kernelset.c). */
enum {
	OPT_SIM_KERNELS = 1400,
};
enum {
	OPT_TRANSPORT = 1500,
};

int axond_parse_args(struct axond *d, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "vendor-lib", required_argument, NULL, 'V' },
		{ "kmod", required_argument, NULL, 'K' },
		{ "transport", required_argument, NULL, OPT_TRANSPORT },
		{ "region-pool", required_argument, NULL, 'P' },
		{ "isolation", required_argument, NULL, 'I' },
		{ "context-pool", required_argument, NULL, 'X' },
		{ "listen", required_argument, NULL, 'l' },
		{ "sim-mem", required_argument, NULL, 'm' },
		{ "sim-fault", required_argument, NULL, 'F' },
		{ "sim-kernels", required_argument, NULL, OPT_SIM_KERNELS },
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
		{ "max-pinned-per-client", required_argument, NULL, OPT_MAX_PINNED_CLIENT },
		{ "max-pinned-per-user", required_argument, NULL, OPT_MAX_PINNED_USER },
		{ "ctx-mem", required_argument, NULL, OPT_CTX_MEM },
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
	{
		/* Pinned host memory: a client a quarter of the host, a user
		 * half, so that pinning cannot take the host's memory away
		 * from everything else. */
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		uint64_t host = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;

		cfg->max_pinned_client = host / 4;
		cfg->max_pinned_user = host / 2;
	}
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
		case OPT_TRANSPORT:
			if (strcmp(optarg, "any") && strcmp(optarg, "kmod"))
				goto bad;
			cfg->kmod_only = !strcmp(optarg, "kmod");
			break;
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
		case OPT_SIM_KERNELS:
			if (!*optarg)
				goto bad;
			cfg->sim_kernels = optarg;
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
		case OPT_MAX_PINNED_CLIENT:
			if (parse_size(optarg, &cfg->max_pinned_client))
				goto bad;
			break;
		case OPT_MAX_PINNED_USER:
			if (parse_size(optarg, &cfg->max_pinned_user))
				goto bad;
			break;
		case OPT_CTX_MEM:
			if (parse_size(optarg, &cfg->ctx_mem))
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
