// SPDX-License-Identifier: MIT
/*
 * chargecheck: does axond charge a client what the device really spends on
 * it (issue 14)? For each kind of allocation it prints, side by side, the
 * device memory it takes natively, the device memory it takes through axon
 * (cuMemGetInfo of a native context in this process, which sees the whole
 * device), and what axond charged the client for it (the growth of the
 * client's bytes_mapped in `axonctl stats --json`), and exits 1 when a
 * charge differs from what the device spent through axon by more than
 * 2 MiB.
 *
 *   LD_LIBRARY_PATH=/usr/local/nvidia/lib64 \
 *   chargecheck --addr unix:SOCK --axonctl BUILD/bin/axonctl \
 *               --shim BUILD/lib MODULE.cubin
 *
 * Run natively (NVIDIA's libcuda.so.1 first on LD_LIBRARY_PATH): this
 * process measures; it starts itself again with --child, LD_LIBRARY_PATH
 * set to the shim's directory and AXON_ADDR to the daemon, as the client
 * whose allocations it measures, one command at a time over a pipe. MODULE
 * is BUILD/bench/gpu/chargeglobal.cubin (a 3 MiB __device__ array). The
 * kinds: cuMemAlloc of 256 B, 4 KiB, 1 MiB, 2 MiB + 1, 64 MiB and 1 GiB
 * (each freed before the next), the module, the client itself (its
 * context, measured from before it connects until the daemon has settled),
 * and local memory: the stack limit set to 2048, 4096, 1100 and back to
 * 1024 bytes (each row the step from the one before), a launch of a kernel
 * with a 16 KiB frame (the driver grows the stack to it), and a 64 MiB
 * malloc heap set and then spent by a kernel that calls malloc.
 * Nothing else should use the device meanwhile: the deltas are the
 * device's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cuda.h>

#include "drvcommon.h"

#define MiB		(1024 * 1024LL)
#define TOLERANCE	(2 * MiB)

static void pause_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* ---- local memory: the same steps natively and in the client ---------- */

/* A launch of the kernel with a 16 KiB frame, one thread. */
static CUresult launch_frame(CUmodule mod)
{
	CUdeviceptr out = 0;
	CUfunction f;
	void *args[2];
	int n = 1;
	CUresult r;

	r = cuModuleGetFunction(&f, mod, "frame16k");
	if (!r)
		r = cuMemAlloc(&out, 4096);
	args[0] = &out;
	args[1] = &n;
	if (!r)
		r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
	if (!r)
		r = cuCtxSynchronize();
	if (out)
		cuMemFree(out);
	return r;
}

/* A heap of bytes set, then spent by the first launch of a malloc kernel. */
static CUresult heap_run(CUmodule mod, size_t bytes)
{
	unsigned long long n = 100;
	CUdeviceptr out = 0;
	CUfunction f;
	void *args[2];
	CUresult r;

	r = cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, bytes);
	if (!r)
		r = cuModuleGetFunction(&f, mod, "heapuse");
	if (!r)
		r = cuMemAlloc(&out, 4096);
	args[0] = &out;
	args[1] = &n;
	if (!r)
		r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
	if (!r)
		r = cuCtxSynchronize();
	if (out)
		cuMemFree(out);
	return r;
}

/* ---- the client (--child): one command a line on stdin ---------------- */

static int child(void)
{
	CUdeviceptr p = 0;
	CUmodule mod = NULL;
	CUcontext ctx;
	CUdevice dev;
	char line[4096];
	CUresult r;

	setvbuf(stdout, NULL, _IOLBF, 0);
	r = cuInit(0);
	if (!r)
		r = cuDeviceGet(&dev, 0);
	if (!r)
		r = cuCtxCreate(&ctx, NULL, 0, dev);
	if (!r)
		r = cuCtxSynchronize();
	printf("%s %d\n", r ? errname(r) : "ok", (int)getpid());
	if (r)
		return 1;
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long long n;
		char path[4000];

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "alloc %llu", &n) == 1) {
			r = cuMemAlloc(&p, (size_t)n);
			if (!r)
				r = cuMemsetD8(p, 1, (size_t)n);
		} else if (!strcmp(line, "free")) {
			r = cuMemFree(p);
			p = 0;
		} else if (sscanf(line, "load %3999s", path) == 1) {
			r = cuModuleLoad(&mod, path);
		} else if (!strcmp(line, "unload")) {
			r = cuModuleUnload(mod);
		} else if (sscanf(line, "stack %llu", &n) == 1) {
			r = cuCtxSetLimit(CU_LIMIT_STACK_SIZE, (size_t)n);
		} else if (sscanf(line, "heaprun %llu", &n) == 1) {
			r = heap_run(mod, (size_t)n);
		} else if (!strcmp(line, "frame")) {
			r = launch_frame(mod);
		} else {
			r = CUDA_ERROR_INVALID_VALUE;
		}
		if (!r)
			r = cuCtxSynchronize();
		printf("%s\n", r ? errname(r) : "ok");
	}
	return 0;
}

