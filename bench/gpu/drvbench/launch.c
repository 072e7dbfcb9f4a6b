// SPDX-License-Identifier: MIT
/*
 * launch.c - the launch and loops groups: cuLaunchKernel of the nop
 * kernel, per call, sustained, with a sync each, and in loops of 10, 100
 * and 1000 launches then a sync.
 */
#include <stdio.h>

#include "drvbench.h"

void bench_launch(void)
{
	const unsigned long n = iters(40000), warm = n / 10;
	const unsigned int batch = 8;
	const unsigned long rate_n = iters(50000);
	struct b_samples sm;
	unsigned long i;
	unsigned int k;
	CUresult bad = CUDA_SUCCESS;

	if (!fnop) {
		put_na("launch_enqueue", "us", "no nop kernel");
		return;
	}
	/* Enqueue: batches of 8, the stream drained (untimed) every 128. */
	b_init(&sm, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0, t1;

		if (i % (128 / batch) == 0)
			TRY("launch_enqueue", "us", cuStreamSynchronize(st));
		t0 = b_now();
		for (k = 0; k < batch; k++) {
			CUresult r = launch_nop();

			if (r)
				bad = r;
		}
		t1 = b_now();
		if (i >= warm / batch)
			b_add(&sm, (t1 - t0) * 1000 / batch);
	}
	TRY("launch_enqueue", "us", cuStreamSynchronize(st));
	if (bad)
		put_na("launch_enqueue", "us", "cuLaunchKernel: %s", errname(bad));
	else
		put_lat("launch_enqueue", "us", &sm, true, 1e3,
			"cuLaunchKernel(nop) 1x1x1, per call; batch 8, sync every 128 untimed");
	b_free(&sm);

	/* Sustained rate: rate_n launches back to back, then one sync. */
	b_init(&sm, 5);
	for (i = 0; i < 6; i++) {
		uint64_t t0 = b_now(), t1;
		unsigned long j;

		for (j = 0; j < rate_n; j++)
			TRY("launch_rate", "launch/s", launch_nop());
		TRY("launch_rate", "launch/s", cuStreamSynchronize(st));
		t1 = b_now();
		if (i)
			b_add(&sm, t1 - t0);
	}
	{
		char note[120];

		snprintf(note, sizeof(note), "%lu launches then 1 sync, 5 reps", rate_n);
		put_rate("launch_rate", "launch/s", &sm, (double)rate_n * 1e9, note);
	}
	b_free(&sm);

	/* Launch + sync latency. */
	{
		const unsigned long m = iters(5000), mw = m / 10;

		b_init(&sm, m);
		for (i = 0; i < mw + m; i++) {
			uint64_t t0 = b_now(), t1;

			TRY("launch_sync", "us", launch_nop());
			TRY("launch_sync", "us", cuStreamSynchronize(st));
			t1 = b_now();
			if (i >= mw)
				b_add(&sm, t1 - t0);
		}
		put_lat("launch_sync", "us", &sm, false, 1e3,
			"cuLaunchKernel(nop) + cuStreamSynchronize");
		b_free(&sm);
	}
}

void bench_loops(void)
{
	static const struct { unsigned int len; unsigned long reps; } loops[] = {
		{ 10, 500 }, { 100, 200 }, { 1000, 40 },
	};
	unsigned int l;

	if (!fnop) {
		put_na("loop10", "us", "no nop kernel");
		return;
	}
	for (l = 0; l < 3; l++) {
		const unsigned long n = iters(loops[l].reps), warm = n / 10 ? n / 10 : 1;
		char name[40], note[120];
		struct b_samples sm;
		unsigned long i;

		snprintf(name, sizeof(name), "loop%u", loops[l].len);
		b_init(&sm, n);
		for (i = 0; i < warm + n; i++) {
			uint64_t t0 = b_now(), t1;
			unsigned int j;

			for (j = 0; j < loops[l].len; j++)
				TRY(name, "us", launch_nop());
			TRY(name, "us", cuStreamSynchronize(st));
			t1 = b_now();
			if (i >= warm)
				b_add(&sm, t1 - t0);
		}
		snprintf(note, sizeof(note), "%u x cuLaunchKernel(nop) + cuStreamSynchronize, per loop",
			 loops[l].len);
		put_lat(name, "us", &sm, false, 1e3, note);
		b_free(&sm);
	}
}
