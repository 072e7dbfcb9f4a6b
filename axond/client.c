// SPDX-License-Identifier: MIT
/*
 * A client's life: created from a hello on the socket (region, doorbell,
 * identity, tables, backend state), torn down when it disconnects or dies.
 *
 * References: the dispatcher holds one from creation until disconnect;
 * every queued work item and done-queue entry holds one. The last put frees
 * everything the client held, on whichever thread drops it; by then no
 * queued work can touch the client (the executor skips dead clients' work).
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cuda.h>

#include <axon/libaxon.h>
#include <linux/axon-layout.h>
#include "axond.h"
#include "backend.h"
#include "devout.h"
#include "graph.h"
#include "loader.h"
#include "ops/hostmem.h"
#include "ops/ops.h"
#include "memquota.h"
#include "vaslot.h"

static int hello_error(struct axon_welcome *w, int status, const char *msg)
{
	w->status = status;
	snprintf(w->message, sizeof(w->message), "%s", msg);
	return status;
}

static int negotiate(struct axond *d, const struct axon_hello *h,
		     struct axon_params *p, struct axon_welcome *w);

/* The geometry a client asking for the defaults gets (pool.c). */
int client_default_geometry(struct axond *d, struct axon_params *p)
{
	struct axon_hello h = { .magic = AXON_MAGIC, .abi_major = AXON_ABI_MAJOR };
	struct axon_welcome w;

	return negotiate(d, &h, p, &w);
}

/* Checks the hello and fills the geometry the client will get. */
static int negotiate(struct axond *d, const struct axon_hello *h,
		     struct axon_params *p, struct axon_welcome *w)
{
	const struct axon_params *req = &h->params;
	const struct axon_layout_rules rules = {
		.page_size = AXON_PAGE_SIZE,
		.default_data_size = d->cfg.default_data_size,
		.max_data_size = AXON_MAX_DATA_SIZE,
	};
	/* The sizes asked for; the layout fills in the rest. */
	struct axon_params granted = {
		.sq_entries = req->sq_entries,
		.cq_entries = req->cq_entries,
		.data_size = req->data_size,
	};
	uint32_t bad;
	unsigned int i;

	if (h->abi_major != AXON_ABI_MAJOR) {
		char msg[128];

		snprintf(msg, sizeof(msg), "ABI %u.%u not supported (axond speaks %u.%u)",
			 h->abi_major, h->abi_minor, AXON_ABI_MAJOR, AXON_ABI_MINOR);
		return hello_error(w, -EPROTO, msg);
	}
	if (h->flags || req->flags)
		return hello_error(w, -EINVAL, "unknown flags in hello");
	if (h->target_client || h->target_pid || h->resv || req->resv0)
		return hello_error(w, -EINVAL, "reserved hello fields must be zero");
	for (i = 0; i < sizeof(req->resv) / sizeof(req->resv[0]); i++)
		if (req->resv[i])
			return hello_error(w, -EINVAL, "reserved hello fields must be zero");
	if (axon_region_layout(&granted, &rules, &bad))
		return hello_error(w, -EINVAL, bad == AXON_LAYOUT_BAD_SQ ? "sq_entries too large" :
				   bad == AXON_LAYOUT_BAD_CQ ? "cq_entries out of range" :
				   bad == AXON_LAYOUT_BAD_DATA ? "data_size too large" :
				   "the region cannot be laid out");
	*p = granted;
	p->features = AXON_FEAT_DEFERRED | AXON_FEAT_MINT | AXON_FEAT_FRONTIER;
	return 0;
}

static int map_region(struct axond *d, struct client *c)
{
	const struct axon_params *p = &c->params;
	void *map;
	int ret;

	/* A region made ahead of time when the client asked for the default
	 * sizes (pool.c), else a new one. */
	if (region_pool_take(d, p, &c->region_fd, &map) == 0) {
		c->pooled = true;
		/*
		 * A worker serves this one client: another region would only
		 * cost it start-up. Making one (a 64 MiB fallocate here, then
		 * its pinning, which the driver serialises with this client's
		 * first module load) put ~30 ms into cuInit and ~50 ms into
		 * the first load on the H200.
		 */
		if (!axond_is_worker(d))
			region_pool_refill(d);
	} else {
		ret = region_create(p->region_size, &c->region_fd, &map);
		if (ret)
			return ret;
	}
	c->region = map;
	c->region_size = p->region_size;
	c->cpage = (void *)((char *)c->region + p->off_client);
	c->dpage = (void *)((char *)c->region + p->off_daemon);
	c->frontier = (void *)((char *)c->region + p->off_frontier);
	c->sqes = (const void *)((char *)c->region + p->off_sqes);
	c->cqes = (void *)((char *)c->region + p->off_cqes);
	c->data = (unsigned char *)c->region + p->off_data;
	c->sq_entries = p->sq_entries;
	c->sq_mask = p->sq_entries - 1;
	c->cq_entries = p->cq_entries;
	c->cq_mask = p->cq_entries - 1;
	c->dpage->sq_mask = c->sq_mask;
	c->dpage->sq_entries = c->sq_entries;
	c->dpage->cq_mask = c->cq_mask;
	c->dpage->cq_entries = c->cq_entries;
	return 0;
}

