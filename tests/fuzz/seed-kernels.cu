// Small kernels for fuzz-image's seeds (tests/fuzz/gen-corpus.py): two
// entries of the sim's built-in set, parameters of several sizes and
// alignments, and globals of each kind the image reader lists.
__device__ int g_counter;				/* .nv.global: zero */
__device__ float g_table[4] = { 1.0f, 2.0f, 3.0f, 4.0f };	/* .nv.global.init */
__constant__ float c_coeffs[2] = { 0.5f, 1.5f };	/* .nv.constant */

extern "C" __global__ void fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v + c_coeffs[0] + g_table[1];
	if (i == 0)
		atomicAdd(&g_counter, 1);
}

struct pair { double d; char c; };

extern "C" __global__ void probe(char c, struct pair s, short h, long long *out)
{
	out[0] = c + (long long)s.d + s.c + h;
}

extern "C" __global__ void nop(void)
{
}
