/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/axon/{stats,clients,cgroups} */
#ifndef AXON_KMOD_PROC_H
#define AXON_KMOD_PROC_H

#include <linux/types.h>
#include <linux/axon.h>

void axon_stats_read(u64 v[AXON_STAT_MAX + 1]);
int axon_proc_init(void);
void axon_proc_uninit(void);

#endif
