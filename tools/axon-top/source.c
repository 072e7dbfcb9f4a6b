// SPDX-License-Identifier: MIT
/* source.c - picking and closing axon-top's data source (source.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"

static bool proc_readable(const char *dir)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/clients", dir);
	if (access(path, R_OK))
		return false;
	snprintf(path, sizeof(path), "%s/stats", dir);
	return !access(path, R_OK);
}

int top_source_open(const char *kind, const char *addr, const char *proc_dir,
		    struct top_source **out, char *err, size_t errlen)
{
	const struct top_source_ops *ops;
	struct top_source *src;

	if (!proc_dir || !*proc_dir)
		proc_dir = TOP_PROC_DIR;
	if (strlen(proc_dir) >= sizeof(src->proc_dir)) {
		snprintf(err, errlen, "--proc-dir path too long");
		return -ENAMETOOLONG;
	}
	if (!kind || !strcmp(kind, "auto")) {
		const char *env = getenv("AXON_ADDR");

		/* A daemon named with --addr or $AXON_ADDR is asked for. */
		if ((addr && *addr) || (env && *env))
			ops = &top_source_axond;
		else
			ops = top_source_proc_available && proc_readable(proc_dir)
				? &top_source_proc : &top_source_axond;
	} else if (!strcmp(kind, "axond")) {
		ops = &top_source_axond;
	} else if (!strcmp(kind, "proc")) {
		if (!top_source_proc_available) {
			snprintf(err, errlen, "the /proc/axon source is not wired yet "
				 "(it needs the axon kernel module); use --source axond");
			return -ENOSYS;
		}
		ops = &top_source_proc;
	} else {
		snprintf(err, errlen, "unknown source '%s' (auto, axond or proc)", kind);
		return -EINVAL;
	}
	src = calloc(1, sizeof(*src));
	if (!src) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	src->ops = ops;
	if (addr)
		snprintf(src->addr, sizeof(src->addr), "%s", addr);
	snprintf(src->proc_dir, sizeof(src->proc_dir), "%s", proc_dir);
	*out = src;
	return 0;
}

void top_source_close(struct top_source *src)
{
	if (!src)
		return;
	if (src->ops->destroy)
		src->ops->destroy(src);
	free(src);
}
