// SPDX-License-Identifier: MIT
/*
 * rows.c - drvbench's output: each figure as `name value unit` lines the
 * moment it is measured (bench/gpu/sidebyside.awk reads them), kept for
 * the human table at the end.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "drvbench.h"
#include "../rowformat.h"

struct row {
	char name[40], unit[12], note[120];
	double v, p99, mean;	/* NAN where not applicable */
	size_t n;
	bool na;
};

static struct row rows[96];
static unsigned int nrows;

static struct row *new_row(const char *name, const char *unit, const char *note)
{
	struct row *r = &rows[nrows < 95 ? nrows++ : 95];

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->unit, sizeof(r->unit), "%s", unit);
	snprintf(r->note, sizeof(r->note), "%s", note ? note : "");
	r->v = r->p99 = r->mean = NAN;
	return r;
}

/* A figure: value (the row's main number), optional p99 and mean. */
void put(const char *name, const char *unit, double v, double p99, double mean,
	 size_t n, const char *note)
{
	struct row *r = new_row(name, unit, note);

	r->v = v;
	r->p99 = p99;
	r->mean = mean;
	r->n = n;
	row_print(name, unit, v, p99, mean);
	fflush(stdout);
}

void put1(const char *name, const char *unit, double v, const char *note)
{
	put(name, unit, v, NAN, NAN, 1, note);
}

/* A sampled row in a time unit: samples are ns (or ps if ps); scale
 * divides ns into the unit (1e3 for us, 1e6 for ms). */
void put_lat(const char *name, const char *unit, struct b_samples *s, bool ps,
	     double scale, const char *note)
{
	struct b_summary r = ps ? b_summarize_ps(s) : b_summarize(s);

	put(name, unit, r.p50 / scale, r.p99 / scale, r.mean / scale, r.n, note);
}

/* A sampled row in a rate unit (higher is better): samples are ns for
 * `work` units of work; the p99 column is the rate at the p99 time. */
void put_rate(const char *name, const char *unit, struct b_samples *s, double work,
	      const char *note)
{
	struct b_summary r = b_summarize(s);

	put(name, unit, work / r.p50, work / r.p99, work / r.mean, r.n, note);
}

void put_na(const char *name, const char *unit, const char *fmt_, ...)
{
	struct row *r;
	char why[120];
	va_list ap;

	va_start(ap, fmt_);
	vsnprintf(why, sizeof(why), fmt_, ap);
	va_end(ap);
	r = new_row(name, unit, why);
	r->na = true;
	printf("%s n/a %s # %s\n", name, unit, why);
	fflush(stdout);
}

void table(void)
{
	unsigned int i;

	printf("#\n# %-26s %-9s %10s %10s %10s %7s  %s\n", "row", "unit", "value", "p99",
	       "mean", "n", "what");
	for (i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		char v[32], p[32], m[32];

		if (r->na) {
			printf("# %-26s %-9s %10s %10s %10s %7s  skipped: %s\n", r->name, r->unit,
			       "n/a", "", "", "", r->note);
			continue;
		}
		row_value(v, sizeof(v), r->v);
		row_value(p, sizeof(p), r->p99);
		row_value(m, sizeof(m), r->mean);
		printf("# %-26s %-9s %10s %10s %10s %7zu  %s\n", r->name, r->unit, v, p, m, r->n,
		       r->note);
	}
}
