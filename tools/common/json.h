/* SPDX-License-Identifier: MIT */
/*
 * json.h - the stats document and other JSON as the tools read it: parsed
 * by json-c (json.c), handed over as a plain tree of C values.
 *
 * json_parse() builds a tree; every node is owned by the root and freed with
 * json_free(root). Lookups never fail hard: a missing member or a node of
 * the wrong type yields NULL (or the default value given), so chains like
 * json_u64(json_path(doc, "daemon.clients"), 0) are safe, and a document
 * may gain or lose fields without breaking a reader.
 *
 * Numbers keep their exact integer value when the literal is an integer
 * that fits in 64 bits (byte counts do not lose precision through double).
 * Strings are decoded (\uXXXX to UTF-8, surrogate pairs joined) and must be
 * valid UTF-8; \u0000 becomes '?', so that every string is a plain C string.
 *
 * Shared by axonctl, axon-top and the tests (tests/integration).
 */
#ifndef AXON_TOOLS_JSON_H
#define AXON_TOOLS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting deeper than this is refused (a bound on hostile input). */
#define JSON_MAX_DEPTH 64

enum json_kind {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json {
	enum json_kind type;
	char *key;		/* member name inside an object, else NULL */
	bool boolean;
	double num;
	bool is_int;		/* num came from an integer literal that fits */
	bool negative;		/* with is_int: the value is i64 */
	uint64_t u;		/* with is_int: the exact value (two's complement if negative) */
	char *str;		/* JSON_STRING */
	struct json *child;	/* first element / member */
	struct json *next;	/* next sibling */
	size_t len;		/* elements / members */
};

/*
 * json_parse - parse a whole document (trailing white space allowed).
 * Returns the root, or NULL with a message starting "JSON: " in err.
 */
struct json *json_parse(const char *text, char *err, size_t errlen);

void json_free(struct json *root);

/* Member of an object by name (the first of that name), or NULL. */
const struct json *json_get(const struct json *obj, const char *key);

/* Member by a dotted path ("handles.streams"), or NULL. */
const struct json *json_path(const struct json *obj, const char *path);

/* Element i of an array, or NULL. */
const struct json *json_at(const struct json *arr, size_t i);

/* Elements of an array / members of an object, 0 for anything else. */
size_t json_len(const struct json *node);

/* Whether node is there and of that kind. */
static inline bool json_is(const struct json *node, enum json_kind kind)
{
	return node && node->type == kind;
}

/* The first element / member, NULL for anything else; the others follow
 * by ->next: for (c = json_first(v); c; c = c->next). */
static inline const struct json *json_first(const struct json *node)
{
	return json_len(node) ? node->child : NULL;
}

/*
 * Values, or dflt when node is NULL or not of the right kind. A number
 * outside the type's range is clamped into it (a negative one is 0 as a
 * u64); a fraction is truncated.
 */
uint64_t json_u64(const struct json *node, uint64_t dflt);
int64_t json_i64(const struct json *node, int64_t dflt);
double json_num(const struct json *node, double dflt);
const char *json_str(const struct json *node, const char *dflt);
bool json_bool(const struct json *node, bool dflt);

/*
 * The stats document's schema (Documentation/abi.md, "Stats"): 0 when doc
 * is one whose major version this reader knows (a document without the
 * field is of version 1), else -1 with a message for the user in err.
 */
int json_stats_schema_check(const struct json *doc, char *err, size_t errlen);

#endif /* AXON_TOOLS_JSON_H */
