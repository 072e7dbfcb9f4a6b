// SPDX-License-Identifier: MIT
/*
 * cudart-run: unmodified CUDA runtime-API programs through axon. Starts a
 * private axond (sim backend) on a socket in a fresh temp dir, runs each
 * program built from tests/cudart/ (rt-basic and rt-more with static and
 * with shared cudart, and the driver-level drv-tables) against it with
 *
 *   LD_LIBRARY_PATH=$AXON_BUILD/lib:<CUDA lib64>   axon's libcuda first
 *   AXON_ADDR=unix:<dir>/s.sock
 *   AXON_EXPECT_LIBCUDA=$AXON_BUILD/lib/libcuda.so.1
 *   AXON_LOG unset                                 stubs report themselves
 *
 * and requires of each: exit 0, "PASS" printed, no "is not implemented"
 * line (a stub cudart reached). The programs check their own results and,
 * at the end, that the only libcuda in their address space is axon's and
 * that no /dev/nvidia* is open (rt-check.h). Then axond must exit 0 on
 * SIGTERM.
 *
 * AXON_TEST_AXOND_ARGS replaces the daemon's backend arguments
 * ("--backend=sim --sim-mem=2G --sim-kernels=BUILD/lib/axon-sim-kernels.so"),
 * e.g. with "--backend=cuda --vendor-lib=PATH" on a GPU machine
 * (tests/cudart/gpu.sh).
 *
 * Exit 0 pass, 1 fail, 77 when the programs were not built (no nvcc).
 * Under sanitizers the nvcc-built programs, which are not instrumented,
 * get the sanitizer runtimes preloaded so that they can load the
 * instrumented shim.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef AXON_CUDA_LIB64
#define AXON_CUDA_LIB64 "/usr/local/cuda/lib64"
#endif
#ifndef AXON_SAN_PRELOAD
#define AXON_SAN_PRELOAD ""
#endif

#if defined(__SANITIZE_ADDRESS__)
#define SLOW 4
#else
#define SLOW 1
#endif

static char build[PATH_MAX], dir[PATH_MAX], sock[PATH_MAX + 16], addr[PATH_MAX + 32];
static pid_t daemon_pid;

static const char *const programs[] = {
	"rt-basic-static", "rt-basic-shared", "rt-more-static", "rt-more-shared",
	"drv-tables",
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* $AXON_BUILD, or the directory above this program's tests/ directory. */
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

static void cat(const char *path, const char *prefix)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		printf("%s%s", prefix, line);
	fclose(f);
}

