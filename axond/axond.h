/* SPDX-License-Identifier: MIT */
/*
 * axond's core types: the daemon, a client and the objects a client owns.
 * Threads: the dispatcher (main thread) owns everything here except the
 * fields marked "worker", which the backend's executor writes.
 */
#ifndef AXOND_H
#define AXOND_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <axon/protocol.h>

#include "clock.h"
#include "granules.h"
#include "localmem.h"
#include "sockcg.h"
#include "handles.h"
#include "log.h"
#include "work.h"
#include "namemap.h"
#include "rangemap.h"
#include "transport.h"

struct backend;
struct work;
struct graph_client;
struct vmm_phys;
struct vmm_client;
struct loader_client;
struct mq_user;

/* How an op is accounted in the stats (the brief's call classes). */
enum op_class {
	OP_CLASS_SYNC,
	OP_CLASS_DEFERRED,
	OP_CLASS_LAST
};

/*
 * Work items one client may have queued on the device before the
 * dispatcher stops taking its SQEs (its SQ then fills: backpressure), so a
 * flood from one client costs bounded memory.
 */
#define AXOND_MAX_QUEUED 1024

#define LAT_BUCKETS 24	/* log2 microsecond buckets: <1us, <2us, ... */

struct client_stats {
	uint64_t ops[AXON_OP_LAST];
	uint64_t by_class[OP_CLASS_LAST];
	uint64_t crossings;	/* batches the dispatcher took */
	uint64_t errors;
	uint64_t bytes_htod, bytes_dtoh;
	uint64_t lat_hist[LAT_BUCKETS];	/* sync op service time */
	uint64_t limit_refused;	/* items refused at a per-client limit */
};

struct ctx {
	uint64_t handle;
	bool dying;
	/* A context-poisoning error (client's err_lock): every later
	 * synchronising call in this context returns it. */
	uint32_t sticky_error;
	int device;
	unsigned int flags;
	struct stream *default_stream;
	/*
	 * The legacy stream's implicit barrier (legacy.c; dispatcher): the
	 * ordering items it took (its epoch), the epoch its order event was
	 * last recorded at, and the blocking streams with work it has not
	 * waited for yet.
	 */
	uint64_t legacy_epoch;
	uint64_t legacy_recorded;
	struct stream *unjoined;
	void *backend_priv;
};

struct event {
	uint64_t handle;
	bool dying;
	struct ctx *ctx;
	unsigned int flags;
	uint64_t records;		/* records taken (dispatcher) */
	uint64_t records_out;		/* ...handed to the backend (ops/hostfunc.c) */
	_Atomic uint64_t done_records;	/* worker: records finished */
	_Atomic uint64_t time_ns;	/* worker: time of the last record */
	void *backend_priv;
};

/* struct stream's mode: bits, as a held stream may be capturing too. */
#define STREAM_RUN	0U
#define STREAM_CAPTURE	(1U << 0)
#define STREAM_HELD	(1U << 1)

/* The stream attributes cuStreamSetAttribute sets (ops/streamattr.c). */
#define STREAM_NATTRS	5

struct stream {
	uint64_t handle;
	bool dying;		/* destroyed by the client, work still queued */
	uint32_t slot;		/* frontier index == handle index */
	struct ctx *ctx;
	uint64_t submitted;	/* stream-ordered ops taken (dispatcher) */
	uint64_t completed;	/* worker: ops finished */
	/* Ops refused at a per-client limit (work.c): counted as done by
	 * the stream's next work item, so the frontier keeps in step. */
	uint64_t skipped;
	bool is_default;	/* the context's legacy default stream */
	bool nonblocking;	/* CU_STREAM_NON_BLOCKING: not ordered by it */
	int priority;		/* as created: 0 lowest, negative higher */
	/*
	 * The legacy barrier (legacy.c): on ctx->unjoined (next_unjoined),
	 * the legacy epoch this stream last waited for, and the daemon's own
	 * event one stream records for another to wait on (never a client's,
	 * handle 0; the default stream's is the one blocking streams wait on).
	 */
	bool listed_unjoined;
	struct stream *next_unjoined;
	uint64_t legacy_seen;
	struct event order_ev;
	/*
	 * Destroyed, it goes once its own work is done (release_due) and
	 * no wait of another stream for its order_ev is still queued
	 * (order_waits): ops/stream.c. Nothing else waits for it.
	 */
	uint32_t order_waits;
	bool release_due;
	/*
	 * How its work is routed (work_submit; dispatcher): STREAM_RUN, or
	 * the modes of the op families that divert it. STREAM_CAPTURE
	 * (ops/capture.c): it is a member of an open capture, its items
	 * become nodes. STREAM_HELD (ops/hostfunc.c): its later work waits
	 * in the client's parked list until the client says the host
	 * function with user_data hold_token ran.
	 */
	unsigned int mode;
	uint64_t hold_token;
	uint32_t parked;	/* its items in the parked list */
	uint64_t hold_pass;	/* last replay pass that kept one of them */
	/*
	 * cuStreamSetAttribute's values (ops/streamattr.c), by
	 * STREAM_ATTR_* slot, attr_set a bit per slot set: written by the
	 * dispatcher under stream_attr_lock, attr_gen bumped after each
	 * change; the cuda executor applies them to its stream when
	 * attr_gen moved past attr_applied (its own).
	 */
	struct axon_launch_attr attr[STREAM_NATTRS];
	uint32_t attr_set;
	uint32_t attr_gen;
	uint32_t attr_applied;
	void *backend_priv;
};

