/* SPDX-License-Identifier: MIT */
/*
 * The seam between axond's dispatcher and a device backend ("sim", later
 * "cuda"). The dispatcher validates every request against the client's own
 * tables before it calls a backend; a backend never sees client memory it
 * was not handed. Stream-ordered work goes through submit() and completes in
 * stream order on the backend's executor, which then calls work_done().
 */
#ifndef AXOND_BACKEND_H
#define AXOND_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "axond.h"
#include "work.h"

struct hostmem;

enum work_type {
	WORK_ADVANCE,		/* failed at validation: only keeps order */
	WORK_HTOD,
	WORK_DTOH,
	WORK_DTOD,
	WORK_MEMSET,
	WORK_COPY_2D,		/* a rectangle of rows (MEMCPY_2D) */
	WORK_LAUNCH,
	WORK_EVENT_RECORD,
	WORK_WAIT_EVENT,
	WORK_MARKER,		/* stream/context synchronisation point */
	WORK_UNMAP,		/* release backing after earlier work */
	WORK_RELEASE,		/* free an object after earlier work */
	/* Graphs (ops/graph.c): w->graph names the objects. */
	WORK_CAPTURE_BEGIN,	/* start capturing w->stream into graph.graph */
	WORK_CAPTURE_END,	/* end it; w->res preset: the dispatcher's verdict */
	WORK_GRAPH_LAUNCH,	/* run graph.exec on w->stream */
	WORK_GRAPH_UPDATE,	/* graph.exec takes graph.graph's parameters */
	/* A host function's place in a capture (HOST_FUNC NODE): the graph
	 * is cut there, the client runs the function between the parts. */
	WORK_HOST_NODE,
};

struct graph;
struct graph_exec;
struct graph_update;

/*
 * Physical device memory a client made with cuMemCreate (ops/vmm.c). Lives
 * while the client holds a reference (its handle) or any mapping shows it.
 * Dispatcher thread only, except backend_priv, which the executor reads to
 * unmap.
 */
struct vmm_phys {
	uint64_t handle;	/* the client's AXON_HANDLE_MEM; 0 once released */
	uint64_t len;
	int device;
	unsigned int refs;	/* the client's references (create, retain) */
	unsigned int maps;	/* mappings, counting those being unmapped */
	void *backend_priv;	/* sim: memfd; cuda: the driver's handle */
	struct vmm_phys *next, *prev;	/* the client's list (vmm_client) */
};

