/* SPDX-License-Identifier: MIT */
/*
 * sim/kernelset: the kernels the sim can run, from the kernels object given
 * with --sim-kernels=PATH (kernels-abi.h). Without one the sim still runs
 * copies, memsets and module loads; a launch of any kernel fails with
 * CUDA_ERROR_NOT_SUPPORTED, as one of a kernel the object does not know.
 *
 * Loaded once, at backend start-up, before any client; read-only after,
 * so lookups need no lock.
 */
#ifndef AXOND_SIM_KERNELSET_H
#define AXOND_SIM_KERNELSET_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels-abi.h"

/*
 * dlopen()s the object at path, calls its entry point and installs its
 * kernels. 0, or -1 with the reason in err (always NUL-terminated).
 */
int sim_kernelset_load(const char *path, char *err, size_t errlen);

/*
 * Installs ops as the object's entry point returned them, after checking
 * their ABI version and struct sizes (for a binary that links the kernels
 * itself, as the fuzzers do). 0, or -1 with the reason in err.
 */
int sim_kernelset_install(const struct sim_kernels_ops *ops, const char *what,
			  char *err, size_t errlen);

/* Some kernels object is installed. */
bool sim_kernelset_loaded(void);

/* What the installed object says it is, for the log; "" if none. */
const char *sim_kernelset_name(void);

/* The kernel for symbol, or NULL (none installed, or not one of them). */
const struct sim_kernel *sim_kernelset_find(const char *symbol);

#endif /* AXOND_SIM_KERNELSET_H */
