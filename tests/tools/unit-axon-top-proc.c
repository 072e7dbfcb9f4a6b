// SPDX-License-Identifier: MIT
/*
 * unit-axon-top-proc: axon-top's /proc/axon source against fixture
 * directories (tests/tools/fixtures/proc-*, written in kmod/proc.c's
 * format): `axon-top --source proc --proc-dir DIR -b -n 1 --json` checked
 * field by field (escaped paths and names, limits from the cgroup and its
 * ancestors, appended unknown fields, an empty clients table), the text
 * table's columns, the 32-bit ring positions unwrapped across samples and
 * their rates, --source auto, and garbage or short files: a clear error
 * naming the file and line, exit 1, no crash (run it under SAN=1).
 *
 * The binary is $AXON_BUILD/bin/axon-top, the fixtures under $AXON_SRC
 * (both set by tests/run-tests.sh; compiled-in defaults otherwise).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "json.h"
#include "top.h"

#ifndef TOPP_BUILD
#define TOPP_BUILD "build"
#endif
#ifndef TOPP_SRC
#define TOPP_SRC "."
#endif

static char top_bin[512], fixtures[512];

static void setup_paths(void)
{
	const char *b = getenv("AXON_BUILD"), *s = getenv("AXON_SRC");

	snprintf(top_bin, sizeof(top_bin), "%s/bin/axon-top", b && *b ? b : TOPP_BUILD);
	snprintf(fixtures, sizeof(fixtures), "%s/tests/tools/fixtures", s && *s ? s : TOPP_SRC);
}

/* Runs axon-top with args; stdout and stderr into malloc'd strings. */
static int run_top(const char *args, char **out, char **errout)
{
	char cmd[2048], ofile[] = "/tmp/axtp-outXXXXXX", efile[] = "/tmp/axtp-errXXXXXX";
	int ofd = mkstemp(ofile), efd = mkstemp(efile), st;
	FILE *f;
	long n;

	ck_assert(ofd >= 0 && efd >= 0);
	close(ofd);
	close(efd);
	snprintf(cmd, sizeof(cmd), "'%s' %s >'%s' 2>'%s'", top_bin, args, ofile, efile);
	st = system(cmd);
	ck_assert_msg(st != -1 && WIFEXITED(st), "axon-top died: %s (status %d)", cmd, st);
	for (int i = 0; i < 2; i++) {
		char **dst = i ? errout : out;

		f = fopen(i ? efile : ofile, "r");
		ck_assert(f);
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		*dst = calloc(1, (size_t)n + 1);
		ck_assert(*dst);
		ck_assert(fread(*dst, 1, (size_t)n, f) == (size_t)n);
		fclose(f);
	}
	unlink(ofile);
	unlink(efile);
	return WEXITSTATUS(st);
}

/* One --json snapshot of fixture dir name. */
static struct json *json_of(const char *name)
{
	char args[1024], *out, *err, perr[200];
	struct json *j;
	int rc;

	snprintf(args, sizeof(args), "--source proc --proc-dir '%s/%s' -b -n 1 -d 0.01 --json",
		 fixtures, name);
	rc = run_top(args, &out, &err);
	ck_assert_msg(rc == 0, "%s: exit %d: %s", name, rc, err);
	ck_assert_msg(!*err, "%s: stderr: %s", name, err);
	ck_assert_msg(strchr(out, '\n') == out + strlen(out) - 1, "%s: not one line", name);
	j = json_parse(out, perr, sizeof(perr));
	ck_assert_msg(j, "%s: %s in %s", name, perr, out);
	free(out);
	free(err);
	return j;
}

static const struct json *client_by_id(const struct json *root, uint64_t id)
{
	const struct json *c;

	for (c = json_first(json_get(root, "clients")); c; c = c->next)
		if (json_u64(json_get(c, "id"), 0) == id)
			return c;
	ck_abort_msg("no client %llu", (unsigned long long)id);
	return NULL;
}

