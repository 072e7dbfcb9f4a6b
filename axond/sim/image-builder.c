// SPDX-License-Identifier: MIT
/*
 * sim/image-builder: kernels and globals appended to the image being read,
 * under the limits of image.h (see image-builder.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image-builder.h"

int sim_fail(struct sim_builder *b, int rc, const char *fmt, ...)
{
	va_list ap;

	if (b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err, b->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

char *sim_dup_name(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* Appends a kernel; takes ownership of name and params even on failure. */
static int add_kernel(struct sim_builder *b, char *name, uint32_t nparams,
		      uint32_t args_size, struct sim_param *params, uint32_t calls)
{
	struct sim_image *img = b->img;

	if (img->nkernels == b->kcap) {
		size_t cap = b->kcap ? 2 * b->kcap : 16;
		struct sim_kernel_desc *k;

		if (img->nkernels >= SIM_IMAGE_MAX_KERNELS) {
			free(name);
			free(params);
			return sim_fail(b, -E2BIG, "more than %u kernels",
					SIM_IMAGE_MAX_KERNELS);
		}
		k = realloc(img->kernels, cap * sizeof(*k));
		if (!k) {
			free(name);
			free(params);
			return sim_fail(b, -ENOMEM, "out of memory");
		}
		img->kernels = k;
		b->kcap = cap;
	}
	img->kernels[img->nkernels++] = (struct sim_kernel_desc){
		.name = name, .nparams = nparams, .args_size = args_size,
		.params = params, .calls = calls,
	};
	return 0;
}

/*
 * Accounts for size bytes of initial value about to be allocated: a small
 * image must not make a large allocation (ELF symbols can all point at the
 * same bytes, a PTX array can be large with a short initialiser).
 */
int sim_reserve_init(struct sim_builder *b, const char *name, uint64_t size)
{
	if (size > SIM_IMAGE_MAX_INIT - b->init_total)
		return sim_fail(b, -E2BIG,
				"global %s: initial values over %u bytes in all",
				name, SIM_IMAGE_MAX_INIT);
	b->init_total += size;
	return 0;
}

/*
 * Appends a global; takes ownership of name and init (NULL or size bytes,
 * reserved with sim_reserve_init()) even on failure.
 */
int sim_add_global(struct sim_builder *b, char *name, uint64_t size,
		   enum sim_global_space space, uint32_t flags,
		   uint8_t *init)
{
	struct sim_image *img = b->img;
	uint64_t i;

	/* all-zero initial bytes (an uninitialised __constant__): NULL */
	for (i = 0; init && i < size && !init[i]; i++)
		;
	if (init && i == size) {
		free(init);
		init = NULL;
		b->init_total -= size;
	}
	if (img->nglobals == b->gcap) {
		size_t cap = b->gcap ? 2 * b->gcap : 16;
		struct sim_global_desc *g;

		if (img->nglobals >= SIM_IMAGE_MAX_GLOBALS) {
			free(name);
			free(init);
			return sim_fail(b, -E2BIG, "more than %u globals",
					SIM_IMAGE_MAX_GLOBALS);
		}
		g = realloc(img->globals, cap * sizeof(*g));
		if (!g) {
			free(name);
			free(init);
			return sim_fail(b, -ENOMEM, "out of memory");
		}
		img->globals = g;
		b->gcap = cap;
	}
	img->globals[img->nglobals++] = (struct sim_global_desc){
		.name = name, .size = size, .space = space, .flags = flags,
		.init = init,
	};
	return 0;
}

int sim_param_set(struct sim_builder *b, struct sim_param_table *t,
		  const char *kname, uint32_t ord, uint32_t off,
		  uint32_t size)
{
	if (ord >= SIM_IMAGE_MAX_PARAMS)
		return sim_fail(b, -E2BIG,
				"kernel %s: parameter ordinal %u over the limit of %u",
				kname, ord, SIM_IMAGE_MAX_PARAMS);
	if (t->seen[ord])
		return sim_fail(b, -EINVAL,
				"kernel %s: parameter %u described twice", kname,
				ord);
	if ((uint64_t)off + size > SIM_IMAGE_MAX_ARGS_SIZE)
		return sim_fail(b, -E2BIG,
				"kernel %s: parameter %u (offset %u, size %u) beyond %u bytes",
				kname, ord, off, size, SIM_IMAGE_MAX_ARGS_SIZE);
	t->seen[ord] = true;
	t->p[ord] = (struct sim_param){ .offset = off, .size = size };
	if (ord + 1 > t->n)
		t->n = ord + 1;
	if (off + size > t->max_end)
		t->max_end = off + size;
	return 0;
}

/* Checks the table and adds the kernel; takes ownership of name. */
int sim_param_finish(struct sim_builder *b, struct sim_param_table *t,
		     char *name, bool have_size, uint32_t args_size)
{
	struct sim_param *params = NULL;
	uint32_t i;

	for (i = 0; i < t->n; i++) {
		if (!t->seen[i]) {
			sim_fail(b, -EINVAL, "kernel %s: parameter %u missing",
				 name, i);
			free(name);
			return -EINVAL;
		}
		if (i && t->p[i].offset <
			 (uint64_t)t->p[i - 1].offset + t->p[i - 1].size) {
			sim_fail(b, -EINVAL,
				 "kernel %s: parameter %u (offset %u) overlaps parameter %u",
				 name, i, t->p[i].offset, i - 1);
			free(name);
			return -EINVAL;
		}
	}
	if (!have_size)
		args_size = t->max_end;
	if (args_size < t->max_end || args_size > SIM_IMAGE_MAX_ARGS_SIZE) {
		sim_fail(b, -EINVAL,
			 "kernel %s: parameter size %u inconsistent (parameters end at %u, limit %u)",
			 name, args_size, t->max_end, SIM_IMAGE_MAX_ARGS_SIZE);
		free(name);
		return -EINVAL;
	}
	if (t->n) {
		params = malloc(t->n * sizeof(*params));
		if (!params) {
			free(name);
			return sim_fail(b, -ENOMEM, "out of memory");
		}
		memcpy(params, t->p, t->n * sizeof(*params));
	}
	return add_kernel(b, name, t->n, args_size, params, t->calls);
}

uint32_t sim_call_of(const char *name, size_t nlen)
{
	static const struct { const char *name; uint32_t call; } calls[] = {
		/* measured on the H200 (localmem.c): vprintf, malloc; the
		 * others are the same runtime's calls (assert prints through
		 * the printf FIFO, free is the heap's), taken as theirs */
		{ "vprintf", SIM_IMAGE_CALLS_PRINTF },
		{ "__assertfail", SIM_IMAGE_CALLS_PRINTF },
		{ "malloc", SIM_IMAGE_CALLS_MALLOC },
		{ "free", SIM_IMAGE_CALLS_MALLOC },
	};
	size_t i;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strlen(calls[i].name) == nlen && !memcmp(calls[i].name, name, nlen))
			return calls[i].call;
	return 0;
}

void sim_note_call(struct sim_builder *b, const char *name, size_t nlen)
{
	b->img->calls |= sim_call_of(name, nlen);
}
