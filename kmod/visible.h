/* SPDX-License-Identifier: GPL-2.0 */
/* Which clients and cgroups a reader may see in /proc and netlink. */
#ifndef AXON_KMOD_VISIBLE_H
#define AXON_KMOD_VISIBLE_H

#include <linux/types.h>

struct axon_client;
struct cgroup;
struct cred;

/**
 * struct axon_viewer - who is looking
 * @cred:	the credentials the file or socket read was opened with
 *		(file->f_cred)
 * @task_too:	the reading task's must allow it as well (netlink, as
 *		netlink_capable() does); /proc goes by @cred alone, as the
 *		kernel's own /proc files do
 */
struct axon_viewer {
	const struct cred *cred;
	bool task_too;
};

bool axon_cgroup_visible(struct cgroup *cgrp, const struct axon_viewer *v);
bool axon_client_visible(struct axon_client *c, const struct axon_viewer *v);

#endif
