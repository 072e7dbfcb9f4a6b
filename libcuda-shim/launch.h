/* SPDX-License-Identifier: MIT */
/* What launch.c offers the launch variants (launchex.c). */
#ifndef AXON_SHIM_LAUNCH_H
#define AXON_SHIM_LAUNCH_H

#include "shim.h"

struct shim_launch {
	CUfunction f;
	unsigned int grid[3], block[3], shmem;
	CUstream stream;
	void **params, **extra;
	/* Attributes in wire form, IGNORE entries dropped; 0: plain LAUNCH. */
	const struct axon_launch_attr *attrs;
	uint32_t nattrs;
};

/* Checks, packs and queues one launch (Deferred): LAUNCH, or LAUNCH_EX
 * when it carries attributes. */
CUresult shim_launch(const struct shim_launch *l);

#endif
