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
 * launch loops copy4 bw alloc alloc4g.
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
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "../bench.h"

#define MIB ((size_t)1 << 20)

static unsigned long divisor = 1;
static const char *only, *skip;

static unsigned long iters(unsigned long n)
{
	return n / divisor ? n / divisor : 1;
}

static const char *errname(CUresult r)
{
	const char *s = NULL;

	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
		return "CUDA_ERROR_?";
	return s;
}

/* ---- rows ---------------------------------------------------------------- */

struct row {
	char name[40], unit[12], note[120];
	double v, p99, mean;	/* NAN where not applicable */
	size_t n;
	bool na;
};

static struct row rows[96];
static unsigned int nrows;

static void fmt(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(buf, len, "-");
	else if (a >= 1000)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, len, "%.2f", v);
	else if (a >= 0.1)
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "%.4f", v);
}

static struct row *new_row(const char *name, const char *unit, const char *note)
{
	struct row *r = &rows[nrows < 95 ? nrows++ : 95];

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	snprintf(r->note, sizeof(r->note), "%s", note ? note : "");
	r->v = r->p99 = r->mean = NAN;
	return r;
}

/* A figure: value (the row's main number), optional p99 and mean. */
static void put(const char *name, const char *unit, double v, double p99, double mean,
		size_t n, const char *note)
{
	struct row *r = new_row(name, unit, note);
	char b[32];

	r->v = v;
	r->p99 = p99;
	r->mean = mean;
	r->n = n;
	fmt(b, sizeof(b), v);
	printf("%s %s %s\n", name, b, unit);
	if (!isnan(p99)) {
		fmt(b, sizeof(b), p99);
		printf("%s.p99 %s %s\n", name, b, unit);
	}
	if (!isnan(mean)) {
		fmt(b, sizeof(b), mean);
		printf("%s.mean %s %s\n", name, b, unit);
	}
	fflush(stdout);
}

static void put1(const char *name, const char *unit, double v, const char *note)
{
	put(name, unit, v, NAN, NAN, 1, note);
}

/* A sampled row in a time unit: samples are ns (or ps if ps); scale
 * divides ns into the unit (1e3 for us, 1e6 for ms). */
static void put_lat(const char *name, const char *unit, struct b_samples *s, bool ps,
		    double scale, const char *note)
{
	struct b_summary r = ps ? b_summarize_ps(s) : b_summarize(s);

	put(name, unit, r.p50 / scale, r.p99 / scale, r.mean / scale, r.n, note);
}

/* A sampled row in a rate unit (higher is better): samples are ns for
 * `work` units of work; the p99 column is the rate at the p99 time. */
static void put_rate(const char *name, const char *unit, struct b_samples *s, double work,
		     const char *note)
{
	struct b_summary r = b_summarize(s);

	put(name, unit, work / r.p50, work / r.p99, work / r.mean, r.n, note);
}

static void put_na(const char *name, const char *unit, const char *fmt_, ...)
	__attribute__((format(printf, 3, 4)));

static void put_na(const char *name, const char *unit, const char *fmt_, ...)
{
	struct row *r;
	char why[120];
	va_list ap;

	va_start(ap, fmt_);
	vsnprintf(why, sizeof(why), fmt_, ap);
	va_end(ap);
	r = new_row(name, unit, why);
	r->na = true;
	printf("%s n/a %s # %s\n", name, unit, why);
	fflush(stdout);
}

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

/* On failure: the row is n/a with the error's name; leave the group. */
#define TRY(row, unit, call)						\
	do {								\
		CUresult r_ = (call);					\
		if (r_ != CUDA_SUCCESS) {				\
			put_na(row, unit, "%s: %s", #call, errname(r_)); \
			return;						\
		}							\
	} while (0)

/* ---- shared state -------------------------------------------------------- */

static CUstream st;
static CUmodule mod;
static CUfunction fnop;
static void *cubin_img, *ptx_img;

static void *read_file(const char *path)
{
	struct stat sb;
	char *buf;
	int fd = open(path, O_RDONLY);
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) || !(buf = malloc((size_t)sb.st_size + 1))) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)sb.st_size - got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (got != (size_t)sb.st_size) {
		free(buf);
		return NULL;
	}
	buf[got] = 0;	/* PTX images are NUL-terminated text */
	return buf;
}

