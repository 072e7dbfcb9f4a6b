// SPDX-License-Identifier: MIT
/*
 * reserveprobe: what the driver reserves in a context when a module whose
 * code calls the device runtime (printf, malloc) is loaded, launched and
 * unloaded, natively (run with NVIDIA's libcuda.so.1 on LD_LIBRARY_PATH).
 * Each line is the step's drop in cuMemGetInfo's free memory, in MiB. The
 * figures axond charges (axond/localmem.c, "device runtime") come from it.
 *
 *   reserveprobe DIR    DIR holds reserve-printf.cubin, reserve-malloc.cubin
 */
#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>

static const char *dir;
static long long last;

static void ck(CUresult r, const char *what)
{
	const char *s = "?";

	if (r == CUDA_SUCCESS)
		return;
	cuGetErrorName(r, &s);
	fprintf(stderr, "reserveprobe: %s: %s\n", what, s);
	exit(1);
}

/* Prints the step's cost (what free memory lost since the last step). */
static void step(const char *what)
{
	size_t f, t;

	ck(cuCtxSynchronize(), "cuCtxSynchronize");
	ck(cuMemGetInfo(&f, &t), "cuMemGetInfo");
	if (what)
		printf("  %-36s %9.2f MiB\n", what, (double)(last - (long long)f) / 1048576.0);
	last = (long long)f;
}

static CUmodule load(const char *name)
{
	char path[4096];
	CUmodule m;

	snprintf(path, sizeof(path), "%s/reserve-%s.cubin", dir, name);
	ck(cuModuleLoad(&m, path), path);
	return m;
}

static void launch_malloc(CUmodule m)
{
	CUfunction f;
	CUdeviceptr out = 0;
	unsigned long long n = 16;
	void *args[] = { &out, &n };

	ck(cuModuleGetFunction(&f, m, "heapuse"), "cuModuleGetFunction");
	ck(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
}

static void fresh(CUdevice dev, CUcontext *c, const char *title)
{
	printf("%s\n", title);
	ck(cuCtxCreate(c, NULL, 0, dev), "cuCtxCreate");
	step(NULL);
}

int main(int argc, char **argv)
{
	CUmodule m1, m2;
	CUcontext c;
	CUdevice dev;
	int sms, per_sm;

	if (argc != 2) {
		fprintf(stderr, "usage: reserveprobe DIR\n");
		return 2;
	}
	dir = argv[1];
	ck(cuInit(0), "cuInit");
	ck(cuDeviceGet(&dev, 0), "cuDeviceGet");
	ck(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev), "attr");
	ck(cuDeviceGetAttribute(&per_sm, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev),
	   "attr");
	printf("%d SMs of %d threads\n", sms, per_sm);

	fresh(dev, &c, "malloc, in a fresh context");
	m1 = load("malloc");
	step("load");
	m2 = load("malloc");
	step("load again");
	launch_malloc(m1);
	step("first launch of malloc(16)");
	ck(cuModuleUnload(m1), "unload");
	ck(cuModuleUnload(m2), "unload");
	step("unload both");
	m1 = load("malloc");
	step("load a third time");
	ck(cuModuleUnload(m1), "unload");
	ck(cuCtxDestroy(c), "cuCtxDestroy");

	fresh(dev, &c, "malloc, a 64 MiB heap set first");
	ck(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64 << 20), "cuCtxSetLimit");
	step("set the heap");
	m1 = load("malloc");
	step("load");
	launch_malloc(m1);
	step("first launch of malloc(16)");
	ck(cuModuleUnload(m1), "unload");
	ck(cuCtxDestroy(c), "cuCtxDestroy");

	fresh(dev, &c, "printf, then malloc");
	m1 = load("printf");
	step("load printf's");
	m2 = load("printf");
	step("load printf's again");
	ck(cuModuleUnload(m2), "unload");
	m2 = load("malloc");
	step("load malloc's");
	ck(cuModuleUnload(m1), "unload");
	ck(cuModuleUnload(m2), "unload");
	step("unload both");
	ck(cuCtxDestroy(c), "cuCtxDestroy");

	fresh(dev, &c, "malloc, then printf");
	m1 = load("malloc");
	step("load malloc's");
	m2 = load("printf");
	step("load printf's");
	ck(cuModuleUnload(m1), "unload");
	ck(cuModuleUnload(m2), "unload");
	ck(cuCtxDestroy(c), "cuCtxDestroy");
	return 0;
}
