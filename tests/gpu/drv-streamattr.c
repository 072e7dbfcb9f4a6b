// SPDX-License-Identifier: MIT
/*
 * Stream attributes through the driver API only (issue 15:
 * cuStreamSetAttribute with an access policy window was NOT_SUPPORTED
 * through axon), in a form that runs unchanged natively and through axon
 * and prints the same transcript on stdout both ways. Checked, as the
 * H200's driver (580.159.04) answers:
 *
 *   1. a new stream's values: no window, synchronization policy -1, its
 *      priority (also one created with priority -2, and the NULL stream's
 *      0), domain map {0, 1}, domain 0; ids a stream does not take are
 *      INVALID_VALUE to get and to set;
 *   2. the priority can be set and reads back;
 *   3. synchronization policies 1..4 set and read back, 0 and 5 refused;
 *      domains 0 and 1, 2 refused; maps {k, k} for k < 4, 4 refused;
 *   4. an access policy window over memory of ours sets and reads back,
 *      a zero window clears it;
 *   5. cuStreamCopyAttributes gives another stream the window and the
 *      policy;
 *   6. work on the stream runs with them: a kernel fills the window's
 *      memory, the result is right.
 *
 * Usage: drv-streamattr KERNELS.cubin (its "fill"). Exit 0 when every
 * check passed; else 1 with the line that says why.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv-gpu.h"

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

#define N 4096

static CUdeviceptr mem;

static void defaults(CUstream s, CUstream s2)
{
	static const int bad[] = { 0, 2, 4, 5, 6, 7, 11, 12, 13, 14, 16, 99 };
	CUstreamAttrValue v;
	unsigned int i;
	CUresult r;

	memset(&v, 0x5a, sizeof(v));
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	printf("new stream: window base %s, %zu bytes\n",
	       v.accessPolicyWindow.base_ptr ? "set" : "NULL", v.accessPolicyWindow.num_bytes);
	CHECK(!v.accessPolicyWindow.base_ptr && !v.accessPolicyWindow.num_bytes, "window");
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
	printf("new stream: synchronization policy %d\n", (int)v.syncPolicy);
	CHECK((int)v.syncPolicy == -1, "policy");
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
	printf("new stream: priority %d\n", v.priority);
	CHECK(v.priority == 0, "priority");
	CK(cuStreamGetAttribute(s2, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
	printf("stream made with priority -2: priority %d\n", v.priority);
	CHECK(v.priority == -2, "priority -2");
	CK(cuStreamGetAttribute(NULL, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
	printf("NULL stream: priority %d\n", v.priority);
	CHECK(v.priority == 0, "NULL priority");
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &v));
	printf("new stream: domain map %d %d\n", v.memSyncDomainMap.default_,
	       v.memSyncDomainMap.remote);
	CHECK(v.memSyncDomainMap.default_ == 0 && v.memSyncDomainMap.remote == 1, "map");
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
	printf("new stream: domain %d\n", (int)v.memSyncDomain);
	CHECK(v.memSyncDomain == 0, "domain");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = cuStreamGetAttribute(s, (CUstreamAttrID)bad[i], &v);
		CHECK(r == CUDA_ERROR_INVALID_VALUE, "get id %d: %s", bad[i], ename(r));
		memset(&v, 0, sizeof(v));
		r = cuStreamSetAttribute(s, (CUstreamAttrID)bad[i], &v);
		CHECK(r == CUDA_ERROR_INVALID_VALUE, "set id %d: %s", bad[i], ename(r));
	}
	printf("ids a stream does not take: refused\n");
}

static void values(CUstream s)
{
	CUstreamAttrValue v;
	CUresult r;
	int k;

	v.priority = -3;
	CK(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
	v.priority = 7;
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
	printf("priority set to -3: %d\n", v.priority);
	CHECK(v.priority == -3, "priority after set");
	v.priority = 0;
	CK(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_PRIORITY, &v));
	for (k = 0; k <= 5; k++) {
		v.syncPolicy = (CUsynchronizationPolicy)k;
		r = cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v);
		CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
		printf("synchronization policy %d: %s, reads %d\n", k, ename(r), (int)v.syncPolicy);
		CHECK((k >= 1 && k <= 4) ? !r && (int)v.syncPolicy == k :
		      r == CUDA_ERROR_INVALID_VALUE, "policy %d", k);
	}
	for (k = 0; k <= 2; k++) {
		v.memSyncDomain = (CUlaunchMemSyncDomain)k;
		r = cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v);
		CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
		printf("domain %d: %s, reads %d\n", k, ename(r), (int)v.memSyncDomain);
		CHECK(k <= 1 ? !r && (int)v.memSyncDomain == k : r == CUDA_ERROR_INVALID_VALUE,
		      "domain %d", k);
	}
	for (k = 0; k <= 4; k++) {
		memset(&v, 0, sizeof(v));
		v.memSyncDomainMap.default_ = (unsigned char)k;
		v.memSyncDomainMap.remote = (unsigned char)(k < 4 ? k : 1);
		r = cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &v);
		CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP, &v));
		printf("domain map %d: %s, reads %d %d\n", k, ename(r), v.memSyncDomainMap.default_,
		       v.memSyncDomainMap.remote);
		CHECK(k < 4 ? !r && v.memSyncDomainMap.default_ == k : r == CUDA_ERROR_INVALID_VALUE,
		      "map %d", k);
	}
}

static void window(CUstream s, CUstream s3)
{
	CUstreamAttrValue v;

	memset(&v, 0, sizeof(v));
	v.accessPolicyWindow.base_ptr = (void *)(uintptr_t)mem;
	v.accessPolicyWindow.num_bytes = N * sizeof(float);
	v.accessPolicyWindow.hitRatio = 0.5f;
	v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
	v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
	CK(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	memset(&v, 0, sizeof(v));
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	printf("window: base %s, %zu bytes, hit ratio %.2f, hit %d, miss %d\n",
	       (CUdeviceptr)(uintptr_t)v.accessPolicyWindow.base_ptr == mem ? "ours" : "other",
	       v.accessPolicyWindow.num_bytes, v.accessPolicyWindow.hitRatio,
	       (int)v.accessPolicyWindow.hitProp, (int)v.accessPolicyWindow.missProp);
	CHECK((CUdeviceptr)(uintptr_t)v.accessPolicyWindow.base_ptr == mem &&
	      v.accessPolicyWindow.num_bytes == N * sizeof(float) &&
	      v.accessPolicyWindow.hitRatio == 0.5f &&
	      v.accessPolicyWindow.hitProp == CU_ACCESS_PROPERTY_PERSISTING &&
	      v.accessPolicyWindow.missProp == CU_ACCESS_PROPERTY_STREAMING, "window read back");

	CK(cuStreamCopyAttributes(s3, s));
	memset(&v, 0, sizeof(v));
	CK(cuStreamGetAttribute(s3, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	printf("copied: window %s, %zu bytes\n",
	       (CUdeviceptr)(uintptr_t)v.accessPolicyWindow.base_ptr == mem ? "ours" : "other",
	       v.accessPolicyWindow.num_bytes);
	CHECK((CUdeviceptr)(uintptr_t)v.accessPolicyWindow.base_ptr == mem &&
	      v.accessPolicyWindow.num_bytes == N * sizeof(float), "copied window");
	CK(cuStreamGetAttribute(s3, CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY, &v));
	printf("copied: synchronization policy %d\n", (int)v.syncPolicy);
	CHECK((int)v.syncPolicy == 4, "copied policy");
	CK(cuStreamGetAttribute(s3, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
	printf("copied: domain %d\n", (int)v.memSyncDomain);
}

static void run_on(CUfunction fill, CUstream s, float value)
{
	static float h[N];
	int n = N, i, bad = 0;
	void *args[] = { &mem, &value, &n };

	CK(cuLaunchKernel(fill, N / 256, 1, 1, 256, 1, 1, 0, s, args, NULL));
	CK(cuStreamSynchronize(s));
	CK(cuMemcpyDtoH(h, mem, sizeof(h)));
	for (i = 0; i < N; i++)
		bad += h[i] != value;
	printf("fill on the stream with its window: %d wrong\n", bad);
	CHECK(!bad, "fill");
}

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *b;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		printf("FAIL cannot read %s\n", path);
		exit(1);
	}
	b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
		printf("FAIL cannot read %s\n", path);
		exit(1);
	}
	b[n] = 0;
	fclose(f);
	return b;
}

int main(int argc, char **argv)
{
	CUstreamAttrValue v;
	CUstream s, s2, s3;
	CUfunction fill;
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	char name[128];
	void *image;

	if (argc != 2) {
		fprintf(stderr, "usage: drv-streamattr KERNELS.cubin\n");
		return 2;
	}
	image = read_file(argv[1]);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	if (!cuDeviceGetName(name, sizeof(name), dev))
		fprintf(stderr, "device: %s\n", name);
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	CK(cuMemAlloc(&mem, N * sizeof(float)));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuStreamCreateWithPriority(&s2, 0, -2));
	CK(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING));

	defaults(s, s2);
	values(s);
	window(s, s3);
	run_on(fill, s, 3.0f);
	run_on(fill, s3, 4.0f);
	memset(&v, 0, sizeof(v));
	CK(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	CK(cuStreamGetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
	printf("window cleared: %zu bytes\n", v.accessPolicyWindow.num_bytes);
	CHECK(!v.accessPolicyWindow.num_bytes, "cleared window");
	run_on(fill, s, 5.0f);

	CK(cuStreamDestroy(s));
	CK(cuStreamDestroy(s2));
	CK(cuStreamDestroy(s3));
	CK(cuMemFree(mem));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
