/* SPDX-License-Identifier: GPL-2.0 */
/* Generic netlink family "axon": queries, limits, monitoring events. */
#ifndef AXON_KMOD_NETLINK_H
#define AXON_KMOD_NETLINK_H

#include <linux/types.h>

struct axon_client;

int axon_nl_init(void);
void axon_nl_uninit(void);
void axon_nl_client_event(u32 event, struct axon_client *c);
void axon_nl_daemon_event(u32 event, pid_t pid);
void axon_nl_limit_event(struct axon_client *c, u64 cgroup_id,
			 unsigned int kind, u64 bytes, u64 usage, u64 limit);

#endif
