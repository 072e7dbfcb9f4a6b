// SPDX-License-Identifier: MIT
/*
 * harness.c - private axond per test, stats, child processes, raw rings.
 * See harness.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <check.h>
#include <cuda.h>

#include "harness.h"

struct h_daemon h_daemon;

static char build_dir[PATH_MAX];

/* ---- reporting ---------------------------------------------------------- */

int h_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "harness: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

void h_note(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "harness: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void h_skip(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	/* The last line on stderr is the reason tests/run-tests.sh shows. */
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(H_SKIP);
}

/* ---- paths -------------------------------------------------------------- */

void h_init(int argc, char **argv)
{
	const char *b = getenv("AXON_BUILD");

	(void)argc;
	(void)argv;
	if (b && *b) {
		snprintf(build_dir, sizeof(build_dir), "%s", b);
	} else {
		/* $(BUILD)/tests/<name>: the build dir is two levels up. */
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		char *slash;
		int i;

		if (n <= 0) {
			fprintf(stderr, "harness: AXON_BUILD unset and /proc/self/exe unreadable\n");
			exit(H_FAIL);
		}
		exe[n] = 0;
		for (i = 0; i < 2; i++) {
			slash = strrchr(exe, '/');
			if (slash)
				*slash = 0;
		}
		snprintf(build_dir, sizeof(build_dir), "%s", exe);
		setenv("AXON_BUILD", build_dir, 1);
	}
	/* Line-buffered output interleaves sensibly with children's. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A child we forget about must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
}

const char *h_build(void)
{
	return build_dir;
}

const char *h_path(const char *rel)
{
	static char bufs[8][PATH_MAX];
	static unsigned int next;
	char *b = bufs[next++ % 8];

	if (snprintf(b, PATH_MAX, "%s/%s", build_dir, rel) >= PATH_MAX) {
		h_fail("path too long: %s/%s", build_dir, rel);
		exit(H_FAIL);
	}
	return b;
}

const char *h_bin(const char *name)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "tests/bin/%s", name);
	return h_path(rel);
}

const char *h_kernel_path(const char *ext)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "tests/data/kernels.%s", ext);
	return h_path(rel);
}

void h_require_file(const char *path)
{
	if (access(path, R_OK))
		h_skip("%s is missing (built from tests/sim-kernels/kernels.cu with nvcc)",
		       path);
}

/* ---- time --------------------------------------------------------------- */

uint64_t h_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void h_poll_pause(void)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	nanosleep(&ts, NULL);
}

/* ---- the daemon --------------------------------------------------------- */

void h_daemon_print_log(const struct h_daemon *d)
{
	char line[1024];
	FILE *f = fopen(d->log, "r");

	fflush(stdout);
	if (!f) {
		fprintf(stderr, "harness: (no axond log at %s)\n", d->log);
		return;
	}
	fprintf(stderr, "---- axond log (%s) ----\n", d->log);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fprintf(stderr, "---- end of axond log ----\n");
	fclose(f);
}

bool h_daemon_running(struct h_daemon *d)
{
	int st;

	if (!d->pid)
		return false;
	if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
		d->exit_status = st;
		d->pid = 0;
		return false;
	}
	return true;
}

static void describe_status(int st, char *buf, size_t len)
{
	if (WIFEXITED(st))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "wait status 0x%x", st);
}

