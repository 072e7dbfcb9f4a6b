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
#include <linux/axon.h>

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
	/* supervisor -> worker, with the client's delegate descriptor
	 * (AXON_CLIENT_FD_DELEGATE) and a struct ctl_kclient: serve this
	 * /dev/axon client through it; @value is the id it is to have. */
	CTL_KCLIENT,
	/* worker -> supervisor, before CTL_READY: @value is what one
	 * context costs on device 0 as its backend measured it (0: not
	 * known); later workers are given the first worker's figure. */
	CTL_CTX_COST,
};

struct ctl_msg {
	uint32_t type;
	uint32_t resv;
	uint64_t value;
};

/*
 * What follows a CTL_KCLIENT: the client as the kernel reported it to the
 * supervisor (the AXON_EV_OPEN or AXON_EV_EXISTING record: id, pid, uid,
 * gid, cgroup, start time, comm) and the geometry AXON_IOC_CLIENT_FD gave.
 * The worker takes the client's identity from here and nowhere else.
 */
struct ctl_kclient {
	struct axon_event ev;
	struct axon_params params;
};

/* ctl.c. Sends one message, with fd attached unless it is -1: 0 or -EIO. */
int ctl_send(int sock, uint32_t type, uint64_t value, int fd);
/* The same with a struct ctl_kclient after it (CTL_KCLIENT). */
int ctl_send_kclient(int sock, uint64_t value, const struct ctl_kclient *kc, int fd);
/* Receives one: bytes read, 0 at the other end's close (or an error),
 * -EAGAIN when there is none (or it was malformed: logged, dropped); *fd
 * a descriptor it carried, else -1. A CTL_KCLIENT is well formed only
 * with kc to receive its struct ctl_kclient (and exactly that many
 * bytes); every other type, only without trailing bytes. */
ssize_t ctl_recv(int sock, struct ctl_msg *m, struct ctl_kclient *kc, int *fd);

#endif
