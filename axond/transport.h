/* SPDX-License-Identifier: MIT */
/*
 * How axond reaches a client: one struct client_transport per transport
 * (redis's ConnectionType), transport-unix.c for the socket and
 * transport-kmod.c for /dev/axon. A client holds a pointer to its
 * transport and the transport's own state (union client_conn); the rest of
 * the daemon calls through the pointer and never asks which it has. A new
 * transport (tcp) is a new instance and a new member of the union.
 */
#ifndef AXOND_TRANSPORT_H
#define AXOND_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct axond;
struct client;
struct axon_hello;
struct axon_params;
struct axon_welcome;

/* A socket client's connection (transport-unix.c). */
struct client_sock {
	int fd;			/* the connection: hello, then host-memory fds */
	int doorbell_fd;	/* eventfd the client writes to wake us */
	int region_fd;		/* the region's memfd, sent in the welcome */
	void *region;		/* the region, mapped whole */
	bool pooled;		/* the region came from the pool (pool.c) */
};

/*
 * A kernel client's (transport-kmod.c). Its ioctls (ACCEPT, CHARGE,
 * UNCHARGE, NOTIFY, DISCONNECT) go through the descriptor that acts for
 * it: the daemon's attached fd, or, in a worker of process isolation, the
 * delegate its supervisor handed over (@delegate), which also carries the
 * client's doorbells and its end.
 */
struct client_kmod {
	int fd;			/* its AXON_IOC_CLIENT_FD descriptor */
	bool delegate;		/* @fd was made with AXON_CLIENT_FD_DELEGATE */
	void *maps[6];		/* its region, one mapping per part */
	size_t map_len[6];
};

/* The state of the client's own transport, named by client->xport. */
union client_conn {
	struct client_sock sock;
	struct client_kmod kmod;
};

/**
 * struct client_transport - one transport's side of its clients
 * @name:	"unix", "kmod": logs
 * @stats_id:	STATS_TRANSPORT_* (stats.h): the stats document's name for it
 * @features:	AXON_FEAT_* bits only this transport can offer
 * @init:	marks the state as holding nothing, before anything can fail
 * @wake:	wakes a client asleep on its CQ (it set AXON_CQ_F_WAITING)
 * @charge:	charges @bytes of device memory to the client before they are
 *		backed: 0, or -EDQUOT past a limit; a transport without
 *		enforced identity charges nothing and returns 0
 * @uncharge:	gives back what @charge took
 * @recvmsg:	receives one message (and descriptors) sent after the hello:
 *		bytes, or -errno (-EAGAIN: none waiting). NULL where nothing
 *		can be sent after the hello.
 * @event:	an epoll event on a descriptor the transport registered for
 *		the client (@tag as registered). NULL if it registers none.
 * @disconnect:	ends the connection from our side with @error, which the
 *		client's end sees where the transport can say it; the daemon's
 *		own teardown (client_disconnect) follows, at once or when the
 *		event loop sees the connection end
 * @close:	client_disconnect: stops the client's events and closes what
 *		only the connection needed
 * @fini:	client_free: releases the region's mappings and descriptors
 */
struct client_transport {
	const char *name;
	uint32_t stats_id;
	uint32_t features;
	void (*init)(struct client *c);
	void (*wake)(struct axond *d, struct client *c);
	int (*charge)(struct axond *d, struct client *c, uint64_t bytes);
	void (*uncharge)(struct axond *d, struct client *c, uint64_t bytes);
	ssize_t (*recvmsg)(struct client *c, struct msghdr *msg, int flags);
	void (*event)(struct axond *d, struct client *c, uint64_t tag, uint32_t events);
	void (*disconnect)(struct axond *d, struct client *c, int error);
	void (*close)(struct axond *d, struct client *c);
	void (*fini)(struct axond *d, struct client *c);
};

extern const struct client_transport unix_transport;	/* transport-unix.c */
extern const struct client_transport kmod_transport;	/* transport-kmod.c */

/* transport-unix.c: a client from a hello on a socket */
struct client *client_create(struct axond *d, int sock_fd,
			     const struct axon_hello *hello,
			     struct axon_welcome *w);
void unix_client_hello(struct axond *d, int fd, const struct axon_hello *hello,
		       struct axon_welcome *w);
int client_default_geometry(struct axond *d, struct axon_params *p);

/* transport-kmod.c: the daemon's attachment to /dev/axon */
struct axon_event;
int kmod_attach(struct axond *d);
void kmod_events(struct axond *d);
void kmod_detach(struct axond *d);
/* A worker's client through the delegate fd its supervisor sent (takes
 * fd): the identity the kernel reported in ev, the geometry in params.
 * 0, or -errno with the client refused and fd closed. */
int kmod_adopt(struct axond *d, int fd, const struct axon_event *ev,
	       const struct axon_params *params);

#endif