static void read_identity(struct client *c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64];
	FILE *f;

	if (getsockopt(c->sock_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->gid = cred.gid;
	}
	snprintf(c->comm, sizeof(c->comm), "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(c->comm, sizeof(c->comm), f))
			c->comm[strcspn(c->comm, "\n")] = 0;
		fclose(f);
	}
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

void client_free(struct client *c)
{
	struct axond *d = the_daemon;
	void *arg[2] = { d, c };

	log_debug("client %llu destroyed", (unsigned long long)c->id);
	/* Graphs first: their nodes name functions, modules and streams. */
	graph_client_fini(d, c);
	/* Module loads the client left before they finished (loader.h). */
	loader_client_fini(d, c);
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
	/* Mappings of cuMemCreate'd memory first: they name those objects. */
	vmm_client_fini(d, c);
	rangemap_destroy(&c->allocs, free_alloc, NULL);
	rangemap_destroy(&c->pending_free, NULL, NULL);
	pthread_mutex_destroy(&c->alloc_lock);
	pthread_mutex_destroy(&c->err_lock);
	hostmem_client_fini(d, c);	/* before the backend's client state */
	if (c->backend_priv)
		d->backend->client_fini(d, c);
	/* The backend released the window: it may serve another client. */
	vaslot_put(c);
	devout_free(c);
	/* A worker's client's region stays mapped until the worker ends:
	 * the cuda backend unregisters its data area only then (leftover). */
	if (c->region && !axond_is_worker(d))
		munmap(c->region, c->region_size);
	if (c->region_fd >= 0)
		close(c->region_fd);
	if (c->doorbell_fd >= 0)
		close(c->doorbell_fd);
	if (c->transport == CLIENT_KMOD)
		kmod_client_fini(c);
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

/* A fresh client object: locks, maps and tables, no transport yet. */
struct client *client_alloc(struct axond *d)
{
	struct client *c = calloc(1, sizeof(*c));

	the_daemon = d;
	if (!c)
		return NULL;
	c->region_fd = c->doorbell_fd = c->sock_fd = c->kmod_fd = -1;
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
		return hello_error(w, ret, "the device backend refused the client");
	/* ...and then frees it itself: the slot is not needed. */
	if (c->params.va_base != slot_base)
		vaslot_put(c);
	c->mint_next_daemon = c->params.va_base + c->params.va_size - c->params.va_size / 16;
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
		return hello_error(w, ret, "out of memory");
	if (credit > mq_quota_room(d, c))
		credit = mq_quota_room(d, c);
	mq_reserved_add(d, c, credit);
	c->params.mint_credit = credit;
	c->params.features = AXON_FEAT_DEFERRED | AXON_FEAT_MINT | AXON_FEAT_FRONTIER;
	/* Shared host memory needs the socket to pass descriptors on. */
	if (c->transport == CLIENT_UNIX)
		c->params.features |= AXON_FEAT_HOSTMEM;
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
		 (unsigned long long)c->id, c->transport == CLIENT_KMOD ? "kmod" : "unix",
		 (int)c->pid, (unsigned int)c->uid, c->comm);
	return 0;
}

struct client *client_create(struct axond *d, int sock_fd,
			     const struct axon_hello *hello,
			     struct axon_welcome *w)
{
	struct client *c;
	int ret;

	if (d->nclients >= d->cfg.max_clients) {
		hello_error(w, -EBUSY, "too many clients");
		return NULL;
	}
	c = client_alloc(d);
	if (!c) {
		hello_error(w, -ENOMEM, "out of memory");
		return NULL;
	}
	c->transport = CLIENT_UNIX;
	c->sock_fd = sock_fd;
	if (negotiate(d, hello, &c->params, w))
		goto err_free;
	c->params.client_id = c->id;
	read_identity(c);
	ret = map_region(d, c);
	if (ret) {
		hello_error(w, ret, "cannot set up the client's rings");
		goto err_free;
	}
	c->doorbell_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (c->doorbell_fd < 0) {
		hello_error(w, -errno, "cannot create the doorbell");
		goto err_free;
	}
	if (client_activate(d, c, w))
		goto err_free;
	return c;

err_free:
	c->sock_fd = -1;	/* the caller owns it on failure */
	client_free(c);
	return NULL;
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
	c->dpage->sq_flags |= AXON_SQ_F_DAEMON_GONE;
	if (c->sock_fd >= 0) {
		epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->sock_fd, NULL);
		close(c->sock_fd);
	}
	if (c->doorbell_fd >= 0) {
		epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->doorbell_fd, NULL);
		close(c->doorbell_fd);
	}
	c->sock_fd = c->doorbell_fd = -1;
	if (c->transport == CLIENT_KMOD)
		kmod_client_gone(d, c);
	mq_client_leave(d, c);	/* its user's share, before the counts go */
	d->mem_used -= c->bytes_mapped;
	d->mem_reserved -= c->mint_credit;
	c->mint_credit = 0;
	trace_client_gone(d, c);
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
	hold_client_gone(d, c);	/* parked work holds no reference */
	client_put(d, c);
}
