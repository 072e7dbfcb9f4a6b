// SPDX-License-Identifier: MIT
/*
 * Device output: what the client's kernels printed (device printf) reaches
 * this process's stdout. The daemon holds the bytes for us and says how many
 * in dpage->devout_pending; at each point where CUDA flushes its printf
 * buffer to a native process's stdout (context, stream and event
 * synchronisation, blocking copies, module load and unload), the shim
 * fetches them with AXON_OP_DEVOUT_READ and writes them through stdio's
 * stdout (the driver's own messages, a failed assert's, to stderr), as the
 * driver does, so they stay in order with the program's own output.
 * Nothing pending costs one load.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define DEVOUT_CHUNK	(64U << 10)

/* One drain at a time, so chunks are written in the order fetched. */
static pthread_mutex_t devout_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t pending(void)
{
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE) || !shim.ring.dpage)
		return 0;
	return axon_read_once(&shim.ring.dpage->devout_pending);
}

/* Fetches up to len bytes of one output (AXON_DEVOUT_*) into buf; returns
 * how many, *left what stays of it. */
static size_t fetch(unsigned int which, char *buf, size_t len, uint64_t *left)
{
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe;
	uint64_t id, off;
	size_t n = 0;

	shim_lock();
	if (len > shim_data_max())
		len = shim_data_max();
	off = shim_data_alloc(len, &id);
	sqe = shim_sqe_after_fault();
	if (!sqe) {
		shim_data_done(id);
		shim_unlock();
		*left = 0;
		return 0;
	}
	axon_prep_devout_read(sqe, which, (uint32_t)off, (uint32_t)len);
	if (shim_sync_op(sqe, &w) == CUDA_SUCCESS && w.aux[0] <= len) {
		n = (size_t)w.aux[0];
		memcpy(buf, shim.ring.data + off, n);
		*left = w.aux[1];
	} else {
		*left = 0;	/* the daemon refused: do not loop */
	}
	shim_data_done(id);
	shim_unlock();
	return n;
}

/* Writes one output's held bytes to f. */
static void drain(unsigned int which, FILE *f, char *buf)
{
	uint64_t left = DEVOUT_CHUNK;

	while (left) {
		size_t n = fetch(which, buf, left < DEVOUT_CHUNK ? left : DEVOUT_CHUNK, &left);

		if (!n)
			break;
		fwrite(buf, 1, n, f);
	}
	/* Out now, as the driver's own output would be; order with the
	 * program's earlier output on the same stream is kept by stdio. */
	fflush(f);
}

void shim_devout_drain(void)
{
	char *buf;

	if (__builtin_expect(!pending(), 1))
		return;
	buf = malloc(DEVOUT_CHUNK);
	if (!buf)
		return;
	pthread_mutex_lock(&devout_lock);
	/* The driver's messages (a failed assert's) first, as natively
	 * stderr is unbuffered; then the kernels' printf output. */
	drain(AXON_DEVOUT_STDERR, stderr, buf);
	drain(AXON_DEVOUT_STDOUT, stdout, buf);
	pthread_mutex_unlock(&devout_lock);
	free(buf);
}
