// SPDX-License-Identifier: MIT
/*
 * The host work of captured graphs (shim.h): its reference count, and
 * what its last put frees (each node's staging memory, argument and
 * reference, and the event that orders the graph's launches). Below the
 * modules that hold references (capture.c, graph.c, hostfunc.c, copy.c):
 * the order event is graph.c's, destroyed through the hook graph.c
 * registers.
 */
#include <stdlib.h>

#include "shim.h"

/* graph.c's, which made the event (shim_hostwork_on_order_release). */
static void (*order_release)(CUevent order);

void shim_hostwork_on_order_release(void (*fn)(CUevent order))
{
	order_release = fn;
}

void shim_hostwork_get(struct shim_hostwork *hw)
{
	__atomic_fetch_add(&hw->refs, 1, __ATOMIC_RELAXED);
}

void shim_hostwork_unget(struct shim_hostwork *hw)
{
	__atomic_fetch_sub(&hw->refs, 1, __ATOMIC_RELAXED);
}

void shim_hostnode_release(struct shim_hostnode *n)
{
	/* After the last launch that used it: the daemon lets the region go
	 * once the work queued before is done (hostmem.c). */
	if (n->stage)
		cuMemFreeHost(n->stage);
	if (n->free_arg)
		free(n->arg);
	if (n->keep)
		shim_hostwork_put(n->keep);
}

void shim_hostwork_put(struct shim_hostwork *hw)
{
	uint32_t i;

	if (!hw || __atomic_sub_fetch(&hw->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (i = 0; i < hw->n; i++)
		shim_hostnode_release(&hw->node[i]);
	if (hw->order)
		order_release(hw->order);
	free(hw->node);
	free(hw);
}
