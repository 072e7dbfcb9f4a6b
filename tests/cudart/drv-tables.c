// SPDX-License-Identifier: MIT
/*
 * drv-tables: the shim's side of what cudart relies on, checked through the
 * driver API directly (run by tests/cudart/run.c against a private axond):
 *
 *   - cuGetExportTable: every table's size word and NULL slots, unknown
 *     UUIDs refused with *table = NULL, usable before cuInit;
 *   - CUDART_INTERFACE [2] gives the primary context without activating
 *     it, [1]/[6]/[8] load a fatbin through its wrapper or header;
 *   - context-local storage: miss -> CUDA_ERROR_INVALID_HANDLE, NULL
 *     context = current, destructors on cuDevicePrimaryCtxReset;
 *   - TOOLS_TLS [2], CONTEXT_CHECKS [2]/[3], the hook buffers;
 *   - INTEGRITY_CHECK [1]: the two constants, and the HMAC-MD2 of the
 *     inputs the note lists, recomputed here from what the driver API
 *     reports (only MD2 itself is shared with the shim);
 *   - cuLibrary* / cuKernel*, capture queries, context id, limits,
 *     occupancy, pinned host memory.
 *
 * argv[1]: a fatbin of tests/sim-kernels/kernels.cu. Exit 0 pass, 1 fail.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "md2.h"

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,	\
				__LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			failures++;					\
		}							\
	} while (0)

static const char *err_name(CUresult r)
{
	const char *s = NULL;

	cuGetErrorName(r, &s);
	return s ? s : "?";
}

#define CK(call)							\
	do {								\
		CUresult r_ = (call);					\
		CHECK(r_ == CUDA_SUCCESS, "%s -> %s", #call, err_name(r_)); \
	} while (0)

#define CK_IS(want, call)						\
	do {								\
		CUresult r_ = (call);					\
		CHECK(r_ == (want), "%s -> %s, want %s", #call,		\
		      err_name(r_), err_name(want));			\
	} while (0)

/* The UUIDs, in the byte order the textual form is written. */
static const CUuuid id_cudart = { { 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
				    (char)0x89, (char)0x87, (char)0xd9, 0x39, 0x12,
				    (char)0xfd, (char)0x9d, (char)0xf9 } };
static const CUuuid id_hooks = { { (char)0xa0, (char)0x94, 0x79, (char)0x8c, 0x2e, 0x74,
				   0x2e, 0x74, (char)0x93, (char)0xf2, 0x08, 0x00, 0x20,
				   0x0c, 0x0a, 0x66 } };
static const CUuuid id_tls = { { 0x42, (char)0xd8, 0x5a, (char)0x81, 0x23, (char)0xf6,
				 (char)0xcb, 0x47, (char)0x82, (char)0x98, (char)0xf6,
				 (char)0xe7, (char)0x8a, 0x3a, (char)0xec, (char)0xdc } };
static const CUuuid id_storage = { { (char)0xc6, (char)0x93, 0x33, 0x6e, 0x11, 0x21,
				     (char)0xdf, 0x11, (char)0xa8, (char)0xc3, 0x68,
				     (char)0xf3, 0x55, (char)0xd8, (char)0x95, (char)0x93 } };
static const CUuuid id_checks = { { 0x26, 0x3e, (char)0x88, 0x60, 0x7c, (char)0xd2, 0x61,
				    0x43, (char)0x92, (char)0xf6, (char)0xbb, (char)0xd5,
				    0x00, 0x6d, (char)0xfa, 0x7e } };
static const CUuuid id_integrity = { { (char)0xd4, 0x08, 0x20, 0x55, (char)0xbd,
				       (char)0xe6, 0x70, 0x4b, (char)0x8d, 0x34,
				       (char)0xba, 0x12, 0x3c, 0x66, (char)0xe1,
				       (char)0xf2 } };
/* Asked first by cudart 13, deliberately not served. */
static const CUuuid id_f8cf = { { (char)0xf8, (char)0xcf, (char)0xf9, 0x51, 0x21, 0x46,
				  (char)0x8b, 0x4e, (char)0xb9, (char)0xe2, (char)0xfb,
				  0x46, (char)0x9e, 0x7c, 0x0d, (char)0xd9 } };