#define U64(j, path) json_u64(json_path((j), (path)), 0xdeadbeefULL)
#define STR(j, path) json_str(json_path((j), (path)), "<missing>")

/* ---- good fixtures --------------------------------------------------------- */

START_TEST(basic_json)
{
	struct json *j = json_of("proc-basic");
	const struct json *c;

	ck_assert_str_eq(STR(j, "source"), "proc");
	ck_assert_uint_eq(U64(j, "daemon.pid"), 4242);
	ck_assert_str_eq(STR(j, "daemon.backend"), "kmod");
	ck_assert_str_eq(STR(j, "daemon.abi"), "proc/1");
	ck_assert_uint_eq(U64(j, "daemon.clients"), 3);
	ck_assert_uint_eq(U64(j, "daemon.clients_total"), 17);
	ck_assert_uint_eq(U64(j, "daemon.mem_used"), 72351744);
	ck_assert(json_is(json_path(j, "daemon.mem_reserved"), JSON_NULL));
	ck_assert_uint_eq(json_get(j, "devices")->len, 0);
	ck_assert_uint_eq(json_get(j, "clients")->len, 3);
	/* every printed snapshot has rates: nothing moved, so zero */
	ck_assert(json_num(json_path(j, "daemon.rates.submits"), -1) == 0);

	c = client_by_id(j, 3);
	ck_assert_uint_eq(U64(c, "pid"), 1001);
	ck_assert_uint_eq(U64(c, "uid"), 0);
	ck_assert_uint_eq(U64(c, "gid"), 0);
	ck_assert_str_eq(STR(c, "comm"), "train");
	ck_assert_str_eq(STR(c, "cgroup"), "/axt/a/b");
	ck_assert_uint_eq(U64(c, "mem.mapped"), 67108864);
	/* /axt/a/b: max; /axt/a: 128 MiB; /axt: 1 GiB -> the lowest */
	ck_assert_uint_eq(U64(c, "mem.limit"), 134217728);
	ck_assert_uint_eq(U64(c, "sq_depth"), 10);
	ck_assert_str_eq(STR(c, "state"), "active");
	ck_assert_uint_eq(U64(c, "ring.submits"), 4294967290ULL);
	ck_assert_uint_eq(U64(c, "ring.completions"), 4294967280ULL);
	ck_assert_uint_eq(U64(c, "ring.enters"), 12);
	ck_assert(json_is(json_get(c, "device"), JSON_NULL));
	ck_assert(json_num(json_path(c, "rates.submits"), -1) == 0);
	ck_assert(json_num(json_path(c, "rates.completions"), -1) == 0);

	c = client_by_id(j, 7);
	ck_assert_uint_eq(U64(c, "pid"), 1002);
	ck_assert_uint_eq(U64(c, "uid"), 65534);
	ck_assert_str_eq(STR(c, "comm"), "my tool");		/* my\040tool */
	ck_assert_str_eq(STR(c, "cgroup"), "/my jobs/x\\y");	/* \040, \134 */
	ck_assert_uint_eq(U64(c, "mem.mapped"), 3145728);
	ck_assert_uint_eq(U64(c, "mem.limit"), 8388608);	/* /my jobs */
	ck_assert_str_eq(STR(c, "state"), "pending");
	ck_assert_uint_eq(U64(c, "ring.submits"), 100);
	ck_assert_uint_eq(U64(c, "ring.completions"), 99);
	ck_assert_uint_eq(U64(c, "sq_depth"), 1);

	c = client_by_id(j, 9);
	ck_assert_str_eq(STR(c, "comm"), "-");			/* the module's empty comm */
	ck_assert_str_eq(STR(c, "cgroup"), "/");
	ck_assert(json_is(json_path(c, "mem.limit"), JSON_NULL));	/* root: max */
	ck_assert_str_eq(STR(c, "state"), "orphan");
	json_free(j);
}
END_TEST

