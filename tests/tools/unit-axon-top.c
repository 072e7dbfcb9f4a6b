// SPDX-License-Identifier: MIT
/*
 * unit-axon-top: axon-top's parts without a daemon or a terminal — the
 * JSON reader (valid, hostile and odd documents), the stats document with
 * unknown and missing fields, rates between samples, the column layout at
 * 80 and 200 cells, human-readable numbers, sorting and filters, JSON
 * string output and trace lines (arguments per op, CUresult names).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "top.h"

static int failures;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__,	\
			__LINE__, #cond);				\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		failures++;						\
	}								\
} while (0)

#define CHECK_STR(got, want) CHECK(!strcmp((got), (want)), "got '%s', want '%s'", (got), (want))

/* ---- the JSON reader ------------------------------------------------------- */

static void test_json(void)
{
	char err[200];
	struct json *j;
	const char *bad[] = {
		"", "{", "[1,]", "{\"a\" 1}", "{\"a\":1,}", "[1 2]", "nul", "tru",
		"\"abc", "\"a\\x\"", "\"\\u12\"", "01x", "-", "1.", "1e", "{} x",
		"\"tab\there\"", "{1:2}",
	};
	char deep[300];
	size_t i;

	j = json_parse("{\"a\":{\"b\":[1,2,{\"c\":\"x\\u00e9\\ud83d\\ude00\\n\"}]},"
		     "\"big\":18446744073709551615,\"neg\":-5,\"f\":1.5e3,"
		     "\"t\":true,\"n\":null,\"s\":\"q\\\"\\\\/\",\"z\":\"a\\u0000b\"}",
		     err, sizeof(err));
	CHECK(j, "%s", err);
	if (j) {
		CHECK(json_u64(json_get(j, "big"), 0) == UINT64_MAX, "big");
		CHECK(json_i64(json_get(j, "neg"), 0) == -5, "neg");
		CHECK(json_u64(json_get(j, "neg"), 7) == 0, "negative as u64");
		CHECK(json_num(json_get(j, "f"), 0) == 1500.0, "float");
		CHECK(json_u64(json_get(j, "f"), 0) == 1500, "float as u64");
		CHECK(json_get(j, "t")->boolean, "true");
		CHECK(json_is(json_get(j, "n"), JSON_NULL), "null");
		CHECK_STR(json_str(json_get(j, "s"), ""), "q\"\\/");
		CHECK_STR(json_str(json_get(j, "z"), ""), "a?b");
		CHECK_STR(json_str(json_path(j, "a.b"), "def"), "def");	/* wrong type */
		CHECK(json_u64(json_at(json_path(j, "a.b"), 1), 0) == 2, "a.b[1]");
		CHECK_STR(json_str(json_get(json_at(json_path(j, "a.b"), 2), "c"), ""),
			  "x\xc3\xa9\xf0\x9f\x98\x80\n");
		CHECK(!json_get(j, "missing") && json_u64(json_get(j, "missing"), 42) == 42, "default");
		CHECK(!json_path(j, "a.b.c.d"), "path through an array");
		CHECK(json_path(j, "a")->len == 1 && json_path(j, "a.b")->len == 3, "len");
		json_free(j);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		j = json_parse(bad[i], err, sizeof(err));
		CHECK(!j && !strncmp(err, "JSON: ", 6), "'%s' accepted (%s)", bad[i], err);
		json_free(j);
	}
	/* Nesting past the limit is refused, not a stack overflow. */
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = 0;
	j = json_parse(deep, err, sizeof(err));
	CHECK(!j && strstr(err, "deeply"), "deep: %s", err);
	CHECK(!json_parse(NULL, err, sizeof(err)), "NULL text");
	/* White space everywhere is fine. */
	j = json_parse(" \n{ \"a\" :\t[ ] , \"b\" : { } }\r\n", err, sizeof(err));
	CHECK(j && json_get(j, "a")->len == 0, "white space: %s", err);
	json_free(j);
}

/* ---- the stats document ------------------------------------------------------ */

