// SPDX-License-Identifier: MIT
/*
 * sim/fatbin-select: the fatbin entry for the sim device, inflated (see
 * fatbin-select.h; the layout is in common/fatbin.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "fatbin.h"
#include "fatbin-select.h"

static int inflate_entry(struct sim_builder *b, const struct fatbin_entry *e,
			 uint8_t **out, size_t *outlen)
{
	enum fatbin_codec codec = fatbin_entry_codec(e);
	uint64_t usize = e->uncompressed_size;
	uint64_t csize = fatbin_entry_csize(e);
	uint8_t *buf;

	if (codec == FATBIN_CODEC_BOTH)
		return sim_fail(b, -ENOTSUP,
				"fatbin: entry flags %#llx name two compressions",
				(unsigned long long)e->flags);
	if (!usize || usize > SIM_IMAGE_MAX_DECOMPRESSED)
		return sim_fail(b, usize ? -E2BIG : -EINVAL,
				"fatbin: bad uncompressed size %llu (limit %u)",
				(unsigned long long)usize,
				SIM_IMAGE_MAX_DECOMPRESSED);
	if (csize > INT32_MAX)
		return sim_fail(b, -E2BIG, "fatbin: compressed entry too large");
	buf = malloc(usize);
	if (!buf)
		return sim_fail(b, -ENOMEM, "out of memory");
	if (codec == FATBIN_CODEC_LZ4) {
		/* stops once usize bytes are out: padding is never read */
		int n = LZ4_decompress_safe_partial((const char *)e->payload,
						    (char *)buf, (int)csize,
						    (int)usize, (int)usize);

		if (n < 0 || (uint64_t)n != usize) {
			free(buf);
			return sim_fail(b, -EINVAL,
					"fatbin: corrupt LZ4 entry (%d of %llu bytes)",
					n, (unsigned long long)usize);
		}
		*outlen = (size_t)n;
	} else {
		size_t n = ZSTD_decompress(buf, usize, e->payload, csize);

		if (ZSTD_isError(n)) {
			free(buf);
			return sim_fail(b, -EINVAL, "fatbin: corrupt ZSTD entry: %s",
					ZSTD_getErrorName(n));
		}
		*outlen = n;
	}
	*out = buf;
	return 0;
}

/* The walk's error, in the words the reader has always used. */
static int walk_error(struct sim_builder *b, const struct fatbin_iter *it,
		      enum fatbin_step step)
{
	switch (step) {
	case FATBIN_ERR_HEADER_SIZE:
		return sim_fail(b, -EINVAL, "fatbin: bad header size %u",
				(unsigned)it->fault_value);
	case FATBIN_ERR_ENTRIES_SIZE:
		return sim_fail(b, -EINVAL,
				"fatbin: %llu bytes of entries, only %llu in the image",
				(unsigned long long)it->fault_value,
				(unsigned long long)it->fault_room);
	case FATBIN_ERR_TRUNCATED:
		return sim_fail(b, -EINVAL,
				"fatbin: truncated entry header at %llu",
				(unsigned long long)it->fault_offset);
	default:
		return sim_fail(b, -EINVAL,
				"fatbin: entry at %llu overruns the fatbin",
				(unsigned long long)it->fault_offset);
	}
}

/* A better entry of its kind than the one kept, if any. */
static bool better(const struct fatbin_entry *e, bool have,
		   const struct fatbin_entry *kept)
{
	bool runs = e->kind == FATBIN_KIND_ELF ? sim_sm_runs(e->arch) :
						 e->arch <= SIM_IMAGE_SM;

	return runs && (!have || e->arch > kept->arch);
}

int sim_fatbin_select(struct sim_builder *b, const uint8_t *d, size_t len,
		      struct sim_fatbin_code *code)
{
	struct fatbin_entry e, elf, ptx;
	const struct fatbin_entry *pick;
	bool have_elf = false, have_ptx = false;
	struct fatbin_iter it;
	enum fatbin_step step;
	unsigned nent = 0;
	char seen[160] = "";
	size_t seenlen = 0;
	int rc;

	memset(code, 0, sizeof(*code));
	fatbin_iter_init(&it, d, len);
	while ((step = fatbin_next(&it, &e)) == FATBIN_ENTRY) {
		if (++nent > FATBIN_MAX_ENTRIES)
			return sim_fail(b, -E2BIG, "fatbin: more than %u entries",
					FATBIN_MAX_ENTRIES);
		if (seenlen < sizeof(seen) - 24)
			seenlen += (size_t)snprintf(seen + seenlen,
					sizeof(seen) - seenlen, "%s%s_%u",
					seenlen ? " " : "",
					e.kind == FATBIN_KIND_ELF ? "sm" :
					e.kind == FATBIN_KIND_PTX ?
					"compute" : "kind?", e.arch);
		if (e.kind == FATBIN_KIND_ELF && better(&e, have_elf, &elf)) {
			elf = e;
			have_elf = true;
		} else if (e.kind == FATBIN_KIND_PTX && better(&e, have_ptx, &ptx)) {
			ptx = e;
			have_ptx = true;
		}
	}
	if (step != FATBIN_END)
		return walk_error(b, &it, step);
	if (!nent)
		return sim_fail(b, -EINVAL, "fatbin: no entries");
	pick = have_elf ? &elf : have_ptx ? &ptx : NULL;
	if (!pick)
		return sim_fail(b, -ENOEXEC,
				"fatbin: no ELF for sm_%u.. sm_%u and no PTX for compute_%u or lower (has: %s)",
				SIM_IMAGE_SM / 10 * 10, SIM_IMAGE_SM, SIM_IMAGE_SM,
				seen);
	code->kind = pick == &elf ? SIM_CODE_ELF : SIM_CODE_PTX;
	code->arch = pick->arch;
	code->data = pick->payload;
	code->len = pick->payload_size;
	if (fatbin_entry_codec(pick) != FATBIN_CODEC_NONE) {
		rc = inflate_entry(b, pick, &code->buf, &code->len);
		if (rc)
			return rc;
		code->data = code->buf;
	}
	if (code->kind == SIM_CODE_ELF &&
	    (code->len < 4 || memcmp(code->data, "\177ELF", 4))) {
		free(code->buf);
		code->buf = NULL;
		return sim_fail(b, -EINVAL, "fatbin: ELF entry is not ELF");
	}
	return 0;
}
