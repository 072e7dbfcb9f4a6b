// SPDX-License-Identifier: MIT
/*
 * json.c - JSON for the tools, parsed by json-c (Debian's libjson-c) and
 * copied into the plain tree json.h describes.
 *
 * json-c's tokener in strict mode, with UTF-8 validation and a depth limit,
 * does the parsing. Two things RFC 8259 forbids it lets through even then,
 * and both are checked here because a document is hostile bytes until
 * proven otherwise: raw control characters inside strings, and number
 * literals such as "1." or NaN.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stats-schema.h>

/* json-c calls its boolean type json_bool, the name of an accessor of
 * json.h: renamed for json-c's headers alone (it is a plain int). */
#define json_bool jsonc_bool
#include <json-c/json_object.h>
#include <json-c/json_tokener.h>
#include <json-c/linkhash.h>	/* json_object_object_foreach */
#undef json_bool

#include "json.h"

/* Raw bytes below 0x20 are white space between tokens or nothing: never
 * inside a string (json-c takes a raw tab or newline there). */
static bool raw_controls_ok(const char *s, size_t *at)
{
	bool in_str = false, esc = false;
	size_t i;

	for (i = 0; s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (in_str) {
			if (esc)
				esc = false;
			else if (ch == '\\')
				esc = true;
			else if (ch == '"')
				in_str = false;
			else if (ch < 0x20)
				break;
		} else if (ch == '"') {
			in_str = true;
		} else if (ch < 0x20 && ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
			break;
		}
	}
	*at = i;
	return !s[i];
}

/* A number literal as RFC 8259 spells it: -?int frac? exp? (json-c also
 * takes "1.", NaN and Infinity as doubles). */
