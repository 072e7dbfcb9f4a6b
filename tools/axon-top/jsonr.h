/* SPDX-License-Identifier: MIT */
/*
 * jsonr.h - a small, forgiving JSON reader for axon-top.
 *
 * jr_parse() builds a tree from a whole document. Lookups never fail hard:
 * a missing member, a NULL node or a node of the wrong type gives the
 * default the caller passes, so the stats document may gain or lose fields
 * without breaking the tool. Integers that fit in 64 bits keep their exact
 * value (byte counts do not go through double). Nesting is limited (no
 * stack exhaustion on hostile input); \u0000 in a string becomes '?', so
 * every string is a plain C string.
 */
#ifndef AXON_TOP_JSONR_H
#define AXON_TOP_JSONR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum jr_type { JR_NULL, JR_BOOL, JR_NUMBER, JR_STRING, JR_ARRAY, JR_OBJECT };

struct jr {
	enum jr_type type;
	char *key;		/* member name inside an object, else NULL */
	bool b;			/* JR_BOOL */
	double num;		/* JR_NUMBER */
	bool is_u64;		/* num was a non-negative integer that fits */
	uint64_t u;		/* with is_u64: its exact value */
	char *str;		/* JR_STRING */
	struct jr *child;	/* first element / member */
	struct jr *next;	/* next sibling */
	size_t len;		/* elements / members */
};

#define JR_MAX_DEPTH 64

/* Returns the root or NULL with a message naming the byte offset in err. */
struct jr *jr_parse(const char *text, char *err, size_t errlen);
void jr_free(struct jr *root);

/* Member of an object by name (the first one), or NULL. */
const struct jr *jr_get(const struct jr *obj, const char *key);
/* Dotted path of member names, e.g. "latency_us.p50". */
const struct jr *jr_path(const struct jr *obj, const char *path);
/* Element i of an array, or NULL. */
const struct jr *jr_at(const struct jr *arr, size_t i);

uint64_t jr_u64(const struct jr *v, uint64_t def);	/* clamps doubles */
int64_t jr_i64(const struct jr *v, int64_t def);
double jr_num(const struct jr *v, double def);
const char *jr_str(const struct jr *v, const char *def);
bool jr_is(const struct jr *v, enum jr_type t);

/* Iteration: for (c = jr_first(v); c; c = c->next) */
static inline const struct jr *jr_first(const struct jr *v)
{
	return v && (v->type == JR_ARRAY || v->type == JR_OBJECT) ? v->child : NULL;
}

#endif