int h_daemon_start(struct h_daemon *d, const char *sim_mem, const char *const *extra)
{
	const char *tmp = getenv("TMPDIR");
	char memarg[64], axond[PATH_MAX], kernels[PATH_MAX + 16];
	char *argv[32];
	int argc = 0, i;
	uint64_t deadline;
	pid_t parent = getpid();

	memset(d, 0, sizeof(*d));
	if (!tmp || !*tmp || strlen(tmp) > 60)
		tmp = "/tmp";	/* sun_path is 108 bytes */
	if (snprintf(d->dir, sizeof(d->dir), "%s/axon-test.XXXXXX", tmp) >= 72)
		return h_fail("TMPDIR too long");
	if (!mkdtemp(d->dir))
		return h_fail("mkdtemp %s: %s", d->dir, strerror(errno));
	snprintf(d->sock, sizeof(d->sock), "%s/axond.sock", d->dir);
	snprintf(d->addr, sizeof(d->addr), "unix:%s", d->sock);
	snprintf(d->log, sizeof(d->log), "%s/axond.log", d->dir);
	snprintf(axond, sizeof(axond), "%s", h_path("bin/axond"));
	snprintf(memarg, sizeof(memarg), "--sim-mem=%s", sim_mem ? sim_mem : "4G");
	/* The test kernels (axond/sim/kernels-abi.h): launches need them. */
	snprintf(kernels, sizeof(kernels), "--sim-kernels=%s",
		 h_path("lib/axon-sim-kernels.so"));
	if (access(axond, X_OK))
		return h_fail("%s: %s (build it first)", axond, strerror(errno));

	argv[argc++] = axond;
	argv[argc++] = "--backend=sim";
	argv[argc++] = "--listen";
	argv[argc++] = d->addr;
	argv[argc++] = memarg;
	argv[argc++] = kernels;
	for (i = 0; extra && extra[i] && argc < 31; i++)
		argv[argc++] = (char *)extra[i];
	argv[argc] = NULL;

	d->pid = fork();
	if (d->pid < 0) {
		d->pid = 0;
		return h_fail("fork: %s", strerror(errno));
	}
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		/* Dies with the test rather than outliving a timeout. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		if (fd < 0 || null < 0)
			_exit(127);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		/* The daemon listens where we say, not where AXON_ADDR says. */
		unsetenv("AXON_ADDR");
		execv(axond, argv);
		fprintf(stderr, "exec %s: %s\n", axond, strerror(errno));
		_exit(127);
	}

	/* Ready when it answers a stats request. */
	deadline = h_now_ms() + (uint64_t)H_MS(10000);
	for (;;) {
		char err[256];
		char *json = NULL;

		if (!h_daemon_running(d)) {
			char how[96];

			describe_status(d->exit_status, how, sizeof(how));
			h_fail("axond exited during start-up (%s)", how);
			h_daemon_print_log(d);
			return -1;
		}
		if (h_read_stats(d, &json, err, sizeof(err), H_MS(2000)) == 0) {
			free(json);
			break;
		}
		if (h_now_ms() > deadline) {
			h_fail("axond did not answer on %s within %d ms (last: %s)",
			       d->addr, H_MS(10000), err);
			h_daemon_stop(d, true);
			return -1;
		}
		h_poll_pause();
	}
	setenv("AXON_ADDR", d->addr, 1);
	return 0;
}

static void remove_dir(const struct h_daemon *d)
{
	char lock[sizeof(d->sock) + 8];

	unlink(d->log);
	unlink(d->sock);
	snprintf(lock, sizeof(lock), "%s.lock", d->sock);	/* axond/addrlock.c */
	unlink(lock);
	if (rmdir(d->dir))
		h_note("left %s in place: %s", d->dir, strerror(errno));
}

int h_daemon_stop(struct h_daemon *d, bool print_log)
{
	const int limit = H_MS(15000);
	uint64_t deadline;
	char how[96];
	int ret = 0, st = 0;

	if (!d->pid && !d->dir[0])
		return 0;
	if (d->pid) {
		kill(d->pid, SIGTERM);
		deadline = h_now_ms() + (uint64_t)limit;
		for (;;) {
			pid_t w = waitpid(d->pid, &st, WNOHANG);

			if (w == d->pid)
				break;
			if (w < 0) {
				ret = h_fail("waitpid axond: %s", strerror(errno));
				st = 0;
				break;
			}
			if (h_now_ms() > deadline) {
				ret = h_fail("axond did not exit within %d ms of SIGTERM; "
					     "sending SIGABRT", limit);
				kill(d->pid, SIGABRT);
				waitpid(d->pid, &st, 0);
				break;
			}
			h_poll_pause();
		}
		d->pid = 0;
		d->exit_status = st;
	} else {
		st = d->exit_status;
		describe_status(st, how, sizeof(how));
		ret = h_fail("axond was no longer running at the end of the test (%s)", how);
	}
	if (!ret && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
		describe_status(st, how, sizeof(how));
		ret = h_fail("axond did not exit cleanly on SIGTERM: %s", how);
	}
	if (ret || print_log)
		h_daemon_print_log(d);
	if (!ret && !getenv("AXON_KEEP_LOGS"))
		remove_dir(d);
	else
		h_note("axond's files are in %s", d->dir);
	d->dir[0] = 0;
	return ret;
}

