/* SPDX-License-Identifier: GPL-2.0 */
/* Per-user limits: clients open and region memory held, by real uid. */
#ifndef AXON_KMOD_USER_H
#define AXON_KMOD_USER_H

#include <linux/types.h>
#include <linux/uidgid.h>

struct axon_user;

struct axon_user *axon_user_get(kuid_t uid, bool limited);
void axon_user_put(struct axon_user *u);
int axon_user_charge_region(struct axon_user *u, u64 bytes, bool limited);
void axon_user_uncharge_region(struct axon_user *u, u64 bytes);
void axon_user_uninit(void);

#endif
