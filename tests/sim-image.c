// SPDX-License-Identifier: MIT
/*
 * sim-image: axond/sim/image.c against images nvcc made from
 * tests/sim-kernels/kernels.cu ($AXON_BUILD/tests/data, see
 * axond/sim/sim-image.mk), hand-made ELF and PTX edge cases, corrupt and
 * truncated input, and a mutation fuzz loop (AXON_FUZZ_SECONDS per image,
 * default 0.5; AXON_FUZZ_SEED to replay).
 *
 * Exits 77 after running the rest when the nvcc-made images are missing.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "image.h"

/* ------------------------------------------------------------------------ */
/* Test data                                                                */
/* ------------------------------------------------------------------------ */

static char data_dir[PATH_MAX];

static void find_data_dir(void)
{
	const char *b = getenv("AXON_BUILD");
	char exe[PATH_MAX];
	ssize_t n;

	if (b && *b) {
		snprintf(data_dir, sizeof(data_dir), "%s/tests/data", b);
		return;
	}
	/* $(BUILD)/tests/sim-image -> $(BUILD)/tests/data */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(data_dir, sizeof(data_dir), "%.*s/data",
			 (int)(sizeof(data_dir) - 6), exe);
	}
}

static uint8_t *load(const char *name, size_t *len)
{
	char path[PATH_MAX + 64];
	uint8_t *buf;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", data_dir, name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return NULL;
	}
	buf = malloc(n ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint8_t *must_load(const char *name, size_t *len)
{
	uint8_t *d = load(name, len);

	ck_assert_msg(d, "cannot read %s/%s", data_dir, name);
	return d;
}

static const char *const data_files[] = {
	"kernels.cubin", "kernels.ptx", "kernels.fatbin",
	"kernels-lz4.fatbin", "kernels-zstd.fatbin", "kernels-ptx.fatbin",
	"kernels-sm100.fatbin",
};

/* ------------------------------------------------------------------------ */
/* What kernels.cu declares                                                 */
/* ------------------------------------------------------------------------ */

static const struct exp_kernel {
	const char *name;
	uint32_t args_size, n;
	struct sim_param p[8];
} exp_kernels[] = {
	{ "_Z5add2dPKfS0_Pfiii", 36, 6,
	  { { 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 4 }, { 28, 4 }, { 32, 4 } } },
	{ "_Z5scalePffi", 16, 3, { { 0, 8 }, { 8, 4 }, { 12, 4 } } },
	{ "_Z6vecAddPKfS0_Pfi", 28, 4,
	  { { 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 4 } } },
	{ "_Z9vectorAddPKfS0_Pfi", 28, 4,
	  { { 0, 8 }, { 8, 8 }, { 16, 8 }, { 24, 4 } } },
	{ "add_one_u8", 12, 2, { { 0, 8 }, { 8, 4 } } },
	{ "fill", 16, 3, { { 0, 8 }, { 8, 4 }, { 12, 4 } } },
	{ "g_touch", 8, 1, { { 0, 8 } } },
	{ "iota3d", 20, 4, { { 0, 8 }, { 8, 4 }, { 12, 4 }, { 16, 4 } } },
	{ "iota_u32", 12, 2, { { 0, 8 }, { 8, 4 } } },
	{ "nop", 0, 0, { { 0, 0 } } },
	/* char, int, double, struct probe24 (24 bytes, align 8), short,
	 * const int *, double * */
	{ "probe_params", 64, 7,
	  { { 0, 1 }, { 4, 4 }, { 8, 8 }, { 16, 24 }, { 40, 2 }, { 48, 8 },
	    { 56, 8 } } },
	{ "saxpy", 24, 4, { { 0, 4 }, { 4, 4 }, { 8, 8 }, { 16, 8 } } },
	{ "print_hello", 8, 2, { { 0, 4 }, { 4, 4 } } },
	{ "assert_nonzero", 12, 2, { { 0, 8 }, { 8, 4 } } },
	{ "poke", 20, 3, { { 0, 8 }, { 8, 8 }, { 16, 4 } } },
};

#define NEXP_KERNELS	(sizeof(exp_kernels) / sizeof(exp_kernels[0]))

static const float g_table_init[4] = { 1.0f, 2.0f, 3.0f, 4.0f };
static const float c_coeffs_init[8] = { 0.5f, 1.5f, 2.5f, 3.5f,
					4.5f, 5.5f, 6.5f, 7.5f };

static const struct exp_global {
	const char *name;
	uint64_t size;
	enum sim_global_space space;
	const void *init;	/* NULL: zeroes */
} exp_globals[] = {
	{ "g_counter", 4, SIM_GLOBAL_DEVICE, NULL },
	{ "g_table", 16, SIM_GLOBAL_DEVICE, g_table_init },
	{ "g_big", 256, SIM_GLOBAL_DEVICE, NULL },
	{ "c_coeffs", 32, SIM_GLOBAL_CONSTANT, c_coeffs_init },
	{ "c_zero", 12, SIM_GLOBAL_CONSTANT, NULL },
};

#define NEXP_GLOBALS	(sizeof(exp_globals) / sizeof(exp_globals[0]))

/* g's whole initial value is want (g->size bytes; NULL: zeroes). */
static bool init_is(const struct sim_global_desc *g, const void *want)
{
	const uint8_t *w = want;
	uint64_t i;

	for (i = 0; i < g->size; i++) {
		uint8_t have = g->init ? g->init[i] : 0;

		if (have != (w ? w[i] : 0))
			return false;
	}
	return true;
}

/*
 * The invariants sim_image_parse() promises for any image it accepts: NULL
 * if they hold, else what is wrong. Plain C, not ck_assert: Check sends a
 * message to its parent process for every assertion passed, which loops
 * of millions of parses cannot afford.
 */
static const char *sane(const struct sim_image *img)
{
	size_t i;
	uint32_t j;

	for (i = 0; i < img->nkernels; i++) {
		const struct sim_kernel_desc *k = &img->kernels[i];

		if (!k->name)
			return "kernel without a name";
		if (k->nparams > SIM_IMAGE_MAX_PARAMS ||
		    k->args_size > SIM_IMAGE_MAX_ARGS_SIZE)
			return "kernel over the limits";
		if (k->nparams && !k->params)
			return "kernel parameters missing";
		for (j = 0; j < k->nparams; j++) {
			if ((uint64_t)k->params[j].offset + k->params[j].size >
			    k->args_size)
				return "parameter beyond args_size";
			if (j && k->params[j].offset <
				 (uint64_t)k->params[j - 1].offset +
				 k->params[j - 1].size)
				return "parameters overlap";
		}
		if (i && strcmp(img->kernels[i - 1].name, k->name) >= 0)
			return "kernels not sorted and unique";
		if (sim_image_find_kernel(img, k->name) != k)
			return "kernel lookup";
	}
	for (i = 0; i < img->nglobals; i++) {
		const struct sim_global_desc *g = &img->globals[i];

		if (!g->name)
			return "global without a name";
		if (g->init && !g->size)
			return "global initial value";
		if (g->space != SIM_GLOBAL_DEVICE &&
		    g->space != SIM_GLOBAL_CONSTANT)
			return "global space";
		if (!sim_image_find_global(img, g->name))
			return "global lookup";
	}
	return NULL;
}

static void check_sane(const struct sim_image *img)
{
	const char *why = sane(img);

	ck_assert_msg(!why, "insane image: %s", why);
}

/* Globals the compiler made (string constants), not declared in kernels.cu. */
static size_t compiler_globals(const struct sim_image *img)
{
	size_t i, n = 0;

	for (i = 0; i < img->nglobals; i++)
		if (img->globals[i].name[0] == '$' ||
		    !strncmp(img->globals[i].name, "__unnamed_", 10))
			n++;
	return n;
}

static void check_kernels_cu(const struct sim_image *img)
{
	size_t i;
	uint32_t j;

	check_sane(img);
	ck_assert_uint_eq(img->nkernels, NEXP_KERNELS);
	for (i = 0; i < NEXP_KERNELS; i++) {
		const struct exp_kernel *e = &exp_kernels[i];
		const struct sim_kernel_desc *k =
			sim_image_find_kernel(img, e->name);

		ck_assert_msg(k, "kernel %s missing", e->name);
		ck_assert_str_eq(k->name, e->name);
		ck_assert_uint_eq(k->nparams, e->n);
		ck_assert_uint_eq(k->args_size, e->args_size);
		for (j = 0; j < e->n; j++) {
			ck_assert_msg(k->params[j].offset == e->p[j].offset &&
				      k->params[j].size == e->p[j].size,
				      "%s param %u: %u/%u, expected %u/%u",
				      e->name, j, k->params[j].offset,
				      k->params[j].size, e->p[j].offset,
				      e->p[j].size);
		}
		/* Per kernel: only these two print (an image's calls are
		 * charged at its load, a kernel's heap at its launch). */
		ck_assert_msg(k->calls == (!strcmp(e->name, "print_hello") ||
					   !strcmp(e->name, "assert_nonzero") ?
					   SIM_IMAGE_CALLS_PRINTF : 0U),
			      "kernel %s: calls %#x", e->name, k->calls);
	}
	ck_assert_uint_eq(img->calls, SIM_IMAGE_CALLS_PRINTF);
	ck_assert_ptr_null(sim_image_find_kernel(img, "vectorAdd"));
	ck_assert_ptr_null(sim_image_find_kernel(img, ""));
	ck_assert_ptr_null(sim_image_find_kernel(img, "zzz"));

	/* Besides the declared globals, nvcc emits the strings of
	 * print_hello's printf and assert_nonzero's assert ($str, $str$1, the
	 * file name as nvcc was given it, __unnamed_1 the function name). */
	ck_assert_uint_eq(compiler_globals(img), 4);
	ck_assert_uint_eq(img->nglobals - compiler_globals(img), NEXP_GLOBALS);
	for (i = 0; i < NEXP_GLOBALS; i++) {
		const struct exp_global *e = &exp_globals[i];
		const struct sim_global_desc *g =
			sim_image_find_global(img, e->name);

		ck_assert_msg(g, "global %s missing", e->name);
		ck_assert_uint_eq(g->size, e->size);
		ck_assert_int_eq(g->space, e->space);
		ck_assert_uint_eq(g->flags, 0);
		ck_assert_msg(init_is(g, e->init), "global %s: initial value",
			      e->name);
		if (!e->init)
			ck_assert_ptr_null(g->init);
	}
	ck_assert_ptr_null(sim_image_find_global(img, "nope"));
}

static struct sim_image *parse_ok(const void *d, size_t len)
{
	struct sim_image *img = NULL;
	char err[512];
	int rc = sim_image_parse(d, len, &img, err, sizeof(err));

	ck_assert_msg(rc == 0, "parse failed: %d %s", rc, err);
	ck_assert_ptr_nonnull(img);
	return img;
}

static int parse_err(const void *d, size_t len, char *err, size_t errlen)
{
	struct sim_image *img = (struct sim_image *)1;
	int rc = sim_image_parse(d, len, &img, err, errlen);

	ck_assert_msg(rc < 0, "parse succeeded unexpectedly");
	ck_assert_ptr_null(img);
	if (errlen > 1)
		ck_assert_msg(err[0], "no error message (rc %d)", rc);
	return rc;
}

/* The fatbin entries' flags, to check the test data is what we think. */
static uint64_t fatbin_flags_or(const uint8_t *d, size_t len)
{
	uint64_t flags = 0, off, end;
	uint16_t hs;

	ck_assert_uint_ge(len, 16);
	memcpy(&hs, d + 6, 2);
	memcpy(&end, d + 8, 8);
	end += hs;
	ck_assert_uint_le(end, len);
	for (off = hs; off + 64 <= end;) {
		uint32_t ehs;
		uint64_t psize, f;

		memcpy(&ehs, d + off + 4, 4);
		memcpy(&psize, d + off + 8, 8);
		memcpy(&f, d + off + 40, 8);
		flags |= f;
		off += ehs + psize;
	}
	return flags;
}

/* ------------------------------------------------------------------------ */
/* nvcc-made images                                                         */
/* ------------------------------------------------------------------------ */

START_TEST(test_cubin)
{
	size_t len;
	uint8_t *d = must_load("kernels.cubin", &len);
	struct sim_image *img = parse_ok(d, len);

	free(d);	/* the image must not refer to the input */
	ck_assert_int_eq(img->format, SIM_IMAGE_CUBIN);
	ck_assert_int_eq(img->code_kind, SIM_CODE_ELF);
	ck_assert_uint_eq(img->sm_arch, 90);
	check_kernels_cu(img);
	sim_image_free(img);
}
END_TEST

START_TEST(test_ptx)
{
	size_t len;
	uint8_t *d = must_load("kernels.ptx", &len);
	struct sim_image *img = parse_ok(d, len);

	free(d);
	ck_assert_int_eq(img->format, SIM_IMAGE_PTX);
	ck_assert_int_eq(img->code_kind, SIM_CODE_PTX);
	ck_assert_uint_eq(img->sm_arch, 90);
	check_kernels_cu(img);
	sim_image_free(img);
}
END_TEST

START_TEST(test_fatbin)
{
	static const struct {
		const char *file;
		enum sim_image_code code;
		uint64_t flags;		/* some entry has these */
	} v[] = {
		{ "kernels.fatbin", SIM_CODE_ELF, 0x8000 },	/* PTX zstd */
		{ "kernels-lz4.fatbin", SIM_CODE_ELF, 0x2000 },
		{ "kernels-zstd.fatbin", SIM_CODE_ELF, 0x8000 },
		{ "kernels-ptx.fatbin", SIM_CODE_PTX, 0x2000 },
	};
	size_t len, i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t *d = must_load(v[i].file, &len);
		struct sim_image *img;

		ck_assert_msg((fatbin_flags_or(d, len) & v[i].flags) ==
			      v[i].flags, "%s: no entry with flags %#llx",
			      v[i].file, (unsigned long long)v[i].flags);
		img = parse_ok(d, len);
		free(d);
		ck_assert_int_eq(img->format, SIM_IMAGE_FATBIN);
		ck_assert_msg(img->code_kind == v[i].code, "%s: code %d",
			      v[i].file, img->code_kind);
		ck_assert_uint_eq(img->sm_arch, 90);
		check_kernels_cu(img);
		sim_image_free(img);
	}
}
END_TEST

