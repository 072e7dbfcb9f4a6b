/* SPDX-License-Identifier: MIT */
/* Socket-transport helpers shared by libaxon's files; not installed. */
#ifndef AXON_LIB_TRANSPORT_H
#define AXON_LIB_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <linux/axon.h>

const char *axon_default_addr(void);
int axon_open_socket(const char *addr, char *err, size_t errlen);
int axon_send_hello(int fd, uint32_t kind, const struct axon_params *req);
int axon_recv_welcome(int fd, struct axon_welcome *w, int *fds, int nfds,
		      char *err, size_t errlen);

#endif
