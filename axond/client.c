// SPDX-License-Identifier: MIT
/*
 * A client's life, whatever its transport: allocated and activated (its
 * window, backend state, credit and place in the list) once its transport
 * (transport-unix.c, transport-kmod.c) has set up its region and identity;
 * torn down when it disconnects or dies.
 *
 * References: the dispatcher holds one from creation until disconnect;
 * every queued work item and done-queue entry holds one. The last put frees
 * everything the client held, on whichever thread drops it; by then no
 * queued work can touch the client (the executor skips dead clients' work).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>

#include <axon/libaxon.h>
#include "axond.h"
#include "backend.h"
#include "client.h"
#include "devout.h"
#include "legacy.h"
#include "memquota.h"
#include "tables.h"
#include "vaslot.h"

/* A refusal in the welcome (or the kernel's answer); returns status. */
int welcome_error(struct axon_welcome *w, int status, const char *msg)
{
	w->status = status;
	snprintf(w->message, sizeof(w->message), "%s", msg);
	return status;
}

static int init_tables(struct client *c)
{
	if (handle_table_init(&c->ctxs, 64))
		return -ENOMEM;
	if (handle_table_init(&c->streams, AXON_MAX_FRONTIER))
		return -ENOMEM;
	if (handle_table_init(&c->events, 1u << 20))
		return -ENOMEM;
	if (handle_table_init(&c->modules, 1u << 16))
		return -ENOMEM;
	if (handle_table_init(&c->funcs, 1u << 20))
		return -ENOMEM;
	return 0;
}

static void free_obj(void *obj, void *arg)
{
	(void)arg;
	free(obj);
}

static void free_stream(void *obj, void *arg)
{
	struct axond *d = arg;

	if (d->backend->stream_fini)
		d->backend->stream_fini(d, obj);
	legacy_stream_fini(d, obj);
	free(obj);
}

static void free_event(void *obj, void *arg)
{
	struct axond *d = arg;

	if (d->backend->event_fini)
		d->backend->event_fini(d, obj);
	free(obj);
}

static void free_func(void *obj, void *arg)
{
	struct func *f = obj;
	struct axond *d = arg;

	d->backend->func_free(d, f);
	free(f->name);
	free(f);
}

static void unload_module(void *obj, void *arg)
{
	struct axond *d = ((void **)arg)[0];
	struct client *c = ((void **)arg)[1];

	d->backend->module_unload(d, c, obj);
	free(obj);
}

static void free_alloc(uint64_t base, uint64_t len, void *value, void *arg)
{
	(void)base;
	(void)len;
	(void)arg;
	free(value);
}

static struct axond *the_daemon;	/* for client_put on the executor */

/* Registered before the dispatcher starts, read only after (client.h). */
static const struct client_family_ops *families[CLIENT_FAMILY_MAX];

void client_family_register(const struct client_family_ops *ops)
{
	if ((unsigned int)ops->family >= CLIENT_FAMILY_MAX || families[ops->family]) {
		log_err("client family %u: out of range or registered twice",
			(unsigned int)ops->family);
		abort();
	}
	families[ops->family] = ops;
}

static void families_fini(struct axond *d, struct client *c, enum client_fini_stage stage)
{
	unsigned int i;

	for (i = 0; i < CLIENT_FAMILY_MAX; i++)
		if (families[i] && families[i]->fini && families[i]->fini_stage == stage)
			families[i]->fini(d, c);
}

static void families_gone(struct axond *d, struct client *c)
{
	unsigned int i;

	for (i = 0; i < CLIENT_FAMILY_MAX; i++)
		if (families[i] && families[i]->gone)
			families[i]->gone(d, c);
}

void client_family_stats(const struct client *c, struct stats_client *out)
{
	unsigned int i;

	for (i = 0; i < CLIENT_FAMILY_MAX; i++)
		if (families[i] && families[i]->stats)
			families[i]->stats(c, out);
}

