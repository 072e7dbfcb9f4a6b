// SPDX-License-Identifier: MIT
/*
 * blasbench: cuBLAS SGEMM through the CUDA runtime, the same binary natively
 * and through axon (issue 4's "cuBLAS SGEMM throughput" row). Built by nvcc
 * with shared cudart and libcublas (bench/gpu/gpu.mk); cudart dlopens
 * libcuda.so.1, so LD_LIBRARY_PATH decides whether NVIDIA's driver or axon's
 * shim serves it. bench/gpu/run.sh runs it both ways.
 *
 *   blasbench [--quick]
 *
 * Rows (same format as drvbench: `name value unit`, `name.p99`, `name.mean`,
 * `name n/a unit # reason`; everything else starts with '#'):
 *
 *   cublas_create      ms      cublasCreate (the context exists already)
 *   sgemm_first        ms      the first cublasSgemm (1024^3) + sync: loads
 *                              cuBLAS's kernels
 *   sgemm_{1024,4096,8192}  TFLOP/s  square C = A * B, FP32, default math
 *                              mode; a sample is CUDA events around k SGEMMs
 *                              issued back to back on one stream (k = 64, 4,
 *                              1), so the host side of issuing them is inside
 *                              the window just as the GPU sees it; value at
 *                              the p50 sample, p99 column the rate of the
 *                              p99 (slow) sample
 *   sgemm_64_rate      call/s  64x64x64 SGEMMs, 1000 back to back then one
 *                              cudaStreamSynchronize, wall clock: launch-bound
 *   sgemm_64_sync      us      one 64^3 SGEMM + cudaStreamSynchronize, wall
 *
 * Every size's result is checked at 16 sampled elements against a double
 * precision host reference; a wrong answer makes the row n/a, so a fast
 * wrong answer never shows as a figure.
 */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "rowformat.h"

static int quick;
static std::set<std::string> printed;	/* rows with a line out, figure or n/a */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- rows (drvbench's format) --------------------------------------------- */

static void put(const char *name, const char *unit, double v, double p99, double mean,
		const char *note)
{
	printed.insert(name);
	if (note && *note)
		printf("# %s: %s\n", name, note);
	row_print(name, unit, v, p99, mean);
	fflush(stdout);
}

static void put_na(const char *name, const char *unit, const char *f, ...)
	__attribute__((format(printf, 3, 4)));

static void put_na(const char *name, const char *unit, const char *f, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, f);
	vsnprintf(why, sizeof(why), f, ap);
	va_end(ap);
	printed.insert(name);
	printf("%s n/a %s # %s\n", name, unit, why);
	fflush(stdout);
}

/* p50/p99 by nearest rank, as bench.h does; sorts v. */
struct summary {
	double p50, p99, mean;
};

static struct summary summarize(std::vector<double> &v)
{
	struct summary s = { NAN, NAN, NAN };
	double sum = 0;
	size_t n = v.size();

	if (!n)
		return s;
	std::sort(v.begin(), v.end());
	for (double x : v)
		sum += x;
	s.p50 = v[(n - 1) / 2];
	s.p99 = v[(n * 99 + 99) / 100 - 1];
	s.mean = sum / (double)n;
	return s;
}

