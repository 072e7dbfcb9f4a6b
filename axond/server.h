/* SPDX-License-Identifier: MIT */
/*
 * The unix socket's listener (server.c): listening, accepting, the
 * connections that have not said hello yet, and reading and checking a
 * hello. Dispatcher thread.
 */
#ifndef AXOND_SERVER_H
#define AXOND_SERVER_H

#include <stdint.h>
#include <sys/types.h>

struct axond;
struct axon_hello;
struct axon_welcome;

int server_listen(struct axond *d);
void server_accept(struct axond *d);
/* A connection joins the pending ones (accepted here, or handed to a
 * worker by its supervisor); takes fd. */
int server_adopt(struct axond *d, int fd);
unsigned int server_npending(void);
/* Closes connections past their hello deadline; ms to the next one, -1:
 * none. */
int server_expire(struct axond *d);
/* Reads the hello of pending connection tag into h and starts w, the
 * welcome that answers it (magic and ABI). A hello that fails its checks
 * is answered and closed here: -1. Else the connection's fd. A descriptor
 * sent with the hello goes to *passed (-1: none; passed NULL: closed). */
int server_hello_read(struct axond *d, uint64_t tag, struct axon_hello *h,
		      struct axon_welcome *w, int *passed);
int server_hello_check(const struct axon_hello *h, ssize_t n, struct axon_welcome *w);
void server_close(struct axond *d);
/* Keep the listening socket open for the process a restart execs. */
#define AXOND_LISTEN_FD_ENV "AXOND_LISTEN_FD"
void server_handover(struct axond *d);
/* After close_range(CLOSE_RANGE_CLOEXEC), before the restart's exec: the
 * socket and the address lock stay open in the new process. */
void server_keep_across_exec(struct axond *d);

#endif
