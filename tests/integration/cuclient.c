// SPDX-License-Identifier: MIT
/* cuclient.c - helpers of the driver-API client programs (cuclient.h). */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cuclient.h"

const char *cu_prog = "client";

const char *cu_name(CUresult r)
{
	static __thread char buf[32];
	const char *s = NULL;

	if (cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	snprintf(buf, sizeof(buf), "CUresult %d", (int)r);
	return buf;
}

void cu_die(const char *call, const char *file, int line, CUresult r)
{
	const char *desc = NULL;

	if (cuGetErrorString(r, &desc) != CUDA_SUCCESS || !desc)
		desc = "?";
	fflush(stdout);
	fprintf(stderr, "%s: FAILED at %s:%d: %s returned %s (%d): %s\n", cu_prog,
		file, line, call, cu_name(r), (int)r, desc);
	exit(1);
}

void cu_fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: FAILED: ", cu_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

void cu_skip(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", cu_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(77);
}

const char *cu_kernel_dir(void)
{
	static char dir[PATH_MAX];
	const char *env = getenv("AXON_KERNELS_DIR");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s", env);
		return dir;
	}
	env = getenv("AXON_BUILD");
	if (env && *env) {
		snprintf(dir, sizeof(dir), "%s/tests/data", env);
		return dir;
	}
	/* $(BUILD)/tests/bin/<prog> -> $(BUILD)/tests/data */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0;
			if (snprintf(dir, sizeof(dir), "%s/../data", exe) < (int)sizeof(dir))
				return dir;
		}
	}
	snprintf(dir, sizeof(dir), "tests/data");
	return dir;
}

void *cu_load_kernels(const char *ext, size_t *len)
{
	char path[PATH_MAX];
	struct stat st;
	char *buf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kernels.%s", cu_kernel_dir(), ext);
	f = fopen(path, "rb");
	if (!f)
		cu_skip("%s: %s (built from tests/sim-kernels/kernels.cu with nvcc)",
			path, strerror(errno));
	if (fstat(fileno(f), &st) || st.st_size <= 0)
		cu_fail("%s: empty or unreadable", path);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		cu_fail("out of memory");
	if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size)
		cu_fail("%s: short read", path);
	fclose(f);
	buf[st.st_size] = 0;
	if (len)
		*len = (size_t)st.st_size;
	return buf;
}

const char *cu_driver_path(void)
{
	Dl_info info;

	if (dladdr((void *)cuInit, &info) && info.dli_fname)
		return info.dli_fname;
	return "?";
}
