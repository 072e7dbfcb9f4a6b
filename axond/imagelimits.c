// SPDX-License-Identifier: MIT
/*
 * Decompression bounds of fatbin images (see imagelimits.h), over the walk
 * of common/fatbin.h: the entries every reader of the image sees.
 */
#include <errno.h>
#include <stdio.h>

#include "fatbin.h"
#include "imagelimits.h"

int image_check_limits(const void *image, size_t len, const struct image_limits *lim,
		       char *err, size_t errlen)
{
	struct fatbin_iter it;
	struct fatbin_entry e;

	if (errlen)
		err[0] = 0;
	/* A malformed container ends the walk: the parser says so. */
	fatbin_iter_init(&it, image, len);
	while (fatbin_next(&it, &e) == FATBIN_ENTRY) {
		uint64_t csize = fatbin_entry_csize(&e), usize = e.uncompressed_size;

		if (!(e.flags & FATBIN_F_COMPRESSED))
			continue;
		if (usize > lim->max_inflate) {
			snprintf(err, errlen,
				 "fatbin entry at %llu inflates to %llu bytes, over the limit of %llu (axond --max-inflate)",
				 (unsigned long long)e.offset, (unsigned long long)usize,
				 (unsigned long long)lim->max_inflate);
			return -E2BIG;
		}
		/* usize / csize > ratio, without dividing by zero or
		 * overflowing the product. */
		if (usize && (!csize || (usize - 1) / csize >= lim->max_ratio)) {
			snprintf(err, errlen,
				 "fatbin entry at %llu inflates %llu bytes to %llu, more than %llu times (axond --max-inflate-ratio)",
				 (unsigned long long)e.offset, (unsigned long long)csize,
				 (unsigned long long)usize,
				 (unsigned long long)lim->max_ratio);
			return -E2BIG;
		}
	}
	return 0;
}