int h_finish(bool failed)
{
	int ret = h_daemon_stop(&h_daemon, failed);

	if (failed || ret) {
		fprintf(stderr, "FAIL\n");
		return H_FAIL;
	}
	return H_PASS;
}

double h_test_timeout(int seconds)
{
	const char *env = getenv("AXON_TEST_TIMEOUT");
	double t = (double)seconds * H_SLOW;
	double cap = (env && atoi(env) > 60 ? atoi(env) : 300) - 30;

	/* A hung test must time out inside Check (which names it, and
	 * h_finish() then prints the daemon's log), not in run-tests.sh. */
	return t < cap ? t : cap;
}

int h_check_main(const char *name, const char *sim_mem, const char *const *extra,
		 void (*add)(struct TCase *tc), int timeout_s)
{
	Suite *s = suite_create(name);
	TCase *tc = tcase_create(name);
	SRunner *sr;
	int failed;

	if (h_daemon_start(&h_daemon, sim_mem, extra))
		return H_FAIL;
	tcase_set_timeout(tc, h_test_timeout(timeout_s));
	add(tc);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return h_finish(failed != 0);
}

/* ---- stats ---------------------------------------------------------------- */

/*
 * The stats exchange by hand, with timeouts on every step, so that a
 * wedged daemon fails a test instead of hanging it (libaxon's
 * axon_read_stats() waits forever; axonctl exercises that one).
 */
