/* SPDX-License-Identifier: MIT */
/*
 * The shim's internal state and helpers. One connection per process, made
 * at cuInit. Submission and reaping are serialised by shim.lock; a thread
 * that waits for a completion either reaps for everyone (the reaper) or
 * sleeps on shim.cond until the reaper hands it its result.
 */
#ifndef AXON_SHIM_H
#define AXON_SHIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
/* Every versioned name declared as itself, none renamed by macros. */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <axon/libaxon.h>

#include "vaalloc.h"

#define SHIM_MAX_CTX	64

/* A request waiting for its completion. user_data points at it. */
struct shim_waiter {
	bool done;
	int32_t res;
	uint32_t flags;		/* the completion's AXON_CQE_F_* */
	uint64_t aux[2];
	uint32_t op;		/* for the profile (profile.c) */
};

/* AXON_PROFILE=1: the client's own profile (profile.c); lock held. */
extern bool shim_profiling;
uint64_t shim_prof_now(void);
void shim_prof_wait(unsigned int op, uint64_t t0);
void shim_prof_ring_full(uint64_t t0);
void shim_prof_stage(bool to_device, uint64_t bytes, uint64_t t0);

struct shim_ctx {
	uint64_t handle;
	uint64_t default_stream;
	int device;
	unsigned int flags;
	bool primary;
};

struct shim_func {
	uint64_t handle;
	uint32_t nparams;
	uint32_t args_size;
	uint32_t *param;	/* AXON_PARAM_MAKE(offset, size) each */
	uint64_t module;	/* cuFuncGetModule */
	const char *name;	/* cuFuncGetName; lives with the entry */
	/* MAX_DYNAMIC_SHARED_SIZE_BYTES once set (funcattr.c), else -1:
	 * launches asking for more fail at once, as the driver's do. */
	int32_t max_dyn_shared;
	/* cuFuncGetAttribute's answers, by attribute (bit set: known).
	 * They change only through cuFuncSetAttribute, which forgets them. */
	uint32_t attr_known;
	int32_t attr[32];
};

struct shim_event {
	uint64_t handle;
	uint64_t stream;	/* stream of the last record */
	uint32_t slot;		/* its frontier slot */
	uint64_t seq;		/* ...and the sequence it must reach */
	bool recorded;
	unsigned int flags;
};

struct shim_primary {
	uint64_t ctx;		/* 0 until first retained */
	unsigned int refs;
	unsigned int flags;
};

struct shim {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool reaper_active;
	bool connected;
	bool atfork_done;
	/* Waiting for completions (conn.c wait_spin_ns): the busy-poll the
	 * ring came with (AXON_SPIN_NS or libaxon's default), whether the
	 * user set it, and the CPUs this process may run on. */
	unsigned int spin_default;
	bool spin_from_env;
	unsigned int ncpus;
	int init_error;			/* CUresult of the connect attempt */
	struct axon_ring ring;

	uint64_t seq[AXON_MAX_FRONTIER];	/* submitted ops per stream slot */

	struct vaalloc va;		/* the client's minting window */
	uint64_t credit;		/* bytes we may mint without asking */
	/* The granule (index + 1, 0: none) the last mint ended in, while no
	 * free touched it: an allocation of ours lives there, so the daemon
	 * charges a mint that starts in it nothing for it (mem.c). */
	uint64_t credit_gran;
	/*
	 * A device fault the daemon reported (CUDA_ERROR_ASSERT, _ILLEGAL_
	 * ADDRESS, ...), or axond gone: from then on no op is queued and
	 * every call that would queue one answers shim_gone_error(), as
	 * NVIDIA's driver answers the fault from every later call of the
	 * process (it poisons all its contexts, seen on the H200). Without
	 * it, minted allocations and deferred ops would "succeed" locally.
	 */
	uint32_t fault;
	bool gone;

	struct shim_ctx ctx[SHIM_MAX_CTX];	/* by handle index */
	struct shim_primary primary[AXON_MAX_DEVICES];

	/* Data-area ring allocator (data.c). */
	uint64_t data_head, data_tail;	/* byte offsets, free-running */
	struct data_rec *recs;
	uint32_t nrecs, rec_head, rec_cap;

};

