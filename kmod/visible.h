/* SPDX-License-Identifier: GPL-2.0 */
/* Which clients and cgroups the current task may see in /proc and netlink. */
#ifndef AXON_KMOD_VISIBLE_H
#define AXON_KMOD_VISIBLE_H

#include <linux/types.h>

struct axon_client;
struct cgroup;

bool axon_sees_all(void);
bool axon_cgroup_visible(struct cgroup *cgrp);
bool axon_client_visible(struct axon_client *c);

#endif
