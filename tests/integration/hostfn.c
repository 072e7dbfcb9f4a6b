// SPDX-License-Identifier: MIT
/*
 * hostfn - host functions (cuLaunchHostFunc, cuStreamAddCallback) through
 * axon:
 *
 *   - order: a callback sees the result of the stream's earlier copy; a
 *     copy after it sees what it wrote into (pinned) host memory; a kernel
 *     after it does not run while it has not returned, while another
 *     stream's work does
 *   - cuStreamQuery and cuEventQuery say NOT_READY while a callback has not
 *     returned; cuStreamSynchronize and cuCtxSynchronize wait for it
 *   - many callbacks on one stream run in order; callbacks on several
 *     streams each in their stream's order
 *   - cuStreamAddCallback gets the stream's error as its status; the next
 *     synchronisation still reports it
 *   - a stream destroyed while its callback has not run
 *   - fork() with a callback pending: parent and child both carry on
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cuclient.h"

#define N		1024
#define MANY		1000
#define NSTREAMS	4
#define PER_STREAM	200

static CUfunction f_fill, f_bad;

/* A gate a callback waits at until the main thread opens it. */
static atomic_int gate_open, in_callback, callback_done;

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void CUDA_CB gated(void *arg)
{
	(void)arg;
	atomic_store(&in_callback, 1);
	while (!atomic_load(&gate_open))
		msleep(1);
	atomic_store(&callback_done, 1);
}

static void fill(CUdeviceptr d, float v, CUstream s)
{
	int n = N;
	void *params[] = { &d, &v, &n };

	CK(cuLaunchKernel(f_fill, 4, 1, 1, N / 4, 1, 1, 0, s, params, NULL));
}

/* ---- order against copies ------------------------------------------- */

struct copy_check {
	float *seen;		/* pinned: the DtoH before the callback */
	float *out;		/* pinned: what the callback writes */
	bool ok;
};

static void CUDA_CB check_and_write(void *arg)
{
	struct copy_check *c = arg;
	int i;

	c->ok = true;
	for (i = 0; i < N; i++) {
		if (c->seen[i] != 7.0f)
			c->ok = false;
		c->out[i] = 42.0f;
	}
}

static void test_copies(CUstream s)
{
	struct copy_check c;
	CUdeviceptr d;
	float *back;
	int i;

	CK(cuMemAllocHost((void **)&c.seen, N * sizeof(float)));
	CK(cuMemAllocHost((void **)&c.out, N * sizeof(float)));
	CK(cuMemAllocHost((void **)&back, N * sizeof(float)));
	memset(c.out, 0, N * sizeof(float));
	c.ok = false;
	CK(cuMemAlloc(&d, N * sizeof(float)));
	fill(d, 7.0f, s);
	CK(cuMemcpyDtoHAsync(c.seen, d, N * sizeof(float), s));
	CK(cuLaunchHostFunc(s, check_and_write, &c));
	CK(cuMemcpyHtoDAsync(d, c.out, N * sizeof(float), s));
	CK(cuMemcpyDtoHAsync(back, d, N * sizeof(float), s));
	CK(cuStreamSynchronize(s));
	if (!c.ok)
		cu_fail("the callback did not see the earlier copy's result");
	for (i = 0; i < N; i++)
		if (back[i] != 42.0f)
			cu_fail("the copy after the callback saw %g at %d, not 42", back[i], i);
	CK(cuMemFree(d));
	CK(cuMemFreeHost(c.seen));
	CK(cuMemFreeHost(c.out));
	CK(cuMemFreeHost(back));
	printf("  ok    callback between copies\n");
}

/* ---- holding later work ------------------------------------------------ */