/* The stream attributes set (ops/streamattr.c): a copy of s->attr, the
 * bits of attr_set, and in *gen the attr_gen they are as of. */
unsigned int stream_attrs_copy(struct stream *s, struct axon_launch_attr out[STREAM_NATTRS],
			       uint32_t *gen);

struct module {
	uint64_t handle;
	bool dying;
	struct ctx *ctx;
	unsigned int nfuncs;	/* functions handed out, still live */
	struct func *funcs;	/* those, linked by next_in_module */
	void *backend_priv;
};

#define AXON_MAX_NAME 1024	/* kernel and global names */

struct func {
	uint64_t handle;
	char *name;
	struct module *module;
	struct axon_func_info info;
	void *backend_priv;
	struct func *next_in_module;
	/* Its frame (LOCAL_SIZE_BYTES), read at its first launch
	 * (localmem.c). */
	uint64_t local_size;
	bool local_known;
	/* SIM_IMAGE_CALLS_* its code makes (the backend reads them from the
	 * image at the lookup): the first launch of one that calls malloc
	 * makes the driver reserve the heap (localmem.c). */
	uint32_t calls;
};

struct alloc {
	uint64_t addr;
	uint64_t len;
	struct ctx *ctx;
	bool daemon_owned;	/* module globals: freed with their module */
	/* A cuMemMap'd range: the physical memory it shows, from byte
	 * phys_off of it (ops/vmm.c); NULL for minted memory. */
	struct vmm_phys *phys;
	uint64_t phys_off;
};

/* A stream-ordered operation waiting for a completion (sync callers). */
struct pending_cqe {
	uint64_t user_data;
	uint32_t op;
	uint64_t t_start;
};

/*
 * Objects the driver's private entry points returned for a client: the
 * client only ever sees their index. Owned by ops/private.c (dispatcher).
 */
#define AXON_MAX_PRIV_OBJS 16
struct client_priv {
	uint64_t obj[AXON_MAX_PRIV_OBJS];
	int obj_dev[AXON_MAX_PRIV_OBJS];	/* the device of each */
	unsigned int nobj;
	bool lt_pair;		/* was given 1734dc26's objects */
};

struct client {
	uint64_t id;
	/* How we reach it (transport.h) and that transport's own state. */
	const struct client_transport *xport;
	union client_conn conn;
	/* Identity, as its transport learnt it. */
	uint64_t kmod_id;	/* the kernel's id (kernel transport), else 0 */
	uint64_t cgroup_id;	/* (kernel transport), else 0 */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	char comm[32];
	uint64_t connect_ns;

	size_t region_size;	/* bytes of its shared region */
	struct axon_params params;
	struct axon_client_page *cpage;		/* untrusted */
	struct axon_daemon_page *dpage;
	uint64_t *frontier;
	const struct axon_sqe *sqes;		/* untrusted */
	struct axon_cqe *cqes;
	unsigned char *data;			/* untrusted */

	uint32_t sq_mask, sq_entries, cq_mask, cq_entries;
	uint32_t sq_head;	/* private copies of our indices */
	uint32_t cq_tail;
	uint32_t cq_owed;	/* taken non-deferred SQEs not yet posted */

	struct handle_table ctxs, streams, events, modules, funcs;
	/* Protects allocs and bytes_mapped: the worker validates kernel
	 * pointer arguments against them. */
	pthread_mutex_t alloc_lock;
	struct rangemap allocs;
	/* Freed by the client, backing not yet released: work queued before
	 * the free may still use them (executors only). */
	struct rangemap pending_free;
	uint64_t bytes_mapped;
	uint64_t ctx_mem, module_mem;	/* of bytes_mapped: contexts, modules */
	uint64_t local_mem;	/* of bytes_mapped: stacks and heaps (localmem.h) */
	struct localmem local[AXON_MAX_DEVICES];
	struct sockcg_client sockcg;	/* socket clients' cgroup charges */
	uint64_t host_pinned;		/* host memory pinned for it (memquota.c) */
	/* The granules its minted memory (and the sim's globals) back, and
	 * what it is charged for them (granules.h). */
	struct granules granules;
	uint64_t mint_credit;	/* reserved for deferred MEM_MAP */
	/* Credit module globals took (mint.c) since the client last heard
	 * its credit: the shim still counts it as its own. */
	uint64_t credit_lent;
	struct mq_user *quser;	/* its user's memory share (memquota.c) */
	uint64_t va_slot;	/* its window's slot + 1 (vaslot.c), 0: none */
	uint64_t mint_next_daemon;	/* daemon-minted addresses (globals) */

