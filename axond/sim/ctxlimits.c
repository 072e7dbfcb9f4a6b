// SPDX-License-Identifier: MIT
/*
 * The sim's context limits that spend memory (CTX_LIMIT; the daemon's
 * localmem.c charges them): a fresh context's values and the driver's
 * rounding as NVIDIA's driver 580.159.04 showed them on an H200 (bench/gpu/
 * chargecheck): the stack in 16-byte steps and below 512 KiB, the heap in
 * 64 KiB steps from 4 MiB up to the device's memory, the FIFO in 256-byte
 * steps. The sim's kernels use neither, so nothing else follows from them.
 */
#include <cuda.h>

#include "sim.h"

#define SIM_STACK	1024
#define SIM_HEAP	(8ULL << 20)
#define SIM_HEAP_MIN	(4ULL << 20)
#define SIM_STACK_MAX	(512ULL << 10)

static uint64_t round_up(uint64_t v, uint64_t a)
{
	if (v > UINT64_MAX - (a - 1))
		return UINT64_MAX / a * a;
	return (v + a - 1) / a * a;
}

int sim_limit(struct sim_limits *l, const struct axon_device_info *dev, int limit,
	      bool set, uint64_t *value)
{
	uint64_t *v;

	if (!l->init) {
		l->stack = SIM_STACK;
		l->heap = SIM_HEAP;
		l->fifo = dev->printf_fifo_size;
		l->init = true;
	}
	switch (limit) {
	case CU_LIMIT_STACK_SIZE:
		v = &l->stack;
		if (set && *value >= SIM_STACK_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		if (set)
			*v = round_up(*value, 16);
		break;
	case CU_LIMIT_MALLOC_HEAP_SIZE:
		v = &l->heap;
		if (set) {
			uint64_t h = *value < SIM_HEAP_MIN ? SIM_HEAP_MIN : *value;

			h = round_up(h, 64 << 10);
			*v = h > dev->total_mem ? dev->total_mem : h;
		}
		break;
	case CU_LIMIT_PRINTF_FIFO_SIZE:
		v = &l->fifo;
		if (set)
			*v = round_up(*value ? *value : 1, 256);
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	*value = *v;
	return CUDA_SUCCESS;
}
