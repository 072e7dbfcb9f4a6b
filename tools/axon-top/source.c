// SPDX-License-Identifier: MIT
/* source.c - picking and closing axon-top's data source (source.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"

int top_source_open(const char *kind, const char *addr, struct top_source **out,
		    char *err, size_t errlen)
{
	const struct top_source_ops *ops;
	struct top_source *src;

	if (!kind || !strcmp(kind, "auto")) {
		ops = top_source_proc_available && !access("/proc/axon/clients", R_OK)
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
