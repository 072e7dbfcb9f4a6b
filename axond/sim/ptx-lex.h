/* SPDX-License-Identifier: MIT */
/*
 * sim/ptx-lex: tokens of PTX text, for ptx-parse.c. Blanks and comments are
 * skipped; a token is a word (identifiers and directives: letters, digits,
 * _ $ % .), a number (with its suffixes and exponent sign), a string or one
 * punctuation character. The lexer never reads past end and always moves
 * forward, so a loop over ptx_next() ends at PTX_T_EOF.
 */
#ifndef AXOND_SIM_PTX_LEX_H
#define AXOND_SIM_PTX_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ptx_tok_type { PTX_T_EOF, PTX_T_WORD, PTX_T_NUM, PTX_T_PUNCT, PTX_T_STR };

struct ptx_tok {
	enum ptx_tok_type type;
	const char *s;
	size_t n;
};

struct ptx_lex {
	const char *p, *end;
	struct ptx_tok t;		/* current token */
};

/* Moves to the next token (l->t); PTX_T_EOF at the end, again and again. */
void ptx_next(struct ptx_lex *l);

/* The token is the word or directive w, exactly. */
bool ptx_tok_is(const struct ptx_tok *t, const char *w);
/* The token is the punctuation character c. */
bool ptx_tok_punct(const struct ptx_tok *t, char c);

/* Size in bytes of a PTX fundamental type directive, 0 if unknown. */
unsigned ptx_type_size(const struct ptx_tok *t);
/* .f32 or .f64. */
bool ptx_type_float(const struct ptx_tok *t);

/* Parses an unsigned decimal/hex/octal/binary integer token. */
bool ptx_uint(const struct ptx_tok *t, uint64_t *v);

/* Skips to the ';' ending the statement (consumed) or EOF. */
void ptx_skip_statement(struct ptx_lex *l);

#endif /* AXOND_SIM_PTX_LEX_H */
