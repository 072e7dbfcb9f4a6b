/* SPDX-License-Identifier: MIT */
/*
 * What the supervisor and a worker process say to each other
 * (--isolation=process, supervisor.c and worker.c), one message per
 * SOCK_SEQPACKET record over the socketpair the supervisor made when it
 * started the worker. Both ends are the same binary, so the layout is not
 * an ABI: it never leaves the host or outlives an axond build.
 */
#ifndef AXOND_CTL_H
#define AXOND_CTL_H

#include <stdint.h>
#include <sys/types.h>

enum ctl_type {
	/* worker -> supervisor: initialised, a client may come; @value is
	 * device 0's memory in bytes (the supervisor opens no driver). */
	CTL_READY = 1,
	/* supervisor -> worker, with the connection (SCM_RIGHTS), its hello
	 * unread: serve this client; @value is the id it is to have. */
	CTL_CLIENT,
	/* supervisor -> worker, with the connection: a tracer of its client. */
	CTL_TRACE,
	/* supervisor -> worker: send your stats report. */
	CTL_STATS,
	/* worker -> supervisor, with a memfd holding its struct
	 * worker_report (report.h): @value bytes. */
	CTL_STATS_REPORT,
	/* worker -> supervisor: its client has gone and what the client
	 * held is given back; it ends when told (CTL_END). @value 1: the
	 * client hit a device fault, so its memory goes only with the
	 * worker's end: end it now. */
	CTL_IDLE,
	/* supervisor -> worker: end now. */
	CTL_END,
};

struct ctl_msg {
	uint32_t type;
	uint32_t resv;
	uint64_t value;
};

/* ctl.c. Sends one message, with fd attached unless it is -1: 0 or -EIO. */
int ctl_send(int sock, uint32_t type, uint64_t value, int fd);
/* Receives one: bytes read, 0 at the other end's close (or an error),
 * -EAGAIN when there is none (or it was malformed: logged, dropped); *fd
 * a descriptor it carried, else -1. */
ssize_t ctl_recv(int sock, struct ctl_msg *m, int *fd);

#endif