typedef CUresult (*get_module_fn)(CUmodule *, const void *);
typedef CUresult (*primary_fn)(CUcontext *, CUdevice);
typedef CUresult (*module_ext1_fn)(CUmodule *, const void *, void *, void *, unsigned int);
typedef CUresult (*module_ext2_fn)(const void *, CUmodule *, void *, void *, unsigned int);
typedef void (*buf_fn)(void **, size_t *);
typedef CUresult (*ctx_fn)(CUcontext *);
typedef CUresult (*cls_put_fn)(CUcontext, void *, void *,
			       void (*)(CUcontext, void *, void *));
typedef CUresult (*cls_del_fn)(CUcontext, void *);
typedef CUresult (*cls_get_fn)(void **, CUcontext, void *);
typedef CUresult (*check_fn)(CUcontext, unsigned int *, const void **);
typedef unsigned int (*check3_fn)(void);
typedef CUresult (*integrity_fn)(unsigned int, uint64_t, uint64_t *);

static const void *const *table(const CUuuid *id)
{
	const void *t = NULL;

	CK(cuGetExportTable(&t, id));
	return t;
}

static size_t size_word(const void *const *t)
{
	return (size_t)(uintptr_t)t[0];
}

/* The __fatBinC_Wrapper_t nvcc emits: magic, version, data, filename. */
struct fatbin_wrapper {
	uint32_t magic;
	uint32_t version;
	const void *data;
	const void *filename;
};

static void *fatbin;

static void *read_file(const char *path)
{
	struct stat st;
	void *buf;
	FILE *f = fopen(path, "rb");

	if (!f || fstat(fileno(f), &st) || st.st_size <= 0) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	buf = malloc((size_t)st.st_size);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	return buf;
}

/* fill(p, v, n) from mod: p[i] == v afterwards. */
static void check_fill(CUfunction f, const char *what)
{
	enum { N = 1000 };
	CUdeviceptr d = 0;
	float v = 2.5f, h[N];
	int n = N, i, bad = 0;
	void *args[] = { &d, &v, &n };

	CK(cuMemAlloc_v2(&d, sizeof(h)));
	CK(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, args, NULL));
	CK(cuMemcpyDtoH_v2(h, d, sizeof(h)));
	for (i = 0; i < N; i++)
		bad += h[i] != v;
	CHECK(bad == 0, "%s: %d wrong", what, bad);
	CK(cuMemFree_v2(d));
}

static void before_init(void)
{
	const void *t = (const void *)1;

	/* cudart asks for f8cf first, before cuInit. */
	CK_IS(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&t, &id_f8cf));
	CHECK(t == NULL, "refused table left %p", t);
	t = NULL;
	CK(cuGetExportTable(&t, &id_cudart));
	CHECK(t != NULL, "no CUDART_INTERFACE before cuInit");
	CK_IS(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(NULL, &id_cudart));
	CK_IS(CUDA_ERROR_INVALID_VALUE, cuGetExportTable(&t, NULL));
}

static void sizes(void)
{
	const void *const *t;
	int drv = 0;

	CK(cuDriverGetVersion(&drv));
	t = table(&id_cudart);
	CHECK(size_word(t) == (drv >= 13010 ? 13 : 10) * sizeof(void *),
	      "CUDART_INTERFACE size %zu (driver %d)", size_word(t), drv);
	CHECK(t[1] && t[2] && !t[3] && !t[4] && !t[5] && t[6] && t[7] && t[8] && !t[9],
	      "CUDART_INTERFACE slots");
	t = table(&id_hooks);
	CHECK(size_word(t) == 7 * sizeof(void *), "hooks size %zu", size_word(t));
	CHECK(!t[1] && t[2] && !t[3] && !t[4] && !t[5] && t[6], "hooks slots");
	t = table(&id_tls);
	CHECK(size_word(t) == 4 * sizeof(void *), "TOOLS_TLS size %zu", size_word(t));
	CHECK(!t[1] && t[2] && !t[3], "TOOLS_TLS slots");
	t = table(&id_storage);
	CHECK(t[0] && t[1] && t[2] && !t[3], "context storage: 3 functions, NULL");
	t = table(&id_checks);
	CHECK(size_word(t) == 4 * sizeof(void *), "CONTEXT_CHECKS size %zu", size_word(t));
	CHECK(!t[1] && t[2] && t[3], "CONTEXT_CHECKS slots");
	t = table(&id_integrity);
	CHECK(size_word(t) == 3 * sizeof(void *), "INTEGRITY size %zu", size_word(t));
	CHECK(t[1] && !t[2], "INTEGRITY slots");
	printf("export tables: sizes and slots ok\n");
}

