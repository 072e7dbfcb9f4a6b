// SPDX-License-Identifier: MIT
/*
 * vecadd - c = a + b on the device, end to end through the CUDA driver API
 * (axon's shim): cuInit, device queries, a context (cuCtxCreate, or the
 * primary context with --primary), three allocations, copies in, a launch
 * of vectorAdd from a cubin, fatbin or PTX image, the copy out, a check of
 * every element, and the clean-up. Used by the integration tests and by
 * `make demo`.
 *
 *   vecadd [--size N] [--image cubin|fatbin|ptx|all] [--primary]
 *          [--loops N] [--hold SECONDS] [--hold-at work|end] [--quiet]
 *
 * --loops N     repeat the work N times (0: until SIGUSR1)
 * --hold S      stay connected for S seconds (or until SIGUSR1) after
 *               printing "holding": at "work" (default) with the buffers,
 *               module and context still held, at "end" after freeing all
 * Exit: 0 pass, 1 fail, 77 a kernel image is missing.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuclient.h"

static size_t n = 100000;
static bool quiet, primary;
static long loops = 1;
static double hold_s = -1;
static bool hold_at_end;
static sigset_t usr1;

#define say(...)							\
	do {								\
		if (!quiet) {						\
			printf("vecadd: " __VA_ARGS__);			\
			fflush(stdout);					\
		}							\
	} while (0)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vecadd [--size N] [--image cubin|fatbin|ptx|all] [--primary]\n"
		"              [--loops N] [--hold SECONDS] [--hold-at work|end] [--quiet]\n");
}

static bool stop_requested(void)
{
	sigset_t pend;

	sigpending(&pend);
	return sigismember(&pend, SIGUSR1);
}

/* Stay connected until SIGUSR1 or the time is up. */
static void hold(const char *what)
{
	struct timespec ts = {
		.tv_sec = (time_t)hold_s,
		.tv_nsec = (long)((hold_s - (double)(time_t)hold_s) * 1e9),
	};
	int sig;

	/* Always printed, even with --quiet: tests and the demo wait for it. */
	printf("vecadd: holding (%s) for up to %.1f s; SIGUSR1 ends it (pid %d)\n",
	       what, hold_s, (int)getpid());
	fflush(stdout);
	do {
		sig = sigtimedwait(&usr1, NULL, &ts);
	} while (sig < 0 && errno == EINTR);
	say("hold over (%s)\n", sig == SIGUSR1 ? "SIGUSR1" : "time");
}

