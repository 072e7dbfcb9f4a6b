/* SPDX-License-Identifier: MIT */
/*
 * sim/kernels: host implementations of a few test kernels, so that the sim
 * backend can "run" a launch of a kernel it recognises by name. The CUDA
 * originals are tests/sim-kernels/kernels.cu; each twin here computes, for
 * every block and thread of the launch's grid in turn (x fastest, blocks
 * outermost), the same indices with the same 32-bit wrap-around and the
 * same bounds checks, so a too-small grid leaves elements untouched and a
 * too-large one stays inside n, as on a GPU. They are built into the
 * kernels object the tests give axond (--sim-kernels; kernels-entry.c,
 * kernels-abi.h), never into axond itself.
 *
 *   kernel          parameters                                   does
 *   vectorAdd       (const float *a, const float *b, float *c,   c[i] = a[i] + b[i]
 *   vecAdd           int n)
 *   fill            (float *p, float v, int n)                   p[i] = v
 *   saxpy           (int n, float a, const float *x, float *y)   y[i] = fmaf(a, x[i], y[i])
 *   scale           (float *p, float s, int n)                   p[i] *= s
 *   iota_u32        (unsigned *p, int n)                         p[i] = i
 *   add_one_u8      (unsigned char *p, int n)                    p[i] += 1
 *   add2d           (const float *a, const float *b, float *c,   2-D c = a + b,
 *                    int width, int height, int pitch)            pitch in elements
 *   iota3d          (unsigned *p, int nx, int ny, int nz)        3-D p[i] = i
 *   probe_params    (char, int, double, struct probe24, short,   copies its arguments
 *                    const int *q, double *out)                   to out[0..8]
 *   nop             ()                                           nothing
 *   print_hello     (int tag, int n)                             prints "hello <tag> from
 *                                                                thread <i>\n" (output())
 *   assert_nonzero  (const int *p, int n)                        assert(p[i] != 0)
 *   poke            (int *p, long long i, int v)                 thread 0: p[i] = v
 * (i = blockIdx.x * blockDim.x + threadIdx.x, i < n; see kernels.cu.)
 *
 * Memory safety: run() first walks the grid without touching memory to
 * find, for each pointer argument, the element range the launch will
 * access; it then asks translate() for each whole range and fails with
 * CUDA_ERROR_ILLEGAL_ADDRESS (700) if any is refused, or
 * CUDA_ERROR_MISALIGNED_ADDRESS (716) for a pointer not aligned to its
 * element, before any write. A pointer never dereferenced (n = 0, an empty
 * grid range) is not checked, as on a GPU. A failed assert (assert_nonzero)
 * gives CUDA_ERROR_ASSERT (710) once the whole grid ran; the GPU's
 * assertion message is not reproduced.
 */
#ifndef AXOND_SIM_KERNELS_H
#define AXOND_SIM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels-abi.h"

/*
 * The built-in kernel whose base name is that of the symbol (exact
 * extern "C" name, or the identifier of an Itanium-mangled _Z<len><name>
 * / _ZL<len><name>), or NULL. The caller should also compare the image's
 * parameter layout with params/args_size: kernels are matched by name only.
 */
const struct sim_kernel *sim_kernels_find(const char *symbol);

/* The i-th built-in kernel, NULL past the end. */
const struct sim_kernel *sim_kernels_get(size_t i);

/* Base name of a symbol: *base points into symbol; returns its length. */
size_t sim_kernels_base_name(const char *symbol, const char **base);

#endif /* AXOND_SIM_KERNELS_H */
