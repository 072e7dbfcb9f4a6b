/* SPDX-License-Identifier: MIT */
/*
 * drvbench.h - what drvbench's files share: the run's settings, the rows
 * it prints (rows.c), the state the groups use (drvbench.c sets it up) and
 * the groups themselves, one file per family:
 *
 *   start.c      start, start_held: fork + exec to the first kernel done
 *   modload.c    modload: cuModuleLoadData of the cubin and the PTX
 *   roundtrip.c  nullop, query: synchronize and query an idle stream
 *   launch.c     launch, loops: enqueue, rate, launch + sync, loops
 *   copy.c       copy4, bw: 4-byte copies, 256 MiB bandwidth
 *   alloc.c      alloc, alloc4g: cuMemAlloc/cuMemFree
 *   hostreg.c    hostreg: cuMemHostRegister/Unregister, 1 MiB .. 1 GiB
 */
#ifndef DRVBENCH_H
#define DRVBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

#include "../../bench.h"
#include "../drvcommon.h"

#define MIB ((size_t)1 << 20)

/* ---- drvbench.c: the run -------------------------------------------------- */

extern unsigned long divisor;	/* --quick: 10 */

static inline unsigned long iters(unsigned long n)
{
	return n / divisor ? n / divisor : 1;
}

/* Set up by main() before the groups that use them. */
extern CUstream st;
extern CUmodule mod;
extern CUfunction fnop;
extern void *cubin_img, *ptx_img;

/* Inline: it is inside the timed loops. */
static inline CUresult launch_nop(void)
{
	return cuLaunchKernel(fnop, 1, 1, 1, 1, 1, 1, 0, st, NULL, NULL);
}

/* ---- rows.c: what is printed ----------------------------------------------- */

void put(const char *name, const char *unit, double v, double p99, double mean,
	 size_t n, const char *note);
void put1(const char *name, const char *unit, double v, const char *note);
void put_lat(const char *name, const char *unit, struct b_samples *s, bool ps,
	     double scale, const char *note);
void put_rate(const char *name, const char *unit, struct b_samples *s, double work,
	      const char *note);
void put_na(const char *name, const char *unit, const char *fmt_, ...)
	__attribute__((format(printf, 3, 4)));
/* The human table of every row so far, as '#' lines. */
void table(void);

/* On failure: the row is n/a with the error's name; leave the group. */
#define TRY(row, unit, call)						\
	do {								\
		CUresult r_ = (call);					\
		if (r_ != CUDA_SUCCESS) {				\
			put_na(row, unit, "%s: %s", #call, errname(r_)); \
			return;						\
		}							\
	} while (0)

/* ---- the groups -------------------------------------------------------------- */

int child_main(const char *cubin, int fd);	/* drvbench --child */
void bench_start(const char *cubin, const char *pre);
void bench_modload(void);
void bench_nullop(void);
void bench_query(void);
void bench_launch(void);
void bench_loops(void);
void bench_copy4(void);
void bench_bw(void);
void bench_alloc(void);
void bench_alloc4g(void);
void bench_hostreg(void);

#endif