extern struct shim shim;

/* conn.c: everything below needs shim.lock unless marked. */
CUresult shim_ensure_init(void);		/* any thread, takes the lock */
struct axon_sqe *shim_sqe(void);		/* NULL after a fault or axond gone */
struct axon_sqe *shim_sqe_after_fault(void);	/* NULL only once axond is gone */
CUresult shim_wait(struct shim_waiter *w);	/* submits, drops/retakes lock */
CUresult shim_reap_once(void);			/* one reaping round, ditto */
void shim_flush(void);				/* submit without waiting */
/* errstate.c: what to answer; these call nothing. */
CUresult shim_gone_error(void);		/* fault or axond gone: what to answer */
CUresult shim_status(int ret);			/* libaxon errno -> CUresult */
static inline void shim_lock(void) { pthread_mutex_lock(&shim.lock); }
static inline void shim_unlock(void) { pthread_mutex_unlock(&shim.lock); }
/* Count a call answered without crossing, where the daemon's stats see it. */
#define SHIM_LOCAL()							\
	do {								\
		if (shim.ring.cpage)					\
			__atomic_fetch_add(&shim.ring.cpage->local_ops, 1,	\
					   __ATOMIC_RELAXED);		\
	} while (0)

/* One synchronous op: fill with fn, wait, return res (and aux). */
CUresult shim_sync_op(struct axon_sqe *sqe, struct shim_waiter *w);
/*
 * One synchronous op, shim.lock held, its SQE filled by prep, the op's own
 * axon_prep_<op>() (axon/prep.h), with the fields that follow: w gets res
 * and aux. Each op's fields are named by its helper, so no call fills a
 * word by its place in the union.
 */
#define shim_call_locked(w, prep, ...)					\
	({								\
		struct axon_sqe *call_sqe_ = shim_sqe();		\
		CUresult call_r_;					\
									\
		if (call_sqe_) {					\
			prep(call_sqe_, __VA_ARGS__);			\
			call_r_ = shim_sync_op(call_sqe_, (w));		\
		} else {						\
			call_r_ = shim_gone_error();			\
		}							\
		call_r_;						\
	})

/* The same, taking and dropping shim.lock. */
#define shim_call(w, prep, ...)						\
	({								\
		CUresult call_lr_;					\
									\
		shim_lock();						\
		call_lr_ = shim_call_locked(w, prep, __VA_ARGS__);	\
		shim_unlock();						\
		call_lr_;						\
	})

/* data.c */
enum data_release { DATA_AFTER_SQ, DATA_AFTER_STREAM, DATA_AFTER_CQE };
/*
 * Reserve len bytes of the data area; returns the offset, and an id for
 * shim_data_done. May drop and retake the lock while it waits for room.
 * Each allocation is DATA_AFTER_CQE (freed by shim_data_done) unless
 * shim_data_release says otherwise.
 *
 * Rule: fill an SQE right after shim_sqe() returns it, before calling
 * anything that may drop the lock (another thread may publish the ring).
 */
uint64_t shim_data_alloc(uint64_t len, uint64_t *id);
/*
 * As shim_data_alloc, but never waits for room: false (nothing taken) when
 * len does not fit now. A caller that holds allocations it alone can give
 * back must not wait for room (another thread may be waiting for those).
 */
bool shim_data_try_alloc(uint64_t len, uint64_t *off, uint64_t *id);
void shim_data_release(uint64_t id, enum data_release kind, uint32_t slot,
		       uint64_t seq);
void shim_data_done(uint64_t id);
uint64_t shim_data_max(void);

/* hostmem.c */
/* Whether [p, p + len) lies inside one region of pinned memory shared with
 * the daemon (copies then name it directly). Takes its own lock: call
 * without shim.lock. */
bool shim_hostmem_shared(const void *p, size_t len);
/* len bytes of pinned memory shared with the daemon, as cuMemHostAlloc
 * makes it (freed with cuMemFreeHost); CUDA_ERROR_NOT_SUPPORTED where
 * none can be shared. No lock held. */
