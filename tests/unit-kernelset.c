// SPDX-License-Identifier: MIT
/*
 * unit-kernelset: axond/sim/kernelset.c, how the sim takes a kernels object
 * (axond/sim/kernels-abi.h). The test kernels' own entry point installs,
 * and their kernels are then found; an entry point that answers NULL, ops
 * of another ABI version or built with other struct sizes, or ops without
 * find or get are refused with a reason and leave nothing installed. The
 * object itself, dlopen()ed, is loaded by every integration test.
 */
#include <check.h>
#include <string.h>

#include "kernels.h"
#include "kernelset.h"

static struct sim_kernels_ops good(void)
{
	return *axon_sim_kernels_register_v1(SIM_KERNELS_ABI_VERSION);
}

static void refused(const struct sim_kernels_ops *ops, const char *why)
{
	char err[512] = "x";

	ck_assert_int_eq(sim_kernelset_install(ops, "test", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, why), "'%s' does not say '%s'", err, why);
	ck_assert(!sim_kernelset_loaded());
	ck_assert_ptr_null(sim_kernelset_find("vectorAdd"));
}

START_TEST(test_refused)
{
	struct sim_kernels_ops o;

	/* Nothing installed: nothing runs. */
	ck_assert(!sim_kernelset_loaded());
	ck_assert_str_eq(sim_kernelset_name(), "");
	/* An object that does not speak our version answers NULL. */
	ck_assert_ptr_null(axon_sim_kernels_register_v1(SIM_KERNELS_ABI_VERSION + 1));
	refused(NULL, "does not speak kernels ABI version 1");
	o = good();
	o.abi_version = SIM_KERNELS_ABI_VERSION + 1;
	refused(&o, "kernels ABI version 2");
	o = good();
	o.ops_size -= 8;
	refused(&o, "rebuild it");
	o = good();
	o.kernel_size += 8;
	refused(&o, "rebuild it");
	o = good();
	o.launch_size = 0;
	refused(&o, "rebuild it");
	o = good();
	o.find = NULL;
	refused(&o, "without find or get");
	o = good();
	o.get = NULL;
	refused(&o, "without find or get");
}
END_TEST

START_TEST(test_installed)
{
	char err[512] = "x";
	const struct sim_kernel *k;

	ck_assert_int_eq(sim_kernelset_install(axon_sim_kernels_register_v1(SIM_KERNELS_ABI_VERSION),
					       "test", err, sizeof(err)), 0);
	ck_assert_str_eq(err, "");
	ck_assert(sim_kernelset_loaded());
	ck_assert_str_ne(sim_kernelset_name(), "");
	k = sim_kernelset_find("_Z9vectorAddPKfS0_Pfi");
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_eq(k, sim_kernels_find("vectorAdd"));
	ck_assert_ptr_null(sim_kernelset_find("g_touch"));
}
END_TEST

START_TEST(test_load_errors)
{
	char err[512];

	ck_assert_int_eq(sim_kernelset_load("no-slash.so", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "give a path"));
	ck_assert_int_eq(sim_kernelset_load("/nonexistent/axon-sim-kernels.so", err,
					    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/axon-sim-kernels.so"));
	ck_assert(!sim_kernelset_loaded());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("unit-kernelset");
	TCase *tc = tcase_create("kernelset");
	SRunner *sr;
	int failed;

	/* Each test in a process of its own: installing is for good. */
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_load_errors);
	tcase_add_test(tc, test_installed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