START_TEST(test_fatbin_no_sm90)
{
	size_t len;
	uint8_t *d = must_load("kernels-sm100.fatbin", &len);
	char err[512];

	ck_assert_int_eq(parse_err(d, len, err, sizeof(err)), -ENOEXEC);
	ck_assert_msg(strstr(err, "sm_100"), "err: %s", err);
	free(d);
}
END_TEST

/* Two containers back to back (as in a linked .nv_fatbin): both read. */
START_TEST(test_fatbin_concat)
{
	size_t l1, l2;
	uint8_t *a = must_load("kernels-sm100.fatbin", &l1);
	uint8_t *b = must_load("kernels-zstd.fatbin", &l2);
	uint8_t *c = malloc(l1 + l2 + 8);
	struct sim_image *img;

	memcpy(c, a, l1);
	memcpy(c + l1, b, l2);
	memset(c + l1 + l2, 0, 8);	/* trailing padding is ignored */
	img = parse_ok(c, l1 + l2 + 8);
	check_kernels_cu(img);
	sim_image_free(img);
	free(a);
	free(b);
	free(c);
}
END_TEST

/* Entry kind and arch of each entry of a one-container fatbin, patchable. */
static size_t fatbin_entries(uint8_t *d, size_t len, uint8_t **hdr, size_t max)
{
	uint64_t off, end;
	uint16_t hs;
	size_t n = 0;

	memcpy(&hs, d + 6, 2);
	memcpy(&end, d + 8, 8);
	end += hs;
	ck_assert_uint_le(end, len);
	for (off = hs; off + 64 <= end && n < max; n++) {
		uint32_t ehs;
		uint64_t psize;

		hdr[n] = d + off;
		memcpy(&ehs, d + off + 4, 4);
		memcpy(&psize, d + off + 8, 8);
		off += ehs + psize;
	}
	return n;
}

