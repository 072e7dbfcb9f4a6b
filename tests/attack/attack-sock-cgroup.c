// SPDX-License-Identifier: MIT
/*
 * attack-sock-cgroup: without the kernel module, socket clients are held to
 * per-cgroup limits by the daemon (advisory; issue 14). They were charged
 * only against --max-client-mem and --max-user-mem, so a cgroup's limit
 * meant nothing to a process that reached axond over its socket.
 *
 * Needs root and a writable cgroup v2 hierarchy (it makes its own cgroups
 * under the mount, moves itself between them and back): it skips without.
 * The daemon has no minting credit, so every allocation asks.
 *
 *   limited   a client in a cgroup with a limit fills it and is refused
 *             one granule past it (failcnt counts it); the usage goes when
 *             the client goes
 *   child     a client in a child cgroup is held to its parent's limit,
 *             and its usage shows in both
 *   move      a client that moves to another cgroup charges what it takes
 *             next there (memcg's rule), read again within 100 ms
 *   delegate  setting a limit needs an administrator or write access to
 *             the cgroup's parent: uid 65534 is refused on a cgroup it
 *             does not manage and allowed below one it owns; anyone reads
 *   axonctl   axonctl limit set and limit get reach the daemon with no
 *             module loaded
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define MIB	(1ULL << 20)
#define GRAN	(2 * MIB)

static char mnt[1024], base[2048], home[1024];

/* Where cgroup v2 is mounted, or "" (mountinfo). */
static void find_mount(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	mnt[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");

		if (sep && !strncmp(sep + 3, "cgroup2 ", 8) &&
		    sscanf(line, "%*s %*s %*s %*s %1023s", mnt) == 1)
			break;
		mnt[0] = 0;
	}
	fclose(f);
}

/* This process's cgroup v2 path ("0::" line). */
static void own_cgroup(char *out, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			if (strlen(line + 3) < len)
				strcpy(out, line + 3);
		}
	fclose(f);
}

/* Moves this process into the cgroup at path (relative to the mount). */
static void move_to(const char *rel)
{
	char p[PATH_MAX + 32];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s/cgroup.procs", mnt, rel);
	f = fopen(p, "we");
	ck_assert_msg(f != NULL, "%s: %s", p, strerror(errno));
	fprintf(f, "%d\n", (int)getpid());
	ck_assert_int_eq(fclose(f), 0);
}

static int cg_fd(const char *rel)
{
	char p[PATH_MAX + 8];
	int fd;

	snprintf(p, sizeof(p), "%s%s", mnt, rel);
	fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_msg(fd >= 0, "%s: %s", p, strerror(errno));
	return fd;
}

static int limit_of(const char *rel, int set, uint64_t limit, struct axon_dlimit *out)
{
	char err[256];
	int fd = cg_fd(rel), ret;

	ret = axon_daemon_limit(h_daemon.addr, fd, set, limit, out, err, sizeof(err));
	close(fd);
	return ret;
}

static uint64_t usage_of(const char *rel)
{
	struct axon_dlimit l;

	ck_assert_int_eq(limit_of(rel, 0, 0, &l), 0);
	return l.usage;
}

static char rel_a[128], rel_b[128], rel_c[128], rel_base[64];

static void setup(void)
{
	char p[PATH_MAX + 16];

	find_mount();
	if (geteuid() != 0)
		h_skip("needs root (it makes cgroups and moves itself between them)");
	if (!mnt[0])
		h_skip("no cgroup v2 hierarchy mounted");
	own_cgroup(home, sizeof(home));
	snprintf(rel_base, sizeof(rel_base), "/axon-sockcg-%d", (int)getpid());
	snprintf(rel_a, sizeof(rel_a), "%s/a", rel_base);
	snprintf(rel_b, sizeof(rel_b), "%s/a/b", rel_base);
	snprintf(rel_c, sizeof(rel_c), "%s/c", rel_base);
	snprintf(base, sizeof(base), "%s%s", mnt, rel_base);
	if (mkdir(base, 0755))
		h_skip("cannot make a cgroup under %s: %s", mnt, strerror(errno));
	snprintf(p, sizeof(p), "%s%s", mnt, rel_a);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s%s", mnt, rel_b);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s%s", mnt, rel_c);
	ck_assert_int_eq(mkdir(p, 0755), 0);
}

static void teardown(void)
{
	char p[PATH_MAX + 16];

	if (!base[0])
		return;
	move_to(home[0] && strcmp(home, "/") ? home : "");
	snprintf(p, sizeof(p), "%s%s", mnt, rel_b);
	rmdir(p);
	snprintf(p, sizeof(p), "%s%s", mnt, rel_a);
	rmdir(p);
	snprintf(p, sizeof(p), "%s%s", mnt, rel_c);
	rmdir(p);
	rmdir(base);
}

