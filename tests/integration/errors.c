// SPDX-License-Identifier: MIT
/*
 * errors - error semantics of the driver API through axon.
 *
 * Every check runs (a failure does not stop the rest) and prints one line;
 * the exit status is 1 if any failed. Asynchronous errors are accepted
 * where CUDA reports them: from the call itself or from the next
 * synchronising call (then exactly once: the synchronisation after that
 * must succeed).
 *
 *   - cuGetErrorName / cuGetErrorString, known and unknown codes
 *   - calls before cuInit; bad devices and attributes; no current context
 *   - freed memory, never-allocated addresses, lengths past the end of an
 *     allocation (and nothing written by a refused copy), interior frees,
 *     double frees, zero and impossible allocation sizes
 *   - bad images, missing functions, bad launch geometry, a kernel not in
 *     the sim's built-in set (CUDA_ERROR_NOT_SUPPORTED at launch or at the
 *     next synchronisation, not sticky: the context still works after)
 *   - with --sticky KIND (one per process): a kernel that faults (reaches
 *     past its buffers, writes freed memory, misaligned pointer) reports
 *     CUDA_ERROR_ILLEGAL_ADDRESS / MISALIGNED_ADDRESS, and every later call
 *     keeps reporting it, as CUDA's sticky errors do
 *   - bad stream/event flags, elapsed time of unrecorded or non-timing
 *     events, a destroyed stream, a destroyed context
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuclient.h"

static int failures, checks;

static void result(bool ok, const char *what, CUresult got, const char *want)
{
	checks++;
	if (ok) {
		printf("  ok    %-58s %s\n", what, cu_name(got));
	} else {
		failures++;
		printf("  FAIL  %-58s got %s (%d), expected %s\n", what, cu_name(got),
		       (int)got, want);
	}
}

#define EXP(call, want)							\
	do {								\
		CUresult r_ = (call);					\
		result(r_ == (want), #call, r_, cu_name(want));		\
	} while (0)

#define EXP2(call, want1, want2)					\
	do {								\
		CUresult r_ = (call);					\
		result(r_ == (want1) || r_ == (want2), #call, r_,	\
		       #want1 " or " #want2);				\
	} while (0)

/*
 * An asynchronous error: r from the call, else from the next
 * synchronisation (sync); then one more synchronisation must succeed.
 */
static void exp_async(const char *what, CUresult r, CUresult want, CUresult (*sync)(void *),
		      void *arg)
{
	CUresult s = CUDA_SUCCESS, again;
	char label[160];

	if (r == CUDA_SUCCESS) {
		s = sync(arg);
		snprintf(label, sizeof(label), "%s (at sync)", what);
		result(s == want, label, s, cu_name(want));
	} else {
		snprintf(label, sizeof(label), "%s", what);
		result(r == want, label, r, cu_name(want));
	}
	again = sync(arg);
	snprintf(label, sizeof(label), "  ... reported once: next sync after %s", what);
	result(again == CUDA_SUCCESS, label, again, "CUDA_SUCCESS");
}

static CUresult ctx_sync(void *arg)
{
	(void)arg;
	return cuCtxSynchronize();
}

static CUresult stream_sync(void *arg)
{
	return cuStreamSynchronize((CUstream)arg);
}

static void section(const char *name)
{
	printf("%s\n", name);
}

