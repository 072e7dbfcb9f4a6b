// SPDX-License-Identifier: MIT
/*
 * region-layout: axon_region_layout() (uapi/linux/axon-layout.h), the one
 * region layout of the module, axond and libaxon. The defaults give the
 * layout abi.md §3.1 documents; laying out what was granted again gives the
 * same answer (libaxon's check relies on it); every size out of range is
 * refused, naming which, without touching the params; the rules are checked
 * and a larger page size moves every part onto its boundaries.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <axon/libaxon.h>
#include <linux/axon-layout.h>

/* axond's rules (transport-unix.c:negotiate) with its default data area. */
static const struct axon_layout_rules daemon_rules = {
	.page_size = AXON_PAGE_SIZE,
	.default_data_size = 64ULL << 20,
	.max_data_size = AXON_MAX_DATA_SIZE,
};

static struct axon_params sizes(uint32_t sq, uint32_t cq, uint64_t data)
{
	struct axon_params p = { .sq_entries = sq, .cq_entries = cq, .data_size = data };

	return p;
}

START_TEST(test_defaults)
{
	struct axon_params p = sizes(0, 0, 0);
	uint32_t bad = 99;

	p.client_id = 7;	/* not a layout field: left alone */
	ck_assert_int_eq(axon_region_layout(&p, &daemon_rules, &bad), 0);
	ck_assert_uint_eq(bad, AXON_LAYOUT_OK);
	ck_assert_uint_eq(p.sq_entries, 256);
	ck_assert_uint_eq(p.cq_entries, 512);
	ck_assert_uint_eq(p.data_size, 64ULL << 20);
	ck_assert_uint_eq(p.frontier_entries, AXON_MAX_FRONTIER);
	ck_assert_uint_eq(p.off_client, 0);
	ck_assert_uint_eq(p.off_daemon, 4096);
	ck_assert_uint_eq(p.off_frontier, 8192);
	ck_assert_uint_eq(p.off_sqes, 24576);
	ck_assert_uint_eq(p.off_cqes, 40960);
	ck_assert_uint_eq(p.off_data, 57344);
	ck_assert_uint_eq(p.region_size, 67166208);
	ck_assert_uint_eq(p.client_id, 7);
}
END_TEST

/* Rounding, and the granted sizes laid out again give the same params. */
START_TEST(test_rounding_is_stable)
{
	static const uint32_t sq[] = { 1, 3, 8, 100, 257, AXON_MAX_SQ_ENTRIES };
	static const uint64_t data[] = { 1, 4095, 4096, 4097, 1 << 20, AXON_MAX_DATA_SIZE };
	size_t i, j;

	for (i = 0; i < sizeof(sq) / sizeof(sq[0]); i++) {
		for (j = 0; j < sizeof(data) / sizeof(data[0]); j++) {
			struct axon_params p = sizes(sq[i], 0, data[j]), again;

			ck_assert_int_eq(axon_region_layout(&p, &daemon_rules, NULL), 0);
			ck_assert_uint_ge(p.sq_entries, sq[i]);
			ck_assert_uint_eq(p.sq_entries & (p.sq_entries - 1), 0);
			ck_assert_uint_eq(p.cq_entries, 2 * p.sq_entries);
			ck_assert_uint_ge(p.data_size, data[j]);
			ck_assert_uint_eq(p.data_size % AXON_PAGE_SIZE, 0);
			ck_assert_uint_eq(p.region_size, p.off_data + p.data_size);
			again = sizes(p.sq_entries, p.cq_entries, p.data_size);
			ck_assert_int_eq(axon_region_layout(&again, &daemon_rules, NULL), 0);
			ck_assert_mem_eq(&again, &p, sizeof(p));
		}
	}
}
END_TEST

struct refusal {
	const char *what;
	struct axon_params p;
	uint32_t bad;
};

