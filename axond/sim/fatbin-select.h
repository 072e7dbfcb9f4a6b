/* SPDX-License-Identifier: MIT */
/*
 * sim/fatbin-select: which entry of a fatbin the sim device runs, inflated
 * when compressed. The container is walked with common/fatbin.h; the entry
 * chosen is, as the driver would on a 9.0 device, the ELF for the highest
 * sm_9x <= SIM_IMAGE_SM, else the PTX for the highest compute_XX <=
 * SIM_IMAGE_SM, else none (-ENOEXEC). image.c hands the code to the cubin
 * or PTX reader.
 */
#ifndef AXOND_SIM_FATBIN_SELECT_H
#define AXOND_SIM_FATBIN_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "image-builder.h"

struct sim_fatbin_code {
	enum sim_image_code kind;	/* SIM_CODE_ELF or SIM_CODE_PTX */
	uint32_t arch;			/* the entry's sm / compute version */
	const uint8_t *data;		/* the code: in the image, or buf */
	size_t len;
	uint8_t *buf;			/* inflated copy to free, or NULL */
};

/*
 * Chooses and, if compressed, inflates the entry of the fatbin d[0..len)
 * (at most SIM_IMAGE_MAX_DECOMPRESSED bytes). An ELF entry is checked to be
 * ELF. 0 and *code (free code->buf), or a negative errno.
 */
int sim_fatbin_select(struct sim_builder *b, const uint8_t *d, size_t len,
		      struct sim_fatbin_code *code);

#endif /* AXOND_SIM_FATBIN_SELECT_H */