static void test_hold(CUstream s, CUstream other)
{
	CUdeviceptr d, e;
	CUevent ev;
	float h[N];

	CK(cuMemAlloc(&d, N * sizeof(float)));
	CK(cuMemAlloc(&e, N * sizeof(float)));
	CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
	fill(d, 1.0f, s);
	CK(cuStreamSynchronize(s));
	atomic_store(&gate_open, 0);
	atomic_store(&in_callback, 0);
	atomic_store(&callback_done, 0);
	CK(cuLaunchHostFunc(s, gated, NULL));
	fill(d, 5.0f, s);		/* must wait for the callback */
	CK(cuEventRecord(ev, s));
	while (!atomic_load(&in_callback))
		msleep(1);
	EXPECT(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	EXPECT(cuEventQuery(ev), CUDA_ERROR_NOT_READY);
	/* Another stream goes on meanwhile. */
	fill(e, 3.0f, other);
	CK(cuMemcpyDtoHAsync(h, e, sizeof(h), other));
	CK(cuStreamSynchronize(other));
	if (h[0] != 3.0f || h[N - 1] != 3.0f)
		cu_fail("the other stream's work did not run");
	msleep(20);
	CK(cuMemcpyDtoHAsync(h, d, sizeof(h), other));
	CK(cuStreamSynchronize(other));
	if (h[0] != 1.0f)
		cu_fail("a kernel after the callback ran before it returned (%g)", h[0]);
	EXPECT(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
	atomic_store(&gate_open, 1);
	CK(cuStreamSynchronize(s));
	if (!atomic_load(&callback_done))
		cu_fail("cuStreamSynchronize returned before the callback did");
	CK(cuStreamQuery(s));
	CK(cuEventQuery(ev));
	CK(cuMemcpyDtoH(h, d, sizeof(h)));
	if (h[0] != 5.0f || h[N - 1] != 5.0f)
		cu_fail("the kernel after the callback did not run");

	/* cuCtxSynchronize waits for callbacks too. */
	atomic_store(&gate_open, 0);
	atomic_store(&callback_done, 0);
	CK(cuLaunchHostFunc(other, gated, NULL));
	atomic_store(&gate_open, 1);
	CK(cuCtxSynchronize());
	if (!atomic_load(&callback_done))
		cu_fail("cuCtxSynchronize returned before the callback did");
	CK(cuEventDestroy(ev));
	CK(cuMemFree(d));
	CK(cuMemFree(e));
	printf("  ok    later work held until the callback returned\n");
}

/* ---- many, and several streams ------------------------------------------ */

struct seq {
	int stream;
	int next;		/* index the next callback must have */
	bool bad;
};

struct seq_arg {
	struct seq *seq;
	int index;
};

static void CUDA_CB in_order(void *arg)
{
	struct seq_arg *a = arg;

	if (a->index != a->seq->next)
		a->seq->bad = true;
	a->seq->next = a->index + 1;
}

static void test_many(CUstream *st)
{
	static struct seq_arg args[NSTREAMS][MANY];
	struct seq seq[NSTREAMS];
	CUdeviceptr d;
	int s, i;

	CK(cuMemAlloc(&d, N * sizeof(float)));
	memset(seq, 0, sizeof(seq));
	/* One stream, many, between kernels. */
	for (i = 0; i < MANY; i++) {
		args[0][i] = (struct seq_arg){ &seq[0], i };
		if (i % 10 == 0)
			fill(d, (float)i, st[0]);
		CK(cuLaunchHostFunc(st[0], in_order, &args[0][i]));
	}
	CK(cuStreamSynchronize(st[0]));
	if (seq[0].bad || seq[0].next != MANY)
		cu_fail("%d callbacks on one stream: out of order or missing (%d ran)", MANY,
			seq[0].next);
	/* Several streams, interleaved. */
	memset(seq, 0, sizeof(seq));
	for (i = 0; i < PER_STREAM; i++) {
		for (s = 0; s < NSTREAMS; s++) {
			args[s][i] = (struct seq_arg){ &seq[s], i };
			CK(cuLaunchHostFunc(st[s], in_order, &args[s][i]));
		}
	}
	CK(cuCtxSynchronize());
	for (s = 0; s < NSTREAMS; s++)
		if (seq[s].bad || seq[s].next != PER_STREAM)
			cu_fail("stream %d: callbacks out of order or missing (%d ran)", s,
				seq[s].next);
	CK(cuMemFree(d));
	printf("  ok    %d callbacks on one stream, %d on each of %d streams\n", MANY,
	       PER_STREAM, NSTREAMS);
}

/* ---- status --------------------------------------------------------------- */

static CUresult got_status = CUDA_SUCCESS;
static atomic_int status_calls;

static void CUDA_CB record_status(CUstream s, CUresult status, void *arg)
{
	(void)s;
	(void)arg;
	got_status = status;
	atomic_fetch_add(&status_calls, 1);
}

static void test_status(CUstream s)
{
	CUdeviceptr d;
	void *params[] = { &d };

	CK(cuMemAlloc(&d, 64));
	CK(cuStreamAddCallback(s, record_status, NULL, 0));
	CK(cuStreamSynchronize(s));
	if (atomic_load(&status_calls) != 1 || got_status != CUDA_SUCCESS)
		cu_fail("a clean stream's callback got %s", cu_name(got_status));
	EXPECT(cuStreamAddCallback(s, record_status, NULL, 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuLaunchHostFunc(s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	/* A kernel the sim does not have fails in stream order. */
	CK(cuLaunchKernel(f_bad, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
	CK(cuStreamAddCallback(s, record_status, NULL, 0));
	EXPECT(cuStreamSynchronize(s), CUDA_ERROR_NOT_SUPPORTED);
	if (atomic_load(&status_calls) != 2 || got_status != CUDA_ERROR_NOT_SUPPORTED)
		cu_fail("the callback after a failed launch got %s", cu_name(got_status));
	CK(cuStreamSynchronize(s));
	CK(cuMemFree(d));
	printf("  ok    callback status\n");
}

/* ---- a stream destroyed with its callback pending ------------------------ */

/*
 * cuStreamDestroy returns at once and lets the stream's work finish; it
 * does not hold the other streams: their work runs while the destroyed
 * stream's callback is still waiting (axond once released a stream
 * device-wide, which parked everything after it behind the callback).
 */
static void test_destroy(CUcontext ctx, CUstream other)
{
	CUdeviceptr e;
	CUstream s;
	float h[N];

	(void)ctx;
	CK(cuMemAlloc(&e, N * sizeof(float)));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	atomic_store(&gate_open, 0);
	atomic_store(&in_callback, 0);
	atomic_store(&callback_done, 0);
	CK(cuLaunchHostFunc(s, gated, NULL));
	CK(cuStreamDestroy(s));
	while (!atomic_load(&in_callback))
		msleep(1);
	fill(e, 6.0f, other);
	CK(cuMemcpyDtoHAsync(h, e, sizeof(h), other));
	CK(cuStreamSynchronize(other));	/* hangs if held */
	if (h[0] != 6.0f || h[N - 1] != 6.0f)
		cu_fail("another stream's work after a destroyed stream's callback");
	if (atomic_load(&callback_done))
		cu_fail("the destroyed stream's callback returned with its gate shut");
	CK(cuMemFree(e));
	atomic_store(&gate_open, 1);
	CK(cuCtxSynchronize());
	if (!atomic_load(&callback_done))
		cu_fail("a destroyed stream's callback did not run before cuCtxSynchronize");
	printf("  ok    stream destroyed with a callback pending\n");
}

/* ---- fork ------------------------------------------------------------------ */

static void test_fork(CUstream s)
{
	CUdeviceptr d;
	int status;
	pid_t pid;

	atomic_store(&gate_open, 0);
	atomic_store(&callback_done, 0);
	CK(cuLaunchHostFunc(s, gated, NULL));
	CK(cuLaunchHostFunc(s, gated, NULL));
	pid = fork();
	if (pid < 0)
		cu_fail("fork failed");
	if (pid == 0) {
		CUcontext c;
		CUdevice dev;

		/* The child starts over: its own connection and callbacks. */
		atomic_store(&gate_open, 1);
		if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&c, NULL, 0, dev) ||
		    cuLaunchHostFunc(NULL, gated, NULL) || cuCtxSynchronize() ||
		    !atomic_load(&callback_done))
			_exit(1);
		_exit(0);
	}
	msleep(10);
	atomic_store(&gate_open, 1);
	CK(cuStreamSynchronize(s));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		cu_fail("the forked child failed (status %#x)", status);
	CK(cuMemAlloc(&d, 64));
	CK(cuMemFree(d));
	printf("  ok    fork with callbacks pending\n");
}

int main(void)
{
	CUstream st[NSTREAMS];
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	void *image;
	int s;

	cu_prog = "hostfn";
	image = cu_load_kernels("cubin", NULL);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f_fill, mod, K_FILL));
	CK(cuModuleGetFunction(&f_bad, mod, K_NOT_BUILTIN));
	for (s = 0; s < NSTREAMS; s++)
		CK(cuStreamCreate(&st[s], CU_STREAM_NON_BLOCKING));

	test_copies(st[0]);
	test_hold(st[0], st[1]);
	test_many(st);
	test_status(st[2]);
	test_destroy(ctx, st[1]);
	test_fork(st[3]);

	for (s = 0; s < NSTREAMS; s++)
		CK(cuStreamDestroy(st[s]));
	CK(cuModuleUnload(mod));
	CK(cuCtxSynchronize());
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("hostfn: all checks passed\n");
	return 0;
}
