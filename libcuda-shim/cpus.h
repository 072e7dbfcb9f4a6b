/* SPDX-License-Identifier: MIT */
/*
 * What the shim reads about the machine's CPUs to decide how to wait
 * (conn.c wait_spin_ns): a cgroup v2 CPU quota and the running count in
 * /proc/loadavg. Pure functions of the files and text they are given, so
 * they are tested apart (tests/unit-cpus.c).
 */
#ifndef AXON_SHIM_CPUS_H
#define AXON_SHIM_CPUS_H

#include <stdbool.h>

/*
 * The whole CPUs a cgroup v2 quota allows this process: the smallest
 * ceil(QUOTA / PERIOD) of the cpu.max files ("QUOTA PERIOD" or "max
 * PERIOD") of its cgroup (the "0::" line of proc_cgroup, e.g.
 * /proc/self/cgroup) and every cgroup above it, under cgroup_root (e.g.
 * /sys/fs/cgroup). 0 when none limits it or the files cannot be read.
 */
unsigned int cpus_cgroup_limit(const char *proc_cgroup, const char *cgroup_root);

/* The running count, the fourth field's number before '/', of
 * /proc/loadavg's text ("0.50 0.40 0.30 3/812 4242"); false when the text
 * is not of that form. */
bool cpus_loadavg_running(const char *text, unsigned long *running);

#endif
