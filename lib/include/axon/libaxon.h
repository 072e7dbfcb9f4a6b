/* SPDX-License-Identifier: MIT */
/*
 * libaxon: the raw ring API of axon, in the style of liburing.
 *
 * A client connects to the daemon (axon_connect), then for each request
 * takes an SQE (axon_get_sqe), fills it (axon_prep_<op>), publishes
 * a batch (axon_submit) and reaps completions (axon_peek_cqe, axon_wait_cqe,
 * axon_cqe_seen). The fast path is inline and makes no system call: a
 * submission is stores into shared memory plus, only when the daemon sleeps,
 * one doorbell write.
 *
 * Every call returns 0 or a negative errno; errno is never the interface.
 * A struct axon_ring is not thread-safe: callers serialise submission and
 * reaping (the CUDA shim does, with its own locks).
 *
 * See Documentation/libaxon.md for examples.
 */
#ifndef AXON_LIBAXON_H
#define AXON_LIBAXON_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>
#include <axon/protocol.h>
#include <axon/prep.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Acquire/release on the shared indices; each use names its pair. */
#define axon_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define axon_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define axon_read_once(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define axon_write_once(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define axon_smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

struct axon_transport_ops;	/* libaxon's own (lib/transport.h) */

/**
 * struct axon_ring - one connection to the daemon
 * The first pointers point into the shared region; the rest is the
 * client's private state.
 */
struct axon_ring {
	struct axon_client_page	*cpage;		/* ours: sq_tail, cq_head */
	const struct axon_daemon_page *dpage;	/* daemon's: heads, flags */
	const uint64_t		*frontier;	/* per stream slot */
	struct axon_sqe		*sqes;
	const struct axon_cqe	*cqes;
	unsigned char		*data;		/* data area */
	uint64_t		data_size;
	const struct axon_info	*info;		/* global read-only page */

	uint32_t		sq_mask, sq_entries;
	uint32_t		cq_mask, cq_entries;
	uint32_t		sq_tail;	/* local, published by submit */
	uint32_t		cq_head;	/* local, published by seen */

	struct axon_params	params;
	/* How this ring reaches the daemon, chosen by axon_connect. */
	const struct axon_transport_ops *ops;
	int			transport;	/* AXON_TRANSPORT_* (ops' id) */
	void			*region;	/* unix: the one mapping */
	size_t			region_size;
	size_t			info_size;
	int			sock_fd;	/* unix: the connection */
	int			doorbell_fd;	/* unix: eventfd doorbell */
	int			dev_fd;		/* kmod: the /dev/axon client */
	void			*maps[7];	/* kmod: one mapping per part */
	size_t			map_len[7];
	unsigned int		spin_ns;	/* busy-poll before sleeping;
						 * AXON_SPIN_FOREVER: never sleep */
	uint64_t		doorbells;	/* doorbell writes (stats) */
	uint64_t		sleeps;		/* futex sleeps (stats) */
	int			dmem;		/* kmod: charges need our
						 * reservation (axon_reserve) */
};

/* ring->spin_ns: wait for completions without ever sleeping. */
#define AXON_SPIN_FOREVER	0xffffffffU

enum {
	AXON_TRANSPORT_UNIX = 1,	/* unix socket + memfd: advisory */
	AXON_TRANSPORT_KMOD = 2,	/* /dev/axon: identity and accounting
					 * enforced by the kernel */
};

/**
 * axon_connect() - connect to the daemon and map the shared region
 * @addr:	"unix:PATH", "kmod:PATH" or "/dev/axon"; NULL means $AXON_ADDR,
 *		else /dev/axon when it exists and a daemon serves it, else
 *		AXON_DEFAULT_SOCKET
 * @req:	requested sizes (NULL: defaults); flags and resv must be zero
 * @ring:	filled in on success
 * @err, @errlen: an explanation on failure (may be NULL)
 *
 * Returns 0, -EPROTO on an ABI mismatch, -ECONNREFUSED / -ENOENT when no
 * daemon listens, or another negative errno.
 */
int axon_connect(const char *addr, const struct axon_params *req,
		 struct axon_ring *ring, char *err, size_t errlen);

/** axon_close() - unmap and disconnect; the daemon frees what we held. */
void axon_close(struct axon_ring *ring);

/**
 * axon_get_sqe() - the next free SQE, zeroed, or NULL when the SQ is full
 * The caller fills opcode, flags and arguments and sets user_data.
 */
static inline struct axon_sqe *axon_get_sqe(struct axon_ring *r)
{
	/* Pairs with the daemon's release of sq_head after reading SQEs. */
	uint32_t head = axon_load_acquire(&r->dpage->sq_head);
	struct axon_sqe *sqe;

	if (r->sq_tail - head >= r->sq_entries)
		return NULL;
	sqe = &r->sqes[r->sq_tail & r->sq_mask];
	r->sq_tail++;
	memset(sqe, 0, sizeof(*sqe));
	return sqe;
}