static bool socket_answers(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = strlen(sock);
	int fd, ok;

	if (len >= sizeof(sa.sun_path))
		return false;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	memcpy(sa.sun_path, sock, len + 1);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* axond --listen ADDR, then the backend's arguments (split at blanks). */
static char *const *daemon_argv(char *axond, char *listen)
{
	static char *argv[32], args[PATH_MAX + 1024];
	const char *env = getenv("AXON_TEST_AXOND_ARGS");
	int n = 0;

	if (env && *env)
		snprintf(args, sizeof(args), "%s", env);
	else	/* the sim, with the test kernels (axond/sim/kernels-abi.h) */
		snprintf(args, sizeof(args),
			 "--backend=sim --sim-mem=2G --sim-kernels=%s/lib/axon-sim-kernels.so",
			 build);
	argv[n++] = axond;
	argv[n++] = "--listen";
	argv[n++] = listen;
	for (char *tok = strtok(args, " \t"); tok && n < 31; tok = strtok(NULL, " \t"))
		argv[n++] = tok;
	argv[n] = NULL;
	return argv;
}

static int start_daemon(void)
{
	char axond[PATH_MAX + 16], log[PATH_MAX + 16], listen[PATH_MAX + 32];
	double deadline;
	int status;

	snprintf(axond, sizeof(axond), "%s/bin/axond", build);
	snprintf(log, sizeof(log), "%s/axond.log", dir);
	snprintf(listen, sizeof(listen), "unix:%s", sock);
	if (access(axond, X_OK)) {
		printf("%s: %s\n", axond, strerror(errno));
		return -1;
	}
	daemon_pid = fork();
	if (daemon_pid < 0)
		return -1;
	if (daemon_pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(axond, daemon_argv(axond, listen));
		_exit(127);
	}
	deadline = now_s() + 10 * SLOW;
	while (!socket_answers()) {
		if (waitpid(daemon_pid, &status, WNOHANG) == daemon_pid) {
			printf("axond exited during start-up (status %#x)\n", status);
			cat(log, "  axond| ");
			daemon_pid = 0;
			return -1;
		}
		if (now_s() > deadline) {
			printf("axond did not answer on %s\n", sock);
			cat(log, "  axond| ");
			return -1;
		}
		usleep(10000);
	}
	return 0;
}

static int stop_daemon(void)
{
	double deadline = now_s() + 10 * SLOW;
	char log[PATH_MAX + 16];
	int status;

	snprintf(log, sizeof(log), "%s/axond.log", dir);
	if (!daemon_pid)
		return -1;
	kill(daemon_pid, SIGTERM);
	while (waitpid(daemon_pid, &status, WNOHANG) != daemon_pid) {
		if (now_s() > deadline) {
			printf("axond did not exit on SIGTERM\n");
			kill(daemon_pid, SIGKILL);
			waitpid(daemon_pid, &status, 0);
			cat(log, "  axond| ");
			return -1;
		}
		usleep(10000);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("axond did not exit cleanly (status %#x)\n", status);
		cat(log, "  axond| ");
		return -1;
	}
	return 0;
}

/* Runs one program; 0 when it passed every check. */
static int run_one(const char *name, const char *fatbin)
{
	char prog[PATH_MAX + 64], out[PATH_MAX + 64], lib[PATH_MAX + 32];
	char ldpath[2 * PATH_MAX + 64], line[1024];
	double t0 = now_s(), deadline = t0 + 120 * SLOW;
	bool pass = false, stub = false;
	int status = 0, ret = 0;
	pid_t pid;
	FILE *f;

	snprintf(prog, sizeof(prog), "%s/tests/cudart/%s", build, name);
	snprintf(out, sizeof(out), "%s/%s.out", dir, name);
	snprintf(lib, sizeof(lib), "%s/lib/libcuda.so.1", build);
	snprintf(ldpath, sizeof(ldpath), "%s/lib:%s", build, AXON_CUDA_LIB64);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		setenv("AXON_ADDR", addr, 1);
		setenv("LD_LIBRARY_PATH", ldpath, 1);
		setenv("AXON_EXPECT_LIBCUDA", lib, 1);
		unsetenv("AXON_LOG");
		if (AXON_SAN_PRELOAD[0] && strncmp(name, "drv-", 4))
			setenv("LD_PRELOAD", AXON_SAN_PRELOAD, 1);
		execl(prog, prog, fatbin, (char *)NULL);
		fprintf(stderr, "exec %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (now_s() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			printf("  %s: timed out\n", name);
			ret = -1;
			break;
		}
		usleep(5000);
	}
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		pass |= !strncmp(line, "PASS", 4);
		stub |= strstr(line, "is not implemented") != NULL;
	}
	if (f)
		fclose(f);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || !pass || stub)
		ret = -1;
	printf("%s  %-20s %6.2fs", ret ? "FAIL" : "ok  ", name, now_s() - t0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("  (status %#x)", status);
	if (stub)
		printf("  (reached a stub)");
	printf("\n");
	cat(out, "  | ");
	return ret;
}

static void remove_dir(void)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/axond.log", dir);
	unlink(path);
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.out", dir, programs[i]);
		unlink(path);
	}
	unlink(sock);
	rmdir(dir);
}

int main(void)
{
	char path[PATH_MAX + 64], fatbin[PATH_MAX + 64];
	const char *tmp = getenv("TMPDIR");
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (find_build()) {
		fprintf(stderr, "cannot find the build directory\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		snprintf(path, sizeof(path), "%s/tests/cudart/%s", build, programs[i]);
		if (access(path, X_OK)) {
			printf("%s is missing (built without nvcc?)\n", path);
			return 77;
		}
	}
	snprintf(fatbin, sizeof(fatbin), "%s/tests/cudart/kernels.fatbin", build);
	if (access(fatbin, R_OK)) {
		printf("%s is missing (built without nvcc?)\n", fatbin);
		return 77;
	}
	snprintf(dir, sizeof(dir), "%s/axon-cudart.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		printf("socket path %s is too long for AF_UNIX (TMPDIR?)\n", sock);
		rmdir(dir);
		return 1;
	}
	snprintf(addr, sizeof(addr), "unix:%s", sock);
	if (start_daemon()) {
		printf("files kept in %s\n", dir);
		return 1;
	}
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++)
		failed += run_one(programs[i], fatbin) != 0;
	if (stop_daemon())
		failed++;
	if (failed)
		printf("%d failure(s); files kept in %s\n", failed, dir);
	else
		remove_dir();
	return failed ? 1 : 0;
}
