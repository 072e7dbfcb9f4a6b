// SPDX-License-Identifier: MIT
/*
 * A driver-API program that runs unchanged natively and through axon:
 * vector add of 2^20 floats from a module image given on the command line,
 * every element checked. Used by the GPU smoke run (tests/gpu/smoke.sh) and
 * by tests/gpu/gpucheck.sh.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { CUresult r_ = (x); if (r_) { const char *s; cuGetErrorName(r_, &s); printf("%s:%d %s -> %d %s\n", __FILE__, __LINE__, #x, r_, s); exit(1);} } while (0)
int main(int argc, char **argv)
{
	CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction f;
	int n = 1 << 20; size_t bytes = n * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
	CUdeviceptr da, db, dc; char name[256];
	if (argc != 2) { fprintf(stderr, "usage: %s MODULE-IMAGE\n", argv[0]); return 2; }
	FILE *fp = fopen(argv[1], "rb");
	if (!fp) { perror(argv[1]); return 2; }
	fseek(fp, 0, SEEK_END); long len = ftell(fp); rewind(fp);
	char *img = calloc(1, len + 1);
	if (!img || fread(img, 1, len, fp) != (size_t)len) { fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
	fclose(fp);
	for (int i = 0; i < n; i++) { a[i] = i; b[i] = 2 * i; }
	CK(cuInit(0)); CK(cuDeviceGet(&dev, 0)); CK(cuDeviceGetName(name, 256, dev));
	printf("device: %s\n", name);
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuMemAlloc(&da, bytes)); CK(cuMemAlloc(&db, bytes)); CK(cuMemAlloc(&dc, bytes));
	CK(cuMemcpyHtoD(da, a, bytes)); CK(cuMemcpyHtoD(db, b, bytes));
	CK(cuModuleLoadData(&mod, img)); CK(cuModuleGetFunction(&f, mod, "_Z9vectorAddPKfS0_Pfi"));
	void *args[] = { &da, &db, &dc, &n };
	CK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
	CK(cuMemcpyDtoH(c, dc, bytes));
	for (int i = 0; i < n; i++) if (c[i] != 3.0f * i) { printf("mismatch at %d: %f\n", i, c[i]); return 1; }
	printf("vectorAdd of %d elements: OK\n", n);
	CK(cuMemFree(da)); CK(cuMemFree(db)); CK(cuMemFree(dc)); CK(cuModuleUnload(mod)); CK(cuCtxDestroy(ctx));
	free(a); free(b); free(c); free(img);
	return 0;
}
