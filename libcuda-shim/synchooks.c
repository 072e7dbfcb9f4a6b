// SPDX-License-Identifier: MIT
/*
 * The hook lists of synchooks.h. Filled by constructors, before any thread
 * of the program exists, so they need no lock; fixed arrays, because a
 * constructor cannot report failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "synchooks.h"

#define SYNC_HOOKS_MAX 4

static void (*sync_hooks[SYNC_HOOKS_MAX])(void);
static unsigned int nsync_hooks;

static void too_many(void)
{
	/* A build error, not a runtime one: a hook left out would leave
	 * its module's work undone. */
	fputs("axon: too many sync hooks (SYNC_HOOKS_MAX)\n", stderr);
	abort();
}

void shim_on_sync_point(void (*fn)(void))
{
	if (nsync_hooks == SYNC_HOOKS_MAX)
		too_many();
	sync_hooks[nsync_hooks++] = fn;
}

CUresult shim_sync_point(CUresult r)
{
	unsigned int i;

	for (i = 0; i < nsync_hooks; i++)
		sync_hooks[i]();
	return r;
}

uint32_t shim_stream_local_busy[AXON_MAX_FRONTIER];
