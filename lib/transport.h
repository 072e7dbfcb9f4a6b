/* SPDX-License-Identifier: MIT */
/*
 * Transports inside libaxon; not installed.
 *
 * A transport is how a ring reaches its daemon: one struct
 * axon_transport_ops instance each (unix.c: the socket; kmod.c: /dev/axon),
 * chosen once by axon_connect and kept in ring->ops. The rings themselves
 * are shared memory on every transport, so the rest of the library
 * (queue.c, setup.c) never asks which one it has: only connecting, ringing
 * the daemon, sleeping, noticing that the daemon went and passing a
 * descriptor differ.
 */
#ifndef AXON_LIB_TRANSPORT_H
#define AXON_LIB_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <axon/protocol.h>

struct axon_ring;

/**
 * struct axon_transport_ops - one transport
 * @name:	"unix", "kmod"
 * @id:		AXON_TRANSPORT_*, what ring->transport shows callers
 * @connect:	sets the ring up at @path (the transport's form of the
 *		address; NULL: its default): the region and info page mapped,
 *		params checked (axon_check_layout) and copied, the ring's
 *		pointers and descriptors filled. On failure it releases what it
 *		took; the caller resets the ring.
 * @doorbell:	tells a daemon that announced it sleeps (NEED_WAKEUP) that
 *		@n more SQEs are published. 0, -EPIPE once the daemon is gone,
 *		or another -errno.
 * @wait:	sleeps at most @slice_ns, or until the CQ tail moves from
 *		@seen_tail (a wake-up from the daemon); 0 whatever woke it (the
 *		caller re-checks the CQ and the daemon), or a -errno that ends
 *		the wait (kernel: the error the daemon disconnected us with).
 * @alive:	without blocking: 0 while the connection stands, -EPIPE once
 *		the daemon closed it.
 * @send_fd:	sends the message @msg of @len bytes with descriptor @fd
 *		(shared host memory). NULL where no descriptor can cross.
 * @close:	unmaps and closes everything @connect set up.
 */
struct axon_transport_ops {
	const char *name;
	int id;
	int (*connect)(const char *path, const struct axon_params *req,
		       struct axon_ring *r, char *err, size_t errlen);
	int (*doorbell)(struct axon_ring *r, uint32_t n);
	int (*wait)(struct axon_ring *r, uint32_t seen_tail, uint64_t slice_ns);
	int (*alive)(struct axon_ring *r);
	int (*send_fd)(struct axon_ring *r, const void *msg, size_t len, int fd);
	void (*close)(struct axon_ring *r);
};

extern const struct axon_transport_ops axon_transport_unix;	/* unix.c */
extern const struct axon_transport_ops axon_transport_kmod;	/* kmod.c */

/* setup.c */
void axon_set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *axon_default_addr(void);
/* 0 if p is what axon_region_layout() gives for its sizes with pages of
 * page_size, else -EPROTO and a sentence naming sender. */
int axon_check_layout(const struct axon_params *p, uint64_t page_size,
		      const char *sender, char *err, size_t errlen);

/* unix.c: the socket's hello and welcome, for the stats connection too */
int axon_open_socket(const char *addr, char *err, size_t errlen);
int axon_send_hello(int fd, uint32_t kind, const struct axon_params *req);
int axon_recv_welcome(int fd, struct axon_welcome *w, int *fds, int nfds,
		      char *err, size_t errlen);

#endif
