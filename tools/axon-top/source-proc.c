// SPDX-License-Identifier: MIT
/*
 * source-proc.c - the kernel module as axon-top's source: /proc/axon/clients
 * for the table and generic netlink ("axon", see uapi/linux/axon.h) for
 * traces. NOT WIRED YET: the module does not exist, so this is the plug
 * point only. When it lands, fill a struct top_snapshot per sample with the
 * same fields source-axond.c fills (plus TOP_CAP_DEVICE / TOP_CAP_LIMIT /
 * TOP_CAP_CGROUP and the per-client device, mem_limit and cgroup), set
 * top_source_proc_available to 1, and "auto" will prefer it.
 */
#include <errno.h>
#include <stdio.h>

#include "source.h"

const int top_source_proc_available = 0;

static int proc_sample(struct top_source *src, struct top_snapshot *s, char *err,
		       size_t errlen)
{
	(void)src;
	(void)s;
	snprintf(err, errlen, "/proc/axon source not wired yet");
	return -ENOSYS;
}

static int proc_trace_open(struct top_source *src, struct top_trace_target *t,
			   char *err, size_t errlen)
{
	(void)src;
	(void)t;
	snprintf(err, errlen, "tracing through the kernel module is not wired yet");
	return -ENOSYS;
}

static int proc_trace_read(struct top_source *src, int fd,
			   struct axon_trace_event *ev, size_t max, char *err,
			   size_t errlen)
{
	(void)src;
	(void)fd;
	(void)ev;
	(void)max;
	snprintf(err, errlen, "tracing through the kernel module is not wired yet");
	return -ENOSYS;
}

const struct top_source_ops top_source_proc = {
	.name = "proc",
	.sample = proc_sample,
	.trace_open = proc_trace_open,
	.trace_read = proc_trace_read,
};
