/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the /dev/axon selftests: a minimal client (setup, map,
 * submit, reap, enter) and a minimal daemon (attach, events, map a client,
 * serve its SQ, post CQEs, notify). The fake daemon is the reference for
 * how axond drives the kernel transport; Documentation/kmod.rst points here.
 */
#ifndef AXON_SELFTEST_H
#define AXON_SELFTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <axon/protocol.h>

#define AXON_DEV	"/dev/axon"
#define NSEC_PER_SEC	1000000000ULL

/* Test opcode semantics served by the fake daemon (on AXON_OP_NOP):
 * aux[0] = obj.arg0 + 1; aux[1] = byte sum of data[obj.data_off, +data_len);
 * those data bytes are then inverted in place. */
#define FAKE_OP		AXON_OP_NOP

struct tclient {
	int fd;
	struct axon_params p;
	struct axon_client_page *cp;
	const struct axon_daemon_page *dp;
	const uint64_t *frontier;
	struct axon_sqe *sqes;
	const struct axon_cqe *cqes;
	unsigned char *data;
	const struct axon_info *info;
	uint32_t sq_tail;	/* private copy, published on submit */
};

int tclient_open(struct tclient *c);
int tclient_setup(struct tclient *c, uint32_t sq_entries, uint64_t data_size);
int tclient_map(struct tclient *c);
void tclient_close(struct tclient *c);
/* Queues one FAKE_OP SQE (not published); -EBUSY when the SQ is full. */
int tclient_queue(struct tclient *c, uint64_t user_data, uint64_t arg0,
		  uint32_t data_off, uint32_t data_len);
/* Publishes queued SQEs; rings the doorbell if the daemon asks for it. */
int tclient_submit(struct tclient *c, uint32_t n);
int tclient_enter(struct tclient *c, uint32_t to_submit, uint32_t min_complete,
		  uint32_t flags, uint64_t timeout_ns);
/* Waits (WAITING protocol) until a CQE is there, copies and consumes it. */
int tclient_wait_cqe(struct tclient *c, struct axon_cqe *out, int timeout_ms);
int tclient_peek_cqe(struct tclient *c, struct axon_cqe *out);
uint32_t tclient_cq_ready(struct tclient *c);

struct tdclient {
	uint64_t id;
	int fd;
	struct axon_params p;
	const struct axon_client_page *cp;
	struct axon_daemon_page *dp;
	const struct axon_sqe *sqes;
	struct axon_cqe *cqes;
	unsigned char *data;
	uint32_t sq_head, cq_tail;
	bool accepted;
};

#define TD_MAX_CLIENTS	64

struct tdaemon {
	int fd;
	int attach_ret;
	struct tdclient c[TD_MAX_CLIENTS];
	bool consume;		/* serve SQEs (else leave them queued) */
	uint64_t served;
};

int tdaemon_attach(struct tdaemon *d);
void tdaemon_close(struct tdaemon *d);
/* Reads one event, waiting up to timeout_ms; 1 got, 0 none, -errno. */
int tdaemon_event(struct tdaemon *d, struct axon_event *ev, int timeout_ms);
struct tdclient *tdaemon_find(struct tdaemon *d, uint64_t id);
struct tdclient *tdaemon_map(struct tdaemon *d, uint64_t id);
int tdaemon_accept(struct tdaemon *d, uint64_t id);
void tdaemon_forget(struct tdaemon *d, uint64_t id);
/* Serves every mapped client's SQ (admission: only with CQ room). */
int tdaemon_serve(struct tdaemon *d, struct tdclient *tc);
/* Handles one event the standard way: map+accept, serve, forget. */
int tdaemon_handle(struct tdaemon *d, const struct axon_event *ev);
/* Runs the loop until *stop or timeout_ms; returns events handled. */
int tdaemon_loop(struct tdaemon *d, int timeout_ms);
int tdaemon_charge(struct tdaemon *d, uint64_t id, uint64_t bytes, bool charge);
int tdaemon_notify(struct tdaemon *d, const uint64_t *ids, uint32_t n);

/* The fake daemon in a child process (killed with the returned pid). */
pid_t fake_daemon_spawn(bool consume);
void fake_daemon_kill(pid_t pid);
/* A forked client must not keep a daemon fd it inherited open. */
void close_inherited_fds(int keep);

/* Misc */
uint64_t now_ns(void);
int write_file(const char *path, const char *s);
int read_file(const char *path, char *buf, size_t len);
int set_param(const char *name, const char *val);
/* cgroup v2 (mounted at /sys/fs/cgroup): pid into cgroup cg (a path from
 * the root, "" for the root); 0 or -errno. cg_reset moves this process to
 * the root and removes the n cgroups named (children first). */
int cg_move(const char *cg, pid_t pid);
void cg_reset(const char *const *dirs, size_t n);
/* AXON_CMD_SET_LIMIT on a cgroup path (device memory); 0 or -errno. */
int genl_set_limit(const char *path, uint64_t limit);
long proc_field(const char *table, uint64_t key_id, const char *key_field,
		const char *field, char *out, size_t outlen);

#endif