int h_read_stats(const struct h_daemon *d, char **json, char *err, size_t errlen,
		 int timeout_ms)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_ms / 1000,
			      .tv_usec = (timeout_ms % 1000) * 1000 };
	struct axon_hello h = {
		.magic = AXON_MAGIC, .abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR, .kind = AXON_HELLO_STATS,
	};
	struct axon_welcome w;
	size_t len = 0, cap = 1 << 16;
	char *buf = NULL;
	ssize_t n;
	int fd, ret = -EIO;

	*json = NULL;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", d->sock);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = -errno;
		snprintf(err, errlen, "connect %s: %s", d->sock, strerror(errno));
		goto out;
	}
	if (send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
		snprintf(err, errlen, "sending the stats hello: %s", strerror(errno));
		goto out;
	}
	n = recv(fd, &w, sizeof(w), 0);
	if (n != (ssize_t)sizeof(w) || w.magic != AXON_MAGIC || w.status) {
		w.message[sizeof(w.message) - 1] = 0;
		snprintf(err, errlen, "stats welcome: %zd bytes, status %d (%s)%s", n,
			 n == (ssize_t)sizeof(w) ? w.status : 0,
			 n == (ssize_t)sizeof(w) ? w.message : "",
			 n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ?
			 " -- no answer in time" : "");
		goto out;
	}
	for (;;) {
		if (!buf || cap - len < (1 << 16) + 1) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				snprintf(err, errlen, "out of memory");
				ret = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		n = recv(fd, buf + len, 1 << 16, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "reading the stats document: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	*json = buf;
	buf = NULL;
	ret = 0;
out:
	free(buf);
	close(fd);
	return ret;
}

struct json *h_stats_text(const struct h_daemon *d, char **text)
{
	char err[256];
	char *doc = NULL;
	struct json *j;
	int ret;

	*text = NULL;
	ret = h_read_stats(d, &doc, err, sizeof(err), H_MS(10000));
	if (ret) {
		h_fail("stats from %s: %s (%s)", d->addr, err, strerror(-ret));
		return NULL;
	}
	j = json_parse(doc, err, sizeof(err));
	if (!j) {
		h_fail("stats document does not parse: %s\n%s", err, doc);
		free(doc);
		return NULL;
	}
	*text = doc;
	return j;
}

struct json *h_stats(const struct h_daemon *d)
{
	char *text;
	struct json *j = h_stats_text(d, &text);

	free(text);
	return j;
}

void h_stats_print(const struct h_daemon *d)
{
	char err[256];
	char *doc = NULL;

	if (h_read_stats(d, &doc, err, sizeof(err), H_MS(10000))) {
		h_note("(no stats: %s)", err);
		return;
	}
	fflush(stdout);
	fprintf(stderr, "---- axond stats ----\n%s", doc);
	free(doc);
}

int h_stats_nclients(const struct json *doc)
{
	const struct json *n = json_path(doc, "daemon.clients");
	const struct json *arr = json_get(doc, "clients");

	if (!n || !arr || arr->type != JSON_ARRAY)
		return -1;
	if (json_u64(n, UINT64_MAX) != json_len(arr))
		return -1;
	return (int)json_len(arr);
}

const struct json *h_stats_client(const struct json *doc, pid_t pid)
{
	const struct json *c;

	for (c = json_get(doc, "clients") ? json_get(doc, "clients")->child : NULL;
	     c; c = c->next)
		if (json_i64(json_get(c, "pid"), -1) == (int64_t)pid)
			return c;
	return NULL;
}

const struct json *h_stats_client_id(const struct json *doc, uint64_t id)
{
	const struct json *c;

	for (c = json_get(doc, "clients") ? json_get(doc, "clients")->child : NULL;
	     c; c = c->next)
		if (json_u64(json_get(c, "id"), 0) == id)
			return c;
	return NULL;
}

uint64_t h_client_u64(const struct json *client, const char *path)
{
	return json_u64(json_path(client, path), UINT64_MAX);
}

int h_wait_stats(const struct h_daemon *d, h_stats_pred pred, void *arg,
		 int timeout_ms, const char *what)
{
	uint64_t deadline = h_now_ms() + (uint64_t)timeout_ms;
	char *last = NULL;

	for (;;) {
		char *text = NULL;
		struct json *doc = h_stats_text(d, &text);
		bool ok = doc && pred(doc, arg);

		json_free(doc);
		free(last);
		last = text;
		if (ok) {
			free(last);
			return 0;
		}
		if (!doc || h_now_ms() > deadline)
			break;
		h_poll_pause();
	}
	h_fail("timed out after %d ms waiting for %s; last stats:\n%s", timeout_ms,
	       what, last ? last : "(none)");
	free(last);
	return -1;
}

/* A client leaves the stats at once, but its window goes back only with
 * its last reference, which an executor finishing its work may hold a
 * little longer: idle waits for that too (absent: no windows kept). */
static bool pred_idle(const struct json *doc, void *arg)
{
	(void)arg;
	return h_stats_nclients(doc) == 0 &&
	       json_u64(json_path(doc, "daemon.mem_used"), 1) == 0 &&
	       json_u64(json_path(doc, "daemon.mem_reserved"), 1) == 0 &&
	       json_u64(json_path(doc, "windows.used"), 0) == 0;
}

int h_wait_idle(const struct h_daemon *d, int timeout_ms)
{
	return h_wait_stats(d, pred_idle, NULL, timeout_ms,
			    "no clients, mem_used 0, mem_reserved 0, windows.used 0");
}

static bool pred_gone(const struct json *doc, void *arg)
{
	return !h_stats_client(doc, *(pid_t *)arg);
}

int h_wait_client_gone(const struct h_daemon *d, pid_t pid, int timeout_ms)
{
	char what[64];

	snprintf(what, sizeof(what), "client pid %d to disappear", (int)pid);
	return h_wait_stats(d, pred_gone, &pid, timeout_ms, what);
}

/* ---- children ----------------------------------------------------------- */

pid_t h_spawn(char *const argv[], int *out_fd)
{
	pid_t parent = getpid(), pid;
	int pfd[2] = { -1, -1 };

	if (out_fd && pipe2(pfd, O_CLOEXEC)) {
		h_fail("pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		h_fail("fork: %s", strerror(errno));
		if (out_fd) {
			close(pfd[0]);
			close(pfd[1]);
		}
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (out_fd)
			dup2(pfd[1], 1);
		signal(SIGPIPE, SIG_DFL);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (out_fd) {
		close(pfd[1]);
		*out_fd = pfd[0];
	}
	return pid;
}

int h_wait_child(pid_t pid, int timeout_ms, const char *what)
{
	uint64_t deadline = h_now_ms() + (uint64_t)timeout_ms;
	int st;

	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0)
			return h_fail("waitpid %s (%d): %s", what, (int)pid, strerror(errno));
		if (h_now_ms() > deadline) {
			h_fail("%s (pid %d) still running after %d ms: killed", what,
			       (int)pid, timeout_ms);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		h_poll_pause();
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st)) {
		h_note("%s (pid %d) was killed by signal %d (%s)", what, (int)pid,
		       WTERMSIG(st), strsignal(WTERMSIG(st)));
		return 128 + WTERMSIG(st);
	}
	return h_fail("%s (pid %d): wait status 0x%x", what, (int)pid, st);
}

int h_run(char *const argv[], int timeout_ms)
{
	char what[PATH_MAX + 256];
	size_t n = 0;
	pid_t pid;
	int i;

	what[0] = 0;
	for (i = 0; argv[i] && n < sizeof(what) - 1; i++)
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%s%s", i ? " " : "",
				      i ? argv[i] : strrchr(argv[0], '/') ?
				      strrchr(argv[0], '/') + 1 : argv[0]);
	h_note("running %s", what);
	pid = h_spawn(argv, NULL);
	if (pid < 0)
		return -1;
	return h_wait_child(pid, timeout_ms, what);
}

