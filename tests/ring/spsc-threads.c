// SPDX-License-Identifier: MIT
/*
 * spsc-threads: libaxon's SPSC ring protocol between two threads of one
 * process: the client side through libaxon's own inline functions on a
 * hand-built struct axon_ring, the daemon side written as axond's
 * dispatcher is. See spsc-common.h for what is checked.
 */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>

#include "spsc-configs.h"

struct consumer_arg {
	const struct spsc_cfg *cfg;
	struct spsc_region *g;
	int ret;
};

static void *consumer_main(void *p)
{
	struct consumer_arg *a = p;

	a->ret = spsc_consume(a->cfg, a->g);
	return NULL;
}

static void run(const struct spsc_cfg *cfg, bool admission)
{
	struct spsc_region g;
	struct spsc_result res;
	struct consumer_arg a;
	char msg[512] = "";
	pthread_t t;
	uint64_t t0;
	int rc;

	memset(&res, 0, sizeof(res));
	rc = spsc_region_create(cfg, &g, msg, sizeof(msg));
	ck_assert_msg(rc == 0, "%s: %s", cfg->name, msg);
	a = (struct consumer_arg){ .cfg = cfg, .g = &g };
	ck_assert_int_eq(pthread_create(&t, NULL, consumer_main, &a), 0);
	t0 = spsc_now();
	if (admission)
		rc = spsc_admission(cfg, &g, &res, msg, sizeof(msg));
	else
		rc = spsc_produce(cfg, &g, &res, msg, sizeof(msg));
	pthread_join(t, NULL);
	res.c = *g.ctl;
	if (!rc && a.ret) {
		snprintf(msg, sizeof(msg), "consumer: %s", g.ctl->c_msg);
		rc = -1;
	}
	if (!rc)
		rc = spsc_check_totals(cfg, &res, msg, sizeof(msg));
	spsc_print(cfg, &res, spsc_now() - t0);
	if (!rc && admission && res.c.c_admission_stalls == 0) {
		snprintf(msg, sizeof(msg), "admission never held an SQE back");
		rc = -1;
	}
	spsc_region_destroy(&g);
	ck_assert_msg(rc == 0, "%s: %s", cfg->name, msg);
	/* Phase 0 fills the SQ before the consumer starts. */
	ck_assert(admission || res.p_full_hits > 0);
}

START_TEST(test_stream)
{
	run(&spsc_configs[_i], false);
}
END_TEST

START_TEST(test_admission)
{
	run(&spsc_admission_cfg, true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("spsc-threads");
	TCase *tc = tcase_create("spsc");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_admission);
	tcase_add_loop_test(tc, test_stream, 0, SPSC_NCONFIGS);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
