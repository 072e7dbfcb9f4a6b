/* SPDX-License-Identifier: MIT */
/*
 * imagelimits: what a module image may cost to load, checked before any
 * backend looks at it (axond --max-image, --max-inflate,
 * --max-inflate-ratio; Documentation/admin.md, "Limits").
 *
 * A fatbin's entries may be LZ4- or ZSTD-compressed, each header naming the
 * size it inflates to: a few KiB may claim hundreds of MiB, which the sim's
 * parser and NVIDIA's driver alike allocate and fill. Every compressed entry
 * of every container is checked, whichever one a backend would pick: its
 * inflated size against max_inflate, and that size against max_ratio times
 * its compressed size. The walk is common/fatbin.h's, the one the sim's
 * reader uses, reading the headers as the driver does; a malformed
 * container ends the walk and is left for the parser to refuse.
 */
#ifndef AXOND_IMAGELIMITS_H
#define AXOND_IMAGELIMITS_H

#include <stddef.h>
#include <stdint.h>

/* Defaults (axond/main.c). */
#define AXOND_MAX_IMAGE_DEFAULT		(256ULL << 20)
#define AXOND_MAX_INFLATE_DEFAULT	(256ULL << 20)
#define AXOND_MAX_INFLATE_RATIO_DEFAULT	1024

struct image_limits {
	uint64_t max_inflate;	/* bytes one entry may inflate to */
	uint64_t max_ratio;	/* inflated / compressed bytes, at most */
};

/* 0, or -E2BIG with the reason in err (always NUL-terminated). */
int image_check_limits(const void *image, size_t len, const struct image_limits *lim,
		       char *err, size_t errlen);

#endif
