// SPDX-License-Identifier: MIT
/*
 * sim/cubin: kernels and globals of an ELF cubin (see cubin.h).
 *
 * Layout, as checked against CUDA 13.0 (nvcc/ptxas 13.0.88):
 *
 * .nv.info.<kernel> sections hold records
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
 *   EIATTR_EXTERNS (0x0f, SVAL 4n): u32 .symtab indices of the undefined
 *	functions the kernel's code calls, itself or through the functions
 *	it calls (nvlink folds a callee's into its callers'; an -rdc
 *	object's kernels lack those of their callees).
 *
 * Kernel symbols are STT_FUNC with st_other bit 0x10 (entry); __noinline__
 * device functions in -rdc cubins are STT_FUNC in .text.<name> without it.
 * Variables are STT_OBJECT (ET_EXEC) or type 13 (ET_REL); __constant__
 * ones live in .nv.constant3 (sm_90), .nv.constant4 holds the driver's
 * address table and .nv.constant0.<kernel> the parameter banks.
 *
 * Every offset and size read from the image is checked before use, and
 * loops are bounded by the section and symbol counts.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "le.h"

/*
 * NVIDIA's own ELF values, which <elf.h> does not name: the symbol type of
 * relocatable cubins' variables (the first processor-specific type) and
 * the st_other bit that marks a kernel entry.
 */
#define STT_CUDA_OBJECT		STT_LOPROC
#define STO_CUDA_ENTRY		0x10

#define EIFMT_NVAL		1
#define EIFMT_BVAL		2
#define EIFMT_HVAL		3
#define EIFMT_SVAL		4
#define EIATTR_PARAM_CBANK	0x0a
#define EIATTR_EXTERNS		0x0f
#define EIATTR_KPARAM_INFO	0x17
#define EIATTR_CBANK_PARAM_SIZE	0x19
#define EIATTR_KPARAM_INFO_V2	0x45

/*
 * The image need not be aligned for ELF structs: headers and symbols are
 * copied out of it, never pointed at.
 */
static Elf64_Shdr rd_shdr(const uint8_t *p)
{
	Elf64_Shdr h;

	memcpy(&h, p, sizeof(h));
	return h;
}

static Elf64_Sym rd_sym(const uint8_t *p)
{
	Elf64_Sym s;

	memcpy(&s, p, sizeof(s));
	return s;
}

/* [off, off + size) lies inside [0, len). */
static bool in_range(uint64_t off, uint64_t size, uint64_t len)
{
	return off <= len && size <= len - off;
}

struct elf_sec {
	const char *name;	/* in .shstrtab, NUL-terminated; "" if bad */
	size_t namelen;
	uint32_t type;
	uint64_t off, size;
	uint32_t link;
	uint32_t name_off;	/* sh_name */
};

struct elf {
	const uint8_t *d;
	size_t len;
	uint16_t shnum;
	struct elf_sec *sec;
	const struct elf_sec **by_name;	/* sections sorted by name */
	/* .symtab and its strings, checked to lie in the file (elf_symbols) */
	const uint8_t *sym, *str;
	uint64_t nsym, strsize;
};

