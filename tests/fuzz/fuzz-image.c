// SPDX-License-Identifier: MIT
/*
 * fuzz-image: the input is a module image as a client hands it to
 * MODULE_LOAD, parsed by sim_image_parse() (axond/sim/image.c: ELF cubin,
 * fatbin containers and their LZ4 / ZSTD entries, PTX), which the sim
 * backend's module_load calls on it. Besides the sanitizers, what a parsed
 * image promises is checked: the limits of image.h, parameters in rising
 * order inside args_size, kernels sorted by name and found by it, names
 * terminated, and a message on every refusal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

static void fail(const char *what, const char *name)
{
	fprintf(stderr, "fuzz-image: %s%s%s\n", what, name ? ": " : "", name ? name : "");
	abort();
}

static void check_kernel(const struct sim_image *img, const struct sim_kernel_desc *k)
{
	uint32_t i, end = 0;

	if (!k->name || strlen(k->name) > SIM_IMAGE_MAX_NAME)
		fail("kernel name", k->name);
	if (k->nparams > SIM_IMAGE_MAX_PARAMS || k->args_size > SIM_IMAGE_MAX_ARGS_SIZE)
		fail("kernel over the limits", k->name);
	for (i = 0; i < k->nparams; i++) {
		const struct sim_param *p = &k->params[i];

		if (p->offset < end || (uint64_t)p->offset + p->size > k->args_size)
			fail("parameter out of order or past args_size", k->name);
		end = p->offset + p->size;
	}
	if (sim_image_find_kernel(img, k->name) != k)
		fail("kernel not found by its own name", k->name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sim_image *img = (void *)1;
	char err[256];
	size_t i;
	int ret;

	memset(err, 'x', sizeof(err));
	ret = sim_image_parse(data, size, &img, err, sizeof(err));
	if (ret) {
		if (ret != -EINVAL && ret != -ENOEXEC && ret != -ENOTSUP && ret != -E2BIG &&
		    ret != -ENOMEM)
			fail("an error image.h does not list", NULL);
		if (img || !memchr(err, 0, sizeof(err)) || !err[0])
			fail("a refusal without *out = NULL and a message", NULL);
		return 0;
	}
	if (!img || img->nkernels > SIM_IMAGE_MAX_KERNELS ||
	    img->nglobals > SIM_IMAGE_MAX_GLOBALS)
		fail("image over the limits", NULL);
	for (i = 0; i < img->nkernels; i++) {
		check_kernel(img, &img->kernels[i]);
		if (i && strcmp(img->kernels[i - 1].name, img->kernels[i].name) >= 0)
			fail("kernels not sorted and unique", img->kernels[i].name);
	}
	for (i = 0; i < img->nglobals; i++) {
		const struct sim_global_desc *g = &img->globals[i];

		if (!g->name || strlen(g->name) > SIM_IMAGE_MAX_NAME)
			fail("global name", g->name);
		if (!sim_image_find_global(img, g->name))
			fail("global not found by its own name", g->name);
		/* The initial bytes are all there: read each (ASan checks). */
		if (g->init && g->size) {
			volatile uint8_t sum = 0;
			uint64_t b;

			for (b = 0; b < g->size; b += 4096)
				sum ^= g->init[b];
			sum ^= g->init[g->size - 1];
			(void)sum;
		}
	}
	sim_image_free(img);
	return 0;
}
