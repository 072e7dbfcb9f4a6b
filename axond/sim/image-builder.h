/* SPDX-License-Identifier: MIT */
/*
 * sim/image-builder: the image being assembled while a reader (cubin.c,
 * ptx-parse.c) walks its input: kernels and globals appended under the
 * limits of image.h, parameter tables checked before a kernel is kept, and
 * the first error's message. The readers sit above it; image.c creates a
 * builder, runs the readers and sorts what they found.
 */
#ifndef AXOND_SIM_IMAGE_BUILDER_H
#define AXOND_SIM_IMAGE_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "image.h"

struct sim_builder {
	struct sim_image *img;
	size_t kcap, gcap;
	uint64_t init_total;	/* bytes of initial values kept */
	char *err;
	size_t errlen;
};

/*
 * Parameters collected by ordinal, then checked and laid out: ordinals
 * 0..n-1 each exactly once, offsets rising without overlap.
 */
struct sim_param_table {
	uint32_t n;			/* 1 + highest ordinal seen */
	uint32_t max_end;
	struct sim_param p[SIM_IMAGE_MAX_PARAMS];
	bool seen[SIM_IMAGE_MAX_PARAMS];
	uint32_t calls;			/* the kernel's SIM_IMAGE_CALLS_* */
};

/*
 * SASS for sm_XY runs on a device of compute capability X.Z, Z >= Y, only:
 * not across major versions (sm_80 code does not run on 9.0).
 */
static inline bool sim_sm_runs(uint32_t arch)
{
	return arch / 10 == SIM_IMAGE_SM / 10 && arch <= SIM_IMAGE_SM;
}

/* Writes the message into the caller's buffer and returns rc. */
__attribute__((format(printf, 3, 4)))
int sim_fail(struct sim_builder *b, int rc, const char *fmt, ...);

/* A NUL-terminated copy of s[0..n), or NULL. */
char *sim_dup_name(const char *s, size_t n);

/*
 * Accounts for size bytes of initial value about to be allocated, or
 * -E2BIG past SIM_IMAGE_MAX_INIT in all.
 */
int sim_reserve_init(struct sim_builder *b, const char *name, uint64_t size);

/*
 * Appends a global; takes ownership of name and init (NULL or size bytes,
 * reserved with sim_reserve_init()) even on failure.
 */
int sim_add_global(struct sim_builder *b, char *name, uint64_t size,
		   enum sim_global_space space, uint32_t flags,
		   uint8_t *init);

/* Records parameter ord of kernel kname at [off, off + size). */
int sim_param_set(struct sim_builder *b, struct sim_param_table *t,
		  const char *kname, uint32_t ord, uint32_t off,
		  uint32_t size);

/*
 * Checks the table and appends the kernel (args_size from the image when
 * have_size, else the end of the last parameter); takes ownership of name.
 */
int sim_param_finish(struct sim_builder *b, struct sim_param_table *t,
		     char *name, bool have_size, uint32_t args_size);

/* An undefined function the image's code calls, named name (nlen bytes):
 * the device runtime's calls are noted in img->calls (SIM_IMAGE_CALLS_*). */
void sim_note_call(struct sim_builder *b, const char *name, size_t nlen);
/* The SIM_IMAGE_CALLS_* bit of the device runtime function name, or 0. */
uint32_t sim_call_of(const char *name, size_t nlen);

#endif /* AXOND_SIM_IMAGE_BUILDER_H */