void client_free(struct client *c)
{
	struct axond *d = the_daemon;
	void *arg[2] = { d, c };

	log_debug("client %llu destroyed", (unsigned long long)c->id);
	/*
	 * Whatever names something is freed before what it names: the
	 * families' state that names the client's handles (graphs, unfinished
	 * loads: client.h gives their order), then the handles, functions
	 * before their modules and every object before its context.
	 */
	families_fini(d, c, CLIENT_FINI_HANDLES);
	handle_table_for_each(&c->funcs, free_func, d);
	namemap_destroy(&c->funcs_by_name);
	handle_table_for_each(&c->modules, unload_module, arg);
	handle_table_for_each(&c->events, free_event, d);
	handle_table_for_each(&c->streams, free_stream, d);
	handle_table_for_each(&c->ctxs, free_obj, NULL);
	handle_table_destroy(&c->funcs);
	handle_table_destroy(&c->modules);
	handle_table_destroy(&c->events);
	handle_table_destroy(&c->streams);
	handle_table_destroy(&c->ctxs);
	/* Mappings of cuMemCreate'd memory first: they name those objects
	 * and sit in the allocation maps. */
	families_fini(d, c, CLIENT_FINI_ALLOCS);
	rangemap_destroy(&c->allocs, free_alloc, NULL);
	rangemap_destroy(&c->pending_free, NULL, NULL);
	pthread_mutex_destroy(&c->alloc_lock);
	pthread_mutex_destroy(&c->err_lock);
	families_fini(d, c, CLIENT_FINI_BACKEND);	/* shared host regions */
	/* Its granules' backing, while the backend's state is there. */
	granules_fini(d, c);
	if (c->backend_priv)
		d->backend->client_fini(d, c);
	/* The backend released the window: it may serve another client. */
	vaslot_put(c);
	devout_free(c);
	c->xport->fini(d, c);
	free(c);
	/* A worker waits for this to say it is idle; its dispatcher may be
	 * asleep when an executor drops the last reference. */
	if (atomic_fetch_sub(&d->clients_live, 1) == 1) {
		uint64_t one = 1;

		if (axond_is_worker(d))
			(void)!write(d->worker_fd, &one, sizeof(one));
		/* The last client gone: give the heap its clients grew back to
		 * the system. malloc only trims the top of the heap by itself;
		 * after a storm of clients (600 killed under load: +30 MB) the
		 * daemon would keep their memory for good. */
		malloc_trim(0);
	}
}

/*
 * -ENOBUFS: the kernel charges through the dmem controller and the client
 * has not reserved enough (kmod.rst §15). Only the client's process can
 * reserve (dmem charges the caller's cgroup), so its daemon page says how
 * much was asked, and the op's refusal is marked (AXON_CQE_F_RESERVE,
 * dispatch_complete): the shim reserves that and makes the call again.
 */
int client_charge(struct axond *d, struct client *c, uint64_t bytes)
{
	int ret = bytes ? c->xport->charge(d, c, bytes) : 0;

	if (ret == -ENOBUFS && c->dpage) {
		axon_write_once(&c->dpage->reserve_want, bytes);
		__atomic_store_n(&c->reserve_asked, true, __ATOMIC_RELEASE);
	}
	return ret;
}

void client_uncharge(struct axond *d, struct client *c, uint64_t bytes)
{
	if (bytes)
		c->xport->uncharge(d, c, bytes);
}

void client_get(struct client *c)
{
	atomic_fetch_add(&c->refs, 1);
}

void client_put(struct axond *d, struct client *c)
{
	(void)d;
	if (atomic_fetch_sub(&c->refs, 1) == 1)
		client_free(c);
}

/* A fresh client object of transport t: locks, maps and tables, the
 * transport's state still empty. */
struct client *client_alloc(struct axond *d, const struct client_transport *t)
{
	struct client *c = calloc(1, sizeof(*c));

	the_daemon = d;
	if (!c)
		return NULL;
	c->xport = t;
	t->init(c);
	atomic_init(&c->refs, 1);
	pthread_mutex_init(&c->alloc_lock, NULL);
	pthread_mutex_init(&c->err_lock, NULL);
	rangemap_init(&c->allocs);
	rangemap_init(&c->pending_free);
	c->id = ++d->next_client_id;
	c->connect_ns = axond_now_ns();
	atomic_fetch_add(&d->clients_live, 1);
	if (init_tables(c)) {
		client_free(c);
		return NULL;
	}
	return c;
}

/*
 * What every transport does once the client's region is mapped: its
 * device-address window, the backend's state, the first minting credit,
 * and its place in the daemon's list. Fills the geometry the client gets.
 */
