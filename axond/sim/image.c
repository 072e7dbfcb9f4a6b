// SPDX-License-Identifier: MIT
/*
 * sim/image: find the kernels and globals of a CUDA module image (cubin,
 * fatbin or PTX). See image.h for what is accepted.
 *
 * Formats, as checked against CUDA 13.0 (nvcc/ptxas/fatbinary 13.0.88):
 *
 * cubin .nv.info.<kernel> sections hold records
 *	u8 format (EIFMT_*), u8 attribute (EIATTR_*), then
 *	NVAL: nothing (record padded to 4 bytes), BVAL: u8 (padded to 2),
 *	HVAL: u16 value, SVAL: u16 size + size bytes.
 *   EIATTR_KPARAM_INFO (0x17, SVAL 12): u32 index, u16 ordinal,
 *	u16 offset, u32 {bits 0-7 pointee log2 align, 8-11 space,
 *	12-16 cbank, 17 not-in-cbank, 18-31 size}.
 *   EIATTR_KPARAM_INFO_V2 (0x45, SVAL 12), used when a parameter is
 *	larger than the 14-bit size field: u32 index, u16 ordinal,
 *	u16 offset, u32 size.
 *   EIATTR_CBANK_PARAM_SIZE (0x19, HVAL): bytes of parameters.
 *   EIATTR_PARAM_CBANK (0x0a, SVAL 8): u32 symbol, u16 offset of the
 *	parameters in constant bank 0, u16 their size.
 *   Records come in descending ordinal order; kernels without parameters
 *   have none of them.
 * Kernel symbols are STT_FUNC with st_other bit 0x10 (entry); __noinline__
 * device functions in -rdc cubins are STT_FUNC in .text.<name> without it.
 * Variables are STT_OBJECT (ET_EXEC) or type 13 (ET_REL); __constant__
 * ones live in .nv.constant3 (sm_90), .nv.constant4 holds the driver's
 * address table and .nv.constant0.<kernel> the parameter banks.
 *
 * fatbin (little-endian):
 *   header: u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
 *	u64 bytes of entries that follow.
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
 * Every offset and size read from the image is checked before use, loops
 * are iterative and bounded, and nothing of the input is referenced after
 * sim_image_parse() returns.
 */
#include "image.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>
#include <linux/axon.h>

_Static_assert(SIM_IMAGE_MAX_PARAMS == AXON_MAX_KERNEL_PARAMS,
	       "parameter limit must match the uapi");
_Static_assert(SIM_IMAGE_MAX_ARGS_SIZE == AXON_MAX_ARGS_SIZE,
	       "argument size limit must match the uapi");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "image parsing assumes a little-endian host");

#define FATBIN_WRAPPER_MAGIC	0x466243b1U
#define FATBIN_MAGIC		0xba55ed50U
#define FATBIN_HDR_MIN		16
#define FATBIN_ENTRY_HDR_MIN	64
#define FATBIN_MAX_ENTRIES	4096
#define FATBIN_KIND_PTX		1
#define FATBIN_KIND_ELF		2
#define FATBIN_F_LZ4		0x2000ULL
#define FATBIN_F_ZSTD		0x8000ULL

#define EM_CUDA_		190
#define ELF_ET_REL		1
#define ELF_ET_EXEC		2
#define ELF_SHT_SYMTAB		2
#define ELF_SHT_NOBITS		8
#define ELF_SHN_LORESERVE	0xff00
#define ELF_STT_OBJECT		1
#define ELF_STT_FUNC		2
#define ELF_STT_CUDA_OBJECT	13
#define STO_CUDA_ENTRY		0x10

#define EIFMT_NVAL		1
#define EIFMT_BVAL		2
#define EIFMT_HVAL		3
#define EIFMT_SVAL		4
#define EIATTR_PARAM_CBANK	0x0a
#define EIATTR_KPARAM_INFO	0x17
#define EIATTR_CBANK_PARAM_SIZE	0x19
#define EIATTR_KPARAM_INFO_V2	0x45

#define MAX_GLOBAL_SIZE		(1ULL << 48)
#define MAX_PTX_INIT_SIZE	(64U << 20)

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

