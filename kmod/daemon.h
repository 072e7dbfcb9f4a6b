/* SPDX-License-Identifier: GPL-2.0 */
/* The daemon: attach/detach, the event queue, the daemon-side ioctls. */
#ifndef AXON_KMOD_DAEMON_H
#define AXON_KMOD_DAEMON_H

#include <linux/poll.h>
#include "axon_drv.h"

long axon_daemon_attach(struct file *file, struct axon_client *c,
			unsigned long flags);
void axon_daemon_detach(struct file *file, struct axon_client *c);
void axon_daemon_queue_locked(struct axon_client *c, u32 events);
void axon_daemon_doorbell(struct axon_client *c);
ssize_t axon_daemon_read(struct file *file, char __user *buf, size_t count);
__poll_t axon_daemon_poll(struct file *file, struct poll_table_struct *pt);
int axon_daemon_mmap(struct vm_area_struct *vma);

void axon_event_identity(struct axon_event *ev, struct axon_client *c);

long axon_daemon_client_fd(struct axon_client_fd __user *uf);

#endif