/* One unit of stream-ordered work, owned by the executor once submitted. */
struct work {
	enum work_type type;
	struct client *client;		/* holds a reference */
	struct stream *stream;		/* ordering stream, may be NULL */
	bool counts;			/* advances the stream's frontier */
	uint64_t skip;			/* ...and by this many refused ops */
	bool want_cqe;			/* post a completion when done */
	bool reports_pending;		/* completion returns a latched error */
	uint64_t user_data;
	uint32_t op;
	int32_t res;			/* preset error for WORK_ADVANCE */
	uint64_t t_start;
	uint64_t aux0;			/* returned in the completion */
	/*
	 * Set by the dispatcher (ops/capture.c:graph_capture_track) when the
	 * stream captures: the backend records the work into this graph
	 * instead of running it, and it is done as soon as it is recorded.
	 */
	struct graph *capture;
	/* ...and which of its parts (host nodes captured before it). */
	uint32_t capture_seg;
	/*
	 * Runs on the dispatcher once the item is done, just before its
	 * completion is posted, if it has one (an exec update, ops/graph.c:
	 * the exec's refs change before the client knows; a destroyed
	 * stream's release, ops/stream.c). Not run for a client that is
	 * gone (its teardown frees done_obj).
	 */
	release_fn done_fn;
	void *done_obj;
	union {
		struct {
			uint64_t dst, src, len;	/* data offsets for host side */
			/* The host side in the daemon: a data-area range or a
			 * shared host region's mapping (ops/copy.c). */
			unsigned char *host;
			bool shared;	/* the latter (AXON_COPY_F_HOSTMEM) */
		} copy;
		struct {
			uint64_t dst, width, height, pitch;
			uint32_t value, elem_size;
		} memset;
		/*
		 * MEMCPY_2D: height rows of width bytes, each pitch at least
		 * width (or height 1). dst and src as the client named them
		 * (the device sides are addresses in its window); host is the
		 * host side's first byte in the daemon, a data-area range or a
		 * shared host region's mapping (ops/copy.c).
		 */
		struct {
			uint64_t dst, src;
			uint64_t width, height, dst_pitch, src_pitch;
			unsigned char *host;
			uint32_t dir;	/* AXON_COPY_2D_* */
			bool shared;	/* host is a shared region's */
		} copy2d;
		struct {
			struct func *func;
			uint32_t grid[3], block[3], shared_bytes;
			void *args;		/* malloc'd copy */
			uint32_t args_size;
			/* LAUNCH_EX: validated attributes, in the same
			 * allocation as args (freed with it) */
			const struct axon_launch_attr *attrs;
			uint32_t nattrs;
		} launch;
		/* target: WAIT_EVENT, the event's records when it was issued */
		struct { struct event *event; uint64_t target; } event;
		/* phys: a cuMemMap'd range (backend->phys_unmap), else minted */
		struct { uint64_t addr, len; struct vmm_phys *phys; } unmap;
		struct { release_fn fn; void *obj; } release;
		/* seg: GRAPH_LAUNCH, the part of the exec it runs; update:
		 * GRAPH_UPDATE, where its result goes (graph.h) */
		struct {
			struct graph *graph;
			struct graph_exec *exec;
			uint32_t seg;
			struct graph_update *update;
		} graph;
		/* index: the host node's number in its graph */
		struct { uint32_t index; } host_node;
	};
	struct work *next;
};