#define H_MAX_ARGS 32

static void collect_args(char **argv, const char *prog, va_list ap)
{
	const char *a;
	int i = 0;

	argv[i++] = (char *)h_bin(prog);
	while ((a = va_arg(ap, const char *)) && i < H_MAX_ARGS - 1)
		argv[i++] = (char *)a;
	argv[i] = NULL;
}

int h_run_bin(int timeout_ms, const char *prog, ...)
{
	char *argv[H_MAX_ARGS];
	va_list ap;

	va_start(ap, prog);
	collect_args(argv, prog, ap);
	va_end(ap);
	return h_run(argv, timeout_ms);
}

pid_t h_spawn_bin(int *out_fd, const char *prog, ...)
{
	char *argv[H_MAX_ARGS];
	va_list ap;

	va_start(ap, prog);
	collect_args(argv, prog, ap);
	va_end(ap);
	return h_spawn(argv, out_fd);
}

/* One byte at a time: nothing past the matching line is consumed. */
static int read_line(int fd, char *buf, size_t len, uint64_t deadline)
{
	size_t n = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = h_now_ms();
		char c;
		ssize_t r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)(deadline - now));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -ETIMEDOUT;
		r = read(fd, &c, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			buf[n] = 0;
			return n ? (int)n : -EPIPE;
		}
		if (c == '\n') {
			buf[n] = 0;
			return (int)n;
		}
		if (n < len - 1)
			buf[n++] = c;
	}
}

int h_wait_line(int fd, const char *needle, int timeout_ms)
{
	uint64_t deadline = h_now_ms() + (uint64_t)timeout_ms;
	char line[4096];

	for (;;) {
		int r = read_line(fd, line, sizeof(line), deadline);

		if (r < 0)
			return h_fail("no line with \"%s\" from the child (%s)", needle,
				      r == -ETIMEDOUT ? "timed out" : "end of output");
		printf("%s\n", line);
		if (strstr(line, needle))
			return 0;
	}
}

void h_drain(int fd, int timeout_ms)
{
	uint64_t deadline = h_now_ms() + (uint64_t)timeout_ms;
	char line[4096];

	while (read_line(fd, line, sizeof(line), deadline) >= 0)
		printf("%s\n", line);
}

/* ---- raw rings ---------------------------------------------------------- */

static _Atomic uint64_t next_user_data = 0x1000;

int h_ring_connect(struct axon_ring *r, const struct h_daemon *d)
{
	char err[256];
	unsigned int left = alarm((unsigned int)H_MS(30000) / 1000);
	int ret;

	/* axon_connect() waits for the welcome without a limit: a daemon
	 * that stopped answering ends the test (SIGALRM) instead of hanging
	 * it. Not for threads other than the main one. */
	ret = axon_connect(d->addr, NULL, r, err, sizeof(err));
	alarm(left);

	if (ret)
		return h_fail("axon_connect %s: %s (%s)", d->addr, err, strerror(-ret));
	return 0;
}

int h_ring_post(struct axon_ring *r, const struct axon_sqe *tmpl)
{
	struct axon_sqe *sqe = axon_get_sqe(r);
	int ret;

	if (!sqe)
		return -EBUSY;
	*sqe = *tmpl;
	sqe->user_data = atomic_fetch_add(&next_user_data, 1);
	ret = axon_submit(r);
	return ret < 0 ? ret : 0;
}

int h_ring_sync(struct axon_ring *r, const struct axon_sqe *tmpl,
		struct axon_cqe *out, int timeout_ms)
{
	uint64_t deadline = h_now_ms() + (uint64_t)timeout_ms;
	struct axon_sqe *sqe = axon_get_sqe(r);
	uint64_t ud;
	int ret;

