// SPDX-License-Identifier: MIT
/*
 * unit-statsdoc: the stats document's writer (axond/statsdoc.c) read back
 * by the tools' reader (tools/common/json.c), and the check of a worker's
 * binary report (axond/report.c), without a daemon.
 *
 *   hostile_strings  a comm of control characters, quotes, backslashes
 *                    and bytes that are not UTF-8 comes out as valid JSON
 *                    that reads back as the same text, U+FFFD for each
 *                    byte that was not UTF-8
 *   numbers          u64 counters in full, seconds with three decimals,
 *                    schema first, optional fields only when set
 *   report_check     a good report passes; each malformed field of one
 *                    is refused
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <axon/libaxon.h>
#include <stats-schema.h>
#include "json.h"
#include "report.h"

/* report.c's worker side takes these from stats.c, which needs a whole
 * daemon: the tests check only report_check. */
void stats_collect_daemon(struct axond *d, struct stats_daemon *out)
{
	(void)d;
	memset(out, 0, sizeof(*out));
}

unsigned int stats_collect_devices(struct axond *d, struct stats_device *out)
{
	(void)d;
	(void)out;
	return 0;
}

void stats_collect_client(struct axond *d, struct client *c, struct stats_client *out)
{
	(void)d;
	(void)c;
	memset(out, 0, sizeof(*out));
}

static char *render(const struct stats_daemon *dm, const struct stats_device *dev,
		    unsigned int ndev, const struct stats_client *c)
{
	struct statsdoc *doc = statsdoc_begin(dm, dev, ndev);
	char *out = NULL;
	size_t len = 0;

	ck_assert_ptr_nonnull(doc);
	if (c)
		statsdoc_add_client(doc, c);
	ck_assert_int_eq(statsdoc_end(doc, &out, &len), 0);
	ck_assert_uint_eq(strlen(out), len);
	ck_assert_int_eq(out[len - 1], '\n');
	return out;
}

static struct json *parse(const char *text)
{
	char err[200];
	struct json *j = json_parse(text, err, sizeof(err));

	ck_assert_msg(j != NULL, "%s: %s", err, text);
	return j;
}

START_TEST(hostile_strings)
{
	static const char comm[] = "a\x01\"\\\xff\xc3(\xe2\x82\xac\x7f/\n";
	struct stats_daemon dm = { .pid = 1 };
	struct stats_device dev = { .total_mem = 1 };
	struct stats_client c = { .id = 7, .device = -1 };
	const struct json *cl;
	struct json *j;
	char *text;
	size_t i;

	strcpy(dm.backend, "sim");
	memcpy(c.comm, comm, sizeof(comm));
	/* A name filling its array, cut in a sequence: no NUL to stop at. */
	memset(dev.name, 'x', sizeof(dev.name));
	memcpy(dev.name + sizeof(dev.name) - 2, "\xe2\x82", 2);
	strcpy(dev.isolation, "window");
	text = render(&dm, &dev, 1, &c);
	for (i = 0; text[i] != '\n'; i++)
		ck_assert_msg((unsigned char)text[i] >= 0x20, "raw control at %zu: %s", i, text);
	j = parse(text);
	cl = json_at(json_get(j, "clients"), 0);
	ck_assert_str_eq(json_str(json_get(cl, "comm"), ""),
			 "a\x01\"\\\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac\x7f/\n");
	ck_assert_uint_eq(strlen(json_str(json_path(json_at(json_get(j, "devices"), 0), "name"),
					  "")), sizeof(dev.name) - 2 + 2 * 3);
	ck_assert_int_eq(json_i64(json_get(cl, "device"), 0), -1);
	json_free(j);
	free(text);
}
END_TEST

