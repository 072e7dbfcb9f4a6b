// SPDX-License-Identifier: MIT
/*
 * connect-errors: axon_connect's failures and the simplest traffic, against
 * a private axond (sim backend) this program starts and stops itself.
 *
 *   - no daemon at the path: -ENOENT / -ECONNREFUSED and a message
 *   - connections closed unanswered (a restarting axond's): tried again,
 *     a bounded number of times
 *   - addresses libaxon cannot parse: -EINVAL; an over-long path:
 *     -ENAMETOOLONG; each with a message
 *   - hellos the daemon refuses (sizes too large, flags, reserved fields):
 *     a negative errno and the daemon's message; the daemon keeps serving
 *   - the geometry a successful connect returns is self-consistent
 *   - one NOP round trip: res 0, user_data echoed
 *   - 100k NOPs in random batches, a quarter deferred: every non-deferred
 *     user_data completes exactly once and in order, the CQ is never seen
 *     holding more than cq_entries, cq_overflow stays 0
 *   - the CQ fills to exactly cq_entries, in order, never further
 *   - a deferred NOP produces no CQE; a bad opcode fails with
 *     CUDA_ERROR_INVALID_VALUE, or latches it when deferred
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <axon/libaxon.h>
#include "daemon.h"

#define CU_INVALID_VALUE	1	/* CUDA_ERROR_INVALID_VALUE */
#define WAIT_NS			(10ull * 1000 * 1000 * 1000 * RD_SLOW)

/* ck_assert records a mark point per call; use this in long loops. */
#define REQUIRE(expr, ...)						\
	do {								\
		if (__builtin_expect(!(expr), 0))			\
			ck_abort_msg(__VA_ARGS__);			\
	} while (0)

static struct rd_daemon daemon_;

static void connect_ok(struct axon_ring *r, const struct axon_params *req)
{
	char err[256] = "";
	int ret = axon_connect(daemon_.addr, req, r, err, sizeof(err));

	ck_assert_msg(ret == 0, "axon_connect(%s): %s (%s)", daemon_.addr,
		      strerror(-ret), err);
}

/* Submits one SQE copied from tmpl and waits for its CQE. */
static struct axon_cqe round_trip(struct axon_ring *r, const struct axon_sqe *tmpl)
{
	const struct axon_cqe *c;
	struct axon_cqe out;
	struct axon_sqe *sqe = axon_get_sqe(r);
	int ret;

	ck_assert_ptr_nonnull(sqe);
	*sqe = *tmpl;
	ret = axon_submit(r);
	ck_assert_int_eq(ret, 1);
	ret = axon_wait_cqe(r, &c, WAIT_NS);
	ck_assert_msg(ret == 0, "axon_wait_cqe: %s", strerror(-ret));
	out = *c;
	axon_cqe_seen(r);
	return out;
}

/* Polls *p (bounded) until it equals want. */
static void wait_u32(const uint32_t *p, uint32_t want, const char *what)
{
	uint64_t t0 = rd_now_ms();

	while (axon_load_acquire(p) != want) {
		ck_assert_msg(rd_now_ms() - t0 < 10000 * RD_SLOW, "timed out: %s (%u != %u)",
			      what, axon_load_acquire(p), want);
		usleep(50);
	}
}

/* ---- no daemon / bad addresses ----------------------------------------- */

