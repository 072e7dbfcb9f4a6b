/* SPDX-License-Identifier: MIT */
/*
 * spsc-common.h - the SPSC ring protocol of libaxon between a producer (the
 * client side: libaxon's own inline axon_get_sqe / axon_submit /
 * axon_peek_cqe / axon_wait_cqe / axon_cqe_seen on a hand-built struct
 * axon_ring) and a consumer written the way axond's dispatcher is (acquire
 * sq_tail, copy each SQE once, admission against CQ room, post CQEs with a
 * release of cq_tail, release sq_head, NEED_WAKEUP + full barrier + re-check
 * before sleeping on the doorbell, futex wake when the client is WAITING).
 *
 * The region is one MAP_SHARED memfd laid out as axond lays out a client
 * region (client page, daemon page, frontier, SQEs, CQEs, data); a control
 * block for the test lives in the data area. Shared by spsc-threads.c and
 * spsc-procs.c, which differ only in where the consumer runs.
 *
 * Every check is on content, never on time: each SQE is compared word for
 * word with the one its sequence number must have produced, each CQE with
 * the one its SQE must have produced, and both sides keep a running
 * checksum over all payload words that must agree at the end. Deadlines
 * exist only to turn a hang (a lost wake-up) into a failure message.
 */
#ifndef AXON_TESTS_SPSC_COMMON_H
#define AXON_TESTS_SPSC_COMMON_H

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <axon/libaxon.h>
/* White box: the hand-built ring below names the socket transport. */
#include "../../lib/transport.h"

#if defined(__SANITIZE_ADDRESS__)
#define SPSC_SLOW	4
#else
#define SPSC_SLOW	1
#endif

/* How long either side may wait for the other before we call it a hang. */
#define SPSC_HANG_NS	(20ull * 1000 * 1000 * 1000 * SPSC_SLOW)

enum spsc_mode {
	SPSC_POLL,	/* both sides spin; publish with a plain release store */
	SPSC_DOORBELL,	/* axon_submit + eventfd doorbell, axon_wait_cqe + futex */
};

struct spsc_cfg {
	const char *name;
	enum spsc_mode mode;
	uint32_t sq_entries, cq_entries;	/* powers of two, cq >= sq */
	uint64_t total;			/* SQEs to push through */
	uint32_t deferred_every;	/* every Nth SQE deferred (0: none) */
	uint32_t max_batch;		/* SQEs per submit: 1..max_batch */
	uint32_t start_index;		/* initial ring indices (test u32 wrap) */
	uint64_t producer_spin_ns;	/* axon_ring.spin_ns (DOORBELL) */
	uint64_t consumer_spin_ns;	/* idle spin before sleeping (DOORBELL) */
	uint32_t consumer_budget;	/* SQEs per drain pass (axond: 64) */
};

/* The test's control block, in the region's data area. */
struct spsc_ctl {
	uint32_t go;		/* producer -> consumer: start */
	uint32_t stop;		/* either side: give up (error) */
	uint32_t blocked;	/* consumer: admission held an SQE back */
	uint32_t pad;
	/* consumer results */
	uint64_t c_taken, c_cqes, c_sum, c_sleeps, c_doorbell_wakes;
	uint64_t c_futex_wakes, c_admission_stalls, c_sq_head_max_lag;
	int c_failed;
	char c_msg[256];
};

struct spsc_region {
	void *base;
	size_t size;
	int fd;
	struct axon_params p;		/* the layout, as axond would send it */
	struct axon_client_page *cpage;
	struct axon_daemon_page *dpage;
	struct axon_sqe *sqes;
	struct axon_cqe *cqes;
	struct spsc_ctl *ctl;
	int doorbell;			/* eventfd (DOORBELL) or -1 */
	int sock[2];			/* "connection": client end, daemon end */
};

struct spsc_result {
	uint64_t p_sent, p_cqes, p_sum, p_full_hits, p_doorbells, p_sleeps;
	uint64_t p_waits;
	struct spsc_ctl c;		/* copy of the consumer's results */
};

static inline uint64_t spsc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void spsc_relax(unsigned int *spins)
{
	/* Two cores are shared with builds and the other side: yield now
	 * and then instead of burning a whole time slice. */
	if (++*spins % 16 == 0)
		sched_yield();
	else
		__builtin_ia32_pause();
}

