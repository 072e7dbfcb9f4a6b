// SPDX-License-Identifier: MIT
/*
 * The registrar (registrar.h): one thread that registers client data areas
 * for DMA (cuMemHostRegister) in the background, so that connecting stays
 * instant, and undoes a registration before its memory goes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../axond.h"
#include "registrar.h"
#include "context.h"
#include "state.h"
#include "vendor.h"

/*
 * A data area's registration for DMA, done by the registrar thread
 * (cu.reg_lock): it costs ~0.7 ms per MiB, too long for a client to wait at
 * connect. Copies before it finishes still work: the driver stages
 * unregistered memory itself. Pooled regions are registered before any
 * client has them (cu.prepared), and a client that gets one adopts it.
 */
struct dma_reg {
	enum { REG_QUEUED, REG_RUNNING, REG_DONE, REG_FAILED, REG_CANCELLED } state;
	void *ptr;
	size_t len;
	struct dma_reg *next;		/* the registrar's queue */
	struct dma_reg *next_prepared;	/* cu.prepared */
};

static struct {
	pthread_t thread;
	pthread_mutex_t lock;	/* protects everything here and each dma_reg's state */
	pthread_cond_t cond;
	struct dma_reg *head, *tail;	/* queued registrations */
	struct dma_reg *prepared;	/* pooled regions, not yet adopted */
	bool stop;
} reg;

static void *registrar(void *arg)
{
	(void)arg;
	cu_set_current(cu.dev[0].ctx);
	pthread_mutex_lock(&reg.lock);
	for (;;) {
		struct dma_reg *g;
		CUresult r;

		while (!reg.head && !reg.stop)
			pthread_cond_wait(&reg.cond, &reg.lock);
		g = reg.head;
		if (!g)
			break;
		reg.head = g->next;
		if (!reg.head)
			reg.tail = NULL;
		g->state = REG_RUNNING;
		pthread_mutex_unlock(&reg.lock);
		r = vd.cuMemHostRegister(g->ptr, g->len, CU_MEMHOSTREGISTER_PORTABLE);
		if (r)
			log_cu("registering a client's data area (copies stay staged)", r);
		pthread_mutex_lock(&reg.lock);
		g->state = r ? REG_FAILED : REG_DONE;
		pthread_cond_broadcast(&reg.cond);
	}
	pthread_mutex_unlock(&reg.lock);
	return NULL;
}

/* Queues a registration; reg_lock held. */
static void queue_locked(struct dma_reg *g)
{
	g->state = REG_QUEUED;
	g->next = NULL;
	if (reg.tail)
		reg.tail->next = g;
	else
		reg.head = g;
	reg.tail = g;
	pthread_cond_signal(&reg.cond);
}

/* The registration of [ptr, ptr+len): a prepared one, or a new one queued. */
struct dma_reg *cu_dma_register_later(void *ptr, size_t len)
{
	struct dma_reg **pp, *g;

	pthread_mutex_lock(&reg.lock);
	for (pp = &reg.prepared; *pp; pp = &(*pp)->next_prepared) {
		if ((*pp)->ptr == ptr && (*pp)->len == len) {
			g = *pp;
			*pp = g->next_prepared;
			pthread_mutex_unlock(&reg.lock);
			return g;
		}
	}
	g = calloc(1, sizeof(*g));
	if (g) {
		g->ptr = ptr;
		g->len = len;
		queue_locked(g);
	}
	pthread_mutex_unlock(&reg.lock);
	return g;
}

/* Before the memory goes: take it off the queue, or wait for the
 * registration in progress, and undo a finished one. */
void cu_dma_unregister(struct dma_reg *g)
{
	struct dma_reg **pp;

	if (!g)
		return;
	pthread_mutex_lock(&reg.lock);
	if (g->state == REG_QUEUED) {
		for (pp = &reg.head; *pp; pp = &(*pp)->next) {
			if (*pp == g) {
				*pp = g->next;
				break;
			}
		}
		reg.tail = NULL;
		for (pp = &reg.head; *pp; pp = &(*pp)->next)
			reg.tail = *pp;
		g->state = REG_CANCELLED;
	}
	while (g->state == REG_RUNNING)
		pthread_cond_wait(&reg.cond, &reg.lock);
	pthread_mutex_unlock(&reg.lock);
	if (g->state == REG_DONE)
		vd.cuMemHostUnregister(g->ptr);
	free(g);
}

/* Until every queued registration is done (a worker, before it is
 * ready: its client's region then is registered when it comes). */
void cuda_region_pool_wait(struct axond *d)
{
	(void)d;
	struct dma_reg *g;

	pthread_mutex_lock(&reg.lock);
	for (g = reg.prepared; g; g = g->next_prepared)
		while (g->state == REG_QUEUED || g->state == REG_RUNNING)
			pthread_cond_wait(&reg.cond, &reg.lock);
	pthread_mutex_unlock(&reg.lock);
}

/* A pooled region: register its data area before a client has it. */
void cuda_region_prepare(struct axond *d, void *data, size_t len)
{
	struct dma_reg *g = calloc(1, sizeof(*g));

	(void)d;
	if (!g)
		return;
	g->ptr = data;
	g->len = len;
	pthread_mutex_lock(&reg.lock);
	queue_locked(g);
	g->next_prepared = reg.prepared;
	reg.prepared = g;
	pthread_mutex_unlock(&reg.lock);
}

void cuda_region_unprepare(struct axond *d, void *data)
{
	struct dma_reg **pp, *g = NULL;

	(void)d;
	pthread_mutex_lock(&reg.lock);
	for (pp = &reg.prepared; *pp; pp = &(*pp)->next_prepared) {
		if ((*pp)->ptr == data) {
			g = *pp;
			*pp = g->next_prepared;
			break;
		}
	}
	pthread_mutex_unlock(&reg.lock);
	cu_dma_unregister(g);
}

int cu_registrar_start(char *err, size_t errlen)
{
	pthread_mutex_init(&reg.lock, NULL);
	pthread_cond_init(&reg.cond, NULL);
	if (pthread_create(&reg.thread, NULL, registrar, NULL)) {
		snprintf(err, errlen, "cannot start the registrar thread");
		return -EAGAIN;
	}
	return 0;
}

void cu_registrar_stop(void)
{
	pthread_mutex_lock(&reg.lock);
	reg.stop = true;
	pthread_cond_broadcast(&reg.cond);
	pthread_mutex_unlock(&reg.lock);
	pthread_join(reg.thread, NULL);
}