START_TEST(test_missing_socket)
{
	struct axon_ring r;
	char addr[300], err[256] = "";
	int ret;

	snprintf(addr, sizeof(addr), "unix:%s/nobody-here.sock", daemon_.dir);
	ret = axon_connect(addr, NULL, &r, err, sizeof(err));
	ck_assert_msg(ret == -ENOENT, "got %d (%s)", ret, err);
	ck_assert_msg(strstr(err, "nobody-here.sock") != NULL, "message: '%s'", err);
	/* The ring is left closed: axon_close on it is harmless. */
	ck_assert_int_eq(r.sock_fd, -1);
	ck_assert_int_eq(r.doorbell_fd, -1);
	ck_assert_ptr_null(r.region);
	axon_close(&r);

	/* A bare absolute path is accepted as well. */
	err[0] = 0;
	ret = axon_connect(addr + 5, NULL, &r, err, sizeof(err));
	ck_assert_int_eq(ret, -ENOENT);
	ck_assert_str_ne(err, "");

	/* A socket file nobody listens on any more: refused. */
	{
		char dead[250];
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

		snprintf(dead, sizeof(dead), "%s/dead.sock", daemon_.dir);
		ck_assert_int_ge(fd, 0);
		strcpy(sun.sun_path, dead);
		ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
		close(fd);	/* bound, never listened: ECONNREFUSED */
		snprintf(addr, sizeof(addr), "unix:%s", dead);
		err[0] = 0;
		ret = axon_connect(addr, NULL, &r, err, sizeof(err));
		unlink(dead);
		ck_assert_msg(ret == -ECONNREFUSED, "got %d (%s)", ret, err);
		ck_assert_str_ne(err, "");
	}

	/* No message buffer: still just the error. */
	ret = axon_connect("unix:/nonexistent/axon.sock", NULL, &r, NULL, 0);
	ck_assert_int_eq(ret, -ENOENT);
}
END_TEST

/*
 * A listener that closes its first CLOSES connections unanswered, as a
 * restarting axond does with the ones it had accepted, then answers with
 * a welcome too short to be one. libaxon must connect again after each
 * close (it used to fail the first time with ECONNRESET: "no answer from
 * axond") and report the last answer's error; a listener that only ever
 * closes is an error after a bounded number of attempts.
 */
#define CLOSES	3

struct closer {
	int listen_fd, closes, accepted;
};

static void *closer_run(void *arg)
{
	struct closer *c = arg;
	char buf[512];
	int fd;

	while ((fd = accept(c->listen_fd, NULL, NULL)) >= 0) {
		c->accepted++;
		if (c->closes < 0 || c->accepted <= c->closes) {
			close(fd);	/* unread: the peer sees a reset */
			continue;
		}
		(void)!recv(fd, buf, sizeof(buf), 0);
		(void)!send(fd, buf, 3, MSG_NOSIGNAL);	/* not a welcome */
		close(fd);
		break;
	}
	return NULL;
}

static int closer_start(struct closer *c, pthread_t *t, char *addr, size_t len, int closes)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	int n = snprintf(addr, len, "unix:%s/closer.sock", daemon_.dir);

	ck_assert(n > 0 && (size_t)n < len && (size_t)n - 5 < sizeof(sun.sun_path));
	memcpy(sun.sun_path, addr + 5, (size_t)n - 5 + 1);
	unlink(sun.sun_path);
	c->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	c->closes = closes;
	c->accepted = 0;
	ck_assert_int_ge(c->listen_fd, 0);
	ck_assert_int_eq(bind(c->listen_fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(c->listen_fd, 16), 0);
	return pthread_create(t, NULL, closer_run, c);
}

static void closer_stop(struct closer *c, pthread_t t, const char *addr)
{
	shutdown(c->listen_fd, SHUT_RDWR);	/* ends a blocked accept */
	pthread_join(t, NULL);
	close(c->listen_fd);
	unlink(addr + 5);
}

