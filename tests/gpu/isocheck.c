// SPDX-License-Identifier: MIT
/*
 * isocheck.so: an LD_PRELOAD library that checks, when the process exits,
 * that it really went through axon and never touched the GPU itself:
 *
 *   - no open file descriptor (/proc/self/fd) links to a device node whose
 *     path starts with /dev/nvidia (nvidiactl, nvidia0, nvidia-uvm, ...);
 *   - no mapping (/proc/self/maps) is of such a device node;
 *   - every mapped file whose name starts with libcuda.so is the library
 *     named by AXON_ISOCHECK_LIBCUDA (axon's shim), compared after realpath;
 *   - every mapped file whose name starts with libnvidia-ml.so is axon's
 *     NVML, libnvidia-ml.so.1 beside that libcuda (build/lib,
 *     $(PREFIX)/lib/axon) or AXON_ISOCHECK_LIBNVML. NVIDIA's
 *     (libnvidia-ml.so.<driver version>, which PyTorch dlopens as
 *     libnvidia-ml.so.1) opens /dev/nvidia* itself; flagging the library
 *     as well as the descriptors also catches a process that loaded it
 *     and closed them again before exit.
 *
 * It works for any client, a C program or python3: nothing in it depends on
 * what the program is. Used by tests/gpu/gpucheck.sh for every run through
 * axon (and, as a self-test of the checker, for the native runs, which must
 * be flagged).
 *
 * Environment:
 *   AXON_ISOCHECK_LIBCUDA  the only libcuda.so* allowed (unset: a violation
 *                          of its own, so a misconfigured harness is seen)
 *   AXON_ISOCHECK_OUT      file that each violation is appended to, one line
 *                          each: "isocheck: pid N (exe): what"; also printed
 *                          on stderr. Unset: stderr only.
 *   AXON_ISOCHECK_LIBNVML  the only libnvidia-ml.so* allowed (unset: the
 *                          libnvidia-ml.so.1 in AXON_ISOCHECK_LIBCUDA's
 *                          directory; when that does not exist, none is)
 *   AXON_ISOCHECK_RAN      file that each checked process appends one line
 *                          to, "pid N (exe): libcuda=ours|other|none
 *                          violations=N libnvml=ours|other|none", so the
 *                          harness can tell that the check ran at all (a
 *                          static or setuid program ignores LD_PRELOAD)
 *   AXON_ISOCHECK_DEV      device-node prefix instead of /dev/nvidia; only
 *                          for tests/gpu/isocheck-test.c, which cannot make
 *                          nodes under /dev
 *
 * When: an atexit handler registered by the constructor, and a destructor;
 * the first of the two to run does the scan. Both run when main returns or
 * the program calls exit(), in a forked child too; neither runs on _exit()
 * or a fatal signal (the harness then sees no "ran" line for that pid only
 * if no other process of the case checked itself; see gpucheck.sh).
 *
 * Built without sanitizers whatever the build: it is preloaded into
 * programs (python3, nvcc's) that have no sanitizer runtime.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int scanned;

/* Appends one line to the file named by the environment variable ENV. */
static void append(const char *env, const char *line)
{
	const char *path = getenv(env);
	int fd;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	/* One write per line: O_APPEND keeps lines of concurrent processes whole. */
	if (write(fd, line, strlen(line)) < 0) {
		/* nothing else to report it to */
	}
	close(fd);
}

static void exe_name(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);

	if (n <= 0)
		n = (ssize_t)snprintf(buf, size, "?");
	buf[n] = '\0';
}

static int violations;

static void violation(const char *exe, const char *what, const char *detail)
{
	char line[PATH_MAX * 2 + 128];

	snprintf(line, sizeof(line), "isocheck: pid %d (%s): %s %s\n", (int)getpid(), exe,
		 what, detail);
	append("AXON_ISOCHECK_OUT", line);
	if (write(2, line, strlen(line)) < 0) {
		/* stderr gone: the file above still has it */
	}
	violations++;
}

/* The path of a /proc/self/maps line (from its first '/'), or NULL. */
static const char *maps_path(char *line)
{
	char *p = strchr(line, '/');
	size_t n;

	if (!p)
		return NULL;
	n = strlen(p);
	if (n && p[n - 1] == '\n')
		p[n - 1] = '\0';
	/* A file deleted after it was mapped: judge it by its old name. */
	n = strlen(p);
	if (n > 10 && !strcmp(p + n - 10, " (deleted)"))
		p[n - 10] = '\0';
	return p;
}

static bool is_device(const char *path, const char *dev)
{
	return strncmp(path, dev, strlen(dev)) == 0;
}

