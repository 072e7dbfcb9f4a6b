/* SPDX-License-Identifier: GPL-2.0 */
/* Delegates: client fds that also act for their client. */
#ifndef AXON_KMOD_DELEGATE_H
#define AXON_KMOD_DELEGATE_H

#include "axon_drv.h"

struct file *axon_delegate_file(struct axon_client *c);
int axon_delegate_link(struct file *file);
void axon_delegate_post_locked(struct axon_delegate *d, u32 events);
void axon_delegate_cut_locked(struct axon_client *c);
struct axon_client *axon_delegate_file_client(struct file *file);

#endif
