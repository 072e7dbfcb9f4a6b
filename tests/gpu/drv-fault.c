// SPDX-License-Identifier: MIT
/*
 * drv-fault: a device fault stays with the process whose kernel faulted.
 * Three client processes at once, natively or through one axond:
 *
 *   good     adds vectors in a loop (2^20 floats, every element checked)
 *            from before the faults until after them, then prints one
 *            device line and its verdict;
 *   assert   assert_nonzero over {1, 1, 0, 1}: its next synchronisation
 *            returns CUDA_ERROR_ASSERT (710), and so does every later call
 *            that reports errors (sticky);
 *   poke     poke writes 1 GiB past a 4-byte allocation: a memory
 *            fault, sticky. The GPU reports it as CUDA_ERROR_ILLEGAL_ADDRESS
 *            (700) or, now and then, CUDA_ERROR_INVALID_ADDRESS_SPACE (717)
 *            (both seen natively on the H200 for this very kernel), so the
 *            output names the class, and every later call must return the
 *            same code as the first.
 *
 * The parent starts good, waits for its first round, runs assert and then
 * poke to the end, lets good finish, and prints each child's stdout in
 * that order (so the output is the same on every run). Exit 0 when every
 * child saw exactly what CUDA documents.
 *
 *   drv-fault KERNELS.cubin|.fatbin|.ptx
 *
 * Expected stdout (both ways; native CUDA also prints the assertion
 * message on stderr):
 *   == assert
 *   assert: launch: CUDA_SUCCESS (0)
 *   assert: cuCtxSynchronize: CUDA_ERROR_ASSERT (710)
 *   assert: cuCtxSynchronize again: CUDA_ERROR_ASSERT (710)
 *   assert: cuStreamSynchronize: CUDA_ERROR_ASSERT (710)
 *   assert: cuMemcpyDtoH: CUDA_ERROR_ASSERT (710)
 *   == poke
 *   poke: launch: CUDA_SUCCESS (0)
 *   poke: cuCtxSynchronize: a memory fault
 *   poke: cuCtxSynchronize again: a memory fault
 *   poke: cuStreamSynchronize: a memory fault
 *   poke: cuMemcpyDtoH: a memory fault
 *   == good
 *   hello 7 from thread 0
 *   good: every round correct, before, during and after the faults
 *   drv-fault: OK
 */
#include <cuda.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CK(x)								\
	do {								\
		CUresult r_ = (x);					\
		if (r_) {						\
			printf("%s:%d: %s -> %s (%d)\n", __FILE__, __LINE__, #x, \
			       name(r_), (int)r_);			\
			exit(1);					\
		}							\
	} while (0)

static const char *name(CUresult r)
{
	const char *s = "?";

	cuGetErrorName(r, &s);
	return s;
}

static void *image;
static CUmodule mod;

