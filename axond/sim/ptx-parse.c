// SPDX-License-Identifier: MIT
/*
 * sim/ptx-parse: kernels and globals of PTX text (see ptx-parse.h).
 *
 * Kernel parameters are laid out with natural alignment (or their .align)
 * as the ABI does. Global initialisers that are numbers are decoded;
 * others (addresses of symbols: generic(x), x+4, ...) leave init NULL and
 * set SIM_GLOBAL_F_INIT_UNKNOWN. Every size is bounded before anything is
 * allocated for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptx-lex.h"
#include "ptx-parse.h"

#define MAX_GLOBAL_SIZE		(1ULL << 48)
#define MAX_PTX_INIT_SIZE	(64U << 20)

static int ptx_entry(struct sim_builder *b, struct ptx_lex *l)
{
	struct sim_param_table *t;
	char *name;
	uint32_t cur = 0;
	int rc = 0;

	ptx_next(l);
	if (l->t.type != PTX_T_WORD || l->t.s[0] == '.')
		return sim_fail(b, -EINVAL, "PTX: .entry without a name");
	if (l->t.n > SIM_IMAGE_MAX_NAME)
		return sim_fail(b, -E2BIG, "PTX: kernel name longer than %u bytes",
				SIM_IMAGE_MAX_NAME);
	name = sim_dup_name(l->t.s, l->t.n);
	t = calloc(1, sizeof(*t));
	if (!name || !t) {
		free(name);
		free(t);
		return sim_fail(b, -ENOMEM, "out of memory");
	}
	ptx_next(l);
	if (ptx_tok_punct(&l->t, '(')) {
		ptx_next(l);
		while (!ptx_tok_punct(&l->t, ')')) {
			unsigned align = 0, esize = 0;
			uint64_t size, count = 1, off;
			bool named = false;

			if (!ptx_tok_is(&l->t, ".param")) {
				rc = sim_fail(b, -EINVAL,
					      "PTX: kernel %s: expected .param", name);
				goto out;
			}
			for (ptx_next(l); !ptx_tok_punct(&l->t, ',') &&
				      !ptx_tok_punct(&l->t, ')'); ptx_next(l)) {
				uint64_t v;

				if (l->t.type == PTX_T_EOF)
					break;
				if (ptx_tok_is(&l->t, ".align")) {
					ptx_next(l);
					if (!ptx_uint(&l->t, &v) || !v ||
					    (v & (v - 1)) || v > 4096)
						goto bad_param;
					if (!esize)	/* else: pointee's */
						align = (unsigned)v;
				} else if (!esize && ptx_type_size(&l->t)) {
					esize = ptx_type_size(&l->t);
				} else if (ptx_tok_is(&l->t, ".ptr") ||
					   ptx_tok_is(&l->t, ".global") ||
					   ptx_tok_is(&l->t, ".const") ||
					   ptx_tok_is(&l->t, ".shared") ||
					   ptx_tok_is(&l->t, ".local")) {
					/* pointer attributes */
				} else if (l->t.type == PTX_T_WORD &&
					   l->t.s[0] != '.' && esize && !named) {
					named = true;
				} else if (ptx_tok_punct(&l->t, '[') && named) {
					ptx_next(l);
					if (!ptx_uint(&l->t, &v) || !v ||
					    v > SIM_IMAGE_MAX_ARGS_SIZE)
						goto bad_param;
					count *= v;
					if (count > SIM_IMAGE_MAX_ARGS_SIZE)
						goto bad_param;
					ptx_next(l);
					if (!ptx_tok_punct(&l->t, ']'))
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
				rc = sim_fail(b, -E2BIG,
					      "PTX: kernel %s: parameters beyond %u bytes",
					      name, SIM_IMAGE_MAX_ARGS_SIZE);
				goto out;
			}
			rc = sim_param_set(b, t, name, t->n, (uint32_t)off,
					   (uint32_t)size);
			if (rc)
				goto out;
			cur = (uint32_t)(off + size);
			if (ptx_tok_punct(&l->t, ','))
				ptx_next(l);
			else if (!ptx_tok_punct(&l->t, ')'))
				goto bad_param;
		}
		ptx_next(l);
	}
	rc = sim_param_finish(b, t, name, false, 0);
	free(t);
	return rc;