static void open_client(struct axon_ring *r, uint64_t *ctx)
{
	uint64_t stream;

	ck_assert_int_eq(h_ring_connect(r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(r, ctx, &stream), 0);
	ck_assert_uint_eq(r->params.mint_credit, 0);
}

START_TEST(limited_child_move)
{
	struct axon_dlimit l;
	struct axon_ring r;
	uint64_t ctx, i;

	setup();
	ck_assert_int_eq(limit_of(rel_a, 1, 8 * MIB, &l), 0);
	ck_assert_uint_eq(l.limit, 8 * MIB);
	ck_assert_int_eq(limit_of(rel_c, 1, 2 * MIB, &l), 0);
	/* child: in a/b, held to a's limit. */
	move_to(rel_b);
	open_client(&r, &ctx);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(h_ring_map(&r, ctx, i * GRAN, 256, NULL), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 4 * GRAN, 256, NULL), -1);
	ck_assert_uint_eq(usage_of(rel_a), 8 * MIB);
	ck_assert_uint_eq(usage_of(rel_b), 8 * MIB);
	ck_assert_int_eq(limit_of(rel_a, 0, 0, &l), 0);
	ck_assert_uint_eq(l.failcnt, 1);
	ck_assert_uint_eq(l.peak, 8 * MIB);
	/* move: to c, where its next granule goes; c's own limit holds it. */
	move_to(rel_c);
	usleep(150 * 1000);
	ck_assert_int_eq(h_ring_map(&r, ctx, 10 * GRAN, 256, NULL), 0);
	ck_assert_uint_eq(usage_of(rel_c), 2 * MIB);
	ck_assert_uint_eq(usage_of(rel_a), 8 * MIB);
	ck_assert_int_eq(h_ring_map(&r, ctx, 11 * GRAN, 256, NULL), -1);
	/* The stats show the limits and what is charged. */
	{
		char want[256], *text = NULL;
		struct json *doc = h_stats_text(&h_daemon, &text);

		ck_assert(doc != NULL && text != NULL);
		snprintf(want, sizeof(want), "{\"path\":\"%s\",\"limit\":8388608,"
			 "\"usage\":8388608", rel_a);
		ck_assert_msg(strstr(text, want) != NULL, "%s not in %s", want, text);
		json_free(doc);
		free(text);
	}
	/* limited: all of it goes with the client. */
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	ck_assert_uint_eq(usage_of(rel_a), 0);
	ck_assert_uint_eq(usage_of(rel_c), 0);
	ck_assert_uint_eq(usage_of(rel_base), 0);
	teardown();
}
END_TEST

/* In a child as uid 65534: the errno of setting rel's limit, or 0. */
static int set_as_nobody(const char *rel)
{
	int st, fd = cg_fd(rel);
	pid_t pid = fork();

	ck_assert(pid >= 0);
	if (pid == 0) {
		struct axon_dlimit l;
		char err[256];
		int ret;

		if (setgid(65534) || setuid(65534))
			_exit(100);
		ret = axon_daemon_limit(h_daemon.addr, fd, 1, 4 * MIB, &l, err, sizeof(err));
		if (!ret && axon_daemon_limit(h_daemon.addr, fd, 0, 0, &l, err, sizeof(err)))
			_exit(101);
		_exit(ret ? -ret : 0);
	}
	close(fd);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

START_TEST(delegate)
{
	struct axon_dlimit l;

	setup();
	/* The socket's directory (mkdtemp: 0700) open to the other users. */
	ck_assert_int_eq(chmod(h_daemon.dir, 0711), 0);
	ck_assert_int_eq(set_as_nobody(rel_a), EPERM);
	ck_assert_int_eq(limit_of(rel_a, 0, 0, &l), 0);
	ck_assert_uint_eq(l.limit, AXON_LIMIT_NONE);
	/* Delegated: base is the user's, so the cgroups below it are. */
	ck_assert_int_eq(chown(base, 65534, 65534), 0);
	ck_assert_int_eq(set_as_nobody(rel_a), 0);
	ck_assert_int_eq(limit_of(rel_a, 0, 0, &l), 0);
	ck_assert_uint_eq(l.limit, 4 * MIB);
	/* ...but not base itself, whose parent is root's. */
	ck_assert_int_eq(set_as_nobody(rel_base), EPERM);
	ck_assert_int_eq(limit_of(rel_a, 1, AXON_LIMIT_NONE, &l), 0);
	teardown();
}
END_TEST

static int run_axonctl(const char *out, const char *a1, const char *a2, const char *a3,
		       const char *a4)
{
	int st, fd;
	pid_t pid = fork();

	ck_assert(pid >= 0);
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			_exit(127);
		dup2(fd, 1);
		execl(h_path("bin/axonctl"), "axonctl", "--addr", h_daemon.addr, a1, a2, a3, a4,
		      (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(axonctl)
{
	char out[PATH_MAX], buf[4096];
	struct axon_dlimit l;
	size_t n;
	FILE *f;

	if (access("/dev/axon", F_OK) == 0) {
		h_note("the kernel module is loaded: axonctl talks to it, not tried");
		return;
	}
	setup();
	snprintf(out, sizeof(out), "%s/axonctl.out", h_daemon.dir);
	ck_assert_int_eq(run_axonctl(out, "limit", "set", rel_a, "6M"), 0);
	ck_assert_int_eq(limit_of(rel_a, 0, 0, &l), 0);
	ck_assert_uint_eq(l.limit, 6 * MIB);
	ck_assert_int_eq(run_axonctl(out, "limit", "get", rel_a, "--bytes"), 0);
	f = fopen(out, "re");
	ck_assert(f != NULL);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	ck_assert_msg(strstr(buf, "6291456") != NULL, "limit get printed: %s", buf);
	ck_assert_int_eq(run_axonctl(out, "limit", "set", rel_a, "none"), 0);
	ck_assert_int_eq(limit_of(rel_a, 0, 0, &l), 0);
	ck_assert_uint_eq(l.limit, AXON_LIMIT_NONE);
	unlink(out);
	teardown();
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, limited_child_move);
	tcase_add_test(tc, delegate);
	tcase_add_test(tc, axonctl);
}

int main(int argc, char **argv)
{
	static const char *const extra[] = { "--mint-credit=0", NULL };

	h_init(argc, argv);
	return h_check_main("attack-sock-cgroup", "4G", extra, add, 60);
}
