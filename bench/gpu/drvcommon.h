/* SPDX-License-Identifier: MIT */
/*
 * drvcommon.h - what the driver-API benchmark programs (drvbench,
 * loopclient) share: a CUresult's name and a kernel image read whole.
 */
#ifndef AXON_BENCH_GPU_DRVCOMMON_H
#define AXON_BENCH_GPU_DRVCOMMON_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cuda.h>

static inline const char *errname(CUresult r)
{
	const char *s = NULL;

	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
		return "CUDA_ERROR_?";
	return s;
}

/* The whole file at path, malloc'd; NULL when it cannot be read whole. */
static inline void *read_file(const char *path)
{
	struct stat sb;
	char *buf;
	int fd = open(path, O_RDONLY);
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) || !(buf = malloc((size_t)sb.st_size + 1))) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)sb.st_size) {
		ssize_t k = read(fd, buf + got, (size_t)sb.st_size - got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(fd);
	if (got != (size_t)sb.st_size) {
		free(buf);
		return NULL;
	}
	buf[got] = 0;	/* PTX images are NUL-terminated text */
	return buf;
}

#endif
