// SPDX-License-Identifier: MIT
/*
 * rt-blas: cuBLAS SGEMM through the runtime, checked against a CPU
 * reference computed in double precision.
 *
 *   512 x 512 x 512      C = 1.5 A B + 0.5 C, no transposes
 *   300 x 200 x 77       C = A^T B - C (A stored k x m), on a stream set
 *                        with cublasSetStream, leading dimensions larger
 *                        than the matrices
 *
 * The tolerance of element (i, j) is 2^-9 times the sum of the absolute
 * values of the terms that make it (sum_k |alpha a_ik b_kj| + |beta c_ij|):
 * wide enough for TF32 tensor-core math, were cuBLAS to choose it, and far
 * too narrow for a wrong product. Prints the cases and whether every element
 * was within tolerance, not the errors themselves (those may differ in the
 * last bit between two runs that pick different kernels).
 * Exits 0 when every check passed, 1 otherwise.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt-gpu.h"

#define BLAS_OK(call)							\
	do {								\
		cublasStatus_t s_ = (call);				\
		RT_CHECK(s_ == CUBLAS_STATUS_SUCCESS, "%s -> %s", #call, \
			 cublasGetStatusName(s_));			\
	} while (0)

static uint64_t rng = 0x243f6a8885a308d3ull;

/* Uniform in [-1, 1), from a fixed seed: the same matrices every run. */
static float next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

/*
 * One SGEMM: C (m x n, leading dimension ldc) = alpha op(A) op(B) + beta C,
 * column-major, op = transpose when ta/tb. A is stored (ta ? k x m : m x k)
 * with leading dimension lda, B (tb ? n x k : k x n) with ldb.
 */
static void gemm(cublasHandle_t h, cudaStream_t s, const char *what, bool ta, bool tb,
		 int m, int n, int k, int lda, int ldb, int ldc, float alpha, float beta)
{
	size_t na = (size_t)lda * (ta ? m : k), nb = (size_t)ldb * (tb ? k : n);
	size_t nc = (size_t)ldc * n, bad = 0;
	float *a = (float *)malloc(na * 4), *b = (float *)malloc(nb * 4);
	float *c = (float *)malloc(nc * 4), *r = (float *)malloc(nc * 4);
	float *da = NULL, *db = NULL, *dc = NULL;

	RT_CHECK(a && b && c && r, "malloc");
	if (!a || !b || !c || !r)
		return;
	for (size_t i = 0; i < na; i++)
		a[i] = next();
	for (size_t i = 0; i < nb; i++)
		b[i] = next();
	for (size_t i = 0; i < nc; i++)
		c[i] = next();
	RT_OK(cudaMalloc((void **)&da, na * 4));
	RT_OK(cudaMalloc((void **)&db, nb * 4));
	RT_OK(cudaMalloc((void **)&dc, nc * 4));
	RT_OK(cudaMemcpyAsync(da, a, na * 4, cudaMemcpyHostToDevice, s));
	RT_OK(cudaMemcpyAsync(db, b, nb * 4, cudaMemcpyHostToDevice, s));
	RT_OK(cudaMemcpyAsync(dc, c, nc * 4, cudaMemcpyHostToDevice, s));
	BLAS_OK(cublasSgemm(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
			    m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc));
	RT_OK(cudaMemcpyAsync(r, dc, nc * 4, cudaMemcpyDeviceToHost, s));
	RT_OK(cudaStreamSynchronize(s));

	for (int j = 0; j < n; j++) {
		for (int i = 0; i < m; i++) {
			double sum = 0, mag = 0, want, got = r[(size_t)j * ldc + i];

			for (int p = 0; p < k; p++) {
				double x = ta ? a[(size_t)i * lda + p] : a[(size_t)p * lda + i];
				double y = tb ? b[(size_t)p * ldb + j] : b[(size_t)j * ldb + p];

				sum += x * y;
				mag += fabs(alpha * x * y);
			}
			want = alpha * sum + beta * (double)c[(size_t)j * ldc + i];
			mag += fabs(beta * (double)c[(size_t)j * ldc + i]);
			if (!(fabs(got - want) <= mag / 512 + 1e-6)) {
				if (!bad)
					fprintf(stderr, "%s: C[%d,%d] = %.7g, want %.7g\n", what, i,
						j, got, want);
				bad++;
			}
		}
		/* Rows past m in a column (ldc > m) are not C's: untouched. */
		for (int i = m; i < ldc; i++)
			bad += r[(size_t)j * ldc + i] != c[(size_t)j * ldc + i];
	}
	RT_CHECK(bad == 0, "%s: %zu elements out of tolerance or touched", what, bad);
	printf("sgemm %-34s %s\n", what, bad ? "WRONG" : "every element within tolerance");
	RT_OK(cudaFree(da));
	RT_OK(cudaFree(db));
	RT_OK(cudaFree(dc));
	free(a);
	free(b);
	free(c);
	free(r);
}

int main(void)
{
	cublasHandle_t h = NULL;
	cudaStream_t s = NULL;
	int version = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	BLAS_OK(cublasCreate(&h));
	BLAS_OK(cublasGetVersion(h, &version));
	RT_CHECK(version > 0, "cuBLAS version %d", version);
	if (rt_failures)
		return rt_done();
	gemm(h, 0, "512x512x512 NN, alpha 1.5, beta 0.5", false, false, 512, 512, 512, 512, 512,
	     512, 1.5f, 0.5f);
	RT_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	BLAS_OK(cublasSetStream(h, s));
	gemm(h, s, "300x200x77 TN, alpha 1, beta -1", true, false, 300, 200, 77, 80, 96, 320,
	     1.0f, -1.0f);
	gemm(h, s, "64x1000x33 NT, alpha 2, beta 0", false, true, 64, 1000, 33, 64, 1000, 64,
	     2.0f, 0.0f);
	BLAS_OK(cublasDestroy(h));
	RT_OK(cudaStreamDestroy(s));
	return rt_done();
}
