// SPDX-License-Identifier: MIT
/*
 * drvbench: CUDA driver-API costs, the same binary natively and through
 * axon (issue 4's benchmark list). It is linked against $(BUILD)/lib's
 * libcuda.so.1 without an rpath; LD_LIBRARY_PATH decides which libcuda.so.1
 * (NVIDIA's or axon's shim, same SONAME) it runs against. bench/gpu/run.sh
 * runs it both ways and prints them side by side.
 *
 *   drvbench [--quick] [--only G,G..] [--skip G,G..] CUBIN [PTX]
 *
 * Groups (in the order they run): start start_held modload nullop query
 * launch loops copy4 bw alloc alloc4g hostreg.
 *
 * DRVBENCH_START_GAP_MS, if set, pauses (untimed) that long before each
 * start of the start groups (default 0: back to back).
 *
 * DRVBENCH_STATS_CMD, if set, is run by system() (untimed) after the set-up
 * (module loads), after each later group and at the end, with
 * DRVBENCH_GROUP naming the point; run.sh uses it to print the private
 * axond's counters for this client (axonctl stats) as '#' lines.
 *
 * Output: one machine-readable line per figure, `name value unit`, printed
 * as it is measured; sampled rows add `name.p99` and `name.mean` lines. A
 * row that cannot run prints `name n/a unit # reason`. Everything else
 * (the header and the human table at the end) starts with '#'.
 *
 * Method: CLOCK_MONOTONIC (bench.h); the first 10 % of every sampled row's
 * iterations are warm-up and thrown away; p50/p99 by nearest rank. Calls
 * that take well under a microsecond are timed in batches (the batch is
 * named in the row's note) and a sample is the batch mean.
 *
 * This file is the run: options, set-up, the groups in order. The rows are
 * printed by rows.c; each family of groups has a file (drvbench.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drvbench.h"

unsigned long divisor = 1;
static const char *only, *skip;

static bool in_list(const char *list, const char *g)
{
	size_t n = strlen(g);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, g, n) && (p[n] == ',' || !p[n]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

static bool want(const char *g)
{
	if (only && !in_list(only, g))
		return false;
	return !(skip && in_list(skip, g));
}

/* ---- shared state -------------------------------------------------------- */

CUstream st;
CUmodule mod;
CUfunction fnop;
void *cubin_img, *ptx_img;

/* ---- main ----------------------------------------------------------------- */

/* Runs $DRVBENCH_STATS_CMD (with DRVBENCH_GROUP=group) between groups, e.g.
 * the daemon's counters for this client; untimed. */
static void stats_point(const char *group)
{
	const char *cmd = getenv("DRVBENCH_STATS_CMD");

	if (!cmd || !*cmd)
		return;
	fflush(stdout);
	setenv("DRVBENCH_GROUP", group, 1);
	if (system(cmd))
		printf("# DRVBENCH_STATS_CMD failed after %s\n", group);
	fflush(stdout);
}

#define GROUP(g, fn)				\
	do {					\
		if (want(g)) {			\
			fn();			\
			stats_point(g);		\
		}				\
	} while (0)

static void usage(FILE *f)
{
	fprintf(f, "usage: drvbench [--quick] [--only G,..] [--skip G,..] CUBIN [PTX]\n"
		   "groups: start start_held modload nullop query launch loops copy4 bw alloc\n"
		   "        alloc4g hostreg\n");
}

int main(int argc, char **argv)
{
	const char *cubin = NULL, *ptx = NULL;
	char name[256] = "?";
	Dl_info dli;
	CUcontext ctx;
	CUdevice dev;
	size_t mem = 0;
	int i, ver = 0;
	CUresult r;

	if (argc == 4 && !strcmp(argv[1], "--child"))
		return child_main(argv[2], atoi(argv[3]));
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			divisor = 10;
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--skip") && i + 1 < argc)
			skip = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (argv[i][0] == '-') {
			usage(stderr);
			return 2;
		} else if (!cubin)
			cubin = argv[i];
		else if (!ptx)
			ptx = argv[i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!cubin) {
		usage(stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# drvbench: %s%s\n", divisor > 1 ? "quick, " : "", cubin);
	if (dladdr((void *)cuInit, &dli) && dli.dli_fname)
		printf("# libcuda: %s\n", dli.dli_fname);
	printf("# AXON_ADDR: %s\n", getenv("AXON_ADDR") ? getenv("AXON_ADDR") : "(unset)");

	/* Before this process touches the driver: children start cold. */
	if (want("start"))
		bench_start(cubin, "start");

	r = cuInit(0);
	if (r) {
		printf("# error: cuInit: %s\n", errname(r));
		table();
		return 1;
	}
	cuDriverGetVersion(&ver);
	if (cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
	    cuCtxSetCurrent(ctx) || cuStreamCreate(&st, CU_STREAM_NON_BLOCKING)) {
		printf("# error: no device, context or stream\n");
		table();
		return 1;
	}
	cuDeviceGetName(name, sizeof(name), dev);
	cuDeviceTotalMem(&mem, dev);
	printf("# device: %s, %.1f GiB; driver API version %d\n", name,
	       (double)mem / (1024.0 * MIB), ver);

	if (want("start_held"))
		bench_start(cubin, "start_held");

	cubin_img = read_file(cubin);
	ptx_img = ptx ? read_file(ptx) : NULL;
	/* First in the process: the first-load figure must be a first load. */
	if (want("modload"))
		bench_modload();
	if (!mod && cubin_img && cuModuleLoadData(&mod, cubin_img))
		mod = NULL;
	if (mod && cuModuleGetFunction(&fnop, mod, "nop"))
		fnop = NULL;

	stats_point("setup");
	GROUP("nullop", bench_nullop);
	GROUP("query", bench_query);
	GROUP("launch", bench_launch);
	GROUP("loops", bench_loops);
	GROUP("copy4", bench_copy4);
	GROUP("bw", bench_bw);
	GROUP("alloc", bench_alloc);
	GROUP("alloc4g", bench_alloc4g);
	GROUP("hostreg", bench_hostreg);

	r = cuCtxSynchronize();
	printf("# final cuCtxSynchronize: %s\n", errname(r));
	stats_point("end");
	table();
	cuStreamDestroy(st);
	cuDevicePrimaryCtxRelease(dev);
	return 0;
}