/* ---- the measuring side ------------------------------------------------ */

struct peer {
	pid_t pid;
	FILE *to, *from;
	pid_t client_pid;	/* as it reported (its axon stats row) */
};

static const char *axonctl, *addr;

/* The client's bytes_mapped in the daemon's stats, -1 if not found. */
static long long charged(pid_t pid)
{
	char cmd[4200], want[32];
	static char doc[1 << 22];
	size_t n;
	long long v = -1;
	char *p;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' --addr '%s' stats --json", axonctl, addr);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(doc, 1, sizeof(doc) - 1, f);
	pclose(f);
	doc[n] = 0;
	snprintf(want, sizeof(want), "%d", (int)pid);
	/* Each client object has "pid": N, then (later in it) bytes_mapped. */
	for (p = strstr(doc, "\"pid\""); p; p = strstr(p + 1, "\"pid\"")) {
		char *q = p + 5, *end, *bm;

		while (*q == ' ' || *q == ':')
			q++;
		if (strncmp(q, want, strlen(want)) || (q[strlen(want)] >= '0' &&
						       q[strlen(want)] <= '9'))
			continue;
		end = strstr(q, "\"pid\"");
		bm = strstr(q, "\"bytes_mapped\"");
		if (!bm || (end && bm > end))
			return -1;
		bm += 14;
		while (*bm == ' ' || *bm == ':')
			bm++;
		v = strtoll(bm, NULL, 10);
		break;
	}
	return v;
}

/* Free device memory as the device sees it (our native context). */
static long long device_free(void)
{
	size_t fr = 0, total = 0;

	if (cuMemGetInfo(&fr, &total))
		return -1;
	return (long long)fr;
}

