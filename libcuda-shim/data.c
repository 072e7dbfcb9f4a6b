// SPDX-License-Identifier: MIT
/*
 * The data area, used as a ring: allocations are taken at the head and
 * given back in order from the tail once the daemon is done with them —
 * when its SQ head passed the request (the daemon copied the bytes out),
 * or when the stream's frontier passed the operation (the device read or
 * wrote them), or when the caller saw the completion.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

struct data_rec {
	uint64_t start, end;	/* free-running offsets */
	enum data_release kind;
	uint32_t sq_index;	/* DATA_AFTER_SQ: the SQ tail after it */
	uint32_t slot;		/* DATA_AFTER_STREAM */
	uint64_t seq;
	bool released;		/* DATA_AFTER_CQE: caller is done */
};

uint64_t shim_data_max(void)
{
	return shim.ring.data_size;
}

static bool rec_free(const struct data_rec *r)
{
	switch (r->kind) {
	case DATA_AFTER_SQ:
		/* Pairs with the daemon's release of sq_head. */
		return (int32_t)(axon_load_acquire(&shim.ring.dpage->sq_head) -
				 r->sq_index) >= 0;
	case DATA_AFTER_STREAM:
		return axon_frontier(&shim.ring, r->slot) >= r->seq;
	case DATA_AFTER_CQE:
		return r->released;
	}
	return false;
}

/* Gives back finished allocations from the tail. */
static void reclaim(void)
{
	while (shim.nrecs) {
		struct data_rec *r = &shim.recs[shim.rec_head];

		if (!rec_free(r))
			return;
		shim.data_tail = r->end;
		shim.rec_head = (shim.rec_head + 1) % shim.rec_cap;
		shim.nrecs--;
	}
	shim.data_tail = shim.data_head;
}

static int grow_recs(void)
{
	uint32_t cap = shim.rec_cap ? shim.rec_cap * 2 : 256, i;
	struct data_rec *n = malloc(cap * sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < shim.nrecs; i++)
		n[i] = shim.recs[(shim.rec_head + i) % shim.rec_cap];
	free(shim.recs);
	shim.recs = n;
	shim.rec_cap = cap;
	shim.rec_head = 0;
	return 0;
}

/* Where len fits now (after taking back what finished), or false. */
static bool data_fit(uint64_t len, uint64_t *where)
{
	const uint64_t size = shim.ring.data_size;
	int round;

	for (round = 0; round < 2; round++) {
		uint64_t start, off;

		if (shim.nrecs == 0)
			shim.data_head = shim.data_tail = 0;
		start = shim.data_head;
		off = start % size;
		/* An allocation never wraps: skip to the start of the area. */
		if (off + len > size)
			start += size - off;
		if (start + len - shim.data_tail <= size) {
			*where = start;
			return true;
		}
		/* Full: publish pending work, then take back what finished. */
		shim_flush();
		reclaim();
	}
	return false;
}

/* Records [start, start + len) as taken; its offset in the area. */
static uint64_t data_take(uint64_t start, uint64_t len, uint64_t *id)
{
	const uint64_t size = shim.ring.data_size;
	struct data_rec *r;

	if (shim.nrecs == shim.rec_cap && grow_recs())
		abort();	/* a few KiB; nothing sensible to do */
	r = &shim.recs[(shim.rec_head + shim.nrecs) % shim.rec_cap];
	memset(r, 0, sizeof(*r));
	r->start = start;
	r->end = start + len;
	r->kind = DATA_AFTER_CQE;
	r->released = false;
	shim.nrecs++;
	shim.data_head = start + len;
	if (id)
		*id = start;
	return start % size;
}

uint64_t shim_data_alloc(uint64_t len, uint64_t *id)
{
	uint64_t start;

	len = (len + 255) & ~255ULL;
	while (!data_fit(len, &start)) {
		shim_unlock();
		sched_yield();
		shim_lock();
	}
	return data_take(start, len, id);
}

bool shim_data_try_alloc(uint64_t len, uint64_t *off, uint64_t *id)
{
	uint64_t start;

	len = (len + 255) & ~255ULL;
	if (!data_fit(len, &start))
		return false;
	*off = data_take(start, len, id);
	return true;
}


static struct data_rec *rec_by_id(uint64_t id)
{
	uint32_t i;

	for (i = shim.nrecs; i-- > 0;) {
		struct data_rec *r = &shim.recs[(shim.rec_head + i) % shim.rec_cap];

		if (r->start == id)
			return r;
	}
	return NULL;
}

/*
 * When allocation id may be reused. Call right after filling the SQE that
 * names it (the SQ index recorded is the current tail).
 */
void shim_data_release(uint64_t id, enum data_release kind, uint32_t slot, uint64_t seq)
{
	struct data_rec *r = rec_by_id(id);

	if (!r)
		return;
	r->kind = kind;
	r->slot = slot;
	r->seq = seq;
	r->sq_index = shim.ring.sq_tail;
}

/* A DATA_AFTER_CQE allocation (by id) is no longer needed. */
void shim_data_done(uint64_t id)
{
	struct data_rec *r = rec_by_id(id);

	if (r)
		r->released = true;
	reclaim();
}
