// SPDX-License-Identifier: MIT
/*
 * attack-modload-limits: what one module load may cost the daemon.
 *
 * - A decompression bomb: a fatbin whose ZSTD entry is a real cubin
 *   followed by RLE blocks of zeros, some 35 KiB inflating to 128 MiB,
 *   was inflated and loaded; it is refused (CUDA_ERROR_INVALID_IMAGE,
 *   --max-inflate-ratio 1024), as is one claiming more than --max-inflate
 *   (256 MiB). A fatbin nvcc compressed still loads.
 * - An image over --max-image (256 MiB) was copied and parsed; it is
 *   refused with CUDA_ERROR_INVALID_VALUE before anything is copied.
 * - Loads in flight: a client had any number; it has at most
 *   --max-module-loads (4), more are refused with CUDA_ERROR_OUT_OF_MEMORY.
 * Each refusal leaves a line in axond's log naming the option.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define MiB		(1ull << 20)
#define ZSTD_BLOCK_MAX	(128u << 10)

static unsigned char *read_file(const char *path, size_t *len)
{
	unsigned char *buf = NULL;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

static void put(unsigned char *p, uint64_t v, unsigned int n)
{
	memcpy(p, &v, n);	/* little-endian, as the format */
}

/*
 * A fatbin with one ZSTD-compressed sm_90 ELF entry that inflates to
 * usize bytes: a raw block holding elf, then RLE blocks of zeros. Returns
 * its length in out (room: 64 KiB + elf_len + usize / 32768).
 */
static size_t make_bomb(unsigned char *out, const unsigned char *elf, size_t elf_len,
			uint64_t usize)
{
	unsigned char *h = out + 16, *z = out + 16 + 64, *p = z;
	uint64_t left = usize - elf_len;
	size_t payload, total;

	/* ZSTD frame: magic, single segment with an 8-byte content size. */
	put(p, 0xfd2fb528u, 4);
	p[4] = 0xe0;
	put(p + 5, usize, 8);
	p += 13;
	put(p, (uint64_t)elf_len << 3 | (left ? 0 : 1), 3);	/* raw */
	memcpy(p + 3, elf, elf_len);
	p += 3 + elf_len;
	while (left) {
		uint64_t n = left < ZSTD_BLOCK_MAX ? left : ZSTD_BLOCK_MAX;

		left -= n;
		put(p, n << 3 | 1u << 1 | (left ? 0 : 1), 3);		/* RLE */
		p[3] = 0;
		p += 4;
	}
	payload = (size_t)(p - z);
	total = 64 + payload;
	/* Container header: magic, version 1, header 16 bytes, entries. */
	memset(out, 0, 16 + 64);
	put(out, 0xba55ed50u, 4);
	put(out + 4, 1, 2);
	put(out + 6, 16, 2);
	put(out + 8, total, 8);
	/* Entry: ELF, header 64, payload, compressed size, sm_90, ZSTD,
	 * inflated size. */
	put(h, 2, 2);
	put(h + 2, 0x0101, 2);
	put(h + 4, 64, 4);
	put(h + 8, payload, 8);
	put(h + 16, payload, 4);
	put(h + 28, 90, 4);
	put(h + 40, 0x8000 | 0x1, 8);
	put(h + 56, usize, 8);
	return 16 + total;
}

static int32_t load(struct axon_ring *r, uint64_t ctx, const void *image, size_t len,
		    uint64_t *mod)
{
	struct axon_sqe s = { 0 };
	struct axon_cqe cqe;
	int ret;

	memcpy(r->data, image, len);
	axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
	s.obj.data_len = (uint32_t)len;
	ret = h_ring_sync(r, &s, &cqe, H_MS(60000));
	if (ret)
		return INT32_MIN;
	if (mod)
		*mod = cqe.aux[0];
	return cqe.res;
}

static void unload(struct axon_ring *r, uint64_t mod)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, AXON_OP_MODULE_UNLOAD, mod, 0, 0);
	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
}

/* Whether axond's log holds needle. */
static bool log_has(const char *needle)
{
	size_t len = 0;
	unsigned char *text = read_file(h_daemon.log, &len);
	bool found = text && memmem(text, len, needle, strlen(needle));

	free(text);
	return found;
}