START_TEST(numbers)
{
	struct stats_daemon dm = { .pid = 42, .uptime_ns = 1500000000ULL, .ops_total = UINT64_MAX,
				   .has_windows = true, .windows_max = 3 };
	struct stats_client c = { .id = 1, .connected_ns = 2000000ULL, .bytes_htod = UINT64_MAX };
	const struct json *cl, *by_op;
	struct json *j;
	char *text;

	strcpy(dm.backend, "sim");
	c.by_op[1] = 5;
	c.lat_hist[3] = 2;
	text = render(&dm, NULL, 0, &c);
	ck_assert_msg(!strncmp(text, "{\"schema\":", 10), "%s", text);
	ck_assert_ptr_nonnull(strstr(text, "\"uptime_s\":1.500,"));
	ck_assert_ptr_nonnull(strstr(text, "\"connected_s\":0.002,"));
	ck_assert_ptr_null(strstr(text, "\"isolation\":\"process\""));
	j = parse(text);
	ck_assert_uint_eq(json_u64(json_get(j, "schema"), 0), AXON_STATS_SCHEMA);
	ck_assert_uint_eq(json_u64(json_path(j, "daemon.ops_total"), 0), UINT64_MAX);
	ck_assert_uint_eq(json_u64(json_path(j, "windows.max"), 0), 3);
	cl = json_at(json_get(j, "clients"), 0);
	ck_assert_uint_eq(json_u64(json_get(cl, "bytes_htod"), 0), UINT64_MAX);
	ck_assert_ptr_null(json_get(cl, "mem_limit"));
	by_op = json_path(cl, "ops.by_op");
	ck_assert_uint_eq(json_len(by_op), 1);
	ck_assert_uint_eq(json_u64(json_get(by_op, axon_op_name(1)), 0), 5);
	ck_assert_uint_eq(json_u64(json_path(cl, "latency_us.p50"), 0), 8);
	ck_assert_uint_eq(json_len(json_path(cl, "latency_us.log2_hist")), LAT_BUCKETS);
	json_free(j);
	free(text);

	/* The supervisor's section, a limit set, no windows. */
	dm.supervised = true;
	dm.has_windows = false;
	c.has_mem_limit = 1;
	c.mem_limit = 9;
	text = render(&dm, NULL, 0, &c);
	j = parse(text);
	ck_assert_str_eq(json_str(json_path(j, "daemon.isolation"), ""), "process");
	ck_assert_ptr_null(json_path(j, "daemon.pending"));
	ck_assert_ptr_null(json_get(j, "windows"));
	ck_assert_uint_eq(json_u64(json_get(json_at(json_get(j, "clients"), 0), "mem_limit"), 0), 9);
	json_free(j);
	free(text);
}
END_TEST

static struct worker_report *good_report(void)
{
	struct worker_report *r = calloc(1, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	r->magic = WORKER_REPORT_MAGIC;
	r->version = WORKER_REPORT_VERSION;
	r->size = sizeof(*r);
	r->ndevices = 1;
	strcpy(r->device[0].name, "dev");
	strcpy(r->device[0].isolation, "window");
	r->nclients = 1;
	r->client[0].device = 0;
	strcpy(r->client[0].comm, "c");
	return r;
}

START_TEST(report_check_fields)
{
	struct worker_report *r = good_report();
	const char *why = NULL;
	int i;

	ck_assert_int_eq(report_check(r, &why), 0);
	for (i = 0; i < 13; i++) {
		free(r);
		r = good_report();
		switch (i) {
		case 0: r->magic++; break;
		case 1: r->version++; break;
		case 2: r->size--; break;
		case 3: r->ndevices = AXON_MAX_DEVICES + 1; break;
		case 4: r->nclients = WORKER_REPORT_MAX_CLIENTS + 1; break;
		case 5: r->resv = 1; break;
		case 6: memset(r->device[0].name, 'x', sizeof(r->device[0].name)); break;
		case 7: memset(r->device[0].isolation, 'x', sizeof(r->device[0].isolation)); break;
		case 8: memset(r->client[0].comm, 'x', sizeof(r->client[0].comm)); break;
		case 9: r->client[0].transport = STATS_TRANSPORT_KMOD + 1; break;
		case 10: r->client[0].device = -2; break;
		case 11: r->client[0].device = 1; break;	/* one device */
		case 12: r->client[0].has_mem_limit = 2; break;
		}
		why = NULL;
		ck_assert_msg(report_check(r, &why) == -EPROTO && why, "case %d passed", i);
	}
	free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("statsdoc");
	TCase *tc = tcase_create("statsdoc");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, hostile_strings);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, report_check_fields);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