/* splitmix64's finaliser: a deterministic word for each (seq, lane). */
static inline uint64_t spsc_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline bool spsc_is_deferred(const struct spsc_cfg *cfg, uint64_t seq)
{
	return cfg->deferred_every && seq % cfg->deferred_every == cfg->deferred_every - 1;
}

/* The SQE that sequence number seq must be, byte for byte. */
static inline void spsc_make_sqe(const struct spsc_cfg *cfg, uint64_t seq,
				 struct axon_sqe *sqe)
{
	unsigned int i;

	memset(sqe, 0, sizeof(*sqe));
	axon_prep_nop(sqe);
	sqe->flags = spsc_is_deferred(cfg, seq) ? AXON_SQE_F_DEFERRED : 0;
	sqe->user_data = seq;
	sqe->stream = spsc_mix(seq);
	for (i = 0; i < 5; i++)
		sqe->raw[i] = spsc_mix(seq * 8 + i + 1);
}

/* Checksum of one SQE: all eight words, order-sensitive. */
static inline uint64_t spsc_sqe_sum(const struct axon_sqe *sqe)
{
	uint64_t w[8], h = 0xcbf29ce484222325ULL;
	unsigned int i;

	memcpy(w, sqe, sizeof(w));
	for (i = 0; i < 8; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL + (h >> 29);
	return h;
}

/* Running checksum: order matters (a swapped pair changes it). */
static inline uint64_t spsc_fold(uint64_t acc, uint64_t v)
{
	return (acc * 0x9e3779b97f4a7c15ULL) ^ v;
}

/* ---- region -------------------------------------------------------------- */

#define SPSC_PAGE	4096ULL
#define SPSC_ALIGN(x)	(((x) + SPSC_PAGE - 1) & ~(SPSC_PAGE - 1))

/* Lays out and maps a region exactly as axond's negotiate() does. */
static int spsc_region_create(const struct spsc_cfg *cfg, struct spsc_region *g,
			      char *msg, size_t msglen)
{
	struct axon_params *p = &g->p;
	uint64_t off = 0;

	memset(g, 0, sizeof(*g));
	g->fd = g->doorbell = g->sock[0] = g->sock[1] = -1;
	p->sq_entries = cfg->sq_entries;
	p->cq_entries = cfg->cq_entries;
	p->data_size = SPSC_ALIGN(sizeof(struct spsc_ctl));
	p->frontier_entries = AXON_MAX_FRONTIER;
	p->off_client = off;
	off += SPSC_PAGE;
	p->off_daemon = off;
	off += SPSC_PAGE;
	p->off_frontier = off;
	off += SPSC_ALIGN((uint64_t)p->frontier_entries * sizeof(uint64_t));
	p->off_sqes = off;
	off += SPSC_ALIGN((uint64_t)p->sq_entries * AXON_SQE_SIZE);
	p->off_cqes = off;
	off += SPSC_ALIGN((uint64_t)p->cq_entries * AXON_CQE_SIZE);
	p->off_data = off;
	off += p->data_size;
	p->region_size = off;

	g->fd = memfd_create("spsc-region", MFD_CLOEXEC);
	if (g->fd < 0 || ftruncate(g->fd, (off_t)off) < 0) {
		snprintf(msg, msglen, "memfd: %s", strerror(errno));
		return -1;
	}
	g->size = off;
	g->base = mmap(NULL, off, PROT_READ | PROT_WRITE, MAP_SHARED, g->fd, 0);
	if (g->base == MAP_FAILED) {
		snprintf(msg, msglen, "mmap: %s", strerror(errno));
		return -1;
	}
	g->cpage = (void *)((char *)g->base + p->off_client);
	g->dpage = (void *)((char *)g->base + p->off_daemon);
	g->sqes = (void *)((char *)g->base + p->off_sqes);
	g->cqes = (void *)((char *)g->base + p->off_cqes);
	g->ctl = (void *)((char *)g->base + p->off_data);

	g->dpage->sq_mask = cfg->sq_entries - 1;
	g->dpage->sq_entries = cfg->sq_entries;
	g->dpage->cq_mask = cfg->cq_entries - 1;
	g->dpage->cq_entries = cfg->cq_entries;
	/* Free-running indices start near 2^32 so they wrap during the run. */
	g->cpage->sq_tail = g->dpage->sq_head = cfg->start_index;
	g->cpage->cq_head = g->dpage->cq_tail = cfg->start_index;

	if (cfg->mode == SPSC_DOORBELL) {
		g->doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (g->doorbell < 0) {
			snprintf(msg, msglen, "eventfd: %s", strerror(errno));
			return -1;
		}
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, g->sock) < 0) {
		snprintf(msg, msglen, "socketpair: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static void spsc_region_destroy(struct spsc_region *g)
{
	if (g->base && g->base != MAP_FAILED)
		munmap(g->base, g->size);
	if (g->fd >= 0)
		close(g->fd);
	if (g->doorbell >= 0)
		close(g->doorbell);
	if (g->sock[0] >= 0)
		close(g->sock[0]);
	if (g->sock[1] >= 0)
		close(g->sock[1]);
	memset(g, 0, sizeof(*g));
}

/* The client's struct axon_ring, built by hand as axon_connect would. */
static void spsc_ring_init(const struct spsc_cfg *cfg, struct spsc_region *g,
			   struct axon_ring *r)
{
	memset(r, 0, sizeof(*r));
	r->cpage = g->cpage;
	r->dpage = g->dpage;
	r->sqes = g->sqes;
	r->cqes = g->cqes;
	r->data = (unsigned char *)g->ctl;
	r->data_size = g->p.data_size;
	r->params = g->p;
	r->region = g->base;
	r->region_size = g->size;
	r->sq_entries = cfg->sq_entries;
	r->sq_mask = cfg->sq_entries - 1;
	r->cq_entries = cfg->cq_entries;
	r->cq_mask = cfg->cq_entries - 1;
	r->sq_tail = axon_read_once(&g->cpage->sq_tail);
	r->cq_head = axon_read_once(&g->cpage->cq_head);
	r->sock_fd = g->sock[0];
	r->doorbell_fd = g->doorbell;
	/* The socket transport's doorbell, sleep and liveness check, as
	 * axon_connect would choose (lib/transport.h, inside libaxon.a). */
	r->ops = &axon_transport_unix;
	r->transport = AXON_TRANSPORT_UNIX;
	r->spin_ns = (unsigned int)cfg->producer_spin_ns;
}

/* ---- consumer: the daemon's side ---------------------------------------- */

struct spsc_consumer {
	const struct spsc_cfg *cfg;
	struct spsc_region *g;
	uint32_t sq_head, cq_tail;	/* private copies, as axond keeps */
	uint64_t next_seq;
	uint64_t sum;
	bool blocked;			/* last pass stopped on admission */
};

static int spsc_cfail(struct spsc_consumer *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int spsc_cfail(struct spsc_consumer *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->g->ctl->c_msg, sizeof(c->g->ctl->c_msg), fmt, ap);
	va_end(ap);
	c->g->ctl->c_failed = 1;
	__atomic_store_n(&c->g->ctl->stop, 1, __ATOMIC_SEQ_CST);
	/* Make a producer asleep in axon_wait_cqe return -EPIPE. */
	axon_write_once(&c->g->dpage->sq_flags, AXON_SQ_F_DAEMON_GONE);
	axon_smp_mb();
	syscall(SYS_futex, &c->g->dpage->cq_tail, FUTEX_WAKE, 1, NULL, NULL, 0);
	return -1;
}

/* dispatch_wake_client(): pairs with axon_wait_cqe's WAITING + barrier. */
static void spsc_wake_client(struct spsc_consumer *c)
{
	axon_smp_mb();
	if (axon_read_once(&c->g->cpage->cq_flags) & AXON_CQ_F_WAITING) {
		syscall(SYS_futex, &c->g->dpage->cq_tail, FUTEX_WAKE, 1, NULL, NULL, 0);
		c->g->ctl->c_futex_wakes++;
	}
}

/* One drain pass, as dispatch_client(). Returns SQEs taken, or -1. */
static int spsc_drain(struct spsc_consumer *c)
{
	struct spsc_region *g = c->g;
	const struct spsc_cfg *cfg = c->cfg;
	uint32_t tail, n = 0;

	c->blocked = false;
	/* Pairs with the client's release of sq_tail (axon_submit). */
	tail = axon_load_acquire(&g->cpage->sq_tail);
	if (tail - c->sq_head > cfg->sq_entries)
		return spsc_cfail(c, "sq_tail %u ran past the ring (head %u, %u entries)",
				  tail, c->sq_head, cfg->sq_entries);
	if (tail - c->sq_head > g->ctl->c_sq_head_max_lag)
		g->ctl->c_sq_head_max_lag = tail - c->sq_head;
	while (c->sq_head != tail && n < cfg->consumer_budget) {
		struct axon_sqe sqe, want;

		/* Read once: the client may rewrite the slot at any time. */
		memcpy(&sqe, &g->sqes[c->sq_head & (cfg->sq_entries - 1)], sizeof(sqe));
		if (!(sqe.flags & AXON_SQE_F_DEFERRED)) {
			/* Admission: take it only if its CQE fits. */
			uint32_t head = axon_load_acquire(&g->cpage->cq_head);
			uint32_t used = c->cq_tail - head;

			if (used > cfg->cq_entries)
				return spsc_cfail(c, "cq_head %u ahead of cq_tail %u",
						  head, c->cq_tail);
			if (used == cfg->cq_entries) {
				c->blocked = true;
				g->ctl->c_admission_stalls++;
				__atomic_store_n(&g->ctl->blocked, 1, __ATOMIC_RELEASE);
				break;
			}
		}
		spsc_make_sqe(cfg, c->next_seq, &want);
		if (memcmp(&sqe, &want, sizeof(sqe)) != 0)
			return spsc_cfail(c, "SQE at index %u: seq %llu (expected %llu), "
					  "payload %s", c->sq_head,
					  (unsigned long long)sqe.user_data,
					  (unsigned long long)c->next_seq,
					  sqe.user_data == c->next_seq ? "differs" : "-");
		c->sum = spsc_fold(c->sum, spsc_sqe_sum(&sqe));
		c->sq_head++;
		c->next_seq++;
		n++;
		if (!(sqe.flags & AXON_SQE_F_DEFERRED)) {
			struct axon_cqe *cqe = &g->cqes[c->cq_tail & (cfg->cq_entries - 1)];

			cqe->user_data = sqe.user_data;
			cqe->res = (int32_t)(sqe.user_data & 0x3fffffff);
			cqe->flags = 0;
			cqe->aux[0] = spsc_sqe_sum(&sqe);
			cqe->aux[1] = ~sqe.user_data;
			c->cq_tail++;
			/* Pairs with the client's acquire in axon_peek_cqe. */
			axon_store_release(&g->dpage->cq_tail, c->cq_tail);
			g->ctl->c_cqes++;
		}
	}
	if (n) {
		/* Pairs with the client's acquire of sq_head in axon_get_sqe. */
		axon_store_release(&g->dpage->sq_head, c->sq_head);
		spsc_wake_client(c);
	}
	g->ctl->c_taken += n;
	return (int)n;
}

static void spsc_set_need_wakeup(struct spsc_region *g, bool on)
{
	uint32_t f = axon_read_once(&g->dpage->sq_flags);

	f = on ? (f | AXON_SQ_F_NEED_WAKEUP) : (f & ~AXON_SQ_F_NEED_WAKEUP);
	axon_write_once(&g->dpage->sq_flags, f);
}

/*
 * The consumer's main loop, as axond's run(). Returns 0 when all of total
 * was taken and checked, -1 on failure (message in ctl->c_msg).
 */
static int spsc_consume(const struct spsc_cfg *cfg, struct spsc_region *g)
{
	struct spsc_consumer c = {
		.cfg = cfg, .g = g,
		.sq_head = cfg->start_index, .cq_tail = cfg->start_index,
	};
	uint64_t idle_since, t0 = spsc_now();
	unsigned int spins = 0;

	while (!__atomic_load_n(&g->ctl->go, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&g->ctl->stop, __ATOMIC_ACQUIRE))
			return -1;
		if (spsc_now() - t0 > SPSC_HANG_NS)
			return spsc_cfail(&c, "producer never started");
		spsc_relax(&spins);
	}
	idle_since = spsc_now();
	while (c.next_seq < cfg->total) {
		int n;

		if (__atomic_load_n(&g->ctl->stop, __ATOMIC_ACQUIRE))
			return -1;
		n = spsc_drain(&c);
		if (n < 0)
			return -1;
		if (n) {
			idle_since = spsc_now();
			continue;
		}
		if (spsc_now() - idle_since > SPSC_HANG_NS)
			return spsc_cfail(&c, "no progress for %llu s at seq %llu "
					  "(blocked %d): lost wake-up?",
					  (unsigned long long)(SPSC_HANG_NS / 1000000000ull),
					  (unsigned long long)c.next_seq, c.blocked);
		if (cfg->mode == SPSC_POLL || c.blocked) {
			/*
			 * Held back by admission: the client frees CQ room by
			 * storing cq_head, which rings no doorbell, so a
			 * consumer that slept now might never be woken (see
			 * cq-backpressure.c). Keep polling instead.
			 */
			spsc_relax(&spins);
			continue;
		}
		if (spsc_now() - idle_since < cfg->consumer_spin_ns) {
			__builtin_ia32_pause();
			continue;
		}
		/* Going to sleep: announce, full barrier, look once more. Pairs
		 * with the barrier in axon_submit(). */
		spsc_set_need_wakeup(g, true);
		axon_smp_mb();
		n = spsc_drain(&c);
		if (n < 0)
			return -1;
		if (!n && !c.blocked) {
			struct pollfd pfd = { .fd = g->doorbell, .events = POLLIN };
			int ret;

			g->ctl->c_sleeps++;
			do {
				ret = poll(&pfd, 1, (int)(SPSC_HANG_NS / 1000000ull));
			} while (ret < 0 && errno == EINTR);
			if (ret == 0 && !__atomic_load_n(&g->ctl->stop, __ATOMIC_ACQUIRE))
				return spsc_cfail(&c, "asleep %llu s at seq %llu with no "
						  "doorbell: lost wake-up (client sq_tail %u, "
						  "our head %u)",
						  (unsigned long long)(SPSC_HANG_NS / 1000000000ull),
						  (unsigned long long)c.next_seq,
						  axon_read_once(&g->cpage->sq_tail), c.sq_head);
			if (ret > 0) {
				uint64_t v;

				if (read(g->doorbell, &v, sizeof(v)) == sizeof(v))
					g->ctl->c_doorbell_wakes++;
			}
		}
		spsc_set_need_wakeup(g, false);
		idle_since = spsc_now();
	}
	g->ctl->c_sum = c.sum;
	return 0;
}

/* ---- producer: the client's side ---------------------------------------- */

static int spsc_pfail(struct spsc_region *g, char *msg, size_t msglen,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int spsc_pfail(struct spsc_region *g, char *msg, size_t msglen,
		      const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	__atomic_store_n(&g->ctl->stop, 1, __ATOMIC_SEQ_CST);
	if (g->doorbell >= 0) {
		uint64_t one = 1;	/* wake a sleeping consumer to see stop */

		if (write(g->doorbell, &one, sizeof(one)) < 0)
			(void)0;
	}
	return -1;
}

/* Publishes the SQEs taken since the last publish. */
static int spsc_publish(const struct spsc_cfg *cfg, struct axon_ring *r,
			uint32_t nb, char *msg, size_t msglen, struct spsc_region *g)
{
	int ret;

	if (cfg->mode == SPSC_POLL) {
		/* What axon_submit does, minus the doorbell. */
		axon_store_release(&r->cpage->sq_tail, r->sq_tail);
		return 0;
	}
	ret = axon_submit(r);
	if (ret != (int)nb)
		return spsc_pfail(g, msg, msglen, "axon_submit returned %d, expected %u",
				  ret, nb);
	return 0;
}

struct spsc_producer {
	const struct spsc_cfg *cfg;
	struct spsc_region *g;
	struct axon_ring *r;
	struct spsc_result *res;
	uint64_t next_cqe_seq;		/* next non-deferred seq owed a CQE */
	char *msg;
	size_t msglen;
};

static uint64_t spsc_next_sync_seq(const struct spsc_cfg *cfg, uint64_t seq)
{
	while (seq < cfg->total && spsc_is_deferred(cfg, seq))
		seq++;
	return seq;
}

/* Checks and releases one CQE. */
static int spsc_check_cqe(struct spsc_producer *p, const struct axon_cqe *cqe)
{
	const struct spsc_cfg *cfg = p->cfg;
	struct axon_sqe want;
	uint64_t seq = p->next_cqe_seq;
	uint32_t tail = axon_load_acquire(&p->r->dpage->cq_tail);

	if (tail - p->r->cq_head > cfg->cq_entries)
		return spsc_pfail(p->g, p->msg, p->msglen,
				  "CQ overflow: tail %u head %u entries %u", tail,
				  p->r->cq_head, cfg->cq_entries);
	if (seq >= cfg->total)
		return spsc_pfail(p->g, p->msg, p->msglen,
				  "unexpected CQE user_data %llu after the last",
				  (unsigned long long)cqe->user_data);
	spsc_make_sqe(cfg, seq, &want);
	if (cqe->user_data != seq || cqe->res != (int32_t)(seq & 0x3fffffff) ||
	    cqe->flags || cqe->aux[0] != spsc_sqe_sum(&want) || cqe->aux[1] != ~seq)
		return spsc_pfail(p->g, p->msg, p->msglen,
				  "CQE at %u: user_data %llu res %d aux %llx/%llx, "
				  "expected seq %llu", p->r->cq_head,
				  (unsigned long long)cqe->user_data, cqe->res,
				  (unsigned long long)cqe->aux[0],
				  (unsigned long long)cqe->aux[1],
				  (unsigned long long)seq);
	axon_cqe_seen(p->r);
	p->res->p_cqes++;
	p->next_cqe_seq = spsc_next_sync_seq(cfg, seq + 1);
	return 0;
}

/* Reaps what is there without waiting. Returns how many, or -1. */
static int spsc_reap(struct spsc_producer *p)
{
	const struct axon_cqe *cqe;
	int n = 0;

	while (axon_peek_cqe(p->r, &cqe) == 0) {
		if (spsc_check_cqe(p, cqe))
			return -1;
		n++;
	}
	return n;
}

/*
 * The producer: phase 0 fills the whole SQ before the consumer may start
 * (so backpressure is hit deterministically), then random batches until
 * total SQEs went through and every CQE came back.
 */
static int spsc_produce(const struct spsc_cfg *cfg, struct spsc_region *g,
			struct spsc_result *res, char *msg, size_t msglen)
{
	struct axon_ring r;
	struct spsc_producer p = {
		.cfg = cfg, .g = g, .r = &r, .res = res, .msg = msg, .msglen = msglen,
	};
	uint64_t seq = 0, rng = 0x1234567 + cfg->sq_entries, last_progress;
	uint64_t total_cqes = 0, s;
	unsigned int spins = 0;
	uint32_t nb;

	for (s = 0; s < cfg->total; s++)
		total_cqes += !spsc_is_deferred(cfg, s);
	spsc_ring_init(cfg, g, &r);
	p.next_cqe_seq = spsc_next_sync_seq(cfg, 0);

	/* Phase 0: exactly sq_entries SQEs fit, the next get_sqe fails. */
	for (nb = 0; seq < cfg->total; nb++) {
		struct axon_sqe *sqe = axon_get_sqe(&r);

		if (!sqe)
			break;
		spsc_make_sqe(cfg, seq, sqe);
		res->p_sum = spsc_fold(res->p_sum, spsc_sqe_sum(sqe));
		seq++;
	}
	if (seq < cfg->total) {
		res->p_full_hits++;
		if (nb != cfg->sq_entries || axon_sq_space(&r) != 0)
			return spsc_pfail(g, msg, msglen, "SQ of %u took %u SQEs, space %u",
					  cfg->sq_entries, nb, axon_sq_space(&r));
		if (axon_get_sqe(&r) != NULL)
			return spsc_pfail(g, msg, msglen, "get_sqe on a full SQ succeeded");
	}
	if (spsc_publish(cfg, &r, nb, msg, msglen, g))
		return -1;
	__atomic_store_n(&g->ctl->go, 1, __ATOMIC_RELEASE);

	last_progress = spsc_now();
	while (seq < cfg->total || res->p_cqes < total_cqes) {
		uint32_t want;
		int got;

		if (__atomic_load_n(&g->ctl->stop, __ATOMIC_ACQUIRE))
			return spsc_pfail(g, msg, msglen, "consumer stopped: %s",
					  g->ctl->c_msg);
		rng = spsc_mix(rng);
		want = 1 + (uint32_t)(rng % cfg->max_batch);
		for (nb = 0; nb < want && seq < cfg->total; nb++) {
			struct axon_sqe *sqe = axon_get_sqe(&r);

			if (!sqe) {
				res->p_full_hits++;
				break;
			}
			spsc_make_sqe(cfg, seq, sqe);
			res->p_sum = spsc_fold(res->p_sum, spsc_sqe_sum(sqe));
			seq++;
		}
		if (nb && spsc_publish(cfg, &r, nb, msg, msglen, g))
			return -1;
		got = spsc_reap(&p);
		if (got < 0)
			return -1;
		if (nb || got) {
			last_progress = spsc_now();
			continue;
		}
		if (spsc_now() - last_progress > SPSC_HANG_NS)
			return spsc_pfail(g, msg, msglen, "no progress at seq %llu, %llu CQEs",
					  (unsigned long long)seq,
					  (unsigned long long)res->p_cqes);
		/* Nothing moved. Sleep for a completion if one is owed. */
		if (cfg->mode == SPSC_DOORBELL && p.next_cqe_seq < seq) {
			const struct axon_cqe *cqe;
			int ret = axon_wait_cqe(&r, &cqe, SPSC_HANG_NS);

			res->p_waits++;
			if (ret)
				return spsc_pfail(g, msg, msglen,
						  "axon_wait_cqe: %s at seq %llu (next CQE "
						  "%llu): lost wake-up?", strerror(-ret),
						  (unsigned long long)seq,
						  (unsigned long long)p.next_cqe_seq);
			if (spsc_check_cqe(&p, cqe))
				return -1;
			last_progress = spsc_now();
		} else {
			spsc_relax(&spins);
		}
	}
	res->p_sent = seq;
	res->p_doorbells = r.doorbells;
	res->p_sleeps = r.sleeps;
	if (axon_read_once(&g->dpage->cq_overflow))
		return spsc_pfail(g, msg, msglen, "cq_overflow %u",
				  axon_read_once(&g->dpage->cq_overflow));
	return 0;
}

/* Checks both sides' totals after a run. */
static int spsc_check_totals(const struct spsc_cfg *cfg, const struct spsc_result *res,
			     char *msg, size_t msglen)
{
	if (res->c.c_failed) {
		snprintf(msg, msglen, "consumer: %s", res->c.c_msg);
		return -1;
	}
	if (res->p_sent != cfg->total || res->c.c_taken != cfg->total) {
		snprintf(msg, msglen, "sent %llu, taken %llu, want %llu",
			 (unsigned long long)res->p_sent,
			 (unsigned long long)res->c.c_taken,
			 (unsigned long long)cfg->total);
		return -1;
	}
	if (res->p_cqes != res->c.c_cqes) {
		snprintf(msg, msglen, "%llu CQEs posted, %llu reaped",
			 (unsigned long long)res->c.c_cqes,
			 (unsigned long long)res->p_cqes);
		return -1;
	}
	if (res->p_sum != res->c.c_sum) {
		snprintf(msg, msglen, "checksums differ: producer %016llx consumer %016llx",
			 (unsigned long long)res->p_sum, (unsigned long long)res->c.c_sum);
		return -1;
	}
	return 0;
}

static void spsc_print(const struct spsc_cfg *cfg, const struct spsc_result *res,
		       uint64_t ns)
{
	printf("%-22s %8llu SQEs %8llu CQEs  %6.1f ns/SQE  full %llu  stalls %llu  "
	       "doorbells %llu  c-sleeps %llu  p-sleeps %llu  futex-wakes %llu  "
	       "max-lag %llu\n", cfg->name,
	       (unsigned long long)res->p_sent, (unsigned long long)res->p_cqes,
	       (double)ns / (double)(res->p_sent ? res->p_sent : 1),
	       (unsigned long long)res->p_full_hits,
	       (unsigned long long)res->c.c_admission_stalls,
	       (unsigned long long)res->p_doorbells,
	       (unsigned long long)res->c.c_sleeps,
	       (unsigned long long)res->p_sleeps,
	       (unsigned long long)res->c.c_futex_wakes,
	       (unsigned long long)res->c.c_sq_head_max_lag);
	fflush(stdout);
}

/* ---- the deterministic admission scenario ------------------------------ */

/*
 * With only non-deferred SQEs and a client that does not reap, the
 * consumer must take exactly cq_entries SQEs and then hold the rest back
 * (never overflowing the CQ); each CQE reaped lets exactly one more in.
 * Runs on the producer's side with the consumer already running. Uses
 * seq numbers from 0 (cfg->deferred_every must be 0, total large enough).
 */
static int spsc_wait_u32(volatile const uint32_t *p, uint32_t want,
			 struct spsc_region *g, char *msg, size_t msglen, const char *what)
{
	uint64_t t0 = spsc_now();
	unsigned int spins = 0;

	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != want) {
		if (__atomic_load_n(&g->ctl->stop, __ATOMIC_ACQUIRE))
			return spsc_pfail(g, msg, msglen, "consumer stopped: %s", g->ctl->c_msg);
		if (spsc_now() - t0 > SPSC_HANG_NS)
			return spsc_pfail(g, msg, msglen, "timed out waiting for %s", what);
		spsc_relax(&spins);
	}
	return 0;
}

static int spsc_admission(const struct spsc_cfg *cfg, struct spsc_region *g,
			  struct spsc_result *res, char *msg, size_t msglen)
{
	struct axon_ring r;
	struct spsc_producer p = {
		.cfg = cfg, .g = g, .r = &r, .res = res, .msg = msg, .msglen = msglen,
	};
	const uint32_t base = cfg->start_index;
	uint64_t seq = 0;
	uint32_t i, k;

	spsc_ring_init(cfg, g, &r);
	p.next_cqe_seq = 0;
	__atomic_store_n(&g->ctl->go, 1, __ATOMIC_RELEASE);
	/* Fill the CQ one SQ-full at a time, reaping nothing. */
	for (k = 0; k < cfg->cq_entries / cfg->sq_entries; k++) {
		for (i = 0; i < cfg->sq_entries; i++) {
			struct axon_sqe *sqe = axon_get_sqe(&r);

			if (!sqe)
				return spsc_pfail(g, msg, msglen, "SQ full at %u", i);
			spsc_make_sqe(cfg, seq++, sqe);
			res->p_sum = spsc_fold(res->p_sum, spsc_sqe_sum(sqe));
		}
		if (spsc_publish(cfg, &r, cfg->sq_entries, msg, msglen, g) ||
		    spsc_wait_u32(&g->dpage->sq_head, base + (uint32_t)seq, g, msg, msglen,
				  "the consumer to take an SQ-full"))
			return -1;
	}
	/* The CQ is full: one more SQ-full must be held back entirely. */
	for (i = 0; i < cfg->sq_entries; i++) {
		struct axon_sqe *sqe = axon_get_sqe(&r);

		spsc_make_sqe(cfg, seq++, sqe);
		res->p_sum = spsc_fold(res->p_sum, spsc_sqe_sum(sqe));
	}
	if (spsc_publish(cfg, &r, cfg->sq_entries, msg, msglen, g) ||
	    spsc_wait_u32(&g->ctl->blocked, 1, g, msg, msglen, "admission to hold back"))
		return -1;
	if (axon_load_acquire(&g->dpage->sq_head) != base + cfg->cq_entries ||
	    axon_load_acquire(&g->dpage->cq_tail) != base + cfg->cq_entries)
		return spsc_pfail(g, msg, msglen, "CQ full but sq_head %u cq_tail %u "
				  "(base %u + %u)", g->dpage->sq_head, g->dpage->cq_tail,
				  base, cfg->cq_entries);
	/* Each CQE released admits exactly one more SQE. */
	for (i = 1; i <= cfg->sq_entries; i++) {
		const struct axon_cqe *cqe;

		if (axon_peek_cqe(&r, &cqe))
			return spsc_pfail(g, msg, msglen, "CQE %u missing", i);
		if (spsc_check_cqe(&p, cqe))
			return -1;
		if (spsc_wait_u32(&g->dpage->sq_head, base + cfg->cq_entries + i, g, msg,
				  msglen, "one more SQE admitted"))
			return -1;
		if (axon_load_acquire(&g->dpage->cq_tail) - r.cq_head != cfg->cq_entries)
			return spsc_pfail(g, msg, msglen, "CQ not kept full: tail %u head %u",
					  g->dpage->cq_tail, r.cq_head);
	}
	/* Drain the rest; the consumer stops at total. */
	while (p.next_cqe_seq < seq) {
		const struct axon_cqe *cqe;

		if (axon_peek_cqe(&r, &cqe))
			return spsc_pfail(g, msg, msglen, "CQE for seq %llu missing",
					  (unsigned long long)p.next_cqe_seq);
		if (spsc_check_cqe(&p, cqe))
			return -1;
	}
	res->p_sent = seq;
	return 0;
}

#endif /* AXON_TESTS_SPSC_COMMON_H */
