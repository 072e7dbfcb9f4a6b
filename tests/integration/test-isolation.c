// SPDX-License-Identifier: MIT
/*
 * integration-isolation: --isolation=process (axond/supervisor.c), with
 * the sim made to fail the way NVIDIA's driver does (--sim-fault=process:
 * a device fault poisons the whole daemon process).
 *
 *   contained   drv-fault through the supervisor: the asserting and the
 *               poking clients get their errors, sticky, and the good
 *               client, served by another worker, gets every round right
 *               and ends well. Then vecadd still runs.
 *   control     the same program through an axond with one process for
 *               every client (--isolation=context) and the same sim: the
 *               good client is ended with the others, so drv-fault fails:
 *               what "contained" shows is the supervisor's doing.
 *   workers     two clients at once are served by two worker processes
 *               (server_pid), neither the supervisor; ids are distinct;
 *               SIGKILL of one worker ends its client only: the other
 *               goes on making progress and a new client is served. The
 *               device's busy time is the workers' summed: it grew while
 *               both ran and does not fall when a worker is gone.
 */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char *const process_args[] = {
	"--isolation=process", "--sim-fault=process", "--context-pool=2", NULL
};

/* Whether axond's log has a line containing text. */
static bool log_has(const char *text)
{
	char line[512];
	bool found = false;
	FILE *f = fopen(h_daemon.log, "r");

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	fclose(f);
	return found;
}