static const char *doc_full =
	"{\"daemon\":{\"pid\":77,\"backend\":\"sim\",\"abi\":\"1.0\",\"uptime_s\":10.0,"
	"\"clients\":2,\"clients_total\":5,\"ops_total\":100,\"mem_used\":3000,"
	"\"mem_reserved\":500,\"future\":{\"x\":[1,2]}},"
	"\"devices\":[{\"index\":0,\"name\":\"dev \\\"zero\\\"\",\"total_mem\":1048576}],"
	"\"clients\":[{\"id\":4,\"pid\":400,\"uid\":0,\"gid\":0,\"comm\":\"a\\u0001b\","
	"\"connected_s\":9.5,\"transport\":\"unix\",\"tracers\":1,\"bytes_mapped\":2000,"
	"\"mint_credit\":100,\"allocations\":3,\"handles\":{\"contexts\":1,\"streams\":2,"
	"\"events\":0,\"modules\":1,\"functions\":1},\"ops\":{\"local\":10,\"sync\":20,"
	"\"deferred\":30,\"by_op\":{\"MEMSET\":25,\"NEW_OP\":5,\"CTX_CREATE\":1}},"
	"\"crossings\":15,\"errors\":2,\"bytes_htod\":4096,\"bytes_dtoh\":8,\"sq_depth\":3,"
	"\"latency_us\":{\"p50\":16,\"p99\":1024,\"log2_hist\":[0,1]},\"new_field\":[{}]},"
	"{\"id\":9,\"pid\":900,\"uid\":4294967294,\"comm\":\"b\",\"bytes_mapped\":1000,"
	"\"ops\":\"not an object\"}]}";

static void test_stats(void)
{
	struct top_snapshot s = { 0 }, t = { 0 };
	char err[200] = "";
	int ret;

	ret = top_parse_stats(doc_full, &s, err, sizeof(err));
	CHECK(!ret, "%s", err);
	CHECK(s.daemon.pid == 77 && s.daemon.clients == 2 && s.daemon.clients_total == 5,
	      "daemon");
	CHECK_STR(s.daemon.backend, "sim");
	CHECK(s.ndev == 1 && s.dev[0].total_mem == 1048576, "device");
	CHECK_STR(s.dev[0].name, "dev \"zero\"");
	CHECK(top_device_used(&s, 0) == 3000, "one device: daemon's mem_used");
	CHECK(s.nclients == 2, "%zu clients", s.nclients);
	if (s.nclients == 2) {
		const struct top_client *a = &s.clients[0], *b = &s.clients[1];

		CHECK(a->id == 4 && a->pid == 400 && a->bytes_mapped == 2000, "a");
		CHECK_STR(a->comm, "a\001b");
		CHECK_STR(a->comm_disp, "a?b");
		CHECK(a->ops_local == 10 && a->ops_sync == 20 && a->ops_deferred == 30, "ops");
		CHECK(top_client_op(a, "MEMSET") == 25 && top_client_op(a, "NEW_OP") == 5 &&
		      top_client_op(a, "LAUNCH") == 0, "by_op");
		CHECK(a->streams == 2 && a->sq_depth == 3 && a->p99_us == 1024, "misc");
		CHECK(a->mem_limit == TOP_UNKNOWN && a->device == -1 && !a->cgroup[0],
		      "absent fields are unknown");
		/* b lacks most fields; ops is of the wrong type */
		CHECK(b->id == 9 && b->ops_sync == 0 && b->nby_op == 0 && b->crossings == 0,
		      "b defaults");
		CHECK_STR(b->user, "4294967294");	/* no such user: the uid */
	}
	CHECK(s.caps == 0, "caps %u", s.caps);
	top_snapshot_free(&s);

	/* A document from a source with limits, cgroups and devices. */
	ret = top_parse_stats("{\"clients\":[{\"id\":1,\"mem_limit\":5,\"cgroup\":\"/g\","
			      "\"device\":1}],\"devices\":[{},{}]}", &t, err, sizeof(err));
	CHECK(!ret, "%s", err);
	CHECK(t.caps == (TOP_CAP_LIMIT | TOP_CAP_CGROUP | TOP_CAP_DEVICE), "caps %u", t.caps);
	CHECK(t.nclients == 1 && t.clients[0].mem_limit == 5 && t.clients[0].device == 1,
	      "fields");
	CHECK(t.ndev == 2 && top_device_used(&t, 1) == TOP_UNKNOWN, "two devices: unknown");
	CHECK_STR(t.daemon.backend, "?");
	top_snapshot_free(&t);

	/* Not a document at all. */
	CHECK(top_parse_stats("[1]", &t, err, sizeof(err)) < 0, "array");
	CHECK(top_parse_stats("{\"clients\":[", &t, err, sizeof(err)) < 0, "truncated");
	top_snapshot_free(&t);

	/* The schema: this version is read, a later major one refused with a
	 * message naming it, one that is no version number refused too. */
	ret = top_parse_stats("{\"schema\":1,\"clients\":[{\"id\":3}]}", &t, err, sizeof(err));
	CHECK(!ret && t.nclients == 1, "schema 1: %s", err);
	top_snapshot_free(&t);
	err[0] = 0;
	CHECK(top_parse_stats("{\"schema\":2,\"clients\":[]}", &t, err, sizeof(err)) < 0 &&
	      strstr(err, "schema 2"), "schema 2: %s", err);
	top_snapshot_free(&t);
	CHECK(top_parse_stats("{\"schema\":\"1\"}", &t, err, sizeof(err)) < 0, "schema \"1\"");
	top_snapshot_free(&t);
}