START_TEST(basic_text)
{
	char args[1024], *out, *err, *hdr, *l;
	int rc;

	snprintf(args, sizeof(args), "--source proc --proc-dir '%s/proc-basic' -b -n 1 "
		 "-d 0.01 --bytes --sort id", fixtures);
	rc = run_top(args, &out, &err);
	ck_assert_msg(rc == 0 && !*err, "exit %d: %s", rc, err);
	ck_assert_msg(strstr(out, "  source proc  axond pid 4242  backend kmod  ABI proc/1\n"),
		      "%s", out);
	ck_assert_msg(strstr(out, "\nclients 3 (17 since start)  submits/s 0.0  "
			     "completions/s 0.0  charged 72351744  interval "), "%s", out);
	hdr = strstr(out, "\n   ID ");
	ck_assert_msg(hdr, "%s", out);
	l = strchr(hdr + 1, '\n');
	ck_assert(l);
	*l = 0;
	/* the daemon-only columns are hidden, the module's are shown */
	ck_assert_msg(!strcmp(hdr + 1, "   ID     PID USER     COMMAND                   MEM"
			      "         LIMIT   SQ  SUB/s  CMP/s STATE   CGROUP                  "),
		      "header '%s'", hdr + 1);
	ck_assert_msg(!strncmp(l + 1, "    3    1001 ", 14), "row '%.60s'", l + 1);
	ck_assert_msg(strstr(l + 1, " 67108864     134217728   10    0.0    0.0 active  /axt/a/b "),
		      "row '%.120s'", l + 1);
	ck_assert_msg(strstr(l + 1, " 3145728       8388608    1    0.0    0.0 pending /my jobs/x\\y "),
		      "%s", l + 1);
	ck_assert_msg(strstr(l + 1, "            0             -    0    0.0    0.0 orphan  / "),
		      "%s", l + 1);
	free(out);
	free(err);
}
END_TEST

/* -g keeps a cgroup and the ones below it, on path-component boundaries. */
START_TEST(cgroup_filter)
{
	static const struct { const char *g; const char *want; } cases[] = {
		{ "/", " 3 7 9" }, { "/axt", " 3" }, { "/axt/a/b", " 3" },
		{ "/ax", "" }, { "/my jobs", " 7" }, { "/none", "" },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char args[1024], got[64] = "", *out, *err, *p;
		int rc;

		snprintf(args, sizeof(args), "--source proc --proc-dir '%s/proc-basic' -b -n 1 "
			 "-d 0.01 --sort id -g '%s'", fixtures, cases[i].g);
		rc = run_top(args, &out, &err);
		ck_assert_msg(rc == 0 && !*err, "exit %d: %s", rc, err);
		p = strstr(out, "\n   ID ");
		if (p)
			p = strchr(p + 1, '\n');
		while (p && p[1] && p[1] != '\n') {
			unsigned int id;

			if (sscanf(p + 1, "%u", &id) == 1)
				snprintf(got + strlen(got), sizeof(got) - strlen(got), " %u", id);
			p = strchr(p + 1, '\n');
		}
		ck_assert_msg(!strcmp(got, cases[i].want), "-g '%s': ids '%s', want '%s'",
			      cases[i].g, got, cases[i].want);
		free(out);
		free(err);
	}
}
END_TEST

START_TEST(empty_clients)
{
	char args[1024], *out, *err;
	struct json *j = json_of("proc-empty");
	int rc;

	ck_assert_uint_eq(U64(j, "daemon.clients"), 0);
	ck_assert_uint_eq(U64(j, "daemon.pid"), 0);		/* no daemon attached */
	ck_assert(json_is(json_get(j, "clients"), JSON_ARRAY));
	ck_assert_uint_eq(json_get(j, "clients")->len, 0);
	json_free(j);

	snprintf(args, sizeof(args), "--source proc --proc-dir '%s/proc-empty' -b -n 1 -d 0.01",
		 fixtures);
	rc = run_top(args, &out, &err);
	ck_assert_msg(rc == 0 && !*err, "exit %d: %s", rc, err);
	ck_assert_msg(strstr(out, "\n(no clients)\n"), "%s", out);
	free(out);
	free(err);
}
END_TEST

