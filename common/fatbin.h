/* SPDX-License-Identifier: MIT */
/*
 * fatbin: the layout of NVIDIA's fat binary container, and a bounded
 * walk over its entries, for every axon reader of module images (the
 * sim's image reader, axond's image limits, the shim's sizing and its
 * refused-image log). libc only: the shim links it.
 *
 * Layout (little-endian), as checked against CUDA 13.0 (nvcc/fatbinary
 * 13.0.88):
 *   container header: u32 magic 0xBA55ED50, u16 version (1), u16 header
 *	size (16), u64 bytes of entries that follow. Several containers
 *	may come back to back.
 *   entry: u16 kind (1 PTX, 2 ELF), u16 (0x0101), u32 header size (64,
 *	80 or 112: longer headers carry extra data), u64 payload size
 *	(padded to 8), u32 compressed size (0 if uncompressed), u32 offset
 *	of the extra header data (0 or 64), u16 minor, u16 major (PTX ISA
 *	for PTX), u32 arch (90 = sm_90 / compute_90), u32 name offset,
 *	u32 name length, u64 flags, u64 0, u64 uncompressed size (0 if
 *	uncompressed); payload right after the header.
 *   flags: 0x1 64-bit, 0x2 debug, 0x10 linux, 0x2000 LZ4 (a raw LZ4 block,
 *	nvcc -compress-mode=speed), 0x8000 ZSTD (a zstd frame; CUDA 13's
 *	default compresses PTX this way, -Xfatbin -compress-all everything).
 *
 * The __fatBinC_Wrapper_t a host program registers (magic 0x466243B1)
 * holds a pointer to the container in its own address space: only the
 * process that made it can follow it.
 *
 * The walk trusts nothing: every size is checked against what is left of
 * the image before it is used, and every step moves forward by at least a
 * header, so it ends after at most len / FATBIN_ENTRY_HDR_MIN entries.
 * Decompression is left to the reader that needs the code (the sim's);
 * fatbin_entry_codec() and fatbin_entry_csize() say how to call it.
 */
#ifndef AXON_COMMON_FATBIN_H
#define AXON_COMMON_FATBIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FATBIN_MAGIC		0xba55ed50U
#define FATBIN_WRAPPER_MAGIC	0x466243b1U

#define FATBIN_HDR_MIN		16	/* container header, bytes */
#define FATBIN_ENTRY_HDR_MIN	64	/* entry header, bytes */

/* Readers that keep per-entry state refuse images with more entries. */
#define FATBIN_MAX_ENTRIES	4096

#define FATBIN_KIND_PTX		1
#define FATBIN_KIND_ELF		2

#define FATBIN_F_LZ4		0x2000ULL
#define FATBIN_F_ZSTD		0x8000ULL
#define FATBIN_F_COMPRESSED	(FATBIN_F_LZ4 | FATBIN_F_ZSTD)

/* One entry, decoded from its header. */
struct fatbin_entry {
	uint64_t offset;		/* of its header, from the image's start */
	const uint8_t *header;		/* header_size bytes inside the image */
	const uint8_t *payload;		/* payload_size bytes inside the image */
	uint16_t kind;			/* FATBIN_KIND_*, or anything */
	uint32_t header_size;
	uint64_t payload_size;
	uint32_t compressed_size;	/* as stored: 0 or past the payload too */
	uint32_t arch;			/* 90: sm_90 (ELF) / compute_90 (PTX) */
	uint64_t flags;			/* FATBIN_F_* and others */
	uint64_t uncompressed_size;	/* as stored: unchecked */
};

/* What fatbin_next() found. */
enum fatbin_step {
	FATBIN_ERR_HEADER_SIZE = -4,	/* a container's header size */
	FATBIN_ERR_ENTRIES_SIZE = -3,	/* its entries past the image */
	FATBIN_ERR_TRUNCATED = -2,	/* an entry header cut short */
	FATBIN_ERR_OVERRUN = -1,	/* an entry past its container */
	FATBIN_END = 0,			/* no container follows */
	FATBIN_ENTRY = 1,		/* *e is the next entry */
};

/* A walk over every entry of every container; fields are private. */
struct fatbin_iter {
	const uint8_t *data;
	uint64_t len;
	uint64_t next_container;	/* offset of the next container header */
	uint64_t entry, entries_end;	/* the current container's entries */
	bool failed;
	enum fatbin_step error;		/* when failed */
	/* Set with an error: where, and the number at fault. */
	uint64_t fault_offset;
	uint64_t fault_value;		/* header size, or bytes of entries */
	uint64_t fault_room;		/* bytes left for what was at fault */
};

/* data[0..len) starts with a container header (magic and room for it). */
bool fatbin_is_container(const void *data, size_t len);

void fatbin_iter_init(struct fatbin_iter *it, const void *data, size_t len);

/*
 * The next entry into *e (FATBIN_ENTRY), the end (FATBIN_END: the bytes
 * left do not start a container), or a malformed header (FATBIN_ERR_*,
 * with fault_* set); after an end or an error it returns the same again.
 */
enum fatbin_step fatbin_next(struct fatbin_iter *it, struct fatbin_entry *e);

/*
 * The bytes a container claims for itself and its entries, read from the
 * 16-byte header at hdr, which the caller vouches is readable: for an
 * image in the caller's own memory, given without a length.
 */
uint64_t fatbin_container_extent(const void *hdr);

enum fatbin_codec {
	FATBIN_CODEC_NONE = 0,
	FATBIN_CODEC_LZ4,		/* a raw LZ4 block */
	FATBIN_CODEC_ZSTD,		/* a zstd frame */
	FATBIN_CODEC_BOTH,		/* both flags: not a known format */
};

enum fatbin_codec fatbin_entry_codec(const struct fatbin_entry *e);

/*
 * Bytes of compressed data in the payload: the stored compressed size,
 * or the whole payload when that is 0 or larger than the payload (as the
 * driver reads it).
 */
uint64_t fatbin_entry_csize(const struct fatbin_entry *e);

#endif /* AXON_COMMON_FATBIN_H */
