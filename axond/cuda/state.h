/* SPDX-License-Identifier: MIT */
/*
 * The cuda backend's shared state, internal to axond/cuda/: its devices,
 * each with its executor's state (exec.c, inflight.c), and each client's
 * part (window.c, context.c). cuda.c defines it and sets it up.
 */
#ifndef AXOND_CUDA_STATE_H
#define AXOND_CUDA_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <cuda.h>

#include "../axond.h"
#include "profile.h"
#include "vendor.h"

struct cu_gctx;
struct dma_reg;
struct inflight;
struct work;

struct cu_dev {
	int ordinal;
	CUdevice dev;
	CUcontext ctx;
	size_t gran;
	/* What one pooled context took of the device when it was made
	 * (cuMemGetInfo around the pool's), in whole granules. */
	uint64_t ctx_mem;
	pthread_t thread;
	pthread_mutex_t lock;	/* protects head/tail/stop */
	pthread_cond_t cond;
	struct work *head, *tail;
	bool stop;
	/* executor-private */
	uint64_t last_poll;	/* 0: nothing was in flight at the last look */
	struct inflight *inflight, *spare;
	/* Issued, not yet tracked: waits for the next item of its stream to
	 * carry its completion (run_one). */
	struct work *held, *held_tail;
	struct cu_gctx *held_g;
	CUstream held_cs;
	struct exec_prof prof;	/* AXOND_PROFILE=1 (profile.h) */
	/* The client context current on the executor, referenced (cu_exec_enter);
	 * NULL: the primary one. */
	struct cu_gctx *cur;
	/* shared mode: the context new clients join (dispatcher; replaced
	 * once poisoned) */
	struct cu_gctx *shared;
};

struct cu_client {
	CUdeviceptr base;	/* its window; the pages: c->granules */
	uint64_t size;
	size_t gran;
	struct dma_reg *reg;	/* its data area's registration */
	/* Its context per device (taken at first use, on the dispatcher;
	 * read by executors after the queue lock). */
	struct cu_gctx *g[AXON_MAX_DEVICES];
};

extern struct cu_state {
	struct cu_dev dev[AXON_MAX_DEVICES];
	int ndev;
	struct axond *d;
	bool shared_mode;		/* --isolation=shared */
	pthread_mutex_t shared_lock;	/* dev[].shared against client_fini */
} cu;

static inline void log_cu(const char *what, CUresult r)
{
	log_err("cuda: %s failed: %s (%d)", what, vendor_err(r), (int)r);
}

#endif
