// SPDX-License-Identifier: MIT
/*
 * modload.c - the modload group: the first cuModuleLoadData of the cubin
 * (kept as the module the later groups launch from) and of the PTX, then
 * repeated loads, alone and each with its unload.
 */
#include <stdio.h>

#include "drvbench.h"

static void modload(const char *name, void *img, unsigned long n, bool keep)
{
	char nf[40], nr[40], np[40], note[120];
	struct b_samples sm, sp;
	struct b_summary s;
	CUmodule m;
	uint64_t t0, t1;
	unsigned long i;

	snprintf(nf, sizeof(nf), "modload_%s_first", name);
	snprintf(nr, sizeof(nr), "modload_%s_repeat", name);
	snprintf(np, sizeof(np), "modload_%s_pair", name);
	t0 = b_now();
	TRY(nf, "us", cuModuleLoadData(&m, img));
	t1 = b_now();
	put1(nf, "us", (double)(t1 - t0) / 1e3, "first cuModuleLoadData of the image in this process");
	if (keep)
		mod = m;
	else
		TRY(nf, "us", cuModuleUnload(m));
	b_init(&sm, n);
	b_init(&sp, n);
	for (i = 0; i < n; i++) {
		t0 = b_now();
		TRY(nr, "us", cuModuleLoadData(&m, img));
		t1 = b_now();
		b_add(&sm, t1 - t0);
		TRY(nr, "us", cuModuleUnload(m));
		b_add(&sp, b_now() - t0);
	}
	s = b_summarize(&sm);
	snprintf(note, sizeof(note), "mean of %lu later loads (p50 %.1f us), unload untimed", n,
		 s.p50 / 1e3);
	put(nr, "us", s.mean / 1e3, s.p99 / 1e3, s.mean / 1e3, s.n, note);
	/* Where an unload's work is done differs (through axon it is
	 * deferred and runs ahead of the next load): the pair is the same
	 * work both ways. */
	s = b_summarize(&sp);
	snprintf(note, sizeof(note), "mean of the same %lu loads each with its unload", n);
	put(np, "us", s.mean / 1e3, s.p99 / 1e3, s.mean / 1e3, s.n, note);
	b_free(&sm);
	b_free(&sp);
}

void bench_modload(void)
{
	if (!cubin_img) {
		put_na("modload_cubin_first", "us", "cannot read the cubin");
		return;
	}
	modload("cubin", cubin_img, iters(50), true);
	if (ptx_img)
		modload("ptx", ptx_img, iters(10) > 3 ? iters(10) : 3, false);
	else
		put_na("modload_ptx_first", "us", "no PTX image given or readable");
}
