/* SPDX-License-Identifier: MIT */
/*
 * cuclient.h - shared by the driver-API client programs in tests/bin/.
 * They are linked only against axon's libcuda.so.1 (the shim) and use only
 * cuda.h's own types and calls.
 *
 * Exit codes: 0 pass, 1 fail, 77 skip (a kernel image is missing; the
 * reason is the last line on stderr).
 */
#ifndef AXON_TESTS_CUCLIENT_H
#define AXON_TESTS_CUCLIENT_H

#include <stddef.h>
#include <stdio.h>
#include <cuda.h>

extern const char *cu_prog;	/* program name for messages */

/* "CUDA_ERROR_INVALID_VALUE" (from cuGetErrorName), or "CUresult <n>". */
const char *cu_name(CUresult r);

/* Aborts the program (exit 1) with a message naming the call. */
void cu_die(const char *call, const char *file, int line, CUresult r)
	__attribute__((noreturn));
void cu_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void cu_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* CK(cuX(...)): must succeed. */
#define CK(call)							\
	do {								\
		CUresult ck_r_ = (call);				\
		if (ck_r_ != CUDA_SUCCESS)				\
			cu_die(#call, __FILE__, __LINE__, ck_r_);	\
	} while (0)

/* EXPECT(cuX(...), CUDA_ERROR_Y): must return exactly that. */
#define EXPECT(call, want)						\
	do {								\
		CUresult ex_r_ = (call);				\
		if (ex_r_ != (want))					\
			cu_fail("%s:%d: %s returned %s (%d), expected %s (%d)", \
				__FILE__, __LINE__, #call, cu_name(ex_r_), \
				(int)ex_r_, cu_name(want), (int)(want)); \
	} while (0)

/* Directory holding kernels.{cubin,fatbin,ptx}: $AXON_KERNELS_DIR, else
 * $AXON_BUILD/tests/data, else <this program's dir>/../data. */
const char *cu_kernel_dir(void);
/*
 * Reads kernels.<ext> from cu_kernel_dir(), NUL-terminated (PTX is text);
 * exits 77 when it is missing.
 */
void *cu_load_kernels(const char *ext, size_t *len);
/* The file the shim was loaded from (dladdr of cuInit). */
const char *cu_driver_path(void);

/* Mangled names of the C++ kernels in tests/sim-kernels/kernels.cu. */
#define K_VECTOR_ADD	"_Z9vectorAddPKfS0_Pfi"
#define K_SCALE		"_Z5scalePffi"
#define K_FILL		"fill"
#define K_SAXPY		"saxpy"
#define K_ADD_ONE_U8	"add_one_u8"
#define K_IOTA_U32	"iota_u32"
/* In kernels.cu but not in the sim's built-in set (axond/sim/kernels.h). */
#define K_NOT_BUILTIN	"g_touch"

/* Blocks of 256 threads covering n elements. */
static inline unsigned int cu_blocks(size_t n)
{
	return (unsigned int)((n + 255) / 256);
}

#endif /* AXON_TESTS_CUCLIENT_H */
