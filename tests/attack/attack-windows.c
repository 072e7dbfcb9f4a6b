// SPDX-License-Identifier: MIT
/*
 * attack-windows: client device-address windows are reused, bounded and
 * never shared. Windows were handed out by a counter that never went back:
 * after some 3 550 connections to one daemon (16 GiB sim device) a new
 * client's window reached its own host mappings and cuMemcpy of host
 * buffers took them for device memory; nothing bounded the windows at all.
 *
 *   sequential  4 000 connections one after the other (more than fit below
 *               the bound with a 4 GiB device): every window ends at or
 *               below 42 TiB (AXOND_VA_END, axond/vaslot.h), and after them
 *               a shim client doing unified cuMemcpy (pinned) and vecadd
 *               still work; the daemon holds no window once idle
 *   live        64 clients connected at once have disjoint windows; after
 *               half of them leave, 32 new ones overlap no live one
 *   exhausted   a 2 TiB device (4 TiB windows: 6 fit): the 7th client at
 *               once is refused with a message naming the windows; once one
 *               of the six has gone (and its window was freed) a new client
 *               gets one, disjoint from the five left
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

#define VA_END		(42ULL << 40)	/* axond/vaslot.h AXOND_VA_END */
#define SEQUENTIAL	4000

static bool disjoint(const struct axon_ring *a, const struct axon_ring *b)
{
	uint64_t a0 = a->params.va_base, a1 = a0 + a->params.va_size;
	uint64_t b0 = b->params.va_base, b1 = b0 + b->params.va_size;

	return a1 <= b0 || b1 <= a0;
}

static uint64_t daemon_u64(const struct h_daemon *d, const char *path)
{
	struct json *doc = h_stats(d);
	uint64_t v;

	ck_assert(doc != NULL);
	v = json_u64(json_path(doc, path), UINT64_MAX);
	json_free(doc);
	return v;
}

START_TEST(sequential)
{
	struct axon_ring r;
	uint64_t highest = 0;
	unsigned int i;

	for (i = 0; i < SEQUENTIAL; i++) {
		uint64_t end;

		uint64_t base;

		ck_assert_msg(h_ring_connect(&r, &h_daemon) == 0, "connection %u refused", i);
		base = r.params.va_base;
		end = base + r.params.va_size;
		if (end > highest)
			highest = end;
		axon_close(&r);
		ck_assert_msg(end <= VA_END,
			      "connection %u: window [%#llx, %#llx) beyond %#llx", i,
			      (unsigned long long)base, (unsigned long long)end,
			      (unsigned long long)VA_END);
	}
	h_note("%u connections, highest window end %#llx", i, (unsigned long long)highest);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
	/* A shim client still works (unified addressing tells its host
	 * buffers from device ones by the window). */
	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", "--image", "cubin",
				   "--size", "100003", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
	ck_assert_uint_eq(daemon_u64(&h_daemon, "windows.used"), 0);
}
END_TEST

#define LIVE 64

START_TEST(live)
{
	static struct axon_ring r[LIVE + LIVE / 2];
	bool open[LIVE + LIVE / 2] = { false };
	unsigned int i, j;

	for (i = 0; i < LIVE; i++) {
		ck_assert_int_eq(h_ring_connect(&r[i], &h_daemon), 0);
		open[i] = true;
	}
	for (i = 0; i < LIVE; i += 2) {
		axon_close(&r[i]);
		open[i] = false;
	}
	for (i = LIVE; i < LIVE + LIVE / 2; i++) {
		ck_assert_int_eq(h_ring_connect(&r[i], &h_daemon), 0);
		open[i] = true;
	}
	for (i = 0; i < LIVE + LIVE / 2; i++)
		for (j = i + 1; j < LIVE + LIVE / 2; j++)
			ck_assert_msg(!open[i] || !open[j] || disjoint(&r[i], &r[j]),
				      "clients %u and %u share window %#llx", i, j,
				      (unsigned long long)r[i].params.va_base);
	for (i = 0; i < LIVE + LIVE / 2; i++)
		if (open[i])
			axon_close(&r[i]);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

#define FIT 6	/* (42 TiB - 16 TiB) / 4 TiB */

START_TEST(exhausted)
{
	static const char *const extra[] = { "--mint-credit=1M", NULL };
	struct h_daemon big = { 0 };
	struct axon_ring r[FIT + 1];
	char err[256] = "";
	unsigned int i, j;
	int ret;

	ck_assert_int_eq(h_daemon_start(&big, "2T", extra), 0);
	for (i = 0; i < FIT; i++)
		ck_assert_int_eq(h_ring_connect(&r[i], &big), 0);
	ret = axon_connect(big.addr, NULL, &r[FIT], err, sizeof(err));
	if (!ret) {
		uint64_t base = r[FIT].params.va_base, size = r[FIT].params.va_size;

		axon_close(&r[FIT]);
		ck_abort_msg("client %u got window [%#llx, %#llx) past %u that fit", FIT,
			     (unsigned long long)base, (unsigned long long)(base + size), FIT);
	}
	ck_assert_msg(strstr(err, "window"), "refused with \"%s\"", err);
	h_note("client %u refused: %s", FIT, err);
	ck_assert_uint_eq(daemon_u64(&big, "windows.used"), FIT);
	ck_assert_uint_eq(daemon_u64(&big, "windows.max"), FIT);

	/* One leaves: once it is freed its window serves a new client. */
	axon_close(&r[0]);
	for (i = 0; i < 1000 && daemon_u64(&big, "windows.used") != FIT - 1; i++)
		h_poll_pause();
	ck_assert_int_eq(h_ring_connect(&r[0], &big), 0);
	for (i = 0; i < FIT; i++)
		for (j = i + 1; j < FIT; j++)
			ck_assert_msg(disjoint(&r[i], &r[j]), "clients %u and %u share a window",
				      i, j);
	for (i = 0; i < FIT; i++)
		axon_close(&r[i]);
	ck_assert_int_eq(h_wait_idle(&big, H_MS(10000)), 0);
	ck_assert_int_eq(h_daemon_stop(&big, false), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, sequential);
	tcase_add_test(tc, live);
	tcase_add_test(tc, exhausted);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("attack-windows", "4G", NULL, add, 240);
}