START_TEST(test_closed_unanswered)
{
	struct closer c;
	struct axon_ring r;
	char addr[300], err[256] = "";
	pthread_t t;
	int ret;

	ck_assert_int_eq(closer_start(&c, &t, addr, sizeof(addr), CLOSES), 0);
	ret = axon_connect(addr, NULL, &r, err, sizeof(err));
	closer_stop(&c, t, addr);
	ck_assert_msg(ret == -EPROTO, "got %d (%s) after %d connections", ret, err,
		      c.accepted);
	ck_assert_int_eq(c.accepted, CLOSES + 1);

	/* Only ever closed: an error, after a few attempts, not a loop. */
	ck_assert_int_eq(closer_start(&c, &t, addr, sizeof(addr), -1), 0);
	ret = axon_connect(addr, NULL, &r, err, sizeof(err));
	closer_stop(&c, t, addr);
	ck_assert_msg(ret == -ECONNRESET || ret == -EPIPE, "got %d (%s)", ret, err);
	ck_assert_msg(c.accepted > 1 && c.accepted <= 10, "%d connections", c.accepted);
	/* Closed before the hello was read, or after: either step says so. */
	ck_assert_msg(strstr(err, "no answer from axond") || strstr(err, "sending hello"),
		      "message: '%s'", err);
}
END_TEST

START_TEST(test_bad_address)
{
	static const char *const bad[] = {
		"tcp:localhost:1234", "tcp:", "bogus", "unix", "", "relative/path.sock",
		"UNIX:/tmp/x.sock", " unix:/tmp/x.sock",
	};
	char longaddr[300], err[256];
	struct axon_ring r;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ret = axon_connect(bad[i], NULL, &r, err, sizeof(err));
		ck_assert_msg(ret == -EINVAL, "'%s': got %d (%s)", bad[i], ret, err);
		ck_assert_msg(err[0] != 0, "'%s': no message", bad[i]);
	}
	/* sun_path holds 108 bytes. */
	memset(longaddr, 'x', sizeof(longaddr));
	memcpy(longaddr, "unix:/", 6);
	longaddr[sizeof(longaddr) - 1] = 0;
	err[0] = 0;
	ret = axon_connect(longaddr, NULL, &r, err, sizeof(err));
	ck_assert_msg(ret == -ENAMETOOLONG, "got %d (%s)", ret, err);
	ck_assert_msg(strstr(err, "too long") != NULL, "message: '%s'", err);

	/* $AXON_ADDR is used when addr is NULL. */
	setenv("AXON_ADDR", "tcp:example:1", 1);
	ret = axon_connect(NULL, NULL, &r, err, sizeof(err));
	ck_assert_int_eq(ret, -EINVAL);
	setenv("AXON_ADDR", daemon_.addr, 1);
	ret = axon_connect(NULL, NULL, &r, err, sizeof(err));
	ck_assert_msg(ret == 0, "AXON_ADDR=%s: %s", daemon_.addr, err);
	axon_close(&r);
	unsetenv("AXON_ADDR");
}
END_TEST

/* ---- refused hellos ----------------------------------------------------- */

struct refusal {
	const char *what;
	struct axon_params p;
	const char *needle;	/* in the message */
};

START_TEST(test_refused)
{
	static const struct refusal cases[] = {
		{ "sq too large", { .sq_entries = AXON_MAX_SQ_ENTRIES + 1 }, "sq_entries" },
		{ "sq huge", { .sq_entries = 0x80000000u }, "sq_entries" },
		{ "cq too large", { .sq_entries = 8, .cq_entries = 4 * AXON_MAX_SQ_ENTRIES },
		  "cq_entries" },
		{ "cq below sq", { .sq_entries = 64, .cq_entries = 32 }, "cq_entries" },
		{ "data too large", { .data_size = AXON_MAX_DATA_SIZE + 1 }, "data_size" },
		{ "data huge", { .data_size = UINT64_MAX }, "data_size" },
		{ "flags", { .flags = 1 }, "flags" },
		{ "reserved", { .resv = { [5] = 1 } }, "reserved" },
	};
	struct axon_ring r;
	char err[256];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		ret = axon_connect(daemon_.addr, &cases[i].p, &r, err, sizeof(err));
		ck_assert_msg(ret == -EINVAL, "%s: got %d (%s)", cases[i].what, ret, err);
		ck_assert_msg(strstr(err, cases[i].needle) != NULL,
			      "%s: message '%s' lacks '%s'", cases[i].what, err,
			      cases[i].needle);
		ck_assert_int_eq(r.sock_fd, -1);
		ck_assert_ptr_null(r.region);
	}
	/* The daemon still serves after refusing. */
	connect_ok(&r, NULL);
	axon_close(&r);
}
END_TEST

