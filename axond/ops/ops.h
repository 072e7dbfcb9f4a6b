/* SPDX-License-Identifier: MIT */
/*
 * The operation table: one entry per AXON_OP_*, io_uring-style. The
 * dispatcher runs the generic checks that an entry's flags ask for, then
 * calls its issue function; handlers hold no generic checks.
 */
#ifndef AXOND_OPS_H
#define AXOND_OPS_H

#include "../axond.h"
#include "../backend.h"
#include "../client.h"
#include "../tables.h"

/* What an issue function decided. */
enum op_status {
	OP_COMPLETE,	/* post res/aux now (skipped if deferred and 0) */
	OP_QUEUED,	/* work was submitted; it completes later */
};

struct op_ctx {
	struct axond *d;
	struct client *c;
	const struct axon_sqe *sqe;	/* the private copy */
	struct stream *stream;		/* resolved for OPF_STREAM ops */
	struct ctx *ctx;		/* set by ops that name a context */
	bool deferred;
	uint64_t t_start;
	/* out */
	int32_t res;
	uint64_t aux[2];
};

typedef enum op_status (*op_issue_fn)(struct op_ctx *o);

/* Entry flags */
#define OPF_STREAM		(1U << 0)	/* stream-ordered: needs sqe->stream */
#define OPF_DEFERRABLE		(1U << 1)	/* AXON_SQE_F_DEFERRED allowed */
#define OPF_REPORTS_PENDING	(1U << 2)	/* a success returns the latched error */
#define OPF_NAMES_STREAM	(1U << 3)	/* reads sqe->stream (not counted) */

/*
 * Which of the SQE union's five 64-bit words (raw[0..4]) an op leaves
 * unused: they must be zero, so they can gain meaning later (io_uring's
 * rule for reserved fields). Computed from each op's fields in
 * uapi/axon-ops.def: a word no field occupies.
 */
#define W(n)			(1U << (n))

struct op_def {
	const char *name;
	op_issue_fn issue;
	unsigned int flags;
	unsigned int zero;	/* W() mask of union words that must be zero */
};

extern const struct op_def op_table[AXON_OP_LAST];

/* Handlers, by family (ops/<family>.c). */
enum op_status op_nop(struct op_ctx *o);
enum op_status op_unbuilt(struct op_ctx *o);	/* placeholder, nop.c */
enum op_status op_ctx_create(struct op_ctx *o);
enum op_status op_ctx_destroy(struct op_ctx *o);
enum op_status op_ctx_sync(struct op_ctx *o);
enum op_status op_mem_map(struct op_ctx *o);
enum op_status op_mem_unmap(struct op_ctx *o);
enum op_status op_mem_get_info(struct op_ctx *o);
enum op_status op_mem_create(struct op_ctx *o);
enum op_status op_mem_release(struct op_ctx *o);
enum op_status op_vmm_map(struct op_ctx *o, struct ctx *ctx);	/* MEM_MAP of a handle */
enum op_status op_memcpy(struct op_ctx *o);
enum op_status op_memset(struct op_ctx *o);
enum op_status op_module_load(struct op_ctx *o);
enum op_status op_module_unload(struct op_ctx *o);
enum op_status op_module_get_func(struct op_ctx *o);
enum op_status op_module_get_global(struct op_ctx *o);
enum op_status op_module_funcs(struct op_ctx *o);
enum op_status op_launch(struct op_ctx *o);
enum op_status op_stream_create(struct op_ctx *o);
enum op_status op_stream_destroy(struct op_ctx *o);
enum op_status op_stream_sync(struct op_ctx *o);
enum op_status op_stream_wait_event(struct op_ctx *o);
enum op_status op_event_create(struct op_ctx *o);
enum op_status op_event_destroy(struct op_ctx *o);
enum op_status op_event_record(struct op_ctx *o);
enum op_status op_event_elapsed(struct op_ctx *o);
enum op_status op_func_get_attr(struct op_ctx *o);
enum op_status op_occupancy(struct op_ctx *o);		/* occupancy.c */
enum op_status op_private_call(struct op_ctx *o);	/* private.c */
enum op_status op_capture_begin(struct op_ctx *o);
enum op_status op_capture_end(struct op_ctx *o);
enum op_status op_graph_instantiate(struct op_ctx *o);
enum op_status op_graph_launch(struct op_ctx *o);
enum op_status op_graph_destroy(struct op_ctx *o);
enum op_status op_graph_exec_destroy(struct op_ctx *o);
enum op_status op_graph_exec_update(struct op_ctx *o);
enum op_status op_launch_ex(struct op_ctx *o);
enum op_status op_func_set_attr(struct op_ctx *o);
enum op_status op_tensor_map_encode(struct op_ctx *o);
enum op_status op_host_func(struct op_ctx *o);
enum op_status op_hostmem_register(struct op_ctx *o);
enum op_status op_hostmem_unregister(struct op_ctx *o);
enum op_status op_devout_read(struct op_ctx *o);

/* Helpers shared by handlers. */
struct work *work_new(struct op_ctx *o, enum work_type type);
enum op_status work_submit(struct op_ctx *o, struct work *w);
void work_submit_now(struct axond *d, struct work *w);
int work_release_later(struct axond *d, struct client *c, release_fn fn, void *obj);
struct stream *stream_new(struct client *c, struct ctx *ctx, bool is_default,
			  int32_t *res);
void stream_destroy_later(struct axond *d, struct client *c, struct stream *s);
void event_destroy_later(struct axond *d, struct client *c, struct event *e);
void module_destroy_later(struct axond *d, struct client *c, struct module *m);
void mem_unmap_ctx(struct axond *d, struct client *c, struct ctx *ctx);
/* One mapping of p is being unmapped: count it gone after earlier work. */
void vmm_unmap_later(struct axond *d, struct client *c, struct vmm_phys *p);
/* A data-area range named by an SQE; NULL if it does not fit. */
void *data_range(struct client *c, uint64_t off, uint64_t len);
void ctx_destroy_all(struct axond *d, struct client *c, struct ctx *ctx);

#endif