static uint16_t e_kind(const uint8_t *h)
{
	uint16_t v;

	memcpy(&v, h, 2);
	return v;
}

static uint32_t e_arch(const uint8_t *h)
{
	uint32_t v;

	memcpy(&v, h + 28, 4);
	return v;
}

static void set_arch(uint8_t *h, uint32_t arch)
{
	memcpy(h + 28, &arch, 4);
}

/*
 * kernels.fatbin holds sm_80, compute_90 (PTX), sm_90 and sm_100; with
 * the arch and kind fields patched, check which entry is picked.
 */
START_TEST(test_fatbin_choice)
{
	size_t len, n, i;
	uint8_t *d = must_load("kernels.fatbin", &len), *h[8];
	uint8_t *elf90 = NULL, *ptx = NULL;
	struct sim_image *img;
	char err[512];

	n = fatbin_entries(d, len, h, 8);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++) {
		if (e_kind(h[i]) == 2 && e_arch(h[i]) == 90)
			elf90 = h[i];
		if (e_kind(h[i]) == 1 && e_arch(h[i]) == 90)
			ptx = h[i];
	}
	ck_assert_ptr_nonnull(elf90);
	ck_assert_ptr_nonnull(ptx);

	/* sm_90 SASS is there: used */
	img = parse_ok(d, len);
	ck_assert_int_eq(img->code_kind, SIM_CODE_ELF);
	ck_assert_uint_eq(img->sm_arch, 90);
	sim_image_free(img);

	/* only sm_80/sm_89/sm_100 SASS: the PTX (compute_90, ZSTD) */
	set_arch(elf90, 89);
	img = parse_ok(d, len);
	ck_assert_int_eq(img->code_kind, SIM_CODE_PTX);
	ck_assert_uint_eq(img->sm_arch, 90);
	check_kernels_cu(img);
	sim_image_free(img);

	/* older PTX is fine too */
	set_arch(ptx, 86);
	img = parse_ok(d, len);
	ck_assert_int_eq(img->code_kind, SIM_CODE_PTX);
	ck_assert_uint_eq(img->sm_arch, 86);
	sim_image_free(img);

	/* newer PTX is not, nor an entry of unknown kind */
	set_arch(ptx, 100);
	ck_assert_int_eq(parse_err(d, len, err, sizeof(err)), -ENOEXEC);
	ck_assert_msg(strstr(err, "sm_80 compute_100 sm_89 sm_100"), "%s", err);
	set_arch(ptx, 90);
	memcpy(ptx, "\7\0", 2);
	ck_assert_int_eq(parse_err(d, len, err, sizeof(err)), -ENOEXEC);

	/* sm_90 again: the unknown entry is skipped */
	set_arch(elf90, 90);
	img = parse_ok(d, len);
	ck_assert_int_eq(img->code_kind, SIM_CODE_ELF);
	sim_image_free(img);
	free(d);
}
END_TEST