/* ---- a good connect ----------------------------------------------------- */

START_TEST(test_geometry)
{
	struct axon_params req = { .sq_entries = 100, .data_size = 5000 };
	struct axon_ring r;

	connect_ok(&r, NULL);
	/* Defaults: some power of two for the SQ, a CQ twice as deep. */
	ck_assert_uint_eq(r.sq_entries & (r.sq_entries - 1), 0);
	ck_assert_uint_le(r.sq_entries, AXON_MAX_SQ_ENTRIES);
	ck_assert_uint_eq(r.cq_entries, 2 * r.sq_entries);
	axon_close(&r);

	connect_ok(&r, &req);
	ck_assert_uint_eq(r.sq_entries, 128);	/* rounded up to a power of two */
	ck_assert_uint_eq(r.cq_entries, 256);
	ck_assert_uint_eq(r.sq_mask, 127);
	ck_assert_uint_eq(r.cq_mask, 255);
	ck_assert_uint_ge(r.data_size, 5000);
	ck_assert_uint_eq(r.dpage->sq_entries, r.sq_entries);
	ck_assert_uint_eq(r.dpage->cq_entries, r.cq_entries);
	ck_assert_uint_eq(r.dpage->sq_mask, r.sq_mask);
	ck_assert_uint_eq(r.dpage->cq_mask, r.cq_mask);
	ck_assert_uint_eq(r.params.off_sqes % AXON_CACHELINE, 0);
	ck_assert_uint_eq(r.params.off_cqes % AXON_CACHELINE, 0);
	ck_assert_uint_ne(r.params.off_client, r.params.off_daemon);
	ck_assert_uint_eq(r.params.region_size, r.region_size);
	ck_assert(r.params.features & AXON_FEAT_DEFERRED);
	ck_assert_uint_eq(r.info->magic, AXON_MAGIC);
	ck_assert_uint_eq(r.info->abi_major, AXON_ABI_MAJOR);
	ck_assert_str_eq(r.info->backend, "sim");
	ck_assert_uint_ge(r.info->ndevices, 1);
	ck_assert_uint_eq(axon_sq_space(&r), r.sq_entries);
	ck_assert_int_eq(axon_daemon_alive(&r), 0);
	/* Fresh rings start at zero. */
	ck_assert_uint_eq(r.sq_tail, 0);
	ck_assert_uint_eq(r.cq_head, 0);
	ck_assert_uint_eq(r.dpage->sq_head, 0);
	ck_assert_uint_eq(r.dpage->cq_tail, 0);
	axon_close(&r);
	ck_assert_ptr_null(r.region);
	axon_close(&r);		/* twice is harmless */
}
END_TEST

/* ---- NOPs --------------------------------------------------------------- */

START_TEST(test_nop_round_trip)
{
	struct axon_sqe s = { .opcode = AXON_OP_NOP };
	struct axon_ring r;
	struct axon_cqe c;
	unsigned int i;

	connect_ok(&r, NULL);
	for (i = 0; i < 100; i++) {
		s.user_data = 0xfeedface00000000ULL | i;
		c = round_trip(&r, &s);
		ck_assert_uint_eq(c.user_data, s.user_data);
		ck_assert_int_eq(c.res, 0);
		ck_assert_uint_eq(c.aux[0], 0);
		ck_assert_uint_eq(c.aux[1], 0);
	}
	s.user_data = UINT64_MAX;
	c = round_trip(&r, &s);
	ck_assert_uint_eq(c.user_data, UINT64_MAX);
	ck_assert_int_eq(axon_peek_cqe(&r, &(const struct axon_cqe *){ NULL }), -EAGAIN);
	ck_assert_uint_eq(r.dpage->cq_overflow, 0);
	axon_close(&r);
}
END_TEST

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

