/* SPDX-License-Identifier: MIT */
/*
 * Launch collapse (collapse.c): a run of plain kernel launches queued on
 * one stream is issued as one replay of a cached CUDA graph instead of one
 * cuLaunchKernel each. The brief's measured H200 figures: 10 / 100 / 1000
 * launches replayed as a graph run 3.7x / 6.4x / 7.0x faster than launched
 * directly, and the driver's per-launch cost is what bounds the executor.
 */
#ifndef AXOND_CUDA_COLLAPSE_H
#define AXOND_CUDA_COLLAPSE_H

#include <stdbool.h>
#include <cuda.h>

struct work;
struct cu_gctx;

/* Runs shorter than this are launched directly. */
#define COLLAPSE_MIN_DEFAULT	4
/* The longest run one graph takes; longer runs take several. */
#define COLLAPSE_MAX		128

/* 0: never collapse (axond --collapse=0). */
extern unsigned int collapse_min;

/*
 * Issues the n launches items[0..n) (consecutive on stream cs, in context
 * g, which is current) as one graph replay. Returns CUDA_SUCCESS when all
 * of them were issued; otherwise none was, and the caller launches them
 * one by one (which also gives any launch error the exact answer a direct
 * launch would). Executor thread.
 */
CUresult collapse_issue(struct cu_gctx *g, CUstream cs, struct work *const *items,
			unsigned int n);

/* What a cached graph of g launches may be stale: a module was unloaded
 * (its functions' handles may be reused) or a function attribute changed.
 * Any thread. */
void collapse_invalidate(void);

/* Destroys g's cached graphs (its last reference is gone). Any thread. */
void collapse_free(struct cu_gctx *g);

#endif