/* ---- rates -------------------------------------------------------------------- */

static void mk(struct top_snapshot *s, pid_t dpid, double up, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->daemon.pid = dpid;
	s->daemon.uptime_s = up;
	s->clients = calloc(n, sizeof(*s->clients));
	s->nclients = n;
}

static void test_rates(void)
{
	struct top_snapshot a, b;
	struct top_client *c;

	mk(&a, 1, 10.0, 2);
	a.clients[0].id = 5;
	a.clients[0].ops_sync = 100;
	a.clients[0].ops_local = 50;
	a.clients[0].crossings = 10;
	a.clients[0].bytes_htod = 1000;
	a.clients[1].id = 6;
	mk(&b, 1, 12.0, 3);
	b.clients[0].id = 6;		/* order changed */
	b.clients[0].ops_deferred = 40;
	b.clients[1].id = 5;
	b.clients[1].ops_sync = 300;
	b.clients[1].ops_local = 50;
	b.clients[1].crossings = 30;
	b.clients[1].bytes_htod = 5000;
	b.clients[2].id = 7;		/* new, connected 1 s ago */
	b.clients[2].connected_s = 1.0;
	b.clients[2].ops_sync = 8;

	top_rates(NULL, &a);
	CHECK(!a.have_rates && !a.clients[0].has_rates, "first sample");
	top_rates(&a, &b);
	CHECK(b.have_rates && b.interval_s == 2.0, "interval %f", b.interval_s);
	c = &b.clients[1];
	CHECK(c->has_rates && c->rate.sync == 100 && c->rate.local == 0 &&
	      c->rate.crossings == 10 && c->rate.bytes_htod == 2000 && c->rate.ops == 100,
	      "client 5: %f %f", c->rate.sync, c->rate.ops);
	CHECK(b.clients[0].rate.deferred == 20, "client 6");
	CHECK(b.clients[2].has_rates && b.clients[2].rate.sync == 4, "new client");
	CHECK(b.total.ops == 124 && b.total.sync == 104, "total %f", b.total.ops);

	/* An old client missed by the previous sample: unknown, not a spike. */
	b.clients[2].connected_s = 100;
	top_rates(&a, &b);
	CHECK(!b.clients[2].has_rates, "old unseen client");
	/* The daemon restarted. */
	b.daemon.pid = 2;
	top_rates(&a, &b);
	CHECK(!b.have_rates && !b.clients[1].has_rates, "restart");
	top_snapshot_free(&a);
	top_snapshot_free(&b);
}

