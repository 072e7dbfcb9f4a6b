// SPDX-License-Identifier: MIT
/*
 * integration-axonctl: $(BUILD)/bin/axonctl against a private axond.
 *
 *   stats          the table names the daemon and lists a connected raw
 *                  client (its id, pid, user and memory)
 *   stats_json     --json prints the document itself: it parses and lists
 *                  the client; --addr takes unix:PATH and a bare path
 *   daemon_status  "up", the backend, the clients
 *   down           no daemon at the address: exit 1, the address named on
 *                  stderr, "down" for daemon status
 *   usage          help, unknown commands and arguments (exit 2)
 *   mute_daemon    a socket that accepts but never answers: exit 1 after
 *                  --timeout, naming the address
 */
#include <check.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static char out[1 << 16], err[1 << 16];

static void slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = 0;
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

/* Runs axonctl with the NULL-terminated args; stdout/stderr into out/err. */
static int axonctl(const char *first, ...)
{
	char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
	char *argv[16];
	const char *a;
	va_list ap;
	int argc = 0, rc;
	pid_t pid;

	snprintf(outp, sizeof(outp), "%s/ctl.out", h_daemon.dir);
	snprintf(errp, sizeof(errp), "%s/ctl.err", h_daemon.dir);
	argv[argc++] = (char *)h_path("bin/axonctl");
	va_start(ap, first);
	for (a = first; a && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (o < 0 || e < 0)
			_exit(127);
		dup2(o, 1);
		dup2(e, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	rc = h_wait_child(pid, H_MS(10000), "axonctl");
	slurp(outp, out, sizeof(out));
	slurp(errp, err, sizeof(err));
	unlink(outp);
	unlink(errp);
	printf("$ axonctl");
	for (argc = 1; argv[argc]; argc++)
		printf(" %s", argv[argc]);
	printf("   -> exit %d\n%s%s", rc, out, err);
	return rc;
}

static struct axon_ring ring;

static void connect_client(void)
{
	uint64_t ctx;

	ck_assert_int_eq(h_ring_connect(&ring, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&ring, &ctx, NULL), 0);
	ck_assert_int_eq(h_ring_map(&ring, ctx, 0, 3 << 20, NULL), 0);
}

START_TEST(test_stats)
{
	char want[128];
	struct passwd *pw = getpwuid(getuid());

	connect_client();
	ck_assert_int_eq(axonctl("stats", NULL), 0);
	snprintf(want, sizeof(want), "axond %u.%u", AXON_ABI_MAJOR, AXON_ABI_MINOR);
	ck_assert_msg(strstr(out, want) && strstr(out, "backend sim"), "no daemon line");
	ck_assert_msg(strstr(out, "axon sim device"), "no device line");
	ck_assert_msg(strstr(out, "PID") && strstr(out, "P99"), "no table header");
	snprintf(want, sizeof(want), " %d ", (int)getpid());
	ck_assert_msg(strstr(out, want), "our pid %d is not in the table", (int)getpid());
	/* 3 MiB from a granule's start: charged two granules. */
	ck_assert_msg(strstr(out, "4.00 MiB"), "our 3 MiB mapping is not shown as 4 MiB");
	if (pw)
		ck_assert_msg(strstr(out, pw->pw_name), "user %s not shown", pw->pw_name);
	ck_assert_str_eq(err, "");
	axon_close(&ring);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	ck_assert_int_eq(axonctl("stats", NULL), 0);
	ck_assert_msg(strstr(out, "no clients"), "an idle daemon should say so");
}
END_TEST

START_TEST(test_stats_json)
{
	char e[256];
	struct json *j;

	connect_client();
	ck_assert_int_eq(axonctl("--addr", h_daemon.addr, "stats", "--json", NULL), 0);
	j = json_parse(out, e, sizeof(e));
	ck_assert_msg(j != NULL, "axonctl stats --json: %s", e);
	ck_assert_int_eq(h_stats_nclients(j), 1);
	ck_assert(h_stats_client(j, getpid()) != NULL);
	ck_assert_uint_eq(h_client_u64(h_stats_client(j, getpid()), "bytes_mapped"), 4 << 20);
	json_free(j);
	/* A bare path works as an address too. */
	ck_assert_int_eq(axonctl("--addr", h_daemon.sock, "stats", "--json", NULL), 0);
	j = json_parse(out, e, sizeof(e));
	ck_assert_msg(j != NULL, "axonctl --addr PATH stats --json: %s", e);
	json_free(j);
	axon_close(&ring);
}
END_TEST

START_TEST(test_daemon_status)
{
	char want[PATH_MAX + 32];

	connect_client();
	ck_assert_int_eq(axonctl("daemon", "status", NULL), 0);
	snprintf(want, sizeof(want), "axond at %s: up", h_daemon.addr);
	ck_assert_msg(strstr(out, want), "no \"%s\"", want);
	ck_assert_msg(strstr(out, "backend:  sim"), "no backend");
	ck_assert_msg(strstr(out, "clients:  1 connected"), "no client count");
	snprintf(want, sizeof(want), "pid:      %d", (int)h_daemon.pid);
	ck_assert_msg(strstr(out, want), "no daemon pid");
	axon_close(&ring);
}
END_TEST

START_TEST(test_down)
{
	char addr[PATH_MAX + 16];

	snprintf(addr, sizeof(addr), "unix:%s/nobody.sock", h_daemon.dir);
	ck_assert_int_eq(axonctl("--addr", addr, "stats", NULL), 1);
	ck_assert_msg(strstr(err, addr), "the error does not name %s", addr);
	ck_assert_msg(strstr(err, "not running"), "the error does not say not running");
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(axonctl("--addr", addr, "stats", "--json", NULL), 1);
	ck_assert_msg(strstr(err, addr), "the error does not name %s", addr);
	ck_assert_int_eq(axonctl("--addr", addr, "daemon", "status", NULL), 1);
	ck_assert_msg(strstr(out, ": down"), "daemon status does not say down");
	ck_assert_msg(strstr(err, addr), "the error does not name %s", addr);
	/* Through $AXON_ADDR as well. */
	setenv("AXON_ADDR", addr, 1);
	ck_assert_int_eq(axonctl("daemon", "status", NULL), 1);
	ck_assert_msg(strstr(err, addr), "the error does not name %s", addr);
	setenv("AXON_ADDR", h_daemon.addr, 1);
	ck_assert_int_eq(axonctl("--addr", "tcp:localhost:1", "stats", NULL), 1);
	ck_assert_msg(strstr(err, "tcp:localhost:1"), "bad address not named");
	ck_assert_int_eq(axonctl("--timeout", "soon", "stats", NULL), 2);
}
END_TEST

/* Something listens but never answers: axonctl gives up after --timeout. */
START_TEST(test_mute_daemon)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char addr[PATH_MAX + 16];
	uint64_t t;
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/mute.sock", h_daemon.dir);
	snprintf(addr, sizeof(addr), "unix:%s", sun.sun_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert(fd >= 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	t = h_now_ms();
	ck_assert_int_eq(axonctl("--addr", addr, "--timeout", "1", "stats", NULL), 1);
	ck_assert_msg(h_now_ms() - t < 5000, "took %llu ms",
		      (unsigned long long)(h_now_ms() - t));
	ck_assert_msg(strstr(err, "did not answer within 1 s") && strstr(err, addr),
		      "no timeout message naming the address");
	close(fd);
	unlink(sun.sun_path);
}
END_TEST

START_TEST(test_usage)
{
	ck_assert_int_eq(axonctl("help", NULL), 0);
	ck_assert_msg(strstr(out, "daemon status") && strstr(out, "stats"), "help");
	ck_assert_int_eq(axonctl("--help", NULL), 0);
	ck_assert_int_eq(axonctl(NULL), 2);
	ck_assert_int_eq(axonctl("frobnicate", NULL), 2);
	ck_assert_msg(strstr(err, "frobnicate"), "unknown command not named");
	ck_assert_int_eq(axonctl("daemon", NULL), 2);
	ck_assert_msg(strstr(err, "daemon status"), "the subcommands are not listed");
	ck_assert_int_eq(axonctl("daemon", "explode", NULL), 2);
	ck_assert_int_eq(axonctl("stats", "--yaml", NULL), 2);
	ck_assert_int_eq(axonctl("daemon", "status", "now", NULL), 2);
	ck_assert_int_eq(axonctl("--bogus", "stats", NULL), 2);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_stats);
	tcase_add_test(tc, test_stats_json);
	tcase_add_test(tc, test_daemon_status);
	tcase_add_test(tc, test_down);
	tcase_add_test(tc, test_usage);
	tcase_add_test(tc, test_mute_daemon);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-axonctl", "1G", NULL, add_tests, 60);
}