CUresult shim_hostmem_alloc_shared(size_t len, void **out);
/* cuPointerGetAttribute for host memory the shim allocated or registered. */
CUresult shim_hostmem_pointer_attr(void *data, CUpointer_attribute attr, CUdeviceptr ptr);
/*
 * Registers memfd fd, mapped (or to be mapped) by this process at
 * [addr, addr + len) rounded out to pages, with the daemon: CUDA_SUCCESS
 * and the region's device pointer (0: none), ALREADY_MAPPED (the address
 * is taken in the daemon; nothing recorded), NOT_SUPPORTED (it cannot be
 * shared here), or the daemon's error. The caller holds hostmem.c's
 * registration lock (shim_hostmem_register_fd is called from within
 * cuMemHostRegister only).
 */
CUresult shim_hostmem_register_fd(int fd, uint64_t addr, uint64_t len, unsigned int flags,
				  uint64_t *devptr);
/* Takes the region at addr out of the daemon's table (after queued work). */
void shim_hostmem_unregister_addr(const void *addr);

/* hostreg.c: application memory moved onto memory shared with the daemon. */
struct shim_hostreg {
	char *map_base;			/* whole pages holding the range */
	size_t map_len;
	unsigned long long ino;		/* the memfd's, to know it again */
	uint64_t devptr;		/* the daemon's answer: the host address */
};
/* CUDA_SUCCESS (moved and registered), NOT_SUPPORTED (not memory that can
 * move: the caller stages), or another error. */
CUresult shim_hostreg_share(void *p, size_t len, unsigned int flags, struct shim_hostreg *out);
/* Moves the pages back onto private anonymous memory, contents kept;
 * false if they are not the memfd's any more or memory ran out. */
bool shim_hostreg_unshare(const struct shim_hostreg *r);
/* In a forked child: unshare, or at worst replace with zeroes. */
void shim_hostreg_unshare_or_wipe(const struct shim_hostreg *r);

/* current.c: the calling thread's current context and what calls name.
 * No lock needed (the stack is the thread's own). */
struct shim_ctx *shim_current_ctx(void);	/* NULL if none */
CUresult shim_get_ctx(struct shim_ctx **out);	/* error if none */
struct shim_ctx *shim_ctx_of(CUcontext c);	/* NULL: not a live context */
/* The stack (cuCtxPushCurrent, cuCtxPopCurrent, cuCtxSetCurrent). */
CUresult shim_ctx_push(uint64_t ctx);		/* INVALID_VALUE when full */
bool shim_ctx_pop(uint64_t *ctx);		/* false when empty */
void shim_ctx_set_top(uint64_t ctx);		/* replaces the top, or pushes */
void shim_ctx_unstack(uint64_t ctx);		/* a destroyed context: zeroed */
/* Resolves a CUstream to a daemon stream handle (NULL -> default). */
CUresult shim_stream(CUstream s, uint64_t *handle);	/* ptstream.c */
/* ctx.c: cuCtxSynchronize, for the modules below ctx.c (a pointer: they
 * must not call up into it, check-layering). */
extern CUresult (*const shim_ctx_sync_current)(void);
/* stream.c: a stream of the current context; its deferred destruction. */
CUresult shim_stream_create(unsigned int flags, int priority, uint64_t *handle);
CUresult shim_stream_destroy_handle(uint64_t handle);

/* ctx.c: the primary context's handle, created if need be, not retained. */
CUresult shim_primary_peek(CUdevice dev, uint64_t *handle);
/* module.c: mod's function names, NUL-separated (malloc'd), and count. */
CUresult shim_module_func_names(CUmodule mod, char **names, uint32_t *count);

/* ctxstore.c: context-local storage (cudart's per-context state). drop runs
 * the destructors of a context going away, with no lock held. */
CUresult shim_cls_put(CUcontext c, void *key, void *value, void *dtor);
CUresult shim_cls_delete(CUcontext c, void *key);
CUresult shim_cls_get(void **value, CUcontext c, void *key);
void shim_ctx_storage_drop(uint64_t ctx);