START_TEST(extra_fields)
{
	struct json *j = json_of("proc-extra");
	const struct json *c = client_by_id(j, 5);

	/* an appended "numa" field in clients, "weight" in cgroups, an unknown
	 * stats counter: ignored; tab and newline escapes undone */
	ck_assert_uint_eq(json_get(j, "clients")->len, 1);
	ck_assert_uint_eq(U64(j, "daemon.pid"), 77);
	ck_assert_uint_eq(U64(c, "pid"), 2001);
	ck_assert_str_eq(STR(c, "comm"), "a\nb c");
	ck_assert_str_eq(STR(c, "cgroup"), "/t\tab");
	ck_assert_uint_eq(U64(c, "mem.limit"), 65536);		/* devmem, not hostmem */
	ck_assert_str_eq(STR(c, "state"), "active");
	ck_assert_uint_eq(U64(c, "ring.enters"), 2);
	json_free(j);
}
END_TEST

START_TEST(no_cgroups_file)
{
	struct json *j = json_of("proc-no-cgroups");
	const struct json *c = client_by_id(j, 4);

	ck_assert(json_is(json_path(c, "mem.limit"), JSON_NULL));
	ck_assert_str_eq(STR(c, "state"), "new");
	json_free(j);
}
END_TEST

START_TEST(unescape)
{
	char a[] = "\\040a\\011\\012\\134\\000x\\9\\04\\", b[] = "plain";

	ck_assert_str_eq(top_proc_unescape(a), " a\t\n\\?x\\9\\04\\");
	ck_assert_str_eq(top_proc_unescape(b), "plain");
}
END_TEST

/* ---- samples in process: unwrapping, rates, auto ------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	ck_assert(!fclose(f));
}

static const char stats1[] = "name value\nformat 1\nclients 1\nopens 1\n"
			     "daemon_attached 1\ndaemon_pid 10\ncharged_bytes 0\n";
static const char hdr[] = "id pid uid gid cgroup comm charged submits completions "
			  "depth state enters\n";

START_TEST(unwrap_and_rates)
{
	char dir[] = "/tmp/axtp-dirXXXXXX", err[256] = "", text[512];
	struct top_snapshot a = { 0 }, b = { 0 };
	struct top_source *src = NULL;

	ck_assert(mkdtemp(dir));
	write_file(dir, "stats", stats1);
	snprintf(text, sizeof(text), "%s1 50 0 0 / w 0 4294967200 4294967100 100 active 1\n", hdr);
	write_file(dir, "clients", text);
	ck_assert_int_eq(top_source_open("proc", NULL, dir, &src, err, sizeof(err)), 0);
	ck_assert_int_eq(src->ops->sample(src, &a, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.clients[0].submits, 4294967200ULL);
	/* both wrapped: 96 + 10 and 196 + 5 more */
	snprintf(text, sizeof(text), "%s1 50 0 0 / w 0 10 5 5 active 9\n", hdr);
	write_file(dir, "clients", text);
	ck_assert_int_eq(src->ops->sample(src, &b, err, sizeof(err)), 0);
	ck_assert_uint_eq(b.clients[0].submits, 4294967296ULL + 10);
	ck_assert_uint_eq(b.clients[0].completions, 4294967296ULL + 5);
	ck_assert_uint_eq(b.clients[0].enters, 9);
	b.mono_time = a.mono_time + 2.0;
	top_rates(&a, &b);
	ck_assert(b.have_rates && b.clients[0].has_rates);
	ck_assert(b.clients[0].rate.submits == 106 / 2.0);
	ck_assert(b.clients[0].rate.completions == 201 / 2.0);
	ck_assert(b.total.submits == 53);
	ck_assert(b.caps & TOP_CAP_RING && b.caps & TOP_CAP_NOCALLS && !(b.caps & TOP_CAP_LIMIT));
	top_snapshot_free(&a);
	top_snapshot_free(&b);
	top_source_close(src);

	/* auto: proc when DIR/clients and DIR/stats are readable, unless a
	 * daemon is named */
	unsetenv("AXON_ADDR");
	ck_assert_int_eq(top_source_open("auto", NULL, dir, &src, err, sizeof(err)), 0);
	ck_assert_ptr_eq(src->ops, &top_source_proc);
	top_source_close(src);
	ck_assert_int_eq(top_source_open("auto", "unix:/x.sock", dir, &src, err,
					 sizeof(err)), 0);
	ck_assert_ptr_eq(src->ops, &top_source_axond);
	top_source_close(src);
	setenv("AXON_ADDR", "unix:/x.sock", 1);
	ck_assert_int_eq(top_source_open("auto", NULL, dir, &src, err, sizeof(err)), 0);
	ck_assert_ptr_eq(src->ops, &top_source_axond);
	top_source_close(src);
	unsetenv("AXON_ADDR");
	snprintf(text, sizeof(text), "%s/stats", dir);
	unlink(text);
	ck_assert_int_eq(top_source_open("auto", NULL, dir, &src, err, sizeof(err)), 0);
	ck_assert_ptr_eq(src->ops, &top_source_axond);
	top_source_close(src);
	ck_assert_int_eq(top_source_open("axond", NULL, fixtures, &src, err, sizeof(err)), 0);
	ck_assert_ptr_eq(src->ops, &top_source_axond);
	top_source_close(src);
	ck_assert_int_lt(top_source_open("kernel", NULL, NULL, &src, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "unknown source"), "%s", err);
	snprintf(text, sizeof(text), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(text), 0);
}
END_TEST