static void primary_and_storage(void)
{
	const void *const *rt = table(&id_cudart), *const *st = table(&id_storage);
	const void *const *tls = table(&id_tls), *const *ck = table(&id_checks);
	cls_put_fn put = (cls_put_fn)st[0];
	cls_del_fn del = (cls_del_fn)st[1];
	cls_get_fn get = (cls_get_fn)st[2];
	CUcontext peek = NULL, ctx = NULL, cur = NULL;
	unsigned int flags = 7, wrapped = 7;
	const void *inner = (const void *)1;
	int active = 7, key1, key2;
	void *v = NULL;

	CK(((primary_fn)rt[2])(&peek, 0));
	CHECK(peek != NULL, "no primary context handle");
	CK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	CHECK(active == 0, "peeking activated the primary context");
	CK(cuCtxSetCurrent(peek));	/* usable before it is retained */
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CHECK(ctx == peek, "retain gave %p, peek %p", (void *)ctx, (void *)peek);
	CK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	CHECK(active == 1, "retained primary context inactive");

	CK(((ctx_fn)tls[2])(&cur));
	CHECK(cur == ctx, "TOOLS_TLS[2] gave %p, current %p", (void *)cur, (void *)ctx);
	CK(((check_fn)ck[2])(ctx, &wrapped, &inner));
	CHECK(wrapped == 0 && inner == NULL, "context check %u %p", wrapped, inner);
	CHECK(((check3_fn)ck[3])() == 0, "CONTEXT_CHECKS[3] not 0");

	CK_IS(CUDA_ERROR_INVALID_HANDLE, get(&v, NULL, &key1));
	CK(put(NULL, &key1, (void *)0x1234, NULL));
	CK(get(&v, ctx, &key1));
	CHECK(v == (void *)0x1234, "get gave %p", v);
	CK(put(ctx, &key1, (void *)0x5678, NULL));	/* replaces */
	CK(get(&v, NULL, &key1));
	CHECK(v == (void *)0x5678, "get after replace gave %p", v);
	CK_IS(CUDA_ERROR_INVALID_HANDLE, get(&v, NULL, &key2));
	CK(del(NULL, &key1));
	CK_IS(CUDA_ERROR_INVALID_HANDLE, get(&v, NULL, &key1));
	CK_IS(CUDA_ERROR_INVALID_HANDLE, del(NULL, &key1));
	printf("primary context peek and context-local storage ok\n");
}

static int dtor_calls;
static CUcontext dtor_ctx;
static void *dtor_key, *dtor_value;

static void dtor(CUcontext ctx, void *key, void *value)
{
	dtor_calls++;
	dtor_ctx = ctx;
	dtor_key = key;
	dtor_value = value;
}

static void storage_destructors(void)
{
	const void *const *st = table(&id_storage);
	cls_put_fn put = (cls_put_fn)st[0];
	cls_get_fn get = (cls_get_fn)st[2];
	CUcontext ctx = NULL, again = NULL;
	unsigned int flags;
	int key, active = 7;
	void *v;

	CK(cuCtxGetCurrent(&ctx));
	CK(put(NULL, &key, (void *)0xabc, dtor));
	CK(cuDevicePrimaryCtxReset_v2(0));
	CHECK(dtor_calls == 1 && dtor_ctx == ctx && dtor_key == &key &&
	      dtor_value == (void *)0xabc, "destructor: %d calls", dtor_calls);
	CK(cuDevicePrimaryCtxGetState(0, &flags, &active));
	CHECK(active == 0, "reset primary context still active");
	CK_IS(CUDA_ERROR_INVALID_HANDLE, get(&v, ctx, &key));
	/* The handle outlives the reset, as cudart expects. */
	CK(cuDevicePrimaryCtxRetain(&again, 0));
	CHECK(again == ctx, "handle changed across reset");
	CK(cuCtxSetCurrent(again));
	CHECK(dtor_calls == 1, "destructor ran %d times", dtor_calls);
	printf("context-local storage destructors ok\n");
}

static void hooks(void)
{
	const void *const *t = table(&id_hooks);
	void *p1 = NULL, *p2 = NULL, *again = NULL;
	size_t s1 = 0, s2 = 0, i, nonzero = 0;

	((buf_fn)t[2])(&p1, &s1);
	((buf_fn)t[6])(&p2, &s2);
	((buf_fn)t[2])(&again, &s1);
	CHECK(p1 && p2 && p1 != p2 && again == p1, "hook buffers %p %p %p", p1, p2, again);
	CHECK(s1 == 1024 && s2 == 14, "hook buffer sizes %zu %zu", s1, s2);
	for (i = 0; p1 && i < 4096; i++)	/* 4 KiB backing, writable */
		nonzero += ((volatile unsigned char *)p1)[i] != 0;
	CHECK(nonzero == 0, "hook buffer not zeroed");
	if (p1)
		memset(p1, 0, 4096);
	printf("hook buffers ok\n");
}

