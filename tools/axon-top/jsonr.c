// SPDX-License-Identifier: MIT
/* jsonr.c - the small JSON reader of axon-top (see jsonr.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

struct parser {
	const char *s;		/* start of the text */
	const char *p;		/* cursor */
	char *err;
	size_t errlen;
	bool failed;
};

static void fail(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct parser *ps, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (ps->failed)
		return;
	ps->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->err && ps->errlen)
		snprintf(ps->err, ps->errlen, "JSON: %s at byte %zu", msg,
			 (size_t)(ps->p - ps->s));
}

static void skip_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static struct jr *node(struct parser *ps, enum jr_type t)
{
	struct jr *n = calloc(1, sizeof(*n));

	if (!n)
		fail(ps, "out of memory");
	else
		n->type = t;
	return n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool hex4(struct parser *ps, unsigned int *out)
{
	unsigned int v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int h = hexval(ps->p[i]);

		if (h < 0) {
			fail(ps, "bad \\u escape");
			return false;
		}
		v = v << 4 | (unsigned int)h;
	}
	ps->p += 4;
	*out = v;
	return true;
}

static size_t put_utf8(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At the opening quote; returns a malloc'd decoded string. */
static char *parse_string(struct parser *ps)
{
	const char *q;
	char *out, *o;

	ps->p++;
	/* The decoded string is never longer than the escaped one. */
	for (q = ps->p; *q && *q != '"'; q++)
		if (*q == '\\' && q[1])
			q++;
	if (*q != '"') {
		fail(ps, "unterminated string");
		return NULL;
	}
	out = o = malloc((size_t)(q - ps->p) + 1);
	if (!out) {
		fail(ps, "out of memory");
		return NULL;
	}
	while (*ps->p != '"') {
		unsigned char ch = (unsigned char)*ps->p++;

		if (ch < 0x20) {
			fail(ps, "control character in string");
			goto bad;
		}
		if (ch != '\\') {
			*o++ = (char)ch;
			continue;
		}
		ch = (unsigned char)*ps->p++;
		switch (ch) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned int cp, lo;

			if (!hex4(ps, &cp))
				goto bad;
			if (cp >= 0xd800 && cp < 0xdc00 && ps->p[0] == '\\' &&
			    ps->p[1] == 'u') {
				const char *save = ps->p;

				ps->p += 2;
				if (!hex4(ps, &lo))
					goto bad;
				if (lo >= 0xdc00 && lo < 0xe000)
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				else
					ps->p = save;
			}
			if (cp >= 0xd800 && cp < 0xe000)
				cp = 0xfffd;	/* lone surrogate */
			if (cp == 0)
				*o++ = '?';
			else
				o += put_utf8(o, cp);
			break;
		}
		default:
			ps->p--;
			fail(ps, "bad escape");
			goto bad;
		}
	}
	ps->p++;
	*o = 0;
	return out;
bad:
	free(out);
	return NULL;
}

static struct jr *parse_number(struct parser *ps)
{
	const char *start = ps->p;
	bool neg = false, integer = true;
	struct jr *n;
	char *end;

	if (*ps->p == '-') {
		neg = true;
		ps->p++;
	}
	if (*ps->p < '0' || *ps->p > '9') {
		fail(ps, "bad number");
		return NULL;
	}
	while (*ps->p >= '0' && *ps->p <= '9')
		ps->p++;
	if (*ps->p == '.') {
		integer = false;
		ps->p++;
		if (*ps->p < '0' || *ps->p > '9') {
			fail(ps, "bad number");
			return NULL;
		}
		while (*ps->p >= '0' && *ps->p <= '9')
			ps->p++;
	}
	if (*ps->p == 'e' || *ps->p == 'E') {
		integer = false;
		ps->p++;
		if (*ps->p == '+' || *ps->p == '-')
			ps->p++;
		if (*ps->p < '0' || *ps->p > '9') {
			fail(ps, "bad number");
			return NULL;
		}
		while (*ps->p >= '0' && *ps->p <= '9')
			ps->p++;
	}
	n = node(ps, JR_NUMBER);
	if (!n)
		return NULL;
	/* strtod honours LC_NUMERIC; axon-top never changes it from "C". */
	n->num = strtod(start, &end);
	if (integer && !neg) {
		unsigned long long v;

		errno = 0;
		v = strtoull(start, &end, 10);
		if (!errno && end == ps->p) {
			n->is_u64 = true;
			n->u = v;
		}
	}
	return n;
}

static bool literal(struct parser *ps, const char *word)
{
	size_t l = strlen(word);

	if (strncmp(ps->p, word, l))
		return false;
	ps->p += l;
	return true;
}

static struct jr *parse_value(struct parser *ps, int depth);

static struct jr *parse_container(struct parser *ps, int depth, bool object)
{
	struct jr *n = node(ps, object ? JR_OBJECT : JR_ARRAY), **tail;
	const char close = object ? '}' : ']';