	/* Protects pending_error, sticky_error and their copy in dpage. */
	pthread_mutex_t err_lock;
	uint32_t pending_error;		/* first latched error, cleared when reported */
	uint32_t sticky_any;		/* first context-poisoning error of any ctx */
	_Atomic int refs;		/* dispatcher + queued work */
	_Atomic unsigned int queued;	/* work items submitted, not yet done */
	bool dead;			/* disconnected; teardown under way */
	_Atomic bool dead_for_worker;
	/* A charge was refused for want of a dmem reservation: the next own
	 * OUT_OF_MEMORY completion says so (dispatch_complete). */
	bool reserve_asked;
	/* Its context's charge, refused at connect for want of a dmem
	 * reservation: its calls fail until one pays it (dispatch.c). */
	uint64_t ctx_unpaid;

	void *backend_priv;
	/* Shared host regions and descriptors sent for them (ops/hostmem.c;
	 * dispatcher only), NULL until the first. */
	struct hostmem_table *hostmem;
	struct devout *devout;	/* device output not fetched yet (devout.c) */
	unsigned int ntracers;	/* tracers following this client */
	struct graph_client *graphs;	/* graphs, captures (ops/graphclient.h), NULL until used */
	struct vmm_client *vmm;	/* VMM handles (ops/vmm.c), NULL until used */
	/* Module loads in flight (loader.c), NULL until the first. */
	struct loader_client *loader;
	/* Its functions by (module, name) (ops/module.c; dispatcher). */
	struct namemap funcs_by_name;
	struct client_priv priv;	/* ops/private.c */
	/* Open captures (ops/capture.c; dispatcher): while there is one,
	 * work_submit shows every stream-ordered item to the capture hook,
	 * as a wait may fork another stream into a capture. */
	uint32_t ncapturing;
	/* Work held back behind host functions, in issue order
	 * (ops/hostfunc.c; dispatcher only). */
	struct work *parked_head, *parked_tail;
	uint32_t nparked, nparked_wide, nheld;
	uint64_t parked_bytes;	/* what parked items hold (--max-parked-bytes) */
	unsigned int held[2];	/* holdings.h: mappings, VMM objects */
	uint64_t hold_passes;
	struct client_stats stats;
	struct client *next, *prev;	/* the daemon's list */
};

struct axond_config {
	const char *listen;
	const char *backend;
	const char *vendor_lib;	/* cuda backend: NVIDIA's libcuda.so.1 */
	const char *kmod;	/* /dev/axon path, "off", or NULL: if present */
	/* --transport=kmod: clients only through /dev/axon (hello.h). */
	bool kmod_only;
	uint64_t sim_mem;
	bool sim_fault_process;	/* sim: a fault poisons the process (--sim-fault) */
	const char *sim_kernels;	/* sim: the kernels object, or NULL (--sim-kernels) */
	unsigned int spin_us;
	unsigned int collapse_min;	/* cuda: --collapse (0: off) */
	unsigned int poll_us;		/* cuda: --poll-us back-off (0: none) */
	unsigned int max_clients;
	/* Tracers (trace.c): on one client, and opened by one uid. */
	unsigned int max_tracers_client;
	unsigned int max_tracers_user;
	/* Administrators' group (access.c); NULL: the default, "": none. */
	const char *admin_group;
	unsigned int max_clients_per_user;
	unsigned int max_pending_per_user;	/* connections before their hello */
	unsigned int max_parked;	/* per client: work behind host functions */
	uint64_t max_parked_bytes;	/* ...and the memory it holds */
	unsigned int max_graph_nodes;	/* per client: in graphs and execs */
	unsigned int max_maps_per_client, max_maps_per_user;	/* holdings.c */
	unsigned int max_vmm_per_client, max_vmm_per_user;
	uint64_t default_data_size;
	uint64_t mint_credit;
	uint64_t max_client_mem;	/* device memory per client (0: the device's) */
	uint64_t max_user_mem;		/* ...per uid, all its clients (0: the device's) */
	/* Host memory pinned for clients (memquota.c; 0: no limit). */
	uint64_t max_pinned_client, max_pinned_user;
	uint64_t ctx_mem;		/* --ctx-mem: what one context costs, 0: unknown */
	/* Module images (imagelimits.h, loader.h): bytes of one image,
	 * bytes one fatbin entry inflates to and its ratio, one client's
	 * loads queued or running. */
	uint64_t max_image;
	uint64_t max_inflate;
	uint64_t max_inflate_ratio;
	unsigned int max_module_loads;
	uint64_t va_base;	/* first client window */
	uint64_t va_size;	/* bytes of device addresses per client */
	unsigned int region_pool;	/* regions kept ready (pool.c) */
	const char *isolation;	/* "process" (cuda default), "context", "shared" */
	unsigned int context_pool;	/* contexts (process mode: workers) kept ready */
	int worker_ctl;		/* a worker process: its supervisor's socket; else -1 */
	int verbose;
};