/* ---- errors ------------------------------------------------------------- */

static void expect_fail(const char *dir, const char *what)
{
	struct top_snapshot s = { 0 };
	char err[512] = "", args[1024], *out, *eout;
	int ret, rc;

	ret = top_proc_read(dir, &s, err, sizeof(err));
	ck_assert_msg(ret < 0, "%s: accepted", dir);
	ck_assert_msg(strstr(err, what), "%s: error '%s', want '%s'", dir, err, what);
	ck_assert(!s.clients && !s.nclients);

	snprintf(args, sizeof(args), "--source proc --proc-dir '%s' -b -n 1 -d 0.01 --json", dir);
	rc = run_top(args, &out, &eout);
	ck_assert_msg(rc == 1, "%s: exit %d", dir, rc);
	ck_assert_msg(!*out, "%s: wrote '%s'", dir, out);
	ck_assert_msg(!strncmp(eout, "axon-top: ", 10) && strstr(eout, what),
		      "%s: stderr '%s', want '%s'", dir, eout, what);
	free(out);
	free(eout);
}

START_TEST(bad_fixtures)
{
	char d[600];

#define FIX(n) (snprintf(d, sizeof(d), "%s/%s", fixtures, (n)), d)
	expect_fail(FIX("proc-bad-short"), "clients line 2: 8 fields, the header names 12");
	expect_fail(FIX("proc-bad-number"), "clients line 2: field 'charged' is not a number: '12x'");
	expect_fail(FIX("proc-bad-format"), "stats: format 2, axon-top reads format 1");
	expect_fail(FIX("proc-bad-header"), "clients: header field 1 is not a name");
	expect_fail(FIX("does-not-exist"), "cannot open ");
#undef FIX
}
END_TEST