bad_param:
	rc = sim_fail(b, -EINVAL, "PTX: kernel %s: cannot parse parameter %u near '%.*s'",
		      name, t->n, (int)(l->t.n > 40 ? 40 : l->t.n), l->t.s);
out:
	free(name);
	free(t);
	return rc;
}

/* x's bit pattern as an .f64 (esize 8) or an .f32. */
static uint64_t float_bits(double x, unsigned esize)
{
	uint64_t bits;
	float f;
	uint32_t u;

	if (esize == 8) {
		memcpy(&bits, &x, 8);
		return bits;
	}
	f = (float)x;
	memcpy(&u, &f, 4);
	return u;
}

/*
 * One initialiser element into buf[idx] (esize bytes): an optionally
 * negated integer, 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX bit patterns, or a
 * decimal floating point number for .f32/.f64. false if not numeric.
 */
static bool ptx_init_elem(const struct ptx_tok *t, bool neg, unsigned esize,
			  bool is_float, uint8_t *dst)
{
	char buf[80], *end;
	uint64_t bits;

	if (t->type != PTX_T_NUM || t->n >= sizeof(buf))
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
		bits = float_bits(neg ? -x : x, esize);
	} else {
		uint64_t v;

		if (!ptx_uint(t, &v))
			return false;
		if (is_float) {
			double x = (double)v;

			bits = float_bits(neg ? -x : x, esize);
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
static int ptx_decl(struct sim_builder *b, struct ptx_lex *l,
		    enum sim_global_space space)
{
	unsigned esize = 0, vec = 1;
	bool is_float = false;
	int rc = 0;

	for (ptx_next(l); l->t.type == PTX_T_WORD && l->t.s[0] == '.'; ptx_next(l)) {
		uint64_t v;

		if (ptx_tok_is(&l->t, ".align")) {
			ptx_next(l);
			if (!ptx_uint(&l->t, &v))
				return sim_fail(b, -EINVAL, "PTX: bad .align");
		} else if (ptx_tok_is(&l->t, ".v2") || ptx_tok_is(&l->t, ".v4") ||
			   ptx_tok_is(&l->t, ".v8")) {
			vec = (unsigned)(l->t.s[2] - '0');
		} else if (ptx_tok_is(&l->t, ".attribute")) {
			ptx_next(l);
			if (!ptx_tok_punct(&l->t, '('))
				return sim_fail(b, -EINVAL, "PTX: bad .attribute");
			while (l->t.type != PTX_T_EOF && !ptx_tok_punct(&l->t, ')'))
				ptx_next(l);
		} else if (ptx_type_size(&l->t)) {
			esize = ptx_type_size(&l->t);
			is_float = ptx_type_float(&l->t);
		} else if (ptx_tok_is(&l->t, ".texref") ||
			   ptx_tok_is(&l->t, ".samplerref") ||
			   ptx_tok_is(&l->t, ".surfref")) {
			ptx_skip_statement(l);	/* not memory */
			return 0;
		} else {
			break;	/* e.g. .visible after the space: ignored */
		}
	}
	if (!esize)
		return sim_fail(b, -EINVAL, "PTX: declaration without a type near '%.*s'",
				(int)(l->t.n > 40 ? 40 : l->t.n), l->t.s);

	for (;;) {
		uint64_t elems = vec, v, size;
		bool unsized = false;
		uint32_t flags = 0;
		uint8_t *init = NULL;
		char *name;

		if (l->t.type != PTX_T_WORD || l->t.s[0] == '.' ||
		    l->t.n > SIM_IMAGE_MAX_NAME)
			return sim_fail(b, -EINVAL, "PTX: bad declarator near '%.*s'",
					(int)(l->t.n > 40 ? 40 : l->t.n), l->t.s);
		name = sim_dup_name(l->t.s, l->t.n);
		if (!name)
			return sim_fail(b, -ENOMEM, "out of memory");
		for (ptx_next(l); ptx_tok_punct(&l->t, '['); ptx_next(l)) {
			ptx_next(l);
			if (ptx_tok_punct(&l->t, ']') && !unsized) {
				unsized = true;
				continue;
			}
			if (!ptx_uint(&l->t, &v) || !v ||
			    v > MAX_GLOBAL_SIZE || elems * v / v != elems ||
			    elems * v > MAX_GLOBAL_SIZE / esize) {
				rc = sim_fail(b, -E2BIG,
					      "PTX: global %s: bad or too large dimension",
					      name);
				goto out;
			}
			elems *= v;
			ptx_next(l);
			if (!ptx_tok_punct(&l->t, ']')) {
				rc = sim_fail(b, -EINVAL,
					      "PTX: global %s: expected ']'", name);
				goto out;
			}
		}
		size = elems * esize;
		if (ptx_tok_punct(&l->t, '=')) {
			/*
			 * Flattened elements. A sized array gets its whole
			 * value at the first element, a [] one grows.
			 */
			uint64_t n = 0;
			size_t depth = 0, alloc = 0;
			bool neg = false;

			for (ptx_next(l); l->t.type != PTX_T_EOF; ptx_next(l)) {
				if (ptx_tok_punct(&l->t, '{')) {
					depth++;
					continue;
				}
				if (ptx_tok_punct(&l->t, '}')) {
					if (depth)
						depth--;
					continue;
				}
				if (!depth && (ptx_tok_punct(&l->t, ',') ||
					       ptx_tok_punct(&l->t, ';')))
					break;
				if (ptx_tok_punct(&l->t, ','))
					continue;
				if (ptx_tok_punct(&l->t, '-') && !neg) {
					neg = true;
					continue;
				}
				if (flags & SIM_GLOBAL_F_INIT_UNKNOWN)
					continue;
				if (!unsized && n >= elems) {
					rc = sim_fail(b, -EINVAL,
						      "PTX: global %s: too many initialisers",
						      name);
					goto out;
				}
				if (unsized &&
				    (n + 1) * esize > MAX_PTX_INIT_SIZE) {
					rc = sim_fail(b, -E2BIG,
						      "PTX: global %s: initialiser over %u bytes",
						      name, MAX_PTX_INIT_SIZE);
					goto out;
				}
				if (!unsized && !init) {
					rc = sim_reserve_init(b, name, size);
					if (rc)
						goto out;
					init = calloc(1, size);
					if (!init) {
						rc = sim_fail(b, -ENOMEM,
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
						rc = sim_fail(b, -ENOMEM,
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
				if (init && (rc = sim_reserve_init(b, name, size)))
					goto out;
				if (init && size > alloc) {
					uint8_t *p = realloc(init, size);

					if (!p) {
						b->init_total -= size;
						rc = sim_fail(b, -ENOMEM,
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
		rc = sim_add_global(b, name, size, space, flags, init);
		init = NULL;
		name = NULL;
		if (rc)
			return rc;
		if (ptx_tok_punct(&l->t, ';')) {
			ptx_next(l);
			return 0;
		}
		if (!ptx_tok_punct(&l->t, ','))
			return sim_fail(b, -EINVAL,
					"PTX: expected ';' after a declaration");
		ptx_next(l);
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

bool sim_ptx_looks_like(const uint8_t *d, size_t len)
{
	struct ptx_lex l = { .p = (const char *)d,
			 .end = (const char *)d + ptx_len(d, len) };

	ptx_next(&l);
	return ptx_tok_is(&l.t, ".version");
}

/* A call instruction: call, call.uni */
static bool ptx_is_call(const struct ptx_tok *t)
{
	return t->n >= 4 && !memcmp(t->s, "call", 4) && (t->n == 4 || t->s[4] == '.');
}

/*
 * Which kernels make the image's device runtime calls: those whose body
 * has a call instruction (to the runtime or to a function that may call
 * it; which is not followed, an over-estimate only), none of the others.
 */
#define PTX_BODY_CALLS	(1U << 31)	/* while reading: the body calls */

static void ptx_kernel_calls(struct sim_image *img, size_t first)
{
	size_t k;

	for (k = first; k < img->nkernels; k++)
		img->kernels[k].calls = img->kernels[k].calls & PTX_BODY_CALLS ? img->calls : 0;
}

int sim_ptx_read(struct sim_builder *b, const uint8_t *d, size_t len)
{
	struct ptx_lex l = { .p = (const char *)d,
			 .end = (const char *)d + ptx_len(d, len) };
	size_t braces = 0, parens = 0;
	bool ext = false, ext_func = false;	/* in ".extern [.func]" */
	/* The kernel whose body comes next (its header read), the one
	 * whose body this is. */
	const size_t none = SIZE_MAX, first = b->img->nkernels;
	size_t pending = none, body = none;
	int rc;

	ptx_next(&l);
	if (!ptx_tok_is(&l.t, ".version"))
		return sim_fail(b, -EINVAL, "PTX: does not start with .version");
	while (l.t.type != PTX_T_EOF) {
		const struct ptx_tok *t = &l.t;

		if (t->type == PTX_T_PUNCT) {
			switch (*t->s) {
			case '{':
				if (!braces && pending != none) {
					body = pending;
					pending = none;
				}
				braces++;
				ext = ext_func = false;
				break;
			case '}':
				if (braces && !--braces)
					body = none;
				ext = ext_func = false;
				break;
			case '(': parens++; break;
			case ')': if (parens) parens--; break;
			case ';':
				ext = ext_func = false;
				if (!braces)
					pending = none;
				break;
			}
		} else if (t->type == PTX_T_WORD && braces) {
			if (body != none && ptx_is_call(t))
				b->img->kernels[body].calls |= PTX_BODY_CALLS;
		} else if (t->type == PTX_T_WORD && !braces && !parens) {
			if (ext_func && t->n && *t->s != '.') {
				/* .extern .func (ret) NAME (params): a call
				 * out of the image */
				sim_note_call(b, t->s, t->n);
				ext_func = false;
			} else if (ext && ptx_tok_is(t, ".func")) {
				ext_func = true;
			} else if (ptx_tok_is(t, ".target")) {
				/* .target sm_90[a], texmode, debug */
				ptx_next(&l);
				if (l.t.type == PTX_T_WORD && l.t.n >= 5 &&
				    !memcmp(l.t.s, "sm_", 3)) {
					unsigned v = 0;
					size_t i;

					for (i = 3; i < l.t.n && i < 6 &&
						    l.t.s[i] >= '0' &&
						    l.t.s[i] <= '9'; i++)
						v = v * 10 + (unsigned)(l.t.s[i] - '0');
					b->img->sm_arch = v;
					if (v > SIM_IMAGE_SM)
						return sim_fail(b, -ENOEXEC,
								"PTX for sm_%u cannot run on sm_%u",
								v, SIM_IMAGE_SM);
				}
				continue;
			} else if (ptx_tok_is(t, ".extern")) {
				ext = true;
			} else if (ptx_tok_is(t, ".entry")) {
				if (ext) {
					ext = false;
				} else {
					size_t before = b->img->nkernels;

					rc = ptx_entry(b, &l);
					if (rc)
						return rc;
					pending = b->img->nkernels > before ? before : none;
					continue;
				}
			} else if ((ptx_tok_is(t, ".global") || ptx_tok_is(t, ".const")) &&
				   !ext) {
				rc = ptx_decl(b, &l, ptx_tok_is(t, ".global") ?
						     SIM_GLOBAL_DEVICE :
						     SIM_GLOBAL_CONSTANT);
				if (rc)
					return rc;
				continue;
			}
		}
		ptx_next(&l);
	}
	ptx_kernel_calls(b->img, first);
	return 0;
}