struct axond {
	struct axond_config cfg;
	const struct backend *backend;
	void *backend_priv;
	struct axon_info *info;
	int info_fd;
	int listen_fd;
	int addr_lock_fd;	/* one axond per address (addrlock.c) */
	int epoll_fd;
	int signal_fd;
	int worker_fd;		/* eventfd: the worker has completions */
	int kmod_fd;		/* attached to /dev/axon, or -1 */
	void *kmod_info;	/* the kernel's info page, mapped */
	size_t kmod_info_size;
	char sock_path[108];
	/* What one client context costs on device 0, as the backend
	 * measured or was told (--ctx-mem); 0: unknown. A worker reports it
	 * to its supervisor. */
	uint64_t ctx_cost;

	struct client *clients;	/* list head */
	unsigned int nclients;
	/* Client objects not yet freed (client_free; a reference held by
	 * work in flight outlives the connection): a worker says it is
	 * idle only once its client's are all freed. */
	atomic_uint clients_live;
	uint64_t next_client_id;
	uint64_t start_ns;

	/* Per device: ns the executor had work running (sim) or in flight
	 * (cuda), for utilisation in stats and axon-top. Executors add. */
	_Atomic uint64_t busy_ns[AXON_MAX_DEVICES];

	/* Device memory accounting (all clients): used + reserved credit. */
	uint64_t mem_used;
	uint64_t mem_reserved;

	/* Completions from the worker, posted by the dispatcher. */
	pthread_mutex_t done_lock;
	struct done_entry *done_head, *done_tail;
	_Atomic bool sleeping;

	struct tracer *tracers;	/* trace.h */

	uint64_t total_ops;
	uint64_t total_clients;
	uint64_t pending_refused;	/* connections over a user's pending share */
	unsigned int held[2], held_max[2];	/* holdings.h: all clients */
	uint64_t clients_refused_user;	/* hellos over a user's client share */
	bool stop;
	/* Set from any thread (main.c, request_restart): the device's driver
	 * cannot serve this process any more; the loop ends and axond
	 * starts again as a new process. */
	_Atomic bool restart;
	/* The fault that caused it: left in each client's pending_error,
	 * which the shim returns once the daemon is gone. */
	_Atomic int32_t restart_error;
	_Atomic uint64_t restart_client;	/* whose work faulted (id), 0: none */
};

/*
 * epoll tags: small constants for the daemon's own descriptors, EV_PENDING
 * plus the fd for a connection that has not said hello, a client pointer
 * for its socket, the pointer with EV_DOORBELL_BIT for its doorbell, and
 * EV_TRACER_BIT with a tracer's slot and generation (trace.c), never its
 * address: an event of a tracer ended earlier in the batch is dropped.
 */
#define EV_LISTEN	1ULL
#define EV_SIGNAL	2ULL
#define EV_WORKER	3ULL
#define EV_KMOD		4ULL
#define EV_CTL		5ULL	/* a worker process: its supervisor's socket */
#define EV_PENDING	(1ULL << 62)
#define EV_DOORBELL_BIT	1ULL
#define EV_TRACER_BIT	2ULL

/*
 * Process isolation (--isolation=process). supervisor.c: the process that
 * listens keeps worker processes ready and gives each new client one of
 * its own. worker.c: a worker's side of that.
 */
static inline bool axond_is_supervisor(const struct axond *d)
{
	return !strcmp(d->cfg.isolation, "process") && d->cfg.worker_ctl < 0;
}

static inline bool axond_is_worker(const struct axond *d)
{
	return d->cfg.worker_ctl >= 0;
}

int supervisor_run(struct axond *d, char **argv);
void supervisor_route(struct axond *d, int fd, const struct axon_hello *h,
		      struct axon_welcome *w);
int worker_start(struct axond *d);
void worker_ctl_event(struct axond *d);
bool worker_done(struct axond *d);
void worker_client_faulted(void);


#endif