/* stream.c */
static inline uint32_t shim_slot(uint64_t stream) { return AXON_HANDLE_INDEX(stream); }
/* Stream-ordered op queued: returns its sequence number on that stream. */
static inline uint64_t shim_stream_next(uint64_t stream)
{
	return ++shim.seq[shim_slot(stream) % AXON_MAX_FRONTIER];
}

CUresult shim_stream_sync(uint64_t stream);

/*
 * capture.c: stream capture's rules for other calls. Each check answers
 * CUDA_SUCCESS at the cost of one load while no capture is open; otherwise
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED when the call conflicts with an
 * open capture, which it then invalidates, as the driver does. No lock
 * needed; callable with shim.lock held.
 */
extern unsigned int shim_ncaptures;
static inline bool shim_capturing(void)
{
	return __atomic_load_n(&shim_ncaptures, __ATOMIC_RELAXED) != 0;
}
CUresult shim_capture_check_stream_slow(uint64_t stream);
CUresult shim_capture_check_event_slow(uint64_t event);
CUresult shim_capture_unsafe_slow(void);
CUresult shim_capture_ctx_sync_slow(void);
/* Synchronising or querying a stream, or copying host memory on it. */
static inline CUresult shim_capture_check_stream(uint64_t stream)
{
	return shim_capturing() ? shim_capture_check_stream_slow(stream) : CUDA_SUCCESS;
}
/* Synchronising or querying an event recorded in a capture. */
static inline CUresult shim_capture_check_event(uint64_t event)
{
	return shim_capturing() ? shim_capture_check_event_slow(event) : CUDA_SUCCESS;
}
/* "Potentially unsafe" calls (allocation, free, synchronous copies),
 * by the calling thread's capture interaction mode. */
static inline CUresult shim_capture_unsafe(void)
{
	return shim_capturing() ? shim_capture_unsafe_slow() : CUDA_SUCCESS;
}
/* cuCtxSynchronize. */
static inline CUresult shim_capture_ctx_sync(void)
{
	return shim_capturing() ? shim_capture_ctx_sync_slow() : CUDA_SUCCESS;
}
/* An event recorded on / waited for by a stream (forks and joins). */
void shim_capture_note_record(uint64_t event, uint64_t stream);
void shim_capture_note_wait(uint64_t stream, uint64_t event);
/* Whether the stream belongs to an open capture (one lock, no crossing). */
bool shim_stream_capturing(uint64_t stream);
/* The capture of the stream fails at its end (no error now). */
void shim_capture_invalidate(uint64_t stream);

/*
 * The host side of a captured graph (graph.c): host functions the daemon's
 * graph cannot run, which cut it into parts (HOST_FUNC NODE); a launch
 * runs part 0, host function 0, part 1, ... with the functions run by the
 * callback thread as ordinary host functions (hostfunc.c), so that the
 * stream's later work waits for each.
 *
 * A node: the program's own cuLaunchHostFunc in a capture, the host side
 * of a copy between a capturing stream and memory the daemon cannot see
 * (copy.c stages it through pinned memory shared with the daemon, which
 * the node then owns), or a node of a graph launched into the capture
 * (keep: that graph's host work, which fn and arg belong to).
 */
struct shim_hostwork;
struct shim_hostnode {
	void (*fn)(void *);
	void *arg;
	bool free_arg;			/* arg is ours (malloc) */
	void *stage;			/* shared pinned memory (cuMemFreeHost) */
	struct shim_hostwork *keep;	/* a reference */
};
/*
 * Reference-counted: by its graph, each exec made or updated from it, each
 * of a launch's host functions not yet run, each capture that took a node
 * of it. The last put frees the nodes and their memory: with no shim lock
 * held. Nodes are only added while the capture is open.
 */
