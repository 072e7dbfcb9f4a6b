/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - a private axond for one test program: started from
 * $AXON_BUILD/bin/axond (run-tests.sh sets AXON_BUILD; without it the
 * build directory is found from /proc/self/exe) with the sim backend on a
 * socket in a fresh temp dir, waited for until it answers a stats request,
 * stopped with SIGTERM and required to exit 0. Its stderr goes to a log
 * file that is printed when something goes wrong.
 */
#ifndef AXON_TESTS_RING_DAEMON_H
#define AXON_TESTS_RING_DAEMON_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <axon/libaxon.h>

#if defined(__SANITIZE_ADDRESS__)
#define RD_SLOW	4
#else
#define RD_SLOW	1
#endif

struct rd_daemon {
	pid_t pid;
	char dir[200];
	char sock[224];
	char addr[240];
	char log[224];
};

static inline uint64_t rd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* $AXON_BUILD, or the directory above this program's tests/ directory. */
static inline const char *rd_build_dir(void)
{
	static char buf[PATH_MAX];
	const char *env = getenv("AXON_BUILD");
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return ".";
	buf[n] = 0;
	for (int i = 0; i < 2; i++) {	/* strip /tests/<name> */
		slash = strrchr(buf, '/');
		if (slash)
			*slash = 0;
	}
	return buf;
}

static inline void rd_print_log(const struct rd_daemon *d)
{
	char line[512];
	FILE *f = fopen(d->log, "r");

	if (!f)
		return;
	fprintf(stderr, "---- axond log (%s) ----\n", d->log);
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fprintf(stderr, "---- end of log ----\n");
	fclose(f);
}

/*
 * Starts axond --backend=sim --listen unix:DIR/s.sock plus extra (NULL
 * terminated). Returns 0 once it answers, or -1 with a message on stderr.
 */
static inline int rd_start(struct rd_daemon *d, const char *const *extra)
{
	char bin[PATH_MAX + 16], listen[256], kernels[PATH_MAX + 48];
	const char *argv[32];
	char *json = NULL, err[256];
	uint64_t t0;
	int argc = 0, ret;

	memset(d, 0, sizeof(*d));
	snprintf(bin, sizeof(bin), "%s/bin/axond", rd_build_dir());
	if (access(bin, X_OK) != 0) {
		fprintf(stderr, "no axond at %s\n", bin);
		return -1;
	}
	snprintf(d->dir, sizeof(d->dir), "%s/axon-ring-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(d->dir)) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(d->sock, sizeof(d->sock), "%s/s.sock", d->dir);
	snprintf(d->addr, sizeof(d->addr), "unix:%s", d->sock);
	snprintf(d->log, sizeof(d->log), "%s/axond.log", d->dir);
	snprintf(listen, sizeof(listen), "--listen=unix:%s", d->sock);
	argv[argc++] = bin;
	argv[argc++] = "--backend=sim";
	argv[argc++] = listen;
	argv[argc++] = "--sim-mem=1G";
	/* the test kernels (axond/sim/kernels-abi.h) */
	snprintf(kernels, sizeof(kernels), "--sim-kernels=%s/lib/axon-sim-kernels.so",
		 rd_build_dir());
	argv[argc++] = kernels;
	while (extra && *extra && argc < 30)
		argv[argc++] = *extra++;
	argv[argc] = NULL;

	fflush(NULL);
	d->pid = fork();
	if (d->pid < 0) {
		fprintf(stderr, "fork: %s\n", strerror(errno));
		return -1;
	}
	if (d->pid == 0) {
		int fd = open(d->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 2);
			dup2(fd, 1);
		}
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	/* Wait (bounded) until it answers on its socket. */
	t0 = rd_now_ms();
	for (;;) {
		int status;

		ret = axon_read_stats(d->addr, &json, err, sizeof(err));
		if (ret == 0) {
			free(json);
			return 0;
		}
		if (waitpid(d->pid, &status, WNOHANG) == d->pid) {
			fprintf(stderr, "axond exited during start-up (status 0x%x)\n", status);
			d->pid = 0;
			rd_print_log(d);
			return -1;
		}
		if (rd_now_ms() - t0 > 10000 * RD_SLOW) {
			fprintf(stderr, "axond did not answer within %d s: %s\n",
				10 * RD_SLOW, err);
			rd_print_log(d);
			return -1;
		}
		usleep(2000);
	}
}

/* SIGTERM, wait (bounded), require exit status 0. Returns 0 or -1. */
static inline int rd_stop(struct rd_daemon *d, bool print_log)
{
	uint64_t t0 = rd_now_ms();
	int status = 0, ok;

	if (d->pid <= 0)
		return -1;
	kill(d->pid, SIGTERM);
	while (waitpid(d->pid, &status, WNOHANG) == 0) {
		if (rd_now_ms() - t0 > 10000 * RD_SLOW) {
			fprintf(stderr, "axond ignored SIGTERM for %d s; killing it\n",
				10 * RD_SLOW);
			kill(d->pid, SIGKILL);
			waitpid(d->pid, &status, 0);
			d->pid = 0;
			rd_print_log(d);
			return -1;
		}
		usleep(2000);
	}
	d->pid = 0;
	ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!ok)
		fprintf(stderr, "axond did not exit 0 after SIGTERM (status 0x%x)\n", status);
	if (!ok || print_log)
		rd_print_log(d);
	if (ok && !getenv("AXON_KEEP_LOGS")) {
		unlink(d->log);
		unlink(d->sock);
		rmdir(d->dir);
	}
	return ok ? 0 : -1;
}

#endif /* AXON_TESTS_RING_DAEMON_H */
