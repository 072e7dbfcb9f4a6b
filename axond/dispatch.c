// SPDX-License-Identifier: MIT
/*
 * Draining a client's submission ring: read each SQE once into private
 * memory, run the generic checks its table entry asks for, prepare and
 * issue it, and post completions. Runs on the dispatcher thread only; this is the only
 * code that writes a client's CQ.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "trace.h"
#include "client.h"
#include "cuerr.h"
#include "backend.h"
#include "ops/ops.h"
#include "clock.h"
#include "dispatch.h"
#include "tables.h"

static unsigned int lat_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int b = 0;

	while (us && b < LAT_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	return b;
}

/*
 * AXOND_PROFILE=1: how long each completed operation spent in this daemon,
 * from taking its SQE to posting its completion, by op. Set against the
 * client's own wait for it (AXON_PROFILE=1), it splits a synchronous
 * call's time into the crossing and the daemon's part.
 */
static struct {
	uint64_t n[AXON_OP_LAST];
	uint64_t ns[AXON_OP_LAST];
} op_prof;

void dispatch_prof_log(void)
{
	unsigned int op;

	if (!axond_profiling)
		return;
	for (op = 0; op < AXON_OP_LAST; op++)
		if (op_prof.n[op])
			log_info("profile: in the daemon: %-18s %8llu x %10.3f us",
				 axon_op_name(op), (unsigned long long)op_prof.n[op],
				 (double)op_prof.ns[op] / (double)op_prof.n[op] / 1e3);
}

void dispatch_wake_client(struct axond *d, struct client *c)
{
	/*
	 * Pairs with the client's barrier between setting WAITING and
	 * re-reading cq_tail (libaxon's axon_wait_cqe).
	 */
	axon_smp_mb();
	if (!(axon_read_once(&c->cpage->cq_flags) & AXON_CQ_F_WAITING))
		return;
	c->xport->wake(d, c);
}

/* Writes one CQE and publishes it; the caller wakes the client. */
static void post_cqe(struct client *c, uint64_t user_data, int32_t res, uint32_t flags,
		     uint64_t aux0, uint64_t aux1)
{
	struct axon_cqe *cqe;

	if (c->dead)
		return;
	cqe = &c->cqes[c->cq_tail & c->cq_mask];
	cqe->user_data = user_data;
	cqe->res = res;
	cqe->flags = flags;
	cqe->aux[0] = aux0;
	cqe->aux[1] = aux1;
	c->cq_tail++;
	/* Pairs with the client's acquire of cq_tail in axon_peek_cqe. */
	axon_store_release(&c->dpage->cq_tail, c->cq_tail);
}

void dispatch_post_cqe(struct axond *d, struct client *c, uint64_t user_data,
		       int32_t res, uint64_t aux0, uint64_t aux1)
{
	(void)d;
	post_cqe(c, user_data, res, 0, aux0, aux1);
}

/* Marks a context poisoned (and the client, for Local queries). */
static void poison(struct client *c, struct ctx *ctx, uint32_t res)
{
	pthread_mutex_lock(&c->err_lock);
	if (ctx && !ctx->sticky_error)
		ctx->sticky_error = res;
	if (!c->sticky_any)
		c->sticky_any = res;
	if (!c->pending_error)
		axon_write_once(&c->dpage->pending_error, c->sticky_any);
	pthread_mutex_unlock(&c->err_lock);
}

/*
 * Any thread: the dispatcher (deferred ops) and executors (device work).
 * ctx is the context the failed work ran in (NULL if none): a sticky error
 * poisons that context only.
 */
void client_latch_error(struct client *c, struct ctx *ctx, uint32_t res)
{
	if (!res)
		return;
	pthread_mutex_lock(&c->err_lock);
	c->stats.errors++;
	if (ctx && axon_cu_sticky(res) && !ctx->sticky_error)
		ctx->sticky_error = res;
	if (axon_cu_sticky(res) && !c->sticky_any)
		c->sticky_any = res;
	if (!c->pending_error)
		c->pending_error = res;
	axon_write_once(&c->dpage->pending_error, c->pending_error);
	pthread_mutex_unlock(&c->err_lock);
}

/* Takes the latched error, if any: a context's sticky error stays. */
static int32_t take_pending(struct client *c, struct ctx *ctx)
{
	uint32_t e;

	pthread_mutex_lock(&c->err_lock);
	e = ctx && ctx->sticky_error ? ctx->sticky_error : c->pending_error;
	c->pending_error = 0;
	/* What Local queries see: a poisoned context stays visible. */
	axon_write_once(&c->dpage->pending_error, c->sticky_any);
	pthread_mutex_unlock(&c->err_lock);
	return (int32_t)e;
}

/*
 * Completion of a stream-ordered operation or of a synchronous one: posts
 * the CQE unless it was deferred and succeeded. Dispatcher thread.
 */