/* Every prefix of every image fails cleanly (or parses, for PTX). */
START_TEST(test_truncated)
{
	size_t f;

	for (f = 0; f < sizeof(data_files) / sizeof(data_files[0]); f++) {
		size_t len, n, step;
		uint8_t *d = must_load(data_files[f], &len);
		bool ptx = strstr(data_files[f], ".ptx") != NULL;

		step = len / 3000 + 1;
		for (n = 0; n < len; n += n < 512 ? 1 : step) {
			/* a copy of exactly n bytes: ASan sees overreads */
			uint8_t *t = malloc(n ? n : 1);
			struct sim_image *img = NULL;
			char err[256] = "";
			int rc;

			memcpy(t, d, n);
			rc = sim_image_parse(t, n, &img, err, sizeof(err));
			if (!rc) {
				/* PTX: what is left; ELF: all of it (only
				 * the program headers are gone) */
				const char *why = sane(img);

				if (why)
					ck_abort_msg("%s cut at %zu: %s",
						     data_files[f], n, why);
				if (!ptx)
					check_kernels_cu(img);
				sim_image_free(img);
			} else if (rc >= 0 || !err[0] || img) {
				ck_abort_msg("%s cut at %zu: rc %d",
					     data_files[f], n, rc);
			}
			free(t);
		}
		free(d);
	}
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Not images                                                               */
/* ------------------------------------------------------------------------ */

START_TEST(test_garbage)
{
	static const char *const junk[] = {
		"", "x", "abc", "hello world", "\177EL", "\177ELX....",
		".versio", "// only a comment", "/* open comment",
		"\n\n  .target sm_90\n", "PK\003\004 zip",
	};
	uint8_t rnd[4096];
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		ck_assert_int_eq(parse_err(junk[i], strlen(junk[i]), err,
					   sizeof(err)), -EINVAL);
	ck_assert_int_eq(parse_err(NULL, 100, err, sizeof(err)), -EINVAL);
	srand(1);
	for (i = 0; i < sizeof(rnd); i++)
		rnd[i] = (uint8_t)rand();
	rnd[0] = 'q';
	ck_assert_int_eq(parse_err(rnd, sizeof(rnd), err, sizeof(err)),
			 -EINVAL);
	/* errlen 0 and 1 are fine */
	ck_assert_int_eq(parse_err("zz", 2, err, 0), -EINVAL);
	err[0] = 'x';
	ck_assert_int_eq(parse_err("zzzz", 4, err, 1), -EINVAL);
	ck_assert_int_eq(err[0], 0);
}
END_TEST

START_TEST(test_wrapper)
{
	/* struct __fatBinC_Wrapper_t { int magic, version; void *data, *f; } */
	uint8_t w[24] = { 0 };
	uint32_t magic = 0x466243b1, version = 1;
	uint64_t ptr = 0x7f0012345678ULL;
	char err[512];

	memcpy(w, &magic, 4);
	memcpy(w + 4, &version, 4);
	memcpy(w + 8, &ptr, 8);
	ck_assert_int_eq(parse_err(w, sizeof(w), err, sizeof(err)), -ENOTSUP);
	ck_assert_msg(strstr(err, "pointer"), "err: %s", err);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Hand-made cubins                                                         */
/* ------------------------------------------------------------------------ */

/*
 * A minimal cubin: one kernel "k" (.text.k, .nv.info.k with the given
 * records), sections: 0 null, 1 .shstrtab, 2 .strtab, 3 .symtab, 4 .text.k,
 * 5 .nv.info.k, 6 .nv.global.init (8 bytes, symbol "gv" at 4, size 4);
 * symbols 1 k, 2 gv, 3 malloc (undefined: the image calls it).
 */
struct mini {
	uint8_t *d;
	size_t len;
	size_t shoff, symoff, sym_k;	/* offsets of things to patch */
};

static void put(uint8_t *d, size_t off, uint64_t v, unsigned n)
{
	memcpy(d + off, &v, n);
}

static struct mini mini_elf(const uint8_t *info, size_t infolen,
			    uint8_t other)
{
	static const char shstr[] =
		"\0.shstrtab\0.strtab\0.symtab\0.text.k\0.nv.info.k\0.nv.global.init";
	static const char str[] = "\0k\0gv\0malloc";
	const size_t nsec = 7;
	size_t o_shstr = 64, o_str = o_shstr + sizeof(shstr);
	size_t o_sym = (o_str + sizeof(str) + 7) & ~7UL;
	size_t o_text = o_sym + 4 * 24, o_info = o_text + 16;
	size_t o_init = (o_info + infolen + 7) & ~7UL;
	size_t o_sh = o_init + 8;
	struct mini m = { .len = o_sh + nsec * 64, .shoff = o_sh,
			  .symoff = o_sym, .sym_k = o_sym + 24 };
	struct { uint32_t name, type; uint64_t off, size; uint32_t link; }
	sh[7] = {
		{ 0, 0, 0, 0, 0 },
		{ 1, 3, o_shstr, sizeof(shstr), 0 },
		{ 11, 3, o_str, sizeof(str), 0 },
		{ 19, 2, o_sym, 4 * 24, 2 },
		{ 27, 1, o_text, 16, 0 },
		{ 35, 0x70000000, o_info, infolen, 3 },
		{ 46, 1, o_init, 8, 0 },
	};
	uint8_t *d = calloc(1, m.len);
	size_t i;

	memcpy(d, "\177ELF\2\1\1\101\10", 9);
	put(d, 16, 2, 2);		/* ET_EXEC */
	put(d, 18, 190, 2);		/* EM_CUDA */
	put(d, 20, 1, 4);
	put(d, 0x28, o_sh, 8);
	put(d, 0x30, 0x5a00, 4);	/* sm_90 */
	put(d, 0x34, 64, 2);
	put(d, 0x3a, 64, 2);
	put(d, 0x3c, nsec, 2);
	put(d, 0x3e, 1, 2);
	memcpy(d + o_shstr, shstr, sizeof(shstr));
	memcpy(d + o_str, str, sizeof(str));
	/* symbol 1: k, FUNC GLOBAL, section 4 */
	put(d, o_sym + 24, 1, 4);
	d[o_sym + 24 + 4] = 0x12;
	d[o_sym + 24 + 5] = other;
	put(d, o_sym + 24 + 6, 4, 2);
	put(d, o_sym + 24 + 16, 16, 8);
	/* symbol 2: gv, OBJECT LOCAL, section 6, value 4, size 4 */
	put(d, o_sym + 48, 3, 4);
	d[o_sym + 48 + 4] = 0x01;
	put(d, o_sym + 48 + 6, 6, 2);
	put(d, o_sym + 48 + 8, 4, 8);
	put(d, o_sym + 48 + 16, 4, 8);
	/* symbol 3: malloc, FUNC GLOBAL, undefined */
	put(d, o_sym + 72, 6, 4);
	d[o_sym + 72 + 4] = 0x12;
	put(d, o_init, 0x0403020100000000ULL, 8);
	if (infolen)
		memcpy(d + o_info, info, infolen);
	for (i = 0; i < nsec; i++) {
		size_t h = o_sh + i * 64;

		put(d, h, sh[i].name, 4);
		put(d, h + 4, sh[i].type, 4);
		put(d, h + 24, sh[i].off, 8);
		put(d, h + 32, sh[i].size, 8);
		put(d, h + 40, sh[i].link, 4);
	}
	m.d = d;
	return m;
}

/*
 * nsym data symbols "gv", all of the same size bytes at offset 0 of one
 * .nv.global.init section filled with 0xab: sections 0 null, 1 .shstrtab,
 * 2 .strtab, 3 .symtab, 4 .nv.global.init.
 */
static struct mini alias_elf(unsigned nsym, size_t size)
{
	static const char shstr[] = "\0.shstrtab\0.strtab\0.symtab\0.nv.global.init";
	static const char str[] = "\0gv";
	size_t o_str = 64 + sizeof(shstr), o_sym = 128;
	size_t o_init = o_sym + (1 + (size_t)nsym) * 24;
	size_t o_sh = o_init + size, i;
	struct mini m = { .len = o_sh + 5 * 64, .shoff = o_sh,
			  .symoff = o_sym };
	const uint64_t sh[5][4] = {	/* name, type, offset, size; link */
		{ 0, 0, 0, 0 }, { 1, 3, 64, sizeof(shstr) },
		{ 11, 3, o_str, sizeof(str) },
		{ 19, 2, o_sym, (1 + (uint64_t)nsym) * 24 },
		{ 27, 1, o_init, size },
	};
	uint8_t *d = calloc(1, m.len);

	memcpy(d, "\177ELF\2\1\1\101\10", 9);
	put(d, 16, 2, 2);
	put(d, 18, 190, 2);
	put(d, 0x28, o_sh, 8);
	put(d, 0x30, 0x5a00, 4);
	put(d, 0x3a, 64, 2);
	put(d, 0x3c, 5, 2);
	put(d, 0x3e, 1, 2);
	memcpy(d + 64, shstr, sizeof(shstr));
	memcpy(d + o_str, str, sizeof(str));
	for (i = 1; i <= nsym; i++) {
		put(d, o_sym + i * 24, 1, 4);
		d[o_sym + i * 24 + 4] = 0x01;
		put(d, o_sym + i * 24 + 6, 4, 2);
		put(d, o_sym + i * 24 + 16, size, 8);
	}
	memset(d + o_init, 0xab, size);
	for (i = 0; i < 5; i++) {
		put(d, o_sh + i * 64, sh[i][0], 4);
		put(d, o_sh + i * 64 + 4, sh[i][1], 4);
		put(d, o_sh + i * 64 + 24, sh[i][2], 8);
		put(d, o_sh + i * 64 + 32, sh[i][3], 8);
		put(d, o_sh + i * 64 + 40, i == 3 ? 2 : 0, 4);
	}
	m.d = d;
	return m;
}

/* Symbols aliasing the same initial bytes cannot multiply memory. */
START_TEST(test_elf_alias_budget)
{
	const size_t size = 2 << 20;
	struct mini m = alias_elf(SIM_IMAGE_MAX_INIT / size, size);
	struct sim_image *img = parse_ok(m.d, m.len);
	char err[256];

	ck_assert_uint_eq(img->nglobals, SIM_IMAGE_MAX_INIT / size);
	ck_assert_uint_eq(img->globals[7].init[size - 1], 0xab);
	sim_image_free(img);
	free(m.d);
	m = alias_elf(SIM_IMAGE_MAX_INIT / size + 1, size);
	ck_assert_int_eq(parse_err(m.d, m.len, err, sizeof(err)), -E2BIG);
	free(m.d);
}
END_TEST

/* .nv.info record builders */
struct recs {
	uint8_t b[16384];
	size_t n;
};

static void r_kparam(struct recs *r, uint16_t ord, uint16_t off,
		     uint32_t size)
{
	r->b[r->n++] = 4;
	r->b[r->n++] = 0x17;
	put(r->b, r->n, 12, 2);
	put(r->b, r->n + 2, 0, 4);
	put(r->b, r->n + 6, ord, 2);
	put(r->b, r->n + 8, off, 2);
	put(r->b, r->n + 10, (size << 18) | 0x1f000, 4);
	r->n += 14;
}

static void r_kparam_v2(struct recs *r, uint16_t ord, uint16_t off,
			uint32_t size)
{
	r->b[r->n++] = 4;
	r->b[r->n++] = 0x45;
	put(r->b, r->n, 12, 2);
	put(r->b, r->n + 2, 0, 4);
	put(r->b, r->n + 6, ord, 2);
	put(r->b, r->n + 8, off, 2);
	put(r->b, r->n + 10, size, 4);
	r->n += 14;
}

static void r_hval(struct recs *r, uint8_t attr, uint16_t v)
{
	r->b[r->n++] = 3;
	r->b[r->n++] = attr;
	put(r->b, r->n, v, 2);
	r->n += 2;
}

static void r_raw(struct recs *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static int mini_parse(const struct recs *r, uint8_t other,
		      struct sim_image **img, char *err, size_t errlen)
{
	struct mini m = mini_elf(r->b, r->n, other);
	int rc = sim_image_parse(m.d, m.len, img, err, errlen);

	free(m.d);
	return rc;
}

START_TEST(test_elf_mini)
{
	static const uint8_t nval[] = { 1, 0x50, 0, 0 },
			     bval[] = { 2, 0x33, 7, 0 },
			     sval[] = { 4, 0x36, 4, 0, 8, 0, 0, 0 };
	struct recs *r = calloc(1, sizeof(*r));
	struct sim_image *img;
	const struct sim_kernel_desc *k;
	char err[256];

	/* descending ordinals as ptxas writes them, other records around */
	r_raw(r, nval, 4);
	r_kparam(r, 2, 16, 4);
	r_raw(r, bval, 4);
	r_kparam(r, 1, 8, 8);
	r_kparam_v2(r, 0, 0, 1);
	r_raw(r, sval, 8);
	r_hval(r, 0x19, 24);		/* CBANK_PARAM_SIZE */
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_int_eq(img->format, SIM_IMAGE_CUBIN);
	ck_assert_uint_eq(img->sm_arch, 90);
	ck_assert_uint_eq(img->nkernels, 1);
	k = sim_image_find_kernel(img, "k");
	ck_assert_ptr_nonnull(k);
	ck_assert_uint_eq(k->nparams, 3);
	ck_assert_uint_eq(k->args_size, 24);
	ck_assert_uint_eq(k->params[0].offset, 0);
	ck_assert_uint_eq(k->params[0].size, 1);
	ck_assert_uint_eq(k->params[1].offset, 8);
	ck_assert_uint_eq(k->params[1].size, 8);
	ck_assert_uint_eq(k->params[2].offset, 16);
	ck_assert_uint_eq(k->params[2].size, 4);
	ck_assert_uint_eq(img->nglobals, 1);
	ck_assert_str_eq(img->globals[0].name, "gv");
	ck_assert_uint_eq(img->globals[0].size, 4);
	ck_assert(init_is(&img->globals[0], "\1\2\3\4"));
	sim_image_free(img);

	/* without CBANK_PARAM_SIZE: the end of the last parameter */
	r->n = 0;
	r_kparam(r, 1, 8, 4);
	r_kparam(r, 0, 0, 8);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->kernels[0].args_size, 12);
	sim_image_free(img);

	/* no records: no parameters */
	r->n = 0;
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->kernels[0].nparams, 0);
	ck_assert_uint_eq(img->kernels[0].args_size, 0);
	sim_image_free(img);

	/* not an entry (a -rdc __noinline__ device function): no kernel */
	ck_assert_int_eq(mini_parse(r, 0, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->nkernels, 0);
	sim_image_free(img);

	/* exactly the limit of parameters */
	r->n = 0;
	for (int i = SIM_IMAGE_MAX_PARAMS - 1; i >= 0; i--)
		r_kparam(r, (uint16_t)i, (uint16_t)(i * 8), 8);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->kernels[0].nparams, SIM_IMAGE_MAX_PARAMS);
	ck_assert_uint_eq(img->kernels[0].args_size, 8 * SIM_IMAGE_MAX_PARAMS);
	sim_image_free(img);

	/* a 20000-byte parameter (KPARAM_INFO_V2) */
	r->n = 0;
	r_kparam_v2(r, 1, 20000, 8);
	r_kparam_v2(r, 0, 0, 20000);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->kernels[0].params[0].size, 20000);
	ck_assert_uint_eq(img->kernels[0].args_size, 20008);
	sim_image_free(img);
	free(r);
}
END_TEST