static void *load(const char *path)
{
	FILE *f = fopen(path, "rb");
	long len;
	char *p;

	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	p = calloc(1, (size_t)len + 1);
	if (!p || fread(p, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: cannot read\n", path);
		exit(1);
	}
	fclose(f);
	return p;
}

static void start(void)
{
	CUdevice dev;
	CUcontext ctx;

	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
}

/* One call's result, and whether it is the one expected. */
static bool show(const char *who, const char *what, CUresult r, CUresult want)
{
	printf("%s: %s: %s (%d)\n", who, what, name(r), (int)r);
	return r == want;
}

static bool memory_fault(CUresult r)
{
	return r == CUDA_ERROR_ILLEGAL_ADDRESS || r == CUDA_ERROR_INVALID_ADDRESS_SPACE;
}

/* A memory fault's result: its class, and whether it is the first one's
 * code (*first, set by the first call). */
static bool show_fault(const char *who, const char *what, CUresult r, CUresult *first)
{
	if (!memory_fault(r))
		return show(who, what, r, CUDA_ERROR_ILLEGAL_ADDRESS);
	printf("%s: %s: a memory fault\n", who, what);
	fprintf(stderr, "%s: %s: %s (%d)\n", who, what, name(r), (int)r);
	if (!*first)
		*first = r;
	return r == *first;
}

/* A faulting client: kind "assert" or "poke". */
static int faulty(const char *kind)
{
	CUresult want = !strcmp(kind, "assert") ? CUDA_ERROR_ASSERT
						: CUDA_ERROR_ILLEGAL_ADDRESS;
	CUfunction f;
	CUdeviceptr p;
	int h[4] = { 1, 1, 0, 1 };
	bool ok = true;
	CUresult r;

	start();
	CK(cuMemAlloc(&p, sizeof(h)));
	CK(cuMemcpyHtoD(p, h, sizeof(h)));
	if (want == CUDA_ERROR_ASSERT) {
		int n = 4;
		void *args[] = { &p, &n };

		CK(cuModuleGetFunction(&f, mod, "assert_nonzero"));
		r = cuLaunchKernel(f, 1, 1, 1, 4, 1, 1, 0, NULL, args, NULL);
	} else {
		long long i = 1LL << 28;	/* 1 GiB past p */
		int v = 1;
		void *args[] = { &p, &i, &v };

		CK(cuModuleGetFunction(&f, mod, "poke"));
		r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
	}
	ok &= show(kind, "launch", r, CUDA_SUCCESS);
	if (want == CUDA_ERROR_ASSERT) {
		ok &= show(kind, "cuCtxSynchronize", cuCtxSynchronize(), want);
		ok &= show(kind, "cuCtxSynchronize again", cuCtxSynchronize(), want);
		ok &= show(kind, "cuStreamSynchronize", cuStreamSynchronize(NULL), want);
		ok &= show(kind, "cuMemcpyDtoH", cuMemcpyDtoH(h, p, sizeof(h)), want);
	} else {
		CUresult first = CUDA_SUCCESS;

		ok &= show_fault(kind, "cuCtxSynchronize", cuCtxSynchronize(), &first);
		ok &= show_fault(kind, "cuCtxSynchronize again", cuCtxSynchronize(), &first);
		ok &= show_fault(kind, "cuStreamSynchronize", cuStreamSynchronize(NULL), &first);
		ok &= show_fault(kind, "cuMemcpyDtoH", cuMemcpyDtoH(h, p, sizeof(h)), &first);
	}
	return ok ? 0 : 1;
}

/* The good client: rounds until told (fd go readable), then one more. */
static int good(int ready, int go)
{
	const int n = 1 << 20;
	size_t bytes = (size_t)n * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
	CUdeviceptr da, db, dc;
	CUfunction vadd, hello;
	bool told = false, ok = true;
	int i, round, tag = 7, one = 1;

	start();
	CK(cuModuleGetFunction(&vadd, mod, "_Z9vectorAddPKfS0_Pfi"));
	CK(cuModuleGetFunction(&hello, mod, "print_hello"));
	CK(cuMemAlloc(&da, bytes));
	CK(cuMemAlloc(&db, bytes));
	CK(cuMemAlloc(&dc, bytes));
	for (round = 0; ok; round++) {
		void *args[] = { &da, &db, &dc, (void *)&n };
		char byte;

		for (i = 0; i < n; i++) {
			a[i] = (float)(i % 1000) + (float)round;
			b[i] = 2.0f * (float)(i % 1000);
		}
		CK(cuMemcpyHtoD(da, a, bytes));
		CK(cuMemcpyHtoD(db, b, bytes));
		CK(cuLaunchKernel(vadd, (unsigned int)(n + 255) / 256, 1, 1, 256, 1, 1, 0,
				  NULL, args, NULL));
		CK(cuMemcpyDtoH(c, dc, bytes));
		for (i = 0; i < n && ok; i++)
			if (c[i] != a[i] + b[i]) {
				printf("good: round %d: c[%d] = %f, expected %f\n", round, i,
				       (double)c[i], (double)(a[i] + b[i]));
				ok = false;
			}
		if (round == 0 && write(ready, "R", 1) != 1)
			return 1;
		if (told)
			break;
		told = read(go, &byte, 1) == 1;
	}
	{
		void *args[] = { &tag, &one };

		CK(cuLaunchKernel(hello, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
		CK(cuCtxSynchronize());
	}
	if (ok)
		printf("good: every round correct, before, during and after the faults\n");
	free(a);
	free(b);
	free(c);
	return ok ? 0 : 1;
}

/* Runs fn in a child whose stdout is a pipe; returns the pipe's read end. */
static pid_t child(int (*fn)(const char *), const char *arg, int *out)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		exit(1);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		exit(1);
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		exit(fn(arg));
	}
	close(p[1]);
	*out = p[0];
	return pid;
}

static int ready_fd[2], go_fd[2];

static int good_main(const char *arg)
{
	(void)arg;
	close(ready_fd[0]);
	close(go_fd[1]);
	return good(ready_fd[1], go_fd[0]);
}

/* Copies a child's output to ours; its exit status, 0 when it passed. */
static int finish(const char *title, pid_t pid, int fd)
{
	char buf[4096];
	ssize_t n;
	int st = 0;

	printf("== %s\n", title);
	fflush(stdout);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(1, buf, (size_t)n) != n)
			return 1;
	close(fd);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 1;
	return WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	pid_t g, x;
	int gout, xout, bad = 0;
	char byte;

	if (argc != 2) {
		fprintf(stderr, "usage: drv-fault KERNELS.cubin\n");
		return 2;
	}
	image = load(argv[1]);
	if (pipe(ready_fd) || pipe(go_fd))
		return 1;
	/* Non-blocking: good polls it between rounds. */
	fcntl(go_fd[0], F_SETFL, O_NONBLOCK);
	g = child(good_main, NULL, &gout);
	close(ready_fd[1]);
	close(go_fd[0]);
	if (read(ready_fd[0], &byte, 1) != 1) {
		printf("drv-fault: the good client did not start\n");
		bad = 1;
	}
	/* One faulting client at a time, each to its end, while good runs
	 * (stdout is small: the pipes cannot fill). */
	x = child(faulty, "assert", &xout);
	bad |= finish("assert", x, xout);
	x = child(faulty, "poke", &xout);
	bad |= finish("poke", x, xout);
	if (write(go_fd[1], "G", 1) != 1)
		bad = 1;
	bad |= finish("good", g, gout);
	free(image);
	printf("drv-fault: %s\n", bad ? "FAILED" : "OK");
	return bad ? 1 : 0;
}