START_TEST(test_contained)
{
	int i;

	ck_assert_int_eq(h_run_bin(H_MS(120000), "drv-fault", h_kernel_path("cubin"), NULL), 0);
	/* The faulting clients' workers are ended at once, not after a
	 * quiet moment: the driver would not free their memory before. */
	for (i = 0; i < 100 && !log_has("hit a device fault; ending it now"); i++)
		usleep(50000);
	ck_assert_msg(log_has("hit a device fault; ending it now"),
		      "no faulting client's worker was ended at once");
	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", "--quiet", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

START_TEST(test_control)
{
	static const char *const context_args[] = {
		"--isolation=context", "--sim-fault=process", NULL
	};
	struct h_daemon other = { 0 }, saved = h_daemon;
	int rc;

	ck_assert_int_eq(h_daemon_start(&other, "4G", context_args), 0);
	rc = h_run_bin(H_MS(120000), "drv-fault", h_kernel_path("cubin"), NULL);
	ck_assert_msg(rc != 0, "drv-fault passed with every client in one process");
	ck_assert_int_eq(h_daemon_stop(&other, false), 0);
	/* h_daemon_start exported the other's address: back to ours. */
	setenv("AXON_ADDR", saved.addr, 1);
}
END_TEST

struct two { pid_t a, b; };

static bool both_listed(const struct json *doc, void *arg)
{
	struct two *t = arg;

	return h_stats_client(doc, t->a) && h_stats_client(doc, t->b);
}

static uint64_t device_busy(void)
{
	struct json *doc = h_stats(&h_daemon);
	uint64_t v;

	ck_assert_ptr_nonnull(doc);
	v = json_u64(json_get(json_at(json_get(doc, "devices"), 0), "busy_ns"), UINT64_MAX);
	json_free(doc);
	ck_assert_uint_ne(v, UINT64_MAX);
	return v;
}

static uint64_t client_field(pid_t pid, const char *path)
{
	struct json *doc = h_stats(&h_daemon);
	const struct json *c;
	uint64_t v;

	ck_assert_ptr_nonnull(doc);
	c = h_stats_client(doc, pid);
	v = c ? h_client_u64(c, path) : UINT64_MAX;
	json_free(doc);
	return v;
}

START_TEST(test_workers)
{
	struct two t;
	uint64_t wa, wb, ida, idb, ops0, ops1, busy0;
	int fa, fb, status;

	t.a = h_spawn_bin(&fa, "busy", NULL);
	t.b = h_spawn_bin(&fb, "busy", NULL);
	ck_assert(t.a > 0 && t.b > 0);
	ck_assert_int_eq(h_wait_line(fa, "busy: running", H_MS(30000)), 0);
	ck_assert_int_eq(h_wait_line(fb, "busy: running", H_MS(30000)), 0);
	ck_assert_int_eq(h_wait_stats(&h_daemon, both_listed, &t, H_MS(10000),
				      "both clients listed"), 0);
	wa = client_field(t.a, "server_pid");
	wb = client_field(t.b, "server_pid");
	ida = client_field(t.a, "id");
	idb = client_field(t.b, "id");
	ck_assert_uint_ne(wa, UINT64_MAX);
	ck_assert_uint_ne(wa, wb);
	ck_assert_uint_ne(wa, (uint64_t)h_daemon.pid);
	ck_assert_uint_ne(wb, (uint64_t)h_daemon.pid);
	ck_assert_uint_ne(ida, idb);

	busy0 = device_busy();
	ck_assert_uint_gt(busy0, 0);
	/* A's worker dies as a fault would end it: A is ended, B is not. */
	ck_assert_int_eq(kill((pid_t)wa, SIGKILL), 0);
	ck_assert_int_ne(h_wait_child(t.a, H_MS(30000), "busy A"), 0);
	ops0 = client_field(t.b, "crossings");
	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", "--quiet", NULL), 0);
	usleep(200000);
	ops1 = client_field(t.b, "crossings");
	ck_assert_uint_ne(ops0, UINT64_MAX);
	ck_assert_msg(ops1 > ops0, "client B made no progress after A's worker died "
		      "(%llu then %llu)", (unsigned long long)ops0, (unsigned long long)ops1);
	ck_assert_int_eq(waitpid(t.b, &status, WNOHANG), 0);	/* still running */
	ck_assert_uint_ge(device_busy(), busy0);
	kill(t.b, SIGKILL);
	h_wait_child(t.b, H_MS(10000), "busy B");
	close(fa);
	close(fb);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

static uint64_t daemon_u64(const struct json *doc, const char *key)
{
	return json_u64(json_get(json_get(doc, "daemon"), key), UINT64_MAX);
}

/* The pool is full and no worker whose client has gone is still there. */
static bool pool_settled(const struct json *doc, void *arg)
{
	(void)arg;
	return daemon_u64(doc, "workers_target") != UINT64_MAX &&
	       daemon_u64(doc, "workers_ready") >= daemon_u64(doc, "workers_target") &&
	       daemon_u64(doc, "workers_starting") == 0 &&
	       daemon_u64(doc, "workers_ending") == 0;
}

/* How many processes the daemon has started that are still there. */
static unsigned int daemon_children(void)
{
	unsigned int n = 0;
	char path[64];
	DIR *tasks;
	struct dirent *t;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)h_daemon.pid);
	tasks = opendir(path);
	ck_assert_ptr_nonnull(tasks);
	while ((t = readdir(tasks))) {
		char cpath[384];
		FILE *f;
		int pid;

		if (t->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "%s/%s/children", path, t->d_name);
		f = fopen(cpath, "r");
		if (!f)
			continue;
		while (fscanf(f, "%d", &pid) == 1)
			n++;
		fclose(f);
	}
	closedir(tasks);
	return n;
}

/* The pool reports its target (--context-pool=2); after clients have
 * taken workers and gone, the pool is full again and the workers that
 * served them have ended (they wait for a quiet moment first,
 * supervisor.c's end_idle): the daemon's only processes are the ready
 * ones. */
START_TEST(test_pool_target)
{
	struct json *doc;
	int i;

	ck_assert_int_eq(h_wait_stats(&h_daemon, pool_settled, NULL, H_MS(30000),
				      "the pool full"), 0);
	doc = h_stats(&h_daemon);
	ck_assert_ptr_nonnull(doc);
	ck_assert_uint_eq(daemon_u64(doc, "workers_target"), 2);
	ck_assert_uint_eq(daemon_u64(doc, "workers_ready"), 2);
	json_free(doc);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", "--quiet", NULL), 0);
	ck_assert_int_eq(h_wait_stats(&h_daemon, pool_settled, NULL, H_MS(30000),
				      "the pool full again, no worker ending"), 0);
	for (i = 0; i < 100 && daemon_children() != 2; i++)
		usleep(50000);
	ck_assert_uint_eq(daemon_children(), 2);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_pool_target);
	tcase_add_test(tc, test_contained);
	tcase_add_test(tc, test_control);
	tcase_add_test(tc, test_workers);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-isolation", "4G", process_args, add_tests, 300);
}