/* EIATTR_EXTERNS: the undefined functions a kernel calls, by symbol. */
START_TEST(test_elf_mini_externs)
{
	static const uint8_t calls_malloc[] = { 4, 0x0f, 4, 0, 3, 0, 0, 0 },
			     /* k itself, gv, symbol 0, one past the table */
			     not_calls[] = { 4, 0x0f, 16, 0, 1, 0, 0, 0, 2, 0, 0, 0,
					     0, 0, 0, 0, 4, 0, 0, 0 },
			     ragged[] = { 4, 0x0f, 6, 0, 3, 0, 0, 0, 0, 0, 0, 0 };
	struct recs *r = calloc(1, sizeof(*r));
	struct sim_image *img;
	char err[256];

	r_raw(r, calls_malloc, sizeof(calls_malloc));
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->calls, SIM_IMAGE_CALLS_MALLOC);
	ck_assert_uint_eq(img->kernels[0].calls, SIM_IMAGE_CALLS_MALLOC);
	sim_image_free(img);

	/* the image calls malloc, this kernel does not */
	r->n = 0;
	r_raw(r, not_calls, sizeof(not_calls));
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->calls, SIM_IMAGE_CALLS_MALLOC);
	ck_assert_uint_eq(img->kernels[0].calls, 0);
	sim_image_free(img);
	r->n = 0;
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), 0);
	ck_assert_uint_eq(img->kernels[0].calls, 0);
	sim_image_free(img);

	/* not whole indices */
	r_raw(r, ragged, sizeof(ragged));
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "EXTERNS"), "%s", err);
	free(r);
}
END_TEST

START_TEST(test_elf_mini_bad_info)
{
	struct recs *r = calloc(1, sizeof(*r));
	struct sim_image *img;
	char err[256];
	static const uint8_t badfmt[] = { 7, 0x17, 0, 0 },
			     overrun[] = { 4, 0x36, 0xff, 0xff, 0, 0 },
			     shortk[] = { 4, 0x17, 8, 0, 0, 0, 0, 0, 0, 0,
					  0, 0 },
			     half[] = { 3 };

	r_kparam(r, 0, 0, 4);
	r_kparam(r, 0, 8, 4);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "twice"), "%s", err);

	r->n = 0;
	r_kparam(r, 2, 8, 4);
	r_kparam(r, 0, 0, 4);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "missing"), "%s", err);

	r->n = 0;
	r_kparam(r, SIM_IMAGE_MAX_PARAMS, 0, 4);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -E2BIG);

	r->n = 0;
	r_kparam_v2(r, 0, 32000, 1000);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -E2BIG);

	r->n = 0;
	r_kparam_v2(r, 0, 0, 0xffffffffU);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -E2BIG);

	r->n = 0;
	r_kparam(r, 1, 4, 8);
	r_kparam(r, 0, 0, 8);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "overlaps"), "%s", err);

	r->n = 0;
	r_kparam(r, 0, 0, 8);
	r_hval(r, 0x19, 4);
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);

	r->n = 0;
	r_raw(r, badfmt, sizeof(badfmt));
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "format"), "%s", err);

	r->n = 0;
	r_raw(r, overrun, sizeof(overrun));
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);

	r->n = 0;
	r_raw(r, shortk, sizeof(shortk));
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);

	r->n = 0;
	r_kparam(r, 0, 0, 8);
	r_raw(r, half, sizeof(half));
	ck_assert_int_eq(mini_parse(r, 0x10, &img, err, sizeof(err)), -EINVAL);
	free(r);
}
END_TEST