/* The data of section i, checked to lie inside the file. */
static const uint8_t *elf_data(struct sim_builder *b, const struct elf *e,
			       unsigned i, int *rc)
{
	const struct elf_sec *s = &e->sec[i];

	if (s->type == SHT_NOBITS || !in_range(s->off, s->size, e->len)) {
		*rc = sim_fail(b, -EINVAL,
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

static const char *elf_str(struct sim_builder *b, const uint8_t *strtab,
			   uint64_t strsize, uint32_t off, size_t *len, int *rc);

/*
 * The device runtime calls among an EIATTR_EXTERNS record's sz bytes of
 * symbol indices; an index that is not an undefined function is no call.
 */
static int elf_externs(struct sim_builder *b, const struct elf *e, const char *kname,
		       const uint8_t *p, uint16_t sz, uint32_t *calls)
{
	uint16_t i;
	int rc = 0;

	if (sz % 4)
		return sim_fail(b, -EINVAL, "kernel %s: EXTERNS record of %u bytes", kname, sz);
	for (i = 0; i < sz; i += 4) {
		uint32_t idx = rd32(p + i);
		Elf64_Sym s;
		const char *nm;
		size_t nlen;

		if (!idx || idx >= e->nsym)
			continue;
		s = rd_sym(e->sym + (uint64_t)idx * sizeof(Elf64_Sym));
		if (s.st_shndx != SHN_UNDEF || ELF64_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		nm = elf_str(b, e->str, e->strsize, s.st_name, &nlen, &rc);
		if (!nm)
			return rc;
		*calls |= sim_call_of(nm, nlen);
	}
	return 0;
}

/* Parses .nv.info.<kernel> into a kernel; takes ownership of name. */
static int elf_kernel(struct sim_builder *b, const struct elf *e, char *name,
		      size_t namelen)
{
	struct sim_param_table *t;
	unsigned si = elf_find(e, ".nv.info.", name, namelen);
	const uint8_t *d;
	uint64_t off = 0, size;
	bool have_cbsize = false, have_cbank = false;
	uint32_t cbsize = 0, cbank = 0;
	int rc = 0;

	t = calloc(1, sizeof(*t));
	if (!t) {
		free(name);
		return sim_fail(b, -ENOMEM, "out of memory");
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
			rc = sim_fail(b, -EINVAL, "kernel %s: truncated .nv.info",
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
				rc = sim_fail(b, -EINVAL,
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
			rc = sim_fail(b, -EINVAL,
				      "kernel %s: unknown .nv.info record format %u at %llu",
				      name, fmt, (unsigned long long)off);
			goto out;
		}
		if (size - off < 4 || rd16(d + off + 2) > size - off - 4) {
			rc = sim_fail(b, -EINVAL, "kernel %s: truncated .nv.info",
				      name);
			goto out;
		}
		sz = rd16(d + off + 2);
		p = d + off + 4;
		off += 4 + (uint64_t)sz;
		if (attr == EIATTR_KPARAM_INFO || attr == EIATTR_KPARAM_INFO_V2) {
			uint32_t psize;

			if (sz < 12) {
				rc = sim_fail(b, -EINVAL,
					      "kernel %s: short KPARAM_INFO record",
					      name);
				goto out;
			}
			psize = rd32(p + 8);
			if (attr == EIATTR_KPARAM_INFO)
				psize >>= 18;
			rc = sim_param_set(b, t, name, rd16(p + 4), rd16(p + 6),
					   psize);
			if (rc)
				goto out;
		} else if (attr == EIATTR_PARAM_CBANK) {
			if (sz < 8) {
				rc = sim_fail(b, -EINVAL,
					      "kernel %s: short PARAM_CBANK record",
					      name);
				goto out;
			}
			have_cbank = true;
			cbank = rd16(p + 6);
		} else if (attr == EIATTR_EXTERNS) {
			rc = elf_externs(b, e, name, p, sz, &t->calls);
			if (rc)
				goto out;
		}
	}
done:
	rc = sim_param_finish(b, t, name, have_cbsize || have_cbank,
			      have_cbsize ? cbsize : cbank);
	name = NULL;
out:
	free(name);
	free(t);
	return rc;
}

static int elf_global(struct sim_builder *b, const struct elf *e, char *name,
		      unsigned shndx, uint64_t value, uint64_t size)
{
	const struct elf_sec *s = &e->sec[shndx];
	enum sim_global_space space = SIM_GLOBAL_DEVICE;
	uint8_t *init = NULL;
	int rc = 0;

	if (!strncmp(s->name, ".nv.constant", 12))
		space = SIM_GLOBAL_CONSTANT;
	if (!in_range(value, size, s->size)) {
		rc = sim_fail(b, -EINVAL,
			      "ELF: global %s (offset %llu, size %llu) outside its section %s",
			      name, (unsigned long long)value,
			      (unsigned long long)size, s->name);
		free(name);
		return rc;
	}
	if (size && strcmp(s->name, ".nv.global") &&
	    s->type != SHT_NOBITS) {
		const uint8_t *d = elf_data(b, e, shndx, &rc);

		if (!d || (rc = sim_reserve_init(b, name, size))) {
			free(name);
			return rc;
		}
		init = malloc(size);
		if (!init) {
			free(name);
			return sim_fail(b, -ENOMEM, "out of memory");
		}
		memcpy(init, d + value, size);
	}
	return sim_add_global(b, name, size, space, 0, init);
}

static bool is_global_section(const struct elf_sec *s)
{
	return !strcmp(s->name, ".nv.global") ||
	       !strcmp(s->name, ".nv.global.init") ||
	       !strncmp(s->name, ".nv.constant", 12);
}

/* A symbol name from strtab, checked; NULL (and *rc) if bad. */
static const char *elf_str(struct sim_builder *b, const uint8_t *strtab,
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
		*rc = sim_fail(b, -E2BIG, "ELF: symbol name longer than %u bytes",
			       SIM_IMAGE_MAX_NAME);
		return NULL;
	}
	return (const char *)strtab + off;
bad:
	*rc = sim_fail(b, -EINVAL, "ELF: symbol name offset %u out of .strtab",
		       off);
	return NULL;
}

static int elf_symbols(struct sim_builder *b, struct elf *e, unsigned symi)
{
	const struct elf_sec *ss = &e->sec[symi];
	const uint8_t *sym, *str;
	uint64_t nsym, i, strsize;
	int rc = 0;

	if (ss->link == 0 || ss->link >= e->shnum)
		return sim_fail(b, -EINVAL, "ELF: .symtab has no string table");
	sym = elf_data(b, e, symi, &rc);
	if (!sym)
		return rc;
	str = elf_data(b, e, ss->link, &rc);
	if (!str)
		return rc;
	strsize = e->sec[ss->link].size;
	nsym = ss->size / sizeof(Elf64_Sym);
	e->sym = sym;
	e->nsym = nsym;
	e->str = str;
	e->strsize = strsize;

	for (i = 1; i < nsym; i++) {
		Elf64_Sym s = rd_sym(sym + i * sizeof(Elf64_Sym));
		uint8_t type = ELF64_ST_TYPE(s.st_info), other = s.st_other;
		uint16_t shndx = s.st_shndx;
		const struct elf_sec *sec;
		const char *nm;
		size_t nlen;
		char *name;

		if (type != STT_FUNC && type != STT_OBJECT &&
		    type != STT_CUDA_OBJECT)
			continue;
		if (shndx == SHN_UNDEF && type == STT_FUNC) {
			/* a call out of the image: the device runtime's? */
			nm = elf_str(b, str, strsize, s.st_name, &nlen, &rc);
			if (!nm)
				return rc;
			sim_note_call(b, nm, nlen);
			continue;
		}
		if (shndx == 0 || shndx >= SHN_LORESERVE ||
		    shndx >= e->shnum)
			continue;
		sec = &e->sec[shndx];
		if (type != STT_FUNC && !is_global_section(sec))
			continue;
		nm = elf_str(b, str, strsize, s.st_name, &nlen, &rc);
		if (!nm)
			return rc;
		if (!nlen)
			continue;
		if (type == STT_FUNC) {
			/* the kernel's own .text.<name> section */
			if (sec->namelen != 6 + nlen ||
			    memcmp(sec->name, ".text.", 6) ||
			    memcmp(sec->name + 6, nm, nlen))
				continue;
			if (!(other & STO_CUDA_ENTRY) &&
			    !elf_find(e, ".nv.constant0.", nm, nlen))
				continue;	/* a device function */
		}
		name = sim_dup_name(nm, nlen);
		if (!name)
			return sim_fail(b, -ENOMEM, "out of memory");
		if (type == STT_FUNC)
			rc = elf_kernel(b, e, name, nlen);
		else
			rc = elf_global(b, e, name, shndx, s.st_value,
					s.st_size);
		if (rc)
			return rc;
	}
	return 0;
}

/* check_arch: refuse SASS that a 9.0 device would not run */
int sim_cubin_read(struct sim_builder *b, const uint8_t *d, size_t len,
		   bool check_arch)
{
	struct elf e = { .d = d, .len = len };
	Elf64_Ehdr eh;
	unsigned i, symi = 0;
	const uint8_t *shstr;
	uint64_t shstrsize;
	int rc = 0;

	if (len < sizeof(eh))
		return sim_fail(b, -EINVAL, "ELF: truncated header (%zu bytes)",
				len);
	memcpy(&eh, d, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64)
		return sim_fail(b, -ENOTSUP,
				"ELF: only 64-bit cubins are supported (class %u)",
				eh.e_ident[EI_CLASS]);
	if (eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return sim_fail(b, -EINVAL, "ELF: not little-endian");
	if (eh.e_machine != EM_CUDA)
		return sim_fail(b, -EINVAL, "ELF: machine %u is not EM_CUDA (%u)",
				eh.e_machine, EM_CUDA);
	if (eh.e_type != ET_EXEC && eh.e_type != ET_REL)
		return sim_fail(b, -EINVAL, "ELF: type %u is neither ET_EXEC nor ET_REL",
				eh.e_type);
	e.shnum = eh.e_shnum;
	if (!e.shnum)
		return sim_fail(b, -EINVAL, "ELF: no section headers");
	if (eh.e_shentsize != sizeof(Elf64_Shdr))
		return sim_fail(b, -EINVAL, "ELF: section header size %u, not %zu",
				eh.e_shentsize, sizeof(Elf64_Shdr));
	if (!in_range(eh.e_shoff, (uint64_t)e.shnum * sizeof(Elf64_Shdr), len))
		return sim_fail(b, -EINVAL, "ELF: section headers out of the file");
	if (eh.e_shstrndx == 0 || eh.e_shstrndx >= e.shnum)
		return sim_fail(b, -EINVAL, "ELF: bad section name table index %u",
				eh.e_shstrndx);
	/* e_flags: sm in bits 8-15 since ELF ABI version 7, else 0-7 */
	b->img->sm_arch = eh.e_ident[EI_ABIVERSION] >= 7 ?
			  (eh.e_flags >> 8) & 0xff : eh.e_flags & 0xff;
	if (check_arch && b->img->sm_arch && !sim_sm_runs(b->img->sm_arch))
		return sim_fail(b, -ENOEXEC, "cubin for sm_%u cannot run on sm_%u",
				b->img->sm_arch, SIM_IMAGE_SM);

	e.sec = calloc(e.shnum, sizeof(*e.sec));
	e.by_name = calloc(e.shnum, sizeof(*e.by_name));
	if (!e.sec || !e.by_name) {
		rc = sim_fail(b, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < e.shnum; i++) {
		Elf64_Shdr h = rd_shdr(d + eh.e_shoff + (uint64_t)i * sizeof(h));

		e.sec[i] = (struct elf_sec){
			.name = "", .type = h.sh_type, .off = h.sh_offset,
			.size = h.sh_size, .link = h.sh_link, .name_off = h.sh_name,
		};
		e.by_name[i] = &e.sec[i];
	}
	shstr = elf_data(b, &e, eh.e_shstrndx, &rc);
	if (!shstr)
		goto out;
	shstrsize = e.sec[eh.e_shstrndx].size;
	for (i = 1; i < e.shnum; i++) {
		uint32_t no = e.sec[i].name_off;
		const uint8_t *nul;

		if (no >= shstrsize ||
		    !(nul = memchr(shstr + no, '\0', shstrsize - no))) {
			rc = sim_fail(b, -EINVAL,
				      "ELF: section %u name out of .shstrtab", i);
			goto out;
		}
		e.sec[i].name = (const char *)shstr + no;
		e.sec[i].namelen = (size_t)(nul - (shstr + no));
		if (e.sec[i].type == SHT_SYMTAB && !symi)
			symi = i;
	}
	qsort(e.by_name, e.shnum, sizeof(*e.by_name), elf_sort_cmp);
	if (symi)
		rc = elf_symbols(b, &e, symi);
	if (!rc && eh.e_type == ET_REL) {
		/* Calls through another function of the object are not in
		 * its kernels' EXTERNS: each may make the image's. */
		size_t k;

		for (k = 0; k < b->img->nkernels; k++)
			b->img->kernels[k].calls |= b->img->calls;
	}
out:
	free(e.sec);
	free(e.by_name);
	return rc;
}