START_TEST(bad_generated)
{
	static const struct { const char *file, *text, *what; } cases[] = {
		{ "clients", "", "clients: empty (no header line)" },
		{ "clients", "   \n\n", "clients: bad header line (no fields)" },
		{ "clients", "pid comm\n1 x\n", "the header has no 'id' field" },
		{ "clients", "id comm\n1 x\n", "the header has no 'pid' field" },
		{ "clients", "id pid\n1 2 3\n", "clients line 2: more than 2 fields" },
		{ "clients", "id pid\n1\n", "clients line 2: 1 fields" },
		{ "clients", "id pid\n1 -2\n", "field 'pid' is not a number" },
		{ "clients", "id pid\n1 99999999999\n", "field 'pid' is not a number in range" },
		{ "clients", "id pid\n18446744073709551616 1\n", "field 'id' is not a number" },
		{ "clients", "id pid submits\n1 1 4294967296\n", "field 'submits' is not a number in range" },
		{ "clients", "id pid\n1 2\0garbage", "not text" },
		{ "stats", "name value\nclients 1\n", "stats: no 'format' line" },
		{ "stats", "name\nformat\n", "the header has no 'value' field" },
		{ "stats", "name value\nformat one\n", "field 'value' is not a number" },
		{ "cgroups", "cgroup id kind usage limit\n/ 1 devmem 0 lots\n",
		  "cgroups line 2: field 'limit' is not a number" },
		{ "cgroups", "cgroup id\n/ 1\n", "the header has no 'limit' field" },
	};
	char dir[] = "/tmp/axtp-badXXXXXX", cmd[600];
	size_t i;

	ck_assert(mkdtemp(dir));
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[600];
		FILE *f;

		write_file(dir, "stats", stats1);
		write_file(dir, "clients", hdr);
		write_file(dir, "cgroups", "cgroup id kind usage limit peak failcnt\n");
		snprintf(path, sizeof(path), "%s/%s", dir, cases[i].file);
		f = fopen(path, "w");
		ck_assert(f);
		/* the texts may hold a NUL: write up to the second one */
		fwrite(cases[i].text, 1, strlen(cases[i].text) +
		       (strstr(cases[i].what, "not text") ? 1 + strlen(cases[i].text +
			strlen(cases[i].text) + 1) : 0), f);
		ck_assert(!fclose(f));
		expect_fail(dir, cases[i].what);
	}
	/* random bytes in every file: an error, never a crash */
	srand(1);
	for (i = 0; i < 50; i++) {
		static const char *const names[] = { "stats", "clients", "cgroups" };
		struct top_snapshot s = { 0 };
		char buf[300], err[512];
		size_t k, n = (size_t)rand() % sizeof(buf);
		FILE *f;
		char path[600];

		write_file(dir, "stats", stats1);
		write_file(dir, "clients", hdr);
		write_file(dir, "cgroups", "cgroup id kind usage limit peak failcnt\n");
		for (k = 0; k < n; k++)
			buf[k] = (char)(rand() % 4 ? " 0123456789\n\\abc"[rand() % 16] : rand());
		snprintf(path, sizeof(path), "%s/%s", dir, names[i % 3]);
		f = fopen(path, "w");
		ck_assert(f);
		fwrite(buf, 1, n, f);
		ck_assert(!fclose(f));
		if (!top_proc_read(dir, &s, err, sizeof(err)))
			top_snapshot_free(&s);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("axon-top-proc");
	TCase *tc = tcase_create("proc");
	SRunner *sr;
	int failed;

	setup_paths();
	if (access(top_bin, X_OK)) {
		fprintf(stderr, "no %s (make all)\n", top_bin);
		return 1;
	}
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, basic_json);
	tcase_add_test(tc, basic_text);
	tcase_add_test(tc, empty_clients);
	tcase_add_test(tc, cgroup_filter);
	tcase_add_test(tc, extra_fields);
	tcase_add_test(tc, no_cgroups_file);
	tcase_add_test(tc, unescape);
	tcase_add_test(tc, unwrap_and_rates);
	tcase_add_test(tc, bad_fixtures);
	tcase_add_test(tc, bad_generated);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
