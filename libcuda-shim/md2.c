// SPDX-License-Identifier: MIT
/*
 * MD2 (RFC 1319, B. Kaliski, April 1992) and HMAC-MD2 (RFC 2104).
 *
 * Written from the RFC's prose (section 3): pad with i bytes of value i to a
 * multiple of 16, append the 16-byte checksum, then for each 16-byte block
 * run 18 rounds over a 48-byte state. The one constant, the 256-byte
 * permutation S "constructed from the digits of pi", is the PI_SUBST table
 * of RFC 1319 Appendix A.3 (md2c.c); tests/cudart/md2-test.c checks the
 * whole thing against the RFC's test suite (Appendix A.5).
 *
 * MD2 is broken as a cryptographic hash; it is here only because cudart's
 * integrity check is defined with it.
 */
#include <string.h>

#include "md2.h"

/* RFC 1319, Appendix A.3, PI_SUBST. */
static const uint8_t S[256] = {
	41, 46, 67, 201, 162, 216, 124, 1, 61, 54, 84, 161, 236, 240, 6,
	19, 98, 167, 5, 243, 192, 199, 115, 140, 152, 147, 43, 217, 188,
	76, 130, 202, 30, 155, 87, 60, 253, 212, 224, 22, 103, 66, 111, 24,
	138, 23, 229, 18, 190, 78, 196, 214, 218, 158, 222, 73, 160, 251,
	245, 142, 187, 47, 238, 122, 169, 104, 121, 145, 21, 178, 7, 63,
	148, 194, 16, 137, 11, 34, 95, 33, 128, 127, 93, 154, 90, 144, 50,
	39, 53, 62, 204, 231, 191, 247, 151, 3, 255, 25, 48, 179, 72, 165,
	181, 209, 215, 94, 146, 42, 172, 86, 170, 198, 79, 184, 56, 210,
	150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4, 241, 69, 157,
	112, 89, 100, 113, 135, 32, 134, 91, 207, 101, 230, 45, 168, 2, 27,
	96, 37, 173, 174, 176, 185, 246, 28, 70, 97, 105, 52, 64, 126, 15,
	85, 71, 163, 35, 221, 81, 175, 58, 195, 92, 249, 206, 186, 197,
	234, 38, 44, 83, 13, 110, 133, 40, 132, 9, 211, 223, 205, 244, 65,
	129, 77, 82, 106, 220, 55, 200, 108, 193, 171, 250, 36, 225, 123,
	8, 12, 189, 177, 74, 120, 136, 149, 139, 227, 99, 232, 109, 233,
	203, 213, 254, 59, 0, 29, 57, 242, 239, 183, 14, 102, 88, 208, 228,
	166, 119, 114, 248, 235, 117, 75, 10, 49, 68, 80, 180, 143, 237,
	31, 26, 219, 153, 141, 51, 159, 17, 131, 20,
};

/* One 16-byte block: checksum update (3.2) and the 18 rounds (3.4). */
static void block(struct md2_ctx *m, const uint8_t *b)
{
	uint8_t t;
	int i, j;

	t = m->c[15];
	for (i = 0; i < 16; i++)
		t = m->c[i] ^= S[b[i] ^ t];

	for (i = 0; i < 16; i++) {
		m->x[16 + i] = b[i];
		m->x[32 + i] = b[i] ^ m->x[i];
	}
	t = 0;
	for (j = 0; j < 18; j++) {
		for (i = 0; i < 48; i++)
			t = m->x[i] ^= S[t];
		t = (uint8_t)(t + j);
	}
}

void md2_init(struct md2_ctx *m)
{
	memset(m, 0, sizeof(*m));
}

void md2_update(struct md2_ctx *m, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		size_t k = MD2_BLOCK - m->n;

		if (k > len)
			k = len;
		memcpy(m->buf + m->n, p, k);
		m->n += (unsigned int)k;
		p += k;
		len -= k;
		if (m->n == MD2_BLOCK) {
			block(m, m->buf);
			m->n = 0;
		}
	}
}

void md2_final(struct md2_ctx *m, uint8_t out[MD2_DIGEST])
{
	uint8_t pad[MD2_BLOCK], sum[16];
	unsigned int k = MD2_BLOCK - m->n;	/* 1..16: always pad */

	memset(pad, (int)k, k);
	md2_update(m, pad, k);
	/* The checksum block is hashed but does not update the checksum it
	 * came from: copy it first (block() changes c as it goes). */
	memcpy(sum, m->c, sizeof(sum));
	block(m, sum);
	memcpy(out, m->x, MD2_DIGEST);
	memset(m, 0, sizeof(*m));
}

void md2(const void *data, size_t len, uint8_t out[MD2_DIGEST])
{
	struct md2_ctx m;

	md2_init(&m);
	md2_update(&m, data, len);
	md2_final(&m, out);
}

void hmac_md2_init(struct hmac_md2_ctx *h, const void *key, size_t keylen)
{
	uint8_t k[MD2_BLOCK] = { 0 }, ikey[MD2_BLOCK];
	int i;

	if (keylen > MD2_BLOCK)
		md2(key, keylen, k);
	else
		memcpy(k, key, keylen);
	for (i = 0; i < MD2_BLOCK; i++) {
		ikey[i] = k[i] ^ 0x36;
		h->okey[i] = k[i] ^ 0x5c;
	}
	md2_init(&h->inner);
	md2_update(&h->inner, ikey, sizeof(ikey));
}

void hmac_md2_update(struct hmac_md2_ctx *h, const void *data, size_t len)
{
	md2_update(&h->inner, data, len);
}

void hmac_md2_final(struct hmac_md2_ctx *h, uint8_t out[MD2_DIGEST])
{
	uint8_t d[MD2_DIGEST];
	struct md2_ctx o;

	md2_final(&h->inner, d);
	md2_init(&o);
	md2_update(&o, h->okey, sizeof(h->okey));
	md2_update(&o, d, sizeof(d));
	md2_final(&o, out);
}