static CUresult launch_nop(void)
{
	return cuLaunchKernel(fnop, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL);
}

/* ---- start: fork + exec to first kernel done ----------------------------- */

/* What the child reports through its pipe: CLOCK_MONOTONIC stamps. */
struct child_report {
	uint64_t t_main, t_init, t_ctx, t_mod, t_done;
	int32_t err;		/* CUresult of the failing step, 0 */
	int32_t step;
};

static int child_main(const char *cubin, int fd)
{
	struct child_report rep = { .t_main = b_now() };
	CUcontext ctx;
	CUdevice dev;
	CUmodule m;
	CUfunction f;
	CUresult r;
	void *img;

#define STEP(n, call) do { rep.step = n; r = (call); if (r) goto out; } while (0)
	STEP(1, cuInit(0));
	rep.t_init = b_now();
	STEP(2, cuDeviceGet(&dev, 0));
	STEP(2, cuDevicePrimaryCtxRetain(&ctx, dev));
	STEP(2, cuCtxSetCurrent(ctx));
	rep.t_ctx = b_now();
	img = read_file(cubin);
	STEP(3, img ? cuModuleLoadData(&m, img) : CUDA_ERROR_FILE_NOT_FOUND);
	STEP(3, cuModuleGetFunction(&f, m, "nop"));
	rep.t_mod = b_now();
	STEP(4, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	STEP(4, cuCtxSynchronize());
	rep.t_done = b_now();
	rep.step = 0;
#undef STEP
out:
	rep.err = (int32_t)r;
	if (write(fd, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
		return 3;
	return r ? 2 : 0;
}

/* pre: "start" (this process has not touched the driver) or "start_held"
 * (it holds a context on device 0, so the GPU is initialised). */
static void bench_start(const char *cubin, const char *pre)
{
	static const char *const steps[] = { "", "cuInit", "context", "module load",
					     "launch+sync" };
	const unsigned int runs = divisor > 1 ? 3 : 8, warm = 1;
	struct b_samples tot, ph[6];
	unsigned int i, k;
	char self[4096], tot_name[40], pn[6][40];
	static const char *const phase[6] = { "exec", "cuinit", "ctx", "modload",
					      "launch_sync", "exit" };
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	/* DRVBENCH_START_GAP_MS: an untimed pause before each start, so that
	 * whatever the last one set going (axond replacing the worker it
	 * used) is over before the next is timed. */
	const char *gap_env = getenv("DRVBENCH_START_GAP_MS");
	unsigned long gap_ms = gap_env ? strtoul(gap_env, NULL, 10) : 0;

	snprintf(tot_name, sizeof(tot_name), "%s_first_kernel", pre);
	for (k = 0; k < 6; k++)
		snprintf(pn[k], sizeof(pn[k]), "%s.%s", pre, phase[k]);
	if (sl <= 0) {
		put_na(tot_name, "ms", "readlink /proc/self/exe: %s", strerror(errno));
		return;
	}
	self[sl] = 0;
	b_init(&tot, runs);
	for (k = 0; k < 6; k++)
		b_init(&ph[k], runs);
	for (i = 0; i < warm + runs; i++) {
		struct child_report rep;
		uint64_t t0, t1;
		int fds[2], status = 0;
		ssize_t got;
		pid_t pid;

		if (gap_ms)
			usleep((useconds_t)(gap_ms * 1000));
		if (pipe(fds)) {
			put_na(tot_name, "ms", "pipe: %s", strerror(errno));
			goto out;
		}
		t0 = b_now();
		pid = fork();
		if (pid == 0) {
			char fdarg[16];

			close(fds[0]);
			snprintf(fdarg, sizeof(fdarg), "%d", fds[1]);
			execl(self, self, "--child", cubin, fdarg, (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		if (pid < 0) {
			close(fds[0]);
			put_na(tot_name, "ms", "fork: %s", strerror(errno));
			goto out;
		}
		got = read(fds[0], &rep, sizeof(rep));
		close(fds[0]);
		waitpid(pid, &status, 0);
		t1 = b_now();
		if (got != (ssize_t)sizeof(rep) || rep.err || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			if (got == (ssize_t)sizeof(rep) && rep.err)
				put_na(tot_name, "ms", "child: %s failed: %s",
				       steps[rep.step >= 1 && rep.step <= 4 ? rep.step : 0],
				       errname((CUresult)rep.err));
			else
				put_na(tot_name, "ms", "child exited with status %#x",
				       status);
			goto out;
		}
		if (i < warm)
			continue;
		b_add(&tot, t1 - t0);
		b_add(&ph[0], rep.t_main - t0);
		b_add(&ph[1], rep.t_init - rep.t_main);
		b_add(&ph[2], rep.t_ctx - rep.t_init);
		b_add(&ph[3], rep.t_mod - rep.t_ctx);
		b_add(&ph[4], rep.t_done - rep.t_mod);
		b_add(&ph[5], t1 - rep.t_done);
	}
	{
		char note[120];

		snprintf(note, sizeof(note),
			 "fork..exit of cuInit,ctx,cuModuleLoadData,launch,sync; %u runs%s; %lu ms apart",
			 runs, strcmp(pre, "start") ? "; parent holds a ctx" : "", gap_ms);
		put_lat(tot_name, "ms", &tot, false, 1e6, note);
	}
	put_lat(pn[0], "ms", &ph[0], false, 1e6, "fork to main() of the child");
	put_lat(pn[1], "ms", &ph[1], false, 1e6, "cuInit(0)");
	put_lat(pn[2], "ms", &ph[2], false, 1e6,
		"cuDeviceGet, cuDevicePrimaryCtxRetain, cuCtxSetCurrent");
	put_lat(pn[3], "ms", &ph[3], false, 1e6,
		"read cubin, cuModuleLoadData, cuModuleGetFunction");
	put_lat(pn[4], "ms", &ph[4], false, 1e6,
		"cuLaunchKernel(nop), cuCtxSynchronize");
	put_lat(pn[5], "ms", &ph[5], false, 1e6, "exit() to waitpid() done");
out:
	b_free(&tot);
	for (k = 0; k < 6; k++)
		b_free(&ph[k]);
}

/* ---- module load --------------------------------------------------------- */

static void modload(const char *name, void *img, unsigned long n, bool keep)
{
	char nf[40], nr[40], np[40], note[120];
	struct b_samples sm, sp;
	struct b_summary s;
	CUmodule m;
	uint64_t t0, t1;
	unsigned long i;

	snprintf(nf, sizeof(nf), "modload_%s_first", name);
	snprintf(nr, sizeof(nr), "modload_%s_repeat", name);
	snprintf(np, sizeof(np), "modload_%s_pair", name);
	t0 = b_now();
	TRY(nf, "us", cuModuleLoadData(&m, img));
	t1 = b_now();
	put1(nf, "us", (double)(t1 - t0) / 1e3, "first cuModuleLoadData of the image in this process");
	if (keep)
		mod = m;
	else
		TRY(nf, "us", cuModuleUnload(m));
	b_init(&sm, n);
	b_init(&sp, n);
	for (i = 0; i < n; i++) {
		t0 = b_now();
		TRY(nr, "us", cuModuleLoadData(&m, img));
		t1 = b_now();
		b_add(&sm, t1 - t0);
		TRY(nr, "us", cuModuleUnload(m));
		b_add(&sp, b_now() - t0);
	}
	s = b_summarize(&sm);
	snprintf(note, sizeof(note), "mean of %lu later loads (p50 %.1f us), unload untimed", n,
		 s.p50 / 1e3);
	put(nr, "us", s.mean / 1e3, s.p99 / 1e3, s.mean / 1e3, s.n, note);
	/* Where an unload's work is done differs (through axon it is
	 * deferred and runs ahead of the next load): the pair is the same
	 * work both ways. */
	s = b_summarize(&sp);
	snprintf(note, sizeof(note), "mean of the same %lu loads each with its unload", n);
	put(np, "us", s.mean / 1e3, s.p99 / 1e3, s.mean / 1e3, s.n, note);
	b_free(&sm);
	b_free(&sp);
}

static void bench_modload(void)
{
	if (!cubin_img) {
		put_na("modload_cubin_first", "us", "cannot read the cubin");
		return;
	}
	modload("cubin", cubin_img, iters(50), true);
	if (ptx_img)
		modload("ptx", ptx_img, iters(10) > 3 ? iters(10) : 3, false);
	else
		put_na("modload_ptx_first", "us", "no PTX image given or readable");
}

/* ---- null-op round trips -------------------------------------------------- */

static void bench_nullop(void)
{
	const unsigned long n = iters(20000), warm = n / 10;
	struct b_samples sm;
	unsigned long i;

	TRY("nullop_stream_sync", "us", cuStreamSynchronize(st));
	b_init(&sm, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("nullop_stream_sync", "us", cuStreamSynchronize(st));
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("nullop_stream_sync", "us", &sm, false, 1e3,
		"cuStreamSynchronize on an idle non-blocking stream");
	sm.n = 0;
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("nullop_ctx_sync", "us", cuCtxSynchronize());
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("nullop_ctx_sync", "us", &sm, false, 1e3, "cuCtxSynchronize, idle context");
	b_free(&sm);
}

static void bench_query(void)
{
	const unsigned long n = iters(200000), warm = n / 10;
	const unsigned int batch = 16;
	struct b_samples sm;
	unsigned long i;
	unsigned int k;
	CUresult bad = CUDA_SUCCESS;

	TRY("stream_query", "us", cuStreamSynchronize(st));
	b_init(&sm, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0 = b_now(), t1;

		for (k = 0; k < batch; k++) {
			CUresult r = cuStreamQuery(st);

			if (r)
				bad = r;
		}
		t1 = b_now();
		if (i >= warm / batch)
			b_add(&sm, (t1 - t0) * 1000 / batch);
	}
	if (bad)
		put_na("stream_query", "us", "cuStreamQuery returned %s", errname(bad));
	else
		put_lat("stream_query", "us", &sm, true, 1e3, "cuStreamQuery, idle stream; batch 16");
	b_free(&sm);
}

/* ---- launches ------------------------------------------------------------- */

static void bench_launch(void)
{
	const unsigned long n = iters(40000), warm = n / 10;
	const unsigned int batch = 8;
	const unsigned long rate_n = iters(50000);
	struct b_samples sm;
	unsigned long i;
	unsigned int k;
	CUresult bad = CUDA_SUCCESS;

	if (!fnop) {
		put_na("launch_enqueue", "us", "no nop kernel");
		return;
	}
	/* Enqueue: batches of 8, the stream drained (untimed) every 128. */
	b_init(&sm, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0, t1;

		if (i % (128 / batch) == 0)
			TRY("launch_enqueue", "us", cuStreamSynchronize(st));
		t0 = b_now();
		for (k = 0; k < batch; k++) {
			CUresult r = launch_nop();

			if (r)
				bad = r;
		}
		t1 = b_now();
		if (i >= warm / batch)
			b_add(&sm, (t1 - t0) * 1000 / batch);
	}
	TRY("launch_enqueue", "us", cuStreamSynchronize(st));
	if (bad)
		put_na("launch_enqueue", "us", "cuLaunchKernel: %s", errname(bad));
	else
		put_lat("launch_enqueue", "us", &sm, true, 1e3,
			"cuLaunchKernel(nop) 1x1x1, per call; batch 8, sync every 128 untimed");
	b_free(&sm);

	/* Sustained rate: rate_n launches back to back, then one sync. */
	b_init(&sm, 5);
	for (i = 0; i < 6; i++) {
		uint64_t t0 = b_now(), t1;
		unsigned long j;

		for (j = 0; j < rate_n; j++)
			TRY("launch_rate", "launch/s", launch_nop());
		TRY("launch_rate", "launch/s", cuStreamSynchronize(st));
		t1 = b_now();
		if (i)
			b_add(&sm, t1 - t0);
	}
	{
		char note[120];

		snprintf(note, sizeof(note), "%lu launches then 1 sync, 5 reps", rate_n);
		put_rate("launch_rate", "launch/s", &sm, (double)rate_n * 1e9, note);
	}
	b_free(&sm);

	/* Launch + sync latency. */
	{
		const unsigned long m = iters(5000), mw = m / 10;

		b_init(&sm, m);
		for (i = 0; i < mw + m; i++) {
			uint64_t t0 = b_now(), t1;

			TRY("launch_sync", "us", launch_nop());
			TRY("launch_sync", "us", cuStreamSynchronize(st));
			t1 = b_now();
			if (i >= mw)
				b_add(&sm, t1 - t0);
		}
		put_lat("launch_sync", "us", &sm, false, 1e3,
			"cuLaunchKernel(nop) + cuStreamSynchronize");
		b_free(&sm);
	}
}

static void bench_loops(void)
{
	static const struct { unsigned int len; unsigned long reps; } loops[] = {
		{ 10, 500 }, { 100, 200 }, { 1000, 40 },
	};
	unsigned int l;

	if (!fnop) {
		put_na("loop10", "us", "no nop kernel");
		return;
	}
	for (l = 0; l < 3; l++) {
		const unsigned long n = iters(loops[l].reps), warm = n / 10 ? n / 10 : 1;
		char name[40], note[120];
		struct b_samples sm;
		unsigned long i;

		snprintf(name, sizeof(name), "loop%u", loops[l].len);
		b_init(&sm, n);
		for (i = 0; i < warm + n; i++) {
			uint64_t t0 = b_now(), t1;
			unsigned int j;

			for (j = 0; j < loops[l].len; j++)
				TRY(name, "us", launch_nop());
			TRY(name, "us", cuStreamSynchronize(st));
			t1 = b_now();
			if (i >= warm)
				b_add(&sm, t1 - t0);
		}
		snprintf(note, sizeof(note), "%u x cuLaunchKernel(nop) + cuStreamSynchronize, per loop",
			 loops[l].len);
		put_lat(name, "us", &sm, false, 1e3, note);
		b_free(&sm);
	}
}

/* ---- copies --------------------------------------------------------------- */

static void bench_copy4(void)
{
	const unsigned long n = iters(5000), warm = n / 10;
	struct b_samples sm;
	CUdeviceptr d;
	uint32_t h = 0x12345678;
	unsigned long i;

	TRY("memcpy_htod_4b", "us", cuMemAlloc(&d, 4));
	b_init(&sm, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("memcpy_htod_4b", "us", cuMemcpyHtoD(d, &h, 4));
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("memcpy_htod_4b", "us", &sm, false, 1e3, "cuMemcpyHtoD, 4 bytes, pageable");
	sm.n = 0;
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("memcpy_dtoh_4b", "us", cuMemcpyDtoH(&h, d, 4));
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("memcpy_dtoh_4b", "us", &sm, false, 1e3, "cuMemcpyDtoH, 4 bytes, pageable");
	b_free(&sm);
	if (h != 0x12345678)
		printf("# warning: 4-byte copy read back %#x\n", h);
	TRY("memcpy_dtoh_4b", "us", cuMemFree(d));
}

/* HtoD then DtoH of len bytes between host and dev, reps timed each way. */
static void bw_pair(const char *what, void *host, CUdeviceptr dev, size_t len)
{
	const unsigned long reps = divisor > 1 ? 2 : 5;
	char nh[40], nd[40], note[120];
	struct b_samples sm;
	unsigned long i;

	snprintf(nh, sizeof(nh), "%s_htod", what);
	snprintf(nd, sizeof(nd), "%s_dtoh", what);
	snprintf(note, sizeof(note), "%zu MiB synchronous cuMemcpy%s, %lu reps after 1 warm-up",
		 len / MIB, "HtoD", reps);
	b_init(&sm, reps);
	for (i = 0; i <= reps; i++) {
		uint64_t t0 = b_now(), t1;

		TRY(nh, "GB/s", cuMemcpyHtoD(dev, host, len));
		t1 = b_now();
		if (i)
			b_add(&sm, t1 - t0);
	}
	put_rate(nh, "GB/s", &sm, (double)len, note);
	snprintf(note, sizeof(note), "%zu MiB synchronous cuMemcpy%s, %lu reps after 1 warm-up",
		 len / MIB, "DtoH", reps);
	sm.n = 0;
	for (i = 0; i <= reps; i++) {
		uint64_t t0 = b_now(), t1;

		TRY(nd, "GB/s", cuMemcpyDtoH(host, dev, len));
		t1 = b_now();
		if (i)
			b_add(&sm, t1 - t0);
	}
	put_rate(nd, "GB/s", &sm, (double)len, note);
	b_free(&sm);
}

static void bench_bw(void)
{
	const size_t len = 256 * MIB;
	CUdeviceptr d;
	void *h;
	CUresult r;

	TRY("pageable_htod", "GB/s", cuMemAlloc(&d, len));
	TRY("pageable_htod", "GB/s", cuMemsetD8(d, 0, len));
	h = malloc(len);
	if (!h) {
		put_na("pageable_htod", "GB/s", "malloc(256 MiB) failed");
		return;
	}
	memset(h, 1, len);
	bw_pair("pageable", h, d, len);
	free(h);

	r = cuMemAllocHost(&h, len);
	if (r) {
		put_na("pinned_htod", "GB/s", "cuMemAllocHost: %s", errname(r));
		put_na("pinned_dtoh", "GB/s", "cuMemAllocHost: %s", errname(r));
	} else {
		memset(h, 1, len);
		bw_pair("pinned", h, d, len);
		TRY("pinned_dtoh", "GB/s", cuMemFreeHost(h));
	}
	TRY("pinned_dtoh", "GB/s", cuMemFree(d));
}

/* ---- allocation ------------------------------------------------------------ */

static void alloc_size(const char *tag, size_t size, unsigned long n)
{
	const unsigned int batch = 16;
	const unsigned long warm = n / 10;
	char na[40], nf[40], nd[40], note[120];
	struct b_samples sa, sf;
	CUdeviceptr p[16];
	unsigned long i, pairs = 0;
	unsigned int k;
	uint64_t start = 0, end;
	CUresult bad = CUDA_SUCCESS;

	snprintf(na, sizeof(na), "memalloc_%s", tag);
	snprintf(nf, sizeof(nf), "memfree_%s", tag);
	snprintf(nd, sizeof(nd), "memalloc_free_%s_drained", tag);
	TRY(na, "us", cuCtxSynchronize());
	b_init(&sa, n / batch);
	b_init(&sf, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0, t1, t2;

		if (i == warm / batch)
			start = b_now();
		t0 = b_now();
		for (k = 0; k < batch; k++) {
			CUresult r = cuMemAlloc(&p[k], size);

			if (r) {
				bad = r;
				p[k] = 0;
			}
		}
		t1 = b_now();
		for (k = 0; k < batch; k++) {
			CUresult r = p[k] ? cuMemFree(p[k]) : CUDA_SUCCESS;

			if (r)
				bad = r;
		}
		t2 = b_now();
		if (bad)
			break;
		if (i >= warm / batch) {
			b_add(&sa, (t1 - t0) * 1000 / batch);
			b_add(&sf, (t2 - t1) * 1000 / batch);
			pairs += batch;
		}
	}
	if (bad) {
		put_na(na, "us", "cuMemAlloc/cuMemFree(%zu): %s", size, errname(bad));
		goto out;
	}
	TRY(nd, "us", cuCtxSynchronize());
	end = b_now();
	snprintf(note, sizeof(note), "cuMemAlloc(%s), per call; 16 allocs timed, then 16 frees",
		 tag);
	put_lat(na, "us", &sa, true, 1e3, note);
	snprintf(note, sizeof(note), "cuMemFree of the %s allocations, per call", tag);
	put_lat(nf, "us", &sf, true, 1e3, note);
	snprintf(note, sizeof(note),
		 "wall time per alloc+free pair incl. the final cuCtxSynchronize (%lu pairs)",
		 pairs);
	put1(nd, "us", (double)(end - start) / 1e3 / (double)pairs, note);
out:
	b_free(&sa);
	b_free(&sf);
}

static void bench_alloc(void)
{
	alloc_size("4k", 4096, iters(40000));
	alloc_size("2m", 2 * MIB, iters(2000));
}

static void bench_alloc4g(void)
{
	const size_t n = 1ul << 20, size = 4096;
	CUdeviceptr *p = calloc(n, sizeof(*p));
	uint64_t t0, t1, t2, t3, t4;
	size_t i;
	CUresult r = CUDA_SUCCESS;

	if (!p) {
		put_na("alloc4g_acquire", "ms", "calloc failed");
		return;
	}
	TRY("alloc4g_acquire", "ms", cuCtxSynchronize());
	t0 = b_now();
	for (i = 0; i < n; i++) {
		r = cuMemAlloc(&p[i], size);
		if (r)
			break;
	}
	t1 = b_now();
	if (r) {
		put_na("alloc4g_acquire", "ms", "cuMemAlloc #%zu of 2^20 x 4 KiB: %s", i,
		       errname(r));
		while (i)
			cuMemFree(p[--i]);
		cuCtxSynchronize();
		free(p);
		return;
	}
	r = cuCtxSynchronize();
	t2 = b_now();
	if (r) {
		put_na("alloc4g_acquire", "ms", "cuCtxSynchronize after 2^20 cuMemAlloc: %s",
		       errname(r));
		free(p);
		return;
	}
	for (i = 0; i < n; i++) {
		r = cuMemFree(p[i]);
		if (r)
			break;
	}
	t3 = b_now();
	if (!r)
		r = cuCtxSynchronize();
	t4 = b_now();
	free(p);
	put1("alloc4g_acquire", "ms", (double)(t1 - t0) / 1e6, "2^20 x cuMemAlloc(4 KiB), total");
	put1("alloc4g_acquire_sync", "ms", (double)(t2 - t1) / 1e6,
	     "the cuCtxSynchronize right after them");
	put1("alloc4g_acquire_per_call", "us", (double)(t1 - t0) / 1e3 / (double)n,
	     "acquire total / 2^20");
	if (r) {
		put_na("alloc4g_release", "ms", "cuMemFree / cuCtxSynchronize: %s", errname(r));
		return;
	}
	put1("alloc4g_release", "ms", (double)(t3 - t2) / 1e6, "2^20 x cuMemFree, total");
	put1("alloc4g_release_sync", "ms", (double)(t4 - t3) / 1e6,
	     "the cuCtxSynchronize right after them");
	put1("alloc4g_release_per_call", "us", (double)(t3 - t2) / 1e3 / (double)n,
	     "release total / 2^20");
}

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

static void table(void)
{
	unsigned int i;

	printf("#\n# %-26s %-9s %10s %10s %10s %7s  %s\n", "row", "unit", "value", "p99",
	       "mean", "n", "what");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		char v[32], p[32], m[32];

		if (r->na) {
			printf("# %-26s %-9s %10s %10s %10s %7s  skipped: %s\n", r->name, r->unit,
			       "n/a", "", "", "", r->note);
			continue;
		}
		fmt(v, sizeof(v), r->v);
		fmt(p, sizeof(p), r->p99);
		fmt(m, sizeof(m), r->mean);
		printf("# %-26s %-9s %10s %10s %10s %7zu  %s\n", r->name, r->unit, v, p, m, r->n,
		       r->note);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: drvbench [--quick] [--only G,..] [--skip G,..] CUBIN [PTX]\n"
		   "groups: start start_held modload nullop query launch loops copy4 bw alloc\n"
		   "        alloc4g\n");
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

	r = cuCtxSynchronize();
	printf("# final cuCtxSynchronize: %s\n", errname(r));
	stats_point("end");
	table();
	cuStreamDestroy(st);
	cuDevicePrimaryCtxRelease(dev);
	return 0;
}
