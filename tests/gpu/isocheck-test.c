// SPDX-License-Identifier: MIT
/*
 * unit-isocheck: tests/gpu/isocheck.so, the LD_PRELOAD isolation check of
 * `make gpucheck`, on this GPU-less machine. The test runs itself as the
 * checked child (argv[1] = "child") with isocheck.so preloaded, in these
 * cases:
 *
 *   clean         dlopens axon's libcuda.so.1 = AXON_ISOCHECK_LIBCUDA,
 *                 returns from main: no violation, ran line "libcuda=ours"
 *   nothing       loads no libcuda: no violation, "libcuda=none"
 *   foreign       dlopens a copy of libcuda.so.1 from another directory and
 *                 calls exit(3): one violation naming that copy; exit
 *                 status 3 kept
 *   fd            keeps a file descriptor on a fake device node (a file
 *                 under AXON_ISOCHECK_DEV's prefix): one "holds fd" line
 *   mapped        maps the fake node and closes it: one "maps" line
 *   forked        a forked child loads the foreign copy and exits; the
 *                 parent is clean: two ran lines, one violation, the
 *                 child's
 *   unset         AXON_ISOCHECK_LIBCUDA unset: a violation of its own
 *   nvml          dlopens axon's libnvidia-ml.so.1 (beside the shim; it
 *                 loads the shim too): no violation, "libnvml=ours"
 *   nvml-foreign  dlopens a library named like NVIDIA's NVML
 *                 (libnvidia-ml.so.580.65.06, elsewhere): one violation
 *                 naming it, "libnvml=other"
 *
 * Needs $AXON_BUILD (tests/run-tests.sh sets it; otherwise the directory
 * above this program's) holding lib/libcuda.so.1, lib/libnvidia-ml.so.1
 * and tests/gpu/isocheck.so. Exit 0 pass, 1 fail.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char build[PATH_MAX], dir[PATH_MAX], shim[PATH_MAX + 64], other[PATH_MAX + 32];
static char devnode[PATH_MAX + 32], preload[PATH_MAX + 64];
static char nvml[PATH_MAX + 64], other_nvml[PATH_MAX + 64];
static int failures;

#define EXPECT(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

/* ---- the child ----------------------------------------------------------- */

static void *load(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(2);
	}
	return h;
}

static int child(const char *mode, const char *path)
{
	if (!strcmp(mode, "dlopen")) {
		load(path);
		return 0;
	}
	if (!strcmp(mode, "dlopen-exit")) {
		load(path);
		exit(3);	/* exit(), not a return from main: the handlers still run */
	}
	if (!strcmp(mode, "open")) {
		if (open(path, O_RDWR) < 0)
			return 2;
		return 0;	/* the descriptor stays open until the process is gone */
	}
	if (!strcmp(mode, "mmap")) {
		int fd = open(path, O_RDWR);
		void *p;

		if (fd < 0)
			return 2;
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		return p == MAP_FAILED ? 2 : 0;
	}
	if (!strcmp(mode, "fork")) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (pid == 0) {
			load(path);
			exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 2;
		return 0;
	}
	return !!strcmp(mode, "none");
}

/* ---- the parent ---------------------------------------------------------- */

struct result {
	int status;
	char out[8192];		/* AXON_ISOCHECK_OUT's lines */
	char ran[8192];		/* AXON_ISOCHECK_RAN's lines */
	char err[8192];		/* the child's stderr */
	int out_lines, ran_lines, err_lines;
};

static void slurp(const char *path, char *buf, size_t size, int *lines)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, size - 1);

	if (n < 0)
		n = 0;
	buf[n] = '\0';
	if (fd >= 0)
		close(fd);
	*lines = 0;
	for (char *p = buf; *p; p++)
		*lines += *p == '\n';
}