START_TEST(test_elf_mini_bad_headers)
{
	static const struct {
		const char *what;
		int where;	/* 0: ELF header, 1: symbol k, 2: sh[5], 3: sh[3] */
		size_t off;
		uint64_t val;
		unsigned n;
		int rc;
	} v[] = {
		{ "class 32", 0, 4, 1, 1, -ENOTSUP },
		{ "big-endian", 0, 5, 2, 1, -EINVAL },
		{ "machine", 0, 18, 62, 2, -EINVAL },
		{ "type ET_DYN", 0, 16, 3, 2, -EINVAL },
		{ "shentsize", 0, 0x3a, 40, 2, -EINVAL },
		{ "shnum 0", 0, 0x3c, 0, 2, -EINVAL },
		{ "shnum huge", 0, 0x3c, 0xffff, 2, -EINVAL },
		{ "shoff past end", 0, 0x28, 1ULL << 40, 8, -EINVAL },
		{ "shoff wraps", 0, 0x28, ~0ULL - 10, 8, -EINVAL },
		{ "shstrndx", 0, 0x3e, 9, 2, -EINVAL },
		{ "shstrndx 0", 0, 0x3e, 0, 2, -EINVAL },
		{ "st_name", 1, 0, 0x10000, 4, -EINVAL },
		{ "info offset", 2, 24, 1ULL << 33, 8, -EINVAL },
		{ "info size", 2, 32, ~0ULL, 8, -EINVAL },
		{ "symtab link", 3, 40, 77, 4, -EINVAL },
		{ "symtab offset", 3, 24, ~0ULL - 100, 8, -EINVAL },
		{ "name off", 2, 0, 0x7fffffff, 4, -EINVAL },
	};
	struct recs r = { .n = 0 };
	char err[256];
	size_t i;

	r_kparam(&r, 0, 0, 8);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct mini m = mini_elf(r.b, r.n, 0x10);
		size_t base = v[i].where == 0 ? 0 :
			      v[i].where == 1 ? m.sym_k :
			      v[i].where == 2 ? m.shoff + 5 * 64 :
						m.shoff + 3 * 64;
		struct sim_image *img = NULL;
		int rc;

		put(m.d, base + v[i].off, v[i].val, v[i].n);
		rc = sim_image_parse(m.d, m.len, &img, err, sizeof(err));
		ck_assert_msg(rc == v[i].rc, "%s: rc %d (%s)", v[i].what, rc,
			      err);
		ck_assert_ptr_null(img);
		free(m.d);
	}

	/* SASS a 9.0 device cannot run */
	{
		static const uint32_t flags[] = { 0x5000, 0x5900, 0x5b00,
						  0x6400, 0x7800 };

		for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
			struct mini m = mini_elf(r.b, r.n, 0x10);
			struct sim_image *img;

			put(m.d, 0x30, flags[i], 4);
			ck_assert_int_eq(sim_image_parse(m.d, m.len, &img, err,
							 sizeof(err)), -ENOEXEC);
			ck_assert_msg(strstr(err, "sm_"), "%s", err);
			free(m.d);
		}
	}

	/* a global outside its section */
	{
		struct mini m = mini_elf(r.b, r.n, 0x10);
		struct sim_image *img;

		put(m.d, m.sym_k + 24 + 8, 6, 8);	/* gv value 6, size 4 */
		ck_assert_int_eq(sim_image_parse(m.d, m.len, &img, err,
						 sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, "gv"), "%s", err);
		free(m.d);
	}
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Hand-made PTX                                                            */
/* ------------------------------------------------------------------------ */

static const char ptx_text[] =
	"//\n// hand-made\n//\n"
	"/* .entry fake( */\n"
	".version 8.0\n"
	".target sm_90\n"
	".address_size 64\n"
	".file 1 \"/tmp/{weird}(name).cu\"\n"
	".visible .entry k1(\n"
	"\t.param .u8 a,\n"				/* 0/1 */
	"\t.param .f64 b, // .entry fake2(\n"		/* 8/8 */
	"\t.param .align 4 .b8 s[12],\n"		/* 16/12 */
	"\t.param .u16 c,\n"				/* 28/2 */
	"\t.param .u64 .ptr .global .align 16 p,\n"	/* 32/8 */
	"\t.param .b8 raw[3],\n"			/* 40/3 */
	"\t.param .f32 f\n"				/* 44/4 */
	") .maxntid 128, 1, 1\n"
	"{\n\t.reg .b32 %r<3>;\n\t.global .u32 notaglobal;\n"
	"\tld.const.f32 %f1, [c_one];\n\tret;\n}\n"
	".entry k2 ( .param .align 8 .b8 big[4096], .param .s32 n ) { ret; }\n"
	".entry k3 () {}\n"
	".visible .entry k5 { ret; }\n"
	".extern .entry k4(.param .u32 x);\n"
	".visible .func (.param .b32 rv) helper(.param .b64 x)\n"
	"{ ret; }\n"
	".extern .global .u32 ext_var;\n"
	".global .align 4 .u32 gi = 7;\n"
	".global .f32 gf[3] = {1.0, 0f40000000, -2.0};\n"
	".const .align 8 .b8 cb[] = {1, 2, 3};\n"
	".global .u64 gp = generic(gi);\n"
	".visible .global .s16 a1 = -1, a2[2] = {0x7fff, 010};\n"
	".global .v2 .u32 vv[2] = {{1,2},{3,4}};\n"
	".global .f64 gd = 0d3FF0000000000000;\n"
	".global .texref tex;\n"
	".global .attribute(.managed) .align 4 .s32 managed_x = 5;\n"
	".shared .u32 sh[4];\n"
	".const .f32 c_one = 0f3F800000;\n"
	".global .u32 m2[2][3];\n";

/*
 * Which PTX kernels make the image's runtime calls: those whose body has a
 * call (directly, or to a function that might); not one whose body has
 * none, even after a function's body that calls.
 */
