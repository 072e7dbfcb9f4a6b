// SPDX-License-Identifier: MIT
/*
 * sim/ptx-lex: PTX tokens (see ptx-lex.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptx-lex.h"

static bool is_word_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == '_' || c == '$' || c == '%' || c == '.';
}

static bool is_word_char(char c)
{
	return is_word_start(c) || (c >= '0' && c <= '9');
}

static void skip_blank(struct ptx_lex *l)
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

void ptx_next(struct ptx_lex *l)
{
	const char *s;
	char c;

	skip_blank(l);
	s = l->p;
	if (s >= l->end) {
		l->t = (struct ptx_tok){ .type = PTX_T_EOF, .s = s, .n = 0 };
		return;
	}
	c = *s;
	if (is_word_start(c)) {
		while (l->p < l->end && is_word_char(*l->p))
			l->p++;
		l->t = (struct ptx_tok){ .type = PTX_T_WORD, .s = s, .n = l->p - s };
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
		l->t = (struct ptx_tok){ .type = PTX_T_NUM, .s = s, .n = l->p - s };
	} else if (c == '"') {
		l->p++;
		while (l->p < l->end && *l->p != '"') {
			if (*l->p == '\\' && l->end - l->p >= 2)
				l->p++;
			l->p++;
		}
		if (l->p < l->end)
			l->p++;
		l->t = (struct ptx_tok){ .type = PTX_T_STR, .s = s, .n = l->p - s };
	} else {
		l->p++;
		l->t = (struct ptx_tok){ .type = PTX_T_PUNCT, .s = s, .n = 1 };
	}
}

bool ptx_tok_is(const struct ptx_tok *t, const char *w)
{
	size_t n = strlen(w);

	return t->type != PTX_T_EOF && t->n == n && !memcmp(t->s, w, n);
}

bool ptx_tok_punct(const struct ptx_tok *t, char c)
{
	return t->type == PTX_T_PUNCT && *t->s == c;
}

/* Size in bytes of a PTX fundamental type directive, 0 if unknown. */
unsigned ptx_type_size(const struct ptx_tok *t)
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
		if (ptx_tok_is(t, types[i].n))
			return types[i].size;
	return 0;
}

bool ptx_type_float(const struct ptx_tok *t)
{
	return ptx_tok_is(t, ".f32") || ptx_tok_is(t, ".f64");
}

/* Parses an unsigned decimal/hex/octal/binary integer token. */
bool ptx_uint(const struct ptx_tok *t, uint64_t *v)
{
	char buf[80], *end;

	if (t->type != PTX_T_NUM || t->n >= sizeof(buf))
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
void ptx_skip_statement(struct ptx_lex *l)
{
	while (l->t.type != PTX_T_EOF && !ptx_tok_punct(&l->t, ';'))
		ptx_next(l);
	if (l->t.type != PTX_T_EOF)
		ptx_next(l);
}