/* The integrity answer, recomputed from what the driver API reports. */
static const uint8_t key_bytes[16] = {
	0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
	0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f,
};

static void expected_integrity(unsigned int version, uint64_t secs, uint8_t out[16])
{
	const void *const *rt = table(&id_cudart), *const *ic = table(&id_integrity);
	struct {
		uint32_t drv, version, pid, thread;
		const void *rt, *ic, *fn;
		uint64_t secs;
	} rec;
	struct hmac_md2_ctx h;
	int drv = 0, n = 0, i;

	CK(cuDriverGetVersion(&drv));
	CK(cuDeviceGetCount(&n));
	memset(&rec, 0, sizeof(rec));
	rec.drv = (uint32_t)drv;
	rec.version = version;
	rec.pid = (uint32_t)getpid();
	rec.thread = (uint32_t)pthread_self();
	rec.rt = rt;
	rec.ic = ic;
	rec.fn = ic[1];
	rec.secs = secs;
	hmac_md2_init(&h, key_bytes, sizeof(key_bytes));
	hmac_md2_update(&h, &rec, sizeof(rec));
	for (i = 0; i < n; i++) {
		struct {
			CUuuid uuid;
			int32_t domain, bus, device;
		} d;

		CK(cuDeviceGetUuid_v2(&d.uuid, i));
		CK(cuDeviceGetAttribute(&d.domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, i));
		CK(cuDeviceGetAttribute(&d.bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, i));
		CK(cuDeviceGetAttribute(&d.device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, i));
		hmac_md2_update(&h, &d, 28);
	}
	hmac_md2_final(&h, out);
}

static void integrity(void)
{
	integrity_fn fn = (integrity_fn)table(&id_integrity)[1];
	uint64_t out[2] = { 0 }, out2[2] = { 0 };
	uint8_t want[16];
	unsigned int v;

	CK(fn(13000, 1795949484, out));
	CHECK(out[0] == 0x3341181C03CB675CULL && out[1] == 0x8ED383AA1F4CD1E8ULL,
	      "version 13000: %016llx %016llx", (unsigned long long)out[0],
	      (unsigned long long)out[1]);
	CK(fn(12091, 1, out));
	CHECK(out[0] == 0x1841181C03CB675CULL && out[1] == 0x8ED383AA1F4CD1E8ULL,
	      "version 12091: %016llx %016llx", (unsigned long long)out[0],
	      (unsigned long long)out[1]);
	for (v = 13002; v <= 13009; v++) {
		CK(fn(v, 1795949484, out));
		expected_integrity(v, 1795949484, want);
		CHECK(memcmp(out, want, 16) == 0, "version %u: digest differs", v);
	}
	CK(fn(13002, 1795949485, out2));
	CK(fn(13002, 1795949484, out));
	CHECK(memcmp(out, out2, 16) != 0, "the time does not enter the digest");
	CK_IS(CUDA_ERROR_INVALID_VALUE, fn(13002, 1, NULL));
	printf("integrity check ok\n");
}

static void modules_from_fatbin(void)
{
	const void *const *rt = table(&id_cudart);
	struct fatbin_wrapper w = { 0x466243B1U, 1, fatbin, NULL };
	CUmodule m1 = NULL, m2 = NULL, m3 = NULL;
	CUfunction f;
	int dummy;

	CK(((get_module_fn)rt[1])(&m1, &w));
	CK(cuModuleGetFunction(&f, m1, "fill"));
	check_fill(f, "CUDART_INTERFACE[1] module");
	CK(((module_ext1_fn)rt[6])(&m2, &w, NULL, NULL, 0));
	CK(cuModuleGetFunction(&f, m2, "fill"));
	check_fill(f, "CUDART_INTERFACE[6] module");
	CK(((module_ext2_fn)rt[8])(fatbin, &m3, NULL, NULL, 0));
	CK(cuModuleGetFunction(&f, m3, "fill"));
	check_fill(f, "CUDART_INTERFACE[8] module");
	CK_IS(CUDA_ERROR_NOT_SUPPORTED, ((module_ext1_fn)rt[6])(&m2, &w, &dummy, NULL, 0));
	CK(cuModuleUnload(m1));
	CK(cuModuleUnload(m2));
	CK(cuModuleUnload(m3));
	printf("fatbin loads through CUDART_INTERFACE ok\n");
}

