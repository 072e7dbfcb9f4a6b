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
/* 0 if p is what axon_region_layout() gives for its sizes, else -EPROTO. */
int axon_check_layout(const struct axon_params *p, uint64_t page_size,
		      const char *sender, char *err, size_t errlen);

/* kmod.c: the /dev/axon transport */
struct axon_ring;
int axon_kmod_connect(const char *path, const struct axon_params *req,
		      struct axon_ring *r, char *err, size_t errlen);
void axon_kmod_unmap(struct axon_ring *r);
int axon_kmod_doorbell(struct axon_ring *r, uint32_t n);
int axon_kmod_wait(struct axon_ring *r, uint64_t deadline_ns);
int axon_kmod_alive(struct axon_ring *r);

#endif
