/* SPDX-License-Identifier: MIT */
/* The cuda backend's profiler control (profilerctl.c). */
#ifndef AXOND_CUDA_PROFILERCTL_H
#define AXOND_CUDA_PROFILERCTL_H

#include <stdbool.h>

struct axond;
struct client;
struct ctx;

/* backend.h's profiler: cuProfilerStart/Stop in the client's context. */
int cuda_profiler(struct axond *d, struct client *c, struct ctx *ctx, bool start);

#endif
