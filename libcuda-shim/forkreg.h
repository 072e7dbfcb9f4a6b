/* SPDX-License-Identifier: MIT */
/*
 * What a forked child forgets (forkreg.c). Each module that keeps state
 * about the parent's objects (handles, records, threads) registers how to
 * forget it, from a constructor; conn.c's fork handler runs them all in the
 * child. The connection itself does not know who they are: it sits below
 * every module that calls it.
 */
#ifndef AXON_SHIM_FORKREG_H
#define AXON_SHIM_FORKREG_H

/* At load time (a constructor): fn runs in every forked child of a
 * process that connected, with no lock held and one thread. */
void shim_fork_register(void (*fn)(void));
/* The child: every registered fn, in the order registered. */
void shim_fork_forget_all(void);

#endif
