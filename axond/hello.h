/* SPDX-License-Identifier: MIT */
/*
 * A hello's route in a daemon that serves its clients itself (hello.c).
 */
#ifndef AXOND_HELLO_H
#define AXOND_HELLO_H

#include <stdint.h>

struct axond;

/* --transport=kmod: what a socket client's hello is answered (-EPERM),
 * so that with the module loaded no client escapes its accounting. */
#define HELLO_KMOD_ONLY	"this daemon serves only /dev/axon clients (--transport=kmod)"

/* The pending connection of epoll tag tag sent its hello (or hung up):
 * read it (server_hello_read) and hand the connection to what it asks
 * for. A stale tag does nothing. */
void hello_route(struct axond *d, uint64_t tag);

#endif