/* Leave the group with the row n/a on a runtime or cuBLAS error. */
#define CK(row, unit, call)						\
	do {								\
		cudaError_t e_ = (call);				\
		if (e_ != cudaSuccess) {				\
			put_na(row, unit, "%s: %s", #call, cudaGetErrorName(e_)); \
			return false;					\
		}							\
	} while (0)

#define CB(row, unit, call)						\
	do {								\
		cublasStatus_t s_ = (call);				\
		if (s_ != CUBLAS_STATUS_SUCCESS) {			\
			put_na(row, unit, "%s: %s", #call, cublasGetStatusName(s_)); \
			return false;					\
		}							\
	} while (0)

/* ---- state ----------------------------------------------------------------- */

static const int maxn = 8192;
static cublasHandle_t h;
static cudaStream_t st;
static float *dA, *dB, *dC;
static std::vector<float> hA, hB;

/* Deterministic values in [-1, 1) (a 64-bit LCG), so every run and both
 * sides multiply the same matrices. */
static void fill(std::vector<float> &v, uint64_t seed)
{
	uint64_t x = seed;

	for (float &f : v) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		f = (float)((double)(x >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
	}
}

static cublasStatus_t sgemm(int n)
{
	const float one = 1.0f, zero = 0.0f;

	/* Column-major, leading dimension n: the first n*n elements of each
	 * buffer are the n x n operands. */
	return cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dB, n, &zero,
			   dC, n);
}

/* 16 sampled elements of C (n x n) against a double-precision reference;
 * false (row n/a) on a mismatch or a failed copy. */
static bool check(const char *row, const char *unit, int n)
{
	unsigned int k;

	CK(row, unit, cudaStreamSynchronize(st));
	for (k = 0; k < 16; k++) {
		int i = (int)((k * 7919u + 13u) % (unsigned int)n);
		int j = (int)((k * 104729u + 5u) % (unsigned int)n);
		double ref = 0, mag = 0;
		float got;
		int l;

		CK(row, unit, cudaMemcpy(&got, dC + (size_t)j * n + i, sizeof(got),
					 cudaMemcpyDeviceToHost));
		for (l = 0; l < n; l++) {
			double p = (double)hA[(size_t)l * n + i] * (double)hB[(size_t)j * n + l];

			ref += p;
			mag += fabs(p);
		}
		/* Loose enough for FP32 (or TF32) accumulation in any order,
		 * far too tight for a wrong answer (|ref| is ~sqrt(n)/3). */
		if (!(fabs((double)got - ref) <= 1e-4 * mag + 1e-6)) {
			put_na(row, unit, "wrong result: C[%d,%d] = %.7g, reference %.7g", i, j,
			       (double)got, ref);
			return false;
		}
	}
	return true;
}

/* ---- groups --------------------------------------------------------------- */

/* An event destroyed on every way out of the scope. */
struct event {
	cudaEvent_t e = nullptr;
	~event()
	{
		if (e)
			cudaEventDestroy(e);
	}
};

static bool bench_size(int n, int k, int samples)
{
	char row[32], note[160];
	const double flop = 2.0 * n * n * (double)n * k;
	std::vector<double> t;
	struct event ev0, ev1;
	int i, j;

	snprintf(row, sizeof(row), "sgemm_%d", n);
	CK(row, "TFLOP/s", cudaEventCreate(&ev0.e));
	CK(row, "TFLOP/s", cudaEventCreate(&ev1.e));
	cudaEvent_t e0 = ev0.e, e1 = ev1.e;
	for (i = 0; i < samples + 2; i++) {	/* 2 warm-up samples */
		float ms = 0;

		CK(row, "TFLOP/s", cudaEventRecord(e0, st));
		for (j = 0; j < k; j++)
			CB(row, "TFLOP/s", sgemm(n));
		CK(row, "TFLOP/s", cudaEventRecord(e1, st));
		CK(row, "TFLOP/s", cudaEventSynchronize(e1));
		CK(row, "TFLOP/s", cudaEventElapsedTime(&ms, e0, e1));
		if (i >= 2)
			t.push_back((double)ms);
	}
	if (!check(row, "TFLOP/s", n))
		return false;
	struct summary s = summarize(t);
	snprintf(note, sizeof(note),
		 "%dx%dx%d FP32, %d SGEMMs per CUDA-event window, %d windows after 2 warm-up; "
		 "window p50 %.3f ms", n, n, n, k, samples, s.p50);
	put(row, "TFLOP/s", flop / (s.p50 * 1e9), flop / (s.p99 * 1e9), flop / (s.mean * 1e9),
	    note);
	return true;
}

static bool bench_small(void)
{
	const int n = 64, calls = 1000, samples = quick ? 5 : 20, lat = quick ? 200 : 2000;
	std::vector<double> t;
	char note[160];
	int i, j;

	for (i = 0; i < samples + 2; i++) {
		double t0 = now_ns();

		for (j = 0; j < calls; j++)
			CB("sgemm_64_rate", "call/s", sgemm(n));
		CK("sgemm_64_rate", "call/s", cudaStreamSynchronize(st));
		if (i >= 2)
			t.push_back(now_ns() - t0);
	}
	if (!check("sgemm_64_rate", "call/s", n))
		return false;
	struct summary s = summarize(t);
	snprintf(note, sizeof(note),
		 "64x64x64 FP32, %d cublasSgemm back to back + cudaStreamSynchronize, wall "
		 "clock; %d samples after 2 warm-up", calls, samples);
	put("sgemm_64_rate", "call/s", calls * 1e9 / s.p50, calls * 1e9 / s.p99,
	    calls * 1e9 / s.mean, note);

	t.clear();
	for (i = 0; i < lat + lat / 10; i++) {
		double t0 = now_ns();

		CB("sgemm_64_sync", "us", sgemm(n));
		CK("sgemm_64_sync", "us", cudaStreamSynchronize(st));
		if (i >= lat / 10)
			t.push_back(now_ns() - t0);
	}
	s = summarize(t);
	snprintf(note, sizeof(note), "one 64^3 cublasSgemm + cudaStreamSynchronize, wall; %d "
		 "samples after %d warm-up", lat, lat / 10);
	put("sgemm_64_sync", "us", s.p50 / 1e3, s.p99 / 1e3, s.mean / 1e3, note);
	return true;
}

static bool setup(void)
{
	const size_t elems = (size_t)maxn * maxn, bytes = elems * sizeof(float);
	double t0, t1;
	int dev = 0, ver = 0;
	cudaDeviceProp prop;

	/* The context first, so that cublas_create times cuBLAS alone. */
	CK("cublas_create", "ms", cudaSetDevice(0));
	CK("cublas_create", "ms", cudaFree(0));
	if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
		printf("# device: %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount,
		       (double)prop.totalGlobalMem / (1u << 30));
	if (cudaDriverGetVersion(&ver) == cudaSuccess)
		printf("# driver API version %d\n", ver);
	{
		/* Which libcuda.so.1 cudart loaded: NVIDIA's or axon's shim. */
		void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		void *sym = lib ? dlsym(lib, "cuInit") : NULL;
		Dl_info dli;

		if (sym && dladdr(sym, &dli) && dli.dli_fname)
			printf("# libcuda: %s\n", dli.dli_fname);
		if (lib)
			dlclose(lib);
	}
	CK("cublas_create", "ms", cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
	t0 = now_ns();
	CB("cublas_create", "ms", cublasCreate(&h));
	t1 = now_ns();
	put("cublas_create", "ms", (t1 - t0) / 1e6, NAN, NAN, "cublasCreate, context already current");
	CB("sgemm_first", "ms", cublasSetStream(h, st));
	{
		int v = 0;

		if (cublasGetVersion(h, &v) == CUBLAS_STATUS_SUCCESS)
			printf("# cuBLAS version %d\n", v);
	}

	hA.resize(elems);
	hB.resize(elems);
	fill(hA, 1);
	fill(hB, 2);
	CK("sgemm_first", "ms", cudaMalloc((void **)&dA, bytes));
	CK("sgemm_first", "ms", cudaMalloc((void **)&dB, bytes));
	CK("sgemm_first", "ms", cudaMalloc((void **)&dC, bytes));
	CK("sgemm_first", "ms", cudaMemcpy(dA, hA.data(), bytes, cudaMemcpyHostToDevice));
	CK("sgemm_first", "ms", cudaMemcpy(dB, hB.data(), bytes, cudaMemcpyHostToDevice));
	CK("sgemm_first", "ms", cudaMemset(dC, 0, bytes));
	CK("sgemm_first", "ms", cudaDeviceSynchronize());

	t0 = now_ns();
	CB("sgemm_first", "ms", sgemm(1024));
	CK("sgemm_first", "ms", cudaStreamSynchronize(st));
	t1 = now_ns();
	put("sgemm_first", "ms", (t1 - t0) / 1e6, NAN, NAN,
	    "first cublasSgemm (1024^3) + cudaStreamSynchronize: loads cuBLAS's kernels");
	return true;
}

static void teardown(void)
{
	if (h)
		cublasDestroy(h);
	if (st)
		cudaStreamDestroy(st);
	cudaFree(dA);	/* NULL where never allocated: a no-op */
	cudaFree(dB);
	cudaFree(dC);
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			quick = 1;
		} else {
			fprintf(stderr, "usage: blasbench [--quick]\n");
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# blasbench%s; AXON_ADDR: %s\n", quick ? " (quick)" : "",
	       getenv("AXON_ADDR") ? getenv("AXON_ADDR") : "(unset)");
	if (!setup()) {
		/* setup made its failing row n/a; the rows it kept from running
		 * say why they have no figure. */
		static const char *const rows[][2] = {
			{ "cublas_create", "ms" }, { "sgemm_first", "ms" },
			{ "sgemm_1024", "TFLOP/s" }, { "sgemm_4096", "TFLOP/s" },
			{ "sgemm_8192", "TFLOP/s" }, { "sgemm_64_rate", "call/s" },
			{ "sgemm_64_sync", "us" },
		};

		for (i = 0; i < 7; i++)
			if (!printed.count(rows[i][0]))
				put_na(rows[i][0], rows[i][1], "set-up failed, see the rows above");
		teardown();
		return 1;
	}
	bench_size(1024, 64, quick ? 5 : 20);
	bench_size(4096, 4, quick ? 5 : 20);
	bench_size(8192, 1, quick ? 5 : 20);
	bench_small();
	teardown();
	return 0;
}