START_TEST(test_refused)
{
	static const struct refusal cases[] = {
		{ "sq too large", { .sq_entries = AXON_MAX_SQ_ENTRIES + 1 }, AXON_LAYOUT_BAD_SQ },
		{ "sq huge", { .sq_entries = 0x80000000u }, AXON_LAYOUT_BAD_SQ },
		{ "cq below sq", { .sq_entries = 64, .cq_entries = 32 }, AXON_LAYOUT_BAD_CQ },
		{ "cq too large", { .sq_entries = 8, .cq_entries = 4 * AXON_MAX_SQ_ENTRIES },
		  AXON_LAYOUT_BAD_CQ },
		{ "data too large", { .data_size = AXON_MAX_DATA_SIZE + 1 }, AXON_LAYOUT_BAD_DATA },
		{ "data huge", { .data_size = UINT64_MAX }, AXON_LAYOUT_BAD_DATA },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct axon_params p = cases[i].p;
		uint32_t bad = AXON_LAYOUT_OK;

		ck_assert_msg(axon_region_layout(&p, &daemon_rules, &bad) == -EINVAL,
			      "%s: accepted", cases[i].what);
		ck_assert_msg(bad == cases[i].bad, "%s: bad %u, expected %u", cases[i].what,
			      bad, cases[i].bad);
		ck_assert_msg(!memcmp(&p, &cases[i].p, sizeof(p)), "%s: params changed",
			      cases[i].what);
	}
}
END_TEST

/* The module's rules: its own data limits, a page size of its own. */
START_TEST(test_rules)
{
	struct axon_layout_rules r = {
		.page_size = 65536,
		.default_data_size = 0,
		.max_data_size = 5000,
	};
	struct axon_params p = sizes(0, 0, 0);
	uint32_t bad;

	/* A default of 0 is still one page, which 5000 bytes cannot hold. */
	ck_assert_int_eq(axon_region_layout(&p, &r, &bad), -EINVAL);
	ck_assert_uint_eq(bad, AXON_LAYOUT_BAD_DATA);
	r.max_data_size = 1 << 20;
	p = sizes(0, 0, 0);
	ck_assert_int_eq(axon_region_layout(&p, &r, NULL), 0);
	ck_assert_uint_eq(p.data_size, 65536);
	ck_assert_uint_eq(p.off_daemon, 65536);
	ck_assert_uint_eq(p.off_frontier, 2 * 65536);
	ck_assert_uint_eq(p.off_sqes, 3 * 65536);
	ck_assert_uint_eq(p.off_cqes, 4 * 65536);
	ck_assert_uint_eq(p.off_data, 5 * 65536);
	ck_assert_uint_eq(p.region_size, 6 * 65536);
	/* Pages that are not powers of two, or out of range. */
	r.page_size = 3 * 4096;
	ck_assert_int_eq(axon_region_layout(&p, &r, &bad), -EINVAL);
	ck_assert_uint_eq(bad, AXON_LAYOUT_BAD_RULES);
	r.page_size = 2048;
	ck_assert_int_eq(axon_region_layout(&p, &r, &bad), -EINVAL);
	ck_assert_uint_eq(bad, AXON_LAYOUT_BAD_RULES);
	r.page_size = 2 * AXON_LAYOUT_MAX_PAGE;
	ck_assert_int_eq(axon_region_layout(&p, &r, &bad), -EINVAL);
	ck_assert_uint_eq(bad, AXON_LAYOUT_BAD_RULES);
	/* A maximum above the ABI's is the ABI's. */
	r.page_size = 4096;
	r.max_data_size = UINT64_MAX;
	p = sizes(0, 0, AXON_MAX_DATA_SIZE + 1);
	ck_assert_int_eq(axon_region_layout(&p, &r, &bad), -EINVAL);
	ck_assert_uint_eq(bad, AXON_LAYOUT_BAD_DATA);
}
END_TEST

static Suite *layout_suite(void)
{
	Suite *s = suite_create("region-layout");
	TCase *tc = tcase_create("layout");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_rounding_is_stable);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_rules);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(layout_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
