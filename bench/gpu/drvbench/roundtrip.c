// SPDX-License-Identifier: MIT
/*
 * roundtrip.c - the nullop and query groups: round trips that do no
 * work, cuStreamSynchronize and cuCtxSynchronize when idle, and
 * cuStreamQuery of an idle stream.
 */
#include "drvbench.h"

void bench_nullop(void)
{
	const unsigned long n = iters(20000), warm = n / 10;
	struct b_samples sm;
	unsigned long i;

	TRY("nullop_stream_sync", "us", cuStreamSynchronize(st));
	b_init(&sm, n);
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("nullop_stream_sync", "us", cuStreamSynchronize(st));
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("nullop_stream_sync", "us", &sm, false, 1e3,
		"cuStreamSynchronize on an idle non-blocking stream");
	sm.n = 0;
	for (i = 0; i < warm + n; i++) {
		uint64_t t0 = b_now(), t1;

		TRY("nullop_ctx_sync", "us", cuCtxSynchronize());
		t1 = b_now();
		if (i >= warm)
			b_add(&sm, t1 - t0);
	}
	put_lat("nullop_ctx_sync", "us", &sm, false, 1e3, "cuCtxSynchronize, idle context");
	b_free(&sm);
}

void bench_query(void)
{
	const unsigned long n = iters(200000), warm = n / 10;
	const unsigned int batch = 16;
	struct b_samples sm;
	unsigned long i;
	unsigned int k;
	CUresult bad = CUDA_SUCCESS;

	TRY("stream_query", "us", cuStreamSynchronize(st));
	b_init(&sm, n / batch);
	for (i = 0; i < (warm + n) / batch; i++) {
		uint64_t t0 = b_now(), t1;

		for (k = 0; k < batch; k++) {
			CUresult r = cuStreamQuery(st);

			if (r)
				bad = r;
		}
		t1 = b_now();
		if (i >= warm / batch)
			b_add(&sm, (t1 - t0) * 1000 / batch);
	}
	if (bad)
		put_na("stream_query", "us", "cuStreamQuery returned %s", errname(bad));
	else
		put_lat("stream_query", "us", &sm, true, 1e3, "cuStreamQuery, idle stream; batch 16");
	b_free(&sm);
}
