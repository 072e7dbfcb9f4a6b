/* SPDX-License-Identifier: MIT */
/*
 * sim/ptx-parse: the reader of PTX text, given directly or found in a
 * fatbin: kernels from .entry parameter lists, globals from module-scope
 * .global and .const declarations, appended to the builder. It reads
 * declarations, it does not validate PTX (see image.h).
 */
#ifndef AXOND_SIM_PTX_PARSE_H
#define AXOND_SIM_PTX_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image-builder.h"

/* d[0..len) is text starting (after blanks and comments) with .version. */
bool sim_ptx_looks_like(const uint8_t *d, size_t len);

/*
 * Reads the PTX d[0..len) (up to its first NUL) into b; a .target above
 * sm_90 is refused with -ENOEXEC. Sets b->img->sm_arch from .target.
 * 0 or a negative errno.
 */
int sim_ptx_read(struct sim_builder *b, const uint8_t *d, size_t len);

#endif /* AXOND_SIM_PTX_PARSE_H */