/*
 * The real path of the only libnvidia-ml allowed: AXON_ISOCHECK_LIBNVML, else
 * libnvidia-ml.so.1 beside the real libcuda. "" when there is none (then
 * every libnvidia-ml mapped is foreign).
 */
static void nvml_allowed(const char *real_libcuda, char real[PATH_MAX])
{
	const char *env = getenv("AXON_ISOCHECK_LIBNVML");
	char path[PATH_MAX + 32];
	const char *slash;

	real[0] = '\0';
	if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		slash = strrchr(real_libcuda, '/');
		if (!slash)
			return;
		snprintf(path, sizeof(path), "%.*s/libnvidia-ml.so.1",
			 (int)(slash - real_libcuda), real_libcuda);
	}
	if (!realpath(path, real))
		real[0] = '\0';
}

/* ours / other for one library family; a violation for each foreign file. */
static void judge(const char *exe, const char *path, const char *allowed, const char *what,
		  bool *ours, bool *other, char last_bad[PATH_MAX])
{
	if (allowed[0] && !strcmp(path, allowed)) {
		*ours = true;
		return;
	}
	*other = true;
	if (strcmp(path, last_bad))
		violation(exe, what, path);
	snprintf(last_bad, PATH_MAX, "%s", path);
}

static void scan(void)
{
	const char *want = getenv("AXON_ISOCHECK_LIBCUDA");
	const char *dev = getenv("AXON_ISOCHECK_DEV");
	char exe[PATH_MAX], real_want[PATH_MAX] = "", line[PATH_MAX + 256];
	char target[PATH_MAX], last_bad[PATH_MAX] = "", real_nvml[PATH_MAX] = "";
	bool ours = false, other = false, nvml_ours = false, nvml_other = false;
	struct dirent *de;
	FILE *f;
	DIR *d;

	if (__atomic_exchange_n(&scanned, 1, __ATOMIC_ACQ_REL))
		return;
	if (!dev || !*dev)
		dev = "/dev/nvidia";
	exe_name(exe, sizeof(exe));
	if (!want || !*want)
		violation(exe, "AXON_ISOCHECK_LIBCUDA is not set:", "nothing to compare with");
	else if (!realpath(want, real_want))
		violation(exe, "AXON_ISOCHECK_LIBCUDA does not exist:", want);
	nvml_allowed(real_want, real_nvml);

	f = fopen("/proc/self/maps", "re");
	if (!f) {
		violation(exe, "cannot read", "/proc/self/maps");
	} else {
		while (fgets(line, sizeof(line), f)) {
			const char *path = maps_path(line);
			const char *base;

			if (!path)
				continue;
			/* A library has several mappings: one report per file. */
			if (is_device(path, dev)) {
				if (strcmp(path, last_bad))
					violation(exe, "maps a GPU device node:", path);
				snprintf(last_bad, sizeof(last_bad), "%s", path);
				continue;
			}
			base = strrchr(path, '/') + 1;
			if (!strncmp(base, "libcuda.so", 10))
				judge(exe, path, real_want, "loaded a libcuda that is not axon's:",
				      &ours, &other, last_bad);
			else if (!strncmp(base, "libnvidia-ml.so", 15))
				judge(exe, path, real_nvml,
				      "loaded a libnvidia-ml that is not axon's:", &nvml_ours,
				      &nvml_other, last_bad);
		}
		fclose(f);
	}

	d = opendir("/proc/self/fd");
	if (!d) {
		violation(exe, "cannot read", "/proc/self/fd");
	} else {
		while ((de = readdir(d))) {
			ssize_t n;

			if (de->d_name[0] == '.')
				continue;
			n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = '\0';
			if (is_device(target, dev)) {
				char what[300];

				snprintf(what, sizeof(what), "holds fd %s on a GPU device node:",
					 de->d_name);
				violation(exe, what, target);
			}
		}
		closedir(d);
	}

	/* (libnvml last: harnesses match "libcuda=X violations=N" as it was) */
	snprintf(line, sizeof(line), "pid %d (%s): libcuda=%s violations=%d libnvml=%s\n",
		 (int)getpid(), exe, other ? "other" : ours ? "ours" : "none", violations,
		 nvml_other ? "other" : nvml_ours ? "ours" : "none");
	append("AXON_ISOCHECK_RAN", line);
}

static void at_exit(void)
{
	scan();
}

__attribute__((constructor)) static void isocheck_init(void)
{
	atexit(at_exit);
}

__attribute__((destructor)) static void isocheck_fini(void)
{
	scan();
}
