// SPDX-License-Identifier: MIT
/*
 * rt-fft: cuFFT complex-to-complex transforms through the runtime.
 *
 *   known signal   N = 1024, x[n] = e^(2 pi i 5 n / N) + 0.5 e^(2 pi i 37 n / N)
 *                  forward: X[5] = N, X[37] = N / 2, every other bin 0
 *                  (within 1e-3 N)
 *   round trip     forward then inverse (cuFFT does not scale: / points)
 *                  gives x
 *                  back within 1e-4 (inputs in [-1, 1]), for a batch of 8 random
 *                  signals of 1000 points (not a power of two) and a 2-D
 *                  64 x 96 one, in place, on a stream (cufftSetStream)
 *
 * Prints what was checked and whether it held, not the errors.
 * Exits 0 when every check passed, 1 otherwise.
 */
#include <cuda_runtime.h>
#include <cufft.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rt-gpu.h"

#define FFT_OK(call)							\
	do {								\
		cufftResult r_ = (call);				\
		RT_CHECK(r_ == CUFFT_SUCCESS, "%s -> cufftResult %d", #call, (int)r_); \
	} while (0)

static uint64_t rng = 0x13198a2e03707344ull;

static float next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((double)(rng >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
}

static void known_signal(void)
{
	const int n = 1024;
	cufftComplex *h = (cufftComplex *)malloc(n * sizeof(*h)), *d = NULL;
	cufftHandle plan;
	double worst = 0;
	int bad = 0;

	for (int i = 0; i < n; i++) {
		double t1 = 2 * M_PI * 5 * i / n, t2 = 2 * M_PI * 37 * i / n;

		h[i].x = (float)(cos(t1) + 0.5 * cos(t2));
		h[i].y = (float)(sin(t1) + 0.5 * sin(t2));
	}
	RT_OK(cudaMalloc((void **)&d, n * sizeof(*d)));
	RT_OK(cudaMemcpy(d, h, n * sizeof(*h), cudaMemcpyHostToDevice));
	FFT_OK(cufftPlan1d(&plan, n, CUFFT_C2C, 1));
	FFT_OK(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
	RT_OK(cudaMemcpy(h, d, n * sizeof(*h), cudaMemcpyDeviceToHost));
	for (int k = 0; k < n; k++) {
		double want = k == 5 ? n : k == 37 ? n / 2.0 : 0;
		double err = hypot(h[k].x - want, h[k].y);

		worst = err > worst ? err : worst;
		bad += !(err <= 1e-3 * n);
	}
	RT_CHECK(bad == 0, "known signal: %d bins wrong, worst error %g", bad, worst);
	printf("forward C2C of 1024 points: X[5] = N, X[37] = N/2, others 0: %s\n",
	       bad ? "WRONG" : "yes");
	FFT_OK(cufftDestroy(plan));
	RT_OK(cudaFree(d));
	free(h);
}

/* Forward then inverse over total points in place; compares with the input. */
static void round_trip(const char *what, cufftHandle plan, int points, int total,
		       cudaStream_t s)
{
	cufftComplex *x = (cufftComplex *)malloc(total * sizeof(*x));
	cufftComplex *y = (cufftComplex *)malloc(total * sizeof(*y)), *d = NULL;
	int bad = 0;

	for (int i = 0; i < total; i++) {
		x[i].x = next();
		x[i].y = next();
	}
	RT_OK(cudaMalloc((void **)&d, total * sizeof(*d)));
	RT_OK(cudaMemcpyAsync(d, x, total * sizeof(*x), cudaMemcpyHostToDevice, s));
	FFT_OK(cufftExecC2C(plan, d, d, CUFFT_FORWARD));
	FFT_OK(cufftExecC2C(plan, d, d, CUFFT_INVERSE));
	RT_OK(cudaMemcpyAsync(y, d, total * sizeof(*y), cudaMemcpyDeviceToHost, s));
	RT_OK(cudaStreamSynchronize(s));
	for (int i = 0; i < total; i++) {
		double err = hypot(y[i].x / points - x[i].x, y[i].y / points - x[i].y);

		bad += !(err <= 1e-4);
	}
	RT_CHECK(bad == 0, "%s round trip: %d points wrong", what, bad);
	printf("forward + inverse C2C, %s: %s\n", what, bad ? "WRONG" : "input back");
	RT_OK(cudaFree(d));
	free(x);
	free(y);
}

int main(void)
{
	cufftHandle batch, plane;
	cudaStream_t s = NULL;
	int version = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	RT_OK(cudaSetDevice(0));
	FFT_OK(cufftGetVersion(&version));
	RT_CHECK(version > 0, "cuFFT version %d", version);
	known_signal();

	RT_OK(cudaStreamCreate(&s));
	FFT_OK(cufftPlan1d(&batch, 1000, CUFFT_C2C, 8));
	FFT_OK(cufftSetStream(batch, s));
	round_trip("batch of 8 x 1000", batch, 1000, 8 * 1000, s);
	FFT_OK(cufftDestroy(batch));

	FFT_OK(cufftPlan2d(&plane, 64, 96, CUFFT_C2C));
	FFT_OK(cufftSetStream(plane, s));
	round_trip("2-D 64 x 96", plane, 64 * 96, 64 * 96, s);
	FFT_OK(cufftDestroy(plane));
	RT_OK(cudaStreamDestroy(s));
	return rt_done();
}