static void error_names(void)
{
	static const struct { CUresult r; const char *name; } known[] = {
		{ CUDA_SUCCESS, "CUDA_SUCCESS" },
		{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE" },
		{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED" },
		{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT" },
		{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE" },
		{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE" },
		{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND" },
		{ CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY" },
		{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED" },
		{ CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN" },
	};
	const char *s;
	size_t i;

	section("error names and strings");
	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		char label[128];
		CUresult r;

		s = NULL;
		r = cuGetErrorName(known[i].r, &s);
		snprintf(label, sizeof(label), "cuGetErrorName(%d) == \"%s\"", (int)known[i].r,
			 known[i].name);
		result(r == CUDA_SUCCESS && s && !strcmp(s, known[i].name), label, r,
		       known[i].name);
		s = NULL;
		r = cuGetErrorString(known[i].r, &s);
		snprintf(label, sizeof(label), "cuGetErrorString(%s) non-empty", known[i].name);
		result(r == CUDA_SUCCESS && s && *s, label, r, "a description");
	}
	s = "untouched";
	EXP(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
	result(s == NULL, "  ... and sets *pStr to NULL for an unknown code", CUDA_SUCCESS,
	       "NULL");
	s = "untouched";
	EXP(cuGetErrorString((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
	result(s == NULL, "  ... and sets *pStr to NULL for an unknown code", CUDA_SUCCESS,
	       "NULL");
	EXP(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, NULL), CUDA_ERROR_INVALID_VALUE);
}

static void before_init(void)
{
	CUdeviceptr p = 0;
	CUdevice d;
	int n;

	section("before cuInit");
	EXP(cuDeviceGet(&d, 0), CUDA_ERROR_NOT_INITIALIZED);
	EXP(cuDeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
	EXP(cuMemAlloc(&p, 16), CUDA_ERROR_NOT_INITIALIZED);
	EXP(cuInit(1), CUDA_ERROR_INVALID_VALUE);	/* flags must be 0 */
}

static void devices(void)
{
	CUdeviceptr p = 0;
	CUdevice d;
	int v, n = 0;

	section("devices, no current context");
	cuDeviceGetCount(&n);
	EXP(cuDeviceGet(&d, n), CUDA_ERROR_INVALID_DEVICE);
	EXP(cuDeviceGet(&d, -1), CUDA_ERROR_INVALID_DEVICE);
	EXP(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, n + 5),
	    CUDA_ERROR_INVALID_DEVICE);
	EXP(cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, 0), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
	EXP(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
}

static void memory(void)
{
	unsigned char h[8192], back[8192], pat[4096];
	CUdeviceptr p = 0, q = 0, q2 = 0, huge = 0, zero = 0;
	CUstream s;
	size_t i;

	section("memory: freed, never allocated, out of range");
	for (i = 0; i < sizeof(pat); i++)
		pat[i] = (unsigned char)(i * 7 + 1);
	memset(h, 0xee, sizeof(h));

	EXP(cuMemAlloc(&zero, 0), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemAlloc(&huge, 1ULL << 50), CUDA_ERROR_OUT_OF_MEMORY);

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuMemAlloc(&p, 4096));
	CK(cuMemFree(p));
	EXP(cuMemcpyHtoD(p, h, 16), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemcpyDtoH(back, p, 16), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemsetD8(p, 0, 16), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemFree(p), CUDA_ERROR_INVALID_VALUE);		/* double free */
	exp_async("cuMemcpyHtoDAsync(freed, h, 16, s)",
		  cuMemcpyHtoDAsync(p, h, 16, s), CUDA_ERROR_INVALID_VALUE, stream_sync, s);

	EXP(cuMemcpyHtoD((CUdeviceptr)0, h, 16), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemcpyHtoD((CUdeviceptr)0xdeadbeef000ULL, h, 16), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemcpyDtoH(back, (CUdeviceptr)0x7fff00001000ULL, 16), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemFree((CUdeviceptr)0xdeadbeef000ULL), CUDA_ERROR_INVALID_VALUE);

	CK(cuMemAlloc(&q, 4096));
	CK(cuMemAlloc(&q2, 8192));
	CK(cuMemcpyHtoD(q, pat, sizeof(pat)));
	EXP(cuMemcpyHtoD(q, h, 4097), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemcpyHtoD(q + 4000, h, 200), CUDA_ERROR_INVALID_VALUE);
	/* (q + 4096 itself may be the next allocation: not checked.) */
	EXP(cuMemcpyDtoH(back, q + 4095, 2), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemcpyDtoH(back, q, (size_t)1 << 40), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemcpyDtoD(q, q2, 8192), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemcpyDtoD(q2 + 4096, q, 4097), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemsetD32(q, 0, 1025), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemsetD16(q + 4094, 0, 2), CUDA_ERROR_INVALID_VALUE);
	EXP(cuMemFree(q + 16), CUDA_ERROR_INVALID_VALUE);	/* interior */
	exp_async("cuMemcpyDtoHAsync(back, q + 4000, 200, s)",
		  cuMemcpyDtoHAsync(back, q + 4000, 200, s), CUDA_ERROR_INVALID_VALUE,
		  stream_sync, s);
	exp_async("cuMemsetD8Async(q, 1, 5000, s)", cuMemsetD8Async(q, 1, 5000, s),
		  CUDA_ERROR_INVALID_VALUE, stream_sync, s);
	/* None of the refused operations wrote anything. */
	memset(back, 0, sizeof(back));
	CK(cuMemcpyDtoH(back, q, sizeof(pat)));
	result(!memcmp(back, pat, sizeof(pat)), "refused copies/memsets left q untouched",
	       CUDA_SUCCESS, "the pattern");
	/* In range still works. */
	EXP(cuMemcpyHtoD(q + 4095, h, 1), CUDA_SUCCESS);
	EXP(cuMemcpyDtoD(q2 + 4096, q, 4096), CUDA_SUCCESS);
	CK(cuMemFree(q));
	CK(cuMemFree(q2));
	CK(cuStreamDestroy(s));
}

static void modules(void *image)
{
	static const char garbage[] = "this is not a CUDA module, just some text\n";
	CUdeviceptr a = 0, b = 0, c = 0;
	CUfunction vadd, touch, f;
	CUmodule mod, bad = NULL;
	CUstream s;
	int n = 1024;
	float hc[4];

	section("modules and launches");
	EXP2(cuModuleLoadData(&bad, garbage), CUDA_ERROR_INVALID_IMAGE, CUDA_ERROR_INVALID_PTX);
	EXP(cuModuleLoadData(&bad, NULL), CUDA_ERROR_INVALID_VALUE);
	CK(cuModuleLoadData(&mod, image));
	EXP(cuModuleGetFunction(&f, mod, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
	CK(cuModuleGetFunction(&vadd, mod, K_VECTOR_ADD));
	CK(cuMemAlloc(&a, 1024 * sizeof(float)));
	CK(cuMemAlloc(&b, 1024 * sizeof(float)));
	CK(cuMemAlloc(&c, 1024 * sizeof(float)));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

	{
		void *params[] = { &a, &b, &c, &n };

		exp_async("cuLaunchKernel(vectorAdd, block 2048)",
			  cuLaunchKernel(vadd, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL),
			  CUDA_ERROR_INVALID_VALUE, ctx_sync, NULL);
		exp_async("cuLaunchKernel(vectorAdd, grid 0)",
			  cuLaunchKernel(vadd, 0, 1, 1, 256, 1, 1, 0, NULL, params, NULL),
			  CUDA_ERROR_INVALID_VALUE, ctx_sync, NULL);
	}
	/* A kernel the sim does not have: fails at launch or at the sync. */
	CK(cuModuleGetFunction(&touch, mod, K_NOT_BUILTIN));
	{
		void *params[] = { &c };

		exp_async("cuLaunchKernel(g_touch: not in the sim's set)",
			  cuLaunchKernel(touch, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL),
			  CUDA_ERROR_NOT_SUPPORTED, ctx_sync, NULL);
		exp_async("cuLaunchKernel(g_touch) on a stream",
			  cuLaunchKernel(touch, 1, 1, 1, 32, 1, 1, 0, s, params, NULL),
			  CUDA_ERROR_NOT_SUPPORTED, stream_sync, s);
	}
	/* The context still works: a real launch. */
	{
		float ha[4] = { 1, 2, 3, 4 }, hb[4] = { 10, 20, 30, 40 };
		int four = 4;
		void *params[] = { &a, &b, &c, &four };

		CK(cuMemcpyHtoD(a, ha, sizeof(ha)));
		CK(cuMemcpyHtoD(b, hb, sizeof(hb)));
		EXP(cuLaunchKernel(vadd, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL), CUDA_SUCCESS);
		EXP(cuMemcpyDtoH(hc, c, sizeof(hc)), CUDA_SUCCESS);
		result(hc[0] == 11 && hc[1] == 22 && hc[2] == 33 && hc[3] == 44,
		       "vectorAdd after the errors computes 11 22 33 44", CUDA_SUCCESS,
		       "11 22 33 44");
	}
	CK(cuStreamDestroy(s));
	CK(cuMemFree(a));
	CK(cuMemFree(b));
	CK(cuMemFree(c));
	CK(cuModuleUnload(mod));
}

static void streams_events(void)
{
	CUevent e1, e2, nt1, nt2, bad;
	CUstream s, gone;
	CUdeviceptr p;
	unsigned char h[16] = { 0 };
	float ms;

	section("streams and events");
	EXP(cuStreamCreate(&s, 0x80), CUDA_ERROR_INVALID_VALUE);
	EXP(cuEventCreate(&bad, 0x80), CUDA_ERROR_INVALID_VALUE);
	CK(cuStreamCreate(&s, CU_STREAM_DEFAULT));
	CK(cuEventCreate(&e1, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&e2, CU_EVENT_DEFAULT));
	CK(cuEventCreate(&nt1, CU_EVENT_DISABLE_TIMING));
	CK(cuEventCreate(&nt2, CU_EVENT_DISABLE_TIMING));
	EXP(cuEventElapsedTime(&ms, e1, e2), CUDA_ERROR_INVALID_HANDLE);	/* unrecorded */
	CK(cuEventRecord(nt1, s));
	CK(cuEventRecord(nt2, s));
	CK(cuEventRecord(e1, s));
	CK(cuEventRecord(e2, s));
	CK(cuStreamSynchronize(s));
	EXP(cuEventElapsedTime(&ms, nt1, nt2), CUDA_ERROR_INVALID_HANDLE);
	EXP(cuEventElapsedTime(&ms, e1, e2), CUDA_SUCCESS);

	/* A destroyed stream. */
	CK(cuMemAlloc(&p, 16));
	CK(cuStreamCreate(&gone, CU_STREAM_NON_BLOCKING));
	CK(cuStreamDestroy(gone));
	exp_async("cuMemcpyHtoDAsync on a destroyed stream",
		  cuMemcpyHtoDAsync(p, h, sizeof(h), gone), CUDA_ERROR_INVALID_HANDLE,
		  ctx_sync, NULL);
	CK(cuMemFree(p));
	/* Pageable and larger than the chunks the shim keeps staged at
	 * once: the copy waits for its own earlier chunks, which the daemon
	 * refuses (it once waited for them forever). */
	{
		const size_t big = 32u << 20;
		void *hb = calloc(1, big);

		if (!hb) {
			result(false, "calloc(32 MiB)", CUDA_ERROR_OUT_OF_MEMORY, "memory");
		} else {
			CK(cuMemAlloc(&p, big));
			exp_async("cuMemcpyHtoDAsync of 32 MiB on a destroyed stream",
				  cuMemcpyHtoDAsync(p, hb, big, gone),
				  CUDA_ERROR_INVALID_HANDLE, ctx_sync, NULL);
			CK(cuMemFree(p));
			free(hb);
		}
	}
	CK(cuEventDestroy(e1));
	CK(cuEventDestroy(e2));
	CK(cuEventDestroy(nt1));
	CK(cuEventDestroy(nt2));
	CK(cuStreamDestroy(s));
}

/*
 * A kernel that faults poisons the process, as on CUDA: the fault is
 * reported by the launch or the next synchronisation, and then by every
 * later call (sticky). One scenario per process:
 *   past-end    vectorAdd with n beyond its buffers
 *   freed       vectorAdd writing to a freed buffer
 *   misaligned  vectorAdd on a pointer that is not float-aligned
 */
static int sticky(const char *kind, void *image)
{
	CUdeviceptr a, b, c, freed, bad;
	CUcontext ctx;
	CUdevice dev;
	CUmodule mod;
	CUfunction vadd;
	CUresult want = CUDA_ERROR_ILLEGAL_ADDRESS, r;
	unsigned char h[16] = { 0 };
	int n = 1024;
	char label[128];

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&vadd, mod, K_VECTOR_ADD));
	CK(cuMemAlloc(&a, 1024 * sizeof(float)));
	CK(cuMemAlloc(&b, 1024 * sizeof(float)));
	CK(cuMemAlloc(&c, 1024 * sizeof(float)));
	CK(cuMemAlloc(&freed, 1024 * sizeof(float)));
	CK(cuMemFree(freed));
	bad = c;
	if (!strcmp(kind, "past-end")) {
		n = 4096;
	} else if (!strcmp(kind, "freed")) {
		bad = freed;
	} else if (!strcmp(kind, "misaligned")) {
		bad = c + 2;
		n = 16;
		want = CUDA_ERROR_MISALIGNED_ADDRESS;
	} else {
		cu_fail("unknown --sticky scenario '%s'", kind);
	}
	section("sticky device fault");
	{
		void *params[] = { &a, &b, &bad, &n };

		r = cuLaunchKernel(vadd, cu_blocks((size_t)n), 1, 1, 256, 1, 1, 0, NULL, params,
				   NULL);
		snprintf(label, sizeof(label), "vectorAdd (%s): at launch or sync", kind);
		if (r == CUDA_SUCCESS)
			r = cuCtxSynchronize();
		result(r == want, label, r, cu_name(want));
	}
	EXP(cuCtxSynchronize(), want);
	EXP(cuCtxSynchronize(), want);
	EXP(cuMemcpyHtoD(a, h, sizeof(h)), want);
	/* Tearing down is allowed to report it too. */
	EXP2(cuCtxDestroy(ctx), CUDA_SUCCESS, want);
	printf("errors --sticky %s: %d checks, %d failed\n", kind, checks, failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	CUcontext ctx, other;
	CUdevice dev;
	void *image;

	cu_prog = "errors";
	image = cu_load_kernels("cubin", NULL);
	if (argc == 3 && !strcmp(argv[1], "--sticky")) {
		int rc = sticky(argv[2], image);

		free(image);
		return rc;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: errors [--sticky past-end|freed|misaligned]\n");
		return 2;
	}

	error_names();
	before_init();
	CK(cuInit(0));
	devices();
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	memory();
	modules(image);
	streams_events();

	section("contexts");
	CK(cuCtxCreate(&other, NULL, 0, dev));
	CK(cuCtxDestroy(other));
	EXP2(cuCtxDestroy(other), CUDA_ERROR_INVALID_CONTEXT, CUDA_ERROR_CONTEXT_IS_DESTROYED);
	CK(cuCtxSetCurrent(ctx));
	EXP(cuCtxSynchronize(), CUDA_SUCCESS);
	CK(cuCtxDestroy(ctx));
	free(image);

	printf("errors: %d checks, %d failed\n", checks, failures);
	if (failures) {
		fprintf(stderr, "errors: %d of %d checks FAILED\n", failures, checks);
		return 1;
	}
	printf("errors: PASSED\n");
	return 0;
}