/* ---- columns ----------------------------------------------------------------- */

static void test_columns(void)
{
	struct top_opts o = { .sort = C_OPS };
	struct top_snapshot s;
	int cols[C_NCOLS], n, i, w;
	char buf[512];

	mk(&s, 1, 1, 3);
	n = top_layout(&s, &o, 80, cols);
	CHECK(n > 0 && cols[0] == C_ID && cols[n - 1] == C_XING, "80: last %d", cols[n - 1]);
	top_header_row(cols, n, &o, buf, sizeof(buf));
	CHECK(strlen(buf) <= 80, "80: header %zu wide", strlen(buf));
	n = top_layout(&s, &o, 200, cols);
	CHECK(cols[n - 1] == C_TIME, "200: last %d", cols[n - 1]);
	for (i = 0, w = 0; i < n; i++) {
		CHECK(!top_columns[cols[i]].cap, "capability column without the capability");
		w += top_col_width(cols[i], &o) + (i ? 1 : 0);
	}
	top_header_row(cols, n, &o, buf, sizeof(buf));
	CHECK((int)strlen(buf) == w, "header %zu, widths %d", strlen(buf), w);
	s.caps = TOP_CAP_LIMIT | TOP_CAP_CGROUP | TOP_CAP_DEVICE | TOP_CAP_RING;
	n = top_layout(&s, &o, -1, cols);
	CHECK(n == C_NCOLS, "all columns with every capability: %d", n);
	n = top_layout(&s, &o, 3, cols);
	CHECK(n == 0, "nothing fits 3 cells");

	/* rows: cells never spill, whatever the values */
	s.caps = 0;
	s.clients[0].id = 123456789;
	s.clients[0].pid = 4194304;
	snprintf(s.clients[0].user, sizeof(s.clients[0].user), "averyveryverylongname");
	snprintf(s.clients[0].comm_disp, sizeof(s.clients[0].comm_disp), "0123456789abcdefXYZ");
	s.clients[0].bytes_mapped = UINT64_MAX - 1;
	s.clients[0].has_rates = true;
	s.clients[0].rate.ops = 1e15;
	s.clients[0].errors = 123456789012ULL;
	n = top_layout(&s, &o, 200, cols);
	top_row(&s.clients[0], cols, n, &o, buf, sizeof(buf));
	CHECK((int)strlen(buf) == w, "row %zu, widths %d: '%s'", strlen(buf), w, buf);
	o.bytes = true;
	n = top_layout(&s, &o, 80, cols);
	top_row(&s.clients[0], cols, n, &o, buf, sizeof(buf));
	CHECK(strlen(buf) <= 80, "--bytes row at 80: %zu", strlen(buf));
	o.bytes = false;

	/* human-readable numbers */
	top_human_bytes(0, buf, sizeof(buf));
	CHECK_STR(buf, "0");
	top_human_bytes(999, buf, sizeof(buf));
	CHECK_STR(buf, "999B");
	top_human_bytes(1000, buf, sizeof(buf));
	CHECK_STR(buf, "1.0K");
	top_human_bytes(64ULL << 20, buf, sizeof(buf));
	CHECK_STR(buf, "64.0M");
	top_human_bytes(16ULL << 30, buf, sizeof(buf));
	CHECK_STR(buf, "16.0G");
	top_human_bytes(500ULL << 20, buf, sizeof(buf));
	CHECK_STR(buf, "500M");
	top_human_bytes(UINT64_MAX - 1, buf, sizeof(buf));
	CHECK_STR(buf, "16.0E");
	top_human_count(-1, buf, sizeof(buf));
	CHECK_STR(buf, "-");
	top_human_count(2.5, buf, sizeof(buf));
	CHECK_STR(buf, "2.5");
	top_human_count(999, buf, sizeof(buf));
	CHECK_STR(buf, "999");
	top_human_count(5210, buf, sizeof(buf));
	CHECK_STR(buf, "5.21k");
	top_human_count(12345678, buf, sizeof(buf));
	CHECK_STR(buf, "12.3M");
	top_duration(3725, buf, sizeof(buf));
	CHECK_STR(buf, "1:02:05");
	top_duration(59, buf, sizeof(buf));
	CHECK_STR(buf, "0:59");
	top_duration(200000, buf, sizeof(buf));
	CHECK_STR(buf, "2d07h");
	CHECK(top_col_by_key("mem") == C_MEM && top_col_by_key("OPS/s") == C_OPS &&
	      top_col_by_key("nope") < 0, "keys");
	top_snapshot_free(&s);
}

