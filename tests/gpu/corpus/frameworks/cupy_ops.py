# SPDX-License-Identifier: MIT
"""CuPy on the GPU: elementwise, reductions, a matmul (cuBLAS), sort, an FFT
(cuFFT), each against NumPy; and a RawKernel compiled by NVRTC at run time
(the runner gives each run a fresh CUPY_CACHE_DIR, so both compile)."""
from corpus_common import check, done, need, sig

np = need("numpy")

cp = need("cupy")

rng = np.random.default_rng(3)
a = rng.standard_normal(1 << 20).astype(np.float32)
b = rng.standard_normal(1 << 20).astype(np.float32)
ga, gb = cp.asarray(a), cp.asarray(b)
ew = cp.asnumpy(ga * gb + cp.sin(ga) - cp.abs(gb) ** 0.5)
check("elementwise", np.allclose(ew, a * b + np.sin(a) - np.abs(b) ** 0.5, rtol=1e-5, atol=1e-5))
s = float(cp.sum(ga.astype(cp.float64)))
check("sum", abs(s - float(np.sum(a.astype(np.float64)))) < 1e-6)
print(f"sum: {sig(s, 6)}  max: {sig(float(cp.max(ga)), 6)}")
m = rng.standard_normal((512, 300)).astype(np.float64)
n = rng.standard_normal((300, 200)).astype(np.float64)
check("matmul float64", np.allclose(cp.asnumpy(cp.asarray(m) @ cp.asarray(n)), m @ n, rtol=1e-10, atol=1e-10))
check("sort", np.array_equal(cp.asnumpy(cp.sort(ga)), np.sort(a)))
sig_t = np.sin(2 * np.pi * 50 * np.arange(4096) / 4096) + 0.5 * np.cos(2 * np.pi * 300 * np.arange(4096) / 4096)
f = cp.asnumpy(cp.fft.fft(cp.asarray(sig_t)))
peaks = sorted(int(i) for i in np.argsort(np.abs(f[:2048]))[-2:])
print(f"fft peaks: {peaks}")
check("fft", np.allclose(f, np.fft.fft(sig_t), atol=1e-8) and peaks == [50, 300])

saxpy = cp.RawKernel(r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
''', "saxpy")
gy = gb.copy()
n_el = a.size
saxpy(((n_el + 255) // 256,), (256,), (np.float32(2.5), ga, gy, np.int32(n_el)))
check("RawKernel saxpy", np.allclose(cp.asnumpy(gy), 2.5 * a + b, rtol=1e-6, atol=1e-6))
print(f"saxpy checksum: {sig(float(cp.sum(gy.astype(cp.float64))), 6)}")
done()