static bool number_literal_ok(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		if (*++s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return !*s;
}

static char *dup_string(struct json_object *o)
{
	size_t len = (size_t)json_object_get_string_len(o), i;
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	memcpy(s, json_object_get_string(o), len);
	s[len] = 0;
	/* \u0000 decoded: a C string ends there, so it is shown as '?'. */
	for (i = 0; i < len; i++)
		if (!s[i])
			s[i] = '?';
	return s;
}

static void set_number(struct json *n, struct json_object *o)
{
	int64_t i = json_object_get_int64(o);

	n->type = JSON_NUMBER;
	/* json-c keeps an integer above INT64_MAX as a u64: get_int64 then
	 * saturates at INT64_MAX and get_uint64 has its value. */
	if (i == INT64_MAX) {
		n->u = json_object_get_uint64(o);
		n->num = (double)n->u;
	} else {
		n->u = (uint64_t)i;
		n->negative = i < 0;
		n->num = (double)i;
	}
	n->is_int = true;
}

/* A copy of o (and what it holds), or NULL with the reason in *why. */
static struct json *copy_tree(struct json_object *o, const char **why)
{
	struct json *n = calloc(1, sizeof(*n));

	if (!n) {
		*why = "out of memory";
		return NULL;
	}
	switch (json_object_get_type(o)) {
	case json_type_null:
		n->type = JSON_NULL;
		break;
	case json_type_boolean:
		n->type = JSON_BOOL;
		n->boolean = json_object_get_boolean(o);
		break;
	case json_type_int:
		set_number(n, o);
		break;
	case json_type_double:
		/* The literal as it was written (json-c keeps it). */
		if (!number_literal_ok(json_object_get_string(o))) {
			*why = "malformed number";
			goto fail;
		}
		n->type = JSON_NUMBER;
		n->num = json_object_get_double(o);
		break;
	case json_type_string:
		n->type = JSON_STRING;
		n->str = dup_string(o);
		if (!n->str) {
			*why = "out of memory";
			goto fail;
		}
		break;
	case json_type_array: {
		size_t i, len = json_object_array_length(o);
		struct json **tail = &n->child;

		n->type = JSON_ARRAY;
		for (i = 0; i < len; i++) {
			struct json *e = copy_tree(json_object_array_get_idx(o, i), why);

			if (!e)
				goto fail;
			*tail = e;
			tail = &e->next;
			n->len++;
		}
		break;
	}
	case json_type_object: {
		struct json **tail = &n->child;

		n->type = JSON_OBJECT;
		json_object_object_foreach(o, key, val) {
			struct json *m = copy_tree(val, why);

			if (!m)
				goto fail;
			*tail = m;
			tail = &m->next;
			n->len++;
			m->key = strdup(key);
			if (!m->key) {
				*why = "out of memory";
				goto fail;
			}
		}
		break;
	}
	}
	return n;
fail:
	json_free(n);
	return NULL;
}

struct json *json_parse(const char *text, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o;
	const char *why = NULL;
	struct json *root = NULL;
	size_t len, at;

	if (err && errlen)
		err[0] = 0;
	if (!text) {
		if (err && errlen)
			snprintf(err, errlen, "JSON: no document");
		return NULL;
	}
	len = strlen(text);
	if (len > (size_t)INT32_MAX - 1) {
		if (err && errlen)
			snprintf(err, errlen, "JSON: document too large (%zu bytes)", len);
		return NULL;
	}
	if (!raw_controls_ok(text, &at)) {
		if (err && errlen)
			snprintf(err, errlen, "JSON: control character 0x%02x at byte %zu",
				 (unsigned char)text[at], at);
		return NULL;
	}
	tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	if (!tok) {
		if (err && errlen)
			snprintf(err, errlen, "JSON: out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	/* The terminating NUL is passed too: it tells the tokener the text
	 * ends there, so a bare number or a cut-off document is complete or
	 * an error, never "more to come". */
	o = json_tokener_parse_ex(tok, text, (int)len + 1);
	at = json_tokener_get_parse_end(tok);
	if (json_tokener_get_error(tok) != json_tokener_success) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		if (err && errlen)
			snprintf(err, errlen, "JSON: %s at byte %zu",
				 e == json_tokener_error_depth ? "nested too deeply"
							       : json_tokener_error_desc(e),
				 at);
	} else if (at < len) {
		/* Stopped before the end: something after the value (strict
		 * mode calls that an error already; this is belt and braces). */
		if (err && errlen)
			snprintf(err, errlen, "JSON: unexpected text after the document at byte %zu",
				 at);
	} else {
		root = copy_tree(o, &why);
		if (!root && err && errlen)
			snprintf(err, errlen, "JSON: %s", why);
	}
	json_object_put(o);
	json_tokener_free(tok);
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
		if (m->key && !strcmp(m->key, key))
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
		return n->negative ? 0 : n->u;
	if (!(n->num >= 0))
		return 0;
	if (n->num >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)n->num;
}

int64_t json_i64(const struct json *n, int64_t dflt)
{
	if (!n || n->type != JSON_NUMBER)
		return dflt;
	if (n->is_int) {
		if (!n->negative && n->u > (uint64_t)INT64_MAX)
			return INT64_MAX;
		return (int64_t)n->u;
	}
	if (n->num >= 9223372036854775808.0)
		return INT64_MAX;
	if (n->num <= -9223372036854775808.0)
		return INT64_MIN;
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

int json_stats_schema_check(const struct json *doc, char *err, size_t errlen)
{
	const struct json *s = json_get(doc, "schema");

	if (!doc || doc->type != JSON_OBJECT) {
		snprintf(err, errlen, "the stats document is not a JSON object");
		return -1;
	}
	if (!s)
		return 0;	/* written before the field: version 1 */
	if (s->type != JSON_NUMBER || !s->is_int || s->negative || !s->u) {
		snprintf(err, errlen, "the stats document's schema is not a version number");
		return -1;
	}
	if (s->u > AXON_STATS_SCHEMA) {
		snprintf(err, errlen,
			 "the stats document has schema %llu; this reader knows schema %u "
			 "(an axond newer than this tool: use the tools of its release)",
			 (unsigned long long)s->u, AXON_STATS_SCHEMA);
		return -1;
	}
	return 0;
}
