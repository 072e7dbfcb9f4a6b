// SPDX-License-Identifier: MIT
/*
 * The machine's CPUs as the shim's waits see them (cpus.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpus.h"

unsigned int cpus_cgroup_limit(const char *proc_cgroup, const char *cgroup_root)
{
	char line[4096], path[8448], *cg = NULL, *slash;
	unsigned int best = 0;
	FILE *f = fopen(proc_cgroup, "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			cg = line + 3;
			cg[strcspn(cg, "\n")] = 0;
			break;
		}
	fclose(f);
	/* This cgroup, then each one above it up to (not) the root. */
	while (cg && *cg == '/') {
		unsigned long long quota, period;
		char buf[64];
		FILE *m;

		snprintf(path, sizeof(path), "%s%s/cpu.max", cgroup_root, cg);
		m = fopen(path, "re");
		if (m) {
			if (fgets(buf, sizeof(buf), m) &&
			    sscanf(buf, "%llu %llu", &quota, &period) == 2 && period) {
				unsigned long long n = (quota + period - 1) / period;

				if (n && (!best || n < best))
					best = n > ~0U ? ~0U : (unsigned int)n;
			}
			fclose(m);
		}
		slash = strrchr(cg, '/');
		if (slash == cg)
			break;
		*slash = 0;
	}
	return best;
}

bool cpus_loadavg_running(const char *text, unsigned long *running)
{
	const char *p = text;
	char *end;
	int field = 0;

	for (; *p && field < 3; p++)
		if (*p == ' ')
			field++;
	if (field < 3 || *p < '0' || *p > '9')
		return false;
	*running = strtoul(p, &end, 10);
	return *end == '/';
}