struct builder {
	struct sim_image *img;
	size_t kcap, gcap;
	uint64_t init_total;	/* bytes of initial values kept */
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct builder *b, int rc, const char *fmt, ...)
{
	va_list ap;

	if (b->errlen) {
		va_start(ap, fmt);
		vsnprintf(b->err, b->errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * SASS for sm_XY runs on a device of compute capability X.Z, Z >= Y, only:
 * not across major versions (sm_80 code does not run on 9.0).
 */
static bool sm_runs(uint32_t arch)
{
	return arch / 10 == SIM_IMAGE_SM / 10 && arch <= SIM_IMAGE_SM;
}

/* [off, off + size) lies inside [0, len). */
static bool in_range(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

static char *dup_name(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* Appends a kernel; takes ownership of name and params even on failure. */
static int add_kernel(struct builder *b, char *name, uint32_t nparams,
		      uint32_t args_size, struct sim_param *params)
{
	struct sim_image *img = b->img;

	if (img->nkernels == b->kcap) {
		size_t cap = b->kcap ? 2 * b->kcap : 16;
		struct sim_kernel_desc *k;

		if (img->nkernels >= SIM_IMAGE_MAX_KERNELS) {
			free(name);
			free(params);
			return fail(b, -E2BIG, "more than %u kernels",
				    SIM_IMAGE_MAX_KERNELS);
		}
		k = realloc(img->kernels, cap * sizeof(*k));
		if (!k) {
			free(name);
			free(params);
			return fail(b, -ENOMEM, "out of memory");
		}
		img->kernels = k;
		b->kcap = cap;
	}
	img->kernels[img->nkernels++] = (struct sim_kernel_desc){
		.name = name, .nparams = nparams, .args_size = args_size,
		.params = params,
	};
	return 0;
}

/*
 * Accounts for size bytes of initial value about to be allocated: a small
 * image must not make a large allocation (ELF symbols can all point at the
 * same bytes, a PTX array can be large with a short initialiser).
 */
static int init_reserve(struct builder *b, const char *name, uint64_t size)
{
	if (size > SIM_IMAGE_MAX_INIT - b->init_total)
		return fail(b, -E2BIG,
			    "global %s: initial values over %u bytes in all",
			    name, SIM_IMAGE_MAX_INIT);
	b->init_total += size;
	return 0;
}

/*
 * Appends a global; takes ownership of name and init (NULL or size bytes,
 * reserved with init_reserve()) even on failure.
 */
static int add_global(struct builder *b, char *name, uint64_t size,
		      enum sim_global_space space, uint32_t flags,
		      uint8_t *init)
{
	struct sim_image *img = b->img;
	uint64_t i;

	/* all-zero initial bytes (an uninitialised __constant__): NULL */
	for (i = 0; init && i < size && !init[i]; i++)
		;
	if (init && i == size) {
		free(init);
		init = NULL;
		b->init_total -= size;
	}
	if (img->nglobals == b->gcap) {
		size_t cap = b->gcap ? 2 * b->gcap : 16;
		struct sim_global_desc *g;

		if (img->nglobals >= SIM_IMAGE_MAX_GLOBALS) {
			free(name);
			free(init);
			return fail(b, -E2BIG, "more than %u globals",
				    SIM_IMAGE_MAX_GLOBALS);
		}
		g = realloc(img->globals, cap * sizeof(*g));
		if (!g) {
			free(name);
			free(init);
			return fail(b, -ENOMEM, "out of memory");
		}
		img->globals = g;
		b->gcap = cap;
	}
	img->globals[img->nglobals++] = (struct sim_global_desc){
		.name = name, .size = size, .space = space, .flags = flags,
		.init = init,
	};
	return 0;
}

/*
 * Parameters collected by ordinal, then checked and laid out: ordinals
 * 0..n-1 each exactly once, offsets rising without overlap.
 */
struct param_table {
	uint32_t n;			/* 1 + highest ordinal seen */
	uint32_t max_end;
	struct sim_param p[SIM_IMAGE_MAX_PARAMS];
	bool seen[SIM_IMAGE_MAX_PARAMS];
};

static int param_set(struct builder *b, struct param_table *t,
		     const char *kname, uint32_t ord, uint32_t off,
		     uint32_t size)
{
	if (ord >= SIM_IMAGE_MAX_PARAMS)
		return fail(b, -E2BIG,
			    "kernel %s: parameter ordinal %u over the limit of %u",
			    kname, ord, SIM_IMAGE_MAX_PARAMS);
	if (t->seen[ord])
		return fail(b, -EINVAL,
			    "kernel %s: parameter %u described twice", kname,
			    ord);
	if ((uint64_t)off + size > SIM_IMAGE_MAX_ARGS_SIZE)
		return fail(b, -E2BIG,
			    "kernel %s: parameter %u (offset %u, size %u) beyond %u bytes",
			    kname, ord, off, size, SIM_IMAGE_MAX_ARGS_SIZE);
	t->seen[ord] = true;
	t->p[ord] = (struct sim_param){ .offset = off, .size = size };
	if (ord + 1 > t->n)
		t->n = ord + 1;
	if (off + size > t->max_end)
		t->max_end = off + size;
	return 0;
}

/* Checks the table and adds the kernel; takes ownership of name. */
static int param_finish(struct builder *b, struct param_table *t,
			char *name, bool have_size, uint32_t args_size)
{
	struct sim_param *params = NULL;
	uint32_t i;

	for (i = 0; i < t->n; i++) {
		if (!t->seen[i]) {
			fail(b, -EINVAL, "kernel %s: parameter %u missing",
			     name, i);
			free(name);
			return -EINVAL;
		}
		if (i && t->p[i].offset <
			 (uint64_t)t->p[i - 1].offset + t->p[i - 1].size) {
			fail(b, -EINVAL,
			     "kernel %s: parameter %u (offset %u) overlaps parameter %u",
			     name, i, t->p[i].offset, i - 1);
			free(name);
			return -EINVAL;
		}
	}
	if (!have_size)
		args_size = t->max_end;
	if (args_size < t->max_end || args_size > SIM_IMAGE_MAX_ARGS_SIZE) {
		fail(b, -EINVAL,
		     "kernel %s: parameter size %u inconsistent (parameters end at %u, limit %u)",
		     name, args_size, t->max_end, SIM_IMAGE_MAX_ARGS_SIZE);
		free(name);
		return -EINVAL;
	}
	if (t->n) {
		params = malloc(t->n * sizeof(*params));
		if (!params) {
			free(name);
			return fail(b, -ENOMEM, "out of memory");
		}
		memcpy(params, t->p, t->n * sizeof(*params));
	}
	return add_kernel(b, name, t->n, args_size, params);
}

/* ------------------------------------------------------------------------ */
/* ELF cubin                                                                */
/* ------------------------------------------------------------------------ */

struct elf_sec {
	const char *name;	/* in .shstrtab, NUL-terminated; "" if bad */
	size_t namelen;
	uint32_t type;
	uint64_t off, size;
	uint32_t link;
};

struct elf {
	const uint8_t *d;
	size_t len;
	uint16_t shnum;
	struct elf_sec *sec;
	const struct elf_sec **by_name;	/* sections sorted by name */
};

/* The data of section i, checked to lie inside the file. */
static const uint8_t *elf_data(struct builder *b, const struct elf *e,
			       unsigned i, int *rc)
{
	const struct elf_sec *s = &e->sec[i];

	if (s->type == ELF_SHT_NOBITS || !in_range(s->off, s->size, e->len)) {
		*rc = fail(b, -EINVAL,
			   "ELF: section %u (%s) data out of the file", i,
			   s->name);
		return NULL;
	}
	return e->d + s->off;
}

static int elf_cmp_concat(const char *pre, const char *name, size_t namelen,
			  const struct elf_sec *s)
{
	size_t plen = strlen(pre), n;
	int c;

	n = plen < s->namelen ? plen : s->namelen;
	c = memcmp(pre, s->name, n);
	if (c)
		return c;
	if (plen > s->namelen)
		return 1;
	n = s->namelen - plen;
	c = memcmp(name, s->name + plen, namelen < n ? namelen : n);
	if (c)
		return c;
	return namelen < n ? -1 : namelen > n;
}

/* Index of the section named pre + name, or 0. */
static unsigned elf_find(const struct elf *e, const char *pre,
			 const char *name, size_t namelen)
{
	size_t lo = 0, hi = e->shnum;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = elf_cmp_concat(pre, name, namelen, e->by_name[mid]);

		if (!c)
			return (unsigned)(e->by_name[mid] - e->sec);
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

static int elf_sort_cmp(const void *a, const void *b)
{
	const struct elf_sec *x = *(const struct elf_sec *const *)a;
	const struct elf_sec *y = *(const struct elf_sec *const *)b;
	size_t n = x->namelen < y->namelen ? x->namelen : y->namelen;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	return x->namelen < y->namelen ? -1 : x->namelen > y->namelen;
}

/* Parses .nv.info.<kernel> into a kernel; takes ownership of name. */
static int elf_kernel(struct builder *b, const struct elf *e, char *name,
		      size_t namelen)
{
	struct param_table *t;
	unsigned si = elf_find(e, ".nv.info.", name, namelen);
	const uint8_t *d;
	uint64_t off = 0, size;
	bool have_cbsize = false, have_cbank = false;
	uint32_t cbsize = 0, cbank = 0;
	int rc = 0;

	t = calloc(1, sizeof(*t));
	if (!t) {
		free(name);
		return fail(b, -ENOMEM, "out of memory");
	}
	if (!si)
		goto done;	/* no attributes: no parameters */
	d = elf_data(b, e, si, &rc);
	if (!d)
		goto out;
	size = e->sec[si].size;
	while (off < size) {
		uint8_t fmt, attr;
		uint16_t sz;
		const uint8_t *p;

		if (size - off < 2) {
			rc = fail(b, -EINVAL, "kernel %s: truncated .nv.info",
				  name);
			goto out;
		}
		fmt = d[off];
		attr = d[off + 1];
		switch (fmt) {
		case EIFMT_NVAL:
			off = (off + 2 + 3) & ~3ULL;
			continue;
		case EIFMT_BVAL:
			off = (off + 3 + 1) & ~1ULL;
			continue;
		case EIFMT_HVAL:
			if (size - off < 4) {
				rc = fail(b, -EINVAL,
					  "kernel %s: truncated .nv.info", name);
				goto out;
			}
			if (attr == EIATTR_CBANK_PARAM_SIZE) {
				have_cbsize = true;
				cbsize = rd16(d + off + 2);
			}
			off += 4;
			continue;
		case EIFMT_SVAL:
			break;
		default:
			rc = fail(b, -EINVAL,
				  "kernel %s: unknown .nv.info record format %u at %llu",
				  name, fmt, (unsigned long long)off);
			goto out;
		}
		if (size - off < 4 || rd16(d + off + 2) > size - off - 4) {
			rc = fail(b, -EINVAL, "kernel %s: truncated .nv.info",
				  name);
			goto out;
		}
		sz = rd16(d + off + 2);
		p = d + off + 4;
		off += 4 + (uint64_t)sz;
		if (attr == EIATTR_KPARAM_INFO || attr == EIATTR_KPARAM_INFO_V2) {
			uint32_t psize;

			if (sz < 12) {
				rc = fail(b, -EINVAL,
					  "kernel %s: short KPARAM_INFO record",
					  name);
				goto out;
			}
			psize = rd32(p + 8);
			if (attr == EIATTR_KPARAM_INFO)
				psize >>= 18;
			rc = param_set(b, t, name, rd16(p + 4), rd16(p + 6),
				       psize);
			if (rc)
				goto out;
		} else if (attr == EIATTR_PARAM_CBANK) {
			if (sz < 8) {
				rc = fail(b, -EINVAL,
					  "kernel %s: short PARAM_CBANK record",
					  name);
				goto out;
			}
			have_cbank = true;
			cbank = rd16(p + 6);
		}
	}
done:
	rc = param_finish(b, t, name, have_cbsize || have_cbank,
			  have_cbsize ? cbsize : cbank);
	name = NULL;
out:
	free(name);
	free(t);
	return rc;
}

static int elf_global(struct builder *b, const struct elf *e, char *name,
		      unsigned shndx, uint64_t value, uint64_t size)
{
	const struct elf_sec *s = &e->sec[shndx];
	enum sim_global_space space = SIM_GLOBAL_DEVICE;
	uint8_t *init = NULL;
	int rc = 0;

	if (!strncmp(s->name, ".nv.constant", 12))
		space = SIM_GLOBAL_CONSTANT;
	if (!in_range(value, size, s->size)) {
		rc = fail(b, -EINVAL,
			  "ELF: global %s (offset %llu, size %llu) outside its section %s",
			  name, (unsigned long long)value,
			  (unsigned long long)size, s->name);
		free(name);
		return rc;
	}
	if (size && strcmp(s->name, ".nv.global") &&
	    s->type != ELF_SHT_NOBITS) {
		const uint8_t *d = elf_data(b, e, shndx, &rc);

		if (!d || (rc = init_reserve(b, name, size))) {
			free(name);
			return rc;
		}
		init = malloc(size);
		if (!init) {
			free(name);
			return fail(b, -ENOMEM, "out of memory");
		}
		memcpy(init, d + value, size);
	}
	return add_global(b, name, size, space, 0, init);
}

static bool is_global_section(const struct elf_sec *s)
{
	return !strcmp(s->name, ".nv.global") ||
	       !strcmp(s->name, ".nv.global.init") ||
	       !strncmp(s->name, ".nv.constant", 12);
}

/* A symbol name from strtab, checked; NULL (and *rc) if bad. */
static const char *elf_str(struct builder *b, const uint8_t *strtab,
			   uint64_t strsize, uint32_t off, size_t *len,
			   int *rc)
{
	const uint8_t *nul;

	if (off >= strsize)
		goto bad;
	nul = memchr(strtab + off, '\0', strsize - off);
	if (!nul)
		goto bad;
	*len = (size_t)(nul - (strtab + off));
	if (*len > SIM_IMAGE_MAX_NAME) {
		*rc = fail(b, -E2BIG, "ELF: symbol name longer than %u bytes",
			   SIM_IMAGE_MAX_NAME);
		return NULL;
	}
	return (const char *)strtab + off;
bad:
	*rc = fail(b, -EINVAL, "ELF: symbol name offset %u out of .strtab",
		   off);
	return NULL;
}

static int elf_symbols(struct builder *b, const struct elf *e, unsigned symi)
{
	const struct elf_sec *ss = &e->sec[symi];
	const uint8_t *sym, *str;
	uint64_t nsym, i, strsize;
	int rc = 0;

	if (ss->link == 0 || ss->link >= e->shnum)
		return fail(b, -EINVAL, "ELF: .symtab has no string table");
	sym = elf_data(b, e, symi, &rc);
	if (!sym)
		return rc;
	str = elf_data(b, e, ss->link, &rc);
	if (!str)
		return rc;
	strsize = e->sec[ss->link].size;
	nsym = ss->size / 24;

	for (i = 1; i < nsym; i++) {
		const uint8_t *s = sym + i * 24;
		uint8_t type = s[4] & 0xf, other = s[5];
		uint16_t shndx = rd16(s + 6);
		const struct elf_sec *sec;
		const char *nm;
		size_t nlen;
		char *name;

		if (type != ELF_STT_FUNC && type != ELF_STT_OBJECT &&
		    type != ELF_STT_CUDA_OBJECT)
			continue;
		if (shndx == 0 || shndx >= ELF_SHN_LORESERVE ||
		    shndx >= e->shnum)
			continue;
		sec = &e->sec[shndx];
		if (type != ELF_STT_FUNC && !is_global_section(sec))
			continue;
		nm = elf_str(b, str, strsize, rd32(s), &nlen, &rc);
		if (!nm)
			return rc;
		if (!nlen)
			continue;
		if (type == ELF_STT_FUNC) {
			/* the kernel's own .text.<name> section */
			if (sec->namelen != 6 + nlen ||
			    memcmp(sec->name, ".text.", 6) ||
			    memcmp(sec->name + 6, nm, nlen))
				continue;
			if (!(other & STO_CUDA_ENTRY) &&
			    !elf_find(e, ".nv.constant0.", nm, nlen))
				continue;	/* a device function */
		}
		name = dup_name(nm, nlen);
		if (!name)
			return fail(b, -ENOMEM, "out of memory");
		if (type == ELF_STT_FUNC)
			rc = elf_kernel(b, e, name, nlen);
		else
			rc = elf_global(b, e, name, shndx, rd64(s + 8),
					rd64(s + 16));
		if (rc)
			return rc;
	}
	return 0;
}

/* check_arch: refuse SASS that a 9.0 device would not run */
static int parse_elf(struct builder *b, const uint8_t *d, size_t len,
		     bool check_arch)
{
	struct elf e = { .d = d, .len = len };
	uint64_t shoff;
	uint16_t type, shentsize, shstrndx;
	unsigned i, symi = 0;
	const uint8_t *shstr;
	uint64_t shstrsize;
	int rc = 0;

	if (len < 64)
		return fail(b, -EINVAL, "ELF: truncated header (%zu bytes)",
			    len);
	if (d[4] != 2)
		return fail(b, -ENOTSUP,
			    "ELF: only 64-bit cubins are supported (class %u)",
			    d[4]);
	if (d[5] != 1)
		return fail(b, -EINVAL, "ELF: not little-endian");
	if (rd16(d + 18) != EM_CUDA_)
		return fail(b, -EINVAL, "ELF: machine %u is not EM_CUDA (190)",
			    rd16(d + 18));
	type = rd16(d + 16);
	if (type != ELF_ET_EXEC && type != ELF_ET_REL)
		return fail(b, -EINVAL, "ELF: type %u is neither ET_EXEC nor ET_REL",
			    type);
	shoff = rd64(d + 0x28);
	shentsize = rd16(d + 0x3a);
	e.shnum = rd16(d + 0x3c);
	shstrndx = rd16(d + 0x3e);
	if (!e.shnum)
		return fail(b, -EINVAL, "ELF: no section headers");
	if (shentsize != 64)
		return fail(b, -EINVAL, "ELF: section header size %u, not 64",
			    shentsize);
	if (!in_range(shoff, (uint64_t)e.shnum * 64, len))
		return fail(b, -EINVAL, "ELF: section headers out of the file");
	if (shstrndx == 0 || shstrndx >= e.shnum)
		return fail(b, -EINVAL, "ELF: bad section name table index %u",
			    shstrndx);
	/* e_flags: sm in bits 8-15 since ELF ABI version 7, else 0-7 */
	b->img->sm_arch = d[8] >= 7 ? (rd32(d + 0x30) >> 8) & 0xff :
				      rd32(d + 0x30) & 0xff;
	if (check_arch && b->img->sm_arch && !sm_runs(b->img->sm_arch))
		return fail(b, -ENOEXEC, "cubin for sm_%u cannot run on sm_%u",
			    b->img->sm_arch, SIM_IMAGE_SM);

	e.sec = calloc(e.shnum, sizeof(*e.sec));
	e.by_name = calloc(e.shnum, sizeof(*e.by_name));
	if (!e.sec || !e.by_name) {
		rc = fail(b, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < e.shnum; i++) {
		const uint8_t *h = d + shoff + (uint64_t)i * 64;

		e.sec[i] = (struct elf_sec){
			.name = "", .type = rd32(h + 4), .off = rd64(h + 24),
			.size = rd64(h + 32), .link = rd32(h + 40),
		};
		e.by_name[i] = &e.sec[i];
	}
	shstr = elf_data(b, &e, shstrndx, &rc);
	if (!shstr)
		goto out;
	shstrsize = e.sec[shstrndx].size;
	for (i = 1; i < e.shnum; i++) {
		uint32_t no = rd32(d + shoff + (uint64_t)i * 64);
		const uint8_t *nul;

		if (no >= shstrsize ||
		    !(nul = memchr(shstr + no, '\0', shstrsize - no))) {
			rc = fail(b, -EINVAL,
				  "ELF: section %u name out of .shstrtab", i);
			goto out;
		}
		e.sec[i].name = (const char *)shstr + no;
		e.sec[i].namelen = (size_t)(nul - (shstr + no));
		if (e.sec[i].type == ELF_SHT_SYMTAB && !symi)
			symi = i;
	}
	qsort(e.by_name, e.shnum, sizeof(*e.by_name), elf_sort_cmp);
	if (symi)
		rc = elf_symbols(b, &e, symi);
out:
	free(e.sec);
	free(e.by_name);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* PTX                                                                      */
/* ------------------------------------------------------------------------ */

enum tok_type { T_EOF, T_WORD, T_NUM, T_PUNCT, T_STR };

struct tok {
	enum tok_type type;
	const char *s;
	size_t n;
};

struct lex {
	const char *p, *end;
	struct tok t;		/* current token */
};

static bool is_word_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || c == '$' || c == '%' || c == '.';
}

static bool is_word_char(char c)
{
	return is_word_start(c) || (c >= '0' && c <= '9');
}

static void skip_blank(struct lex *l)
{
	while (l->p < l->end) {
		char c = *l->p;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
		    c == '\f' || c == '\v') {
			l->p++;
		} else if (c == '/' && l->end - l->p >= 2 && l->p[1] == '/') {
			const char *nl = memchr(l->p, '\n', l->end - l->p);

			l->p = nl ? nl + 1 : l->end;
		} else if (c == '/' && l->end - l->p >= 2 && l->p[1] == '*') {
			const char *q = l->p + 2;

			while (q < l->end - 1 && !(q[0] == '*' && q[1] == '/'))
				q++;
			l->p = q < l->end - 1 ? q + 2 : l->end;
		} else {
			break;
		}
	}
}

static void next(struct lex *l)
{
	const char *s;
	char c;

	skip_blank(l);
	s = l->p;
	if (s >= l->end) {
		l->t = (struct tok){ .type = T_EOF, .s = s, .n = 0 };
		return;
	}
	c = *s;
	if (is_word_start(c)) {
		while (l->p < l->end && is_word_char(*l->p))
			l->p++;
		l->t = (struct tok){ .type = T_WORD, .s = s, .n = l->p - s };
	} else if (c >= '0' && c <= '9') {
		bool hex = l->end - s >= 2 && s[0] == '0' &&
			   (s[1] == 'x' || s[1] == 'X' || s[1] == 'f' ||
			    s[1] == 'F' || s[1] == 'd' || s[1] == 'D');

		while (l->p < l->end) {
			c = *l->p;
			if (is_word_char(c) && c != '%' && c != '$') {
				l->p++;
			} else if ((c == '+' || c == '-') && !hex &&
				   (l->p[-1] == 'e' || l->p[-1] == 'E')) {
				l->p++;
			} else {
				break;
			}
		}
		l->t = (struct tok){ .type = T_NUM, .s = s, .n = l->p - s };
	} else if (c == '"') {
		l->p++;
		while (l->p < l->end && *l->p != '"') {
			if (*l->p == '\\' && l->end - l->p >= 2)
				l->p++;
			l->p++;
		}
		if (l->p < l->end)
			l->p++;
		l->t = (struct tok){ .type = T_STR, .s = s, .n = l->p - s };
	} else {
		l->p++;
		l->t = (struct tok){ .type = T_PUNCT, .s = s, .n = 1 };
	}
}

static bool tok_is(const struct tok *t, const char *w)
{
	size_t n = strlen(w);

	return t->type != T_EOF && t->n == n && !memcmp(t->s, w, n);
}

static bool tok_punct(const struct tok *t, char c)
{
	return t->type == T_PUNCT && *t->s == c;
}

/* Size in bytes of a PTX fundamental type directive, 0 if unknown. */
static unsigned ptx_type_size(const struct tok *t)
{
	static const struct { const char *n; unsigned size; } types[] = {
		{ ".b8", 1 }, { ".u8", 1 }, { ".s8", 1 },
		{ ".b16", 2 }, { ".u16", 2 }, { ".s16", 2 }, { ".f16", 2 },
		{ ".bf16", 2 },
		{ ".b32", 4 }, { ".u32", 4 }, { ".s32", 4 }, { ".f32", 4 },
		{ ".f16x2", 4 }, { ".bf16x2", 4 },
		{ ".b64", 8 }, { ".u64", 8 }, { ".s64", 8 }, { ".f64", 8 },
		{ ".b128", 16 },
	};
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (tok_is(t, types[i].n))
			return types[i].size;
	return 0;
}

static bool ptx_type_float(const struct tok *t)
{
	return tok_is(t, ".f32") || tok_is(t, ".f64");
}

/* Parses an unsigned decimal/hex/octal/binary integer token. */
static bool ptx_uint(const struct tok *t, uint64_t *v)
{
	char buf[80], *end;

	if (t->type != T_NUM || t->n >= sizeof(buf))
		return false;
	memcpy(buf, t->s, t->n);
	buf[t->n] = '\0';
	if (t->n > 1 && buf[t->n - 1] == 'U')
		buf[t->n - 1] = '\0';
	errno = 0;
	if (buf[0] == '0' && (buf[1] == 'b' || buf[1] == 'B'))
		*v = strtoull(buf + 2, &end, 2);
	else
		*v = strtoull(buf, &end, 0);
	return !errno && *end == '\0' && end != buf;
}

/* Skips to the ';' ending the statement (consumed) or EOF. */
static void skip_statement(struct lex *l)
{
	while (l->t.type != T_EOF && !tok_punct(&l->t, ';'))
		next(l);
	if (l->t.type != T_EOF)
		next(l);
}

static int ptx_entry(struct builder *b, struct lex *l)
{
	struct param_table *t;
	char *name;
	uint32_t cur = 0;
	int rc = 0;

	next(l);
	if (l->t.type != T_WORD || l->t.s[0] == '.')
		return fail(b, -EINVAL, "PTX: .entry without a name");
	if (l->t.n > SIM_IMAGE_MAX_NAME)
		return fail(b, -E2BIG, "PTX: kernel name longer than %u bytes",
			    SIM_IMAGE_MAX_NAME);
	name = dup_name(l->t.s, l->t.n);
	t = calloc(1, sizeof(*t));
	if (!name || !t) {
		free(name);
		free(t);
		return fail(b, -ENOMEM, "out of memory");
	}
	next(l);
	if (tok_punct(&l->t, '(')) {
		next(l);
		while (!tok_punct(&l->t, ')')) {
			unsigned align = 0, esize = 0;
			uint64_t size, count = 1, off;
			bool named = false;

			if (!tok_is(&l->t, ".param")) {
				rc = fail(b, -EINVAL,
					  "PTX: kernel %s: expected .param", name);
				goto out;
			}
			for (next(l); !tok_punct(&l->t, ',') &&
				      !tok_punct(&l->t, ')'); next(l)) {
				uint64_t v;

				if (l->t.type == T_EOF)
					break;
				if (tok_is(&l->t, ".align")) {
					next(l);
					if (!ptx_uint(&l->t, &v) || !v ||
					    (v & (v - 1)) || v > 4096)
						goto bad_param;
					if (!esize)	/* else: pointee's */
						align = (unsigned)v;
				} else if (!esize && ptx_type_size(&l->t)) {
					esize = ptx_type_size(&l->t);
				} else if (tok_is(&l->t, ".ptr") ||
					   tok_is(&l->t, ".global") ||
					   tok_is(&l->t, ".const") ||
					   tok_is(&l->t, ".shared") ||
					   tok_is(&l->t, ".local")) {
					/* pointer attributes */
				} else if (l->t.type == T_WORD &&
					   l->t.s[0] != '.' && esize && !named) {
					named = true;
				} else if (tok_punct(&l->t, '[') && named) {
					next(l);
					if (!ptx_uint(&l->t, &v) || !v ||
					    v > SIM_IMAGE_MAX_ARGS_SIZE)
						goto bad_param;
					count *= v;
					if (count > SIM_IMAGE_MAX_ARGS_SIZE)
						goto bad_param;
					next(l);
					if (!tok_punct(&l->t, ']'))
						goto bad_param;
				} else {
					goto bad_param;
				}
			}
			if (!esize || !named)
				goto bad_param;
			if (!align)
				align = esize;
			size = esize * count;
			off = ((uint64_t)cur + align - 1) & ~(uint64_t)(align - 1);
			if (off > SIM_IMAGE_MAX_ARGS_SIZE) {
				rc = fail(b, -E2BIG,
					  "PTX: kernel %s: parameters beyond %u bytes",
					  name, SIM_IMAGE_MAX_ARGS_SIZE);
				goto out;
			}
			rc = param_set(b, t, name, t->n, (uint32_t)off,
				       (uint32_t)size);
			if (rc)
				goto out;
			cur = (uint32_t)(off + size);
			if (tok_punct(&l->t, ','))
				next(l);
			else if (!tok_punct(&l->t, ')'))
				goto bad_param;
		}
		next(l);
	}
	rc = param_finish(b, t, name, false, 0);
	free(t);
	return rc;
bad_param:
	rc = fail(b, -EINVAL, "PTX: kernel %s: cannot parse parameter %u near '%.*s'",
		  name, t->n, (int)(l->t.n > 40 ? 40 : l->t.n), l->t.s);
out:
	free(name);
	free(t);
	return rc;
}

/*
 * One initialiser element into buf[idx] (esize bytes): an optionally
 * negated integer, 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX bit patterns, or a
 * decimal floating point number for .f32/.f64. false if not numeric.
 */
static bool ptx_init_elem(const struct tok *t, bool neg, unsigned esize,
			  bool is_float, uint8_t *dst)
{
	char buf[80], *end;
	uint64_t bits;

	if (t->type != T_NUM || t->n >= sizeof(buf))
		return false;
	memcpy(buf, t->s, t->n);
	buf[t->n] = '\0';
	if (t->n >= 3 && buf[0] == '0' && (buf[1] == 'f' || buf[1] == 'F' ||
					   buf[1] == 'd' || buf[1] == 'D')) {
		bool dbl = buf[1] == 'd' || buf[1] == 'D';

		if (t->n != (dbl ? 18u : 10u))
			return false;
		errno = 0;
		bits = strtoull(buf + 2, &end, 16);
		if (errno || *end)
			return false;
		if (!is_float || (esize == 8) != dbl) {
			if (!is_float || neg)
				return false;
			/* f32 pattern for an f64 or the reverse */
			if (dbl) {
				double x;
				float f;
				uint32_t u;

				memcpy(&x, &bits, 8);
				f = (float)x;
				memcpy(&u, &f, 4);
				bits = u;
			} else {
				uint32_t u = (uint32_t)bits;
				float f;
				double x;

				memcpy(&f, &u, 4);
				x = f;
				memcpy(&bits, &x, 8);
			}
		}
		if (neg)
			bits ^= esize == 8 ? 1ULL << 63 : 1ULL << 31;
	} else if (strpbrk(buf, ".eE") && !strpbrk(buf, "xX")) {
		double x;

		if (!is_float)
			return false;
		errno = 0;
		x = strtod(buf, &end);
		if (errno || *end)
			return false;
		if (neg)
			x = -x;
		if (esize == 8) {
			memcpy(&bits, &x, 8);
		} else {
			float f = (float)x;
			uint32_t u;

			memcpy(&u, &f, 4);
			bits = u;
		}
	} else {
		uint64_t v;

		if (!ptx_uint(t, &v))
			return false;
		if (is_float) {
			double x = (double)v;

			if (neg)
				x = -x;
			if (esize == 8) {
				memcpy(&bits, &x, 8);
			} else {
				float f = (float)x;
				uint32_t u;

				memcpy(&u, &f, 4);
				bits = u;
			}
		} else {
			bits = neg ? 0 - v : v;
		}
	}
	if (esize <= sizeof(bits)) {
		memcpy(dst, &bits, esize);	/* little-endian: the low bytes */
		return true;
	}
	/*
	 * A .b128 element (the only type wider than bits; not a float)
	 * given as a 64-bit integer: the upper half extends it, all ones
	 * for a negated one (PTX's two's complement). Copying esize bytes
	 * from bits read past it (found by tests/fuzz/fuzz-image).
	 */
	memcpy(dst, &bits, sizeof(bits));
	memset(dst + sizeof(bits), neg && bits ? 0xff : 0, esize - sizeof(bits));
	return true;
}

/*
 * A module-scope .global or .const declaration, the current token being
 * the state space. Handles several declarators, array dimensions (one of
 * them possibly [] with an initialiser) and numeric initialisers.
 */
static int ptx_decl(struct builder *b, struct lex *l,
		    enum sim_global_space space)
{
	unsigned esize = 0, vec = 1;
	bool is_float = false;
	int rc = 0;

	for (next(l); l->t.type == T_WORD && l->t.s[0] == '.'; next(l)) {
		uint64_t v;

		if (tok_is(&l->t, ".align")) {
			next(l);
			if (!ptx_uint(&l->t, &v))
				return fail(b, -EINVAL, "PTX: bad .align");
		} else if (tok_is(&l->t, ".v2") || tok_is(&l->t, ".v4") ||
			   tok_is(&l->t, ".v8")) {
			vec = (unsigned)(l->t.s[2] - '0');
		} else if (tok_is(&l->t, ".attribute")) {
			next(l);
			if (!tok_punct(&l->t, '('))
				return fail(b, -EINVAL, "PTX: bad .attribute");
			while (l->t.type != T_EOF && !tok_punct(&l->t, ')'))
				next(l);
		} else if (ptx_type_size(&l->t)) {
			esize = ptx_type_size(&l->t);
			is_float = ptx_type_float(&l->t);
		} else if (tok_is(&l->t, ".texref") ||
			   tok_is(&l->t, ".samplerref") ||
			   tok_is(&l->t, ".surfref")) {
			skip_statement(l);	/* not memory */
			return 0;
		} else {
			break;	/* e.g. .visible after the space: ignored */
		}
	}
	if (!esize)
		return fail(b, -EINVAL, "PTX: declaration without a type near '%.*s'",
			    (int)(l->t.n > 40 ? 40 : l->t.n), l->t.s);

	for (;;) {
		uint64_t elems = vec, v, size;
		bool unsized = false;
		uint32_t flags = 0;
		uint8_t *init = NULL;
		char *name;

		if (l->t.type != T_WORD || l->t.s[0] == '.' ||
		    l->t.n > SIM_IMAGE_MAX_NAME)
			return fail(b, -EINVAL, "PTX: bad declarator near '%.*s'",
				    (int)(l->t.n > 40 ? 40 : l->t.n), l->t.s);
		name = dup_name(l->t.s, l->t.n);
		if (!name)
			return fail(b, -ENOMEM, "out of memory");
		for (next(l); tok_punct(&l->t, '['); next(l)) {
			next(l);
			if (tok_punct(&l->t, ']') && !unsized) {
				unsized = true;
				continue;
			}
			if (!ptx_uint(&l->t, &v) || !v ||
			    v > MAX_GLOBAL_SIZE || elems * v / v != elems ||
			    elems * v > MAX_GLOBAL_SIZE / esize) {
				rc = fail(b, -E2BIG,
					  "PTX: global %s: bad or too large dimension",
					  name);
				goto out;
			}
			elems *= v;
			next(l);
			if (!tok_punct(&l->t, ']')) {
				rc = fail(b, -EINVAL,
					  "PTX: global %s: expected ']'", name);
				goto out;
			}
		}
		size = elems * esize;
		if (tok_punct(&l->t, '=')) {
			/*
			 * Flattened elements. A sized array gets its whole
			 * value at the first element, a [] one grows.
			 */
			uint64_t n = 0;
			size_t depth = 0, alloc = 0;
			bool neg = false;

			for (next(l); l->t.type != T_EOF; next(l)) {
				if (tok_punct(&l->t, '{')) {
					depth++;
					continue;
				}
				if (tok_punct(&l->t, '}')) {
					if (depth)
						depth--;
					continue;
				}
				if (!depth && (tok_punct(&l->t, ',') ||
					       tok_punct(&l->t, ';')))
					break;
				if (tok_punct(&l->t, ','))
					continue;
				if (tok_punct(&l->t, '-') && !neg) {
					neg = true;
					continue;
				}
				if (flags & SIM_GLOBAL_F_INIT_UNKNOWN)
					continue;
				if (!unsized && n >= elems) {
					rc = fail(b, -EINVAL,
						  "PTX: global %s: too many initialisers",
						  name);
					goto out;
				}
				if (unsized &&
				    (n + 1) * esize > MAX_PTX_INIT_SIZE) {
					rc = fail(b, -E2BIG,
						  "PTX: global %s: initialiser over %u bytes",
						  name, MAX_PTX_INIT_SIZE);
					goto out;
				}
				if (!unsized && !init) {
					rc = init_reserve(b, name, size);
					if (rc)
						goto out;
					init = calloc(1, size);
					if (!init) {
						rc = fail(b, -ENOMEM,
							  "out of memory");
						goto out;
					}
					alloc = size;
				}
				if ((n + 1) * esize > alloc) {
					size_t na = alloc ? 2 * alloc : 64;
					uint8_t *p;

					while (na < (n + 1) * esize)
						na *= 2;
					p = realloc(init, na);
					if (!p) {
						rc = fail(b, -ENOMEM,
							  "out of memory");
						goto out;
					}
					memset(p + alloc, 0, na - alloc);
					init = p;
					alloc = na;
				}
				if (!ptx_init_elem(&l->t, neg, esize, is_float,
						   init + n * esize))
					flags |= SIM_GLOBAL_F_INIT_UNKNOWN;
				n++;
				neg = false;
			}
			if (unsized) {
				/* round up to whole rows of the other dims */
				uint64_t row = elems;

				elems = (n + row - 1) / row * row;
				size = elems * esize;
				if (init && (rc = init_reserve(b, name, size)))
					goto out;
				if (init && size > alloc) {
					uint8_t *p = realloc(init, size);

					if (!p) {
						b->init_total -= size;
						rc = fail(b, -ENOMEM,
							  "out of memory");
						goto out;
					}
					memset(p + alloc, 0, size - alloc);
					init = p;
				}
			}
			if (init && (flags & SIM_GLOBAL_F_INIT_UNKNOWN)) {
				free(init);
				init = NULL;
				b->init_total -= size;
			}
		} else if (unsized) {
			size = 0;
		}
		rc = add_global(b, name, size, space, flags, init);
		init = NULL;
		name = NULL;
		if (rc)
			return rc;
		if (tok_punct(&l->t, ';')) {
			next(l);
			return 0;
		}
		if (!tok_punct(&l->t, ','))
			return fail(b, -EINVAL,
				    "PTX: expected ';' after a declaration");
		next(l);
		continue;
out:
		free(name);
		free(init);
		return rc;
	}
}

/* Text length: up to the first NUL. */
static size_t ptx_len(const uint8_t *d, size_t len)
{
	const uint8_t *nul = memchr(d, '\0', len);

	return nul ? (size_t)(nul - d) : len;
}

static bool looks_like_ptx(const uint8_t *d, size_t len)
{
	struct lex l = { .p = (const char *)d,
			 .end = (const char *)d + ptx_len(d, len) };

	next(&l);
	return tok_is(&l.t, ".version");
}

static int parse_ptx(struct builder *b, const uint8_t *d, size_t len)
{
	struct lex l = { .p = (const char *)d,
			 .end = (const char *)d + ptx_len(d, len) };
	size_t braces = 0, parens = 0;
	bool ext = false;
	int rc;

	next(&l);
	if (!tok_is(&l.t, ".version"))
		return fail(b, -EINVAL, "PTX: does not start with .version");
	while (l.t.type != T_EOF) {
		const struct tok *t = &l.t;

		if (t->type == T_PUNCT) {
			switch (*t->s) {
			case '{': braces++; ext = false; break;
			case '}': if (braces) braces--; ext = false; break;
			case '(': parens++; break;
			case ')': if (parens) parens--; break;
			case ';': ext = false; break;
			}
		} else if (t->type == T_WORD && !braces && !parens) {
			if (tok_is(t, ".target")) {
				/* .target sm_90[a], texmode, debug */
				next(&l);
				if (l.t.type == T_WORD && l.t.n >= 5 &&
				    !memcmp(l.t.s, "sm_", 3)) {
					unsigned v = 0;
					size_t i;

					for (i = 3; i < l.t.n && i < 6 &&
						    l.t.s[i] >= '0' &&
						    l.t.s[i] <= '9'; i++)
						v = v * 10 + (unsigned)(l.t.s[i] - '0');
					b->img->sm_arch = v;
					if (v > SIM_IMAGE_SM)
						return fail(b, -ENOEXEC,
							    "PTX for sm_%u cannot run on sm_%u",
							    v, SIM_IMAGE_SM);
				}
				continue;
			} else if (tok_is(t, ".extern")) {
				ext = true;
			} else if (tok_is(t, ".entry")) {
				if (ext) {
					ext = false;
				} else {
					rc = ptx_entry(b, &l);
					if (rc)
						return rc;
					continue;
				}
			} else if ((tok_is(t, ".global") || tok_is(t, ".const")) &&
				   !ext) {
				rc = ptx_decl(b, &l, tok_is(t, ".global") ?
						     SIM_GLOBAL_DEVICE :
						     SIM_GLOBAL_CONSTANT);
				if (rc)
					return rc;
				continue;
			}
		}
		next(&l);
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Fatbin                                                                   */
/* ------------------------------------------------------------------------ */

struct fat_entry {
	const uint8_t *hdr;	/* NULL: none */
	const uint8_t *payload;
	uint64_t psize;
	uint32_t arch;
};

static int fat_decompress(struct builder *b, const struct fat_entry *f,
			  uint8_t **out, size_t *outlen)
{
	uint64_t flags = rd64(f->hdr + 40);
	uint64_t usize = rd64(f->hdr + 56);
	uint64_t csize = rd32(f->hdr + 16);
	uint8_t *buf;

	if ((flags & FATBIN_F_LZ4) && (flags & FATBIN_F_ZSTD))
		return fail(b, -ENOTSUP,
			    "fatbin: entry flags %#llx name two compressions",
			    (unsigned long long)flags);
	if (!usize || usize > SIM_IMAGE_MAX_DECOMPRESSED)
		return fail(b, usize ? -E2BIG : -EINVAL,
			    "fatbin: bad uncompressed size %llu (limit %u)",
			    (unsigned long long)usize,
			    SIM_IMAGE_MAX_DECOMPRESSED);
	if (!csize || csize > f->psize)
		csize = f->psize;
	if (csize > INT32_MAX)
		return fail(b, -E2BIG, "fatbin: compressed entry too large");
	buf = malloc(usize);
	if (!buf)
		return fail(b, -ENOMEM, "out of memory");
	if (flags & FATBIN_F_LZ4) {
		/* stops once usize bytes are out: padding is never read */
		int n = LZ4_decompress_safe_partial((const char *)f->payload,
						    (char *)buf, (int)csize,
						    (int)usize, (int)usize);

		if (n < 0 || (uint64_t)n != usize) {
			free(buf);
			return fail(b, -EINVAL,
				    "fatbin: corrupt LZ4 entry (%d of %llu bytes)",
				    n, (unsigned long long)usize);
		}
		*outlen = (size_t)n;
	} else {
		size_t n = ZSTD_decompress(buf, usize, f->payload, csize);

		if (ZSTD_isError(n)) {
			free(buf);
			return fail(b, -EINVAL, "fatbin: corrupt ZSTD entry: %s",
				    ZSTD_getErrorName(n));
		}
		*outlen = n;
	}
	*out = buf;
	return 0;
}

static int parse_fatbin(struct builder *b, const uint8_t *d, size_t len)
{
	struct fat_entry elf = { 0 }, ptx = { 0 }, *pick;
	uint64_t off = 0;
	unsigned nent = 0;
	char seen[160] = "";
	size_t seenlen = 0;
	uint8_t *buf = NULL;
	size_t plen;
	const uint8_t *payload;
	uint64_t flags;
	int rc;

	while (len - off >= FATBIN_HDR_MIN && rd32(d + off) == FATBIN_MAGIC) {
		uint16_t hs = rd16(d + off + 6);
		uint64_t size = rd64(d + off + 8), eo, eend;

		if (hs < FATBIN_HDR_MIN || hs > len - off)
			return fail(b, -EINVAL, "fatbin: bad header size %u", hs);
		if (size > len - off - hs)
			return fail(b, -EINVAL,
				    "fatbin: %llu bytes of entries, only %llu in the image",
				    (unsigned long long)size,
				    (unsigned long long)(len - off - hs));
		eo = off + hs;
		eend = eo + size;
		while (eo < eend) {
			const uint8_t *h = d + eo;
			uint32_t ehs, arch;
			uint64_t psize;
			uint16_t kind;

			if (eend - eo < FATBIN_ENTRY_HDR_MIN)
				return fail(b, -EINVAL,
					    "fatbin: truncated entry header at %llu",
					    (unsigned long long)eo);
			kind = rd16(h);
			ehs = rd32(h + 4);
			psize = rd64(h + 8);
			arch = rd32(h + 28);
			if (ehs < FATBIN_ENTRY_HDR_MIN || ehs > eend - eo ||
			    psize > eend - eo - ehs)
				return fail(b, -EINVAL,
					    "fatbin: entry at %llu overruns the fatbin",
					    (unsigned long long)eo);
			if (++nent > FATBIN_MAX_ENTRIES)
				return fail(b, -E2BIG,
					    "fatbin: more than %u entries",
					    FATBIN_MAX_ENTRIES);
			if (seenlen < sizeof(seen) - 24)
				seenlen += (size_t)snprintf(seen + seenlen,
						sizeof(seen) - seenlen, "%s%s_%u",
						seenlen ? " " : "",
						kind == FATBIN_KIND_ELF ? "sm" :
						kind == FATBIN_KIND_PTX ?
						"compute" : "kind?", arch);
			pick = kind == FATBIN_KIND_ELF ? &elf :
			       kind == FATBIN_KIND_PTX ? &ptx : NULL;
			if (pick && (pick == &elf ? sm_runs(arch) :
					     arch <= SIM_IMAGE_SM) &&
			    (!pick->hdr || arch > pick->arch))
				*pick = (struct fat_entry){
					.hdr = h, .payload = h + ehs,
					.psize = psize, .arch = arch,
				};
			eo += ehs + psize;
		}
		off = eend;
	}
	if (!nent)
		return fail(b, -EINVAL, "fatbin: no entries");
	pick = elf.hdr ? &elf : ptx.hdr ? &ptx : NULL;
	if (!pick)
		return fail(b, -ENOEXEC,
			    "fatbin: no ELF for sm_%u.. sm_%u and no PTX for compute_%u or lower (has: %s)",
			    SIM_IMAGE_SM / 10 * 10, SIM_IMAGE_SM, SIM_IMAGE_SM,
			    seen);
	b->img->code_kind = pick == &elf ? SIM_CODE_ELF : SIM_CODE_PTX;
	flags = rd64(pick->hdr + 40);
	payload = pick->payload;
	plen = pick->psize;
	if (flags & (FATBIN_F_LZ4 | FATBIN_F_ZSTD)) {
		rc = fat_decompress(b, pick, &buf, &plen);
		if (rc)
			return rc;
		payload = buf;
	}
	if (pick == &elf) {
		if (plen < 4 || memcmp(payload, "\177ELF", 4))
			rc = fail(b, -EINVAL, "fatbin: ELF entry is not ELF");
		else
			rc = parse_elf(b, payload, plen, false);
	} else {
		rc = parse_ptx(b, payload, plen);
	}
	b->img->sm_arch = pick->arch;
	free(buf);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* API                                                                      */
/* ------------------------------------------------------------------------ */

static int kernel_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sim_kernel_desc *)a)->name,
		      ((const struct sim_kernel_desc *)b)->name);
}

void sim_image_free(struct sim_image *img)
{
	size_t i;

	if (!img)
		return;
	for (i = 0; i < img->nkernels; i++) {
		free(img->kernels[i].name);
		free(img->kernels[i].params);
	}
	for (i = 0; i < img->nglobals; i++) {
		free(img->globals[i].name);
		free(img->globals[i].init);
	}
	free(img->kernels);
	free(img->globals);
	free(img);
}

int sim_image_parse(const void *data, size_t len, struct sim_image **out,
		    char *err, size_t errlen)
{
	struct builder b = { .err = err, .errlen = errlen };
	const uint8_t *d = data;
	size_t i;
	int rc;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	if (!d || len < 4)
		return fail(&b, -EINVAL, "image too short (%zu bytes)",
			    d ? len : 0);
	b.img = calloc(1, sizeof(*b.img));
	if (!b.img)
		return fail(&b, -ENOMEM, "out of memory");

	if (rd32(d) == FATBIN_WRAPPER_MAGIC) {
		rc = fail(&b, -ENOTSUP,
			  "image is a __fatBinC_Wrapper_t (magic 0x466243b1), which holds a host pointer; pass the fatbin it points to (magic 0xba55ed50)");
	} else if (rd32(d) == FATBIN_MAGIC) {
		b.img->format = SIM_IMAGE_FATBIN;
		rc = parse_fatbin(&b, d, len);
	} else if (!memcmp(d, "\177ELF", 4)) {
		b.img->format = SIM_IMAGE_CUBIN;
		b.img->code_kind = SIM_CODE_ELF;
		rc = parse_elf(&b, d, len, true);
	} else if (looks_like_ptx(d, len)) {
		b.img->format = SIM_IMAGE_PTX;
		b.img->code_kind = SIM_CODE_PTX;
		rc = parse_ptx(&b, d, len);
	} else {
		rc = fail(&b, -EINVAL,
			  "unrecognised image (starts %02x %02x %02x %02x): not a cubin, fatbin or PTX",
			  d[0], d[1], d[2], d[3]);
	}
	if (!rc && b.img->nkernels) {
		qsort(b.img->kernels, b.img->nkernels,
		      sizeof(*b.img->kernels), kernel_cmp);
		for (i = 1; i < b.img->nkernels; i++) {
			if (!strcmp(b.img->kernels[i - 1].name,
				    b.img->kernels[i].name)) {
				rc = fail(&b, -EINVAL, "kernel %s defined twice",
					  b.img->kernels[i].name);
				break;
			}
		}
	}
	if (rc) {
		sim_image_free(b.img);
		return rc;
	}
	*out = b.img;
	return 0;
}

const struct sim_kernel_desc *
sim_image_find_kernel(const struct sim_image *img, const char *name)
{
	size_t lo = 0, hi;

	if (!img || !name)
		return NULL;
	hi = img->nkernels;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, img->kernels[mid].name);

		if (!c)
			return &img->kernels[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const struct sim_global_desc *
sim_image_find_global(const struct sim_image *img, const char *name)
{
	size_t i;

	if (!img || !name)
		return NULL;
	for (i = 0; i < img->nglobals; i++)
		if (!strcmp(img->globals[i].name, name))
			return &img->globals[i];
	return NULL;
}