START_TEST(decompression_bomb)
{
	size_t elf_len = 0, fat_len = 0, n;
	unsigned char *elf = read_file(h_kernel_path("cubin"), &elf_len);
	unsigned char *fat = read_file(h_kernel_path("fatbin"), &fat_len);
	unsigned char *bomb;
	struct axon_ring r;
	uint64_t ctx, mod;
	int32_t res;

	ck_assert_ptr_nonnull(elf);
	ck_assert_ptr_nonnull(fat);
	bomb = malloc(64 * 1024 + elf_len + (512 * MiB) / 32768);
	ck_assert_ptr_nonnull(bomb);
	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, NULL), 0);

	/* The bomb's frame is well formed: a small one loads. */
	n = make_bomb(bomb, elf, elf_len, elf_len + 1 * MiB);
	res = load(&r, ctx, bomb, n, &mod);
	ck_assert_msg(res == CUDA_SUCCESS, "a 1 MiB ZSTD entry: res %d", res);
	unload(&r, mod);

	/* ~35 KiB inflating to 128 MiB: over the ratio. */
	n = make_bomb(bomb, elf, elf_len, 128 * MiB);
	res = load(&r, ctx, bomb, n, NULL);
	ck_assert_msg(res == CUDA_ERROR_INVALID_IMAGE,
		      "a %zu-byte fatbin inflating to 128 MiB: res %d", n, res);
	ck_assert_msg(log_has("--max-inflate-ratio"), "no log line for the ratio");

	/* Claiming more than --max-inflate. */
	n = make_bomb(bomb, elf, elf_len, 512 * MiB);
	res = load(&r, ctx, bomb, n, NULL);
	ck_assert_msg(res == CUDA_ERROR_INVALID_IMAGE,
		      "a fatbin inflating to 512 MiB: res %d", res);
	ck_assert_msg(log_has("--max-inflate)"), "no log line for the inflated size");

	/* What nvcc makes still loads (its PTX entry is ZSTD-compressed). */
	res = load(&r, ctx, fat, fat_len, &mod);
	ck_assert_msg(res == CUDA_SUCCESS, "kernels.fatbin: res %d", res);
	unload(&r, mod);

	axon_close(&r);
	free(bomb);
	free(elf);
	free(fat);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

START_TEST(oversized_image)
{
	struct axon_params p = { .data_size = 512 * MiB };
	size_t elf_len = 0, len = 256 * MiB + 4096;
	unsigned char *elf = read_file(h_kernel_path("cubin"), &elf_len);
	struct axon_ring r;
	char err[256];
	uint64_t ctx, t0;
	int32_t res;

	ck_assert_ptr_nonnull(elf);
	ck_assert_msg(!axon_connect(h_daemon.addr, &p, &r, err, sizeof(err)), "connect: %s", err);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, NULL), 0);
	/* A real cubin, padded: an ELF parser ignores what follows it. */
	memcpy(r.data, elf, elf_len);
	memset(r.data + elf_len, 0, len - elf_len);
	{
		struct axon_sqe s = { 0 };
		struct axon_cqe cqe;

		axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
		s.obj.data_len = (uint32_t)len;
		t0 = h_now_ms();
		ck_assert_int_eq(h_ring_sync(&r, &s, &cqe, H_MS(60000)), 0);
		res = cqe.res;
	}
	h_note("a %zu-byte image: res %d after %llu ms", len, res,
	       (unsigned long long)(h_now_ms() - t0));
	ck_assert_msg(res == CUDA_ERROR_INVALID_VALUE, "an image of 256 MiB + 4 KiB: res %d",
		      res);
	ck_assert_msg(log_has("--max-image"), "no log line for the image size");
	axon_close(&r);
	free(elf);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

/* A legal PTX image the parser takes a while over (no kernels). */
static uint32_t make_slow_ptx(unsigned char *p, uint32_t len)
{
	static const char head[] = ".version 8.0\n.target sm_90\n.address_size 64\n";
	uint32_t i;

	memcpy(p, head, sizeof(head) - 1);
	for (i = sizeof(head) - 1; i + 2 < len; i += 2) {
		p[i] = 'x';
		p[i + 1] = ' ';
	}
	for (; i < len; i++)
		p[i] = 0;
	return len;
}

START_TEST(loads_in_flight)
{
	const unsigned int max = 4, tries = max + 2;
	unsigned int i, ok = 0, refused = 0;
	struct axon_ring r;
	uint64_t ctx, mods[8];

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, NULL), 0);
	make_slow_ptx(r.data, 8u << 20);
	/* All at once: the first takes far longer than taking the rest. */
	for (i = 0; i < tries; i++) {
		struct axon_sqe s = { 0 };

		axon_prep_obj(&s, AXON_OP_MODULE_LOAD, ctx, 0, 0);
		s.obj.data_len = 8u << 20;
		ck_assert_int_eq(h_ring_post(&r, &s), 0);
	}
	ck_assert_int_ge(axon_submit(&r), 0);
	for (i = 0; i < tries; i++) {
		const struct axon_cqe *cqe;

		ck_assert_int_eq(axon_wait_cqe(&r, &cqe, H_MS(60000) * 1000000ull), 0);
		if (cqe->res == CUDA_SUCCESS)
			mods[ok++] = cqe->aux[0];
		else if (cqe->res == CUDA_ERROR_OUT_OF_MEMORY)
			refused++;
		else
			ck_abort_msg("a load in flight: res %d", cqe->res);
		axon_cqe_seen(&r);
	}
	h_note("%u loads at once: %u loaded, %u refused", tries, ok, refused);
	ck_assert_uint_eq(ok, max);
	ck_assert_uint_eq(refused, tries - max);
	ck_assert_msg(log_has("--max-module-loads"), "no log line for the loads in flight");
	for (i = 0; i < ok; i++)
		unload(&r, mods[i]);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(10000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	h_require_file(h_kernel_path("cubin"));
	h_require_file(h_kernel_path("fatbin"));
	tcase_add_test(tc, decompression_bomb);
	tcase_add_test(tc, oversized_image);
	tcase_add_test(tc, loads_in_flight);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-modload-limits", "1G", NULL, add, 120);
}
