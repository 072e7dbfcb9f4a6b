// SPDX-License-Identifier: MIT
/*
 * hostreg.c - the hostreg group: what cuMemHostRegister and
 * cuMemHostUnregister of memory the program already has cost, 1 MiB to
 * 1 GiB (memory from mmap, every page touched first, as a program's
 * buffers are). Natively the driver pins the pages; through axon the shim
 * also copies them onto memory shared with the daemon and back
 * (libcuda-shim/hostreg.c), and the daemon maps and pins that.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "drvbench.h"

static void hostreg_size(size_t len)
{
	const unsigned long reps = divisor > 1 ? 1 : (len >= 256 * MIB ? 3 : 5);
	char nr[40], nu[40], note[120];
	struct b_samples sr, su;
	unsigned long i;
	void *p;

	snprintf(nr, sizeof(nr), "hostreg_register_%zum", len / MIB);
	snprintf(nu, sizeof(nu), "hostreg_unregister_%zum", len / MIB);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		put_na(nr, "ms", "mmap of %zu MiB failed", len / MIB);
		return;
	}
	memset(p, 1, len);
	b_init(&sr, reps);
	b_init(&su, reps);
	for (i = 0; i <= reps; i++) {
		uint64_t t0 = b_now(), t1, t2;
		CUresult r = cuMemHostRegister(p, len, CU_MEMHOSTREGISTER_PORTABLE);

		t1 = b_now();
		if (r) {
			put_na(nr, "ms", "cuMemHostRegister(%zu MiB): %s", len / MIB, errname(r));
			break;
		}
		r = cuMemHostUnregister(p);
		t2 = b_now();
		if (r) {
			put_na(nu, "ms", "cuMemHostUnregister: %s", errname(r));
			break;
		}
		if (i) {
			b_add(&sr, t1 - t0);
			b_add(&su, t2 - t1);
		}
	}
	if (sr.n == reps) {
		CUdeviceptr dp = 0;
		bool mapped;

		/* Through axon a range the daemon cannot map at its address is
		 * only recorded (no device pointer): say so, it costs less. */
		mapped = !cuMemHostRegister(p, len, CU_MEMHOSTREGISTER_PORTABLE) &&
			 !cuMemHostGetDevicePointer(&dp, p, 0) && dp == (CUdeviceptr)(uintptr_t)p;
		cuMemHostUnregister(p);
		snprintf(note, sizeof(note), "%zu MiB, PORTABLE, touched; %lu reps after 1 warm-up%s",
			 len / MIB, reps, mapped ? "" : "; NOT mapped (staged)");
		put_lat(nr, "ms", &sr, false, 1e6, note);
		put_lat(nu, "ms", &su, false, 1e6, note);
	}
	b_free(&sr);
	b_free(&su);
	munmap(p, len);
}

/* DRVBENCH_HOSTREG_MAX_MIB: the largest size (default 1024). */
static size_t max_mib(void)
{
	const char *e = getenv("DRVBENCH_HOSTREG_MAX_MIB");
	size_t v = e ? strtoul(e, NULL, 10) : 0;

	return v ? v : 1024;
}

void bench_hostreg(void)
{
	size_t len;

	for (len = MIB; len <= max_mib() * MIB; len <<= 2)
		hostreg_size(len);
}