static void test_sort_filter(void)
{
	struct top_opts o = { .sort = C_MEM };
	struct top_snapshot s;

	mk(&s, 1, 1, 3);
	s.clients[0].id = 1;
	s.clients[0].bytes_mapped = 10;
	snprintf(s.clients[0].user, TOP_USER_LEN, "alice");
	snprintf(s.clients[0].comm, TOP_COMM_LEN, "train");
	s.clients[1].id = 2;
	s.clients[1].bytes_mapped = 30;
	snprintf(s.clients[1].user, TOP_USER_LEN, "bob");
	snprintf(s.clients[1].comm, TOP_COMM_LEN, "infer");
	s.clients[1].uid = 1001;
	s.clients[2].id = 3;
	s.clients[2].bytes_mapped = 30;
	snprintf(s.clients[2].user, TOP_USER_LEN, "carol");
	snprintf(s.clients[2].comm, TOP_COMM_LEN, "Train2");
	top_sort(&s, &o);
	CHECK(s.clients[0].id == 2 && s.clients[1].id == 3 && s.clients[2].id == 1,
	      "mem desc, ties by id");
	o.reverse = true;
	top_sort(&s, &o);
	CHECK(s.clients[0].id == 1, "reversed");
	o.reverse = false;
	o.sort = C_ID;
	top_sort(&s, &o);
	CHECK(s.clients[0].id == 1 && s.clients[2].id == 3, "id asc");
	snprintf(o.filter, sizeof(o.filter), "TRAIN");
	CHECK(top_visible(&s.clients[0], &o) && !top_visible(&s.clients[1], &o) &&
	      top_visible(&s.clients[2], &o), "filter by command, any case");
	snprintf(o.filter, sizeof(o.filter), "bo");
	CHECK(!top_visible(&s.clients[0], &o) && top_visible(&s.clients[1], &o), "by user");
	o.filter[0] = 0;
	snprintf(o.user, sizeof(o.user), "1001");
	CHECK(!top_visible(&s.clients[0], &o) && top_visible(&s.clients[1], &o), "-u uid");
	snprintf(o.user, sizeof(o.user), "carol");
	CHECK(top_visible(&s.clients[2], &o) && !top_visible(&s.clients[1], &o), "-u name");
	top_snapshot_free(&s);
}

/* ---- JSON output -------------------------------------------------------------- */

static void test_json_out(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	top_json_string(f, "a\"b\\c\n\x01 caf\xc3\xa9 \xff\xc3 \xf0\x9f\x98\x80");
	fclose(f);
	CHECK_STR(buf, "\"a\\\"b\\\\c\\u000a\\u0001 caf\xc3\xa9 \\ufffd\\ufffd \xf0\x9f\x98\x80\"");
	free(buf);
}

/* ---- trace lines ----------------------------------------------------------------- */

