/* SPDX-License-Identifier: MIT */
/*
 * The welcome on the wire (welcome.c): the answer to a hello, whoever
 * gives it. Below everything that answers hellos, so that none of them
 * calls up into the listener (server.c) to send one.
 */
#ifndef AXOND_WELCOME_H
#define AXOND_WELCOME_H

#include <stddef.h>
#include <linux/axon.h>

/* w and nfds (0..3) descriptors as SCM_RIGHTS; 0, or -EIO when it did
 * not go out whole. */
int welcome_send(int fd, const struct axon_welcome *w, const int *fds, int nfds);
/* The welcome, then the stats document doc (NULL: out of memory, which
 * the welcome then says). */
void welcome_send_stats(int fd, struct axon_welcome *w, const char *doc, size_t len);

#endif