static void libraries(void)
{
	CUlibraryOption opt = CU_LIBRARY_BINARY_IS_PRESERVED;
	void *optval = (void *)(uintptr_t)1;
	CUlibrary lib = NULL, lib2 = NULL, other = NULL;
	CUkernel k = NULL, k2 = NULL;
	CUfunction f = NULL;
	CUmodule mod = NULL;
	CUdeviceptr g = 0;
	const char *name = NULL;
	size_t bytes = 0;
	int v = 0;

	CK(cuLibraryLoadData(&lib, fatbin, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&k, lib, "fill"));
	CK(cuLibraryGetKernel(&k2, lib, "fill"));
	CHECK(k == k2, "two handles for one kernel");
	CK(cuKernelGetFunction(&f, k));
	check_fill(f, "cuKernelGetFunction");
	check_fill((CUfunction)k, "CUkernel launched as a function");
	CK(cuKernelGetName(&name, k));
	CHECK(name && !strcmp(name, "fill"), "kernel name %s", name ? name : "(null)");
	CK(cuKernelGetLibrary(&other, k));
	CHECK(other == lib, "kernel's library");
	CK(cuKernelGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k, 0));
	CHECK(v > 0, "max threads per block %d", v);
	CK(cuLibraryGetModule(&mod, lib));
	CK(cuModuleGetFunction(&f, mod, "fill"));
	CK(cuLibraryGetGlobal(&g, &bytes, lib, "g_table"));
	CHECK(g && bytes == 16, "g_table at %llx, %zu bytes", (unsigned long long)g, bytes);
	CK_IS(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k2, lib, "no_such_kernel"));
	CK(cuLibraryLoadData(&lib2, fatbin, NULL, NULL, 0, &opt, &optval, 1));
	CK(cuLibraryGetKernel(&k2, lib2, "_Z9vectorAddPKfS0_Pfi"));
	CK(cuLibraryUnload(lib2));
	CK(cuLibraryUnload(lib));
	CK_IS(CUDA_ERROR_INVALID_HANDLE, cuLibraryUnload(lib));
	CK_IS(CUDA_ERROR_INVALID_HANDLE, cuKernelGetFunction(&f, k));
	printf("libraries and kernels ok\n");
}