START_TEST(test_ptx_calls)
{
	static const char ptx[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".extern .func (.param .b64 func_retval0) malloc\n(\n\t.param .b64 p0\n)\n;\n"
		".func (.param .b64 r) helper(.param .b64 n)\n{\n"
		"\t.param .b64 p0;\n\tcall.uni (r), malloc, (p0);\n\tret;\n}\n"
		".visible .entry direct(.param .u64 a)\n.maxntid 128, 1, 1\n{\n"
		"\t.reg .b64 %rd<2>;\n\t{\n\t.param .b64 p0;\n"
		"\tcall.uni (p0), malloc, (p0);\n\t}\n\tret;\n}\n"
		".visible .entry plain(.param .u64 a)\n{\n\t.reg .b32 %call<2>;\n\tret;\n}\n"
		".visible .entry through(.param .u64 a)\n{\n"
		"\t.param .b64 r;\n\tcall (r), helper, (r);\n\tret;\n}\n";
	struct sim_image *img = parse_ok(ptx, sizeof(ptx) - 1);

	ck_assert_uint_eq(img->nkernels, 3);
	ck_assert_uint_eq(img->calls, SIM_IMAGE_CALLS_MALLOC);
	ck_assert_uint_eq(sim_image_find_kernel(img, "direct")->calls, SIM_IMAGE_CALLS_MALLOC);
	ck_assert_uint_eq(sim_image_find_kernel(img, "through")->calls, SIM_IMAGE_CALLS_MALLOC);
	ck_assert_uint_eq(sim_image_find_kernel(img, "plain")->calls, 0);
	sim_image_free(img);
}
END_TEST

START_TEST(test_ptx_hand)
{
	static const struct { const char *name; uint64_t size; uint32_t flags;
			      const char *init; } g[] = {
		{ "gi", 4, 0, "\7\0\0\0" },
		{ "gf", 12, 0, "\0\0\200\77\0\0\0\100\0\0\0\300" },
		{ "cb", 3, 0, "\1\2\3" },
		{ "gp", 8, SIM_GLOBAL_F_INIT_UNKNOWN, NULL },
		{ "a1", 2, 0, "\377\377" },
		{ "a2", 4, 0, "\377\177\10\0" },
		{ "vv", 16, 0, "\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0" },
		{ "gd", 8, 0, "\0\0\0\0\0\0\360\77" },
		{ "managed_x", 4, 0, "\5\0\0\0" },
		{ "c_one", 4, 0, "\0\0\200\77" },
		{ "m2", 24, 0, NULL },
	};
	struct sim_image *img = parse_ok(ptx_text, sizeof(ptx_text) - 1);
	const struct sim_kernel_desc *k;
	size_t i;

	check_sane(img);
	ck_assert_int_eq(img->format, SIM_IMAGE_PTX);
	ck_assert_uint_eq(img->nkernels, 4);	/* k1 k2 k3 k5 */
	k = sim_image_find_kernel(img, "k1");
	ck_assert_ptr_nonnull(k);
	ck_assert_uint_eq(k->nparams, 7);
	ck_assert_uint_eq(k->args_size, 48);
	{
		static const uint32_t e[7][2] = { { 0, 1 }, { 8, 8 },
			{ 16, 12 }, { 28, 2 }, { 32, 8 }, { 40, 3 }, { 44, 4 } };

		for (i = 0; i < 7; i++) {
			ck_assert_uint_eq(k->params[i].offset, e[i][0]);
			ck_assert_uint_eq(k->params[i].size, e[i][1]);
		}
	}
	k = sim_image_find_kernel(img, "k2");
	ck_assert_ptr_nonnull(k);
	ck_assert_uint_eq(k->nparams, 2);
	ck_assert_uint_eq(k->params[1].offset, 4096);
	ck_assert_uint_eq(k->args_size, 4100);
	ck_assert_uint_eq(sim_image_find_kernel(img, "k3")->nparams, 0);
	ck_assert_uint_eq(sim_image_find_kernel(img, "k5")->nparams, 0);
	ck_assert_ptr_null(sim_image_find_kernel(img, "k4"));
	ck_assert_ptr_null(sim_image_find_kernel(img, "helper"));
	ck_assert_ptr_null(sim_image_find_kernel(img, "fake"));

	ck_assert_uint_eq(img->nglobals, sizeof(g) / sizeof(g[0]));
	for (i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		const struct sim_global_desc *d =
			sim_image_find_global(img, g[i].name);

		ck_assert_msg(d, "%s missing", g[i].name);
		ck_assert_msg(d->size == g[i].size, "%s: size %llu", g[i].name,
			      (unsigned long long)d->size);
		ck_assert_uint_eq(d->flags, g[i].flags);
		ck_assert_msg(init_is(d, g[i].init), "%s: initial value",
			      g[i].name);
		if (!g[i].init)
			ck_assert_ptr_null(d->init);
	}
	ck_assert_int_eq(sim_image_find_global(img, "cb")->space,
			 SIM_GLOBAL_CONSTANT);
	ck_assert_int_eq(sim_image_find_global(img, "gi")->space,
			 SIM_GLOBAL_DEVICE);
	ck_assert_ptr_null(sim_image_find_global(img, "notaglobal"));
	ck_assert_ptr_null(sim_image_find_global(img, "ext_var"));
	ck_assert_ptr_null(sim_image_find_global(img, "tex"));
	ck_assert_ptr_null(sim_image_find_global(img, "sh"));
	sim_image_free(img);
}
END_TEST

/*
 * .b128 initialisers: each element is 16 bytes, given as a 64-bit integer
 * and extended. The element was copied 16 bytes from an 8-byte variable
 * (a stack overflow ASan reports; found by tests/fuzz/fuzz-image, whose
 * corpus keeps the input as regress-ptx-b128-init).
 */
START_TEST(test_ptx_b128_init)
{
	static const char text[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".global .align 16 .b128 x[2] = {1, -2};\n";
	static const uint8_t want[32] = {
		1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	struct sim_image *img = parse_ok(text, sizeof(text) - 1);
	const struct sim_global_desc *g = sim_image_find_global(img, "x");

	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->size, 32);
	ck_assert_msg(init_is(g, want), "x's initial value");
	sim_image_free(img);
}
END_TEST

START_TEST(test_ptx_bad)
{
	static const struct { const char *text; int rc; } v[] = {
		{ ".version 8.0\n.entry (", -EINVAL },
		{ ".version 8.0\n.entry k(.param .u32)", -EINVAL },
		{ ".version 8.0\n.entry k(.param .pred p)", -EINVAL },
		{ ".version 8.0\n.entry k(.param .u32 a b)", -EINVAL },
		{ ".version 8.0\n.entry k(.param .u32 a", -EINVAL },
		{ ".version 8.0\n.entry k(.reg .u32 a)", -EINVAL },
		{ ".version 8.0\n.entry k(.param .align 3 .b8 a[4])", -EINVAL },
		{ ".version 8.0\n.entry k(.param .b8 a[0])", -EINVAL },
		{ ".version 8.0\n.entry k(.param .b8 a[40000])", -EINVAL },
		{ ".version 8.0\n.entry k(.param .align 8 .b8 a[32762], .param .u64 b)",
		  -E2BIG },
		{ ".version 8.0\n.entry k() {}\n.entry k() {}", -EINVAL },
		{ ".version 8.0\n.global x;", -EINVAL },
		{ ".version 8.0\n.global .u32 x[2] = {1, 2, 3};", -EINVAL },
		{ ".version 8.0\n.global .u32 x[99999999999999];", -E2BIG },
		{ ".version 8.0\n.global .u32 x[4] y;", -EINVAL },
		{ ".version 8.0\n.target sm_100\n.entry k() {}", -ENOEXEC },
		{ ".version 8.0\n.target sm_120a, texmode_independent\n", -ENOEXEC },
	};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct sim_image *img = NULL;
		int rc = sim_image_parse(v[i].text, strlen(v[i].text), &img,
					 err, sizeof(err));

		ck_assert_msg(rc == v[i].rc, "case %zu: rc %d (%s)", i, rc, err);
		ck_assert_ptr_null(img);
	}
}
END_TEST

/* 513 parameters: over the limit. 512: fine. */
START_TEST(test_ptx_many_params)
{
	size_t cap = 64 + 600 * 24, n;
	char *t = malloc(cap);
	struct sim_image *img;
	char err[256];
	int i;

	for (int np = 512; np <= 513; np++) {
		n = (size_t)snprintf(t, cap, ".version 8.0\n.entry k(");
		for (i = 0; i < np; i++)
			n += (size_t)snprintf(t + n, cap - n, "%s.param .u32 p%d",
					      i ? "," : "", i);
		n += (size_t)snprintf(t + n, cap - n, ") {}");
		if (np == 512) {
			img = parse_ok(t, n);
			ck_assert_uint_eq(img->kernels[0].nparams, 512);
			ck_assert_uint_eq(img->kernels[0].args_size, 2048);
			sim_image_free(img);
		} else {
			ck_assert_int_eq(parse_err(t, n, err, sizeof(err)),
					 -E2BIG);
		}
	}
	free(t);
}
END_TEST

/* Text beyond a NUL is not PTX; odd lexical corners don't crash. */
START_TEST(test_ptx_lexical)
{
	static const char nul[] = ".version 8.0\n.entry a() {}\0.entry b() {}";
	static const char *const odd[] = {
		".version 8.0 /* unterminated",
		".version 8.0 \"unterminated string",
		".version 8.0 \"esc\\",
		".version 8.0 }}}}))));;;; .entry",
		".version 8.0 .global .u32 x = {{{{{{{{",
		".version 8.0 .global .f32 x = 1e+",
		".version 8.0 .global .f32 x = 0fZZ;",
		".version 8.0 .global .u32 x = - - 1;",
		".version 8.0 .global .u32 x[] = {};",
		".version 8.0 .global .u32 x[][2] = {1,2,3};",
		".version 8.0 .global .u32 x[2] = {1, 2}",
	};
	struct sim_image *img = parse_ok(nul, sizeof(nul) - 1);
	char err[256];
	size_t i;

	ck_assert_uint_eq(img->nkernels, 1);
	ck_assert_ptr_nonnull(sim_image_find_kernel(img, "a"));
	sim_image_free(img);
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		int rc = sim_image_parse(odd[i], strlen(odd[i]), &img, err,
					 sizeof(err));

		if (!rc) {
			check_sane(img);
			sim_image_free(img);
		} else {
			ck_assert_msg(rc < 0 && err[0], "case %zu", i);
		}
	}
	/* x[][2] = {1,2,3}: two rows of two */
	img = parse_ok(odd[9], strlen(odd[9]));
	ck_assert_uint_eq(img->globals[0].size, 16);
	ck_assert(init_is(&img->globals[0],
			  "\1\0\0\0\2\0\0\0\3\0\0\0\0\0\0\0"));
	sim_image_free(img);

	/* large arrays with short initialisers: within a total budget */
	{
		static const char big[] =
			".version 8.0\n.global .b8 x[100000000] = {1, 0, 2, 0};";
		static const char huge[] =
			".version 8.0\n.global .b8 x[200000000] = {1};\n"
			".global .b8 y[200000000] = {1};";

		img = parse_ok(big, sizeof(big) - 1);
		ck_assert_uint_eq(img->globals[0].size, 100000000);
		ck_assert_mem_eq(img->globals[0].init, "\1\0\2\0\0", 5);
		ck_assert_uint_eq(img->globals[0].init[99999999], 0);
		sim_image_free(img);
		ck_assert_int_eq(parse_err(huge, sizeof(huge) - 1, err,
					   sizeof(err)), -E2BIG);
	}
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Fuzz                                                                     */
/* ------------------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd64(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t rnd(size_t n)
{
	return n ? (size_t)(rnd64() % n) : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void mutate(uint8_t *d, size_t *len, size_t cap, bool text)
{
	static const uint64_t interesting[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff,
		0x10000, 0x7fffffff, 0x80000000, 0xffffffff, 1ULL << 32,
		~0ULL, ~0ULL >> 1, 24, 64, 512, 513, 32768,
	};
	static const char *const tokens[] = {
		"{", "}", "(", ")", ";", ",", "[", "]", "=", "-", ".param",
		".entry ", ".global ", ".const ", ".u32 ", ".align ", " 8 ",
		"\"", "/*", "//", "\n", " x", "0f3F800000", "generic(", ".b8",
	};
	size_t n = 1 + rnd(8), i;

	for (i = 0; i < n && *len; i++) {
		size_t pos = rnd(*len);

		switch (rnd(text ? 7 : 6)) {
		case 0:
			d[pos] = (uint8_t)rnd64();
			break;
		case 1:
			d[pos] ^= (uint8_t)(1u << rnd(8));
			break;
		case 2: {	/* an aligned field of 2, 4 or 8 bytes */
			unsigned w = 2u << rnd(3);
			uint64_t v = interesting[rnd(sizeof(interesting) /
						     sizeof(interesting[0]))];

			pos &= ~(size_t)(w - 1);
			if (rnd(4) == 0)
				v = (uint64_t)*len - rnd(64);
			if (pos + w <= *len)
				memcpy(d + pos, &v, w);
			break;
		}
		case 3:
			*len = pos;	/* truncate */
			break;
		case 4: {	/* copy a chunk elsewhere */
			size_t src = rnd(*len), m = 1 + rnd(64);

			if (src + m <= *len && pos + m <= *len)
				memmove(d + pos, d + src, m);
			break;
		}
		case 5:		/* zero a run */
			memset(d + pos, 0, rnd(*len - pos) % 256);
			break;
		case 6: {	/* insert a PTX token */
			const char *t = tokens[rnd(sizeof(tokens) /
						   sizeof(tokens[0]))];
			size_t tl = strlen(t);

			if (*len + tl <= cap) {
				memmove(d + pos + tl, d + pos, *len - pos);
				memcpy(d + pos, t, tl);
				*len += tl;
			}
			break;
		}
		}
	}
}

