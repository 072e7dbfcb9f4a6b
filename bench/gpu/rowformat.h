/* SPDX-License-Identifier: MIT */
/*
 * rowformat.h - how the GPU benchmarks print a figure, the lines that
 * bench/gpu/sidebyside.awk reads (drvbench and blasbench; C and C++):
 *
 *	name value unit
 *	name.p99 value unit	(when there is a p99)
 *	name.mean value unit	(when there is a mean)
 *
 * A value is printed with four significant-ish digits: no decimals from
 * 1000 up, four below 0.1; "-" for NAN.
 */
#ifndef AXON_BENCH_GPU_ROWFORMAT_H
#define AXON_BENCH_GPU_ROWFORMAT_H

#include <math.h>
#include <stdio.h>

static inline void row_value(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(buf, len, "-");
	else if (a >= 1000)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, len, "%.2f", v);
	else if (a >= 0.1)
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "%.4f", v);
}

/* The figure's lines; p99 and mean NAN where it has none. */
static inline void row_print(const char *name, const char *unit, double v, double p99,
			     double mean)
{
	char b[32];

	row_value(b, sizeof(b), v);
	printf("%s %s %s\n", name, b, unit);
	if (!isnan(p99)) {
		row_value(b, sizeof(b), p99);
		printf("%s.p99 %s %s\n", name, b, unit);
	}
	if (!isnan(mean)) {
		row_value(b, sizeof(b), mean);
		printf("%s.mean %s %s\n", name, b, unit);
	}
}

#endif
