/* SPDX-License-Identifier: MIT */
/*
 * md2.h - the MD2 message digest (RFC 1319) and HMAC over it (RFC 2104
 * with a 16-byte block), for the cudart integrity check (exporttable.c).
 * Incremental, no allocation, no global state: a context is plain data.
 */
#ifndef AXON_SHIM_MD2_H
#define AXON_SHIM_MD2_H

#include <stddef.h>
#include <stdint.h>

#define MD2_BLOCK	16
#define MD2_DIGEST	16

struct md2_ctx {
	uint8_t x[48];		/* state, block, state ^ block */
	uint8_t c[16];		/* running checksum */
	uint8_t buf[16];	/* partial block */
	unsigned int n;		/* bytes in buf */
};

void md2_init(struct md2_ctx *m);
void md2_update(struct md2_ctx *m, const void *data, size_t len);
void md2_final(struct md2_ctx *m, uint8_t out[MD2_DIGEST]);
void md2(const void *data, size_t len, uint8_t out[MD2_DIGEST]);

/* HMAC-MD2 with a key of at most one block (longer keys are hashed first). */
struct hmac_md2_ctx {
	struct md2_ctx inner;
	uint8_t okey[MD2_BLOCK];	/* key ^ 0x5c */
};

void hmac_md2_init(struct hmac_md2_ctx *h, const void *key, size_t keylen);
void hmac_md2_update(struct hmac_md2_ctx *h, const void *data, size_t len);
void hmac_md2_final(struct hmac_md2_ctx *h, uint8_t out[MD2_DIGEST]);

#endif