struct shim_hostwork {
	unsigned int refs;
	struct shim_hostnode *node;	/* node k runs between parts k and k + 1 */
	uint32_t n, cap;
	/* The daemon's nodes the driver would not count (cuGraphGetNodes):
	 * a staged copy's host node, the parts and host nodes of a graph
	 * launched into the capture beyond its one child node. */
	uint32_t hidden;
	/* Recorded after the last part of the latest launch (graph.c:
	 * graph_launch): the next launch, on any stream, waits for it. */
	CUevent order;
	bool order_set;
};
/* hostwork.c */
void shim_hostwork_get(struct shim_hostwork *hw);
void shim_hostwork_put(struct shim_hostwork *hw);
/* A put that cannot be the last (the caller holds another): any lock. */
void shim_hostwork_unget(struct shim_hostwork *hw);
/* Frees what n owns (a node never added); no shim lock held. */
void shim_hostnode_release(struct shim_hostnode *n);
/* At load time (graph.c, a constructor): how the last put destroys the
 * order event, which graph.c made. */
void shim_hostwork_on_order_release(void (*fn)(CUevent order));

/*
 * capture.c: host nodes in a capture. While any capture is open, whoever
 * adds one holds the host-node lock (before shim.lock) from adding it to
 * sending its HOST_FUNC NODE, so that the daemon numbers the nodes in the
 * order they were added (shim_sqe may drop shim.lock).
 */
void shim_capture_host_lock(void);
void shim_capture_host_unlock(void);
/* shim.lock held: if the stream captures, n joins its capture (which then
 * owns what n owns) as node *index, counting hidden of the daemon's nodes
 * as not the driver's: 1; 0 when the stream does not capture; -1 out of
 * memory (the capture is then invalidated). */
int shim_capture_host_add_locked(uint64_t stream, const struct shim_hostnode *n,
				 uint32_t hidden, uint32_t *index);
/* ...then its place among the stream's ops (HOST_FUNC NODE). */
CUresult shim_capture_host_send_locked(uint64_t stream, uint32_t index);

/* graphrec.c: the node count CAPTURE_END reported (less what the driver
 * would not count), for cuGraphGetNodes, and the graph's host work (the
 * reference moves in; *stale: one left in the record, to put). False when
 * out of memory. Callable with shim.lock held, as are the lookups. */
bool shim_graph_note(uint64_t graph, uint64_t nodes, struct shim_hostwork *hw,
		     struct shim_hostwork **stale);
int64_t shim_graph_nodes(uint64_t graph);	/* -1 when unknown */
/* The graph's host work, referenced (NULL: none). */
struct shim_hostwork *shim_graph_hostwork(uint64_t graph);
/* Forgets the graph; returns its host work's reference to put. */
struct shim_hostwork *shim_graph_unrecord(uint64_t graph);
/* The exec's host work becomes hw (a reference moves in; NULL: none);
 * the old one's reference to put comes back through *old. False when out
 * of memory. */
bool shim_exec_set_hostwork(uint64_t exec, struct shim_hostwork *hw,
			    struct shim_hostwork **old);
/* The exec's host work, referenced (NULL: none). */
struct shim_hostwork *shim_exec_hostwork(uint64_t exec);

/* module.c, event.c */
struct shim_func *shim_func_of(CUfunction f);
/* The whole of file name and its size, with a NUL after it (for PTX), in
 * a buffer to free. */
CUresult shim_read_image_file(const char *name, char **buf, size_t *size);
/* What cuModuleLoadData would send for @image (the fatbin behind a wrapper)
 * and its size, found from its headers (0: an image it cannot size). */
const void *shim_module_image(const void *image, size_t *len);
/* Image loads the daemon's driver refused for a device, remembered by
 * content (refused.c): the error to fail a new load of the image with, or
 * CUDA_SUCCESS; at: only one refused at this very address. */
CUresult shim_image_refused(const void *image, size_t len, CUdevice dev, bool at);
void shim_image_remember_refused(const void *image, size_t len, CUdevice dev, CUresult err);

/* hostfunc.c */
/* A launch's host node k (graph.c): shim.lock held (and the host-node
 * lock while any capture is open). Queued as a host function of the
 * stream, or, on a capturing stream, a node of that capture; either
 * takes a reference to keep, whose node n is. */
CUresult shim_hostfn_issue_locked(uint64_t stream, const struct shim_hostnode *n,
				  struct shim_hostwork *keep);

