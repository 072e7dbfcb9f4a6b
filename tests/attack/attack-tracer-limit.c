// SPDX-License-Identifier: MIT
/*
 * attack-tracer-limit: tracers were unlimited (20 000 on one client, each a
 * descriptor and a buffer of the daemon). Now at most
 * --max-tracers-per-client follow one client and one uid has at most
 * --max-tracers-per-user open; past either the welcome says -EBUSY with a
 * message naming the option, the stats count the refusals, and a tracer
 * that ends gives its place back. The defaults (16 and 64) hold with no
 * option given.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>

#include "attack.h"

#define PER_CLIENT	4
#define PER_USER	6

static const char *const limit_args[] = {
	"--max-tracers-per-client=4", "--max-tracers-per-user=6", NULL
};

/* A tracer of client id on d: its socket (welcome status in *st), or -1. */
static int tracer(const struct h_daemon *d, uint64_t id, int32_t *st, char *msg, size_t len)
{
	struct axon_welcome w;
	int t = a_connect_raw(d);

	if (t < 0)
		return -1;
	*st = a_hello(t, AXON_HELLO_TRACE, id, 0, &w, H_MS(5000));
	if (msg)
		snprintf(msg, len, "%.*s", (int)sizeof(w.message), w.message);
	return t;
}

static uint64_t daemon_u64(const struct h_daemon *d, const char *path)
{
	struct json *doc = h_stats(d);
	uint64_t v;

	if (!doc)
		return UINT64_MAX;
	v = json_u64(json_path(doc, path), UINT64_MAX);
	json_free(doc);
	return v;
}

START_TEST(per_client_and_per_user)
{
	struct axon_ring a, b;
	int ta[PER_CLIENT + 1], tb[PER_USER], i;
	char msg[160];
	int32_t st;

	ck_assert_int_eq(h_ring_connect(&a, &h_daemon), 0);
	ck_assert_int_eq(h_ring_connect(&b, &h_daemon), 0);
	ck_assert_uint_eq(daemon_u64(&h_daemon, "daemon.max_tracers_per_client"), PER_CLIENT);
	ck_assert_uint_eq(daemon_u64(&h_daemon, "daemon.max_tracers_per_user"), PER_USER);
	for (i = 0; i < PER_CLIENT; i++) {
		ta[i] = tracer(&h_daemon, a.params.client_id, &st, NULL, 0);
		ck_assert_int_ge(ta[i], 0);
		ck_assert_msg(st == 0, "tracer %d of client a: status %d", i, st);
	}
	/* One more on a: the per-client limit. */
	ta[PER_CLIENT] = tracer(&h_daemon, a.params.client_id, &st, msg, sizeof(msg));
	ck_assert_msg(st == -EBUSY, "tracer %d of client a: status %d, want -EBUSY", PER_CLIENT, st);
	ck_assert_msg(strstr(msg, "--max-tracers-per-client=4"), "message: %s", msg);
	close(ta[PER_CLIENT]);
	/* Two on b: the user has six then; a seventh is refused even on b. */
	for (i = 0; i < PER_USER - PER_CLIENT; i++) {
		tb[i] = tracer(&h_daemon, b.params.client_id, &st, NULL, 0);
		ck_assert_int_ge(tb[i], 0);
		ck_assert_msg(st == 0, "tracer %d of client b: status %d", i, st);
	}
	tb[i] = tracer(&h_daemon, b.params.client_id, &st, msg, sizeof(msg));
	ck_assert_msg(st == -EBUSY, "7th tracer of the user: status %d, want -EBUSY", st);
	ck_assert_msg(strstr(msg, "--max-tracers-per-user=6"), "message: %s", msg);
	close(tb[i]);
	ck_assert_uint_eq(daemon_u64(&h_daemon, "daemon.tracers"), PER_USER);
	ck_assert_uint_eq(daemon_u64(&h_daemon, "daemon.tracers_refused_limit"), 2);
	/* A tracer that ends gives its place back (to the user, on b). */
	close(ta[0]);
	for (i = 0; i < 200; i++) {
		if (daemon_u64(&h_daemon, "daemon.tracers") == PER_USER - 1)
			break;
		h_poll_pause();
	}
	ck_assert_uint_eq(daemon_u64(&h_daemon, "daemon.tracers"), PER_USER - 1);
	tb[PER_USER - PER_CLIENT] = tracer(&h_daemon, b.params.client_id, &st, NULL, 0);
	ck_assert_msg(st == 0, "tracer after one ended: status %d", st);
	/* The client's end ends its tracers (and gives the places back). */
	axon_close(&a);
	axon_close(&b);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	ck_assert_uint_eq(daemon_u64(&h_daemon, "daemon.tracers"), 0);
	for (i = 1; i < PER_CLIENT; i++)
		close(ta[i]);
	for (i = 0; i <= PER_USER - PER_CLIENT; i++)
		close(tb[i]);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
}
END_TEST

/* No option: 16 on one client, the 17th refused. */
START_TEST(defaults)
{
	struct h_daemon other = { 0 };
	struct axon_ring r;
	int t[17], i;
	int32_t st;

	ck_assert_int_eq(h_daemon_start(&other, "1G", NULL), 0);
	ck_assert_int_eq(h_ring_connect(&r, &other), 0);
	ck_assert_uint_eq(daemon_u64(&other, "daemon.max_tracers_per_client"), 16);
	ck_assert_uint_eq(daemon_u64(&other, "daemon.max_tracers_per_user"), 64);
	for (i = 0; i < 17; i++) {
		t[i] = tracer(&other, r.params.client_id, &st, NULL, 0);
		ck_assert_int_ge(t[i], 0);
		ck_assert_msg(st == (i < 16 ? 0 : -EBUSY), "tracer %d: status %d", i, st);
	}
	for (i = 0; i < 17; i++)
		close(t[i]);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&other, H_MS(5000)), 0);
	ck_assert_int_eq(h_daemon_stop(&other, false), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, per_client_and_per_user);
	tcase_add_test(tc, defaults);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-tracer-limit", "1G", limit_args, add, 60);
}
