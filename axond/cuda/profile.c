// SPDX-License-Identifier: MIT
/*
 * The executor profile's report (profile.h): one log line per executor,
 * per kind the count, the total and the mean per call, so a figure such
 * as "11.4 us per launch" can be split into the driver's share and ours.
 */
#include <stdio.h>

#include "../axond.h"
#include "profile.h"

static const char *const kind_name[PROF_NKINDS] = {
	[PROF_ISSUE] = "issue",
	[PROF_COLLAPSE] = "collapse",
	[PROF_EV_RECORD] = "ev_record",
	[PROF_EV_QUERY] = "ev_query",
	[PROF_CTX_SWITCH] = "ctx_switch",
	[PROF_FINISH] = "finish",
	[PROF_HANDOFF] = "handoff",
	[PROF_IDLE] = "idle",
	[PROF_BACKOFF] = "backoff",
};

void exec_prof_log(int dev, const struct exec_prof *p)
{
	char line[1024];
	size_t off;
	int k;

	if (!axond_profiling || !p->items)
		return;
	off = (size_t)snprintf(line, sizeof(line),
			       "profile: executor %d: %llu items in %llu batches (max %llu, %llu collapsed), %.3f ms from first to last;",
			       dev, (unsigned long long)p->items,
			       (unsigned long long)p->batches,
			       (unsigned long long)p->max_batch,
			       (unsigned long long)p->collapsed_items,
			       (double)(p->t_last - p->t_first) / 1e6);
	for (k = 0; k < PROF_NKINDS && off < sizeof(line); k++) {
		if (!p->n[k])
			continue;
		off += (size_t)snprintf(line + off, sizeof(line) - off,
					" %s %llu x %.3f us = %.3f ms;", kind_name[k],
					(unsigned long long)p->n[k],
					(double)p->ns[k] / 1e3 / (double)p->n[k],
					(double)p->ns[k] / 1e6);
	}
	if (off < sizeof(line))
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %llu polls not ready",
					(unsigned long long)p->ev_not_ready);
	if (p->copies && off < sizeof(line))
		snprintf(line + off, sizeof(line) - off,
			 "; %llu copies, %.1f MiB in flight %.3f ms (%.2f GB/s)",
			 (unsigned long long)p->copies, (double)p->copy_bytes / 1048576.0,
			 (double)p->copy_ns / 1e6,
			 p->copy_ns ? (double)p->copy_bytes / (double)p->copy_ns : 0.0);
	log_info("%s", line);
}
