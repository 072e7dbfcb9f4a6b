/* SPDX-License-Identifier: MIT */
/*
 * sim/cubin: the reader of ELF cubins (EM_CUDA), given directly or found
 * in a fatbin: kernels with their parameter layouts, and globals with
 * their initial bytes, appended to the builder. See image.h for what is
 * accepted and cubin.c for the layout read.
 */
#ifndef AXOND_SIM_CUBIN_H
#define AXOND_SIM_CUBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image-builder.h"

/*
 * Reads the cubin d[0..len) into b. check_arch: refuse SASS that a 9.0
 * device would not run (a fatbin's entry was chosen for it already).
 * Sets b->img->sm_arch from the ELF flags. 0 or a negative errno.
 */
int sim_cubin_read(struct sim_builder *b, const uint8_t *d, size_t len,
		   bool check_arch);

#endif /* AXOND_SIM_CUBIN_H */
