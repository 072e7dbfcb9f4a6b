// SPDX-License-Identifier: MIT
/*
 * json.c - a small recursive-descent JSON reader (RFC 8259), see json.h.
 * Nesting is limited to JSON_MAX_DEPTH so hostile input cannot exhaust the
 * stack.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define JSON_MAX_DEPTH 64

struct parser {
	const char *s;
	size_t pos;
	char *err;
	size_t errlen;
	bool failed;
};

static void fail(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct parser *p, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "JSON: %s at byte %zu", msg, p->pos);
}

static void skip_ws(struct parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
	       p->s[p->pos] == '\n' || p->s[p->pos] == '\r')
		p->pos++;
}

static struct json *new_node(struct parser *p, enum json_type type)
{
	struct json *n = calloc(1, sizeof(*n));

	if (!n)
		fail(p, "out of memory");
	else
		n->type = type;
	return n;
}

static int hex4(struct parser *p, unsigned int *out)
{
	unsigned int v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = p->s[p->pos + i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned int)(c - 'A' + 10);
		else {
			fail(p, "bad \\u escape");
			return -1;
		}
	}
	p->pos += 4;
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At the opening quote; returns a malloc'd decoded string. */
static char *parse_string(struct parser *p)
{
	size_t start = ++p->pos, end = start, n = 0;
	char *out;

	/* Find the end first: the decoded string is never longer. */
	for (;;) {
		unsigned char c = (unsigned char)p->s[end];

		if (!c) {
			fail(p, "unterminated string");
			return NULL;
		}
		if (c == '"')
			break;
		if (c < 0x20) {
			p->pos = end;
			fail(p, "control character in string");
			return NULL;
		}
		if (c == '\\') {
			if (!p->s[end + 1]) {
				fail(p, "unterminated string");
				return NULL;
			}
			end++;
		}
		end++;
	}
	out = malloc(end - start + 1);
	if (!out) {
		fail(p, "out of memory");
		return NULL;
	}
	while (p->pos < end) {
		char c = p->s[p->pos++];
		unsigned int cp, lo;

		if (c != '\\') {
			out[n++] = c;
			continue;
		}
		c = p->s[p->pos++];
		switch (c) {
		case '"': out[n++] = '"'; break;
		case '\\': out[n++] = '\\'; break;
		case '/': out[n++] = '/'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u':
			if (p->pos + 4 > end || hex4(p, &cp))
				goto bad;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (p->pos + 6 > end || p->s[p->pos] != '\\' ||
				    p->s[p->pos + 1] != 'u')
					goto bad_surrogate;
				p->pos += 2;
				if (hex4(p, &lo))
					goto bad;
				if (lo < 0xdc00 || lo > 0xdfff)
					goto bad_surrogate;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				goto bad_surrogate;
			}
			if (!cp) {
				fail(p, "\\u0000 in string");
				goto bad;
			}
			/* \uXXXX is 6 input bytes, at most 3 output bytes; a
			 * pair is 12 input bytes for 4. */
			n += put_utf8(out + n, cp);
			break;
		default:
			fail(p, "bad escape '\\%c'", c);
			goto bad;
		}
	}
	out[n] = 0;
	p->pos = end + 1;
	return out;

bad_surrogate:
	fail(p, "bad surrogate pair");
bad:
	free(out);
	return NULL;
}

static void parse_number(struct parser *p, struct json *n)
{
	const char *s = p->s + p->pos;
	size_t i = 0;
	bool neg = false, integer = true;
	char *end;

	if (s[i] == '-') {
		neg = true;
		i++;
	}
	if (s[i] == '0') {
		i++;
	} else if (s[i] >= '1' && s[i] <= '9') {
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	} else {
		fail(p, "bad number");
		return;
	}
	if (s[i] == '.') {
		integer = false;
		i++;
		if (s[i] < '0' || s[i] > '9') {
			fail(p, "bad number");
			return;
		}
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (s[i] == 'e' || s[i] == 'E') {
		integer = false;
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		if (s[i] < '0' || s[i] > '9') {
			fail(p, "bad number");
			return;
		}
		while (s[i] >= '0' && s[i] <= '9')
			i++;
	}
	n->num = strtod(s, &end);
	if (integer) {
		errno = 0;
		if (neg) {
			long long v = strtoll(s, &end, 10);

			if (!errno) {
				n->is_int = true;
				n->negative = v < 0;
				n->u = (uint64_t)v;
			}
		} else {
			unsigned long long v = strtoull(s, &end, 10);

			if (!errno) {
				n->is_int = true;
				n->u = v;
			}
		}
	}
	p->pos += i;
}

static bool match(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(p->s + p->pos, word, n))
		return false;
	p->pos += n;
	return true;
}

static struct json *parse_value(struct parser *p, int depth);

static struct json *parse_container(struct parser *p, int depth, bool object)
{
	struct json *n = new_node(p, object ? JSON_OBJECT : JSON_ARRAY);
	struct json **tail;
	char close = object ? '}' : ']';

