// SPDX-License-Identifier: MIT
/*
 * drv-printf: device printf reaches this process's stdout, in order with
 * the synchronisation that flushes it, natively and through axon (where the
 * daemon's driver does the printing: axond routes it back to the client
 * whose context printed, Documentation/architecture.md §8).
 *
 * Kernels: print_hello(tag, n) of tests/sim-kernels/kernels.cu, one thread
 * per launch (the order of lines from one warp is not defined). Host lines
 * are printed only right after a synchronisation, never between a launch
 * and the synchronisation after it (a later launch may flush earlier
 * output natively). Every flush point the CUDA guide names for
 * synchronisation is used once: cuCtxSynchronize, cuStreamSynchronize,
 * cuEventSynchronize, a blocking cuMemcpyDtoH.
 *
 *   drv-printf KERNELS.cubin|.fatbin|.ptx
 *
 * Expected stdout (both ways):
 *   hello 1 from thread 0
 *   hello 2 from thread 0
 *   hello 3 from thread 0
 *   host: after cuCtxSynchronize
 *   hello 4 from thread 0
 *   host: after cuStreamSynchronize
 *   hello 5 from thread 0
 *   host: after cuEventSynchronize
 *   hello 6 from thread 0
 *   host: after cuMemcpyDtoH
 *   drv-printf: OK
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)								\
	do {								\
		CUresult r_ = (x);					\
		if (r_) {						\
			const char *s_ = "?";				\
			cuGetErrorName(r_, &s_);			\
			printf("%s:%d: %s -> %s (%d)\n", __FILE__, __LINE__, #x, s_, (int)r_); \
			exit(1);					\
		}							\
	} while (0)

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

static CUfunction hello;

static void say(int tag)
{
	int n = 1;
	void *args[] = { &tag, &n };

	CK(cuLaunchKernel(hello, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUevent ev;
	CUdeviceptr buf;
	void *image;
	int x = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: drv-printf KERNELS.cubin\n");
		return 2;
	}
	/* Lines out as they come, so the order on a pipe is the order here. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	image = load(argv[1]);
	CK(cuModuleLoadData(&mod, image));
	free(image);
	CK(cuModuleGetFunction(&hello, mod, "print_hello"));
	CK(cuEventCreate(&ev, CU_EVENT_DEFAULT));
	CK(cuMemAlloc(&buf, sizeof(x)));
	CK(cuMemsetD32(buf, 42, 1));

	say(1);
	say(2);
	say(3);
	CK(cuCtxSynchronize());
	printf("host: after cuCtxSynchronize\n");

	say(4);
	CK(cuStreamSynchronize(NULL));
	printf("host: after cuStreamSynchronize\n");

	say(5);
	CK(cuEventRecord(ev, NULL));
	CK(cuEventSynchronize(ev));
	printf("host: after cuEventSynchronize\n");

	say(6);
	CK(cuMemcpyDtoH(&x, buf, sizeof(x)));
	printf("host: after cuMemcpyDtoH\n");
	if (x != 42) {
		printf("drv-printf: read %d, expected 42\n", x);
		return 1;
	}
	CK(cuMemFree(buf));
	CK(cuEventDestroy(ev));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	printf("drv-printf: OK\n");
	return 0;
}
