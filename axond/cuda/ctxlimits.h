/* SPDX-License-Identifier: MIT */
/* The cuda backend's context limits (ctxlimits.c; backend hook, backend.h). */
#ifndef AXOND_CUDA_CTXLIMITS_H
#define AXOND_CUDA_CTXLIMITS_H

#include <stdbool.h>
#include <stdint.h>
#include "../axond.h"

int cuda_ctx_limit(struct axond *d, struct client *c, int dev, int limit, bool set,
		   uint64_t *value);

#endif