static void fuzz_one(const char *what, const uint8_t *orig, size_t olen,
		     bool text, double secs)
{
	size_t cap = olen + 4096;
	uint8_t *buf = malloc(cap);
	double end = now() + secs;
	unsigned long iters = 0, ok = 0;
	double slowest = 0;

	do {
		struct sim_image *img = NULL;
		char err[256] = "";
		size_t len = olen;
		uint8_t *exact;
		double t0;
		int rc;

		memcpy(buf, orig, olen);
		mutate(buf, &len, cap, text);
		/* an exactly-sized copy so ASan catches overreads */
		exact = malloc(len ? len : 1);
		memcpy(exact, buf, len);
		t0 = now();
		rc = sim_image_parse(exact, len, &img, err, sizeof(err));
		if (now() - t0 > slowest)
			slowest = now() - t0;
		if (!rc) {
			const char *why = sane(img);

			if (why)
				ck_abort_msg("%s: %s (seed printed above)", what,
					     why);
			sim_image_free(img);
			ok++;
		} else if (rc >= 0 || !err[0] || img) {
			ck_abort_msg("%s: rc %d without message", what, rc);
		}
		free(exact);
		iters++;
	} while (now() < end);
	fprintf(stderr, "fuzz %s: %lu inputs, %lu accepted, slowest %.1f ms\n",
		what, iters, ok, slowest * 1e3);
	free(buf);
}

START_TEST(test_fuzz)
{
	const char *s = getenv("AXON_FUZZ_SECONDS");
	const char *seed = getenv("AXON_FUZZ_SEED");
	double secs = s ? atof(s) : 0.5;
	size_t f;
	struct recs r = { .n = 0 };
	struct mini m;

	rng_state = seed ? strtoull(seed, NULL, 0) : (uint64_t)time(NULL);
	if (!rng_state)
		rng_state = 1;
	fprintf(stderr, "fuzz seed %llu (AXON_FUZZ_SEED to replay)\n",
		(unsigned long long)rng_state);

	r_kparam(&r, 1, 8, 4);
	r_kparam(&r, 0, 0, 8);
	r_hval(&r, 0x19, 12);
	m = mini_elf(r.b, r.n, 0x10);
	fuzz_one("mini cubin", m.d, m.len, false, secs / 2);
	free(m.d);
	fuzz_one("hand PTX", (const uint8_t *)ptx_text, sizeof(ptx_text) - 1,
		 true, secs / 2);

	for (f = 0; f < sizeof(data_files) / sizeof(data_files[0]); f++) {
		size_t len;
		uint8_t *d = load(data_files[f], &len);

		if (!d)
			continue;	/* reported by the other tests */
		fuzz_one(data_files[f], d, len,
			 strstr(data_files[f], ".ptx") != NULL, secs);
		free(d);
	}
}
END_TEST

/* ------------------------------------------------------------------------ */

int main(void)
{
	Suite *s = suite_create("sim-image");
	TCase *tc;
	SRunner *sr;
	bool have_data = true;
	size_t i;
	int failed;

	find_data_dir();
	for (i = 0; i < sizeof(data_files) / sizeof(data_files[0]); i++) {
		char path[PATH_MAX + 64];

		snprintf(path, sizeof(path), "%s/%s", data_dir, data_files[i]);
		if (access(path, R_OK))
			have_data = false;
	}

	tc = tcase_create("synthetic");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_wrapper);
	tcase_add_test(tc, test_elf_mini);
	tcase_add_test(tc, test_elf_mini_externs);
	tcase_add_test(tc, test_elf_mini_bad_info);
	tcase_add_test(tc, test_elf_mini_bad_headers);
	tcase_add_test(tc, test_elf_alias_budget);
	tcase_add_test(tc, test_ptx_hand);
	tcase_add_test(tc, test_ptx_calls);
	tcase_add_test(tc, test_ptx_bad);
	tcase_add_test(tc, test_ptx_b128_init);
	tcase_add_test(tc, test_ptx_many_params);
	tcase_add_test(tc, test_ptx_lexical);
	suite_add_tcase(s, tc);

	if (have_data) {
		tc = tcase_create("nvcc");
		tcase_set_timeout(tc, 300);
		tcase_add_test(tc, test_cubin);
		tcase_add_test(tc, test_ptx);
		tcase_add_test(tc, test_fatbin);
		tcase_add_test(tc, test_fatbin_no_sm90);
		tcase_add_test(tc, test_fatbin_concat);
		tcase_add_test(tc, test_fatbin_choice);
		tcase_add_test(tc, test_truncated);
		suite_add_tcase(s, tc);
	}
	tc = tcase_create("fuzz");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, test_fuzz);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed)
		return 1;
	if (!have_data) {
		fprintf(stderr, "sim-image: nvcc-made images missing in %s (no nvcc at build time?): cubin/fatbin/PTX tests skipped\n",
			data_dir);
		return 77;
	}
	return 0;
}