static int peer_start(struct peer *c, const char *self, const char *shim)
{
	int in[2], out[2];
	char line[256];

	if (pipe(in) || pipe(out))
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		setenv("LD_LIBRARY_PATH", shim, 1);
		setenv("AXON_ADDR", addr, 1);
		execl(self, self, "--child", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to = fdopen(in[1], "w");
	c->from = fdopen(out[0], "r");
	setvbuf(c->to, NULL, _IOLBF, 0);
	if (!fgets(line, sizeof(line), c->from) || strncmp(line, "ok ", 3)) {
		fprintf(stderr, "chargecheck: the client did not start: %s", line);
		return -1;
	}
	c->client_pid = (pid_t)atoi(line + 3);
	return 0;
}

static int peer_do(struct peer *c, const char *cmd)
{
	char line[256];

	fprintf(c->to, "%s\n", cmd);
	if (!fgets(line, sizeof(line), c->from) || strcmp(line, "ok\n")) {
		fprintf(stderr, "chargecheck: %s through axon: %s", cmd, line);
		return -1;
	}
	return 0;
}

static int failures;

static void row(const char *kind, long long native, long long dev, long long charge)
{
	long long diff = charge - dev;
	bool ok = diff <= TOLERANCE && diff >= -TOLERANCE;

	printf("%-14s %12.2f %12.2f %12.2f %10.2f  %s\n", kind, native / (double)MiB,
	       dev / (double)MiB, charge / (double)MiB, diff / (double)MiB,
	       ok ? "ok" : "DIFFERS");
	if (!ok)
		failures++;
}

/* Native: the device memory one step takes, undone after. */
static long long native_alloc(long long n)
{
	CUdeviceptr p;
	long long before = device_free(), after;

	if (cuMemAlloc(&p, (size_t)n))
		return -1;
	cuMemsetD8(p, 1, (size_t)n);
	cuCtxSynchronize();
	after = device_free();
	cuMemFree(p);
	return before - after;
}

static long long native_module(const char *path)
{
	long long before = device_free(), after;
	CUmodule m;

	if (cuModuleLoad(&m, path))
		return -1;
	cuCtxSynchronize();
	after = device_free();
	cuModuleUnload(m);
	return before - after;
}

static long long native_context(CUdevice dev, CUcontext home)
{
	long long before = device_free(), after;
	CUcontext c, popped;

	if (cuCtxCreate(&c, NULL, 0, dev))
		return -1;
	cuCtxSynchronize();
	after = device_free();
	cuCtxPopCurrent(&popped);
	cuCtxDestroy(c);
	cuCtxSetCurrent(home);
	return before - after;
}

/* The local-memory steps natively (in a context of their own), each the
 * device's delta from the step before: out[] as local_cmds[]. */
#define NLOCAL 6
static const char *const local_cmds[NLOCAL] = {
	"stack 2048", "stack 4096", "stack 1100", "stack 1024", "frame", "heaprun 67108864",
};
static const char *const local_names[NLOCAL] = {
	"stack 2048", "stack 4096", "stack 1100", "stack 1024", "frame 16KiB", "heap 64MiB",
};

static void native_local(CUdevice dev, CUcontext home, const char *path, long long *out)
{
	CUcontext c, popped;
	unsigned long long n;
	CUmodule m = NULL;
	unsigned int i;

	for (i = 0; i < NLOCAL; i++)
		out[i] = -1;
	if (cuCtxCreate(&c, NULL, 0, dev))
		return;
	if (!cuModuleLoad(&m, path)) {
		for (i = 0; i < NLOCAL; i++) {
			long long before = device_free();
			CUresult r;

			if (sscanf(local_cmds[i], "stack %llu", &n) == 1)
				r = cuCtxSetLimit(CU_LIMIT_STACK_SIZE, (size_t)n);
			else if (sscanf(local_cmds[i], "heaprun %llu", &n) == 1)
				r = heap_run(m, (size_t)n);
			else
				r = launch_frame(m);
			cuCtxSynchronize();
			if (!r)
				out[i] = before - device_free();
		}
		cuModuleUnload(m);
	}
	cuCtxPopCurrent(&popped);
	cuCtxDestroy(c);
	cuCtxSetCurrent(home);
}

/* Through axon: what the device and the daemon's charge moved by, after
 * the client did cmd (and the daemon settled). */
static void axon_step(struct peer *c, const char *kind, const char *cmd, long long native)
{
	long long d0 = device_free(), c0 = charged(c->client_pid), d1, c1;

	if (peer_do(c, cmd)) {
		failures++;
		return;
	}
	pause_ms(200);
	d1 = device_free();
	c1 = charged(c->client_pid);
	row(kind, native, d0 - d1, c1 - c0);
}

int main(int argc, char **argv)
{
	static const long long sizes[] = {
		256, 4096, 1 * MiB, 2 * MiB + 1, 64 * MiB, 1024 * MiB,
	};
	static const char *const names[] = {
		"alloc 256B", "alloc 4KiB", "alloc 1MiB", "alloc 2MiB+1", "alloc 64MiB",
		"alloc 1GiB",
	};
	const char *shim = NULL, *module = NULL;
	bool bad = false;
	long long native[8], native_lm[NLOCAL], d0, d1, charge;
	struct peer c = { 0 };
	CUcontext ctx;
	CUdevice dev;
	char cmd[4200];
	unsigned int i;
	int a, status;

	if (argc == 2 && !strcmp(argv[1], "--child"))
		return child();
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--addr") && a + 1 < argc)
			addr = argv[++a];
		else if (!strcmp(argv[a], "--axonctl") && a + 1 < argc)
			axonctl = argv[++a];
		else if (!strcmp(argv[a], "--shim") && a + 1 < argc)
			shim = argv[++a];
		else if (argv[a][0] != '-' && !module)
			module = argv[a];
		else
			bad = true;
	}
	if (bad || !addr || !axonctl || !shim || !module) {
		fprintf(stderr, "usage: chargecheck --addr ADDR --axonctl AXONCTL --shim LIBDIR "
			"MODULE.cubin\n(run with NVIDIA's libcuda.so.1 on LD_LIBRARY_PATH)\n");
		return 2;
	}
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&ctx, NULL, 0, dev)) {
		fprintf(stderr, "chargecheck: no native context (is NVIDIA's libcuda.so.1 "
			"first on LD_LIBRARY_PATH?)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Native figures first, while axon's client does not exist yet. */
	for (i = 0; i < 6; i++)
		native[i] = native_alloc(sizes[i]);
	native[6] = native_module(module);
	native[7] = native_context(dev, ctx);
	native_local(dev, ctx, module, native_lm);
	printf("%-14s %12s %12s %12s %10s\n", "kind (MiB)", "native", "axon-device",
	       "axon-charge", "diff");

	/* The client: its context (and whatever the daemon made for it). */
	d0 = device_free();
	if (peer_start(&c, "/proc/self/exe", shim))
		return 2;
	pause_ms(3000);	/* a worker made to replace the one it took */
	d1 = device_free();
	charge = charged(c.client_pid);
	if (charge < 0) {
		fprintf(stderr, "chargecheck: client %d not in %s's stats\n",
			(int)c.client_pid, addr);
		return 2;
	}
	row("context", native[7], d0 - d1, charge);
	for (i = 0; i < 6; i++) {
		snprintf(cmd, sizeof(cmd), "alloc %lld", sizes[i]);
		axon_step(&c, names[i], cmd, native[i]);
		if (peer_do(&c, "free"))
			failures++;
		pause_ms(200);
	}
	snprintf(cmd, sizeof(cmd), "load %s", module);
	axon_step(&c, "module 3MiB", cmd, native[6]);
	/* Local memory, in the module's context: each row the step from the
	 * one before (a lowered stack is a negative delta). */
	for (i = 0; i < NLOCAL; i++)
		axon_step(&c, local_names[i], local_cmds[i], native_lm[i]);
	fclose(c.to);
	waitpid(c.pid, &status, 0);
	printf("%s: %d kind(s) differ by more than 2 MiB\n", failures ? "FAIL" : "PASS",
	       failures);
	return failures ? 1 : 0;
}