/** axon_sq_space() - free SQ slots right now */
static inline uint32_t axon_sq_space(const struct axon_ring *r)
{
	return r->sq_entries - (r->sq_tail - axon_load_acquire(&r->dpage->sq_head));
}

/**
 * axon_submit() - publish the SQEs taken since the last submit
 * Rings the doorbell only if the daemon announced it is asleep.
 * Returns the number published or a negative errno (-EPIPE: daemon gone).
 */
int axon_submit(struct axon_ring *ring);

/**
 * axon_peek_cqe() - the oldest unseen completion without waiting
 * Returns 0 and sets *cqe, or -EAGAIN when there is none.
 */
static inline int axon_peek_cqe(struct axon_ring *r, const struct axon_cqe **cqe)
{
	/* Pairs with the daemon's release of cq_tail after writing CQEs. */
	uint32_t tail = axon_load_acquire(&r->dpage->cq_tail);

	if (tail == r->cq_head)
		return -EAGAIN;
	*cqe = &r->cqes[r->cq_head & r->cq_mask];
	return 0;
}

/**
 * axon_cqe_seen() - release the completion returned by peek/wait
 * Must be called once per completion consumed, after its fields are read.
 */
static inline void axon_cqe_seen(struct axon_ring *r)
{
	r->cq_head++;
	/* CQE reads above must not pass this store (daemon reuses the slot). */
	axon_store_release(&r->cpage->cq_head, r->cq_head);
}

/**
 * axon_wait_cqe() - wait for a completion
 * @timeout_ns:	relative timeout, 0 for none
 * Spins for ring->spin_ns, then sleeps on the CQ tail; with
 * AXON_SPIN_FOREVER it polls until the completion comes, yielding the CPU
 * between polls after the first 50 us and checking every 100 ms that the
 * daemon lives. Returns 0 and sets *cqe, -ETIMEDOUT, or
 * -EPIPE when the daemon went away.
 */
int axon_wait_cqe(struct axon_ring *ring, const struct axon_cqe **cqe,
		  uint64_t timeout_ns);

/**
 * axon_frontier() - completed operations of a stream slot
 */
static inline uint64_t axon_frontier(const struct axon_ring *r, uint32_t slot)
{
	if (slot >= r->params.frontier_entries)
		return 0;
	/* Pairs with the daemon's release when it advances the frontier. */
	return axon_load_acquire(&r->frontier[slot]);
}

/**
 * axon_daemon_alive() - 0 while the daemon serves us, -EPIPE once it is gone
 * Costs one poll() system call.
 */
int axon_daemon_alive(struct axon_ring *ring);

/**
 * axon_send_fd() - send a message with a descriptor to the daemon
 * @msg, @len:	the message (struct axon_hostmem_fd for shared host memory)
 * @fd:		the descriptor; the caller keeps its own copy
 * Only the socket transport carries descriptors (AXON_FEAT_HOSTMEM says
 * the daemon takes them). Returns 0, -EOPNOTSUPP on a transport that
 * cannot, -EPIPE when the daemon is gone, or another negative errno.
 */
int axon_send_fd(struct axon_ring *ring, const void *msg, size_t len, int fd);

/**
 * axon_read_stats() - fetch the daemon's stats document (JSON)
 * @addr:	as for axon_connect
 * @json:	on success a malloc'd NUL-terminated string the caller frees
 */
int axon_read_stats(const char *addr, char **json, char *err, size_t errlen);

/**
 * struct axon_dlimit - a cgroup's device-memory limit for socket clients, as
 * axond keeps it (AXON_HELLO_LIMIT)
 * @limit:	bytes, AXON_LIMIT_NONE for none
 * @usage:	what its socket clients and its descendants' are charged
 * @peak:	the highest usage
 * @failcnt:	charges refused at this cgroup's limit
 */
struct axon_dlimit {
	uint64_t limit, usage, peak, failcnt;
};

/**
 * axon_daemon_limit() - read, or set, a cgroup's limit in axond
 * @addr:	as for axon_read_stats
 * @cgroup_fd:	an open cgroup v2 directory (O_RDONLY | O_DIRECTORY)
 * @set:	non-zero: set the limit to @limit (else read it)
 * @out:	the cgroup's figures after the request
 * Without the kernel module axond charges socket clients to their cgroups
 * itself (advisory). Returns 0 or a negative errno (-EPERM: setting needs
 * an administrator or write access to the cgroup's parent directory).
 */
int axon_daemon_limit(const char *addr, int cgroup_fd, int set, uint64_t limit,
		      struct axon_dlimit *out, char *err, size_t errlen);

