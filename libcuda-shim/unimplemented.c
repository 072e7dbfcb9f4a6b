/* SPDX-License-Identifier: MIT */
/*
 * unimplemented.c - what every generated stub returns through.
 *
 * "Once per name" is kept in a fixed open-addressing set of name pointers,
 * filled with compare-and-swap, so that the first call of each stub logs and
 * later ones (from any thread) do not, with no lock, no allocation and
 * nothing to initialise. Names are compared by content, so two copies of
 * one literal count as one name. Should the set ever fill up (it is four
 * times the number of stubs), the extra names are logged every time rather
 * than dropped.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim-internal-gen.h"

#define SEEN_SLOTS 4096		/* power of two */

static _Atomic(const char *) seen[SEEN_SLOTS];

/* FNV-1a */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* true the first time @name is offered */
static int first_time(const char *name)
{
	uint32_t i = name_hash(name);

	for (unsigned int n = 0; n < SEEN_SLOTS; n++, i++) {
		_Atomic(const char *) *slot = &seen[i & (SEEN_SLOTS - 1)];
		const char *cur = atomic_load_explicit(slot, memory_order_acquire);

		if (!cur) {
			if (atomic_compare_exchange_strong_explicit(slot, &cur, name,
					memory_order_acq_rel, memory_order_acquire))
				return 1;
			/* lost the race: cur now holds the winner's name */
		}
		if (cur == name || strcmp(cur, name) == 0)
			return 0;
	}
	return 1;
}

static int log_enabled(void)
{
	const char *v = getenv("AXON_LOG");

	return !(v && strcmp(v, "0") == 0);
}

CUresult axon_shim_unimplemented(const char *name)
{
	if (!name)
		name = "(unnamed)";
	if (log_enabled() && first_time(name)) {
		char line[256];
		int n = snprintf(line, sizeof(line), "axon: %s is not implemented\n", name);

		if (n > 0) {
			size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
			ssize_t w = write(STDERR_FILENO, line, len);	/* one write: one line */

			(void)w;
		}
	}
	return CUDA_ERROR_NOT_SUPPORTED;
}
