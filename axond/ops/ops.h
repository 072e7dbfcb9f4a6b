/* SPDX-License-Identifier: MIT */
/*
 * The operation table: one entry per AXON_OP_*, io_uring-style. The
 * dispatcher runs the generic checks that an entry's flags ask for, then
 * the op's two steps, as io_uring's prep and issue:
 *
 *   prepare  reads the SQE copy, validates every field and resolves the
 *            handles it names into the request's own state (o->req, and
 *            o->aux, o->ctx), with no other effect: nothing allocated that
 *            it does not free, no object, counter or ring touched, no
 *            completion posted. It returns 0, or the CUresult the request
 *            fails with (the dispatcher completes it as a failed issue).
 *   issue    does the work (or queues it) and says how it completes.
 *
 * Handlers hold no generic checks. An op's handler is named in
 * uapi/axon-ops.def; its two functions are <handler>_prep and
 * <handler>_issue, declared here from the generated list, so a new op
 * adds no line to this header.
 */
#ifndef AXOND_OPS_H
#define AXOND_OPS_H

#include "../axond.h"
#include "../backend.h"
#include "../client.h"
#include "../tables.h"
#include <stddef.h>
#include <axon_ops_table.h>

/* What an issue function decided. */
enum op_status {
	OP_COMPLETE,	/* post res/aux now (skipped if deferred and 0) */
	OP_QUEUED,	/* work was submitted; it completes later */
};

/*
 * The request's prepared state: each op's own struct, which its prepare
 * fills and its issue reads (op_req). Large enough for the biggest (a
 * LAUNCH_EX's attributes, a symbol name); it lives on the dispatcher's
 * stack and is not cleared, so prepare sets every member issue reads.
 */
#define OP_REQ_BYTES	2048

union op_req {
	max_align_t align;
	unsigned char bytes[OP_REQ_BYTES];
};

/* o's prepared state as the op's struct TYPE. */
#define op_req(o, type)							\
	({								\
		_Static_assert(sizeof(type) <= OP_REQ_BYTES,		\
			       #type " fits union op_req");		\
		(type *)(void *)(o)->req->bytes;			\
	})

struct op_ctx {
	struct axond *d;
	struct client *c;
	const struct axon_sqe *sqe;	/* the private copy */
	struct stream *stream;		/* resolved for OPF_STREAM ops */
	struct ctx *ctx;		/* set by ops that name a context */
	union op_req *req;		/* prepare's output, issue's input */
	bool deferred;
	uint64_t t_start;
	/* out */
	int32_t res;
	uint64_t aux[2];
};

typedef int32_t (*op_prep_fn)(struct op_ctx *o);
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
	op_prep_fn prep;
	op_issue_fn issue;
	unsigned int flags;
	unsigned int zero;	/* W() mask of union words that must be zero */
};

extern const struct op_def op_table[AXON_OP_LAST];

/* Every op's two steps, declared from the generated op list. */
#define OP_DECLARE(name, number, handler, flags, zero_words)	\
	int32_t handler##_prep(struct op_ctx *o);		\
	enum op_status handler##_issue(struct op_ctx *o);
AXON_OPS(OP_DECLARE)
#undef OP_DECLARE

/* MEM_MAP of a MEM handle (ops/vmm.c); ctx: the live context named. */
int32_t op_vmm_map_prep(struct op_ctx *o, struct ctx *ctx);
enum op_status op_vmm_map_issue(struct op_ctx *o);

/* Helpers shared by handlers. */
struct work *work_new(struct op_ctx *o, enum work_type type);
enum op_status work_submit(struct op_ctx *o, struct work *w);
void work_submit_now(struct axond *d, struct work *w);
int work_release_later(struct axond *d, struct client *c, release_fn fn, void *obj);
struct stream *stream_new(struct client *c, struct ctx *ctx, bool is_default,
			  int32_t *res);
void stream_destroy_later(struct axond *d, struct client *c, struct stream *s);
/* A wait of the legacy stream for destroyed s's order event is done. */
void stream_order_wait_done(struct axond *d, struct client *c, void *obj);
void event_destroy_later(struct axond *d, struct client *c, struct event *e);
void module_destroy_later(struct axond *d, struct client *c, struct module *m);
void mem_unmap_ctx(struct axond *d, struct client *c, struct ctx *ctx);
/* One mapping of p is being unmapped: count it gone after earlier work. */
void vmm_unmap_later(struct axond *d, struct client *c, struct vmm_phys *p);
/* A data-area range named by an SQE; NULL if it does not fit. */
void *data_range(struct client *c, uint64_t off, uint64_t len);
void ctx_destroy_all(struct axond *d, struct client *c, struct ctx *ctx);

#endif
