// SPDX-License-Identifier: MIT
/*
 * topclient - a driver-API program with a known footprint, for the axon-top
 * tests. Linked against our libcuda.so.1 (rpath $ORIGIN/../../lib), so it
 * talks to whatever axond $AXON_ADDR names.
 *
 *   topclient [--comm NAME] [--alloc BYTES[K|M|G]] [--memsets N] [--launches N]
 *             [--syncs N] [--bad N] [--busy] [--wait-go]
 *
 * Order of calls (each becomes one operation in the daemon, in this order):
 *   cuInit (connects)           [--wait-go: prints "ready PID", reads a line]
 *   cuCtxCreate                 CTX_CREATE (sync)
 *   cuMemAlloc(alloc)           MEM_MAP (deferred within credit)
 *   cuMemsetD32 x memsets       MEMSET (deferred)
 *   if launches: cuModuleLoad   MODULE_LOAD (sync), MODULE_GET_FUNC (sync)
 *                cuLaunchKernel(fill) x launches   LAUNCH (deferred)
 *   cuStreamSynchronize x syncs STREAM_SYNC (sync)
 *   cuMemcpyDtoH (4 bytes)      MEMCPY_DTOH (sync), value checked
 *   cuMemcpyDtoH x bad          MEMCPY_DTOH from an unmapped address: each
 *                               fails in the daemon (an error it counts)
 * then prints "done" and holds still until stdin reaches EOF (or SIGTERM),
 * then cuMemFree (MEM_UNMAP, deferred), cuCtxSynchronize (CTX_SYNC),
 * cuCtxDestroy (CTX_DESTROY, deferred: may be dropped at exit) and exits 0. With --busy it does not hold still:
 * it repeats cuDeviceGetAttribute (Local), cuMemsetD32 and
 * cuStreamSynchronize until stdin reaches EOF.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <cuda.h>

static void die_cu(const char *what, CUresult r)
{
	const char *name = NULL;

	cuGetErrorName(r, &name);
	fprintf(stderr, "topclient: %s failed: %s (%d)\n", what, name ? name : "?", (int)r);
	exit(1);
}

static unsigned long long parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'k': case 'K': v <<= 10; break;
	case 'm': case 'M': v <<= 20; break;
	case 'g': case 'G': v <<= 30; break;
	}
	return v;
}

#define CK(call) do { CUresult r_ = (call); if (r_) die_cu(#call, r_); } while (0)

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "comm", required_argument, NULL, 'c' },
		{ "alloc", required_argument, NULL, 'a' },
		{ "memsets", required_argument, NULL, 'm' },
		{ "launches", required_argument, NULL, 'l' },
		{ "syncs", required_argument, NULL, 's' },
		{ "bad", required_argument, NULL, 'x' },
		{ "busy", no_argument, NULL, 'B' },
		{ "wait-go", no_argument, NULL, 'w' },
		{ 0 }
	};
	unsigned long long alloc = 1 << 20;
	unsigned long memsets = 0, launches = 0, syncs = 1, bad = 0, i;
	int busy = 0;
	const char *comm = NULL;
	int wait_go = 0, o;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p;
	char line[64];
	unsigned int word = 0;
	unsigned int expect = 0;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'c': comm = optarg; break;
		case 'a': alloc = parse_size(optarg); break;
		case 'm': memsets = strtoul(optarg, NULL, 0); break;
		case 'l': launches = strtoul(optarg, NULL, 0); break;
		case 's': syncs = strtoul(optarg, NULL, 0); break;
		case 'x': bad = strtoul(optarg, NULL, 0); break;
		case 'B': busy = 1; break;
		case 'w': wait_go = 1; break;
		default:
			fprintf(stderr, "usage: topclient [--comm NAME] [--alloc BYTES] "
				"[--memsets N] [--launches N] [--syncs N] [--wait-go]\n");
			return 2;
		}
	}
	if (alloc < 4096)
		alloc = 4096;	/* fill writes 256 floats */
	if (comm)
		prctl(PR_SET_NAME, comm, 0, 0, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	if (wait_go) {
		printf("ready %d\n", (int)getpid());
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuMemAlloc(&p, (size_t)alloc));
	for (i = 0; i < memsets; i++) {
		expect = 0x1000u + (unsigned int)i;
		CK(cuMemsetD32(p, expect, (size_t)(alloc / 4 < 1024 ? alloc / 4 : 1024)));
	}
	if (launches) {
		char path[PATH_MAX];
		const char *b = getenv("AXON_BUILD");
		CUmodule mod;
		CUfunction fn;
		float v = 2.5f;
		int n = 256;
		void *args[] = { &p, &v, &n };

		snprintf(path, sizeof(path), "%s/tests/data/kernels.cubin", b ? b : ".");
		CK(cuModuleLoad(&mod, path));
		CK(cuModuleGetFunction(&fn, mod, "fill"));
		for (i = 0; i < launches; i++)
			CK(cuLaunchKernel(fn, 2, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
		memcpy(&expect, &v, sizeof(expect));
	}
	for (i = 0; i < syncs; i++)
		CK(cuStreamSynchronize(NULL));
	CK(cuMemcpyDtoH(&word, p, sizeof(word)));
	if ((memsets || launches) && word != expect) {
		fprintf(stderr, "topclient: read 0x%08x, expected 0x%08x\n", word, expect);
		return 1;
	}
	for (i = 0; i < bad; i++) {
		CUresult r = cuMemcpyDtoH(&word, (CUdeviceptr)0x1000, sizeof(word));

		if (r == CUDA_SUCCESS) {
			fprintf(stderr, "topclient: a copy from 0x1000 succeeded\n");
			return 1;
		}
	}
	printf("done\n");
	if (busy) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };

		for (;;) {
			if (poll(&pfd, 1, 0) > 0) {
				if (read(STDIN_FILENO, line, sizeof(line)) <= 0)
					break;
			}
			int v;

			CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
			CK(cuMemsetD32(p, 7, 256));
			CK(cuStreamSynchronize(NULL));
		}
	}
	/* Hold still until told to exit. */
	while (fgets(line, sizeof(line), stdin))
		;
	CK(cuMemFree(p));
	/* Deferred MEM_UNMAP: a sync call makes the daemon take it before we
	 * exit (it drops what a client left in its ring when it goes). */
	CK(cuCtxSynchronize());
	CK(cuCtxDestroy(ctx));
	return 0;
}