static void test_trace(void)
{
	struct top_trace_fmt st = { 0 };
	struct axon_trace_event e;
	struct axon_sqe q;
	char buf[512];

	memset(&q, 0, sizeof(q));
	q.launch.func = AXON_HANDLE_MAKE(AXON_HANDLE_FUNC, 1, 3);
	q.launch.grid[0] = 64;
	q.launch.grid[1] = 2;
	q.launch.grid[2] = 1;
	q.launch.block[0] = 256;
	q.launch.block[1] = 1;
	q.launch.block[2] = 1;
	memset(&e, 0, sizeof(e));
	e.time_ns = 1000000;
	e.kind = AXON_TRACE_SUBMIT;
	e.opcode = AXON_OP_LAUNCH;
	e.sqe_flags = AXON_SQE_F_DEFERRED;
	e.stream = AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, 2, 1);
	memcpy(e.args, q.raw, sizeof(e.args));
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK_STR(buf, "       0.000 SUBMIT   LAUNCH(fn3, grid=(64,2,1), block=(256,1,1)) strm1.g2 deferred");

	memset(&q, 0, sizeof(q));
	q.copy.dst = 0x1000;
	q.copy.src = 0x40;
	q.copy.len = 3 << 20;
	memcpy(e.args, q.raw, sizeof(e.args));
	e.opcode = AXON_OP_MEMCPY_HTOD;
	e.sqe_flags = 0;
	e.stream = 0;
	e.user_data = 0xabc;
	e.time_ns = 1002500;
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK_STR(buf, "       2.500 SUBMIT   MEMCPY_HTOD(dst=0x1000, src=data+0x40, len=3.0M)  #abc");
	st.bytes = true;
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK(strstr(buf, "len=3145728)"), "raw: %s", buf);
	/* The data-area offset is the source up, the destination down. */
	e.opcode = AXON_OP_MEMCPY_DTOH;
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK(strstr(buf, "MEMCPY_DTOH(dst=data+0x1000, src=0x40, len=3145728)"), "dtoh: %s",
	      buf);
	e.opcode = AXON_OP_MEMCPY_DTOD;
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK(strstr(buf, "MEMCPY_DTOD(dst=0x1000, src=0x40, len=3145728)"), "dtod: %s", buf);

	memset(&q, 0, sizeof(q));
	q.memset.dst = 0x2000;
	q.memset.width = 16;
	q.memset.height = 4;
	q.memset.pitch = 64;
	memcpy(e.args, q.raw, sizeof(e.args));
	e.opcode = AXON_OP_MEMSET;
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK(strstr(buf, "MEMSET(dst=0x2000, 16x4, pitch=64)"), "memset2d: %s", buf);

	memset(&e, 0, sizeof(e));
	e.time_ns = 1010000;
	e.kind = AXON_TRACE_COMPLETE;
	e.opcode = AXON_OP_STREAM_SYNC;
	e.res = 1;
	e.latency_ns = 12345;
	e.user_data = 0x10;
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK_STR(buf, "      10.000 COMPLETE STREAM_SYNC = CUDA_ERROR_INVALID_VALUE <12.3 us>  #10");
	e.res = 0;
	e.opcode = AXON_OP_LAST;	/* a refused SQE */
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK(strstr(buf, "COMPLETE INVALID = CUDA_SUCCESS"), "%s", buf);
	e.opcode = 200;
	e.kind = AXON_TRACE_SUBMIT;
	top_trace_line(&st, &e, buf, sizeof(buf));
	CHECK(strstr(buf, "SUBMIT   OP_200(0x0, 0x0, 0x0, 0x0)"), "%s", buf);

	CHECK_STR(top_curesult_name(0, buf, sizeof(buf)), "CUDA_SUCCESS");
	CHECK_STR(top_curesult_name(700, buf, sizeof(buf)), "CUDA_ERROR_ILLEGAL_ADDRESS");
	CHECK_STR(top_curesult_name(999, buf, sizeof(buf)), "CUDA_ERROR_UNKNOWN");
	CHECK_STR(top_curesult_name(123456, buf, sizeof(buf)), "CUresult 123456");
	CHECK_STR(top_handle(0, buf, sizeof(buf)), "NULL");
	CHECK_STR(top_handle(AXON_HANDLE_MAKE(AXON_HANDLE_CTX, 1, 0), buf, sizeof(buf)), "ctx0");
	CHECK_STR(top_handle(0x1234, buf, sizeof(buf)), "0x1234");
}

int main(void)
{
	test_json();
	test_stats();
	test_rates();
	test_columns();
	test_sort_filter();
	test_json_out();
	test_trace();
	if (failures) {
		fprintf(stderr, "unit-axon-top: %d checks failed\n", failures);
		return 1;
	}
	printf("unit-axon-top: all checks passed\n");
	return 0;
}