START_TEST(test_nop_flood)
{
	const uint64_t total = 100000;
	struct axon_params req = { .sq_entries = 32, .cq_entries = 64 };
	struct axon_ring r;
	unsigned char *seen = calloc(total, 1);
	uint64_t next = 0, expect = 0, outstanding = 0, reaped = 0, owed = 0;
	uint64_t rng = 42, full_cq = 0;

	ck_assert_ptr_nonnull(seen);
	connect_ok(&r, &req);
	while (next < total || outstanding) {
		uint32_t batch = 1 + (uint32_t)(rng_next(&rng) % r.sq_entries), n = 0;
		const struct axon_cqe *c;
		int ret;

		/*
		 * Submit a batch. Non-deferred NOPs in flight stay within the
		 * CQ (a client that lets them exceed it relies on the daemon
		 * resuming when CQ room appears: see cq-backpressure.c).
		 */
		while (n < batch && next < total) {
			bool deferred = rng_next(&rng) % 4 == 0;
			struct axon_sqe *sqe;

			if (!deferred && outstanding >= r.cq_entries)
				break;
			sqe = axon_get_sqe(&r);
			if (!sqe)
				break;
			axon_prep_nop(sqe);
			sqe->user_data = next;
			if (deferred) {
				sqe->flags = AXON_SQE_F_DEFERRED;
				seen[next] = 2;		/* must never complete */
			} else {
				outstanding++;
				owed++;
			}
			next++;
			n++;
		}
		if (n) {
			ret = axon_submit(&r);
			REQUIRE(ret == (int)n, "axon_submit: %d, expected %u", ret, n);
		}
		if (!outstanding)
			continue;
		/*
		 * Let completions pile up: reap only when no more could be
		 * submitted (SQ full or as many in flight as the CQ holds),
		 * at the end, or now and then without waiting.
		 */
		if (n == batch && next < total) {
			if (rng_next(&rng) % 4 || axon_peek_cqe(&r, &c))
				continue;
		} else {
			ret = axon_wait_cqe(&r, &c, WAIT_NS);
			REQUIRE(ret == 0, "axon_wait_cqe at %llu/%llu: %s",
				(unsigned long long)reaped, (unsigned long long)total,
				strerror(-ret));
		}
		do {
			uint32_t used = axon_load_acquire(&r.dpage->cq_tail) - r.cq_head;
			uint64_t u = c->user_data;

			REQUIRE(used <= r.cq_entries, "CQ holds %u > %u", used, r.cq_entries);
			full_cq += used == r.cq_entries;
			REQUIRE(u < total, "user_data %llu out of range", (unsigned long long)u);
			REQUIRE(seen[u] != 2, "deferred NOP %llu completed", (unsigned long long)u);
			REQUIRE(seen[u] == 0, "user_data %llu completed twice", (unsigned long long)u);
			REQUIRE(c->res == 0, "NOP %llu: res %d", (unsigned long long)u, c->res);
			/* In order: the next non-deferred one submitted. */
			while (expect < total && seen[expect] == 2)
				expect++;
			REQUIRE(u == expect, "got user_data %llu, expected %llu",
				(unsigned long long)u, (unsigned long long)expect);
			seen[u] = 1;
			expect++;
			axon_cqe_seen(&r);
			outstanding--;
			reaped++;
		} while (axon_peek_cqe(&r, &c) == 0);
	}
	ck_assert_uint_eq(reaped, owed);
	for (uint64_t i = 0; i < total; i++)
		REQUIRE(seen[i] == 1 || seen[i] == 2, "user_data %llu never completed",
			(unsigned long long)i);
	ck_assert_uint_eq(r.dpage->cq_overflow, 0);
	ck_assert_uint_eq(r.dpage->sq_dropped, 0);
	ck_assert_uint_eq(r.dpage->pending_error, 0);
	/* Everything submitted is taken (trailing deferred NOPs may still be
	 * on their way when the last CQE arrives). */
	wait_u32(&r.dpage->sq_head, r.sq_tail, "all SQEs taken");
	printf("nop flood: %llu NOPs, %llu completions, CQ seen full %llu times, "
	       "%llu doorbells, %llu sleeps\n", (unsigned long long)total,
	       (unsigned long long)reaped, (unsigned long long)full_cq,
	       (unsigned long long)r.doorbells, (unsigned long long)r.sleeps);
	axon_close(&r);
	free(seen);
}
END_TEST

