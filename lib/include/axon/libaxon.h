/* SPDX-License-Identifier: MIT */
/*
 * libaxon: the raw ring API of axon, in the style of liburing.
 *
 * A client connects to the daemon (axon_connect), then for each request
 * takes an SQE (axon_get_sqe), fills it (axon_prep_* or by hand), publishes
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
#include <linux/axon.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Acquire/release on the shared indices; each use names its pair. */
#define axon_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define axon_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define axon_read_once(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define axon_write_once(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define axon_smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)

/**
 * struct axon_ring - one connection to the daemon
 * The k-prefixed pointers point into the shared region; the rest is the
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
	int			transport;	/* AXON_TRANSPORT_* */
	void			*region;	/* unix: the one mapping */
	size_t			region_size;
	size_t			info_size;
	int			sock_fd;	/* unix: the connection */
	int			doorbell_fd;	/* unix: eventfd doorbell */
	int			dev_fd;		/* kmod: the /dev/axon client */
	void			*maps[7];	/* kmod: one mapping per part */
	size_t			map_len[7];
	unsigned int		spin_ns;	/* busy-poll before sleeping */
	uint64_t		doorbells;	/* doorbell writes (stats) */
	uint64_t		sleeps;		/* futex sleeps (stats) */
};

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
 * Spins for ring->spin_ns, then sleeps on the CQ tail. Returns 0 and sets
 * *cqe, -ETIMEDOUT, or -EPIPE when the daemon went away.
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
 * axon_read_stats() - fetch the daemon's stats document (JSON)
 * @addr:	as for axon_connect
 * @json:	on success a malloc'd NUL-terminated string the caller frees
 */
int axon_read_stats(const char *addr, char **json, char *err, size_t errlen);

/** axon_op_name() - "MEMCPY_HTOD" for AXON_OP_MEMCPY_HTOD, "?" if unknown */
const char *axon_op_name(unsigned int op);

/* Prep helpers: each writes only its own fields (the SQE is zeroed). */
static inline void axon_prep_nop(struct axon_sqe *sqe)
{
	sqe->opcode = AXON_OP_NOP;
}

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

#ifdef __cplusplus
}
#endif
#endif /* AXON_LIBAXON_H */