static void run(const char *mode, const char *path, bool set_want, struct result *r)
{
	char self[PATH_MAX], out[PATH_MAX + 16], ran[PATH_MAX + 16], err[PATH_MAX + 16];
	char asan[512];
	const char *asan_env = getenv("ASAN_OPTIONS");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	self[n > 0 ? n : 0] = '\0';
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(ran, sizeof(ran), "%s/ran", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	unlink(out);
	unlink(ran);
	/* isocheck.so precedes the sanitizer runtime in a SAN build's child. */
	snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0",
		 asan_env ? asan_env : "", asan_env && *asan_env ? ":" : "");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			dup2(fd, 2);
		setenv("LD_PRELOAD", preload, 1);
		setenv("ASAN_OPTIONS", asan, 1);
		setenv("AXON_ISOCHECK_OUT", out, 1);
		setenv("AXON_ISOCHECK_RAN", ran, 1);
		setenv("AXON_ISOCHECK_DEV", devnode, 1);
		if (set_want)
			setenv("AXON_ISOCHECK_LIBCUDA", shim, 1);
		else
			unsetenv("AXON_ISOCHECK_LIBCUDA");
		execl(self, self, "child", mode, path, (char *)NULL);
		_exit(127);
	}
	r->status = -1;
	if (pid > 0)
		waitpid(pid, &r->status, 0);
	slurp(out, r->out, sizeof(r->out), &r->out_lines);
	slurp(ran, r->ran, sizeof(r->ran), &r->ran_lines);
	slurp(err, r->err, sizeof(r->err), &r->err_lines);
	/* Each violation is on stderr too. */
	EXPECT(r->err_lines == r->out_lines && !strcmp(r->err, r->out),
	       "%s: stderr differs from AXON_ISOCHECK_OUT:\n%s", mode, r->err);
	unlink(out);
	unlink(ran);
	unlink(err);
}