static void query_device(CUdevice *devp)
{
	char name[256] = "";
	int version = 0, count = 0, major = 0, minor = 0, warp = 0, tpb = 0, sms = 0;
	size_t total = 0, free_b = 0, total_b = 0;
	CUdevice dev;

	CK(cuDriverGetVersion(&version));
	if (version <= 0)
		cu_fail("cuDriverGetVersion gave %d", version);
	CK(cuDeviceGetCount(&count));
	if (count < 1)
		cu_fail("cuDeviceGetCount gave %d", count);
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	if (!name[0] || strnlen(name, sizeof(name)) == sizeof(name))
		cu_fail("cuDeviceGetName gave an empty or unterminated name");
	CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	CK(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
	CK(cuDeviceGetAttribute(&tpb, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
	CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	if (major < 1 || minor < 0 || warp != 32 || tpb < 256 || sms < 1)
		cu_fail("implausible attributes: cc %d.%d, warp %d, %d threads/block, %d SMs",
			major, minor, warp, tpb, sms);
	CK(cuDeviceTotalMem(&total, dev));
	if (total < 3 * n * sizeof(float))
		cu_fail("device has %zu bytes, need %zu", total, 3 * n * sizeof(float));
	say("driver %d.%d, %d device(s); device 0: %s\n", version / 1000,
	    (version % 1000) / 10, count, name);
	say("  %.2f GiB, compute capability %d.%d, %d SMs, warp %d, %d threads/block\n",
	    (double)total / (1 << 30), major, minor, sms, warp, tpb);
	*devp = dev;
	(void)free_b;
	(void)total_b;
}

static void check_context(CUcontext ctx, CUdevice dev)
{
	CUcontext cur = NULL;
	CUdevice cdev = -1;
	size_t free_b = 0, total_b = 0;

	CK(cuCtxGetCurrent(&cur));
	if (cur != ctx)
		cu_fail("cuCtxGetCurrent gave %p, expected %p", (void *)cur, (void *)ctx);
	CK(cuCtxGetDevice(&cdev));
	if (cdev != dev)
		cu_fail("cuCtxGetDevice gave %d, expected %d", (int)cdev, (int)dev);
	CK(cuMemGetInfo(&free_b, &total_b));
	if (!total_b || free_b > total_b)
		cu_fail("cuMemGetInfo: free %zu, total %zu", free_b, total_b);
}

/* One pass: load the image, add, check, free. */
static void run_image(const char *ext, bool hold_here)
{
	size_t bytes = n * sizeof(float), len = 0, i;
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
	CUdeviceptr da = 0, db = 0, dc = 0;
	void *image = cu_load_kernels(ext, &len);
	CUmodule mod = NULL;
	CUfunction f = NULL;
	int ni = (int)n;
	void *params[] = { &da, &db, &dc, &ni };

	if (!a || !b || !c)
		cu_fail("out of host memory");
	for (i = 0; i < n; i++) {
		a[i] = (float)i * 0.5f;
		b[i] = (float)(n - i) * 0.25f + 1.0f;
		c[i] = -1.0f;
	}
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&f, mod, K_VECTOR_ADD));
	CK(cuMemAlloc(&da, bytes));
	CK(cuMemAlloc(&db, bytes));
	CK(cuMemAlloc(&dc, bytes));
	if (!da || !db || !dc || da == db || db == dc || da == dc)
		cu_fail("cuMemAlloc gave %#llx %#llx %#llx", (unsigned long long)da,
			(unsigned long long)db, (unsigned long long)dc);
	CK(cuMemcpyHtoD(da, a, bytes));
	CK(cuMemcpyHtoD(db, b, bytes));
	CK(cuLaunchKernel(f, cu_blocks(n), 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	CK(cuMemcpyDtoH(c, dc, bytes));
	CK(cuCtxSynchronize());
	for (i = 0; i < n; i++) {
		if (c[i] != a[i] + b[i])
			cu_fail("[%s] c[%zu] = %g, expected %g + %g = %g", ext, i,
				(double)c[i], (double)a[i], (double)b[i],
				(double)(a[i] + b[i]));
	}
	say("[%s] %zu-byte image; vectorAdd<<<%u, 256>>>(a, b, c, %zu)\n", ext, len,
	    cu_blocks(n), n);
	say("[%s]   c[0] = %g + %g = %g\n", ext, (double)a[0], (double)b[0], (double)c[0]);
	if (n > 2)
		say("[%s]   c[%zu] = %g + %g = %g\n", ext, n / 2, (double)a[n / 2],
		    (double)b[n / 2], (double)c[n / 2]);
	if (n > 1)
		say("[%s]   c[%zu] = %g + %g = %g\n", ext, n - 1, (double)a[n - 1],
		    (double)b[n - 1], (double)c[n - 1]);
	say("[%s] all %zu elements correct\n", ext, n);
	if (hold_here)
		hold("3 buffers, 1 module and the context held");
	CK(cuMemFree(da));
	CK(cuMemFree(db));
	CK(cuMemFree(dc));
	CK(cuModuleUnload(mod));
	free(image);
	free(a);
	free(b);
	free(c);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "image", required_argument, NULL, 'i' },
		{ "primary", no_argument, NULL, 'p' },
		{ "loops", required_argument, NULL, 'l' },
		{ "hold", required_argument, NULL, 'H' },
		{ "hold-at", required_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	const char *all[] = { "cubin", "fatbin", "ptx", NULL };
	const char *one[] = { "cubin", NULL };
	const char **images = one;
	CUcontext ctx = NULL;
	CUdevice dev;
	long iter;
	int o;

	cu_prog = "vecadd";
	while ((o = getopt_long(argc, argv, "s:i:pl:H:a:qh", opts, NULL)) != -1) {
		switch (o) {
		case 's': n = strtoul(optarg, NULL, 0); break;
		case 'i':
			if (!strcmp(optarg, "all")) {
				images = all;
			} else if (!strcmp(optarg, "cubin") || !strcmp(optarg, "fatbin") ||
				   !strcmp(optarg, "ptx")) {
				one[0] = optarg;
			} else {
				usage(stderr);
				return 2;
			}
			break;
		case 'p': primary = true; break;
		case 'l': loops = strtol(optarg, NULL, 0); break;
		case 'H': hold_s = strtod(optarg, NULL); break;
		case 'a':
			if (!strcmp(optarg, "end"))
				hold_at_end = true;
			else if (strcmp(optarg, "work")) {
				usage(stderr);
				return 2;
			}
			break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || n == 0 || n > (1u << 30) || loops < 0) {
		usage(stderr);
		return 2;
	}
	/* SIGUSR1 is taken synchronously (sigpending / sigtimedwait). */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);

	/* Before anything else: make sure the kernels exist (else 77). */
	free(cu_load_kernels(images[0], NULL));

	CK(cuInit(0));
	say("driver library %s\n", cu_driver_path());
	query_device(&dev);
	if (primary) {
		CK(cuDevicePrimaryCtxRetain(&ctx, dev));
		CK(cuCtxSetCurrent(ctx));
		say("context: the device's primary context (retain + set current)\n");
	} else {
		CK(cuCtxCreate(&ctx, NULL, 0, dev));
		say("context: cuCtxCreate\n");
	}
	if (!ctx)
		cu_fail("NULL context");
	check_context(ctx, dev);

	for (iter = 0; loops == 0 || iter < loops; iter++) {
		const char **img;
		bool last = loops && iter == loops - 1;

		for (img = images; *img; img++)
			run_image(*img, hold_s >= 0 && !hold_at_end && last && !img[1]);
		if (loops == 0 && stop_requested())
			break;
		if (iter == 0 && loops != 1)
			say("looping%s\n", loops ? "" : " until SIGUSR1");
	}
	if (loops != 1)
		say("%ld iterations\n", iter + (loops == 0));

	if (primary) {
		CK(cuCtxSetCurrent(NULL));
		CK(cuDevicePrimaryCtxRelease(dev));
	} else {
		CK(cuCtxDestroy(ctx));
	}
	if (hold_s >= 0 && (hold_at_end || loops == 0))
		hold("everything freed");
	say("PASSED\n");
	return 0;
}
