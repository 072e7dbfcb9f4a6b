// SPDX-License-Identifier: MIT
/*
 * The loader pool (see loader.h). Clients with a queued job and none
 * running wait in a ready list; a free thread takes the first, runs its
 * oldest job and puts the client back at the end if more are queued, so
 * clients take turns and none waits behind another's whole queue. Threads
 * start when a job finds none idle, up to LOADER_MAX_THREADS, and live
 * until loader_stop(). A finished job reaches the dispatcher through the
 * done queue (work.c), in an entry allocated when it was submitted, so
 * finishing cannot fail.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "client.h"
#include "loader.h"

struct loader_client {
	struct client *c;
	struct loader_job *head, *tail;	/* queued, not running (ld.lock) */
	bool running;			/* one of its jobs runs (ld.lock) */
	bool listed;			/* on ld.ready (ld.lock) */
	struct loader_client *next_ready;
	/* Dispatcher (and client_free): every job not finished. */
	struct loader_job *all;
	unsigned int pending;
};

static struct {
	pthread_mutex_t lock;		/* protects everything below */
	pthread_cond_t cond;
	struct loader_client *ready, *ready_tail;
	pthread_t threads[LOADER_MAX_THREADS];
	unsigned int nthreads, idle;
	bool stop;
	struct axond *d;
} ld = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* ld.lock held. */
static void ready_add(struct loader_client *lc)
{
	lc->listed = true;
	lc->next_ready = NULL;
	if (ld.ready_tail)
		ld.ready_tail->next_ready = lc;
	else
		ld.ready = lc;
	ld.ready_tail = lc;
}

/* The dispatcher takes the finished job (or, for a client gone, nothing:
 * its teardown drops it). Runs from the done queue. */
static void finished(struct axond *d, struct client *c, void *obj)
{
	struct loader_job *j = obj;
	struct loader_client *lc = c->loader;

	if (j->all_prev)
		j->all_prev->all_next = j->all_next;
	else
		lc->all = j->all_next;
	if (j->all_next)
		j->all_next->all_prev = j->all_prev;
	lc->pending--;
	j->finish(d, c, j);
}

static void *loader_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&ld.lock);
	for (;;) {
		struct loader_client *lc;
		struct loader_job *j;
		struct done_entry *e;

		while (!ld.ready && !ld.stop) {
			ld.idle++;
			pthread_cond_wait(&ld.cond, &ld.lock);
			ld.idle--;
		}
		lc = ld.ready;
		if (!lc)
			break;	/* stopping, nothing queued */
		ld.ready = lc->next_ready;
		if (!ld.ready)
			ld.ready_tail = NULL;
		lc->listed = false;
		j = lc->head;
		lc->head = j->next;
		if (!lc->head)
			lc->tail = NULL;
		lc->running = true;
		pthread_mutex_unlock(&ld.lock);

		/* A client gone has nobody to answer: skip the work. */
		j->cancelled = atomic_load(&j->c->dead_for_worker);
		if (!j->cancelled)
			j->run(ld.d, j);
		e = j->done;

		pthread_mutex_lock(&ld.lock);
		lc->running = false;
		if (lc->head && !lc->listed) {
			ready_add(lc);
			pthread_cond_signal(&ld.cond);
		}
		pthread_mutex_unlock(&ld.lock);
		/* From here the job is the dispatcher's (or the client's
		 * teardown's); the entry holds the client reference. */
		done_post(ld.d, e);
		pthread_mutex_lock(&ld.lock);
	}
	pthread_mutex_unlock(&ld.lock);
	return NULL;
}

int loader_submit(struct axond *d, struct client *c, struct loader_job *j)
{
	struct loader_client *lc = c->loader;

	if (!lc) {
		lc = calloc(1, sizeof(*lc));
		if (!lc)
			return -ENOMEM;
		lc->c = c;
		c->loader = lc;
	}
	if (lc->pending >= d->cfg.max_module_loads)
		return -EBUSY;
	j->done = calloc(1, sizeof(*j->done));
	if (!j->done)
		return -ENOMEM;
	j->c = c;
	j->cancelled = false;
	j->next = NULL;
	j->done->client = c;
	j->done->release = finished;
	j->done->obj = j;

	pthread_mutex_lock(&ld.lock);
	ld.d = d;
	if (!ld.idle && ld.nthreads < LOADER_MAX_THREADS && !ld.stop &&
	    !pthread_create(&ld.threads[ld.nthreads], NULL, loader_thread, NULL))
		ld.nthreads++;
	if (!ld.nthreads || ld.stop) {
		pthread_mutex_unlock(&ld.lock);
		free(j->done);
		j->done = NULL;
		return -EAGAIN;
	}
	client_get(c);	/* moves to the done entry */
	if (lc->tail)
		lc->tail->next = j;
	else
		lc->head = j;
	lc->tail = j;
	if (!lc->running && !lc->listed)
		ready_add(lc);
	pthread_cond_signal(&ld.cond);
	pthread_mutex_unlock(&ld.lock);

	j->all_prev = NULL;
	j->all_next = lc->all;
	if (lc->all)
		lc->all->all_prev = j;
	lc->all = j;
	lc->pending++;
	return 0;
}

unsigned int loader_pending(const struct client *c)
{
	return c->loader ? c->loader->pending : 0;
}

/* client_free: drops the jobs never finished, then c's loader state. */
static void loader_client_fini(struct axond *d, struct client *c)
{
	struct loader_client *lc = c->loader;

	if (!lc)
		return;
	/* Every job's entry held a reference to c: all have run (or were
	 * cancelled) and none is on the queue or the ready list. */
	while (lc->all) {
		struct loader_job *j = lc->all;

		lc->all = j->all_next;
		j->drop(d, c, j);
	}
	free(lc);
	c->loader = NULL;
}

static const struct client_family_ops loader_family = {
	.family = CLIENT_FAMILY_LOADER,
	.fini = loader_client_fini,
	.fini_stage = CLIENT_FINI_HANDLES,
};

static void __attribute__((constructor)) loader_register_family(void)
{
	client_family_register(&loader_family);
}

void loader_stop(struct axond *d)
{
	unsigned int i, n;

	(void)d;
	pthread_mutex_lock(&ld.lock);
	ld.stop = true;
	pthread_cond_broadcast(&ld.cond);
	n = ld.nthreads;
	pthread_mutex_unlock(&ld.lock);
	/* Threads drain the queue first: its clients are gone by now, so
	 * their jobs are cancelled, not run. */
	for (i = 0; i < n; i++)
		pthread_join(ld.threads[i], NULL);
	pthread_mutex_lock(&ld.lock);
	ld.nthreads = 0;
	pthread_mutex_unlock(&ld.lock);
}