/* Clients of uid connected now (a share of --max-clients per user). */
static unsigned int clients_of_user(const struct axond *d, uid_t uid)
{
	const struct client *c;
	unsigned int n = 0;

	for (c = d->clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

int client_activate(struct axond *d, struct client *c, struct axon_welcome *w)
{
	uint64_t credit, total, taken, avail, slot_base;
	int ret;

	/* One user cannot take every client slot from the others. */
	if (clients_of_user(d, c->uid) >= d->cfg.max_clients_per_user) {
		d->clients_refused_user++;
		w->status = -EBUSY;
		snprintf(w->message, sizeof(w->message),
			 "too many clients of uid %u (--max-clients-per-user=%u)",
			 (unsigned int)c->uid, d->cfg.max_clients_per_user);
		return -EBUSY;
	}
	/* A window of the bounded set (vaslot.c), back once c is freed. */
	ret = vaslot_take(d, c);
	if (ret) {
		snprintf(w->message, sizeof(w->message),
			 "no device-address window free: all %llu are held by clients "
			 "or their unfinished work", (unsigned long long)vaslot_count(d));
		w->status = ret;
		return ret;
	}
	slot_base = c->params.va_base;
	/* The backend may place the window itself (it reserves it). */
	ret = d->backend->client_init(d, c);
	if (ret)
		return welcome_error(w, ret, "the device backend refused the client");
	/* ...and then frees it itself: the slot is not needed. */
	if (c->params.va_base != slot_base)
		vaslot_put(c);
	c->mint_next_daemon = c->params.va_base + c->params.va_size - c->params.va_size / 16;
	/* What its minted memory backs, a granule at a time, and is charged. */
	if (granules_init(&c->granules, c->params.va_base, c->params.va_size,
			  d->info->device[0].vmm_granularity))
		return welcome_error(w, -ENOMEM, "out of memory");
	/* Reserve the first minting credit. */
	credit = d->cfg.mint_credit;
	total = d->info->device[0].total_mem;
	taken = d->mem_used + d->mem_reserved;
	avail = taken >= total ? 0 : total - taken;
	if (credit > avail)
		credit = avail;
	/* Its user's memory share; the credit counts against the quotas. */
	ret = mq_client_join(d, c);
	if (ret)
		return welcome_error(w, ret, "out of memory");
	/* Its rings and data area are host memory held for it (pinned for
	 * DMA by the cuda backend): within its pinned-memory limits. */
	if (mq_pinned_take(d, c, c->region_size)) {
		mq_client_leave(d, c);
		return welcome_error(w, -ENOSPC, "past the pinned host memory limit "
				     "(--max-pinned-per-client, --max-pinned-per-user)");
	}
	/* Its own device context, if the backend made one for it. Where the
	 * kernel charges through dmem the client can reserve only once its
	 * SETUP has returned: its first call pays then (dispatch.c), and
	 * may be asked to reserve like any other. */
	if (d->backend->ctx_mem) {
		uint64_t need = d->backend->ctx_mem(d, c);

		if (client_charge_device(d, c, need, &c->ctx_mem)) {
			if (!__atomic_exchange_n(&c->reserve_asked, false, __ATOMIC_ACQ_REL)) {
				mq_client_leave(d, c);
				return welcome_error(w, -ENOMEM, "no device memory for its "
						     "context within the arena or its quotas");
			}
			c->ctx_unpaid = need;
		}
	}
	if (credit > mq_quota_room(d, c))
		credit = mq_quota_room(d, c);
	mq_reserved_add(d, c, credit);
	c->params.mint_credit = credit;
	c->params.features = AXON_FEAT_DEFERRED | AXON_FEAT_MINT | AXON_FEAT_FRONTIER |
			     c->xport->features;
	c->dpage->mint_credit = credit;

	w->status = 0;
	w->params = c->params;
	d->nclients++;
	d->total_clients++;
	c->next = d->clients;
	if (d->clients)
		d->clients->prev = c;
	d->clients = c;
	log_info("client %llu connected (%s): pid %d uid %u (%s)",
		 (unsigned long long)c->id, c->xport->name,
		 (int)c->pid, (unsigned int)c->uid, c->comm);
	return 0;
}

/*
 * The client went away (socket closed, process died, protocol violation):
 * release its accounting now, and everything else once no queued work of
 * it remains.
 */
void client_disconnect(struct axond *d, struct client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	atomic_store(&c->dead_for_worker, true);
	c->dpage->state = AXON_CLIENT_STATE_DEAD;
	/* Atomic: the kernel writes this word too (main.c, set_need_wakeup). */
	__atomic_fetch_or(&c->dpage->sq_flags, AXON_SQ_F_DAEMON_GONE, __ATOMIC_RELAXED);
	c->xport->close(d, c);
	mq_client_leave(d, c);	/* its user's share, before the counts go */
	d->mem_used -= c->bytes_mapped;
	d->mem_reserved -= c->mint_credit;
	c->mint_credit = 0;
	if (c->prev)
		c->prev->next = c->next;
	else
		d->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	d->nclients--;
	log_info("client %llu gone: pid %d (%s), %llu ops, %llu bytes were mapped",
		 (unsigned long long)c->id, (int)c->pid, c->comm,
		 (unsigned long long)(c->stats.by_class[0] + c->stats.by_class[1]),
		 (unsigned long long)c->bytes_mapped);
	/* Its tracers end, its parked work (which holds no reference) goes to
	 * the executor: the families' order, client.h. */
	families_gone(d, c);
	client_put(d, c);
}
