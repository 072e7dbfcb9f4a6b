/* SPDX-License-Identifier: MIT */
/*
 * A hello's route in a daemon that serves its clients itself (hello.c).
 */
#ifndef AXOND_HELLO_H
#define AXOND_HELLO_H

#include <stdint.h>

struct axond;

/* The pending connection of epoll tag tag sent its hello (or hung up):
 * read it (server_hello_read) and hand the connection to what it asks
 * for. A stale tag does nothing. */
void hello_route(struct axond *d, uint64_t tag);

#endif