void dispatch_complete(struct axond *d, struct client *c, struct ctx *ctx,
		       uint64_t user_data,
		       uint32_t op, int32_t res, uint64_t aux0, uint64_t aux1,
		       uint64_t t_start)
{
	if (c->cq_owed)
		c->cq_owed--;
	uint64_t lat = axond_now_ns() - t_start;
	uint32_t flags = 0;

	if (res) {
		c->stats.errors++;	/* its own failure; latched ones counted once */
		if (axon_cu_sticky((uint32_t)res))
			poison(c, ctx, (uint32_t)res);
		/* Refused for want of a dmem reservation (client_charge): only
		 * an op's own failure says so, never a latched one, so the call
		 * it marks did nothing and may be made again. */
		if (res == CUDA_ERROR_OUT_OF_MEMORY &&
		    __atomic_exchange_n(&c->reserve_asked, false, __ATOMIC_ACQ_REL))
			flags = AXON_CQE_F_RESERVE;
	} else if (op < AXON_OP_LAST && (op_table[op].flags & OPF_REPORTS_PENDING))
		res = take_pending(c, ctx);
	c->stats.lat_hist[lat_bucket(lat)]++;
	if (__builtin_expect(axond_profiling, 0) && op < AXON_OP_LAST) {
		op_prof.n[op]++;
		op_prof.ns[op] += lat;
	}
	if (__builtin_expect(c->ntracers != 0, 0))
		trace_emit(d, c, AXON_TRACE_COMPLETE, NULL, user_data, op, res, lat);
	post_cqe(c, user_data, res, flags, aux0, aux1);
}

/* Room for one more owed completion (admission: the CQ never overflows). */
static bool cq_has_room(struct client *c)
{
	uint32_t head = axon_load_acquire(&c->cpage->cq_head);
	uint32_t used = c->cq_tail - head;

	/* A client that moved its head past our tail broke the protocol;
	 * treat its CQ as full (it only stalls itself). */
	if (used > c->cq_entries)
		return false;
	return used + c->cq_owed < c->cq_entries;
}

static int32_t check_sqe(const struct axon_sqe *sqe, const struct op_def **defp)
{
	const struct op_def *def;
	int i;

	if (sqe->opcode >= AXON_OP_LAST)
		return CUDA_ERROR_INVALID_VALUE;
	def = &op_table[sqe->opcode];
	*defp = def;
	if (sqe->flags & ~AXON_SQE_F_ALL)
		return CUDA_ERROR_INVALID_VALUE;
	if (sqe->resv0 || sqe->resv1)
		return CUDA_ERROR_INVALID_VALUE;
	if ((sqe->flags & AXON_SQE_F_DEFERRED) && !(def->flags & OPF_DEFERRABLE))
		return CUDA_ERROR_INVALID_VALUE;
	if (sqe->stream && !(def->flags & (OPF_STREAM | OPF_NAMES_STREAM)))
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < 5; i++)
		if ((def->zero & W(i)) && sqe->raw[i])
			return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/*
 * The context's charge that dmem refused at connect (client_activate),
 * before any call of the client: what it reserves for the refusal this
 * returns pays it. A CUresult.
 */
static int32_t pay_context(struct axond *d, struct client *c)
{
	if (client_charge_device(d, c, c->ctx_unpaid, &c->ctx_mem))
		return CUDA_ERROR_OUT_OF_MEMORY;
	c->ctx_unpaid = 0;
	return CUDA_SUCCESS;
}

