// SPDX-License-Identifier: MIT
/*
 * cq-backpressure: a client that submits more non-deferred SQEs than its CQ
 * holds must get them all completed once it reaps, without submitting
 * anything else.
 *
 * The ABI says the daemon "takes an SQE only when the CQ has room for the
 * completion", so the excess waits in the SQ. Scenario (sq 8, cq 16):
 *
 *   1. submit 8 NOPs, wait until sq_head = 8; again: sq_head = 16, CQ full
 *   2. submit 8 more: admission holds them back
 *   3. wait until axond read the doorbell (if rung) and then announced
 *      that it sleeps (AXON_SQ_F_NEED_WAKEUP)
 *   4. reap the 16 CQEs (axon_cqe_seen stores cq_head: no doorbell)
 *   5. axon_wait_cqe for the remaining 8
 *
 * Regression test: nothing used to wake axond in step 5 (axon_wait_cqe
 * never rang the doorbell while axond slept with SQEs held back), so the
 * client slept on cq_tail forever. axon_wait_cqe now rings it when SQEs are
 * pending and the daemon sleeps. The second round waits with
 * AXON_SPIN_FOREVER, which never reaches the sleep's check: the spin rings
 * it too (it once did not, and the client spun forever).
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <axon/libaxon.h>
#include "daemon.h"

static struct rd_daemon daemon_;

static void wait_u32(const uint32_t *p, uint32_t mask, uint32_t want, const char *what)
{
	uint64_t t0 = rd_now_ms();

	while ((axon_load_acquire(p) & mask) != want) {
		ck_assert_msg(rd_now_ms() - t0 < 10000 * RD_SLOW, "timed out: %s", what);
		usleep(100);
	}
}

static void submit_nops(struct axon_ring *r, unsigned int n, uint64_t *ud)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct axon_sqe *sqe = axon_get_sqe(r);

		ck_assert_ptr_nonnull(sqe);
		axon_prep_nop(sqe);
		sqe->user_data = (*ud)++;
	}
	ck_assert_int_eq(axon_submit(r), (int)n);
}

START_TEST(test_resume_after_reap)
{
	struct axon_params req = { .sq_entries = 8, .cq_entries = 16 };
	struct axon_ring r;
	const struct axon_cqe *c;
	char err[256] = "";
	uint64_t ud = 0, want;
	int ret;

	ret = axon_connect(daemon_.addr, &req, &r, err, sizeof(err));
	ck_assert_msg(ret == 0, "axon_connect: %s", err);
	ck_assert_uint_eq(r.sq_entries, 8);
	ck_assert_uint_eq(r.cq_entries, 16);
	if (_i == 1)
		r.spin_ns = AXON_SPIN_FOREVER;

	submit_nops(&r, 8, &ud);
	wait_u32(&r.dpage->sq_head, ~0u, 8, "first 8 taken");
	submit_nops(&r, 8, &ud);
	wait_u32(&r.dpage->sq_head, ~0u, 16, "second 8 taken");
	submit_nops(&r, 8, &ud);
	/*
	 * axond gives up on us and goes to sleep. If that submit rang the
	 * doorbell, first wait until axond consumed it (the eventfd is no
	 * longer readable): it clears NEED_WAKEUP before reading the doorbell,
	 * so a NEED_WAKEUP seen after that is from a sleep that began after
	 * it saw our SQEs and could not admit them.
	 */
	{
		struct pollfd pfd = { .fd = r.doorbell_fd, .events = POLLIN };
		uint64_t t0 = rd_now_ms();

		while (poll(&pfd, 1, 0) > 0) {
			ck_assert_msg(rd_now_ms() - t0 < 10000 * RD_SLOW,
				      "axond never read its doorbell");
			usleep(100);
		}
	}
	wait_u32(&r.dpage->sq_flags, AXON_SQ_F_NEED_WAKEUP, AXON_SQ_F_NEED_WAKEUP,
		 "axond to sleep");
	ck_assert_uint_eq(axon_load_acquire(&r.dpage->sq_head), 16);
	ck_assert_uint_eq(axon_load_acquire(&r.dpage->cq_tail), 16);

	for (want = 0; want < 24; want++) {
		ret = axon_wait_cqe(&r, &c, 5ull * 1000 * 1000 * 1000 * RD_SLOW);
		ck_assert_msg(ret == 0, "CQE %llu of 24: %s (sq_head %u, cq_tail %u, "
			      "cq_head %u, sq_flags 0x%x): axond was not woken when "
			      "the client freed CQ room", (unsigned long long)want,
			      strerror(-ret), r.dpage->sq_head, r.dpage->cq_tail,
			      r.cq_head, r.dpage->sq_flags);
		ck_assert_uint_eq(c->user_data, want);
		ck_assert_int_eq(c->res, 0);
		axon_cqe_seen(&r);
	}
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
	s = suite_create("cq-backpressure");
	tc = tcase_create("backpressure");
	tcase_set_timeout(tc, 60 * RD_SLOW);
	/* 0: the default spin, then sleep; 1: AXON_SPIN_FOREVER */
	tcase_add_loop_test(tc, test_resume_after_reap, 0, 2);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	stop = rd_stop(&daemon_, failed != 0);
	return failed || stop ? EXIT_FAILURE : EXIT_SUCCESS;
}