/* The CQ fills to exactly cq_entries and no further. */
START_TEST(test_cq_full)
{
	struct axon_params req = { .sq_entries = 32, .cq_entries = 64 };
	struct axon_ring r;
	const struct axon_cqe *c;
	uint64_t ud = 0;
	unsigned int k, i;

	connect_ok(&r, &req);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < r.sq_entries; i++) {
			struct axon_sqe *sqe = axon_get_sqe(&r);

			ck_assert_ptr_nonnull(sqe);
			axon_prep_nop(sqe);
			sqe->user_data = ud++;
		}
		ck_assert_ptr_null(axon_get_sqe(&r));	/* SQ full */
		ck_assert_uint_eq(axon_sq_space(&r), 0);
		ck_assert_int_eq(axon_submit(&r), (int)r.sq_entries);
		wait_u32(&r.dpage->sq_head, (k + 1) * r.sq_entries, "SQEs taken");
	}
	wait_u32(&r.dpage->cq_tail, r.cq_entries, "CQ filled");
	ck_assert_uint_eq(axon_load_acquire(&r.dpage->cq_tail) - r.cq_head, r.cq_entries);
	ck_assert_uint_eq(r.dpage->cq_overflow, 0);
	for (ud = 0; ud < r.cq_entries; ud++) {
		ck_assert_int_eq(axon_peek_cqe(&r, &c), 0);
		ck_assert_uint_eq(c->user_data, ud);
		ck_assert_int_eq(c->res, 0);
		axon_cqe_seen(&r);
	}
	ck_assert_int_eq(axon_peek_cqe(&r, &c), -EAGAIN);
	ck_assert_uint_eq(axon_sq_space(&r), r.sq_entries);
	axon_close(&r);
}
END_TEST

START_TEST(test_deferred_nop)
{
	struct axon_sqe s = { .opcode = AXON_OP_NOP };
	struct axon_ring r;
	struct axon_sqe *sqe;
	const struct axon_cqe *c;
	unsigned int i;
	int ret;

	connect_ok(&r, NULL);
	/* Ten deferred NOPs then one synchronous: only the last completes. */
	for (i = 0; i < 10; i++) {
		sqe = axon_get_sqe(&r);
		ck_assert_ptr_nonnull(sqe);
		axon_prep_nop(sqe);
		sqe->flags = AXON_SQE_F_DEFERRED;
		sqe->user_data = 100 + i;
	}
	ck_assert_int_eq(axon_submit(&r), 10);
	s.user_data = 7;
	{
		struct axon_cqe out = round_trip(&r, &s);

		ck_assert_uint_eq(out.user_data, 7);
		ck_assert_int_eq(out.res, 0);
	}
	/* The SQEs are taken in order and a CQE is posted before sq_head
	 * moves past its SQE: once sq_head is 11 nothing else can come. */
	wait_u32(&r.dpage->sq_head, 11, "all 11 SQEs taken");
	ck_assert_int_eq(axon_peek_cqe(&r, &c), -EAGAIN);
	ck_assert_uint_eq(axon_load_acquire(&r.dpage->cq_tail), 1);

	/* A deferred NOP alone: taken, never completed. The daemon posts a
	 * CQE before it publishes sq_head past the SQE, so once sq_head has
	 * moved no CQE can still be on its way. */
	sqe = axon_get_sqe(&r);
	axon_prep_nop(sqe);
	sqe->flags = AXON_SQE_F_DEFERRED;
	sqe->user_data = 999;
	ck_assert_int_eq(axon_submit(&r), 1);
	wait_u32(&r.dpage->sq_head, 12, "deferred NOP taken");
	ret = axon_peek_cqe(&r, &c);
	ck_assert_int_eq(ret, -EAGAIN);
	ck_assert_uint_eq(axon_load_acquire(&r.dpage->cq_tail), 1);
	ck_assert_uint_eq(r.dpage->pending_error, 0);
	axon_close(&r);
}
END_TEST

