/* SPDX-License-Identifier: MIT */
/*
 * drv-gpu.h - what the driver-API programs of tests/gpu/ share: a
 * CUresult's name, and CK(), a call that must succeed (else the line that
 * says why, and exit 1). Their output is compared between a native run
 * and a run through axon (tests/gpu/gpucheck.sh), so nothing here prints
 * an address or a time.
 */
#ifndef AXON_TESTS_GPU_DRV_GPU_H
#define AXON_TESTS_GPU_DRV_GPU_H

#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>

static const char *ename(CUresult r)
{
	const char *s = NULL;

	if (cuGetErrorName(r, &s) || !s)
		return "CUresult ?";
	return s;
}

#define CK(x)								\
	do {								\
		CUresult r_ = (x);					\
		if (r_) {						\
			printf("FAIL %s:%d %s -> %s\n", __FILE__, __LINE__, #x, ename(r_)); \
			exit(1);					\
		}							\
	} while (0)

#endif