/* Issues one SQE (already copied into private memory). */
static void issue_one(struct axond *d, struct client *c, const struct axon_sqe *sqe)
{
	const struct op_def *def = NULL;
	union op_req req;	/* not cleared: each prepare sets what it uses */
	struct op_ctx o = {
		.d = d, .c = c, .sqe = sqe, .req = &req,
		.deferred = sqe->flags & AXON_SQE_F_DEFERRED,
		.t_start = axond_now_ns(),
	};
	enum op_status st;
	int32_t res;

	if (__builtin_expect(c->ntracers != 0, 0))
		trace_emit(d, c, AXON_TRACE_SUBMIT, sqe, sqe->user_data, sqe->opcode, 0, 0);
	/* A refusal for want of a reservation marks only this op's failure. */
	__atomic_store_n(&c->reserve_asked, false, __ATOMIC_RELAXED);
	res = check_sqe(sqe, &def);
	if (res)
		c->dpage->sq_dropped++;
	else if (__builtin_expect(c->ctx_unpaid != 0, 0))
		res = pay_context(d, c);
	if (res) {
		/*
		 * A stream-ordered op still takes its place in the stream's
		 * sequence (the client counted it), so the frontier can catch
		 * up; it completes in order with the error.
		 */
		if (def && (def->flags & OPF_STREAM) &&
		    (o.stream = stream_lookup(c, sqe->stream))) {
			struct work *w;

			o.stream->submitted++;
			w = work_new(&o, WORK_ADVANCE);
			if (w) {
				w->res = res;
				work_submit(&o, w);
				return;
			}
		}
		if (o.deferred)
			client_latch_error(c, NULL, (uint32_t)res);
		else
			dispatch_complete(d, c, NULL, sqe->user_data, AXON_OP_LAST, res,
					  0, 0, o.t_start);
		return;
	}
	c->stats.ops[sqe->opcode]++;
	c->stats.by_class[o.deferred ? OP_CLASS_DEFERRED : OP_CLASS_SYNC]++;
	d->total_ops++;
	if (def->flags & OPF_STREAM) {
		o.stream = stream_lookup(c, sqe->stream);
		if (!o.stream) {
			/* No stream, so no sequence to keep: fail on the spot. */
			if (o.deferred)
				client_latch_error(c, NULL, CUDA_ERROR_INVALID_HANDLE);
			else
				dispatch_complete(d, c, NULL, sqe->user_data, sqe->opcode,
						  CUDA_ERROR_INVALID_HANDLE, 0, 0,
						  o.t_start);
			return;
		}
		o.stream->submitted++;
	}
	/* A request its prepare refuses fails as one whose issue did. */
	o.res = def->prep(&o);
	if (!o.res) {
		st = def->issue(&o);
		if (st == OP_QUEUED)
			return;
	}
	if (o.stream && o.res) {
		/* Failed validation: keep the stream's sequence in step. */
		struct work *w = work_new(&o, WORK_ADVANCE);

		if (w) {
			w->res = o.res;
			work_submit(&o, w);
			return;
		}
	}
	if (o.deferred) {
		client_latch_error(c, o.stream ? o.stream->ctx : NULL, (uint32_t)o.res);
		return;
	}
	dispatch_complete(d, c, o.stream ? o.stream->ctx : o.ctx, sqe->user_data,
			  sqe->opcode, o.res, o.aux[0],
			  o.aux[1], o.t_start);
}

/*
 * Takes up to budget SQEs from one client. Returns how many it took.
 */
int dispatch_client(struct axond *d, struct client *c, unsigned int budget)
{
	uint32_t tail, n = 0;

	if (c->dead)
		return 0;
	/* Pairs with the client's release of sq_tail after writing SQEs. */
	tail = axon_load_acquire(&c->cpage->sq_tail);
	if (tail - c->sq_head > c->sq_entries) {
		/* A tail that ran past the ring is garbage: drop the client's
		 * view back to what we know and count it. */
		c->dpage->sq_dropped++;
		log_warn("client %llu: SQ tail %u beyond ring (head %u), disconnecting",
			 (unsigned long long)c->id, tail, c->sq_head);
		c->xport->disconnect(d, c, -EPROTO);
		client_disconnect(d, c);
		return 1;
	}
	while (c->sq_head != tail && n < budget) {
		struct axon_sqe sqe;

		if (atomic_load(&c->queued) >= AXOND_MAX_QUEUED)
			break;

		/* Read once: the client can rewrite the slot at any time. */
		memcpy(&sqe, &c->sqes[c->sq_head & c->sq_mask], sizeof(sqe));
		/* Admission: only a completion we can post is taken. */
		if (!(sqe.flags & AXON_SQE_F_DEFERRED)) {
			if (!cq_has_room(c))
				break;
			c->cq_owed++;	/* released by dispatch_complete */
		}
		c->sq_head++;
		issue_one(d, c, &sqe);
		n++;
		if (c->dead)
			return (int)n;
	}
	if (n) {
		c->stats.crossings++;
		/* Pairs with the client's acquire of sq_head in axon_get_sqe. */
		axon_store_release(&c->dpage->sq_head, c->sq_head);
		dispatch_wake_client(d, c);
	}
	return (int)n;
}

/* Moves the worker's completions into client CQs. */
int dispatch_done_queue(struct axond *d)
{
	struct done_entry *e, *next;
	int n = 0;

	pthread_mutex_lock(&d->done_lock);
	e = d->done_head;
	d->done_head = d->done_tail = NULL;
	pthread_mutex_unlock(&d->done_lock);
	for (; e; e = next) {
		next = e->next;
		if (e->client->dead) {
			/* The client's teardown frees its objects wholesale. */
		} else if (e->release) {
			e->release(d, e->client, e->obj);
		} else {
			dispatch_complete(d, e->client, e->ctx, e->user_data, e->op, e->res,
					  e->aux0, 0, e->t_start);
			dispatch_wake_client(d, e->client);
		}
		client_put(d, e->client);
		free(e);
		n++;
	}
	return n;
}