	if (!sqe)
		return -EBUSY;
	*sqe = *tmpl;
	ud = atomic_fetch_add(&next_user_data, 1);
	sqe->user_data = ud;
	ret = axon_submit(r);
	if (ret < 0)
		return ret;
	for (;;) {
		const struct axon_cqe *cqe;
		uint64_t now = h_now_ms();

		if (now >= deadline)
			return -ETIMEDOUT;
		ret = axon_wait_cqe(r, &cqe, (deadline - now) * 1000000ull);
		if (ret)
			return ret;
		if (cqe->user_data == ud) {
			if (out)
				*out = *cqe;
			axon_cqe_seen(r);
			return 0;
		}
		axon_cqe_seen(r);
	}
}

int32_t h_ring_res(struct axon_ring *r, const struct axon_sqe *tmpl,
		   uint64_t *aux0, uint64_t *aux1)
{
	struct axon_cqe cqe;
	int ret = h_ring_sync(r, tmpl, &cqe, H_MS(10000));

	if (ret) {
		h_fail("op %s (%u): no completion: %s", axon_op_name(tmpl->opcode),
		       tmpl->opcode, strerror(-ret));
		return INT32_MIN;
	}
	if (aux0)
		*aux0 = cqe.aux[0];
	if (aux1)
		*aux1 = cqe.aux[1];
	return cqe.res;
}

int h_ring_ctx_create(struct axon_ring *r, uint64_t *ctx, uint64_t *stream)
{
	struct axon_sqe sqe = { 0 };
	uint64_t a0 = 0, a1 = 0;
	int32_t res;

	axon_prep_obj(&sqe, AXON_OP_CTX_CREATE, 0, 0, 0);
	res = h_ring_res(r, &sqe, &a0, &a1);
	if (res)
		return h_fail("CTX_CREATE: res %d", res);
	if (AXON_HANDLE_TYPE(a0) != AXON_HANDLE_CTX ||
	    AXON_HANDLE_TYPE(a1) != AXON_HANDLE_STREAM)
		return h_fail("CTX_CREATE returned handles %#llx, %#llx",
			      (unsigned long long)a0, (unsigned long long)a1);
	*ctx = a0;
	if (stream)
		*stream = a1;
	return 0;
}

int h_ring_map(struct axon_ring *r, uint64_t ctx, uint64_t off, uint64_t len,
	       uint64_t *addr)
{
	struct axon_sqe sqe = { 0 };
	uint64_t a = r->params.va_base + off;
	int32_t res;

	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, ctx, a, len);
	res = h_ring_res(r, &sqe, NULL, NULL);
	if (res)
		return h_fail("MEM_MAP %#llx+%llu: res %d", (unsigned long long)a,
			      (unsigned long long)len, res);
	if (addr)
		*addr = a;
	return 0;
}

int h_send_hostmem_fd(struct axon_ring *r, int fd, uint64_t cookie)
{
	struct axon_hostmem_fd m = {
		.magic = AXON_MAGIC, .kind = AXON_HOSTMEM_FD_KIND, .cookie = cookie,
	};
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(r->sock_fd, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -errno;
}

int32_t h_hostmem_register(struct axon_ring *r, int fd, uint64_t cookie, unsigned char **host,
			   size_t size, uint64_t off, uint64_t len, uint64_t flags)
{
	const uint64_t lo = r->params.va_base, hi = lo + r->params.va_size;
	unsigned int tries;
	int32_t res;

	for (tries = 0;; tries++) {
		uint64_t at = (uint64_t)(uintptr_t)*host;
		struct axon_sqe s = { 0 };
		void *p;

		if (h_send_hostmem_fd(r, fd, cookie)) {
			h_fail("sending the host-memory descriptor: %s", strerror(errno));
			return INT32_MIN;
		}
		axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, cookie, at + off, len);
		s.obj.arg2 = flags;
		s.obj.data_off = 0;
		s.obj.data_len = sizeof(struct axon_hostmem_info);
		res = h_ring_res(r, &s, NULL, NULL);
		if (res != CUDA_ERROR_ALREADY_MAPPED || tries == 16)
			return res;
		/* 2^44 + 8 GiB up, below the 47-bit top. */
		at = 0x100200000000ULL + ((uint64_t)random() << 20) % 0x3ff000000000ULL;
		if (at + size > lo && at < hi)
			continue;
		p = mmap((void *)(uintptr_t)at, size, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
		if (p == MAP_FAILED)
			continue;
		munmap(*host, size);
		*host = p;
	}
}