	if (!n)
		return NULL;
	tail = &n->child;
	p->pos++;
	skip_ws(p);
	if (p->s[p->pos] == close) {
		p->pos++;
		return n;
	}
	for (;;) {
		struct json *v;
		char *key = NULL;

		skip_ws(p);
		if (object) {
			if (p->s[p->pos] != '"') {
				fail(p, "expected a member name");
				break;
			}
			key = parse_string(p);
			if (!key)
				break;
			skip_ws(p);
			if (p->s[p->pos] != ':') {
				free(key);
				fail(p, "expected ':'");
				break;
			}
			p->pos++;
		}
		v = parse_value(p, depth + 1);
		if (!v) {
			free(key);
			break;
		}
		v->key = key;
		*tail = v;
		tail = &v->next;
		n->len++;
		skip_ws(p);
		if (p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->s[p->pos] == close) {
			p->pos++;
			return n;
		}
		fail(p, "expected ',' or '%c'", close);
		break;
	}
	json_free(n);
	return NULL;
}

static struct json *parse_value(struct parser *p, int depth)
{
	struct json *n;
	char c;

	if (depth > JSON_MAX_DEPTH) {
		fail(p, "nested too deeply");
		return NULL;
	}
	skip_ws(p);
	c = p->s[p->pos];
	switch (c) {
	case '{':
		return parse_container(p, depth, true);
	case '[':
		return parse_container(p, depth, false);
	case '"':
		n = new_node(p, JSON_STRING);
		if (n && !(n->str = parse_string(p))) {
			free(n);
			n = NULL;
		}
		return n;
	case 't':
	case 'f':
		n = new_node(p, JSON_BOOL);
		if (!n)
			return NULL;
		if (match(p, "true")) {
			n->boolean = true;
		} else if (!match(p, "false")) {
			fail(p, "bad literal");
			free(n);
			return NULL;
		}
		return n;
	case 'n':
		if (!match(p, "null")) {
			fail(p, "bad literal");
			return NULL;
		}
		return new_node(p, JSON_NULL);
	default:
		if (c == '-' || (c >= '0' && c <= '9')) {
			n = new_node(p, JSON_NUMBER);
			if (!n)
				return NULL;
			parse_number(p, n);
			if (p->failed) {
				free(n);
				return NULL;
			}
			return n;
		}
		fail(p, c ? "unexpected character" : "unexpected end");
		return NULL;
	}
}

struct json *json_parse(const char *text, char *err, size_t errlen)
{
	struct parser p = { .s = text, .err = err, .errlen = errlen };
	struct json *root;

	if (err && errlen)
		err[0] = 0;
	if (!text) {
		fail(&p, "no document");
		return NULL;
	}
	root = parse_value(&p, 0);
	if (!root)
		return NULL;
	skip_ws(&p);
	if (text[p.pos]) {
		fail(&p, "trailing characters");
		json_free(root);
		return NULL;
	}
	return root;
}

void json_free(struct json *n)
{
	while (n) {
		struct json *next = n->next;

		json_free(n->child);
		free(n->key);
		free(n->str);
		free(n);
		n = next;
	}
}

const struct json *json_get(const struct json *obj, const char *key)
{
	const struct json *m;

	if (!obj || obj->type != JSON_OBJECT || !key)
		return NULL;
	for (m = obj->child; m; m = m->next)
		if (!strcmp(m->key, key))
			return m;
	return NULL;
}

const struct json *json_path(const struct json *obj, const char *path)
{
	char part[128];

	while (obj && path && *path) {
		size_t n = strcspn(path, ".");

		if (n >= sizeof(part))
			return NULL;
		memcpy(part, path, n);
		part[n] = 0;
		obj = json_get(obj, part);
		path += n;
		if (*path == '.')
			path++;
	}
	return obj;
}

const struct json *json_at(const struct json *arr, size_t i)
{
	const struct json *e;

	if (!arr || arr->type != JSON_ARRAY)
		return NULL;
	for (e = arr->child; e && i; e = e->next)
		i--;
	return e;
}

size_t json_len(const struct json *n)
{
	return n && (n->type == JSON_ARRAY || n->type == JSON_OBJECT) ? n->len : 0;
}

uint64_t json_u64(const struct json *n, uint64_t dflt)
{
	if (!n || n->type != JSON_NUMBER)
		return dflt;
	if (n->is_int)
		return n->negative ? dflt : n->u;
	if (n->num < 0 || n->num >= 18446744073709551616.0 || isnan(n->num))
		return dflt;
	return (uint64_t)n->num;
}

int64_t json_i64(const struct json *n, int64_t dflt)
{
	if (!n || n->type != JSON_NUMBER)
		return dflt;
	if (n->is_int) {
		if (!n->negative && n->u > (uint64_t)INT64_MAX)
			return dflt;
		return (int64_t)n->u;
	}
	if (n->num < -9223372036854775808.0 || n->num >= 9223372036854775808.0 ||
	    isnan(n->num))
		return dflt;
	return (int64_t)n->num;
}

double json_num(const struct json *n, double dflt)
{
	return n && n->type == JSON_NUMBER ? n->num : dflt;
}

const char *json_str(const struct json *n, const char *dflt)
{
	return n && n->type == JSON_STRING ? n->str : dflt;
}

bool json_bool(const struct json *n, bool dflt)
{
	return n && n->type == JSON_BOOL ? n->boolean : dflt;
}
