// SPDX-License-Identifier: MIT
/*
 * spsc-procs: libaxon's SPSC ring protocol between two processes sharing a
 * memfd region laid out as a client region (client page, daemon page,
 * frontier, SQEs, CQEs, data), the eventfd doorbell and the futex on
 * cq_tail crossing the process boundary as they do with axond. The child
 * is the daemon side. See spsc-common.h for what is checked.
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "spsc-configs.h"

static void run(const struct spsc_cfg *cfg, bool admission)
{
	struct spsc_region g;
	struct spsc_result res;
	char msg[512] = "";
	uint64_t t0;
	pid_t pid;
	int rc, status = 0;

	memset(&res, 0, sizeof(res));
	rc = spsc_region_create(cfg, &g, msg, sizeof(msg));
	ck_assert_msg(rc == 0, "%s: %s", cfg->name, msg);
	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(g.sock[0]);
		_exit(spsc_consume(cfg, &g) ? 1 : 0);
	}
	/* Our end of the "connection": the child's death makes it readable,
	 * so a producer asleep in axon_wait_cqe gets -EPIPE. */
	close(g.sock[1]);
	g.sock[1] = -1;
	t0 = spsc_now();
	if (admission)
		rc = spsc_admission(cfg, &g, &res, msg, sizeof(msg));
	else
		rc = spsc_produce(cfg, &g, &res, msg, sizeof(msg));
	if (rc) {
		/* Give the consumer a moment to say why, then make sure. */
		uint64_t t = spsc_now();

		while (waitpid(pid, &status, WNOHANG) == 0) {
			if (spsc_now() - t > 2000000000ull) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
				break;
			}
			usleep(1000);
		}
	} else {
		waitpid(pid, &status, 0);
	}
	res.c = *g.ctl;
	if (!rc && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		snprintf(msg, sizeof(msg), "consumer process failed (status 0x%x): %s",
			 status, g.ctl->c_msg);
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
	Suite *s = suite_create("spsc-procs");
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