START_TEST(test_bad_sqe)
{
	struct axon_sqe s = { .opcode = AXON_OP_LAST, .user_data = 1 };
	struct axon_ring r;
	struct axon_cqe c;
	struct axon_sqe *sqe;

	connect_ok(&r, NULL);
	/* Unknown opcode, unknown flag, non-zero reserved fields: refused
	 * with CUDA_ERROR_INVALID_VALUE, user_data still echoed. */
	c = round_trip(&r, &s);
	ck_assert_uint_eq(c.user_data, 1);
	ck_assert_int_eq(c.res, CU_INVALID_VALUE);
	s = (struct axon_sqe){ .opcode = 255, .user_data = 2 };
	c = round_trip(&r, &s);
	ck_assert_int_eq(c.res, CU_INVALID_VALUE);
	s = (struct axon_sqe){ .opcode = AXON_OP_NOP, .flags = 0x80, .user_data = 3 };
	c = round_trip(&r, &s);
	ck_assert_int_eq(c.res, CU_INVALID_VALUE);
	s = (struct axon_sqe){ .opcode = AXON_OP_NOP, .resv0 = 1, .user_data = 4 };
	c = round_trip(&r, &s);
	ck_assert_int_eq(c.res, CU_INVALID_VALUE);
	s = (struct axon_sqe){ .opcode = AXON_OP_NOP, .resv1 = 1, .user_data = 5 };
	c = round_trip(&r, &s);
	ck_assert_int_eq(c.res, CU_INVALID_VALUE);
	ck_assert_uint_eq(r.dpage->pending_error, 0);
	/* The client is still served. */
	s = (struct axon_sqe){ .opcode = AXON_OP_NOP, .user_data = 6 };
	c = round_trip(&r, &s);
	ck_assert_int_eq(c.res, 0);

	/* Deferred, the same failure has no CQE: it is latched. */
	sqe = axon_get_sqe(&r);
	sqe->opcode = AXON_OP_LAST;
	sqe->flags = AXON_SQE_F_DEFERRED;
	sqe->user_data = 77;
	ck_assert_int_eq(axon_submit(&r), 1);
	s = (struct axon_sqe){ .opcode = AXON_OP_NOP, .user_data = 8 };
	c = round_trip(&r, &s);
	ck_assert_uint_eq(c.user_data, 8);
	ck_assert_uint_eq(axon_read_once(&r.dpage->pending_error), CU_INVALID_VALUE);
	axon_close(&r);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int failed, stop;

	if (rd_start(&daemon_, NULL))
		return EXIT_FAILURE;
	s = suite_create("connect-errors");
	tc = tcase_create("connect");
	tcase_set_timeout(tc, 60 * RD_SLOW);
	tcase_add_test(tc, test_missing_socket);
	tcase_add_test(tc, test_closed_unanswered);
	tcase_add_test(tc, test_bad_address);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_geometry);
	tcase_add_test(tc, test_nop_round_trip);
	tcase_add_test(tc, test_cq_full);
	tcase_add_test(tc, test_deferred_nop);
	tcase_add_test(tc, test_bad_sqe);
	tcase_add_test(tc, test_nop_flood);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	stop = rd_stop(&daemon_, failed != 0);
	return failed || stop ? EXIT_FAILURE : EXIT_SUCCESS;
}