/**
 * axon_reserve() - reserve device memory for the daemon's charges
 * @bytes:	the unconsumed reservation wanted (rounded up to AXON_RESERVE_UNIT)
 *
 * Where the kernel charges device memory through the dmem cgroup
 * controller (ring->dmem; Documentation/kmod.rst §15), the daemon's charges
 * consume what the client reserved in its own process, charged to its
 * cgroup against dmem.max. axon_connect reserves the minting credit (the
 * floor kept across frees); a call the daemon refused for want of more
 * (AXON_CQE_F_RESERVE, the daemon page's reserve_want) reserves that and
 * asks again. Tops the reservation up to @bytes: a repeated call reserves
 * nothing more. Returns 0, -EOPNOTSUPP (no dmem here), -EDQUOT (dmem.max), or
 * another negative errno.
 */
int axon_reserve(struct axon_ring *ring, uint64_t bytes);

/**
 * axon_reserve_settle() - bring the reservation back to the floor (after a
 * call that reserved for itself, which may also have consumed the floor's):
 * what is above goes back, what is below is reserved as far as dmem.max
 * lets; nothing where there is no dmem
 */
void axon_reserve_settle(struct axon_ring *ring);

/** axon_op_name() - "MEMCPY_HTOD" for AXON_OP_MEMCPY_HTOD, "?" if unknown */
const char *axon_op_name(unsigned int op);

/*
 * Filling an SQE: axon_get_sqe() returns it zeroed; one axon_prep_<op>() per
 * op (<axon/prep.h>, generated from uapi/axon-ops.def) writes the opcode,
 * the stream for ops that name one, and the op's own fields, nothing else.
 * Flags and user_data are the caller's, set with the two helpers below.
 */

/** axon_sqe_set_flags() - AXON_SQE_F_* (AXON_SQE_F_DEFERRED: no completion
 * on success, the op must be deferrable) */
static inline void axon_sqe_set_flags(struct axon_sqe *sqe, unsigned int flags)
{
	sqe->flags = (uint8_t)flags;
}

/** axon_sqe_set_data() - the user_data the completion returns */
static inline void axon_sqe_set_data(struct axon_sqe *sqe, uint64_t data)
{
	sqe->user_data = data;
}

/*
 * The ABI 1.0 family helpers, for code that picks the opcode at run time:
 * each fills one family member (obj, copy, mem) for any op that uses it.
 * Prefer axon_prep_<op>().
 */
static inline void axon_prep_obj(struct axon_sqe *sqe, unsigned int op,
				 uint64_t handle, uint64_t arg0, uint64_t arg1)
{
	sqe->opcode = (uint8_t)op;
	sqe->obj.handle = handle;
	sqe->obj.arg0 = arg0;
	sqe->obj.arg1 = arg1;
}

static inline void axon_prep_copy(struct axon_sqe *sqe, unsigned int op,
				  uint64_t stream, uint64_t dst, uint64_t src,
				  uint64_t len)
{
	sqe->opcode = (uint8_t)op;
	sqe->stream = stream;
	sqe->copy.dst = dst;
	sqe->copy.src = src;
	sqe->copy.len = len;
}

static inline void axon_prep_mem(struct axon_sqe *sqe, unsigned int op,
				 uint64_t ctx, uint64_t addr, uint64_t len)
{
	sqe->opcode = (uint8_t)op;
	sqe->mem.ctx = ctx;
	sqe->mem.addr = addr;
	sqe->mem.len = len;
}

/* ------------------------------------------------------------------------ */
/* The kernel module over generic netlink (family AXON_GENL_NAME)          */
/* ------------------------------------------------------------------------ */

/*
 * These calls talk to the axon kernel module's generic netlink family
 * through libnl-genl-3. They are in libaxon.so and in the separate static
 * archive libaxon-nl.a (link it before libaxon.a, with -lnl-genl-3 -lnl-3);
 * libaxon.a itself has no libnl dependency.
 *
 * Every call returns 0 or a negative errno and, on failure, writes a
 * sentence for a person into the err buffer given to axon_nl_open:
 *   -ENOENT	the module is not loaded (axon_nl_open), no such cgroup, no
 *		such client
 *   -EPERM	setting a limit or following events needs CAP_NET_ADMIN
 *   -EINVAL	a request the kernel refused (its extack message is quoted)
 * A struct axon_nl is not thread-safe.
 */
struct axon_nl;

/* AXON_CMD_GET_STATS: the counters of /proc/axon/stats. */
struct axon_kstats {
	uint64_t clients;		/* client objects alive */
	uint64_t opens;			/* opens since load */
	uint64_t daemon_attached;	/* 0 or 1 */
	uint64_t daemon_pid;
	uint64_t attaches;
	uint64_t enters;
	uint64_t doorbells;
	uint64_t notifies;
	uint64_t events;		/* records read by daemons */
	uint64_t charges;
	uint64_t charge_fails;
	uint64_t uncharges;
	uint64_t charged_bytes;		/* currently charged, all kinds */
	uint64_t region_bytes;		/* region memory allocated */
};

