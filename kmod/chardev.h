/* SPDX-License-Identifier: GPL-2.0 */
/* The /dev/axon misc device: file operations and the ioctl table. */
#ifndef AXON_KMOD_CHARDEV_H
#define AXON_KMOD_CHARDEV_H

int axon_chardev_init(void);
void axon_chardev_uninit(void);

#endif