	if (!n)
		return NULL;
	tail = &n->child;
	ps->p++;
	skip_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		return n;
	}
	for (;;) {
		char *key = NULL;
		struct jr *v;

		skip_ws(ps);
		if (object) {
			if (*ps->p != '"') {
				fail(ps, "expected a member name");
				return n;
			}
			key = parse_string(ps);
			if (!key)
				return n;
			skip_ws(ps);
			if (*ps->p != ':') {
				free(key);
				fail(ps, "expected ':'");
				return n;
			}
			ps->p++;
		}
		v = parse_value(ps, depth + 1);
		if (!v) {
			free(key);
			return n;
		}
		v->key = key;
		*tail = v;
		tail = &v->next;
		n->len++;
		if (ps->failed)
			return n;
		skip_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			return n;
		}
		fail(ps, object ? "expected ',' or '}'" : "expected ',' or ']'");
		return n;
	}
}

static struct jr *parse_value(struct parser *ps, int depth)
{
	struct jr *n;

	if (depth > JR_MAX_DEPTH) {
		fail(ps, "nested too deeply");
		return NULL;
	}
	skip_ws(ps);
	switch (*ps->p) {
	case '{':
		return parse_container(ps, depth, true);
	case '[':
		return parse_container(ps, depth, false);
	case '"': {
		char *s = parse_string(ps);

		if (!s)
			return NULL;
		n = node(ps, JR_STRING);
		if (!n) {
			free(s);
			return NULL;
		}
		n->str = s;
		return n;
	}
	case 't':
	case 'f':
	{
		bool t = literal(ps, "true");

		if (t || literal(ps, "false")) {
			n = node(ps, JR_BOOL);
			if (n)
				n->b = t;
			return n;
		}
		break;
	}
	case 'n':
		if (literal(ps, "null"))
			return node(ps, JR_NULL);
		break;
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps);
		break;
	}
	fail(ps, *ps->p ? "unexpected character" : "unexpected end");
	return NULL;
}

struct jr *jr_parse(const char *text, char *err, size_t errlen)
{
	struct parser ps = { .s = text, .p = text, .err = err, .errlen = errlen };
	struct jr *root;

	if (!text) {
		if (err && errlen)
			snprintf(err, errlen, "JSON: no document");
		return NULL;
	}
	root = parse_value(&ps, 0);
	if (!ps.failed) {
		skip_ws(&ps);
		if (*ps.p)
			fail(&ps, "trailing garbage");
	}
	if (ps.failed) {
		jr_free(root);
		return NULL;
	}
	return root;
}

void jr_free(struct jr *v)
{
	while (v) {
		struct jr *next = v->next;

		jr_free(v->child);
		free(v->key);
		free(v->str);
		free(v);
		v = next;
	}
}

const struct jr *jr_get(const struct jr *obj, const char *key)
{
	const struct jr *c;

	if (!obj || obj->type != JR_OBJECT || !key)
		return NULL;
	for (c = obj->child; c; c = c->next)
		if (c->key && !strcmp(c->key, key))
			return c;
	return NULL;
}

const struct jr *jr_path(const struct jr *v, const char *path)
{
	char part[128];

	while (v && path && *path) {
		const char *dot = strchr(path, '.');
		size_t l = dot ? (size_t)(dot - path) : strlen(path);

		if (l >= sizeof(part))
			return NULL;
		memcpy(part, path, l);
		part[l] = 0;
		v = jr_get(v, part);
		path = dot ? dot + 1 : NULL;
	}
	return v;
}

const struct jr *jr_at(const struct jr *arr, size_t i)
{
	const struct jr *c;

	if (!arr || arr->type != JR_ARRAY)
		return NULL;
	for (c = arr->child; c && i; c = c->next)
		i--;
	return c;
}

bool jr_is(const struct jr *v, enum jr_type t)
{
	return v && v->type == t;
}

uint64_t jr_u64(const struct jr *v, uint64_t def)
{
	if (!v || v->type != JR_NUMBER)
		return def;
	if (v->is_u64)
		return v->u;
	if (!(v->num >= 0) || isnan(v->num))
		return 0;
	if (v->num >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v->num;
}

int64_t jr_i64(const struct jr *v, int64_t def)
{
	if (!v || v->type != JR_NUMBER)
		return def;
	if (v->is_u64)
		return v->u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v->u;
	if (isnan(v->num))
		return def;
	if (v->num >= 9223372036854775807.0)
		return INT64_MAX;
	if (v->num <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v->num;
}

double jr_num(const struct jr *v, double def)
{
	if (!v || v->type != JR_NUMBER)
		return def;
	return v->num;
}

const char *jr_str(const struct jr *v, const char *def)
{
	if (!v || v->type != JR_STRING)
		return def;
	return v->str;
}
