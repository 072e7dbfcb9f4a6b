// SPDX-License-Identifier: MIT
/*
 * fatbin: the walk over a fat binary's containers and entries (fatbin.h).
 * Offsets are 64-bit and every subtraction is of a smaller value from a
 * larger one already checked, so no sum can wrap.
 */
#include <string.h>

#include "fatbin.h"
#include "le.h"

bool fatbin_is_container(const void *data, size_t len)
{
	return len >= FATBIN_HDR_MIN && rd32(data) == FATBIN_MAGIC;
}

void fatbin_iter_init(struct fatbin_iter *it, const void *data, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->data = data;
	it->len = len;
}

static enum fatbin_step fault(struct fatbin_iter *it, enum fatbin_step why,
			      uint64_t at, uint64_t value, uint64_t room)
{
	it->failed = true;
	it->error = why;
	it->fault_offset = at;
	it->fault_value = value;
	it->fault_room = room;
	return why;
}

/* Enters the container at next_container; false at the end or on error. */
static bool enter_container(struct fatbin_iter *it, enum fatbin_step *step)
{
	uint64_t off = it->next_container, hs, size;
	const uint8_t *h = it->data + off;

	if (it->len - off < FATBIN_HDR_MIN || rd32(h) != FATBIN_MAGIC) {
		*step = FATBIN_END;
		return false;
	}
	hs = rd16(h + 6);
	size = rd64(h + 8);
	if (hs < FATBIN_HDR_MIN || hs > it->len - off) {
		*step = fault(it, FATBIN_ERR_HEADER_SIZE, off, hs, 0);
		return false;
	}
	if (size > it->len - off - hs) {
		*step = fault(it, FATBIN_ERR_ENTRIES_SIZE, off, size,
			      it->len - off - hs);
		return false;
	}
	it->entry = off + hs;
	it->entries_end = it->entry + size;
	/* at least FATBIN_HDR_MIN further on: the walk ends */
	it->next_container = it->entries_end;
	return true;
}

enum fatbin_step fatbin_next(struct fatbin_iter *it, struct fatbin_entry *e)
{
	const uint8_t *h;
	uint64_t eo, room;
	enum fatbin_step step;

	if (it->failed)
		return it->error;
	while (it->entry >= it->entries_end)
		if (!enter_container(it, &step))
			return step;

	eo = it->entry;
	room = it->entries_end - eo;
	if (room < FATBIN_ENTRY_HDR_MIN)
		return fault(it, FATBIN_ERR_TRUNCATED, eo, room, room);
	h = it->data + eo;
	*e = (struct fatbin_entry){
		.offset = eo,
		.header = h,
		.kind = rd16(h),
		.header_size = rd32(h + 4),
		.payload_size = rd64(h + 8),
		.compressed_size = rd32(h + 16),
		.arch = rd32(h + 28),
		.flags = rd64(h + 40),
		.uncompressed_size = rd64(h + 56),
	};
	if (e->header_size < FATBIN_ENTRY_HDR_MIN || e->header_size > room ||
	    e->payload_size > room - e->header_size)
		return fault(it, FATBIN_ERR_OVERRUN, eo, e->header_size, room);
	e->payload = h + e->header_size;
	/* at least FATBIN_ENTRY_HDR_MIN further on */
	it->entry = eo + e->header_size + e->payload_size;
	return FATBIN_ENTRY;
}

uint64_t fatbin_container_extent(const void *hdr)
{
	const uint8_t *h = hdr;

	return (uint64_t)rd16(h + 6) + rd64(h + 8);
}

enum fatbin_codec fatbin_entry_codec(const struct fatbin_entry *e)
{
	bool lz4 = e->flags & FATBIN_F_LZ4, zstd = e->flags & FATBIN_F_ZSTD;

	if (lz4 && zstd)
		return FATBIN_CODEC_BOTH;
	return lz4 ? FATBIN_CODEC_LZ4 : zstd ? FATBIN_CODEC_ZSTD : FATBIN_CODEC_NONE;
}

uint64_t fatbin_entry_csize(const struct fatbin_entry *e)
{
	if (!e->compressed_size || e->compressed_size > e->payload_size)
		return e->payload_size;
	return e->compressed_size;
}