struct backend {
	const char *name;
	/* Fill the info page; start executors. */
	int (*init)(struct axond *d, char *err, size_t errlen);
	/* Drain and stop executors; free everything. */
	void (*fini)(struct axond *d);
	/* Per client: the device side of its VA window. */
	int (*client_init)(struct axond *d, struct client *c);
	/* Called once no work of the client is queued any more. */
	void (*client_fini)(struct axond *d, struct client *c);
	/* Optional: the device memory the client's own context costs (its
	 * stack, printf and heap reserves), charged from its welcome on;
	 * 0 when it shares one. */
	uint64_t (*ctx_mem)(struct axond *d, struct client *c);
	/*
	 * Minted memory, a granule at a time (granules.h, which calls these
	 * with its lock held). granule_back backs the granule [va, va+len)
	 * of the client's window and sets *handle (the backend's; 0 may
	 * stand for "nothing to keep"); a CUresult. granule_release gives it
	 * back: any thread (an executor, after the work queued before the
	 * free, or client teardown before client_fini).
	 */
	int (*granule_back)(struct axond *d, struct client *c, uint64_t va,
			    uint64_t len, uint64_t *handle);
	void (*granule_release)(struct axond *d, struct client *c, uint64_t va,
				uint64_t len, uint64_t handle);
	/*
	 * Module loads, in steps (ops/module.c, loader.c). module_prepare,
	 * on the dispatcher, makes *priv for a load into device dev (what
	 * parsing needs of the daemon's state, looked up now). module_parse
	 * runs on a loader thread: it turns image (len bytes, a private copy,
	 * with a NUL after them) into priv, touching nothing shared but the
	 * driver; one load of a client at a time. *calls: the device runtime
	 * calls the image's code makes (SIM_IMAGE_CALLS_*; 0 for an image
	 * the parser does not know); when they are not all in calls_charged
	 * (what the client's context was charged for: localmem.h) the image
	 * is not loaded, and the caller charges them and parses again.
	 * module_commit, on the
	 * dispatcher, makes m live from priv (m->backend_priv; module
	 * globals are minted here); on failure priv stays the caller's.
	 * module_discard frees a priv never committed, on any thread (the
	 * client may be gone). All but discard return a CUresult; parse and
	 * commit say why in err.
	 */
	int (*module_prepare)(struct axond *d, struct client *c, int dev, void **priv);
	int (*module_parse)(struct axond *d, struct client *c, void *priv,
			    const void *image, size_t len, uint32_t calls_charged,
			    uint32_t *calls, char *err, size_t errlen);
	int (*module_commit)(struct axond *d, struct client *c, struct module *m,
			     void *priv, char *err, size_t errlen);
	void (*module_discard)(struct axond *d, struct client *c, void *priv);
	void (*module_unload)(struct axond *d, struct client *c,
			      struct module *m);
	/* Returns a CUresult; fills f->info and f->backend_priv. */
	int (*module_get_func)(struct axond *d, struct client *c,
			       struct module *m, const char *name,
			       struct func *f);
	int (*module_get_global)(struct axond *d, struct client *c,
				 struct module *m, const char *name,
				 uint64_t *addr, uint64_t *size);
	/*
	 * The names of m's functions, each NUL-terminated, into buf (len
	 * bytes); *count of them, *need the bytes they take (more than len:
	 * nothing is written). Returns a CUresult.
	 */
	int (*module_func_names)(struct axond *d, struct client *c, struct module *m,
				 char *buf, size_t len, uint32_t *count, size_t *need);
	/*
	 * Optional, AXON_OP_PRIVATE_CALL: call the driver's private entry
	 * point (AXON_PRIV_*) in the client's context ctx with arg (an object
	 * the backend returned before, for a query); *out gets the answer.
	 */
	int (*private_call)(struct axond *d, struct client *c, struct ctx *ctx,
			    unsigned int call, uint64_t arg, uint64_t *out);
	/*
	 * Optional, CTX_LIMIT (localmem.c, which charges first): the limit
	 * (CU_LIMIT_STACK_SIZE, _MALLOC_HEAP_SIZE, _PRINTF_FIFO_SIZE) of c's
	 * context on device dev. With set, ask for *value; either way
	 * *value gets the value in force. A CUresult.
	 */
	int (*ctx_limit)(struct axond *d, struct client *c, int dev, int limit,
			 bool set, uint64_t *value);
	/*
	 * Optional, AXON_OP_PROFILER: cuProfilerStart (start) or
	 * cuProfilerStop in the client's context ctx. Without it the op
	 * succeeds, as the driver does with no profiler attached.
	 */
	int (*profiler)(struct axond *d, struct client *c, struct ctx *ctx, bool start);
	/* AXON_OP_OCCUPANCY: q is validated; *value gets the answer. */
	int (*occupancy)(struct axond *d, struct client *c, struct func *f,
			 const struct axon_sqe *q, int *value);
	int (*func_get_attr)(struct axond *d, struct func *f, int attr,
			     int64_t *value);
	/* CUresult; the dispatcher checked that attr is settable. c owns f. */
	int (*func_set_attr)(struct axond *d, struct client *c, struct func *f,
			     int attr, int value);
	/* CUresult: encode a validated request (global_addr checked against
	 * the client's allocations) for device dev into out
	 * (AXON_TENSOR_MAP_BYTES). */
	int (*tensor_map_encode)(struct axond *d, struct client *c, int dev,
				 const struct axon_tensor_map_req *req, void *out);
	/* Frees f->backend_priv. */
	void (*func_free)(struct axond *d, struct func *f);
	/* Optional: start preparing a pooled region's data area before any
	 * client has it (client_init then finds it prepared), and undo that
	 * for a region no client took. */
	void (*region_prepare)(struct axond *d, void *data, size_t len);
	void (*region_unprepare)(struct axond *d, void *data);
	/* Optional: wait until the pooled regions are prepared. */
	void (*region_pool_wait)(struct axond *d);
	/* Optional: free a stream's / event's backend state (after its work). */
	void (*stream_fini)(struct axond *d, struct stream *s);
	void (*event_fini)(struct axond *d, struct event *e);
	/*
	 * VMM (optional: without them MEM_CREATE answers NOT_SUPPORTED).
	 * phys_create backs p (p->len bytes on p->device) and phys_free
	 * frees that, both on the dispatcher, CUresults. phys_map shows
	 * [off, off+len) of p at [addr, addr+len) of the client's window
	 * (dispatcher); phys_unmap undoes one mapping (executor, after the
	 * work queued before the unmap, or at client teardown).
	 */
	int (*phys_create)(struct axond *d, struct client *c, struct vmm_phys *p);
	void (*phys_free)(struct axond *d, struct vmm_phys *p);
	int (*phys_map)(struct axond *d, struct client *c, uint64_t addr,
			uint64_t len, struct vmm_phys *p, uint64_t off);
	void (*phys_unmap)(struct axond *d, struct client *c, uint64_t addr,
			   uint64_t len, struct vmm_phys *p);
	/*
	 * Optional: make a shared host region (ops/hostmem.h) usable by the
	 * device. Finishes with hostmem_register_done(d, h, w, res), now or
	 * later on any thread, having set h->devptr for a DEVICEMAP region
	 * and h->backend_priv. Without it the daemon's mapping is used as is.
	 */
	void (*hostmem_register)(struct axond *d, struct hostmem *h, struct work *w);
	/* Undo it (waiting for one in progress); the dispatcher, once no
	 * work can use the region. Only for regions with backend_priv. */
	void (*hostmem_unregister)(struct axond *d, struct hostmem *h);
	/* Queue stream-ordered work; never fails (errors land in w->res). */
	void (*submit)(struct axond *d, struct work *w);
	/*
	 * Graphs (optional: without them the graph ops answer
	 * CUDA_ERROR_NOT_SUPPORTED). Dispatcher thread. instantiate makes
	 * x->backend_priv from a graph whose capture ended (returns a
	 * CUresult); the fini hooks free backend_priv once no queued work
	 * uses the object any more.
	 */
	int (*graph_instantiate)(struct axond *d, struct client *c,
				 struct graph *g, struct graph_exec *x,
				 uint64_t flags);
	void (*graph_fini)(struct axond *d, struct graph *g);
	void (*graph_exec_fini)(struct axond *d, struct graph_exec *x);
};

