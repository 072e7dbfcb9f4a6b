// SPDX-License-Identifier: MIT
/*
 * start.c - the start and start_held groups: fork + exec of a child
 * (drvbench --child) that initialises the driver, loads the cubin, runs one
 * kernel and exits, timed from fork to waitpid, with the child's phases
 * from the timestamps it sends back.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drvbench.h"

/* What the child reports through its pipe: CLOCK_MONOTONIC stamps. */
struct child_report {
	uint64_t t_main, t_init, t_ctx, t_mod, t_done;
	int32_t err;		/* CUresult of the failing step, 0 */
	int32_t step;
};

int child_main(const char *cubin, int fd)
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
void bench_start(const char *cubin, const char *pre)
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
