// SPDX-License-Identifier: MIT
/*
 * sim/image: a module image's kernels and globals (see image.h). This file
 * assembles the image from the readers below it: it tells the formats
 * apart, has fatbin-select.c choose a fatbin's entry, runs the cubin
 * (cubin.c) or PTX (ptx-parse.c) reader over the code, and sorts and
 * checks what they appended to the builder (image-builder.c).
 *
 * Nothing of the input is referenced after sim_image_parse() returns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <axon/protocol.h>

#include "fatbin.h"
#include "cubin.h"
#include "fatbin-select.h"
#include "image.h"
#include "image-builder.h"
#include "ptx-parse.h"

_Static_assert(SIM_IMAGE_MAX_PARAMS == AXON_MAX_KERNEL_PARAMS,
	       "parameter limit must match the uapi");
_Static_assert(SIM_IMAGE_MAX_ARGS_SIZE == AXON_MAX_ARGS_SIZE,
	       "argument size limit must match the uapi");

/* The chosen entry's code, read by its own reader. */
static int read_fatbin(struct sim_builder *b, const uint8_t *d, size_t len)
{
	struct sim_fatbin_code code;
	int rc;

	rc = sim_fatbin_select(b, d, len, &code);
	if (rc)
		return rc;
	b->img->code_kind = code.kind;
	if (code.kind == SIM_CODE_ELF)
		rc = sim_cubin_read(b, code.data, code.len, false);
	else
		rc = sim_ptx_read(b, code.data, code.len);
	/* the entry's architecture, whatever its code says */
	b->img->sm_arch = code.arch;
	free(code.buf);
	return rc;
}

static int kernel_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sim_kernel_desc *)a)->name,
		      ((const struct sim_kernel_desc *)b)->name);
}

void sim_image_free(struct sim_image *img)
{
	size_t i;

	if (!img)
		return;
	for (i = 0; i < img->nkernels; i++) {
		free(img->kernels[i].name);
		free(img->kernels[i].params);
	}
	for (i = 0; i < img->nglobals; i++) {
		free(img->globals[i].name);
		free(img->globals[i].init);
	}
	free(img->kernels);
	free(img->globals);
	free(img);
}

int sim_image_parse(const void *data, size_t len, struct sim_image **out,
		    char *err, size_t errlen)
{
	struct sim_builder b = { .err = err, .errlen = errlen };
	const uint8_t *d = data;
	uint32_t magic;
	size_t i;
	int rc;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (!d || len < 4)
		return sim_fail(&b, -EINVAL, "image too short (%zu bytes)",
				d ? len : 0);
	b.img = calloc(1, sizeof(*b.img));
	if (!b.img)
		return sim_fail(&b, -ENOMEM, "out of memory");

	memcpy(&magic, d, sizeof(magic));
	if (magic == FATBIN_WRAPPER_MAGIC) {
		rc = sim_fail(&b, -ENOTSUP,
			      "image is a __fatBinC_Wrapper_t (magic 0x466243b1), which holds a host pointer; pass the fatbin it points to (magic 0xba55ed50)");
	} else if (magic == FATBIN_MAGIC) {
		b.img->format = SIM_IMAGE_FATBIN;
		rc = read_fatbin(&b, d, len);
	} else if (!memcmp(d, "\177ELF", 4)) {
		b.img->format = SIM_IMAGE_CUBIN;
		b.img->code_kind = SIM_CODE_ELF;
		rc = sim_cubin_read(&b, d, len, true);
	} else if (sim_ptx_looks_like(d, len)) {
		b.img->format = SIM_IMAGE_PTX;
		b.img->code_kind = SIM_CODE_PTX;
		rc = sim_ptx_read(&b, d, len);
	} else {
		rc = sim_fail(&b, -EINVAL,
			      "unrecognised image (starts %02x %02x %02x %02x): not a cubin, fatbin or PTX",
			      d[0], d[1], d[2], d[3]);
	}
	if (!rc && b.img->nkernels) {
		qsort(b.img->kernels, b.img->nkernels,
		      sizeof(*b.img->kernels), kernel_cmp);
		for (i = 1; i < b.img->nkernels; i++) {
			if (!strcmp(b.img->kernels[i - 1].name,
				    b.img->kernels[i].name)) {
				rc = sim_fail(&b, -EINVAL, "kernel %s defined twice",
					      b.img->kernels[i].name);
				break;
			}
		}
	}
	if (rc) {
		sim_image_free(b.img);
		return rc;
	}
	*out = b.img;
	return 0;
}

const struct sim_kernel_desc *
sim_image_find_kernel(const struct sim_image *img, const char *name)
{
	size_t lo = 0, hi;

	if (!img || !name)
		return NULL;
	hi = img->nkernels;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, img->kernels[mid].name);

		if (!c)
			return &img->kernels[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct sim_global_desc *
sim_image_find_global(const struct sim_image *img, const char *name)
{
	size_t i;

	if (!img || !name)
		return NULL;
	for (i = 0; i < img->nglobals; i++)
		if (!strcmp(img->globals[i].name, name))
			return &img->globals[i];
	return NULL;
}
