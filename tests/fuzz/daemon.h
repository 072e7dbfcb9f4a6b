/* SPDX-License-Identifier: MIT */
/*
 * An axond inside the fuzzer's process: the sim backend and its executor
 * thread, no socket. The fuzzers create clients on it with client_create()
 * (a socket descriptor of -1: no peer credentials, nothing to send) and
 * drive their rings by hand.
 */
#ifndef AXON_FUZZ_DAEMON_H
#define AXON_FUZZ_DAEMON_H

#include "axond.h"

/* The daemon, made on the first call (aborts if it cannot be). */
struct axond *fuzz_daemon(void);

/*
 * A client with a small geometry (64 SQEs, 64 KiB data area), or NULL
 * with w's message. Hellos of other sizes are fuzz-hello's business.
 */
struct client *fuzz_client_new(struct axond *d, struct axon_welcome *w);

/*
 * Runs the dispatcher for c (NULL: only the done queue) until c's SQ is
 * empty and none of its work is queued on the executor, consuming its
 * completions as a client would; cqes (may be NULL) gets each completion,
 * in order, up to ncqes. Returns how many completions were posted. Aborts
 * after 10 s without progress: a hang is a finding.
 */
unsigned int fuzz_settle(struct axond *d, struct client *c, struct axon_cqe *cqes,
			 unsigned int ncqes);

/* Disconnects c and waits until the daemon freed it (and all its work). */
void fuzz_client_end(struct axond *d, struct client *c);

#endif
