/* SPDX-License-Identifier: MIT */
/*
 * The CUDA errors that poison a context: after one, the driver answers
 * every later call of that context (of the whole process, for NVIDIA's
 * driver) with it. One list for the shim (a device fault seen in a
 * completion), the dispatcher (latching the sticky error) and the cuda
 * backend (poisoning its context).
 */
#ifndef AXON_COMMON_CUERR_H
#define AXON_COMMON_CUERR_H

#include <stdbool.h>
#include <stdint.h>
#include <cuda.h>

static inline bool axon_cu_sticky(int64_t r)
{
	switch (r) {
	case CUDA_ERROR_ILLEGAL_ADDRESS:
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:
	case CUDA_ERROR_MISALIGNED_ADDRESS:
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:
	case CUDA_ERROR_INVALID_PC:
	case CUDA_ERROR_LAUNCH_FAILED:
	case CUDA_ERROR_HARDWARE_STACK_ERROR:
	case CUDA_ERROR_ASSERT:
	case CUDA_ERROR_LAUNCH_TIMEOUT:
		return true;
	default:
		return false;
	}
}

#endif
