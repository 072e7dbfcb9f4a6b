// SPDX-License-Identifier: MIT
/*
 * The forked child's forget list (forkreg.h). Registration happens in
 * constructors, before any thread of the program exists, so the list needs
 * no lock; a fixed array, because a constructor cannot report failure.
 */
#include <stdio.h>
#include <stdlib.h>

#include "forkreg.h"

/* One per module with state about the parent's objects; room for more. */
#define FORK_HANDLERS_MAX 32

static void (*handlers[FORK_HANDLERS_MAX])(void);
static unsigned int nhandlers;

void shim_fork_register(void (*fn)(void))
{
	if (nhandlers == FORK_HANDLERS_MAX) {
		/* A build error, not a runtime one: a child that kept its
		 * parent's handles would corrupt the parent's rings. */
		fputs("axon: too many fork handlers (FORK_HANDLERS_MAX)\n", stderr);
		abort();
	}
	handlers[nhandlers++] = fn;
}

void shim_fork_forget_all(void)
{
	unsigned int i;

	for (i = 0; i < nhandlers; i++)
		handlers[i]();
}
