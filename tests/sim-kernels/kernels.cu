// SPDX-License-Identifier: MIT
/*
 * Test kernels for the axon "sim" backend.
 *
 * Each __global__ function here has a host implementation in
 * axond/sim/kernels.c that computes the same thing thread by thread, so a
 * test program built against the driver API gives the same results on a
 * real GPU (this file compiled by nvcc) and on axond's software GPU (the
 * sim looks the kernel up by name in the module image and runs its host
 * twin). Keep the two in step: same name, same parameters, same index
 * arithmetic, same bounds checks.
 *
 * Both C++ (mangled) and extern "C" names on purpose: the sim matches the
 * unmangled base name.
 *
 * The tests also compile this file to a cubin, a fatbin and PTX and check
 * the parser in axond/sim/image.c against the declarations below, so the
 * parameter lists and globals are part of the test contract too: changing
 * them means changing tests/sim-image.c.
 */

#include <assert.h>
#include <stdio.h>

/* 1-D: c[i] = a[i] + b[i] for i < n.  Mangled: _Z9vectorAddPKfS0_Pfi */
__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

/* The same under the other common name.  Mangled: _Z6vecAddPKfS0_Pfi */
__global__ void vecAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}

/* p[i] = v for i < n. */
extern "C" __global__ void fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

/* y[i] = a * x[i] + y[i] for i < n (BLAS argument order). */
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

/* p[i] *= s for i < n.  Mangled: _Z5scalePffi */
__global__ void scale(float *p, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * s;
}

/* p[i] = i for i < n. */
extern "C" __global__ void iota_u32(unsigned int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (unsigned int)i;
}

/* p[i] += 1 (mod 256) for i < n. */
extern "C" __global__ void add_one_u8(unsigned char *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (unsigned char)(p[i] + 1);
}

/*
 * 2-D: c = a + b over a width x height row-major matrix, pitch in
 * elements. x from the .x dimensions, y from the .y dimensions.
 * Mangled: _Z5add2dPKfS0_Pfiii
 */
__global__ void add2d(const float *a, const float *b, float *c, int width,
		      int height, int pitch)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < width && y < height)
		c[y * pitch + x] = a[y * pitch + x] + b[y * pitch + x];
}

/*
 * 3-D: p[(z * ny + y) * nx + x] = that same linear index, for x < nx,
 * y < ny, z < nz.
 */
extern "C" __global__ void iota3d(unsigned int *p, int nx, int ny, int nz)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	int z = blockIdx.z * blockDim.z + threadIdx.z;
	if (x < nx && y < ny && z < nz) {
		unsigned int i = (unsigned int)((z * ny + y) * nx + x);
		p[i] = i;
	}
}

/* A 24-byte, 8-aligned aggregate passed by value. */
struct probe24 {
	double d;	/* offset 0 */
	int i;		/* offset 8 */
	char c;		/* offset 12 */
	float f;	/* offset 16; 4 bytes of tail padding */
};

/*
 * Parameter-layout probe: mixed sizes and alignments. Thread (0,0,0) of
 * block (0,0,0) writes every argument, converted to double, to out[0..8]:
 *   c, i, d, s.d, s.i, s.c, s.f, h, *q
 * Expected layout (offset/size): c 0/1, i 4/4, d 8/8, s 16/24, h 40/2,
 * q 48/8, out 56/8; args 64 bytes.
 */
extern "C" __global__ void probe_params(char c, int i, double d,
					struct probe24 s, short h,
					const int *q, double *out)
{
	if (blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0 &&
	    threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
		out[0] = c;
		out[1] = i;
		out[2] = d;
		out[3] = s.d;
		out[4] = s.i;
		out[5] = s.c;
		out[6] = s.f;
		out[7] = h;
		out[8] = *q;
	}
}

/* No parameters at all; does nothing. */
extern "C" __global__ void nop(void)
{
}

/*
 * Globals, checked by tests/sim-image.c (name, size, initial bytes).
 * Referenced by g_touch so no compiler may drop them.
 */
__device__ int g_counter;				/* 4 bytes, zero */
__device__ float g_table[4] = { 1.0f, 2.0f, 3.0f, 4.0f };	/* 16 bytes */
__device__ unsigned long long g_big[32];		/* 256 bytes, zero */
__constant__ float c_coeffs[8] = { 0.5f, 1.5f, 2.5f, 3.5f,
				   4.5f, 5.5f, 6.5f, 7.5f };	/* 32 bytes */
__constant__ int c_zero[3];				/* 12 bytes */

extern "C" __global__ void g_touch(float *out)
{
	atomicAdd(&g_counter, 1);
	out[0] = g_table[threadIdx.x & 3] + c_coeffs[threadIdx.x & 7] +
		 (float)g_big[threadIdx.x & 31] + (float)c_zero[threadIdx.x % 3];
}

/*
 * Device output and device faults (axond routes a kernel's printf to the
 * client that launched it; a fault poisons only that client's context).
 */

/* Thread i < n prints one line. */
extern "C" __global__ void print_hello(int tag, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		printf("hello %d from thread %d\n", tag, i);
}

/* assert(p[i] != 0) for i < n: a zero gives CUDA_ERROR_ASSERT (710). */
extern "C" __global__ void assert_nonzero(const int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		assert(p[i] != 0);
}

/* Thread 0 of block 0 writes p[i] = v: an i past the allocation is an
 * illegal address (CUDA_ERROR_ILLEGAL_ADDRESS, 700). */
extern "C" __global__ void poke(int *p, long long i, int v)
{
	if (blockIdx.x == 0 && threadIdx.x == 0)
		p[i] = v;
}
