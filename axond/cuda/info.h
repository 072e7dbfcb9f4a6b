/* SPDX-License-Identifier: MIT */
/* The cuda backend's info page (info.c). */
#ifndef AXOND_CUDA_INFO_H
#define AXOND_CUDA_INFO_H

#include <stddef.h>

struct axond;

/*
 * Fills d->info from the driver (cuInit done): versions, every device's
 * name, memory, attributes and granularity; and cu.dev[] and cu.ndev.
 * 0, or -ENODEV with err filled.
 */
int cu_fill_info(struct axond *d, char *err, size_t errlen);

#endif