static int exit_code(const struct result *r)
{
	return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY), o;
	ssize_t n;

	if (in < 0)
		return -1;
	o = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (o < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(o, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	close(o);
	return n < 0 ? -1 : 0;
}

static int find_build(void)
{
	const char *env = getenv("AXON_BUILD");
	ssize_t n;
	char *s;

	if (env && *env) {
		snprintf(build, sizeof(build), "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", build, sizeof(build) - 1);
	if (n <= 0)
		return -1;
	build[n] = '\0';
	for (int i = 0; i < 2; i++) {
		s = strrchr(build, '/');
		if (!s)
			return -1;
		*s = '\0';
	}
	return 0;
}

int main(int argc, char **argv)
{
	char path[PATH_MAX + 64], zero[4096] = { 0 };
	const char *tmp = getenv("TMPDIR");
	struct result r;
	int fd;

	if (argc == 4 && !strcmp(argv[1], "child"))
		return child(argv[2], argv[3]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (find_build()) {
		printf("cannot find the build directory\n");
		return 1;
	}
	snprintf(shim, sizeof(shim), "%s/lib/libcuda.so.1", build);
	snprintf(nvml, sizeof(nvml), "%s/lib/libnvidia-ml.so.1", build);
	snprintf(preload, sizeof(preload), "%s/tests/gpu/isocheck.so", build);
	/* (isocheck compares real paths; so does this test) */
	if (!realpath(shim, path) || access(preload, R_OK) || access(nvml, R_OK)) {
		printf("%s, %s or %s missing\n", shim, nvml, preload);
		return 1;
	}
	memcpy(shim, path, sizeof(shim));
	if (!realpath(nvml, path)) {
		printf("realpath %s: %s\n", nvml, strerror(errno));
		return 1;
	}
	memcpy(nvml, path, sizeof(nvml));
	snprintf(dir, sizeof(dir), "%s/axon-isocheck.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* The "other" libcuda: axon's own file, copied elsewhere. */
	snprintf(path, sizeof(path), "%s/other", dir);
	mkdir(path, 0755);
	snprintf(other, sizeof(other), "%s/other/libcuda.so.1", dir);
	/* NVIDIA's NVML by name: any library will do (isocheck judges names),
	 * and a copy of the shim needs nothing beside it to load. */
	snprintf(path, sizeof(path), "%s/nvidia", dir);
	mkdir(path, 0755);
	snprintf(other_nvml, sizeof(other_nvml), "%s/nvidia/libnvidia-ml.so.580.65.06", dir);
	/* A stand-in for /dev/nvidiactl: a 4 KiB file under a prefix of ours. */
	snprintf(path, sizeof(path), "%s/dev", dir);
	mkdir(path, 0755);
	snprintf(devnode, sizeof(devnode), "%s/dev/nvidia", dir);
	snprintf(path, sizeof(path), "%s/dev/nvidiactl", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, zero, sizeof(zero)) != (ssize_t)sizeof(zero) ||
	    copy_file(shim, other) || copy_file(shim, other_nvml)) {
		printf("cannot set up %s: %s\n", dir, strerror(errno));
		return 1;
	}
	close(fd);

	run("dlopen", shim, true, &r);
	EXPECT(exit_code(&r) == 0, "clean: status %#x", r.status);
	EXPECT(r.out_lines == 0, "clean: violations:\n%s", r.out);
	EXPECT(r.ran_lines == 1 && strstr(r.ran, "libcuda=ours violations=0 libnvml=none"),
	       "clean: ran:\n%s", r.ran);
	printf("clean        %s", r.ran);

	run("none", "-", true, &r);
	EXPECT(exit_code(&r) == 0 && r.out_lines == 0, "nothing: status %#x, %s", r.status, r.out);
	EXPECT(r.ran_lines == 1 && strstr(r.ran, "libcuda=none violations=0"), "nothing: ran:\n%s",
	       r.ran);
	printf("nothing      %s", r.ran);

	run("dlopen-exit", other, true, &r);
	EXPECT(exit_code(&r) == 3, "foreign: status %#x (exit(3) must be kept)", r.status);
	EXPECT(r.out_lines == 1 && strstr(r.out, "not axon's") && strstr(r.out, other),
	       "foreign: violations:\n%s", r.out);
	EXPECT(r.ran_lines == 1 && strstr(r.ran, "libcuda=other violations=1"), "foreign: ran:\n%s",
	       r.ran);
	printf("foreign      %s", r.out);

	run("open", path, true, &r);
	EXPECT(exit_code(&r) == 0, "fd: status %#x", r.status);
	EXPECT(r.out_lines == 1 && strstr(r.out, "holds fd") && strstr(r.out, path),
	       "fd: violations:\n%s", r.out);
	printf("fd           %s", r.out);

	run("mmap", path, true, &r);
	EXPECT(exit_code(&r) == 0, "mapped: status %#x", r.status);
	EXPECT(r.out_lines == 1 && strstr(r.out, "maps a GPU device node") && strstr(r.out, path),
	       "mapped: violations:\n%s", r.out);
	printf("mapped       %s", r.out);

	run("fork", other, true, &r);
	EXPECT(exit_code(&r) == 0, "forked: status %#x", r.status);
	EXPECT(r.out_lines == 1 && strstr(r.out, other), "forked: violations:\n%s", r.out);
	EXPECT(r.ran_lines == 2 && strstr(r.ran, "libcuda=other violations=1") &&
	       strstr(r.ran, "libcuda=none violations=0"), "forked: ran:\n%s", r.ran);
	printf("forked       %s", r.out);

	run("dlopen", shim, false, &r);
	EXPECT(r.out_lines >= 1 && strstr(r.out, "AXON_ISOCHECK_LIBCUDA is not set"),
	       "unset: violations:\n%s", r.out);
	printf("unset        %s", r.out);

	run("dlopen", nvml, true, &r);
	EXPECT(exit_code(&r) == 0, "nvml: status %#x", r.status);
	EXPECT(r.out_lines == 0, "nvml: violations:\n%s", r.out);
	EXPECT(r.ran_lines == 1 && strstr(r.ran, "libcuda=ours violations=0 libnvml=ours"),
	       "nvml: ran:\n%s", r.ran);
	printf("nvml         %s", r.ran);

	run("dlopen-exit", other_nvml, true, &r);
	EXPECT(exit_code(&r) == 3, "nvml-foreign: status %#x", r.status);
	EXPECT(r.out_lines == 1 && strstr(r.out, "libnvidia-ml that is not axon's") &&
	       strstr(r.out, other_nvml), "nvml-foreign: violations:\n%s", r.out);
	EXPECT(r.ran_lines == 1 && strstr(r.ran, "violations=1 libnvml=other"),
	       "nvml-foreign: ran:\n%s", r.ran);
	printf("nvml-foreign %s", r.out);

	unlink(path);
	unlink(other);
	unlink(other_nvml);
	snprintf(path, sizeof(path), "%s/nvidia", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/dev", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/other", dir);
	rmdir(path);
	rmdir(dir);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