/* devout.c: write the device output (kernel printf) the daemon holds for
 * us to stdout; at CUDA's flush points, with shim.lock not held. */
void shim_devout_drain(void);

/* copy.c: a memset on stream s as one deferred op (2D: height > 1, rows
 * pitch bytes apart), as cuMemsetD2D*Async issues it. */
CUresult shim_memset_async(uint64_t dst, uint64_t pitch, uint32_t value, uint32_t elem,
			   uint64_t width, uint64_t height, CUstream s);

/*
 * copy.c: the 1D copies on a resolved stream handle, as the cuMemcpy*
 * forms issue them (no synchronisation here; DtoH into pageable memory
 * completes before it returns, and into shared pinned memory unless
 * async); on a capturing stream, a node (copy.c's top).
 */
CUresult shim_copy_htod(uint64_t dst, const void *src, uint64_t len, uint64_t stream);
CUresult shim_copy_dtoh(void *dst, uint64_t src, uint64_t len, uint64_t stream, bool async);
CUresult shim_copy_dtod(uint64_t dst, uint64_t src, uint64_t len, uint64_t stream);
/* Unified addressing: whether p lies in the client's device window. */
bool shim_is_device(uint64_t p);

/*
 * copy.c: a copy staged through the data area in chunks, pipelined as the
 * 1D copies are (copy.c's top). len bytes cross, in chunks of at most
 * shim_stage_chunk() bytes rounded down to a multiple of unit (a row of a
 * 2D copy: unit must not exceed shim_stage_chunk()). With the lock held,
 * pack fills the data area at buf with bytes [at, at + n) of the copy
 * (host to device) or unpack takes them from it (device to host), and prep
 * writes the SQE that moves them between buf's offset off and the device.
 * A zero len is one chunk of 0 bytes.
 */
struct shim_stage {
	uint64_t len, unit, stream;
	uint64_t dev;		/* the caller's: the device side */
	void *host;		/* the caller's: the host side */
	uint64_t dev_pitch, host_pitch, width;	/* the caller's (2D) */
	void (*pack)(const struct shim_stage *s, unsigned char *buf, uint64_t at, uint64_t n);
	void (*unpack)(const struct shim_stage *s, const unsigned char *buf, uint64_t at,
		       uint64_t n);
	void (*prep)(const struct shim_stage *s, struct axon_sqe *sqe, uint64_t off,
		     uint64_t at, uint64_t n);
};
uint64_t shim_stage_chunk(bool htod);
CUresult shim_stage_htod(const struct shim_stage *s);	/* the last chunks deferred */
CUresult shim_stage_dtoh(const struct shim_stage *s);	/* complete on return */

/* mem.c: minting (lock held; the synchronous path drops and retakes it) */
CUresult shim_mint_locked(uint64_t ctx, uint64_t rounded, uint64_t *addr);
CUresult shim_unmint_locked(uint64_t ctx, uint64_t addr);

/* mempool.c: stream-ordered allocation (lock held unless marked) */
/* Whether addr starts a live pool allocation; *pool gets its pool. */
bool shim_mempool_owns(uint64_t addr, CUmemoryPool *pool);
/* cuMemFree of pool memory: the range goes back to the device. */
CUresult shim_mempool_release_locked(uint64_t addr);

/* vmm.c: cuMemAddressReserve / cuMemMap ranges (lock held) */
struct shim_vmm_info {
	int device;
	unsigned long long handle_types;	/* CUmemAllocationHandleType */
	unsigned int access;			/* CU_POINTER_ATTRIBUTE_ACCESS_FLAG_* */
};
/* 1: ptr is in a mapping (its range and what it maps); -1: in a
 * reservation, unmapped; 0: in no reservation. */
int shim_vmm_lookup(uint64_t ptr, uint64_t *base, uint64_t *size,
		    const struct shim_vmm_info **info);
bool shim_vmm_reserved(uint64_t addr);	/* a reservation starts at addr */

/* log.c: a message on stderr (AXON_LOG=0: none). Any lock, or none. */
void shim_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define SHIM_EXPORT __attribute__((visibility("default")))

#endif