static void odds_and_ends(void)
{
	CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	unsigned long long id1 = 0, id2 = 0;
	CUcontext prim = NULL, other = NULL;
	unsigned int hflags = 7;
	CUlibrary lib = NULL;
	CUfunction f = NULL;
	CUkernel k = NULL;
	void *host = NULL;
	char buf[256];
	CUstream s = NULL;
	int blocks = -1, grid = 0, block = 0;
	size_t lim = 0;

	CK(cuStreamCreate(&s, 0));
	CK(cuStreamIsCapturing(s, &cs));
	CHECK(cs == CU_STREAM_CAPTURE_STATUS_NONE, "capture status %d", cs);
	cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	CK(cuStreamGetCaptureInfo_v3(NULL, &cs, NULL, NULL, NULL, NULL, NULL));
	CHECK(cs == CU_STREAM_CAPTURE_STATUS_NONE, "capture status %d", cs);
	CK(cuThreadExchangeStreamCaptureMode(&mode));
	CHECK(mode == CU_STREAM_CAPTURE_MODE_GLOBAL, "initial capture mode %d", mode);
	CK(cuThreadExchangeStreamCaptureMode(&mode));
	CHECK(mode == CU_STREAM_CAPTURE_MODE_RELAXED, "capture mode read back %d", mode);
	CK(cuStreamDestroy_v2(s));

	CK(cuCtxGetCurrent(&prim));
	CK(cuCtxGetId(prim, &id1));
	CK(cuCtxCreate_v2(&other, 0, 0));
	CK(cuCtxGetId(NULL, &id2));
	CHECK(id1 != id2, "two contexts, one id %llu", id1);
	CK(cuCtxDestroy_v2(other));
	CK(cuCtxSetCurrent(prim));

	CK(cuCtxGetLimit(&lim, CU_LIMIT_STACK_SIZE));
	CHECK(lim == 1024, "stack limit %zu", lim);
	CK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, lim));
	/* The driver rounds a stack up to 16 bytes. */
	CK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 2049));
	CK(cuCtxGetLimit(&lim, CU_LIMIT_STACK_SIZE));
	CHECK(lim == 2064, "stack limit set to 2049 reads %zu", lim);
	CK(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 1024));
	CK(cuCtxGetLimit(&lim, CU_LIMIT_MALLOC_HEAP_SIZE));
	CHECK(lim == 8 << 20, "heap limit %zu", lim);
	CK(cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, 64 << 20));
	CK(cuCtxGetLimit(&lim, CU_LIMIT_MALLOC_HEAP_SIZE));
	CHECK(lim == 64 << 20, "heap limit set to 64 MiB reads %zu", lim);
	/* The daemon's driver's value for a new context (the sim's: 1 MiB). */
	CK(cuCtxGetLimit(&lim, CU_LIMIT_PRINTF_FIFO_SIZE));
	CHECK(lim == 1 << 20, "printf FIFO %zu", lim);
	CK_IS(CUDA_ERROR_UNSUPPORTED_LIMIT, cuCtxGetLimit(&lim, CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH));
	CK(cuCtxGetLimit(&lim, CU_LIMIT_CIG_ENABLED));
	CHECK(lim == 0, "CIG enabled %zu", lim);
	CK_IS(CUDA_ERROR_NOT_SUPPORTED, cuCtxGetLimit(&lim, CU_LIMIT_MAX_L2_FETCH_GRANULARITY));
	CK(cuCtxSetLimit(CU_LIMIT_MAX_L2_FETCH_GRANULARITY, 32));
	CK(cuCtxGetLimit(&lim, CU_LIMIT_MAX_L2_FETCH_GRANULARITY));
	CHECK(lim == 32, "L2 fetch granularity read back %zu", lim);
	CK_IS(CUDA_ERROR_INVALID_VALUE, cuCtxGetLimit(&lim, CU_LIMIT_MAX));
	CK(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_L1));

	CK(cuLibraryLoadData(&lib, fatbin, NULL, NULL, 0, NULL, NULL, 0));
	CK(cuLibraryGetKernel(&k, lib, "fill"));
	CK(cuKernelGetFunction(&f, k));
	CK(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_SHARED));
	CK(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f, 256, 0));
	CHECK(blocks > 0 && blocks <= 32, "occupancy %d blocks of 256", blocks);
	CK(cuOccupancyMaxPotentialBlockSize(&grid, &block, f, NULL, 0, 0));
	CHECK(grid > 0 && block > 0 && block <= 1024, "suggested %d x %d", grid, block);
	CK(cuLibraryUnload(lib));

	CK(cuMemHostAlloc(&host, 8192, CU_MEMHOSTALLOC_PORTABLE));
	CK(cuMemHostGetFlags(&hflags, (char *)host + 100));
	CHECK(hflags == CU_MEMHOSTALLOC_PORTABLE, "host flags %u", hflags);
	CK(cuMemFreeHost(host));
	CK_IS(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(buf));
	/* Mapped pinned memory: the device reaches it through its pointer. */
	CK(cuMemHostAlloc(&host, 64, CU_MEMHOSTALLOC_DEVICEMAP));
	{
		CUdeviceptr dp = 0;

		CK(cuMemHostGetDevicePointer_v2(&dp, host, 0));
		CHECK(dp != 0, "device pointer of mapped pinned memory is 0");
	}
	CK(cuMemFreeHost(host));
	CK(cuMemHostRegister_v2(buf, sizeof(buf), 0));
	CK_IS(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, cuMemHostRegister_v2(buf + 8, 8, 0));
	CK(cuMemHostUnregister(buf));
	CK_IS(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf));
	printf("capture, context id, limits, occupancy (%d blocks), host memory ok\n", blocks);
}

int main(int argc, char **argv)
{
	CUcontext ctx;

	if (argc != 2) {
		fprintf(stderr, "usage: drv-tables KERNELS.fatbin\n");
		return 2;
	}
	fatbin = read_file(argv[1]);
	before_init();
	CK(cuInit(0));
	sizes();
	primary_and_storage();
	hooks();
	integrity();
	modules_from_fatbin();
	libraries();
	storage_destructors();
	odds_and_ends();
	CK(cuCtxGetCurrent(&ctx));
	CK(cuDevicePrimaryCtxRelease_v2(0));
	free(fatbin);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
