// SPDX-License-Identifier: MIT
/*
 * Decompression bounds of fatbin images (see imagelimits.h). The layout is
 * the one axond/sim/image.c documents and parses: a container header
 * (magic 0xba55ed50, u16 header size at 6, u64 entries' bytes at 8), then
 * entries (u32 header size at 4, u64 payload size at 8, u32 compressed
 * size at 16, u64 flags at 40, u64 inflated size at 56).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "imagelimits.h"

#define FATBIN_MAGIC		0xba55ed50U
#define FATBIN_HDR_MIN		16
#define FATBIN_ENTRY_HDR_MIN	64
#define FATBIN_F_COMPRESSED	(0x2000ULL | 0x8000ULL)	/* LZ4, ZSTD */

static uint64_t rd(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);	/* little-endian, as the format and axon are */
	return v;
}

int image_check_limits(const void *image, size_t len, const struct image_limits *lim,
		       char *err, size_t errlen)
{
	const unsigned char *d = image;
	uint64_t off = 0;

	if (errlen)
		err[0] = 0;
	while (len - off >= FATBIN_HDR_MIN && rd(d + off, 4) == FATBIN_MAGIC) {
		uint64_t hs = rd(d + off + 6, 2), size = rd(d + off + 8, 8), eo, eend;

		if (hs < FATBIN_HDR_MIN || hs > len - off || size > len - off - hs)
			return 0;	/* malformed: the parser says so */
		eo = off + hs;
		eend = eo + size;
		while (eend - eo >= FATBIN_ENTRY_HDR_MIN) {
			const unsigned char *h = d + eo;
			uint64_t ehs = rd(h + 4, 4), psize = rd(h + 8, 8);
			uint64_t csize = rd(h + 16, 4), flags = rd(h + 40, 8);
			uint64_t usize = rd(h + 56, 8);

			if (ehs < FATBIN_ENTRY_HDR_MIN || ehs > eend - eo ||
			    psize > eend - eo - ehs)
				return 0;
			/* As the parser reads it: no compressed size, or one
			 * past the payload, means the whole payload. */
			if (!csize || csize > psize)
				csize = psize;
			if ((flags & FATBIN_F_COMPRESSED) && usize > lim->max_inflate) {
				snprintf(err, errlen,
					 "fatbin entry at %llu inflates to %llu bytes, over the limit of %llu (axond --max-inflate)",
					 (unsigned long long)eo, (unsigned long long)usize,
					 (unsigned long long)lim->max_inflate);
				return -E2BIG;
			}
			/* usize / csize > ratio, without dividing by zero or
			 * overflowing the product. */
			if ((flags & FATBIN_F_COMPRESSED) && usize &&
			    (!csize || (usize - 1) / csize >= lim->max_ratio)) {
				snprintf(err, errlen,
					 "fatbin entry at %llu inflates %llu bytes to %llu, more than %llu times (axond --max-inflate-ratio)",
					 (unsigned long long)eo, (unsigned long long)csize,
					 (unsigned long long)usize,
					 (unsigned long long)lim->max_ratio);
				return -E2BIG;
			}
			eo += ehs + psize;
		}
		off = eend;
	}
	return 0;
}