/* One client of the AXON_CMD_GET_CLIENT dump; the strings live only during
 * the callback. Pids and uids are of the caller's namespaces. */
struct axon_kclient {
	uint64_t id;
	uint32_t pid, uid, gid;
	uint32_t state;			/* AXON_KSTATE_* */
	uint64_t cgroup_id;
	const char *cgroup_path;
	const char *comm;
	uint64_t charged;		/* bytes */
	uint32_t submits, completions, depth;
};

/* One cgroup of the AXON_CMD_GET_LIMIT dump; cgroup_path lives only during
 * the callback. limit is AXON_LIMIT_NONE when there is none. */
struct axon_klimit {
	uint64_t cgroup_id;
	const char *cgroup_path;
	uint32_t kind;			/* AXON_CHARGE_* */
	uint64_t usage, limit, peak, failcnt;
};

/* One AXON_CMD_EVENT multicast message. Fields the event does not carry
 * are 0 (see the uapi header: which event has which). */
struct axon_kevent {
	uint32_t event;			/* AXON_NLEV_* */
	uint64_t client_id;
	uint32_t pid, uid;
	char comm[32];
	uint64_t cgroup_id;
	uint32_t kind;
	uint64_t bytes, usage, limit;
};

/* Callbacks of the dumps: return 0 to go on, non-zero to stop (the dump
 * call then returns that value). */
typedef int (*axon_nl_client_fn)(const struct axon_kclient *c, void *arg);
typedef int (*axon_nl_limit_fn)(const struct axon_klimit *l, void *arg);

/**
 * axon_nl_open() - connect to the module's netlink family
 * @err:	receives the reason for this and every later failure on the
 *		handle; kept by the handle (it must outlive it)
 * Returns -ENOENT with "the axon kernel module is not loaded" when the
 * family is not registered.
 */
int axon_nl_open(struct axon_nl **nl, char *err, size_t errlen);
void axon_nl_close(struct axon_nl *nl);

int axon_nl_stats(struct axon_nl *nl, struct axon_kstats *st);
int axon_nl_clients(struct axon_nl *nl, axon_nl_client_fn fn, void *arg);

/**
 * axon_nl_limit_get() - device-memory counters of one cgroup
 * @cgroup_path: relative to the caller's cgroup-namespace root ("/t1")
 * Any of the out pointers may be NULL. An untracked cgroup reads as zeros
 * and AXON_LIMIT_NONE.
 */
int axon_nl_limit_get(struct axon_nl *nl, const char *cgroup_path,
		      uint64_t *limit, uint64_t *usage, uint64_t *peak,
		      uint64_t *failcnt);
/** axon_nl_limit_set() - @limit bytes, AXON_LIMIT_NONE to remove it */
int axon_nl_limit_set(struct axon_nl *nl, const char *cgroup_path,
		      uint64_t limit);
/*
 * axon_nl_limit_get_fd(), axon_nl_limit_set_fd() - the same, the cgroup
 * named by an open descriptor of its directory (AXON_A_CGROUP_FD): how a
 * caller without CAP_NET_ADMIN names it, to set the limits of the cgroups
 * below a subtree delegated to it.
 */
int axon_nl_limit_get_fd(struct axon_nl *nl, int cgroup_fd, uint64_t *limit,
			 uint64_t *usage, uint64_t *peak, uint64_t *failcnt);
int axon_nl_limit_set_fd(struct axon_nl *nl, int cgroup_fd, uint64_t limit);
int axon_nl_limits(struct axon_nl *nl, axon_nl_limit_fn fn, void *arg);

/** axon_nl_events_subscribe() - join the "events" group (CAP_NET_ADMIN) */
int axon_nl_events_subscribe(struct axon_nl *nl);
/**
 * axon_nl_event_next() - the next event
 * @timeout_ms:	-1 waits forever, 0 polls
 * Returns 0, -ETIMEDOUT, -EINTR (a signal arrived), or -ENOBUFS when the
 * socket overflowed and events were lost (the next call goes on).
 */
int axon_nl_event_next(struct axon_nl *nl, struct axon_kevent *ev,
		       int timeout_ms);
/** axon_nl_event_name() - "client-open" for AXON_NLEV_CLIENT_OPEN, "?" */
const char *axon_nl_event_name(uint32_t event);
/** axon_nl_kstate_name() - "active" for AXON_KSTATE_ACTIVE, "?" */
const char *axon_nl_kstate_name(uint32_t state);

#ifdef __cplusplus
}
#endif
#endif /* AXON_LIBAXON_H */