extern const struct backend sim_backend;
extern const struct backend cuda_backend;

const struct backend *backend_find(const char *name);

/*
 * Mint a daemon-owned range in the client's window (module globals).
 * Dispatcher thread only.
 */
int client_mint_daemon(struct axond *d, struct client *c, struct ctx *ctx,
		       uint64_t len, uint64_t *addr);
void client_unmint_daemon(struct axond *d, struct client *c, uint64_t addr);
/*
 * Device memory the backend spends for c outside its window (a context, a
 * module's driver-placed globals): charged like its allocations (arena,
 * quotas, cgroup; its credit first) and counted in *counter (c->ctx_mem,
 * c->module_mem); 0 or -ENOMEM. The uncharge works for a dead client.
 * Dispatcher thread only.
 */
int client_charge_device(struct axond *d, struct client *c, uint64_t len,
			 uint64_t *counter);
void client_uncharge_device(struct axond *d, struct client *c, uint64_t len,
			    uint64_t *counter);
/* Adds a backend-placed range (a module global) to the client's table;
 * -EEXIST if it is there already. */
int client_register_global(struct axond *d, struct client *c, struct ctx *ctx,
			   uint64_t addr, uint64_t len);

/* Whether [addr, addr+len) lies inside one live allocation of the client.
 * Any thread (takes the client's alloc_lock). */
bool client_range_valid(struct client *c, uint64_t addr, uint64_t len);
/*
 * The same for an executor running work queued earlier: a range the client
 * freed after queueing the work is still valid until its WORK_UNMAP runs,
 * as the driver keeps memory alive for work already queued.
 */
bool client_range_valid_exec(struct client *c, uint64_t addr, uint64_t len);
/* An executor ran the WORK_UNMAP of the range at addr. */
void client_unmap_done(struct client *c, uint64_t addr);

/* ops/vmm.c: whether [addr, addr+len) lies in consecutive cuMemMap'd
 * ranges of the client (alloc_lock held), as one mapped span may cover
 * several. */
bool vmm_span_valid(const struct rangemap *allocs, uint64_t addr, uint64_t len);

#endif
