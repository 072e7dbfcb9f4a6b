/* SPDX-License-Identifier: GPL-2.0 */
/* The ioctls that act on one client, shared by the daemon's fd and delegates. */
#ifndef AXON_KMOD_CLIENTOPS_H
#define AXON_KMOD_CLIENTOPS_H

#include "axon_drv.h"

int axon_accept_args(struct axon_accept *a, const void __user *ua);
long axon_accept_client(struct axon_client *c, const struct axon_accept *a);
int axon_disconnect_args(struct axon_disconnect *d, const void __user *ud);
long axon_disconnect_client(struct axon_client *c,
			    const struct axon_disconnect *d);
int axon_notify_args(struct axon_notify *a, const void __user *un);
int axon_notify_only(const struct axon_notify *a, u64 id);
bool axon_notify_client(struct axon_client *c);
int axon_charge_args(struct axon_charge *a, const void __user *uc);
long axon_charge_client(struct axon_client *c, const struct axon_charge *a,
			bool charge);

/* On the daemon's fd: any client, by id. */
long axon_daemon_accept(struct axon_accept __user *ua);
long axon_daemon_disconnect(struct axon_disconnect __user *ud);
long axon_daemon_notify(struct axon_notify __user *un);
long axon_daemon_charge(struct axon_charge __user *uc, bool charge);

#endif
