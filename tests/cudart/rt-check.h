/* SPDX-License-Identifier: MIT */
/*
 * rt-check.h - what the runtime-API test programs (tests/cudart/*.cu) share:
 * CHECK macros that count failures (from any thread), and the end-of-run check that the
 * process really went through axon: the only libcuda mapped is the one
 * named by AXON_EXPECT_LIBCUDA (the shim, as tests/cudart/run.c sets it),
 * and no /dev/nvidia* file is open or mapped. Without AXON_EXPECT_LIBCUDA
 * (a native run on a GPU machine) that check is skipped.
 *
 * Plain C that nvcc's host compiler accepts as C++.
 */
#ifndef AXON_TESTS_CUDART_RT_CHECK_H
#define AXON_TESTS_CUDART_RT_CHECK_H

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rt_failures;

#define RT_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__,	\
				__LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			__atomic_fetch_add(&rt_failures, 1,		\
					   __ATOMIC_RELAXED);		\
		}							\
	} while (0)

/* A CUDA runtime call that must succeed. */
#define RT_OK(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		RT_CHECK(e_ == cudaSuccess, "%s -> %d %s (%s)", #call,	\
			 (int)e_, cudaGetErrorName(e_),			\
			 cudaGetErrorString(e_));			\
	} while (0)

/* The last path component of a /proc/self/maps line's file, or NULL. */
static const char *rt_maps_path(char *line)
{
	char *p = strchr(line, '/');
	size_t n;

	if (!p)
		return NULL;
	n = strlen(p);
	if (n && p[n - 1] == '\n')
		p[n - 1] = '\0';
	return p;
}

/*
 * Every mapped file called libcuda.so* must be the expected one; at least
 * one must be; nothing under /dev/nvidia may be mapped or open.
 */
static void rt_check_process(void)
{
	const char *want = getenv("AXON_EXPECT_LIBCUDA");
	char real_want[PATH_MAX], line[PATH_MAX + 256], link[64], target[PATH_MAX];
	int ours = 0;
	struct dirent *de;
	FILE *f;
	DIR *d;

	if (!want || !*want) {
		printf("process check skipped (AXON_EXPECT_LIBCUDA unset)\n");
		return;
	}
	if (!realpath(want, real_want)) {
		RT_CHECK(0, "realpath %s failed", want);
		return;
	}
	f = fopen("/proc/self/maps", "r");
	RT_CHECK(f != NULL, "cannot open /proc/self/maps");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *path = rt_maps_path(line);
		const char *base;

		if (!path)
			continue;
		base = strrchr(path, '/') + 1;
		RT_CHECK(strncmp(path, "/dev/nvidia", 11) != 0, "%s is mapped", path);
		if (strncmp(base, "libcuda.so", 10) != 0)
			continue;
		RT_CHECK(strcmp(path, real_want) == 0,
			 "a libcuda other than axon's is mapped: %s", path);
		ours += strcmp(path, real_want) == 0;
	}
	fclose(f);
	RT_CHECK(ours > 0, "axon's %s is not mapped", real_want);

	d = opendir("/proc/self/fd");
	RT_CHECK(d != NULL, "cannot open /proc/self/fd");
	if (!d)
		return;
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		RT_CHECK(strncmp(target, "/dev/nvidia", 11) != 0, "fd %s is %s",
			 de->d_name, target);
	}
	closedir(d);
	printf("process check: only %s, no /dev/nvidia*\n", real_want);
}

#endif
