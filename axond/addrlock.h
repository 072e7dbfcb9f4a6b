/* SPDX-License-Identifier: MIT */
/*
 * addrlock.h - one axond per listening address.
 */
#ifndef AXOND_ADDRLOCK_H
#define AXOND_ADDRLOCK_H

/* The lock's descriptor number across a restart's exec (server.c). */
#define AXOND_LOCK_FD_ENV "AXOND_LOCK_FD"

/*
 * Takes the lock of the socket at sock_path ("<sock_path>.lock"), or the
 * one a restarting axond handed over: the descriptor (close-on-exec), or
 * -EADDRINUSE when another axond holds it (logged with its pid), or
 * another negative errno (logged).
 */
int addr_lock(const char *sock_path);
/* Before a restart's exec: keep fd open in the new process and name it. */
void addr_lock_handover(int fd);

#endif
